"""Anytime-valid confidence sequences for sequential stopping (`readbench eval --sequential`;
GitHub issue 25 item 5): add tasks until every compared arm is decided.

Method: the predictable plug-in empirical-Bernstein confidence sequence (PrPl-EB) of
Waudby-Smith and Ramdas [1], Theorem 2, for the mean of a bounded quantity. For x_1, x_2, ...
in [0, 1] with a common mean mu (conditionally on the past) and alpha in (0, 1):

    mu_hat_t   = (1/2 + sum_{i<=t} x_i) / (t + 1)
    sigma2_t   = (1/4 + sum_{i<=t} (x_i - mu_hat_i)^2) / (t + 1)
    lambda_t   = min( sqrt(2 log(2/alpha) / (sigma2_{t-1} t log(1 + t))), 1/2 )
    psi_E(l)   = (-log(1 - l) - l) / 4
    v_i        = 4 (x_i - mu_hat_{i-1})^2
    C_t = sum lambda_i x_i / sum lambda_i  +-  (log(2/alpha) + sum v_i psi_E(lambda_i)) / sum lambda_i

P(mu in C_t for every t >= 1) >= 1 - alpha: the sequence may be looked at after every task and the
run stopped whenever it decides, with no correction for the peeking. A paired success difference
d in [-1, 1] is mapped to x = (d + 1) / 2 and back. Assumption: the pairs are independent draws
(tasks in dataset order); tasks of one repository are correlated, which this sequence does not
model (the final report's intervals do, with CR2 clusters).

A compared arm is *decided* when its sequence (at alpha / k for k compared arms, Bonferroni, so
all are valid at once) excludes 0 (a difference) or lies inside (-delta, +delta), the smallest
difference the matrix says matters (an equivalence: no difference of that size).

References
----------
.. [1] I. Waudby-Smith, A. Ramdas, "Estimating means of bounded random variables by betting",
   J. R. Stat. Soc. B 86 (2024), arXiv 2010.09686, Theorem 2 and eq. (13).
"""

from __future__ import annotations

from collections.abc import Sequence

import numpy as np

__all__ = ["confidence_sequence", "decided"]


def confidence_sequence(values: Sequence[float] | np.ndarray, alpha: float = 0.05, *, low: float = 0.0,
                        high: float = 1.0, cap: float = 0.5) -> tuple[np.ndarray, np.ndarray]:
    """The PrPl-EB confidence sequence of the mean of ``values`` after each one (module docstring).

    Args:
        values: shape (..., t): observations in ``[low, high]`` in arrival order (last axis).
        alpha: error probability over the whole sequence, in (0, 1).
        low, high: the bounds of every value.
        cap: the largest bet lambda (Waudby-Smith and Ramdas use 1/2 or 3/4).

    Returns:
        (lower, upper): shape (..., t): the sequence after 1, ..., t values, clipped to [low, high].

    Raises:
        ValueError: a value outside [low, high] or non-finite, ``alpha`` outside (0, 1), ``low >= high``.
    """
    if not 0.0 < alpha < 1.0:
        raise ValueError(f"alpha must be in (0, 1), got {alpha!r}")
    if not low < high:
        raise ValueError(f"low must be below high, got {low!r} >= {high!r}")
    v = np.asarray(values, dtype=float)
    if v.shape[-1] == 0:
        raise ValueError("confidence_sequence needs at least one value")
    if not np.isfinite(v).all() or (v < low).any() or (v > high).any():
        raise ValueError(f"values must be finite and within [{low}, {high}]")
    x = (v - low) / (high - low)
    t = np.arange(1, x.shape[-1] + 1, dtype=float)
    mu_hat = (0.5 + np.cumsum(x, axis=-1)) / (t + 1)
    sq = (x - mu_hat) ** 2
    sigma2 = (0.25 + np.cumsum(sq, axis=-1)) / (t + 1)
    prev_mu = np.concatenate([np.full(x.shape[:-1] + (1,), 0.5), mu_hat[..., :-1]], axis=-1)
    prev_sigma2 = np.concatenate([np.full(x.shape[:-1] + (1,), 0.25), sigma2[..., :-1]], axis=-1)
    log_term = np.log(2.0 / alpha)
    lam = np.minimum(np.sqrt(2.0 * log_term / (prev_sigma2 * t * np.log1p(t))), cap)
    psi = (-np.log1p(-lam) - lam) / 4.0
    v_i = 4.0 * (x - prev_mu) ** 2
    s_lam = np.cumsum(lam, axis=-1)
    centre = np.cumsum(lam * x, axis=-1) / s_lam
    radius = (log_term + np.cumsum(v_i * psi, axis=-1)) / s_lam
    lower = np.clip(centre - radius, 0.0, 1.0) * (high - low) + low
    upper = np.clip(centre + radius, 0.0, 1.0) * (high - low) + low
    return lower, upper


def decided(differences: Sequence[float], alpha: float, delta: float) -> str | None:
    """Whether the sequence of paired success differences (each in [-1, 1], in task order) decides.

    Args:
        differences: treatment minus baseline success per (task, epoch), in dataset order.
        alpha: this comparison's error level (already divided by the number of comparisons).
        delta: the smallest difference that matters (fraction, e.g. 0.40 for 40 pp), > 0.

    Returns:
        ``"differs (CS low, high)"``, ``"equivalent within +-delta (CS low, high)"`` or None
        (not decided, or no pair yet).

    Raises:
        ValueError: as `confidence_sequence`, or ``delta <= 0``.
    """
    if delta <= 0:
        raise ValueError(f"delta must be > 0, got {delta!r}")
    if len(differences) == 0:
        return None
    lower, upper = confidence_sequence(differences, alpha, low=-1.0, high=1.0)
    lo, hi = float(lower[-1]), float(upper[-1])
    if lo > 0 or hi < 0:
        return f"differs (CS {lo:+.3f}, {hi:+.3f})"
    if -delta < lo and hi < delta:
        return f"equivalent within ±{delta:.3f} (CS {lo:+.3f}, {hi:+.3f})"
    return None
