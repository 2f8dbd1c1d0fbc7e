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

__all__ = ["bench_replay", "bench_replay_scale", "replay_stage_seconds"]

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
    from readbench.bench_floor import parse_hash_floor, ratio

    floor = parse_hash_floor(files) / n * 1000  # CPU s per 1,000 calls: parsing + hashing each line once
    return {
        "calls": n,
        "import_seconds_per_1000_calls": (t1 - t0) / n * 1000,
        "replay_seconds_per_1000_calls": (t2 - t1) / n * 1000,
        "floor_seconds_per_1000_calls": floor,
        "import_x_floor": ratio((t1 - t0) / n * 1000, floor),
        "replay_x_floor": ratio((t2 - t1) / n * 1000, floor),
        "gate_sweep_seconds_per_1000_calls": (t3 - t2) / n * 1000,
        "gate_sweep_candidates": candidates,
        "big_session_mb": big.stat().st_size / 1e6,
        "big_session_import_peak_rss_mb": peak - base,
    }


#: Issue 14's scale goal: 1,000 sessions x 450 calls x 7 DCP configurations x 5 cache models in
#: under 5 minutes on 2 cores, in under 2 GB.
SCALE_GOAL = {"sessions": 1000, "calls": 450, "dcp": 7, "cache_models": 5, "seconds": 300.0, "memory_mb": 2048.0,
              "cores": 2}


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


_SCALE_CACHES = ("anthropic-5m", "anthropic-1h", "openai", "deepseek", "gemini-implicit")


def replay_stage_seconds(path: Path, reps: int = 2) -> dict[str, float]:
    """CPU seconds of each stage of `replay --dcp all --cache <5 cache models> --audit --gate-sweep`
    on the file at `path`, in this process: the best of `reps` runs (by total) after a warm-up run
    that pays the imports and first-use tables. Keys: `import` (parsing the file), the stages of
    `readbench.replay.run._replay_session` (`bill`, `dcp_project`, `dcp_simulate`, `audit`,
    `read_counterfactual`, `gate_sweep`), `other` (the rest: rows, the session JSON) and `total`."""
    from readbench.dcp import list_configs
    from readbench.replay.run import ReplayOptions, _fewer_collections, _replay_session
    from readbench.replay.timing import timed
    from readbench.sessions.registry import load_path

    options = ReplayOptions(cache=_SCALE_CACHES, dcp=tuple(c.name for c in list_configs()), dcp_cache=_SCALE_CACHES,
                            gate_sweep=True, audit=True)
    from readbench.read._outline import _parsed

    best: dict[str, float] | None = None
    for k in range(reps + 1):
        _parsed.cache_clear()  # file contents differ between sessions: a warm parse memo would flatter this one
        t: dict[str, float] = {}
        with _fewer_collections():
            with timed(t, "total"):
                with timed(t, "import"):
                    items = list(load_path(path, True))
                for item in items:
                    _replay_session(item, options, t)
        if k and (best is None or t["total"] < best["total"]):
            best = t
    assert best is not None
    best["other"] = best["total"] - sum(v for key, v in best.items() if key != "total")
    return best


def bench_replay_scale(out_dir: Path, sessions: int = 8, jobs: int = 2, source: Path | None = None) -> dict[str, Any]:
    """`readbench replay --dcp all --cache <5 cache models> --jobs 2` over `sessions` synthetic
    450-call sessions (pi and Claude Code formats alternating), then the same with `--audit
    --gate-sweep` (the read audit, every read preset's counterfactual and the gate sweep).

    `source`: a folder (or file) of the user's own recorded sessions, replayed instead of the
    synthetic ones (`sessions` is then their number; `jobs` at most one less). Real sessions cost
    more than the synthetic ones: pi-mono's two recorded pi sessions (453 and 484 calls, a mean of
    543 blocks a request against 118) took 8.9 and 4.4 CPU s in-process against 3.3-3.9
    (2026-12-07), so the synthetic figure is a floor for real use. `calls_per_session` gives the
    mean calls of the sessions measured.

    Each command runs twice: over the first `jobs` files (one per worker: the start-up of the
    command and its workers, and the report, are paid once) and over all `sessions`; the
    difference divided by the `sessions - jobs` extra files is the CPU cost of one more session,
    which start-up does not blur. Per command: wall time, CPU time (user + system of the command
    and its workers), the peak resident memory of the command and its workers together, and the
    projection to the goal's 1,000 sessions: (start-up CPU + 1,000 x the CPU per session) /
    the goal's 2 cores, a floor that a shared machine's load does not move (wall time does). Also the
    CPU seconds per stage of one pi and one Claude Code session in-process
    (`replay_stage_seconds`). Returns the figures.

    Raises:
        ValueError: `sessions` <= `jobs` (nothing to take the difference of); `source` holds fewer
            than 2 session files.
    """
    import shutil

    from readbench.sessions.synth import write_claude_session, write_pi_session

    work = out_dir / "scale"
    shutil.rmtree(work, ignore_errors=True)
    (work / "in").mkdir(parents=True)
    (work / "first").mkdir()
    if source is not None:
        from readbench.replay.run import session_files

        files = [Path(f) for f, _ in session_files([str(source)])]
        if len(files) < 2:
            raise ValueError(f"--scale-from {source}: {len(files)} session file(s); the per-session cost needs at least 2 "
                             "(the difference between a run over all of them and one over the first)")
        sessions, jobs = len(files), min(jobs, len(files) - 1)
        for k, f in enumerate(files):  # numbered copies: the walk order is the replay order, names may repeat
            shutil.copy(f, work / "in" / f"s{k:04d}{f.suffix}")
            if k < jobs:
                shutil.copy(f, work / "first" / f"s{k:04d}{f.suffix}")
    elif sessions <= jobs:
        raise ValueError(f"--scale-sessions must exceed the {jobs} jobs (got {sessions}): the per-session cost is "
                         "the difference between a run over all sessions and one over one session per worker")
    else:
        for k in range(sessions):
            writer = write_pi_session if k % 2 == 0 else write_claude_session
            f = writer(work / "in" / f"s{k}.jsonl", seed=100 + k)
            if k < jobs:
                shutil.copy(f, work / "first" / f.name)
    goal = SCALE_GOAL
    out: dict[str, Any] = {"sessions": sessions, "jobs": jobs, "goal_sessions": goal["sessions"], "goal_cores": goal["cores"],
                           "goal_seconds": goal["seconds"], "goal_memory_mb": goal["memory_mb"],
                           "source": str(source) if source is not None else "synthetic",
                           "calls_per_session": _mean_calls(sorted((work / "in").iterdir()))}
    for label, extra in (("dcp", []), ("dcp_audit_sweep", ["--audit", "--gate-sweep"])):
        runs = {}
        for name, n in (("first", jobs), ("in", sessions)):
            cmd = [sys.executable, "-m", "readbench.cli", "replay", str(work / name), "--dcp", "all", "--cache",
                   ",".join(_SCALE_CACHES), "--jobs", str(jobs), *extra, "--out", str(work / f"out-{label}-{name}")]
            runs[name] = _run_measured(cmd, work / f"{label}-{name}.log")
        (w0, c0, _), (w1, c1, peak) = runs["first"], runs["in"]
        per_session = (c1 - c0) / (sessions - jobs)
        startup = c0 - jobs * per_session
        out[label] = {"seconds": w1, "cpu_seconds": c1, "seconds_per_session": w1 / sessions,
                      "cpu_seconds_per_session": per_session, "startup_cpu_seconds": startup,
                      "extrapolated_seconds_for_goal": w0 + (w1 - w0) / (sessions - jobs) * (goal["sessions"] - jobs),
                      "extrapolated_cpu_bound_seconds_for_goal": (startup + goal["sessions"] * per_session) / goal["cores"],
                      "peak_rss_mb": peak}
    from readbench.bench_floor import parse_hash_floor, ratio

    # the floor: parsing + hashing every line of the same session files once (readbench.bench_floor)
    floor = out["floor_cpu_seconds_per_session"] = parse_hash_floor(sorted((work / "in").glob("*.jsonl"))) / sessions
    for label in ("dcp", "dcp_audit_sweep"):
        out[label]["cpu_per_session_x_floor"] = ratio(out[label]["cpu_seconds_per_session"], floor)
    if source is None:
        out["stages_cpu_seconds"] = {fmt: replay_stage_seconds(work / "in" / f"s{k}.jsonl")
                                     for fmt, k in (("pi", 0), ("claude-code", 1))}
    else:
        out["stages_cpu_seconds"] = {f.name: replay_stage_seconds(f) for f in sorted((work / "in").iterdir())[:2]}
    return out


def _mean_calls(files: list[Path]) -> float:
    """Mean model calls per imported session of `files` (NaN when none imports)."""
    from readbench.sessions.registry import ImportFailure, load_path

    calls = [len(s.calls) for f in files for s in load_path(f, True) if not isinstance(s, ImportFailure)]
    return sum(calls) / len(calls) if calls else float("nan")
