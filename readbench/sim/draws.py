"""Seeded, order-independent random draws for the simulated agent.

docs/specs/sim-agent.md: "each decision drawn from a seeded RNG: task, epoch, arm-independent
seed". Each draw hashes ``(seed, key...)`` with SHA-256, so a decision depends only on the
sample seed and the decision's own key (e.g. ``("follow", step, notice_count)``), never on how
many draws happened before. Two arms of the same task and epoch therefore draw the same value
for the same situation even when their trajectories diverged earlier (paired by construction).
"""

from __future__ import annotations

import hashlib
from collections.abc import Sequence

__all__ = ["Draws", "sample_seed"]


def sample_seed(task_id: str, epoch: int, profile: str) -> str:
    """The seed of one sample: 16 hex digits of SHA-256 over ``task_id|epoch|profile``.

    The read variant and DCP configuration are deliberately not part of it (pairing).
    """
    return hashlib.sha256(f"{task_id}|{epoch}|{profile}".encode()).hexdigest()[:16]


class Draws:
    """Deterministic draws keyed by ``(seed, *key)``.

    Args:
        seed: any string (normally :func:`sample_seed`).
    """

    def __init__(self, seed: str) -> None:
        self.seed = seed

    def unit(self, *key: object) -> float:
        """A uniform float in [0, 1) for ``key``."""
        digest = hashlib.sha256("\x1f".join([self.seed, *map(str, key)]).encode()).digest()
        return int.from_bytes(digest[:8], "big") / 2**64

    def chance(self, probability: float, *key: object) -> bool:
        """True with ``probability`` (a fraction in [0, 1]; 0 never, 1 always)."""
        if probability >= 1.0:
            return True
        if probability <= 0.0:
            return False
        return self.unit(*key) < probability

    def integer(self, low: int, high: int, *key: object) -> int:
        """A uniform integer in ``[low, high]`` (inclusive).

        Raises:
            ValueError: ``low > high``.
        """
        if low > high:
            raise ValueError(f"empty range [{low}, {high}]")
        return low + int(self.unit(*key) * (high - low + 1))

    def weighted(self, options: Sequence[tuple[str, float]], *key: object) -> str:
        """One option name drawn with the given non-negative weights.

        Raises:
            ValueError: no option has a positive weight.
        """
        total = sum(w for _, w in options if w > 0)
        if total <= 0:
            raise ValueError(f"no positive weight among {list(options)}")
        x = self.unit(*key) * total
        for name, weight in options:
            if weight <= 0:
                continue
            if x < weight:
                return name
            x -= weight
        return [name for name, w in options if w > 0][-1]
