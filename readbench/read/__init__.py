"""readbench.read"""
