"""`readbench replay`: recorded sessions against their bill (issue 12; shared/specs/sessions.md)."""

from __future__ import annotations

import datetime as dt
import json
import sys
from pathlib import Path

import click

__all__ = ["commands", "replay_cmd"]


def _cache_option(value: str) -> str | list[str]:
    from readbench.cache.registry import CACHE_MODELS

    if value == "auto":
        return "auto"
    names = [v.strip() for v in value.split(",") if v.strip()]
    if value.strip() == "all":
        return list(CACHE_MODELS)
    bad = [n for n in names if n not in CACHE_MODELS]
    if bad or not names:
        raise click.BadParameter(f"unknown cache model(s) {', '.join(map(repr, bad)) or repr(value)}; "
                                 f"known: auto, all, {', '.join(CACHE_MODELS)}", param_hint="--cache")
    return names


@click.command("replay")
@click.argument("paths", nargs=-1, required=True, type=click.Path())
@click.option("--cache", "cache", default="auto", show_default=True,
              help="auto (each session's recorded provider and TTL tier), all, or cache models NAME,NAME.")
@click.option("--out", "out_dir", type=click.Path(file_okay=False), default=None,
              help="Output directory (default results/replay-<UTC time>): calls.parquet, sessions.parquet, report.md, cost.png.")
@click.option("--json", "as_json", is_flag=True, help="Print one JSON object per session on stdout (stable fields).")
@click.option("--save-calibration", is_flag=True,
              help="Append the token fit pooled over these sessions (per model) to the calibration file "
                   "($READBENCH_CALIBRATION or readbench/cache/calibration.csv); the simulator then uses it everywhere.")
def replay_cmd(paths: tuple[str, ...], cache: str, out_dir: str | None, as_json: bool, save_calibration: bool) -> None:
    """Import recorded sessions (files or directories, any mix of pi, Claude Code, Codex and inspect
    logs: the format is read from each file's content) and check the cache simulator against what
    the provider billed, call by call: raw, calibrated in-sample, and out-of-sample (fitted on the
    first half of each session, scored on the second). Every miss, billed or simulated, gets a
    reason. Files that are not sessions are reported and skipped; exit 2 when a named file could
    not be imported or nothing was.
    """
    from readbench.replay.bill import replay_session
    from readbench.replay.report import ReplayWriter, session_json
    from readbench.sessions import ImportFailure, load_sessions
    from readbench.sessions.reads import read_calls

    caches = _cache_option(cache)
    out = Path(out_dir) if out_dir else Path("results") / f"replay-{dt.datetime.now(dt.timezone.utc):%Y%m%d-%H%M%S}"
    named = {str(Path(p)) for p in paths if Path(p).is_file()}
    try:
        stream = load_sessions(paths)
        imported = failed_named = 0
        levels: list[tuple[str, str, list]] = []
        harnesses: set[str] = set()
        dates: list[dt.date] = []
        with ReplayWriter(out) as writer:
            for item in stream:
                if isinstance(item, ImportFailure):
                    writer.fail(item.path, item.reason)
                    click.echo(f"warning: {item.path}: {item.reason}", err=True)
                    failed_named += item.path in named
                    continue
                imported += 1
                for w in item.issues.warnings[:5]:
                    click.echo(f"warning: {w}", err=True)
                if item.issues.malformed_lines > 5:
                    click.echo(f"warning: {item.source}: {item.issues.malformed_lines} malformed lines in all", err=True)
                rep = replay_session(item, caches)
                reads = read_calls(item)
                obj = session_json(rep, len(reads), sum(r.blind for r in reads))
                writer.add(rep, obj)
                for model, rows in rep.levels.items():
                    levels.append((item.session_id, model, rows))
                harnesses.add(item.harness)
                if rep.summaries:
                    from readbench.replay.bill import session_date

                    dates.append(session_date(item))
                if as_json:
                    click.echo(json.dumps(obj, ensure_ascii=False))
                else:
                    click.echo(f"{item.source} [{item.format}]: {len(item.calls)} calls, billed ${obj.get('billed_cost_usd') or 0:.2f}, "
                               f"simulated ${obj.get('simulated_cost_usd') or 0:.2f} (raw ${obj.get('simulated_cost_usd_raw') or 0:.2f})",
                               err=True)
    except FileNotFoundError as exc:
        raise click.BadParameter(str(exc), param_hint="PATHS") from None
    click.echo(f"{imported} session(s) replayed -> {out}/report.md", err=True)
    if save_calibration and levels:
        _save_calibration(levels, harnesses, dates)
    if failed_named or imported == 0:
        click.echo("error: " + ("nothing was imported" if imported == 0 else f"{failed_named} named file(s) not imported"),
                   err=True)
        sys.exit(2)


def _save_calibration(levels: list[tuple[str, str, list]], harnesses: set[str], dates: list[dt.date]) -> None:
    from readbench.cache.calibration import CalibrationRow, append_rows
    from readbench.replay.calibrate import pooled_fits

    fits = pooled_fits(levels)
    if not fits:
        click.echo("calibration: no model had enough billed calls for a token fit; nothing saved", err=True)
        return
    today = dt.datetime.now(dt.timezone.utc).date()
    rows = [CalibrationRow(m, a, b, calls, sessions, ",".join(sorted(harnesses)), min(dates), max(dates), today,
                           "readbench replay --save-calibration")
            for m, (a, b, calls, sessions) in fits.items()]
    path = append_rows(rows)
    for r in rows:
        click.echo(f"calibration: {r.key}: billed ~ {r.a:.4f} x counted + {r.b:.1f} per block "
                   f"({r.calls} calls, {r.sessions} sessions) -> {path}", err=True)


commands = [replay_cmd]
