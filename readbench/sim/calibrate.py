"""Calibration of the sim profiles: what reading behaviour each profile produces on the corpus.

shared/specs/sim-agent.md ("Calibration table in the docs: per profile, the share of blind
reads, reads per file and re-read ratio it produces on the starter corpus"). The run is the
ordinary benchmark task (``read_strategies``) under one read variant (``stock`` by default),
once per profile, through inspect's Python API; the table is computed from the per-sample
metrics the readbench scorer records (readbench.metrics.reads: ``read_calls``, ``blind_reads``,
``reads_per_file``, ``reread_ratio``, ``success``).
"""

from __future__ import annotations

from collections.abc import Iterable, Mapping
from dataclasses import dataclass
from pathlib import Path
from typing import Any

__all__ = ["CalibrationRow", "ShapeRow", "calibrate_against", "calibration_row", "compare_shapes",
           "run_calibration", "sample_metrics"]

#: Relative difference (|sim - recorded| / recorded) the calibration aims for (issue 16).
TOLERANCE = 0.10
_DRIVERS = {
    "blind_read_share": ("p_grep_first", "explore_tools"),
    "reads_per_file": ("p_follow_paging", "p_restart_reread", "range_chunk_lines", "window_lines"),
    "reread_ratio": ("p_restart_reread", "p_verify_reread"),
    "lines_per_read": ("window_lines", "range_chunk_lines"),
    "calls_per_prompt": ("calls_per_prompt",),
    "read_result_share": ("window_lines", "explore_tools", "think_tokens"),
}


@dataclass(frozen=True)
class CalibrationRow:
    """One profile's behaviour over a set of samples.

    Attributes:
        profile: model name (``sim-pager`` ...).
        samples: samples with metrics.
        blind_read_share: blind reads / all read calls, pooled over samples (fraction; 0 if no reads).
        reads_per_file: mean over samples of read calls per distinct file read.
        reread_ratio: mean over samples of the share of delivered lines delivered before (fraction).
        success_rate: mean of the per-sample success (fraction).
    """

    profile: str
    samples: int
    blind_read_share: float
    reads_per_file: float
    reread_ratio: float
    success_rate: float


def calibration_row(profile: str, metrics: Iterable[Mapping[str, Any]]) -> CalibrationRow:
    """Aggregate per-sample metric dicts (the scorer's ``Score.metadata``) into one row.

    Raises:
        ValueError: no samples, or a sample lacks one of ``read_calls``, ``blind_reads``,
            ``reads_per_file``, ``reread_ratio``, ``success`` (the message names it).
    """
    rows = list(metrics)
    if not rows:
        raise ValueError(f"no samples with metrics for profile {profile!r}")
    for key in ("read_calls", "blind_reads", "reads_per_file", "reread_ratio", "success"):
        missing = [i for i, r in enumerate(rows) if key not in r]
        if missing:
            raise ValueError(f"sample {missing[0]} of {profile!r} has no metric {key!r}")
    reads = sum(float(r["read_calls"]) for r in rows)
    n = len(rows)
    return CalibrationRow(
        profile=profile,
        samples=n,
        blind_read_share=sum(float(r["blind_reads"]) for r in rows) / reads if reads else 0.0,
        reads_per_file=sum(float(r["reads_per_file"]) for r in rows) / n,
        reread_ratio=sum(float(r["reread_ratio"]) for r in rows) / n,
        success_rate=sum(float(r["success"]) for r in rows) / n,
    )


def sample_metrics(log: Any) -> list[dict[str, Any]]:
    """The readbench scorer's per-sample metrics from an inspect ``EvalLog`` (samples with a score)."""
    out = []
    for sample in log.samples or []:
        for score in (sample.scores or {}).values():
            if score.metadata and "success" in score.metadata:
                out.append(dict(score.metadata))
                break
    return out


def run_calibration(profiles: list[str], *, variant: str = "stock", limit: int | None = None,
                    per_family: int | None = None, sandbox_kind: str = "auto",
                    log_dir: str | Path = "results/calibration", epochs: int = 1,
                    families: list[str] | None = None) -> list[CalibrationRow]:
    """Run the ``read_strategies`` task once per profile and tabulate the behaviour.

    Args:
        profiles: sim model names (``sim-pager`` ...), each run as ``readbench/<name>``.
        variant: read preset of the runs.
        limit: first N corpus tasks (None = all); per_family: first N of each family.
        sandbox_kind: ``auto`` | ``docker`` | ``local``.
        log_dir: where inspect writes the logs.
        epochs: epochs per sample.

    Raises:
        RuntimeError: an eval run did not finish (its status and error are named).
    """
    from inspect_ai import eval as inspect_eval

    from readbench.task import read_strategies_task

    rows = []
    for profile in profiles:
        task = read_strategies_task(variant=variant, dcp="off", sandbox_kind=sandbox_kind, limit=limit,
                                    per_family=per_family, families=families)
        [log] = inspect_eval(task, model=f"readbench/{profile}", log_dir=str(log_dir), epochs=epochs,
                             display="none", max_tool_output=0)
        if log.status != "success":
            raise RuntimeError(f"calibration run of {profile} ended with status {log.status}: {log.error}")
        rows.append(calibration_row(profile, sample_metrics(log)))
    return rows


@dataclass(frozen=True)
class ShapeRow:
    """One metric side by side: recorded sessions vs the profile's runs on the corpus.

    Attributes:
        metric: one of readbench.sim.shape.METRICS.
        recorded, simulated: the metric's values.
        relative_difference: (simulated - recorded) / recorded (inf when recorded is 0 and simulated not).
        within: |relative_difference| <= 10 %.
        why: for a miss, what the data say about it (knobs that drive the metric and kept their
            default, the contrast between the files read); empty when within.
    """

    metric: str
    recorded: float
    simulated: float
    relative_difference: float
    within: bool
    why: str


def compare_shapes(recorded: Any, simulated: Any, profile: str) -> list[ShapeRow]:
    """Rows for the six metrics of two readbench.sim.shape.Shape values (see :class:`ShapeRow`)."""
    from readbench.sim.profiles import profile_fit
    from readbench.sim.shape import METRICS

    fit = profile_fit(profile) or {}
    rows = []
    for metric in METRICS:
        r, s = float(getattr(recorded, metric)), float(getattr(simulated, metric))
        rel = (s - r) / r if r else (0.0 if s == 0 else float("inf"))
        within = abs(rel) <= TOLERANCE
        why = []
        if not within:
            kept = [k for k in _DRIVERS[metric] if k in fit and not fit[k].get("identified")]
            if kept:
                why.append("driving knob(s) kept their default: " + ", ".join(kept))
            if not fit:
                why.append(f"{profile} is a hand-set profile, not fitted to these sessions")
            a, b = recorded.median_file_lines, simulated.median_file_lines
            if a and b and max(a, b) / min(a, b) > 2:
                why.append(f"the files differ: median {a:.0f} lines recorded vs {b:.0f} in the corpus run")
            if metric == "calls_per_prompt" and s > r:
                why.append("the sim's own work on a corpus prompt takes more calls than the recorded prompts")
            if not why:
                why.append("the corpus's tasks ask for other work than the recorded prompts did")
        rows.append(ShapeRow(metric, r, s, rel, within, "; ".join(why)))
    return rows


def calibrate_against(profile: str, session_paths: list[str], *, variant: str | None = None,
                      families: list[str] | None = None, limit: int | None = None, per_family: int | None = None,
                      sandbox_kind: str = "auto", log_dir: str | Path = "results/calibration",
                      max_turns: int = 600) -> tuple[str, Any, Any, list[ShapeRow]]:
    """Run ``profile`` on the corpus under the recorded harness's read preset and compare shapes.

    Args:
        profile: a sim profile (built-in or fitted).
        session_paths: recorded sessions (files or directories, any format).
        variant: read preset; default from the sessions' harness (its record's ``read_preset``,
            :mod:`readbench.harness`; Codex reads through its shell and inspect logs through whatever
            their task offered: name one then).
        families, limit, per_family: the corpus tasks to run (default: the long sessions).
        max_turns: model calls per sample (long sessions need hundreds).

    Returns:
        (variant, recorded Shape, simulated Shape, rows).

    Raises:
        ValueError: no recorded session with calls; sessions of several harnesses, or of one
            without a preset, and no ``variant``.
        RuntimeError: the run did not finish.
    """
    from inspect_ai import eval as inspect_eval

    from readbench.harness import HARNESSES, read_preset
    from readbench.sessions import load_sessions
    from readbench.sim.shape import shape_of
    from readbench.task import read_strategies_task

    recorded_sessions = [s for s in load_sessions(session_paths) if not hasattr(s, "reason") and s.calls]
    if not recorded_sessions:
        raise ValueError("no recorded session with model calls under the given paths")
    harnesses = sorted({s.harness for s in recorded_sessions})
    if variant is None:
        presets = {read_preset(h) for h in harnesses}
        if len(presets) != 1 or None in presets:
            raise ValueError(f"sessions of harness(es) {harnesses}: no single read preset reproduces them; "
                             "pass --variant (" + ", ".join(f"{h.name} -> {h.read_preset}" for h in HARNESSES
                                                            if h.read_preset) + ")")
        variant = presets.pop()
    recorded = shape_of(recorded_sessions)
    task = read_strategies_task(variant=variant, dcp="off", sandbox_kind=sandbox_kind,
                                families=families if families is not None else ["longsession"], limit=limit,
                                per_family=per_family, max_turns=max_turns)
    [log] = inspect_eval(task, model=f"readbench/{profile}", log_dir=str(log_dir), display="none", max_tool_output=0)
    if log.status != "success":
        raise RuntimeError(f"calibration run of {profile} ended with status {log.status}: {log.error}")
    simulated = shape_of(s for s in load_sessions([log.location]) if not hasattr(s, "reason"))
    return variant, recorded, simulated, compare_shapes(recorded, simulated, profile)
