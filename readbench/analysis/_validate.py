"""Input checks shared by the statistics functions: every message names the bad input."""

from __future__ import annotations

from typing import Any

import numpy as np


def as_1d_float(x: Any, name: str, *, allow_empty: bool = False) -> np.ndarray:
    """Return `x` as a finite 1-D float64 array or raise ValueError naming `name`."""
    arr = np.asarray(x, dtype=float)
    if arr.ndim != 1:
        raise ValueError(f"{name} must be 1-D, got shape {arr.shape}")
    if arr.size == 0 and not allow_empty:
        raise ValueError(f"{name} is empty: no samples in this group")
    bad = ~np.isfinite(arr)
    if bad.any():
        first = int(np.flatnonzero(bad)[0])
        raise ValueError(f"{name} has a non-finite value ({float(arr[first])!r}) at position {first}")
    return arr


def as_binary(x: Any, name: str) -> np.ndarray:
    """Return `x` as a 1-D int array of 0/1 values or raise ValueError naming `name`."""
    arr = as_1d_float(x, name)
    bad = (arr != 0.0) & (arr != 1.0)
    if bad.any():
        first = int(np.flatnonzero(bad)[0])
        raise ValueError(f"{name} must hold only 0 and 1, got {float(arr[first])!r} at position {first}")
    return arr.astype(np.int64)


def same_length(a: np.ndarray, a_name: str, b: np.ndarray, b_name: str) -> None:
    """Raise ValueError when two paired arrays differ in length."""
    if a.shape[0] != b.shape[0]:
        raise ValueError(
            f"{a_name} (length {a.shape[0]}) and {b_name} (length {b.shape[0]}) must have the "
            "same length: one value per (task, epoch) pair"
        )


def cluster_codes(clusters: Any, n: int, name: str = "clusters") -> np.ndarray | None:
    """Integer codes 0..G-1 for cluster labels, or None when `clusters` is None.

    Raises ValueError when the labels are not 1-D, differ in length from the data (`n`),
    or contain a missing value (None / NaN).
    """
    if clusters is None:
        return None
    labels = np.asarray(clusters, dtype=object)
    if labels.ndim != 1:
        raise ValueError(f"{name} must be 1-D, got shape {labels.shape}")
    if labels.shape[0] != n:
        raise ValueError(f"{name} (length {labels.shape[0]}) must have one label per value (length {n})")
    for i, lab in enumerate(labels):
        if lab is None or (isinstance(lab, float) and np.isnan(lab)):
            raise ValueError(f"{name} has a missing label at position {i}")
    _, codes = np.unique(labels.astype(str), return_inverse=True)
    return codes.astype(np.int64)


def check_confidence(confidence: float) -> float:
    """Return `confidence` as float if 0 < confidence < 1, else raise ValueError."""
    c = float(confidence)
    if not 0.0 < c < 1.0:
        raise ValueError(f"confidence ({confidence!r}) must be in the open interval (0, 1)")
    return c
