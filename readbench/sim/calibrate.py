"""Calibration of the sim profiles: what reading behaviour each profile produces on the corpus.

docs/specs/sim-agent.md ("Calibration table in the docs: per profile, the share of blind
reads, reads per file and re-read ratio it produces on the starter corpus"). The runs are the
ordinary benchmark task (readbench.run.calibrate: ``read_strategies`` under one read variant,
once per profile); this module turns their per-sample metrics into the table (the readbench
scorer's metrics, readbench.metrics.reads: ``read_calls``, ``blind_reads``, ``reads_per_file``,
``reread_ratio``, ``success``) and compares reading shapes with recorded sessions.
"""

from __future__ import annotations

import math
from collections.abc import Iterable, Mapping
from dataclasses import dataclass
from typing import Any

__all__ = ["CalibrationRow", "ShapeRow", "calibration_row", "compare_shapes", "sample_metrics"]

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

_NEEDS = {"reread_ratio": "read with a known delivered range", "lines_per_read": "read with a known delivered range",
          "read_result_share": "request tokens"}


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


@dataclass(frozen=True)
class ShapeRow:
    """One metric side by side: recorded sessions vs the profile's runs on the corpus.

    Attributes:
        metric: one of readbench.sim.shape.METRICS.
        recorded, simulated: the metric's values.
        relative_difference: (simulated - recorded) / recorded (inf when recorded is 0 and simulated not;
            NaN when a side does not define the metric, e.g. it has no reads).
        within: |relative_difference| <= 10 % (False when undefined).
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
        if math.isnan(r) or math.isnan(s):  # no reads on a side: nothing to compare, not a 0 (issue 16)
            sides = [name for name, v in (("the recorded sessions", r), ("the corpus run", s)) if math.isnan(v)]
            rows.append(ShapeRow(metric, r, s, float("nan"), False,
                                 f"undefined: {' and '.join(sides)} have no {_NEEDS.get(metric, 'reads')}"))
            continue
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
