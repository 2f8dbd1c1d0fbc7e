"""Hypothesis strategies for the differential suite: files that stress pi's text handling.

Files are built from small drawn "recipes" (line text, repeat counts, terminators) so that big
inputs (lines over 51,200 bytes, more than 2000 lines, rolling bash tails over 200 KB) cost
little to draw and still shrink to readable counterexamples.
"""

from __future__ import annotations

import os
import random
import unicodedata
from collections import Counter
from dataclasses import dataclass

from hypothesis import HealthCheck, Phase, settings
from hypothesis import strategies as st

AGREED: Counter[str] = Counter()
"""Agreeing cases per tool, printed at session end by conftest's `pytest_terminal_summary`."""

EXPLORE = os.environ.get("READBENCH_DIFFERENTIAL_EXPLORE") == "1"
"""Set READBENCH_DIFFERENTIAL_EXPLORE=1 for fresh random cases; by default runs are derandomized
(the same cases every run, so CI is deterministic)."""
SCALE = int(os.environ.get("READBENCH_DIFFERENTIAL_SCALE", "1"))
"""Multiplies every generated test's example count (e.g. 10 for a nightly deep run)."""


def diff_settings(max_examples: int) -> settings:
    """Settings for one batched differential test (each example is a batch of cases).

    No shrinking: the assertion message already names the one differing case, and shrinking
    batches of large files takes minutes.
    """
    return settings(
        max_examples=max_examples * SCALE,
        phases=[Phase.explicit, Phase.reuse, Phase.generate],
        deadline=None,
        derandomize=not EXPLORE,
        database=None,
        suppress_health_check=[HealthCheck.too_slow, HealthCheck.data_too_large, HealthCheck.large_base_example],
    )


# Text pieces that matter to pi: tabs, CR, NUL, BOM, NBSP and other special spaces, smart quotes,
# dashes, U+2028, combining marks, CJK (3-byte) and astral (4-byte, 2 UTF-16 units) characters.
SPECIAL_PIECES = [
    "\t", "\r", "\x00", "\ufeff", "\u00a0", "\u2009", "\u3000", "\u2018", "\u2019", "\u201c", "\u201d",
    "\u2013", "\u2014", "\u2212", "\u2028", "e\u0301", "\u00e9", "\u65e5\u672c", "\U0001f600", "\ufb01",
    "\u2460", " ", "  ", "x", "abc", "'", '"', "-", "\\", "$", "(", "[",
]
INVALID_UTF8 = [b"\xff", b"\xc3", b"\xed\xa0\x80", b"\xf0\x9f\x98", b"\x80\x80", b"\xef\xbb"]
IMAGE_MAGIC = (b"GIF", b"\xff\xd8\xff", b"\x89PNG", b"RIFF", b"BM")

ASCII_PIECES = list("abcdefxyz XYZ0123456789_.,;:=+*/{}()<>")
_ASSIGNED: list[str] = []


def assigned_characters() -> list[str]:
    """Every code point assigned in Python's Unicode database (no surrogates, no Cn); cached."""
    if not _ASSIGNED:
        _ASSIGNED.extend(
            chr(cp) for cp in range(0x110000) if unicodedata.category(chr(cp)) not in ("Cn", "Cs", "Co")
        )
    return _ASSIGNED


def random_text(rng: random.Random, max_pieces: int = 16) -> str:
    """Text of up to `max_pieces` pieces: ASCII, any assigned character, or a special piece."""
    pieces = []
    for _ in range(rng.randint(0, max_pieces)):
        kind = rng.random()
        if kind < 0.5:
            pieces.append(rng.choice(ASCII_PIECES))
        elif kind < 0.75:
            pieces.append(rng.choice(SPECIAL_PIECES))
        else:
            pieces.append(rng.choice(assigned_characters()))
    return "".join(pieces)


def line_text(rng: random.Random, *, allow_long: bool = True) -> str:
    """One line's text: usually short, sometimes repeated up to beyond the 51,200-byte cap."""
    kind = rng.choice(["short"] * 6 + ["wide", "huge"]) if allow_long else "short"
    text = random_text(rng)
    if kind == "short" or not text:
        return text
    unit_bytes = len(text.encode("utf-8"))
    if kind == "wide":
        return text * max(1, rng.randint(1, 600) // unit_bytes)
    target = rng.choice([25_600, 51_199, 51_200, 51_201, 60_000, 110_000])
    return text * (target // unit_bytes + rng.randint(0, 1))


@dataclass(frozen=True)
class FileSpec:
    """A generated file: its bytes and a one-line description for failure messages."""

    data: bytes
    recipe: str

    def __repr__(self) -> str:
        shown = self.data if len(self.data) <= 300 else self.data[:150] + b"..." + self.data[-150:]
        return f"FileSpec({len(self.data)} bytes, {self.recipe}, data={shown!r})"


@st.composite
def text_files(
    draw: st.DrawFn, *, allow_invalid: bool = True, max_small_lines: int = 12, allow_long: bool = True
) -> FileSpec:
    """A text file: empty, a few lines, or many lines (around the 2000-line cap), with LF or
    CRLF or mixed endings, optional BOM, optional trailing newline, optional invalid UTF-8.
    `allow_long=False` keeps to short, non-repetitive lines (no "many" shape)."""
    shape = draw(st.sampled_from(["small"] * 5 + ["empty", "many"] if allow_long else ["small"] * 8 + ["empty"]))
    if shape == "empty":
        return FileSpec(b"", "empty")
    rng = random.Random(draw(st.integers(0, 2**32 - 1)))
    if shape == "many":
        n = draw(st.sampled_from([1999, 2000, 2001, 2002, 2500, 3000]))
        width = draw(st.sampled_from([0, 5, 30, 100]))
        pool = [random_text(rng, width) for _ in range(rng.randint(1, 4))]
        lines = [pool[i % len(pool)] for i in range(n)]
    else:
        lines = [line_text(rng, allow_long=allow_long) for _ in range(draw(st.integers(1, max_small_lines)))]
    ending = draw(st.sampled_from(["\n", "\n", "\r\n", "mixed"]))
    trailing = draw(st.booleans())
    bom = draw(st.booleans()) and draw(st.booleans())
    if ending == "mixed":
        pattern = draw(st.lists(st.sampled_from(["\n", "\r\n", "\r"]), min_size=1, max_size=5))
        joiners = [pattern[i % len(pattern)] for i in range(len(lines))]
        text = "".join(line + j for line, j in zip(lines, joiners))
        if not trailing:
            text = text[: -len(joiners[-1])]
    else:
        text = ending.join(lines) + (ending if trailing else "")
    data = ("\ufeff" if bom else "").encode() + text.encode("utf-8", errors="surrogatepass")
    invalid = ""
    if allow_invalid and draw(st.integers(0, 9)) == 0:
        bad = draw(st.sampled_from(INVALID_UTF8))
        at = draw(st.integers(0, len(data)))
        data = data[:at] + bad + data[at:]
        invalid = f", invalid {bad!r} at {at}"
    if data.startswith(IMAGE_MAGIC):  # image sniffing is tested separately
        data = b"x" + data
    recipe = f"{shape} {len(lines)} lines, ending={ending!r}, trailing_newline={trailing}, bom={bom}{invalid}"
    return FileSpec(data, recipe)


def js_line_count(data: bytes) -> int:
    """pi's T: `text.split("\\n").length` of the decoded file."""
    return data.decode("utf-8", errors="replace").count("\n") + 1


@st.composite
def offset_limit(draw: st.DrawFn, total_lines: int) -> tuple[int | None, int | None]:
    """(offset, limit) around the interesting values: None, 0, negative, 1, T-1, T, T+1, caps."""
    t = total_lines
    offset = draw(
        st.one_of(
            st.none(),
            st.sampled_from([0, -1, -7, 1, 2, max(1, t - 1), t, t + 1, t + 4, 2001]),
            st.integers(1, t + 2),
        )
    )
    limit = draw(
        st.one_of(
            st.none(),
            st.sampled_from([0, -1, -3, 1, 2, 3, 1999, 2000, 2001, 5000]),
            st.integers(1, t + 2),
        )
    )
    return offset, limit
