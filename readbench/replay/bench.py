"""`make bench`, recorded sessions: import and replay time per 1,000 calls, and the peak memory
of importing a ~100 MB session (issue 12: "a 100 MB session imports in bounded memory").

Sessions are synthetic (`readbench.sessions.synth`), written once under the bench directory.
The memory figure is the peak resident set (`VmHWM`, Linux) of a fresh Python process that
imports the big file, minus that of the same process importing nothing.
"""

from __future__ import annotations

import subprocess
import sys
import time
from pathlib import Path
from typing import Any

__all__ = ["bench_replay"]

# VmHWM (the peak resident set of this address space) starts afresh at exec; getrusage's
# ru_maxrss would carry the forking parent's size into the child.
_CHILD = """
import re, sys
from readbench.sessions import load_file
import readbench.sessions.pi, readbench.replay.bill  # the same imports either way
if sys.argv[1] != "-":
    sessions = load_file(sys.argv[1])
    print(sum(len(s.calls) for s in sessions), file=sys.stderr)
print(re.search(r"VmHWM:\\s+(\\d+) kB", open("/proc/self/status").read()).group(1))
"""


def _peak_rss_mb(path: str) -> float:
    out = subprocess.run([sys.executable, "-c", _CHILD, path], capture_output=True, text=True, check=True)
    return int(out.stdout.strip().splitlines()[-1]) / 1024.0


def bench_replay(out_dir: Path, sessions: int = 4, calls: int = 450, big_mb: float = 100.0) -> dict[str, Any]:
    """Time import and replay (all three modes, `--cache auto`) over synthetic sessions and
    measure the import's peak memory on a ~`big_mb` MB session. Returns the figures."""
    from readbench.replay.bill import replay_session
    from readbench.sessions import load_file
    from readbench.sessions.synth import write_pi_session

    work = out_dir / "sessions"
    work.mkdir(parents=True, exist_ok=True)
    files = [write_pi_session(work / f"s{k}.jsonl", seed=k, calls=calls) for k in range(sessions)]
    t0 = time.perf_counter()
    loaded = [s for f in files for s in load_file(f)]
    t1 = time.perf_counter()
    for s in loaded:
        replay_session(s)
    t2 = time.perf_counter()
    n = sum(len(s.calls) for s in loaded)
    big = work / "big.jsonl"
    if not big.exists():
        # ~26 KB per call: 3,800 calls of long reads make ~100 MB
        write_pi_session(big, seed=99, calls=int(big_mb * 38), prompts=60, files=80)
    base = _peak_rss_mb("-")
    peak = _peak_rss_mb(str(big))
    return {
        "calls": n,
        "import_seconds_per_1000_calls": (t1 - t0) / n * 1000,
        "replay_seconds_per_1000_calls": (t2 - t1) / n * 1000,
        "big_session_mb": big.stat().st_size / 1e6,
        "big_session_import_peak_rss_mb": peak - base,
    }
