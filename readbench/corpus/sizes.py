"""File-size buckets of the corpus and the report: one definition (issue 6, issue 23).

A task's file of `lines` lines (file lines, pi-tools.md §1.2) falls in the first bucket whose
upper bound it does not exceed: `<1000` (0-999), `1000-2000` (1,000-2,000: what stock pi's
2,000-line cap returns in one read), `2000-5000` (2,001-5,000), `>5000`. `readbench tasks stats`
counts tasks by it and the report's fragmentation figure groups samples by it.
"""

from __future__ import annotations

import math

__all__ = ["SIZE_BUCKETS", "size_bucket"]

SIZE_BUCKETS: tuple[tuple[float, str], ...] = ((999, "<1000"), (2000, "1000-2000"), (5000, "2000-5000"),
                                               (math.inf, ">5000"))
"""(largest line count in the bucket, label), in order."""


def size_bucket(lines: float) -> str | None:
    """The bucket label of a file of `lines` lines; None for a missing count (NaN or None).

    Raises:
        ValueError: a negative count.
    """
    if lines is None or (isinstance(lines, float) and math.isnan(lines)):
        return None
    if lines < 0:
        raise ValueError(f"a file has no negative line count, got {lines!r}")
    return next(label for top, label in SIZE_BUCKETS if lines <= top)
