"""A file version read by every preset is decoded and hashed once (read._types' file memo), and split,
selected and cut once per set of caps (read._pi)."""

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


def test_presets_share_a_texts_split_selection_and_cuts():
    from readbench.base.js import utf16_len
    from readbench.base.truncate import truncate_head
    from readbench.read import get_variant
    from readbench.read._pi import select, split_lines

    data = "".join(f"line {k} " + "x" * 40 + "\n" for k in range(3000)).encode()
    text = decoded(data)
    assert split_lines(text) is split_lines(text) == text.split("\n")
    sel = select(text, 10, 2500)
    assert select(text, 10, 2500) is sel and select(text, 11, 2500) is not sel
    assert select(text.replace("x", "y"), 10, 2500) is not sel  # another text: its own selection
    stock = sel.truncated(2000, 51200)
    assert sel.truncated(2000, 51200) is stock
    assert stock == truncate_head(sel.selected, 2000, 51200)
    assert sel.truncated(1000, 10000, utf16_len, "chars") == truncate_head(sel.selected, 1000, 10000,
                                                                          measure=utf16_len, size_unit="chars")
    # the shared objects give every preset the result it gives on its own
    from readbench.read._session import ReadSession

    def served(name):
        return get_variant(name).read(data, "a.py", 10, 2500, call_id="c", session=ReadSession(),
                                      visible_call_ids=None).text

    shared = {name: served(name) for name in ("stock", "A", "B", "nocap", "C", "claude-code")}
    for name, out in shared.items():
        fresh = bytes(bytearray(data))  # a new bytes object: nothing remembered for it
        alone = get_variant(name).read(fresh, "a.py", 10, 2500, call_id="c", session=ReadSession(),
                                       visible_call_ids=None).text
        assert out == alone, name
