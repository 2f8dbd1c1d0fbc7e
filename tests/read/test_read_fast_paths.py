"""The read presets' fast paths give what the plain computations give: `numbered_frame`'s prefix
comparison (`_canonical_run`) against the row-by-row reading, swe-agent's file map made up to its
clip (`_filemap_view`) against the whole map clipped, and swe-agent's shared decoded text."""

from __future__ import annotations

import itertools
import random

from readbench.read import _swe_agent as swe
from readbench.read import notices as n
from readbench.read._session import ReadSession
from readbench.read.notices import NumberedFrame


def _rows_frame(text: str) -> NumberedFrame | None:
    """`numbered_frame` as it read every row before the fast path (the reference)."""
    rows = text.split("\n")
    start = next((i for i, row in enumerate(rows) if n._NUMBER_ROW.match(row)), None)
    if start is None:
        return None
    end, expected, seps, padded = start, None, set(), set()
    for i in range(start, len(rows)):
        m = n._NUMBER_ROW.match(rows[i])
        if m is None or (expected is not None and int(m.group("line")) != expected):
            break
        k = int(m.group("line"))
        seps.add(m.group("sep"))
        width = len(m.group("pad")) + len(m.group("line"))
        if k < 100_000:
            padded.add(bool(m.group("pad")) and width == 6)
            if m.group("pad") and width != 6:
                return None
        end, expected = i, k + 1
    if len(seps) != 1 or len(padded) > 1:
        return None
    style = ("padded-" if padded == {True} else "") + ("arrow" if seps == {"→"} else "tab")
    first = int(n._NUMBER_ROW.match(rows[start]).group("line"))  # type: ignore[union-attr]
    prefix = "".join(row + "\n" for row in rows[:start])
    suffix = "".join("\n" + row for row in rows[end + 1:])
    return NumberedFrame(prefix, "\n".join(rows[start:end + 1]), suffix, style, first, expected - 1)  # type: ignore[operator]


def test_numbered_frame_equals_the_row_by_row_reading():
    cases = [
        "    41→def f():\n    42→    return 1\n    43→\n\n<system-reminder>\nx\n</system-reminder>\n",
        "<system-reminder>old</system-reminder>\n1\t---\n2\tname: x",
        "99999\ta\n100000\tb\n100001\tc", " 99999\ta\n100000\tb", "999999\ta\n1000000\tb",
        "     1→a\n2\tb", "1→a\n     2→b", "  1→a", "File unchanged since last read.", "",
        "1\ta\n02\tb\n3\tc", "01\ta\n2\tb", "1\ta\n\u0662\tb\n3\tc",  # leading zeros, an Arabic-Indic 2
        "     1\ta\n     3\tb", "     1\ta\n     2\tb\nno number\n     3\tc", "1\ta\n2→b\n3\tc",
        "     7\t\n     8\t\t\n     9\t→", "x\n\n     5\ta", "   100\ta\n  101\tb", "5\t" + "x" * 3000,
    ]
    rng = random.Random(7)
    pieces = ["{n:>6}\t", "{n:>6}→", "{n}\t", "{n}→", "{n:>5}\t", "0{n}\t", "", "x"]
    for _ in range(3000):
        first = rng.choice([1, 7, 99_990, 999_995])
        rows = [rng.choice(["", "<note>", "plain"]) for _ in range(rng.randrange(3))]
        k = first
        for _ in range(rng.randrange(1, 14)):
            piece = rng.choice(pieces[:4]) if rng.random() < 0.85 else rng.choice(pieces)
            k += 1 if rng.random() < 0.93 else rng.choice([0, 2, -1])
            rows.append(piece.format(n=k) + rng.choice(["a", "", "\tb", " 1\tc", "→"]))
        cases.append("\n".join(rows))
    for text in cases:
        assert n.numbered_frame(text) == _rows_frame(text), text


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
