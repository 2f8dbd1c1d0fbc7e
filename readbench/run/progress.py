"""Progress of `readbench eval`: samples done per arm, from inspect's hooks (issues 28 item 3, 29 item 4).

Every arm is one inspect task named ``read_strategies``, so inspect's own display cannot tell the
arms apart (its rows all read "read_strategies pi_agent <model>") and, when stderr is not a
terminal, it prints nothing until the end. `readbench eval` therefore runs eval_set with
``display="none"`` and shows `readbench.base.progress` instead: a bar per arm plus the total
(done/total, elapsed, time left, warnings above) in a terminal, and periodic plain lines
("readbench eval: 7/112 samples (6%), elapsed 1:02, ETA 15:31; running: B × off 3/7, ...")
otherwise. ``READBENCH_PROGRESS=inspect`` keeps inspect's display instead.

The counts come from inspect's hook events: `on_task_start` maps an eval id to its arm (the task
arguments and model in its spec), `on_sample_end` counts the (sample id, epoch) once (a sample
retried after an error is one). Samples finished by an earlier, interrupted run of the same run
id are counted before eval_set starts (`already_done`).
"""

from __future__ import annotations

import os
from collections.abc import Iterator
from contextlib import contextmanager
from pathlib import Path
from typing import Any

from inspect_ai.hooks import Hooks, SampleEnd, TaskStart, hooks
from inspect_ai.util import DisplayType

from readbench.analysis.arms import LOOP_AGENT, arm_name, spec_name
from readbench.base.progress import ProgressReporter

__all__ = ["arm_row", "eval_progress", "inspect_display"]

_ACTIVE: dict[str, Any] = {"reporter": None, "rows": {}, "multi_model": False}


def arm_row(variant: Any, dcp: Any, model: str, multi_model: bool, agent: str = LOOP_AGENT) -> str:
    """The row label of an arm: ``"B × off"`` (``"B × off × pi"`` under a real harness), with
    ``" @ model"`` when the run has several models."""
    label = arm_name(str(spec_name(variant)), str(spec_name("off" if dcp is False else dcp)), agent)
    return f"{label} @ {model}" if multi_model else label


def quiet_hook_banner() -> None:
    """Load inspect's registry hooks now, with its start-up banner (``inspect_ai vX - hooks
    enabled: N``, printed on stdout by the first model a process creates) swallowed: readbench's
    own progress hook would otherwise put it before every `readbench eval`'s output, and before
    its one-line errors (issue 27). Later loads print nothing (inspect loads them once)."""
    import contextlib
    import io

    from inspect_ai.hooks._startup import init_hooks

    with contextlib.redirect_stdout(io.StringIO()):
        init_hooks()


def inspect_display() -> DisplayType | None:
    """eval_set's ``display``: "none" (readbench shows progress), or None to keep inspect's
    (``READBENCH_PROGRESS=inspect``)."""
    return None if os.environ.get("READBENCH_PROGRESS", "").strip().lower() == "inspect" else "none"


@hooks(name="readbench_progress", description="readbench eval: samples done per arm")
class _ProgressHooks(Hooks):
    """Feeds the active `eval_progress` reporter (enabled only while one is active)."""

    def enabled(self) -> bool:
        return _ACTIVE["reporter"] is not None

    async def on_task_start(self, data: TaskStart) -> None:
        args = data.spec.task_args or {}
        _ACTIVE["rows"][data.eval_id] = arm_row(args.get("variant", "stock"), args.get("dcp", "off"),
                                                data.spec.model, _ACTIVE["multi_model"],
                                                args.get("agent", LOOP_AGENT))

    async def on_sample_end(self, data: SampleEnd) -> None:
        # a sample that ended in an error (cancelled by Ctrl-C, or failed: eval_set retries it)
        # is not done; counting it showed "4/8 samples" and "done" for arms that had no result
        reporter: ProgressReporter | None = _ACTIVE["reporter"]
        row = _ACTIVE["rows"].get(data.eval_id)
        if reporter is not None and row is not None and data.sample.error is None:
            reporter.finish(row, (str(data.sample.id), int(data.sample.epoch)))


def already_done(log_dir: Path, multi_model: bool) -> dict[str, set[tuple[str, int]]]:
    """(sample id, epoch) of every sample an earlier run under `log_dir` finished, per arm row."""
    from inspect_ai.log import list_eval_logs, read_eval_log, read_eval_log_sample_summaries

    done: dict[str, set[tuple[str, int]]] = {}
    if not log_dir.is_dir():
        return done
    for info in list_eval_logs(str(log_dir)):
        try:
            header = read_eval_log(info.name, header_only=True)
            summaries = read_eval_log_sample_summaries(info.name)
        except Exception:  # noqa: BLE001 - an unreadable log resumes from nothing; prepare_log_dir names it
            continue
        args = header.eval.task_args or {}
        row = arm_row(args.get("variant", "stock"), args.get("dcp", "off"), header.eval.model, multi_model,
                      args.get("agent", LOOP_AGENT))
        done.setdefault(row, set()).update((str(s.id), int(s.epoch)) for s in summaries if not s.error)
    return done


@contextmanager
def eval_progress(rows: list[tuple[str, int]], multi_model: bool, log_dir: Path) -> Iterator[ProgressReporter]:
    """Show `readbench eval`'s progress while the block runs eval_set.

    Parameters
    ----------
    rows : list of (arm row label, samples x epochs)
        From the run plan (`arm_row`), in matrix order.
    multi_model : bool
        Whether the labels carry ``@ model``.
    log_dir : Path
        The run's log directory: samples already finished there are counted (`already_done`).
    """
    reporter = ProgressReporter("readbench eval", "samples", rows,
                                mode="none" if inspect_display() is None else None)
    for row, keys in already_done(log_dir, multi_model).items():
        for key in keys:
            reporter.finish(row, key)
    _ACTIVE.update(reporter=reporter, rows={}, multi_model=multi_model)
    try:
        with reporter:
            try:
                yield reporter
            finally:
                # a sample that finished while inspect was cancelling (Ctrl-C) reaches the log but not
                # the hook: the last line said "stopped: 1/3" where the report said "2 of 3" (brk13)
                for row, keys in already_done(log_dir, multi_model).items():
                    for key in keys:
                        reporter.finish(row, key)
    finally:
        _ACTIVE.update(reporter=None, rows={})
