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

__all__ = ["CalibrationRow", "calibration_row", "run_calibration", "sample_metrics"]


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
                    log_dir: str | Path = "results/calibration", epochs: int = 1) -> list[CalibrationRow]:
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
                                    per_family=per_family)
        [log] = inspect_eval(task, model=f"readbench/{profile}", log_dir=str(log_dir), epochs=epochs,
                             display="none", max_tool_output=0)
        if log.status != "success":
            raise RuntimeError(f"calibration run of {profile} ended with status {log.status}: {log.error}")
        rows.append(calibration_row(profile, sample_metrics(log)))
    return rows
