"""One recorded-session file through every replay the user asked for, in a worker process.

`replay_file` imports a file and, per session, runs the bill check (`readbench.replay.bill`),
the DCP x cache replay (`readbench.replay.dcp_cache`) when configurations are given, the read
audit (`readbench.replay.audit`) and the read-variant counterfactual
(`readbench.replay.read_counterfactual`) with `audit`, and the gate sweep's candidates, all on one
RequestBuilder (each message rendered once), one RequestSets (each recorded call rendered and
calibrated once for the bill check and the arms) and one ArmSimulator (one calibration); it returns
plain rows (tables by name), the stable per-session JSON object and what the token calibration
needs; no session object crosses a process boundary. `replay_paths` maps it over the files of
one session at a time (`replay_group`: a Claude Code session's main and sub-agent files together,
so a call they repeat is billed once), in parallel processes when `jobs > 1` (results come back in
file order), streaming: at most `2 x jobs` groups are in flight.
"""

from __future__ import annotations

import contextlib
import datetime as dt
import gc
import os
from collections.abc import Generator, Iterator
from concurrent.futures import Future, ProcessPoolExecutor
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from readbench.replay.timing import timed
from readbench.sessions.registry import ImportFailure

__all__ = ["ReplayOptions", "SessionResult", "replay_file", "replay_group", "replay_paths", "session_files", "session_groups"]


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
        audit: also audit the reads (`readbench.replay.audit`) and replay every read preset's
            first-order counterfactual (`readbench.replay.read_counterfactual`) under the DCP
            replay's cache models.
        presets: read presets of the counterfactual; empty = every registered preset.
        fork_points: also record where each read preset (against each other) and each DCP
            configuration (against off) first changes a request (`readbench.replay.fork_points`,
            fork_points.parquet: what `readbench plan --design forked --sessions` reads).
    """

    cache: str | tuple[str, ...] = "auto"
    dcp: tuple[str, ...] = ()
    dcp_cache: tuple[str, ...] = ()
    context_window: int = 200_000
    gate_sweep: bool = False
    audit: bool = False
    presets: tuple[str, ...] = ()
    fork_points: bool = False


@dataclass
class SessionResult:
    """What one session's replays produced (plain data, picklable).

    Attributes:
        json: the stable per-session object (`readbench.replay.report.session_json`).
        tables: table name -> rows (`calls`, `sessions`, `dcp`, `dcp_calls`, ...); from a worker
            process (`replay_paths` with jobs > 1) the streamed ones are pyarrow Tables.
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
    return replay_group([(path, explicit)], options)


def replay_group(files: list[tuple[str, bool]], options: ReplayOptions) -> tuple[list[SessionResult], list[ImportFailure]]:
    """`replay_file` for the files of one session (`readbench.sessions.registry.group_session_files`:
    a Claude Code session's main and sub-agent files), imported together so that a call they
    repeat is billed once (`readbench.sessions.registry.load_group`)."""
    from readbench.sessions.registry import load_group

    results: list[SessionResult] = []
    failures: list[ImportFailure] = []
    with _fewer_collections():
        for item in load_group([(Path(p), e) for p, e in files]):
            if isinstance(item, ImportFailure):
                failures.append(item)
                continue
            try:
                results.append(_replay_session(item, options))
            except ValueError as exc:  # bad data in this session (e.g. a model without a price): name it, go on
                failures.append(ImportFailure(item.source, f"session {item.session_id!r} could not be replayed: {exc}"))
            except Exception as exc:  # noqa: BLE001 - a value the replay did not foresee: this session fails, the others go on
                failures.append(ImportFailure(item.source, f"session {item.session_id!r} could not be replayed: "
                                                           f"{type(exc).__name__}: {exc}"))
    return results, failures


#: Allocations between the garbage collector's youngest-generation passes while a file is
#: replayed (Python's default is 700).
GC_THRESHOLD = 50_000


@contextlib.contextmanager
def _fewer_collections() -> Iterator[None]:
    """Run the cyclic garbage collector less often (`GC_THRESHOLD`) for the duration.

    A replay allocates millions of short-lived records (blocks, usages, row dicts) next to a
    large live set (the session's messages, rendered blocks, memo tables) that every older-
    generation pass walks again: at the default threshold about a quarter of the replay's CPU
    time went to the collector, which finds almost nothing (the records hold no cycles).
    Reference counting still frees them at once; at most `GC_THRESHOLD` objects wait for a pass.
    """
    old = gc.get_threshold()
    gc.set_threshold(max(old[0], GC_THRESHOLD), old[1], old[2])
    try:
        yield
    finally:
        gc.set_threshold(*old)


@contextlib.contextmanager
def _no_collections_in_session() -> Iterator[None]:
    """No cyclic garbage collection while one session is replayed; one youngest-generation pass after.

    Even with `_fewer_collections`, the passes that do run inside a session walk every record
    allocated and still alive since the last one (the session's rendered blocks, request tuples
    and memo tables: millions of references): ~15-20 % of a 450-call session's CPU for 2-3 passes
    that find nothing. The replay's records hold no cycles (reference counting frees them), so
    the collector waits until the session is done, when its working set is gone and the pass
    only sees the result rows (~5-10 ms). Nothing changes when the collector is already disabled.
    """
    if not gc.isenabled():
        yield
        return
    gc.disable()
    try:
        yield
    finally:
        gc.enable()
        gc.collect(0)


def _replay_session(item: Any, options: ReplayOptions, timings: dict[str, float] | None = None) -> SessionResult:
    """Every replay `options` asks for, of one imported session; `timings` (stage -> CPU
    seconds: `bill`, `dcp_project`, `dcp_simulate`, `audit`, `read_counterfactual`,
    `gate_sweep`) collects where the time went, for `readbench.replay.bench`. The cyclic
    garbage collector waits for the end of the session (`_no_collections_in_session`)."""
    with _no_collections_in_session():
        return _replay_one(item, options, timings)


def _replay_one(item: Any, options: ReplayOptions, timings: dict[str, float] | None) -> SessionResult:
    """`_replay_session` without the collector's schedule."""
    from readbench.cache.adapter import RequestBuilder
    from readbench.replay.bill import replay_session, session_date
    from readbench.replay.report import session_json
    from readbench.replay.requests import RequestSets
    from readbench.sessions.reads import read_calls

    builder = RequestBuilder()
    sets = RequestSets(item, builder)
    with timed(timings, "bill"):
        rep = replay_session(item, options.cache if options.cache == "auto" else list(options.cache), builder, sets)
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
        first = res.json["cache_model"]  # the model its bill is compared under (report.compared_cache_model)
        res.curve = (f"{Path(item.source).name} [{item.session_id[:8]}]",
                     [{k: r[k] for k in ("call", "mode", "billed_cost_usd", "sim_cost_usd", "expected_break_cost_usd")}
                      for r in rep.calls if r["cache_model"] == first])
    caches = list(options.dcp_cache) or sorted({m["cache_model"] for m in rep.summaries}) or ["anthropic-5m"]
    arms = None
    dcp_first: dict[str, int | None] | None = None
    if (options.dcp or options.audit) and item.calls:
        from readbench.replay.arms import ArmSimulator

        with timed(timings, "dcp_simulate"):
            arms = ArmSimulator(item, caches, builder,
                                {cm: c for (cm, mode), c in rep.calibrations.items() if mode == "in_sample"}, sets)
    if options.dcp and arms is not None:
        from readbench.replay.dcp_cache import replay_dcp

        dcp = replay_dcp(item, list(options.dcp), caches, context_window=options.context_window, arms=arms,
                         timings=timings, fork_points=options.fork_points)
        res.tables["dcp"] = dcp.rows
        res.tables["dcp_calls"] = dcp.calls
        dcp_first = dcp.first_changed
    replaced = None
    if options.audit:
        replaced = _audit(item, res, builder, arms, caches, list(options.presets) or None, timings)
    if options.fork_points:
        from readbench.replay.fork_points import fork_point_rows

        res.tables["fork_points"] = fork_point_rows(item, replaced, dcp_first)
    if options.gate_sweep:
        from readbench.replay.gate_sweep import session_candidates

        with timed(timings, "gate_sweep"):
            res.tables["gate_candidates"] = session_candidates(item)
        res.json["gate_candidates"] = len(res.tables["gate_candidates"])
    return res


def _audit(session: Any, res: SessionResult, builder: Any, arms: Any, caches: list[str], presets: list[str] | None,
           timings: dict[str, float] | None = None) -> dict[str, Any] | None:
    """The read audit and the read-variant counterfactual of one session, into `res`; returns
    `ReadArms.replaced` (None when the session has no call to simulate)."""
    from readbench.replay.audit import audit_session, session_family
    from readbench.replay.read_counterfactual import read_arms, replay_read_variants

    with timed(timings, "audit"):
        audit = audit_session(session, builder)
    res.tables["audit"] = [audit.row]
    res.tables["audit_reads"] = audit.reads
    res.json["audit"] = {k: v for k, v in audit.row.items() if k not in ("file", "session_id", "format", "harness")}
    if arms is None:
        return None
    family = session_family(session)
    count = lambda m: builder.message_tokens(m, family)  # noqa: E731
    with timed(timings, "read_counterfactual"):
        ra = read_arms(session, audit.tracked, audit.results, count, presets, token_family=family)
        res.tables["read_arms"] = replay_read_variants(session, arms, ra, caches, count)
    res.tables["read_arm_reads"] = ra.reads
    res.json["read_counterfactual"] = {
        "note": "first-order: the model's reaction to a different result is not replayed",
        **{name: {**c, "cost_delta_usd": {r["cache_model"]: r["cost_delta_usd"] for r in res.tables["read_arms"]
                                          if r["preset"] == name}}
           for name, c in ra.counts.items()},
    }
    return ra.replaced


def session_files(paths: list[str]) -> list[tuple[str, bool]]:
    """(file, named explicitly) of every session file under `paths`, in replay order.

    Raises:
        FileNotFoundError: a named path does not exist.
    """
    from readbench.sessions.registry import iter_session_files

    return [(str(p), explicit) for p, explicit in iter_session_files(paths)]


def session_groups(files: list[tuple[str, bool]]) -> list[list[tuple[str, bool]]]:
    """`files` grouped by session (`readbench.sessions.registry.group_session_files`): the unit of
    work of `replay_paths`."""
    from readbench.sessions.registry import group_session_files

    return [[(str(p), e) for p, e in g] for g in group_session_files([(Path(p), e) for p, e in files])]


def replay_paths(
    paths: list[str], options: ReplayOptions, jobs: int = 1, files: list[tuple[str, bool]] | None = None
) -> Generator[tuple[list[tuple[str, bool]], list[SessionResult], list[ImportFailure]], None, None]:  # the CLI closes it on Ctrl-C
    """Replay every file under `paths` (or the `session_files` already listed in `files`), one
    session's files at a time (`session_groups`); yields (the group's (file, named explicitly)
    pairs, results, failures) in file order. `jobs` > 1 runs groups in worker processes, at most
    one per group and per CPU (`os.cpu_count()`): more workers only add start-up (`--jobs 1000` on
    4 files took 155 s against 21 s with one; GitHub issue 27).

    Raises:
        FileNotFoundError: a named path does not exist (before any work).
    """
    files = session_files(paths) if files is None else files
    groups = session_groups(files)
    jobs = min(jobs, len(groups), os.cpu_count() or 1)
    if jobs <= 1:
        for g in groups:
            yield (g, *replay_group(g, options))
        return
    pool = ProcessPoolExecutor(max_workers=jobs)
    done = False
    try:
        pending: list[tuple[list[tuple[str, bool]], Future]] = []
        it = iter(groups)
        for g in it:
            pending.append((g, pool.submit(_replay_group_arrow, g, options)))
            if len(pending) >= 2 * jobs:
                break
        while pending:
            g, fut = pending.pop(0)
            results, failures = fut.result()
            nxt = next(it, None)
            if nxt is not None:
                pending.append((nxt, pool.submit(_replay_group_arrow, nxt, options)))
            yield g, results, failures
        done = True
    finally:  # also when the consumer stops early (Ctrl-C, SIGTERM): groups not started are cancelled
        if not done:
            _stop_workers(pool)
        pool.shutdown(wait=True, cancel_futures=True)


def _stop_workers(pool: ProcessPoolExecutor) -> None:
    """Terminate `pool`'s worker processes: the sessions they are replaying are abandoned (their
    results would be dropped anyway). Waiting for them took 19-23 s after a SIGTERM to the main
    process with --jobs 2 (the workers never get it), past the 10 s a `docker stop` or `timeout -k
    10` grants before SIGKILL, which then lost the partial report (a tester's run, 2026-12-07).
    ProcessPoolExecutor has no public way to do this before Python 3.14 (`terminate_workers`)."""
    stop = getattr(pool, "terminate_workers", None)
    if callable(stop):
        stop()
        return
    for proc in list((getattr(pool, "_processes", None) or {}).values()):
        if proc.is_alive():
            proc.terminate()


def _replay_group_arrow(files: list[tuple[str, bool]], options: ReplayOptions) -> tuple[list[SessionResult], list[ImportFailure]]:
    """`replay_group` in a worker: the streamed tables converted to pyarrow Tables before they are
    sent back (`readbench.replay.report.arrow_tables`)."""
    from readbench.replay.report import arrow_tables

    results, failures = replay_group(files, options)
    for r in results:
        r.tables = arrow_tables(r.tables)
    return results, failures
