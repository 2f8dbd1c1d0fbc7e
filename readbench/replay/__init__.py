"""Replays of recorded sessions (the sessions stage imports them: readbench.sessions): against
their bill (`bill`, `calibrate`), under read presets (`read_counterfactual`), DCP configurations x
cache models (`dcp_cache`, with pi's context usage from readbench.dcp for pressure bands), the gate
sweep (`gate_sweep`) and the read audit (`audit`); `run` drives them all for `readbench replay`.
"""
