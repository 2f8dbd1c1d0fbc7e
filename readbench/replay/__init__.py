"""Importers and replays of recorded sessions.

`pi_session`: pi session JSONL (version 3) <-> inspect chat messages (shared/specs/pi-tools.md §6).
`dcp_replay`: project a recorded history through a DCP configuration at every model call
(shared/specs/dcp.md §7.5), with pi's context-usage estimate for pressure bands.
"""
