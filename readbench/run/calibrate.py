"""The calibration runs of the simulated agent (`readbench sim calibrate`): the benchmark task
(readbench.run.task, ``read_strategies``) run once per sim profile through inspect's Python API,
tabulated by readbench.sim.calibrate (docs/specs/sim-agent.md, "Calibration table").
"""

from __future__ import annotations

from collections.abc import Callable
from pathlib import Path
from typing import Any

from inspect_ai import eval as inspect_eval

from readbench.harness import HARNESSES, read_preset
from readbench.run.task import read_strategies_task
from readbench.sessions import ImportFailure, load_sessions
from readbench.sim.calibrate import (
    CalibrationRow,
    ShapeRow,
    calibration_row,
    compare_shapes,
    sample_metrics,
)
from readbench.sim.shape import shape_of

__all__ = ["calibrate_against", "run_calibration", "turn_limited"]


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


def turn_limited(log: Any) -> tuple[int, int]:
    """(samples the agent loop stopped at its turn limit, samples) of an inspect EvalLog: the
    loop records stop reason `turn_limit` in the sample's store (`readbench.base.store.STOP_REASON`,
    `readbench.agent.loop`)."""
    from readbench.base.store import STOP_REASON

    samples = list(getattr(log, "samples", None) or [])
    return sum(1 for s in samples if (s.store or {}).get(STOP_REASON) == "turn_limit"), len(samples)


def calibrate_against(profile: str, session_paths: list[str], *, variant: str | None = None,
                      families: list[str] | None = None, limit: int | None = None, per_family: int | None = None,
                      sandbox_kind: str = "auto", log_dir: str | Path = "results/calibration",
                      max_turns: int = 600,
                      skipped: Callable[[str, str], None] | None = None,
                      note: Callable[[str], None] | None = None) -> tuple[str, Any, Any, list[ShapeRow]]:
    """Run ``profile`` on the corpus under the recorded harness's read preset and compare shapes.

    Args:
        profile: a sim profile (built-in or fitted).
        session_paths: recorded sessions (files or directories, any format).
        variant: read preset; default from the sessions' harness (its record's ``read_preset``,
            :mod:`readbench.harness`; Codex reads through its shell and inspect logs through whatever
            their task offered: name one then).
        families, limit, per_family: the corpus tasks to run (default: the long sessions).
        max_turns: model calls per sample (long sessions need hundreds).
        skipped: called with (path, reason) for every file that is not an importable session.
        note: called with a sentence when corpus samples stopped at `max_turns` (`turn_limited`):
            their calls per prompt are lower bounds, and a metric compared on them is short of
            what the agent would have done.

    Returns:
        (variant, recorded Shape, simulated Shape, rows).

    Raises:
        ValueError: no recorded session with calls; sessions of several harnesses, or of one
            without a preset, and no ``variant``.
        RuntimeError: the run did not finish.
    """
    recorded_sessions = []
    for s in load_sessions(session_paths):
        if isinstance(s, ImportFailure):
            if skipped is not None:
                skipped(s.path, s.reason)
        elif s.calls:
            recorded_sessions.append(s)
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
        assert variant is not None  # refused above
    recorded = shape_of(recorded_sessions)
    task = read_strategies_task(variant=variant, dcp="off", sandbox_kind=sandbox_kind,
                                families=families if families is not None else ["longsession"], limit=limit,
                                per_family=per_family, max_turns=max_turns)
    [log] = inspect_eval(task, model=f"readbench/{profile}", log_dir=str(log_dir), display="none", max_tool_output=0)
    if log.status != "success":
        raise RuntimeError(f"calibration run of {profile} ended with status {log.status}: {log.error}")
    cut, total = turn_limited(log)
    if cut and note is not None:
        note(f"{cut} of {total} corpus samples stopped at --max-turns {max_turns}: their calls per prompt are "
             "lower bounds (raise --max-turns to compare them whole)")
    simulated = shape_of(s for s in load_sessions([log.location]) if not isinstance(s, ImportFailure))
    return variant, recorded, simulated, compare_shapes(recorded, simulated, profile)
