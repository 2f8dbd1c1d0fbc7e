"""readbench.tools"""
