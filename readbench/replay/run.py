"""One recorded-session file through every replay the user asked for, in a worker process.

`replay_file` imports a file and, per session, runs the bill check (`readbench.replay.bill`),
the DCP x cache replay (`readbench.replay.dcp_cache`) when configurations are given, and returns
plain rows (tables by name), the stable per-session JSON object and what the token calibration
needs; no session object crosses a process boundary. `replay_paths` maps it over files, in
parallel processes when `jobs > 1` (a file is the unit of work; results come back in file
order), streaming: at most `2 x jobs` files are in flight.
"""

from __future__ import annotations

import datetime as dt
from collections.abc import Iterator
from concurrent.futures import Future, ProcessPoolExecutor
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from readbench.sessions.registry import ImportFailure

__all__ = ["ReplayOptions", "SessionResult", "replay_file", "replay_paths"]


@dataclass(frozen=True)
class ReplayOptions:
    """What to replay.

    Attributes:
        cache: `auto` or cache model names, for the bill check.
        dcp: DCP configuration names for the DCP x cache replay; empty = skip it.
        dcp_cache: cache models of the DCP replay; empty = the bill check's (the session's own
            cache model under `auto`).
        context_window: tokens, for pi-dcp's pressure bands.
        gate_sweep: also record the cache-aware gate's candidates (`readbench.replay.gate_sweep`).
    """

    cache: str | tuple[str, ...] = "auto"
    dcp: tuple[str, ...] = ()
    dcp_cache: tuple[str, ...] = ()
    context_window: int = 200_000
    gate_sweep: bool = False


@dataclass
class SessionResult:
    """What one session's replays produced (plain data, picklable).

    Attributes:
        json: the stable per-session object (`readbench.replay.report.session_json`).
        tables: table name -> rows (`calls`, `sessions`, `dcp`, `dcp_calls`, ...).
        levels: (session id, model, rows) for the pooled token calibration.
        harness: the session's harness.
        date: the session's date, None when unpriced.
        curve: (label, rows) for the cumulative-cost figure, None when unpriced.
        warnings: import warnings worth showing (file:line ...).
    """

    json: dict[str, Any]
    tables: dict[str, list[dict[str, Any]]] = field(default_factory=dict)
    levels: list[tuple[str, str, list]] = field(default_factory=list)
    harness: str = ""
    date: dt.date | None = None
    curve: tuple[str, list[dict[str, Any]]] | None = None
    warnings: list[str] = field(default_factory=list)


def replay_file(path: str, options: ReplayOptions, explicit: bool = True) -> tuple[list[SessionResult], list[ImportFailure]]:
    """Import `path` and replay each of its sessions (module docstring). `explicit`: the file was
    named (not found in a directory walk; see `readbench.sessions.registry.load_path`).

    Returns (results, failures): an unreadable file gives one ImportFailure and no result.
    """
    from readbench.replay.bill import replay_session, session_date
    from readbench.replay.report import session_json
    from readbench.sessions.reads import read_calls
    from readbench.sessions.registry import load_path

    results: list[SessionResult] = []
    failures: list[ImportFailure] = []
    for item in load_path(Path(path), explicit):
        if isinstance(item, ImportFailure):
            failures.append(item)
            continue
        rep = replay_session(item, options.cache if options.cache == "auto" else list(options.cache))
        reads = read_calls(item)
        res = SessionResult(session_json(rep, len(reads), sum(r.blind for r in reads)), harness=item.harness)
        res.tables["calls"] = rep.calls
        res.tables["sessions"] = rep.summaries
        res.levels = [(item.session_id, m, rows) for m, rows in rep.levels.items()]
        res.warnings = list(item.issues.warnings[:5])
        if item.issues.malformed_lines > 5:
            res.warnings.append(f"{item.source}: {item.issues.malformed_lines} malformed lines in all")
        if rep.summaries:
            res.date = session_date(item)
            first = rep.summaries[0]["cache_model"]
            res.curve = (f"{Path(item.source).name} [{item.session_id[:8]}]",
                         [{k: r[k] for k in ("call", "mode", "billed_cost_usd", "sim_cost_usd", "expected_break_cost_usd")}
                          for r in rep.calls if r["cache_model"] == first])
        if options.dcp and item.calls:
            from readbench.replay.dcp_cache import replay_dcp

            caches = list(options.dcp_cache) or sorted({m["cache_model"] for m in rep.summaries}) or ["anthropic-5m"]
            dcp = replay_dcp(item, list(options.dcp), caches, context_window=options.context_window)
            res.tables["dcp"] = dcp.rows
            res.tables["dcp_calls"] = dcp.calls
        if options.gate_sweep:
            from readbench.replay.gate_sweep import session_candidates

            res.tables["gate_candidates"] = session_candidates(item)
            res.json["gate_candidates"] = len(res.tables["gate_candidates"])
        results.append(res)
    return results, failures


def _files(paths: list[str]) -> list[tuple[str, bool]]:
    from readbench.sessions.registry import iter_session_files

    return [(str(p), explicit) for p, explicit in iter_session_files(paths)]


def replay_paths(
    paths: list[str], options: ReplayOptions, jobs: int = 1
) -> Iterator[tuple[str, bool, list[SessionResult], list[ImportFailure]]]:
    """Replay every file under `paths`; yields (file, named explicitly, results, failures) in
    file order. `jobs` > 1 runs files in that many worker processes.

    Raises:
        FileNotFoundError: a named path does not exist (before any work).
    """
    files = _files(paths)
    if jobs <= 1:
        for f, explicit in files:
            yield (f, explicit, *replay_file(f, options, explicit))
        return
    with ProcessPoolExecutor(max_workers=jobs) as pool:
        pending: list[tuple[str, bool, Future]] = []
        it = iter(files)
        for f, explicit in it:
            pending.append((f, explicit, pool.submit(replay_file, f, options, explicit)))
            if len(pending) >= 2 * jobs:
                break
        while pending:
            f, explicit, fut = pending.pop(0)
            results, failures = fut.result()
            nxt = next(it, None)
            if nxt is not None:
                pending.append((nxt[0], nxt[1], pool.submit(replay_file, nxt[0], options, nxt[1])))
            yield f, explicit, results, failures
