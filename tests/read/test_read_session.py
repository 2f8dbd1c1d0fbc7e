"""ReadSession: JSON round trip, change tracking, coverage (docs/specs/variants.md)."""

from __future__ import annotations

import json

import pytest

from readbench.read import ReadRecord, ReadSession
from readbench.read._session import file_key_for


def test_round_trip_preserves_everything():
    s = ReadSession()
    s.record_read("a.py", "c1", ((1, 10), (20, 30)), "h1")
    s.note_file_changed("a.py")
    s.record_read("a.py", "c2", ((5, 6),), "h2")
    s.note_map("a.py", "h2", "c2")
    s.note_read("empty.txt")
    data = json.loads(json.dumps(s.to_dict()))
    assert data == {
        "records": [
            {
                "call_id": "c1",
                "key": "a.py",
                "ranges": [[1, 10], [20, 30]],
                "content_sha256": "h1",
                "epoch": 0,
            },
            {
                "call_id": "c2",
                "key": "a.py",
                "ranges": [[5, 6]],
                "content_sha256": "h2",
                "epoch": 1,
            },
        ],
        "epochs": {"a.py": 1},
        "read_keys": ["a.py", "empty.txt"],
        "maps": {"a.py": ["h2", "c2"]},
    }
    restored = ReadSession.from_dict(data)
    assert restored == s and restored.map_call("a.py") == "c2" and restored.has_read("empty.txt")


def test_from_dict_rejects_missing_keys():
    with pytest.raises(ValueError, match="ReadSession dict needs keys"):
        ReadSession.from_dict({"records": []})


def test_covering_reads_respect_epoch_hash_and_range():
    s = ReadSession()
    s.record_read("a.py", "c1", ((1, 100),), "h")
    s.record_read("a.py", "c2", ((50, 60),), "h")
    assert [r.call_id for r in s.covering_reads("a.py", 55, 58, "h")] == ["c2", "c1"]
    assert [r.call_id for r in s.covering_reads("a.py", 55, 70, "h")] == ["c1"]
    assert s.covering_reads("a.py", 55, 58, "other") == []
    s.note_file_changed("./a.py")
    assert s.covering_reads("a.py", 55, 58, "h") == []


def test_note_file_changed_forgets_the_map():
    s = ReadSession()
    s.note_map("a.py", "h", "c1")
    assert s.map_shown("a.py", "h") and not s.map_shown("a.py", "h2")
    s.note_file_changed("a.py")
    assert not s.map_shown("a.py", "h") and s.map_call("a.py") is None


def test_record_covers_and_keys():
    r = ReadRecord("c", "k", ((1, 5), (9, 12)), "h", 0)
    assert r.covers(2, 5) and r.covers(9, 9) and not r.covers(4, 9)
    assert file_key_for("./src/../a.py") == "a.py"
    with pytest.raises(ValueError, match="non-empty"):
        file_key_for("")
