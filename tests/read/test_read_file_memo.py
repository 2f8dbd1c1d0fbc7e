"""A file version read by every preset is decoded and hashed once (read._types' file memo)."""

from __future__ import annotations

import hashlib

from readbench.read import _types
from readbench.read._types import call_facts, decoded, sha256_hex


def test_the_same_bytes_object_decodes_to_the_same_text_with_its_facts():
    data = b"line one\nline \xff two\n"
    text = decoded(data)
    assert text == "line one\nline \ufffd two\n"  # Node's decoding: U+FFFD for the invalid byte
    assert decoded(data) is text
    facts = call_facts("stock", text, data, "a.txt", None, None, "c1")
    assert facts.content_sha256 == sha256_hex(data) == hashlib.sha256(data).hexdigest()
    assert facts.total_lines == 2
    # another text of the same bytes (a preset decoding its own way) is counted, not looked up
    other = text.replace("\n", "\n\n")
    assert call_facts("swe-agent", other, data, "a.txt", None, None, "c1").total_lines == 4


def test_only_small_immutable_bytes_are_remembered_and_the_memo_is_bounded(monkeypatch):
    monkeypatch.setattr(_types, "_FILE_MEMO", {})
    monkeypatch.setattr(_types, "_file_memo_bytes", [0])
    monkeypatch.setattr(_types, "FILE_MEMO_MAX_BYTES", 10)
    big = b"0123456789A"
    assert decoded(big) == "0123456789A" and decoded(big) is not decoded(big)
    mutable = bytearray(b"abc")
    assert decoded(mutable) == "abc"
    assert _types._FILE_MEMO == {}
    monkeypatch.setattr(_types, "FILE_MEMO_SLOTS", 3)
    kept = [bytes([65 + k]) * 3 for k in range(5)]
    for d in kept:
        decoded(d)
    assert [v[0] for v in _types._FILE_MEMO.values()] == kept[2:]  # the latest three


def test_the_memo_holds_a_bounded_number_of_bytes(monkeypatch):
    monkeypatch.setattr(_types, "_FILE_MEMO", {})
    monkeypatch.setattr(_types, "_file_memo_bytes", [0])
    monkeypatch.setattr(_types, "FILE_MEMO_TOTAL_BYTES", 10)
    kept = [bytes([65 + k]) * 4 for k in range(4)]
    for d in kept:
        decoded(d)
    assert [v[0] for v in _types._FILE_MEMO.values()] == kept[2:]  # 8 of at most 10 bytes
    assert _types._file_memo_bytes == [8]
