"""readbench.replay"""
