"""readbench.metrics"""
