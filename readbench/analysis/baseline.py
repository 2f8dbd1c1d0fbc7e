"""Committed baselines: a run's table, ``run.json`` and report under ``analysis/baselines/<matrix>/``,
and the comparison of a new run with one (`readbench compare`, `readbench baseline`; issue 17).

A baseline directory holds (no logs: the report and the table are rebuilt from logs, and logs
are megabytes)::

    table.parquet    the tidy table of the accepted run (one row per arm x sample x epoch)
    run.json         the run's resolved matrix (readbench.run.runner.RunPlan.metadata)
    baseline.json    provenance: source run, git commit, time, the run's wall time, the commands
    report/          report.md, its figures and partition.json (report.html is left out: it
                     embeds the figures again)

and `write_baseline` also writes the decision section of the report to
``analysis/decisions/<matrix>.md`` with the command that rebuilds it.

`load_run` reads a run directory the way `readbench compare` needs it: every log's status is
read first (`completeness.scan_logs`) and the table is rebuilt when it is missing or older than
a log, so a partial arm or an unreadable log always makes the comparison incomplete.
"""

from __future__ import annotations

import json
import os
import re
import shutil
import subprocess
import time
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import pandas as pd

from .regression import BaselineComparison, Tolerance, compare_to_baseline
from .report_cli import DEFAULT_BASELINE
from .smallest import run_smallest

__all__ = ["BASELINE_FILES", "IncompleteRun", "RunInputs", "compare_run", "decision_text", "latest_run",
           "load_baseline", "load_run", "write_baseline", "write_comparison"]

BASELINE_FILES = ("table.parquet", "run.json", "baseline.json", "report/report.md")
"""Files every baseline directory has (figures and partition.json come with the report)."""

REFRESH = "make nightly && make baseline"
"""The commands that rebuild the nightly baseline (Makefile)."""


class IncompleteRun(ValueError):
    """A run that did not finish cannot become a baseline."""


@dataclass(frozen=True)
class RunInputs:
    """A run directory read for a comparison."""

    table: pd.DataFrame
    """The tidy table (``arm_status`` marks partial arms)."""
    meta: dict[str, Any]
    """``run.json`` ({} when missing)."""
    incomplete: tuple[str, ...]
    """Why the run is not complete: partial arms, unreadable logs, no run.json."""

    @property
    def expected_arms(self) -> list[str]:
        """``"{arm} @ {model}"`` for every arm x model of ``run.json``."""
        return [f"{arm} @ {model}" for model in self.meta.get("models", []) for arm in self.meta.get("arms", [])]


def _stale(table: Path, logs: Path) -> bool:
    if not table.is_file():
        return True
    newest = max((p.stat().st_mtime for p in logs.rglob("*.eval")), default=0.0)
    return newest > table.stat().st_mtime


def load_run(run_dir: Path) -> RunInputs:
    """The table, ``run.json`` and the incompleteness of `run_dir` (``results/<run-id>/``).

    With ``logs/``, every log's status is read (`completeness.scan_logs`) and ``table.parquet``
    plus ``report/`` are rebuilt (`report_cli.build_report`) when the table is missing, older
    than a log or not a readable parquet file. Without ``logs/`` (a copied run), ``table.parquet`` and its ``arm_status`` are used.

    Raises:
        FileNotFoundError: `run_dir` has neither ``logs/`` nor ``table.parquet``.
        ValueError: as `report_cli.build_report` (logs without readbench samples, ...).
    """
    from .completeness import scan_logs
    from .report_cli import build_report
    from .table import read_table

    run_dir = Path(run_dir)
    logs, table_path = run_dir / "logs", run_dir / "table.parquet"
    incomplete: list[str] = []
    if logs.is_dir():
        scan = scan_logs(logs)
        incomplete += [f"unreadable log {u.path} ({u.reason}): its arm is missing" for u in scan.unreadable]
        if not scan.arms:
            incomplete.append(f"{logs} holds no readbench log: the run did not start")
            return RunInputs(pd.DataFrame(), _meta(run_dir), tuple(incomplete) + _no_meta(run_dir))
        if _stale(table_path, logs) or not _readable(table_path):  # a truncated table is rebuilt from the logs
            build_report(run_dir)
    elif not table_path.is_file():
        raise FileNotFoundError(f"{str(run_dir)!r} has neither logs/ nor table.parquet: not a run directory")
    return RunInputs(read_table(table_path), _meta(run_dir), tuple(incomplete) + _no_meta(run_dir))


def _readable(table: Path) -> bool:
    import pyarrow.parquet as pq

    try:
        pq.read_metadata(table)
    except (OSError, ValueError):  # pyarrow's ArrowInvalid is a ValueError
        return False
    return True


def _meta(run_dir: Path) -> dict[str, Any]:
    """``run.json`` of a run or baseline directory ({} when missing).

    Raises:
        ValueError: the file is not UTF-8 JSON holding an object (the message names the file).
    """
    path = run_dir / "run.json"
    if not path.is_file():
        return {}
    try:
        meta = json.loads(path.read_text(encoding="utf-8"))
    except (UnicodeDecodeError, json.JSONDecodeError) as ex:
        raise ValueError(f"{path}: not a readable run.json ({ex})") from None
    if not isinstance(meta, dict):
        raise ValueError(f"{path}: not a readable run.json (a JSON object is expected, got {type(meta).__name__})")
    return meta


def _no_meta(run_dir: Path) -> tuple[str, ...]:
    if (run_dir / "run.json").is_file():
        return ()
    return (f"{run_dir / 'run.json'} is missing: readbench eval did not finish recording the run",)


def load_baseline(baseline_dir: Path) -> tuple[pd.DataFrame, dict[str, Any]]:
    """The baseline's table and ``run.json``.

    Raises:
        FileNotFoundError: no ``table.parquet`` in `baseline_dir` (the message says how to build one).
    """
    from .table import read_table

    path = Path(baseline_dir) / "table.parquet"
    if not path.is_file():
        raise FileNotFoundError(f"no baseline at {baseline_dir}: build one from an accepted run with "
                                f"`make baseline` (readbench baseline RUN_DIR --out {baseline_dir})")
    return read_table(path), _meta(Path(baseline_dir))


def _spec_map(meta: dict[str, Any]) -> dict[str, str]:
    from .arms import spec_name

    out = {}
    for key in ("variants", "dcp"):
        for spec in meta.get(key) or []:
            out[f"{key[:-1] if key == 'variants' else key} {spec_name(spec)}"] = json.dumps(spec, sort_keys=True)
    return out


def _meta_notes(run: dict[str, Any], base: dict[str, Any]) -> list[str]:
    notes = []
    if run.get("matrix") and base.get("matrix") and run["matrix"] != base["matrix"]:
        notes.append(f"this run is of matrix {run['matrix']!r}, the baseline of {base['matrix']!r}: compare a run of "
                     f"the baseline's matrix (make nightly) or a baseline of this one "
                     f"(make baseline BASELINE=analysis/baselines/{run['matrix']})")
    for key in ("sandbox", "task_args"):
        if key in run and key in base and run[key] != base[key]:
            notes.append(f"{key}: baseline {json.dumps(base[key], sort_keys=True)}, this run "
                         f"{json.dumps(run[key], sort_keys=True)}: tool outputs may differ for that reason alone")
    now, then = _spec_map(run), _spec_map(base)
    for name in sorted(set(now) & set(then)):
        if now[name] != then[name]:
            notes.append(f"{name} is defined differently: baseline {then[name]}, this run {now[name]} "
                         "(compared under the same name)")
    return notes


def compare_run(run_dir: Path, baseline_dir: Path, tolerance: Tolerance | None = None,
                smallest: tuple[float | None, float | None] = (None, None)) -> BaselineComparison:
    """`regression.compare_to_baseline` of a run directory against a baseline directory, with the
    run's incompleteness (`load_run`) and the differences of the two ``run.json`` files added.
    `smallest` = (success_pp, cost_ratio) overrides the run's ``smallest_difference`` (`run_smallest`).

    Raises:
        FileNotFoundError: as `load_run` and `load_baseline`.
        ValueError: as `load_run`, `run_smallest` and `regression.compare_to_baseline`.
    """
    base_table, base_meta = load_baseline(baseline_dir)
    run = load_run(run_dir)
    small = run_smallest(run.meta, *smallest)
    if run.table.empty:  # no sample at all is never "no regression"
        reasons = run.incomplete or (f"{Path(run_dir) / 'table.parquet'} has no rows: no sample of the run finished",)
        return BaselineComparison((), (), reasons, tolerance or Tolerance(), small)
    result = compare_to_baseline(run.table, base_table, tolerance=tolerance, expected_arms=run.expected_arms,
                                 smallest=small)
    return BaselineComparison(result.checks, tuple(_meta_notes(run.meta, base_meta)) + result.notes,
                              run.incomplete + result.incomplete, result.tolerance, small)


def write_comparison(result: BaselineComparison, out_dir: Path, baseline: str) -> Path:
    """Write ``compare.md`` (every check, the notes, the verdict) and ``compare.json`` into `out_dir`."""
    from . import _format as F

    out = Path(out_dir)
    out.mkdir(parents=True, exist_ok=True)
    lines = [f"# Comparison with the baseline {baseline}", "", f"Verdict (exit {result.exit_code}): "
             f"{result.summary(baseline)}.", ""]
    for title, items in (("Incomplete (no verdict)", result.incomplete), ("Regressions", [c.line() for c in result.regressions]),
                         ("Underpowered (cannot detect the smallest difference that matters)",
                          [c.underpowered_line() for c in result.underpowered]),
                         ("What differs from the baseline", result.notes)):
        if items:
            lines += [f"## {title}", ""] + [f"- {item}" for item in items] + [""]
    lines += ["## Every check", "", "| arm | metric | baseline | now | estimate [95% CI] | tolerance | p | Holm p | "
              "detectable worsening (80% power, Holm level) |", "|---|---|---|---|---|---|---|---|---|"]
    for c in result.checks:
        value, est, tol = c._fmt()
        lines.append(f"| {c.arm} | {c.metric} | {value(c.baseline_value)} | {value(c.current_value)} | "
                     f"{est(c.estimate)} {F.interval(est, c.ci.low, c.ci.high)} | {tol(c.bound)} | "
                     f"{F.p_value(c.p_value)} | {F.p_value(c.p_holm)}{' **regression**' if c.regression else ''} | "
                     f"{c.detects().removeprefix('detects ')}{' **underpowered**' if c.underpowered else ''} |")
    (out / "compare.md").write_text("\n".join(lines) + "\n")
    record = {"exit_code": result.exit_code, "baseline": baseline, "summary": result.summary(baseline),
              "incomplete": list(result.incomplete), "notes": list(result.notes),
              "tolerance": {"success": result.tolerance.success, "relative": result.tolerance.relative},
              "smallest_difference": result.smallest.to_dict(),
              "checks": [{**{k: getattr(c, k) for k in ("arm", "metric", "scale", "baseline_value", "current_value",
                                                       "estimate", "bound", "p_value", "p_holm", "n_pairs",
                                                       "n_clusters", "regression", "detectable", "smallest",
                                                       "underpowered")},
                          "ci": [c.ci.low, c.ci.high]} for c in result.checks]}
    (out / "compare.json").write_text(json.dumps(record, indent=2, default=float) + "\n")
    return out / "compare.md"


def latest_run(results: Path, matrix: str) -> Path:
    """The newest run directory under `results` whose ``run.json`` names `matrix` and whose logs
    all finished (the latest accepted run).

    Raises:
        FileNotFoundError: no such run.
    """
    from .completeness import scan_logs

    runs = sorted((p for p in Path(results).glob("*/run.json") if not p.parent.is_symlink()),
                  key=lambda p: p.stat().st_mtime, reverse=True)
    for meta in runs:
        if _meta(meta.parent).get("matrix") != matrix or not (meta.parent / "logs").is_dir():
            continue
        scan = scan_logs(meta.parent / "logs")
        if scan.arms and scan.complete:
            return meta.parent
    raise FileNotFoundError(f"no complete run of matrix {matrix!r} under {results}/ (run `make nightly` first)")


def _git_commit() -> str:
    try:
        out = subprocess.run(["git", "rev-parse", "HEAD"], capture_output=True, text=True, timeout=10)
        dirty = subprocess.run(["git", "status", "--porcelain", "--untracked-files=no"], capture_output=True,
                               text=True, timeout=10)
    except (OSError, subprocess.SubprocessError):
        return ""
    return out.stdout.strip() + ("-dirty" if dirty.stdout.strip() else "") if out.returncode == 0 else ""


def _log_facts(logs: list[str]) -> tuple[float | None, str]:
    """The run's wall time, from the first log's start to the last log's completion (inspect's
    header stats, seconds), and the git revision(s) inspect recorded in the logs (``b121f3d-dirty``)."""
    from datetime import datetime

    from inspect_ai.log import read_eval_log

    starts, ends, revisions = [], [], set()
    for log in logs:
        header = read_eval_log(log, header_only=True)
        if header.stats.started_at and header.stats.completed_at:
            starts.append(datetime.fromisoformat(header.stats.started_at))
            ends.append(datetime.fromisoformat(header.stats.completed_at))
        rev = header.eval.revision
        if rev is not None and rev.commit:
            revisions.add(rev.commit + ("-dirty" if rev.dirty else ""))
    wall = round((max(ends) - min(starts)).total_seconds(), 1) if starts else None
    return wall, ", ".join(sorted(revisions))


def decision_text(report_md: str) -> str:
    """The report's "Decision" section (from ``## Decision`` to the next ``## ``), or ""."""
    match = re.search(r"^## Decision\n(.*?)(?=^## |\Z)", report_md, flags=re.S | re.M)
    return match.group(0).rstrip() + "\n" if match else ""


def _check_replaceable(run_dir: Path, out: Path) -> None:
    """Refuse an `out` that `write_baseline` must not delete: the run itself or a directory holding
    it (``--out results``), or an existing directory that is not a baseline (no ``baseline.json``).

    Raises:
        ValueError: the message names `out` and why; nothing is written.
    """
    run, target = run_dir.resolve(), out.resolve()
    if target == run or target in run.parents:
        where = "is the run directory" if target == run else f"holds the run directory {run_dir}"
        raise ValueError(f"--out {out} {where}: writing the baseline there would delete the run's logs; "
                         "nothing written (give the baseline its own directory, e.g. analysis/baselines/<matrix>)")
    if target.is_dir() and any(target.iterdir()) and not (target / "baseline.json").is_file():
        raise ValueError(f"--out {out} exists and is not a baseline directory (no baseline.json): it would be "
                         "replaced; nothing written (give a new or empty directory, or an existing baseline)")


def write_baseline(run_dir: Path, out_dir: Path, decisions_dir: Path | None = None) -> Path:
    """Make the complete run `run_dir` the baseline in `out_dir` (replacing what is there).

    Writes `BASELINE_FILES` plus the report's figures and partition.json and, with
    `decisions_dir`, ``<decisions_dir>/<matrix>.md`` (the report's decision section, with the
    commands that rebuild it). Returns `out_dir`.

    Raises:
        IncompleteRun: a partial arm, an unreadable log, no logs or no run.json (the message is
            the reason); nothing is written.
        FileNotFoundError: `run_dir` is not a run directory.
        ValueError: `out_dir` holds the baseline of another matrix (e.g. a smoke run given for
            the nightly baseline), is or holds `run_dir`, or is a directory other than a baseline
            (`_check_replaceable`); nothing is written.
    """
    from .completeness import incomplete_line, scan_logs
    from .report_cli import build_report

    run_dir, out = Path(run_dir), Path(out_dir)
    if not (run_dir / "logs").is_dir():
        raise FileNotFoundError(f"{run_dir}/logs is missing: a baseline is made from a run directory with its logs")
    scan = scan_logs(run_dir / "logs")
    line = incomplete_line(scan, "finish it (re-run the same readbench eval command) before making it the baseline")
    if line or not scan.arms:
        raise IncompleteRun(line or f"{run_dir}/logs holds no readbench log")
    if not (run_dir / "run.json").is_file():
        raise IncompleteRun(f"{run_dir}/run.json is missing: readbench eval did not finish recording the run")
    meta = _meta(run_dir)
    _check_replaceable(run_dir, out)
    old = _meta(out).get("matrix")
    if old is not None and old != meta.get("matrix"):
        raise ValueError(f"{out} is the baseline of matrix {old!r}, {run_dir} a run of {meta.get('matrix')!r}: "
                         "give the baseline of another matrix its own directory (--out)")
    staging = out.with_name(out.name + ".new")
    try:
        shutil.rmtree(staging, ignore_errors=True)
        (staging / "report").mkdir(parents=True)
    except OSError as ex:  # before the report is rebuilt: a typo in --out costs nothing
        raise ValueError(f"cannot write the baseline to {out}: {ex.strerror or ex}; nothing written") from None
    try:
        build_report(run_dir)  # the table and report of exactly these logs, with this code
    except BaseException:
        shutil.rmtree(staging, ignore_errors=True)
        raise
    shutil.copy2(run_dir / "table.parquet", staging / "table.parquet")
    shutil.copy2(run_dir / "run.json", staging / "run.json")
    for path in sorted((run_dir / "report").iterdir()):
        if path.suffix in (".md", ".png", ".json"):
            shutil.copy2(path, staging / "report" / path.name)
    matrix = str(meta.get("matrix", out.name))
    wall, revision = _log_facts(scan.logs)
    provenance = {
        "matrix": matrix, "source_run": str(run_dir), "run_git_commit": revision, "git_commit": _git_commit(),
        "created": time.strftime("%Y-%m-%dT%H:%M:%SZ", time.gmtime()), "arms": len(scan.arms),
        "samples": int(sum(a.finished for a in scan.arms)), "run_wall_seconds": wall,
        "rebuild": REFRESH if (matrix, out.as_posix()) == ("nightly", DEFAULT_BASELINE) else
                   f"make nightly NIGHTLY=evals/{matrix}.yaml BASELINE={out} && make baseline BASELINE={out}",
    }
    (staging / "baseline.json").write_text(json.dumps(provenance, indent=2) + "\n")
    shutil.rmtree(out, ignore_errors=True)
    staging.rename(out)
    if decisions_dir is not None:
        try:
            _write_decision(out, Path(decisions_dir), matrix, revision, provenance)
        except OSError as ex:
            raise ValueError(f"the baseline is written to {out}, but not the decision "
                             f"{Path(decisions_dir) / f'{matrix}.md'}: {ex.strerror or ex}") from None
    return out


def _write_decision(out: Path, decisions_dir: Path, matrix: str, revision: str, provenance: dict[str, Any]) -> None:
    """``<decisions_dir>/<matrix>.md``: the report's decision section and the commands that rebuild it."""
    decision = decision_text((out / "report" / "report.md").read_text())
    decisions_dir.mkdir(parents=True, exist_ok=True)
    full = os.path.relpath(out / "report" / "report.md", decisions_dir)
    (decisions_dir / f"{matrix}.md").write_text(
        f"# Decision: matrix {matrix}\n\nProduced by readbench from the accepted run now in `{out.as_posix()}` "
        f"(run at commit {revision or 'unknown'}; baseline written {provenance['created']}). Rebuild: "
        f"`{provenance['rebuild']}`. The full report with figures: [{full}]({full}).\n\n"
        + decision.replace("## Decision", "## The report's decision", 1))
