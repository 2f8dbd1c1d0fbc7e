"""Number formatting for the report: one place, so tests can predict every string."""

from __future__ import annotations

import math
from collections.abc import Callable

__all__ = ["ci_pct", "count", "interval", "num", "p_value", "pct", "pp", "ratio", "signed", "signed_usd", "usd"]

DASH = "—"
"""Shown for a value that does not exist (NaN, no pairs)."""


def _nan(x: float | None) -> bool:
    return x is None or (isinstance(x, float) and math.isnan(x))


def pct(x: float) -> str:
    """Fraction as percent with one decimal: 0.625 -> ``"62.5%"``."""
    return DASH if _nan(x) else f"{100 * x:.1f}%"


def interval(fmt: Callable[[float], str], low: float, high: float) -> str:
    """``"[low, high]"`` with each bound formatted by `fmt`; ``"—"`` when a bound is NaN."""
    return DASH if _nan(low) or _nan(high) else f"[{fmt(low)}, {fmt(high)}]"


def ci_pct(low: float, high: float) -> str:
    """Interval of fractions as percent: ``"[40.1%, 81.2%]"``; ``"—"`` when undefined."""
    return interval(pct, low, high)


def pp(x: float) -> str:
    """Difference of fractions in percentage points, signed: 0.125 -> ``"+12.5 pp"``."""
    return DASH if _nan(x) else f"{100 * x:+.1f} pp"


def num(x: float, digits: int = 1) -> str:
    """Number with thousands separators and `digits` decimals: 12345.67 -> ``"12,345.7"``."""
    return DASH if _nan(x) else f"{x:,.{digits}f}"


def signed(x: float, digits: int = 1) -> str:
    """Signed number: 2 -> ``"+2.0"``."""
    return DASH if _nan(x) else f"{x:+,.{digits}f}"


def count(x: int) -> str:
    """Integer with thousands separators."""
    return f"{x:,d}"


def usd(x: float) -> str:
    """US dollars with 4 decimals: 0.01234 -> ``"$0.0123"``; negatives ``"-$0.0010"``."""
    if _nan(x):
        return DASH
    return f"-${-x:,.4f}" if x < 0 else f"${x:,.4f}"


def signed_usd(x: float) -> str:
    """Signed US dollars with 4 decimals: ``"+$0.0010"``, ``"-$0.0100"``."""
    if _nan(x):
        return DASH
    return f"-${-x:,.4f}" if x < 0 else f"+${x:,.4f}"


def ratio(x: float) -> str:
    """Multiplicative ratio: 0.8123 -> ``"0.812×"``."""
    return DASH if _nan(x) else f"{x:.3f}×"


def p_value(p: float) -> str:
    """p-value with 3 decimals, ``"<0.001"`` below 0.001."""
    if _nan(p):
        return DASH
    return "<0.001" if p < 0.001 else f"{p:.3f}"


FEW_CLUSTERS = 6
"""Below this many clusters an interval's width comes mostly from the few clusters (t on G - 1
degrees of freedom; the coverage study in tests/analysis/test_analysis_coverage.py starts at 6)."""


def few_mark(n_clusters: int) -> str:
    """Footnote mark of an interval from few clusters: ``"†2"`` (2 clusters), ``"‡"`` (1), ``""`` (>= 6)."""
    if n_clusters >= FEW_CLUSTERS:
        return ""
    return "‡" if n_clusters <= 1 else f"†{n_clusters}"


def marked(cell: str, n_clusters: int) -> str:
    """`cell` (an interval) followed by its `few_mark`, when it has one and the interval exists."""
    mark = few_mark(n_clusters)
    return f"{cell} {mark}" if mark and cell != DASH else cell


def few_footnote(marks_used: bool) -> str:
    """The footnote of `few_mark` for a table caption ("" when no cell carries a mark)."""
    if not marks_used:
        return ""
    return (f" †N: the interval comes from N clusters (source repositories; fewer than {FEW_CLUSTERS}), a t interval "
            "on N − 1 degrees of freedom: it is wide because of the few clusters, and narrows only with more "
            "repositories. ‡: one cluster, no variance between clusters is estimable.")
