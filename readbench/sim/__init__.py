"""readbench.sim"""
