"""The read presets' fast paths give what the plain computations give: swe-agent's file map made
up to its clip (`_filemap_view`) against the whole map clipped, and swe-agent's shared decoded text."""

from __future__ import annotations

import itertools
import random

from readbench.read import _swe_agent as swe
from readbench.read._session import ReadSession


def _whole_map_view(read: swe.SweAgentRead, text: str) -> tuple[str, list[int]]:
    """The file map view as made before `_filemap_view`: every row, joined, clipped."""
    rows = swe.swe_filemap(text, read.p.elide_min_row_span)
    expanded = [(row.expandtabs(), line) for row, line in rows]
    clipped, was_clipped = read._clip("\n".join(r for r, _ in expanded))
    budget = read.p.max_response_chars if was_clipped else None
    shown: list[int] = []
    used = 0
    for row, line in expanded:
        used += len(row)
        if budget is not None and used > budget:
            break
        if line is not None:
            shown.append(line)
        used += 1
    return clipped, shown


def test_swe_agent_file_map_made_up_to_its_clip_equals_the_whole_map_clipped():
    body = "".join(f"    v{k} = {k}\t# c\n" for k in range(9))
    parts = ["import os\n", "def f(x):\n" + body, "class K:\n    def m(self):\n" + body.replace("    ", "        "),
             "x\t= 1\n", "\n", "def g():\n    return 1\n", "async def h():\n" + body, "@d\ndef k():\n" + body]
    rng = random.Random(11)
    texts = ["", "\n", "a", "def f():\n" + body]
    for _ in range(60):
        texts.append("".join(rng.choice(parts) for _ in range(rng.randrange(1, 40))) + rng.choice(["", "\n", "\n\n"]))
    for text in texts:
        for limit, span in itertools.product((1, 7, 8, 40, 200, 16_000), (1, 5)):
            read = swe.SweAgentRead("swe-agent", "test", swe.SweAgentParams(max_response_chars=limit,
                                                                            elide_min_row_span=span))
            assert read._filemap_view(text) == _whole_map_view(read, text), (limit, span, text)
        # around the exact length of the whole map: not clipped, clipped by one
        whole = "\n".join(r.expandtabs() for r, _ in swe.swe_filemap(text, 5))
        for limit in {max(1, len(whole) + d) for d in (-1, 0, 1)}:
            read = swe.SweAgentRead("swe-agent", "test", swe.SweAgentParams(max_response_chars=limit))
            assert read._filemap_view(text) == _whole_map_view(read, text)


def test_swe_agent_shares_the_decoded_text_only_when_equal(monkeypatch):
    datas = (b"a\nb\n", b"a\r\nb\rc", "\u00e9\n".encode(), b"\xff\xfe\n", "\ufeffx".encode(), b"def f():\n" * 3000)
    args = ((None, None), (1, 1), (2, None), (5, 2))
    read = swe.SweAgentRead("swe-agent", "test", swe.SweAgentParams())

    def serve(data: bytes, path: str) -> list:
        return [read.read(data, path, off, lim, call_id="c", session=ReadSession(), visible_call_ids=None)
                for off, lim in args]

    got = [(swe._swe_text(d), serve(d, p)) for d in datas for p in ("f.txt", "f.py")]
    monkeypatch.setattr(swe, "_TEXTS", swe.swe_decode)  # the text decoded afresh on every read
    assert got == [(swe.swe_decode(d), serve(d, p)) for d in datas for p in ("f.txt", "f.py")]
