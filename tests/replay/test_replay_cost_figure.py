"""The replay's cost.png: one panel per session whose titles do not run into each other."""

from __future__ import annotations

from readbench.replay.bill_report import panel_title


def test_long_session_names_are_shortened_keeping_start_and_short_id():
    """Real pi file names (86 characters with the short id) overlapped the neighbouring panels'
    titles in a 3-column figure (issue 27 trial)."""
    name = "2026-05-25T02-18-57-671Z_019e5ced-a107-7ebd-aa97-3663797832d9.jsonl [019e5ced]"
    assert panel_title(name) == "2026-05-25T02-18-57…2d9.jsonl [019e5ced]"
    assert len(panel_title(name)) == 40
    assert panel_title("large-session.jsonl [d703a1a9]") == "large-session.jsonl [d703a1a9]"
