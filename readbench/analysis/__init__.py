"""readbench.analysis"""
