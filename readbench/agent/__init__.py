"""readbench.agent"""
