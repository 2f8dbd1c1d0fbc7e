"""Measured floors for `make bench` (issue 26 item 3): every figure is also reported as a ratio to
the cheapest work on the same input, measured in the same run on the same machine, so a figure
compares across machines (a slower core slows the figure and its floor alike).

The floor of a benchmark is doing the least any implementation must do with its input, once:
hashing the bytes (BLAKE2b, the harness's block hash) and, for session files, parsing each JSON
line. Floors are CPU seconds of this process (`time.process_time`), the best of `reps` runs, so the
machine's other load moves them little.
"""

from __future__ import annotations

import hashlib
import json
import time
from collections.abc import Callable, Iterable
from pathlib import Path

__all__ = ["eval_log_floor", "floor_seconds", "hash_floor", "parse_hash_floor", "ratio"]


def floor_seconds(work: Callable[[], object], reps: int = 5) -> float:
    """CPU seconds of `work()`, the best of `reps` runs (>= 1e-9: a divisor).

    Raises:
        ValueError: reps < 1.
    """
    if reps < 1:
        raise ValueError(f"reps must be >= 1, got {reps}")
    best = float("inf")
    for _ in range(reps):
        t0 = time.process_time()
        work()
        best = min(best, time.process_time() - t0)
    return max(best, 1e-9)


def hash_floor(chunks: Iterable[bytes], reps: int = 5) -> float:
    """CPU seconds to BLAKE2b-hash each of `chunks` once (16-byte digests, as
    `readbench.cache.blocks.content_hash`), the best of `reps` runs."""
    data = list(chunks)
    return floor_seconds(lambda: [hashlib.blake2b(c, digest_size=16).digest() for c in data], reps)


def parse_hash_floor(paths: Iterable[Path], reps: int = 3) -> float:
    """CPU seconds to read the JSONL files at `paths`, parse every line once (`json.loads`) and
    BLAKE2b-hash each line's bytes once, the best of `reps` runs: the least a replay of those
    session files must do."""
    files = list(paths)

    def work() -> None:
        for p in files:
            with open(p, "rb") as fh:
                for line in fh:
                    if line.strip():
                        json.loads(line)
                        hashlib.blake2b(line, digest_size=16).digest()

    return floor_seconds(work, reps)


def eval_log_floor(log_dir: Path, reps: int = 3) -> tuple[float, int]:
    """CPU seconds to read every sample of the inspect ``.eval`` logs under `log_dir` once (each
    ``samples/*.json`` member of the zip: decompress, `json.loads`, BLAKE2b-hash its bytes), the
    best of `reps` runs, and the number of samples: the least any harness must do with the
    transcripts its samples produced (the floor of a simulated sample's CPU, issue 26 item 3).

    Raises:
        ValueError: no sample in any log under `log_dir`.
    """
    import zipfile

    members = [(p, n) for p in sorted(Path(log_dir).rglob("*.eval"))
               for n in zipfile.ZipFile(p).namelist() if n.startswith("samples/") and n.endswith(".json")]
    if not members:
        raise ValueError(f"no inspect sample in any .eval log under {log_dir}")

    def work() -> None:
        for path, name in members:
            with zipfile.ZipFile(path) as z:
                data = z.read(name)
            json.loads(data)
            hashlib.blake2b(data, digest_size=16).digest()

    return floor_seconds(work, reps), len(members)


def ratio(value: float, floor: float) -> float:
    """`value` / `floor` (both in the same unit); NaN when the floor is not positive."""
    return value / floor if floor > 0 else float("nan")
