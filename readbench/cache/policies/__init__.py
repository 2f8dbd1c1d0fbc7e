"""Cache models, one module each, behind one registry (`readbench.cache.registry`)."""
