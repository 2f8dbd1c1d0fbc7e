"""Location summaries and multiplicity adjustment (re-exported by `readbench.analysis.stats`).

Heavy-tailed tokens and cost are summarised by medians and geometric means
(docs/specs/metrics.md "Aggregation"; anchors.md §5.2); several arms compared with one
baseline get Holm-adjusted p-values (anchors.md §5.2).
"""

from __future__ import annotations

from typing import Any

import numpy as np

from ._records import HeavyTailSummary
from ._validate import as_1d_float

__all__ = ["heavy_tail_summary", "holm_adjust"]


def heavy_tail_summary(values: Any) -> HeavyTailSummary:
    """Mean, median and geometric mean of a heavy-tailed metric.

    Parameters
    ----------
    values : array_like, shape (n,)
        Finite values (tokens, USD, turns). Must not be empty.

    Returns
    -------
    HeavyTailSummary

    Raises
    ------
    ValueError
        If `values` is empty or has a non-finite value.

    Notes
    -----
    The geometric mean uses only values > 0 (NaN when there are none); the count left out
    is ``n_nonpositive``.

    Examples
    --------
    >>> s = heavy_tail_summary([1, 10, 100])
    >>> s.median, round(s.geometric_mean, 9), s.mean
    (10.0, 10.0, 37.0)
    """
    v = as_1d_float(values, "values")
    pos = v[v > 0]
    gm = float(np.exp(np.mean(np.log(pos)))) if pos.size else float("nan")
    return HeavyTailSummary(
        n=int(v.size), mean=float(v.mean()), median=float(np.median(v)), geometric_mean=gm,
        n_nonpositive=int(v.size - pos.size),
    )


def holm_adjust(p_values: Any) -> tuple[float, ...]:
    """Holm step-down adjusted p-values (family-wise error control).

    Parameters
    ----------
    p_values : array_like, shape (m,)
        Raw p-values in [0, 1], one per comparison with the baseline. May be empty.

    Returns
    -------
    tuple of float
        Adjusted p-values in the input order, each in [0, 1].

    Raises
    ------
    ValueError
        If a p-value is non-finite or outside [0, 1].

    Notes
    -----
    Sort ascending; the k-th smallest (0-based) is multiplied by (m - k); a running maximum
    keeps the adjusted values monotone; values are capped at 1 (anchors.md §5.2).

    References
    ----------
    .. [1] S. Holm, "A simple sequentially rejective multiple test procedure", Scand. J.
       Statist. 6 (1979).

    Examples
    --------
    >>> [round(p, 12) for p in holm_adjust([0.01, 0.04, 0.03])]
    [0.03, 0.06, 0.06]
    """
    p = as_1d_float(p_values, "p_values", allow_empty=True)
    if ((p < 0) | (p > 1)).any():
        raise ValueError(f"p_values must be in [0, 1], got {p.tolist()!r}")
    m = p.size
    order = np.argsort(p, kind="stable")
    adjusted = np.minimum(1.0, np.maximum.accumulate(p[order] * (m - np.arange(m))))
    out = np.empty(m)
    out[order] = adjusted
    return tuple(float(x) for x in out)
