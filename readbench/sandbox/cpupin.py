"""One CPU per sample in the local sandbox: every command of a sample runs pinned to one CPU.

GitHub issue 26 item 2 (the simulated sample's CPU). A Docker sample is a container; a local sample
was a set of processes free to run on every CPU of the machine. Measured on this project's corpus
(2-core machine, idle): more-itertools' ``tests/test_more.py``, which the simulated agent runs in
its bugfix samples, took 31.7 CPU s (16.8 user + 14.9 system; 27 s wall) on both CPUs and 11.5 CPU s
(10.7 + 0.9; 12 s wall) pinned to one (``taskset -c 0``), with the same outcome (620 passed, 11,318
subtests passed). Its threaded tests (``TestConcurrentTee``, ``TestSerialize``) hand the GIL back
and forth between threads; on two CPUs every hand-over wakes a thread on the other CPU (futex
system calls, a cold cache), on one the hand-over is a plain switch. Those tests were ~50 % of the
nightly subset's CPU samples under py-spy (the independent design of ``readbench bench --only
forked``, 2026-12-07).

`CpuPool` hands each claimed sample the allowed CPU (``os.sched_getaffinity``) that the fewest
samples of this process hold (the lowest-numbered of those), so concurrent samples spread over the
machine's CPUs; `pin_prefix` is the ``taskset -c <cpu>`` prefix its commands run under (util-linux,
like ``setarch``: readbench.sandbox.local.no_aslr_prefix). Where ``taskset`` is missing or refused,
or ``READBENCH_PIN_CPU=0``, commands run unpinned (logged once). What a command prints does not
depend on the CPU it ran on (test times aside, which differ between any two runs), so the run memo
(readbench.sandbox.runmemo) keys commands without the prefix.
"""

from __future__ import annotations

import functools
import logging
import os
import subprocess
from collections import Counter

__all__ = ["ENV_SWITCH", "CpuPool", "pin_prefix", "pinning_works"]

logger = logging.getLogger(__name__)

#: ``READBENCH_PIN_CPU=0`` runs a local sample's commands on every CPU (unpinned)
ENV_SWITCH = "READBENCH_PIN_CPU"


@functools.lru_cache(maxsize=1)
def pinning_works() -> bool:
    """True when ``taskset -c <an allowed CPU> true`` exits 0 here (checked once per process; a
    failure is logged once) and `ENV_SWITCH` is not ``0``."""
    if os.environ.get(ENV_SWITCH, "1") == "0":
        return False
    cpu = min(os.sched_getaffinity(0))
    try:
        ok = subprocess.run(["taskset", "-c", str(cpu), "true"], capture_output=True, timeout=30).returncode == 0
    except (OSError, subprocess.TimeoutExpired):
        ok = False
    if not ok:
        logger.warning("`taskset -c %d true` failed: local sandbox commands run on every CPU (threaded tests "
                       "cost more CPU time)", cpu)
    return ok


def pin_prefix(cpu: int | None) -> tuple[str, ...]:
    """``("taskset", "-c", "<cpu>")``, or ``()`` for None (no CPU held)."""
    return () if cpu is None else ("taskset", "-c", str(cpu))


class CpuPool:
    """The CPUs this process may run on, and how many claimed samples hold each (module docstring)."""

    def __init__(self) -> None:
        self._held: Counter[int] = Counter()

    def acquire(self) -> int | None:
        """The allowed CPU held by the fewest samples (ties: the lowest number), now held once more;
        None when pinning is off or does not work here (`pinning_works`)."""
        if not pinning_works():
            return None
        cpu = min(sorted(os.sched_getaffinity(0)), key=lambda c: self._held[c])
        self._held[cpu] += 1
        return cpu

    def release(self, cpu: int | None) -> None:
        """Give back a CPU `acquire` returned (None: nothing)."""
        if cpu is None:
            return
        self._held[cpu] -= 1
        if self._held[cpu] <= 0:
            del self._held[cpu]

    def held(self) -> dict[int, int]:
        """CPU -> samples holding it now."""
        return dict(self._held)
