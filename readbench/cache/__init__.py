"""readbench.cache"""
