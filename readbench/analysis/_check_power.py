"""The worsening a regression check of `regression` can detect (GitHub issue 28).

A check tests "worse than the baseline by more than the tolerance" one-sided, in a Holm family
of m checks. A true worsening D is detected with 80 % power when ``D = bound + (t_{1-alpha/m} +
t_{0.8}) sqrt(Var(D))`` on G - 1 degrees of freedom, Var from the pairs' own clustered variance
components (`power.variance_components`; for success, Connor's rule: a drop of D needs at least D
discordant pairs). The same machinery as ``readbench plan``, so what `plan` prints is what
would make the check detect the smallest difference that matters.
"""

from __future__ import annotations

import math

import numpy as np
import pandas as pd

from .compare import SUCCESS
from .power import detectable_effect, pairs_for_plan, variance_components
from .smallest import POWER

__all__ = ["detectable_worsening"]


def detectable_worsening(pairs: pd.DataFrame, metric: str, scale: str, bound: float, level: float) -> float:
    """Smallest true worsening the check of `metric` on `pairs` detects with 80 % power.

    Parameters
    ----------
    pairs : pandas.DataFrame
        `compare.pair_rows` of the arm now (``_t``) and in the baseline (``_b``).
    metric : str
        ``"success"`` or a metric column.
    scale : {"difference", "ratio"}
        The check's scale.
    bound : float
        The tolerance on the estimate's scale (`regression.MetricCheck.bound`): ``-0.05`` for
        success, ``1.10`` for a ratio, the tolerated mean increase (metric unit) otherwise.
    level : float
        One-sided level of the test, e.g. ``0.05 / m`` for a Holm family of m checks.

    Returns
    -------
    float
        On the check's scale: a success drop as a positive fraction (0.32 = 32 pp), a ratio
        (1.31×) or a mean increase in the metric's unit; NaN when untestable (fewer than 2 pairs
        or clusters), inf when no success drop up to 100 pp would be detected.
    """
    log_scale = scale == "ratio"
    d, tasks, clusters = pairs_for_plan(pairs, metric, log_scale=log_scale)
    if d.size < 2 or np.unique(clusters.astype(str)).size < 2:
        return float("nan")
    if metric == SUCCESS:
        d = -d  # a drop is positive
    vc = variance_components(d, tasks, clusters, binary=metric == SUCCESS,
                             scale="log-ratio" if log_scale else "difference")
    epochs = int(pd.Series(tasks).value_counts().mode().iloc[0])
    margin = -bound if metric == SUCCESS else (math.log(bound) if log_scale else bound)
    got = detectable_effect(vc, n_tasks=vc.n_tasks, epochs=epochs, n_clusters=vc.n_clusters, power=POWER,
                            alpha=min(0.999, 2.0 * level), margin=max(0.0, margin))
    return math.exp(got) if log_scale and math.isfinite(got) else got
