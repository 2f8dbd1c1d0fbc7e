"""Replays of recorded sessions (the sessions stage imports them: readbench.sessions).

`dcp_replay`: project a recorded history through a DCP configuration at every model call
(shared/specs/dcp.md §7.5), with pi's context-usage estimate for pressure bands.
"""
