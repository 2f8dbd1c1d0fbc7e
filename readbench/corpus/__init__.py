"""readbench.corpus"""
