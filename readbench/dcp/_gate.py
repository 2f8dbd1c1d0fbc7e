"""The sister's cache-aware net-benefit gate (docs/specs/dcp.md §7.4).

Prompt caches are prefix caches: changing message p re-sends p..end uncached once.
`penalty = (1 - r) * tail`, `recurring_saving = r * removed`, `break_even = penalty / saving`
(infinite when saving is 0 and penalty > 0, 0 when both are 0). The whole batch is accepted iff
`break_even <= T`; equivalently removed / tail >= (1 - r) / (r * T), i.e. >= 41% of the tail at
r = 0.1, T = 22.
"""

from __future__ import annotations

import math
from dataclasses import dataclass

__all__ = ["CostModel", "cost_model", "accepts"]


@dataclass(frozen=True)
class CostModel:
    """`computeCacheCostModel` result, in full-price input-token units."""

    penalty_tokens: float
    recurring_saving_tokens: float
    break_even_calls: float
    """math.inf when there is a penalty and no saving."""


def cost_model(tail_tokens: float, removed_tokens: float, cached_price_ratio: float) -> CostModel:
    """Cost model for one batch; r is clamped to [0, 1], negative inputs to 0."""
    r = min(1.0, max(0.0, cached_price_ratio))
    tail = max(0.0, tail_tokens)
    removed = max(0.0, removed_tokens)
    penalty = (1 - r) * tail
    saving = r * removed
    if saving > 0:
        be = penalty / saving
    else:
        be = math.inf if penalty > 0 else 0.0
    return CostModel(penalty, saving, be)


def accepts(model: CostModel, threshold_calls: float, mode: str = "on") -> bool:
    """`always-apply` and `off` accept; `on` accepts iff break-even <= threshold."""
    return mode in ("off", "always-apply") or model.break_even_calls <= threshold_calls
