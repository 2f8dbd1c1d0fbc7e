"""CPU time per stage of a replay, for the scale benchmark (`readbench.replay.bench`)."""

from __future__ import annotations

import contextlib
import time
from collections.abc import Iterator

__all__ = ["timed"]


@contextlib.contextmanager
def timed(timings: dict[str, float] | None, stage: str) -> Iterator[None]:
    """Add the CPU seconds of this process spent inside the block to `timings[stage]` (created
    at 0.0); does nothing when `timings` is None."""
    if timings is None:
        yield
        return
    t0 = time.process_time()
    try:
        yield
    finally:
        timings[stage] = timings.get(stage, 0.0) + time.process_time() - t0
