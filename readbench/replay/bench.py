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

__all__ = ["bench_replay", "bench_replay_scale"]

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
    """Time import, replay (all three modes, `--cache auto`) and the gate sweep's candidate
    search (`--gate-sweep`) over synthetic sessions, and
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
    from readbench.replay.gate_sweep import session_candidates

    candidates = sum(len(session_candidates(s)) for s in loaded)
    t3 = time.perf_counter()
    n = sum(len(s.calls) for s in loaded)
    big = work / "big.jsonl"
    if not big.exists() or big.stat().st_size < 0.95 * big_mb * 1e6:
        # a first guess at the calls per MB, then scaled by the size it gave (the script's reads
        # vary in size: a fixed guess gave 39 MB for "100 MB")
        calls_big = int(big_mb * 38)
        for _ in range(3):
            write_pi_session(big, seed=99, calls=calls_big, prompts=60, files=80)
            size_mb = big.stat().st_size / 1e6
            if size_mb >= 0.95 * big_mb:
                break
            calls_big = int(calls_big * big_mb / max(size_mb, 1e-3) * 1.02)
    base = _peak_rss_mb("-")
    peak = _peak_rss_mb(str(big))
    return {
        "calls": n,
        "import_seconds_per_1000_calls": (t1 - t0) / n * 1000,
        "replay_seconds_per_1000_calls": (t2 - t1) / n * 1000,
        "gate_sweep_seconds_per_1000_calls": (t3 - t2) / n * 1000,
        "gate_sweep_candidates": candidates,
        "big_session_mb": big.stat().st_size / 1e6,
        "big_session_import_peak_rss_mb": peak - base,
    }


#: Issue 14's scale goal: 1,000 sessions x 450 calls x 7 DCP configurations x 5 cache models in
#: under 5 minutes on 2 cores, in under 2 GB.
SCALE_GOAL = {"sessions": 1000, "calls": 450, "dcp": 7, "cache_models": 5, "seconds": 300.0, "memory_mb": 2048.0}


def _tree_rss_kb(pid: int) -> int:
    """Resident set (kB) of process `pid` and all its descendants, from /proc (0 once gone)."""
    import os

    total, todo = 0, [pid]
    while todo:
        p = todo.pop()
        try:
            with open(f"/proc/{p}/status") as fh:
                total += next((int(x.split()[1]) for x in fh if x.startswith("VmRSS:")), 0)
            for task in os.listdir(f"/proc/{p}/task"):
                with open(f"/proc/{p}/task/{task}/children") as fh:
                    todo += [int(c) for c in fh.read().split()]
        except (FileNotFoundError, ProcessLookupError, PermissionError):
            continue
    return total


def _run_measured(cmd: list[str], log: Path) -> tuple[float, float, float]:
    """(wall seconds, CPU seconds, peak MB) of a command that must succeed: CPU is user + system
    time of the command and every process it waited for (its workers); the peak is of the summed
    resident set of the command and its workers, sampled every 0.1 s. Its stderr goes to `log`.

    Raises:
        RuntimeError: the command failed (naming `log`).
    """
    import os

    t0 = time.perf_counter()
    with open(log, "w") as err:
        proc = subprocess.Popen(cmd, stdout=subprocess.DEVNULL, stderr=err)
        peak = 0
        while True:
            pid, status, usage = os.wait4(proc.pid, os.WNOHANG)
            if pid:
                break
            peak = max(peak, _tree_rss_kb(proc.pid))
            time.sleep(0.1)
    seconds = time.perf_counter() - t0
    code = os.waitstatus_to_exitcode(status)
    proc.returncode = code
    if code != 0:
        raise RuntimeError(f"{' '.join(cmd[2:6])} ... exited {code}; see {log}")
    return seconds, usage.ru_utime + usage.ru_stime, peak / 1024


def bench_replay_scale(out_dir: Path, sessions: int = 4, jobs: int = 2) -> dict[str, Any]:
    """`readbench replay --dcp all --cache <5 cache models> --jobs 2` over `sessions` synthetic
    450-call sessions (pi and Claude Code formats alternating), then the same with `--audit
    --gate-sweep` (the read audit, every read preset's counterfactual and the gate sweep); per
    run the wall time, CPU-independent throughput extrapolated to the goal's 1,000 sessions, and
    the peak resident memory of the command and its workers together. Returns the figures."""
    import shutil

    from readbench.sessions.synth import write_claude_session, write_pi_session

    work = out_dir / "scale"
    shutil.rmtree(work, ignore_errors=True)
    (work / "in").mkdir(parents=True)
    for k in range(sessions):
        writer = write_pi_session if k % 2 == 0 else write_claude_session
        writer(work / "in" / f"s{k}.jsonl", seed=100 + k)
    base = [sys.executable, "-m", "readbench.cli", "replay", str(work / "in"), "--dcp", "all", "--cache",
            "anthropic-5m,anthropic-1h,openai,deepseek,gemini-implicit", "--jobs", str(jobs)]
    goal = SCALE_GOAL
    out: dict[str, Any] = {"sessions": sessions, "jobs": jobs, "goal_seconds": goal["seconds"],
                           "goal_memory_mb": goal["memory_mb"]}
    for label, extra in (("dcp", []), ("dcp_audit_sweep", ["--audit", "--gate-sweep"])):
        seconds, cpu, peak = _run_measured([*base, *extra, "--out", str(work / f"out-{label}")], work / f"{label}.log")
        # on a shared machine wall time includes others' load: the CPU time over 2 cores is the floor
        out[label] = {"seconds": seconds, "cpu_seconds": cpu, "seconds_per_session": seconds / sessions,
                      "cpu_seconds_per_session": cpu / sessions,
                      "extrapolated_seconds_for_goal": seconds / sessions * goal["sessions"],
                      "extrapolated_cpu_bound_seconds_for_goal": cpu / sessions * goal["sessions"] / jobs,
                      "peak_rss_mb": peak}
    return out
