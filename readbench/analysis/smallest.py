"""The smallest difference that matters: below it a decision need not be detected (GitHub issue 28).

A matrix sets it (``smallest_difference: {success_pp: 5, cost_ratio: 0.9}``, recorded in
``run.json``), or the command line (``--smallest-success-pp``, ``--smallest-cost-ratio`` of
``readbench eval``, ``report`` and ``compare``). Every decision the report or ``compare`` states
carries the difference the run could detect (80 % power at the Holm-adjusted level, `power`);
where that is larger than the smallest difference that matters, the run makes no decision and
says so (report: "no decision: this run detects only ≥ X; `readbench plan` says what would";
``compare``: exit status 3, underpowered).
"""

from __future__ import annotations

import math
from collections.abc import Mapping
from dataclasses import dataclass
from typing import Any

__all__ = ["KEYS", "POWER", "SmallestDifference", "holm_level", "run_smallest"]

KEYS = ("success_pp", "cost_ratio")
"""Keys of a matrix's ``smallest_difference`` mapping (and of ``run.json``'s)."""

POWER = 0.8
"""Power at which a difference counts as detectable."""


def holm_level(alpha: float, family_size: int) -> float:
    """The level of the first step of Holm's procedure, ``alpha / m`` (m >= 1 tests).

    A single difference among m tests is detected when its p is below alpha / m (the other
    m - 1 tests being null), so the detectable difference of one test of a Holm family is the
    one at this level (Bonferroni's; Holm 1979).
    """
    return alpha / max(1, int(family_size))


@dataclass(frozen=True)
class SmallestDifference:
    """The smallest differences that matter to the decision (issue 28)."""

    success_pp: float = 5.0
    """Success difference in percentage points, in (0, 100)."""
    cost_ratio: float = 0.9
    """Cost ratio arm / baseline, > 0 and != 1 (0.9: 10 % cheaper; a cost increase of 1 / 0.9
    = ×1.111 matters as much)."""

    def __post_init__(self) -> None:
        s, c = self.success_pp, self.cost_ratio
        if isinstance(s, bool) or not isinstance(s, (int, float)) or not 0 < s < 100:
            raise ValueError(f"smallest_difference.success_pp must be a number of percentage points in (0, 100), "
                             f"got {s!r}")
        if isinstance(c, bool) or not isinstance(c, (int, float)) or not math.isfinite(c) or not c > 0 or c == 1:
            raise ValueError(f"smallest_difference.cost_ratio must be a ratio > 0 and != 1 (0.9 = 10% cheaper), "
                             f"got {c!r}")

    @property
    def success(self) -> float:
        """The success difference as a fraction (0.05 for 5 pp)."""
        return self.success_pp / 100.0

    @property
    def cost_log(self) -> float:
        """|log(cost_ratio)|: the cost difference on the log scale the tests use."""
        return abs(math.log(self.cost_ratio))

    @property
    def cost_increase(self) -> float:
        """The cost increase that matters, as a ratio > 1: ``exp(cost_log)`` (×1.111 for 0.9)."""
        return math.exp(self.cost_log)

    def describe(self) -> str:
        """``"5 pp in success, a cost ratio of 0.9× (or 1.111×)"``."""
        return (f"{self.success_pp:g} pp in success, a cost ratio of {min(self.cost_ratio, 1 / self.cost_ratio):.3g}× "
                f"(or {self.cost_increase:.3f}×)")

    def to_dict(self) -> dict[str, float]:
        """``{"success_pp": 5.0, "cost_ratio": 0.9}`` (the matrix / run.json form)."""
        return {"success_pp": float(self.success_pp), "cost_ratio": float(self.cost_ratio)}

    @classmethod
    def from_mapping(cls, value: Any, where: str = "smallest_difference") -> SmallestDifference:
        """Read ``{success_pp: X, cost_ratio: Y}`` (either key may be left out: its default).

        Raises
        ------
        ValueError
            If `value` is not a mapping, has another key, or a value is out of range; the
            message names `where`.
        """
        if value is None:
            return cls()
        if not isinstance(value, Mapping):
            raise ValueError(f"{where} must be a mapping like {{success_pp: 5, cost_ratio: 0.9}}, got {value!r}")
        unknown = sorted(set(value) - set(KEYS))
        if unknown:
            raise ValueError(f"{where}: unknown key(s) {unknown}; known: {', '.join(KEYS)}")
        try:
            return cls(**{k: value[k] for k in KEYS if k in value})
        except ValueError as ex:
            raise ValueError(f"{where}: {ex}") from None

    def override(self, success_pp: float | None = None, cost_ratio: float | None = None) -> SmallestDifference:
        """A copy with the given values (None keeps this one's); validated."""
        return SmallestDifference(self.success_pp if success_pp is None else success_pp,
                                  self.cost_ratio if cost_ratio is None else cost_ratio)


def run_smallest(meta: Mapping[str, Any], success_pp: float | None = None,
                 cost_ratio: float | None = None) -> SmallestDifference:
    """The smallest difference that matters for a run: its ``run.json``'s ``smallest_difference``
    (the matrix's; defaults when absent), overridden by the given values (the command line's).

    Raises
    ------
    ValueError
        A value out of range (named).
    """
    return SmallestDifference.from_mapping(meta.get("smallest_difference"), "run.json smallest_difference").override(
        success_pp, cost_ratio)
