"""`readbench replay`: recorded sessions against their bill (issue 12; docs/specs/sessions.md)."""

from __future__ import annotations

import contextlib
import datetime as dt
import json
import signal
import sys
import tempfile
from collections.abc import Iterator
from pathlib import Path
from typing import TYPE_CHECKING, Any

import click

if TYPE_CHECKING:
    from readbench.replay.report import ReplayWriter

__all__ = ["replay_cmd"]


def _cache_option(value: str) -> str | list[str]:
    from readbench.cache.registry import CACHE_MODELS

    if value == "auto":
        return "auto"
    names = [v.strip() for v in value.split(",") if v.strip()]
    if value.strip() == "all":
        return CACHE_MODELS.names()
    bad = [n for n in names if n not in CACHE_MODELS]
    if bad or not names:
        raise click.BadParameter(f"unknown cache model(s) {', '.join(map(repr, bad)) or repr(value)}; "
                                 f"known: auto, all, {', '.join(CACHE_MODELS.names())}", param_hint="--cache")
    return names


def _presets_option(value: str | None) -> tuple[str, ...]:
    from readbench.read.registry import PRESETS

    if not value:
        return ()
    try:
        return tuple(p.name for p in PRESETS.select(value))
    except ValueError as exc:
        raise click.BadParameter(str(exc), param_hint="--presets") from None


def _dcp_option(value: str | None) -> tuple[str, ...]:
    from readbench.dcp import CONFIGS

    if not value:
        return ()
    try:
        return tuple(c.name for c in CONFIGS.select(value))
    except ValueError as exc:
        raise click.BadParameter(str(exc), param_hint="--dcp") from None


@click.command("replay")
@click.argument("paths", nargs=-1, required=True, type=click.Path())
@click.option("--cache", "cache", default="auto", show_default=True,
              help="auto (each session's recorded provider and TTL tier), all, or cache models NAME,NAME.")
@click.option("--dcp", "dcp", default=None, metavar="all|NAME,NAME",
              help="Also replay every session under these DCP configurations x the --cache models (dcp.parquet).")
@click.option("--context-window", type=click.IntRange(min=1), default=200_000, show_default=True,
              help="Context window in tokens for pi-dcp's pressure bands (--dcp).")
@click.option("--jobs", "-j", type=click.IntRange(min=1), default=1, show_default=True,
              help="Worker processes (one file at a time each).")
@click.option("--out", "out_dir", type=click.Path(file_okay=False), default=None,
              help="Output directory (default results/replay-<UTC time>): parquet tables, report.md, report.html, figures. "
                   "In a directory used before, a previous replay's tables and figures are replaced or removed; "
                   "other files are left alone.")
@click.option("--json", "as_json", is_flag=True,
              help="Print one JSON object per session on stdout (stable fields); after Ctrl-C or SIGTERM, those of "
                   "the sessions replayed before it, each with its own out-of-sample interval (not pooled: "
                   "`out_of_sample_pool`).")
@click.option("--save-calibration", is_flag=True,
              help="Append the token fit pooled over these sessions (per model) to the calibration file "
                   "($READBENCH_CALIBRATION or readbench/cache/calibration.csv); the simulator then uses it everywhere.")
@click.option("--gate-sweep", is_flag=True,
              help="Also run the cache-aware gate's benchmark (docs/specs/dcp.md §7.5): every candidate of the "
                   "sister DCP extension, the realized benefit of each break-even threshold T, and the best T per "
                   "cached-price ratio r (gate_candidates.parquet, gate_sweep.parquet, gate_sweep.png, a report section).")
@click.option("--audit", is_flag=True,
              help="Also audit every read (blind, over-cap, capped, paging, restarts, re-delivered tokens and the share "
                   "of input and cost they carried: audit.parquet, audit_reads.parquet) and replay each read preset's "
                   "first-order counterfactual under the DCP replay's cache models (read_arms.parquet, "
                   "read_arm_reads.parquet).")
@click.option("--fork-points", is_flag=True,
              help="Also record where each read preset (against each other, with --audit) and each DCP configuration "
                   "(against off, with --dcp) first changes a request (fork_points.parquet), for "
                   "`readbench plan --design forked --sessions`.")
@click.option("--presets", default=None, metavar="all|NAME,NAME",
              help="Read presets of --audit's counterfactual (default: every registered preset, `readbench variants`).")
def replay_cmd(paths: tuple[str, ...], cache: str, dcp: str | None, context_window: int, jobs: int,
               out_dir: str | None, as_json: bool, save_calibration: bool, gate_sweep: bool, audit: bool,
               presets: str | None, fork_points: bool) -> None:
    """Import recorded sessions (files or directories, any mix of pi, Claude Code, Codex and inspect
    logs: the format is read from each file's content) and check the cache simulator against what
    the provider billed, call by call: raw, calibrated in-sample, and out-of-sample (fitted on the
    first half of each session, scored on the second). Every miss, billed or simulated, gets a
    reason. With --dcp, every session is also replayed under DCP configurations x cache models;
    with --audit, its reads are audited and replayed under every read preset (first order: the
    model's reaction to a different result is not replayed). Files that are not sessions are
    reported and skipped; exit 2 when a named file could not be imported or nothing was.
    """
    from readbench.base.lock import Locked, OutputLock
    from readbench.replay.pooled import pool_out_of_sample
    from readbench.replay.report import ReplayWriter
    from readbench.replay.run import ReplayOptions, replay_paths

    caches = _cache_option(cache)
    options = ReplayOptions(cache=caches if caches == "auto" else tuple(caches), dcp=_dcp_option(dcp),
                            dcp_cache=() if caches == "auto" else tuple(caches), context_window=context_window,
                            gate_sweep=gate_sweep, audit=audit, presets=_presets_option(presets),
                            fork_points=fork_points)
    if fork_points and not (audit or options.dcp):
        raise click.BadParameter("--fork-points needs --audit (read presets) and/or --dcp (DCP configurations): "
                                 "it records where those first change a request", param_hint="--fork-points")
    out = Path(out_dir) if out_dir else Path("results") / f"replay-{dt.datetime.now(dt.timezone.utc):%Y%m%d-%H%M%S}"
    if not out.resolve().name:  # issue 27 probe: `--out /` was a traceback
        raise click.BadParameter("the filesystem root cannot be a replay's output directory; name a directory of "
                                 "its own", param_hint="--out")
    _check_out(out)
    imported = failed_named = printed = 0
    levels: list[tuple[str, str, list]] = []
    harnesses: set[str] = set()
    dates: list[dt.date] = []
    stream = None
    writer: ReplayWriter | None = None
    copies: dict[tuple[str, str], tuple[str, str]] = {}  # (harness, session id) -> (first file, its bill)
    try:
        from readbench.replay.run import session_files

        files = session_files(list(paths))
        stream = replay_paths(list(paths), options, jobs, files=files)
        lock = OutputLock(out.parent / f".{out.name}.lock", str(out), "readbench replay",
                          "wait for it to finish or use another --out", remove=True)
        writer = ReplayWriter(out, total_files=len(files))
        with lock, _sigterm_interrupts(), writer, _progress(len(files)) as bar:  # SIGTERM handled while writing
            for group, results, failures in stream:
                named = {p for p, e in group if e}
                for f in failures:
                    writer.fail(f.path, f.reason)
                    bar.warn(f"warning: {f.path}: {f.reason}")
                    failed_named += f.path in named
                for res in results:
                    if _copy_of_earlier(res.json, copies, writer, bar):
                        continue
                    imported += 1
                    for w in res.warnings:
                        bar.warn(f"warning: {w}")
                    writer.add(res)
                    levels += res.levels
                    harnesses.add(res.harness)
                    if res.date is not None:
                        dates.append(res.date)
                writer.files_done += len(group)  # after its sessions: the partial banner's count
                for file, _ in group:
                    bar.finish("readbench replay", file)
            # pooled over the sessions (readbench.replay.pooled): the JSON objects wait for it
            writer.pooled = pool_out_of_sample(writer.sessions)
            if as_json:
                for obj in writer.sessions:
                    click.echo(_json_line(obj))
                    printed += 1
    except FileNotFoundError as exc:
        raise click.BadParameter(str(exc), param_hint="PATHS") from None
    except Locked as exc:  # issue 27 probe: two replays into one --out mixed their files
        raise click.ClickException(str(exc)) from None
    except KeyboardInterrupt:  # the writer kept what was done, marked partial
        click.echo(_interrupted(out, writer), err=True)
        if as_json and writer is not None:  # brk11: stdout was empty though sessions had finished
            with contextlib.suppress(KeyboardInterrupt):
                for obj in writer.sessions[printed:]:
                    click.echo(_json_line(obj))
        if stream is not None:
            with contextlib.suppress(KeyboardInterrupt):  # another Ctrl-C: the report is already written
                stream.close()  # stops the worker pool, cancelling groups not started
        sys.exit(1)
    except click.ClickException:
        raise
    except Exception:  # brk11: the writer kept the sessions done (a `Partial:` report); the error propagates
        if writer is not None and writer.written:
            click.echo(f"error: stopped after {len(writer.sessions)} session(s) replayed -> {out}/report.md (partial)",
                       err=True)
        raise
    p = writer.pooled
    if p and p["sessions"]:
        click.echo(f"out of sample: bill inside the 90 % interval on {p['covered']}/{p['sessions']} sessions "
                   f"({p['coverage']:.1%}), median |error| {p['median_abs_error']:.1%}, total {p['total_error']:+.1%}",
                   err=True)
    click.echo(f"{imported} session(s) replayed -> {out}/report.md", err=True)
    calibration_failed = save_calibration and bool(levels) and not _save_calibration(levels, harnesses, dates)
    if failed_named or imported == 0:
        click.echo("error: " + ("nothing was imported" if imported == 0 else f"{failed_named} named file(s) not imported"),
                   err=True)
        sys.exit(2)
    if calibration_failed:
        sys.exit(1)


def _copy_of_earlier(obj: dict, copies: dict[tuple[str, str], tuple[str, str]], writer: "ReplayWriter", bar: Any) -> bool:
    """Whether the session `obj` (`SessionResult.json`) is a copy of one replayed from an earlier
    file (the same harness session id, calls and billed tokens: a backup, a synced folder): it is
    then listed with the files not imported, and not replayed twice. The same id with other calls
    (a file copied before the session went on) is replayed, with a warning that the calls both
    files hold are counted twice. A tester's folder with a pi file and its backup counted $42.60
    twice without a word (2026-12-07). Inspect logs are not checked: their session ids are sample
    ids, which every arm's log repeats."""
    if obj.get("harness") == "inspect" or not obj.get("session_id"):
        return False
    key = (str(obj.get("harness")), str(obj["session_id"]))
    bill = json.dumps([obj.get("calls"), obj.get("billed_tokens")], sort_keys=True)
    first = copies.setdefault(key, (str(obj.get("file")), bill))
    if first[0] == str(obj.get("file")):
        return False
    if first[1] == bill:
        reason = f"a copy of session {key[1]!r} in {first[0]} (the same calls and bill): replayed once"
        writer.fail(str(obj.get("file")), reason)
        bar.warn(f"warning: {obj.get('file')}: {reason}")
        return True
    bar.warn(f"warning: {obj.get('file')}: session {key[1]!r} is also in {first[0]}, with other calls: both are "
             "replayed, and the calls both files hold are counted twice")
    return False


def _check_out(out: Path) -> None:
    """A usage error naming --out when its directory's parent cannot be written (brk11: `--out
    afile/sub` was a FileExistsError traceback and `--out /proc/x` blamed PATHS): probed with a
    temporary file in the nearest existing ancestor, which is what the replay creates beside it."""
    d = out.absolute().parent
    while not d.exists() and d != d.parent:
        d = d.parent
    try:
        with tempfile.TemporaryFile(dir=d):
            pass
    except OSError as exc:
        raise click.BadParameter(f"{out}: cannot write in {d}: {exc.strerror or exc}", param_hint="--out") from None


def _json_line(obj: Any) -> str:
    """One session's `--json` line: strict JSON, NaN and infinities as null (as in the parquet
    tables; brk11: a bare `NaN` broke JSON.parse; `readbench.base.strictjson`)."""
    from readbench.base.strictjson import finite

    return json.dumps(finite(obj), ensure_ascii=False, allow_nan=False)


def _interrupted(out: Path, writer: Any) -> str:
    """The line an interrupted replay ends with: where its report is, if it got written (brk11:
    it named `report.md` after a Ctrl-C during the folder walk, before anything existed)."""
    if writer is None:
        return "interrupted before any session was replayed: nothing was written"
    n = len(writer.sessions)
    if writer.written:
        if writer.partial:
            return f"interrupted: {n} session(s) replayed before it -> {out}/report.md (partial)"
        return f"interrupted after the report was written: {n} session(s) replayed -> {out}/report.md"
    if writer.tmp.is_dir() and any(writer.tmp.iterdir()):
        return (f"interrupted: {n} session(s) replayed before it; no report was written: the tables are in "
                f"{writer.tmp} (the next replay into {out} removes it)")
    return f"interrupted: {n} session(s) replayed before it; nothing was written"


@contextlib.contextmanager
def _sigterm_interrupts() -> Iterator[None]:
    """SIGTERM (a CI timeout, `kill`) interrupts like Ctrl-C, so the finished sessions are kept."""
    def interrupt(signum: int, frame: Any) -> None:
        raise KeyboardInterrupt

    previous = signal.signal(signal.SIGTERM, interrupt)
    try:
        yield
    finally:
        signal.signal(signal.SIGTERM, previous)


def _progress(total: int):
    """Files done on stderr (`readbench.base.progress`): a bar with time left and the warnings
    above it in a terminal, periodic plain lines otherwise; the bar ends at `total`."""
    from readbench.base.progress import ProgressReporter

    return ProgressReporter.single("readbench replay", "files", total)


def _save_calibration(levels: list[tuple[str, str, list]], harnesses: set[str], dates: list[dt.date]) -> bool:
    """Append the pooled token fits to the calibration file; False (and a `calibration: cannot
    write PATH: reason` line) when it cannot be read or written (brk11: a traceback)."""
    from readbench.cache.calibration import CalibrationRow, active_path, append_rows
    from readbench.replay.calibrate import pooled_fits

    fits = pooled_fits(levels)
    if not fits:
        click.echo("calibration: no model had enough billed calls for a token fit; nothing saved", err=True)
        return True
    today = dt.datetime.now(dt.timezone.utc).date()
    rows = [CalibrationRow(m, a, b, calls, sessions, ",".join(sorted(harnesses)), min(dates), max(dates), today,
                           "readbench replay --save-calibration")
            for m, (a, b, calls, sessions) in fits.items()]
    path = active_path()
    try:
        append_rows(rows, path)
    except (OSError, ValueError) as exc:  # a directory, an unwritable place, a malformed or non-UTF-8 file
        reason = exc.strerror if isinstance(exc, OSError) and exc.strerror else str(exc)
        click.echo(f"calibration: cannot write {path}: {reason}; nothing saved", err=True)
        return False
    for r in rows:
        click.echo(f"calibration: {r.key}: billed ~ {r.a:.4f} x counted + {r.b:.1f} per block "
                   f"({r.calls} calls, {r.sessions} sessions) -> {path}", err=True)
    return True
