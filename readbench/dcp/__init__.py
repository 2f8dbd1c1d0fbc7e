"""readbench.dcp"""
