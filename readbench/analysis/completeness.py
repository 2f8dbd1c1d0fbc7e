"""Which arms of a run finished: every log's own status, read before any number is reported.

A run that did not finish must never look like a success (GitHub issue 13). inspect records
each log's `status` (``success``, ``cancelled`` after Ctrl-C, ``error`` when samples failed
after eval_set's retries, ``started`` when the process was killed) and one summary per sample
written; `scan_logs` turns that into one `ArmRecord` per arm:

- an arm is **complete** when its log's status is ``success`` and every sample x epoch it was
  asked for finished; otherwise it is **partial**: the report flags it
  (``partial: 4 of 5 samples, cancelled``) and leaves it out of the paired comparisons, and
  ``readbench eval`` exits non-zero saying that re-running resumes;
- samples a cancellation cut short (inspect records them with a ``CancelledError``) did not
  finish: they are not outcomes and leave the table (`drop_unfinished`), instead of counting
  as failures;
- a log that cannot be read (truncated, corrupt) is named with its error and skipped, and the
  others are read; so is a log set aside as ``*.eval.unreadable`` by a resumed run;
- each task's newest log is the one that counts (inspect's eval_set rule: a retry's log is
  seeded from the previous one, which holds nothing the newest lacks); a log recovered after a
  crash (``<name>-recovered.eval``, inspect_ai/log/_recover/_write.py `default_output_path`,
  written beside the unfinished ``<name>.eval`` by eval_set's resume or ``inspect log
  recover``) replaces its original whatever their times, since it holds every sample the
  original had plus those from inspect's sample buffer (GitHub issue 18, item 5);
- one arm name must mean one definition across the logs: a variant or DCP name with two
  parameter sets is refused, never merged into one row.
"""

from __future__ import annotations

import json
import re
from collections.abc import Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import pandas as pd

from ._document import Block, Bullets, Heading, Paragraph
from .arms import TASK_NAME, arm_label, spec_name

__all__ = [
    "RECOVERED_SUFFIX",
    "UNREADABLE_SUFFIX",
    "ArmRecord",
    "LogScan",
    "UnreadableLog",
    "drop_unfinished",
    "incomplete_line",
    "incomplete_section",
    "mark_partial",
    "scan_logs",
    "superseded_logs",
]

UNREADABLE_SUFFIX = ".unreadable"
"""Suffix a resumed run adds to a log it cannot read, so inspect's eval_set can run past it."""
RECOVERED_SUFFIX = "-recovered.eval"
"""inspect's name for a crashed log recovered from its sample buffer (`default_output_path`)."""

_CANCELLED = "CancelledError"
_STATUS_TEXT = {"cancelled": "cancelled", "started": "interrupted (its log was never closed)"}


@dataclass(frozen=True)
class ArmRecord:
    """The completeness of one arm (one task x model log)."""

    arm: str
    """Arm label, ``"{variant} × {dcp} @ {model}"`` (`arms.arm_label`)."""
    log: str
    """Path of the log that counts (the task's newest)."""
    status: str
    """inspect's ``EvalLog.status``: success, cancelled, error or started."""
    expected: int
    """Samples x epochs the log was asked for."""
    finished: int
    """Samples x epochs with an outcome. Cancelled samples have none; errored samples have one
    (a failure, as the partition counts them) only in a ``success`` log, i.e. one run with
    inspect tolerating errors, since readbench's own runs fail the log and retry them."""
    errored: int
    """Samples x epochs that raised an error (cancellations not included)."""
    error: str
    """First line of the first sample error, else of the log's error; "" when none."""

    @property
    def complete(self) -> bool:
        """Status ``success`` and every sample x epoch finished."""
        return self.status == "success" and self.finished >= self.expected

    def describe(self) -> str:
        """``"partial: 4 of 5 samples, cancelled"`` (or ``"complete: 5 of 5 samples"``)."""
        head = f"{self.finished} of {self.expected} samples"
        if self.complete:
            return f"complete: {head}"
        if self.status == "error":
            why = f"{self.errored} errored: {self.error}" if self.errored else f"error: {self.error}"
        else:
            why = _STATUS_TEXT.get(self.status, self.status)
        return f"partial: {head}, {why}"


@dataclass(frozen=True)
class UnreadableLog:
    """A log file that could not be read."""

    path: str
    """The file (for a set-aside log, its ``*.eval.unreadable`` name)."""
    reason: str
    """The reader's error, e.g. ``BadZipFile: File is not a zip file``."""


@dataclass(frozen=True)
class LogScan:
    """The logs of a run directory: one record per arm, and the files that could not be read."""

    arms: tuple[ArmRecord, ...]
    unreadable: tuple[UnreadableLog, ...]
    """``.eval``/``.json`` logs that could not be read now: their arms are missing."""
    set_aside: tuple[UnreadableLog, ...] = ()
    """Logs a resumed run set aside as unreadable (its arm ran again, so nothing is missing)."""
    not_started: tuple[str, ...] = ()
    """Arms of the run's ``run.json`` (arm × model) with no log at all: the run stopped before them."""

    @property
    def logs(self) -> list[str]:
        """The log files to read samples from (each task's newest, readable)."""
        return [a.log for a in self.arms]

    @property
    def partial(self) -> tuple[ArmRecord, ...]:
        """Arms that did not finish."""
        return tuple(a for a in self.arms if not a.complete)

    @property
    def complete(self) -> bool:
        """Every arm finished, every log was readable and every arm of ``run.json`` has a log."""
        return not self.partial and not self.unreadable and not self.not_started


_RETRY_ERROR = re.compile(r"^RetryError\(<Future at 0x[0-9a-f]+ state=finished raised (\w+)>\)\)?$")


def named_error(text: str) -> str:
    """An error line with inspect's retry wrapper named for what it is:
    ``RetryError(<Future ... raised APIConnectionError>)`` -> ``APIConnectionError (after inspect's retries)``."""
    m = _RETRY_ERROR.match(text.strip())
    return f"{m.group(1)} (after inspect's retries)" if m else text


def _first_line(text: str | None, width: int = 160) -> str:
    line = named_error(next((part.strip() for part in (text or "").splitlines() if part.strip()), ""))
    return line if len(line) <= width else line[: width - 1] + "…"


def _canonical(value: Any) -> str:
    if value is False or isinstance(value, str) or value is None:
        return json.dumps(spec_name(value))
    return json.dumps(value, sort_keys=True, default=str)


def _expected(header: Any) -> int:
    samples = header.eval.dataset.samples or 0
    limit = header.eval.config.limit
    if isinstance(limit, int):
        samples = min(samples, limit)
    elif isinstance(limit, (tuple, list)) and len(limit) == 2:
        samples = max(0, min(samples, limit[1]) - limit[0])
    return samples * (header.eval.config.epochs or 1)


def scan_logs(log_dir: str | Path) -> LogScan:
    """Read every log header (and sample summaries) under `log_dir`.

    Returns:
        One `ArmRecord` per task of the `read_strategies` task (its newest log), sorted by arm,
        every unreadable log with its error, and the arms the run directory's ``run.json``
        (`log_dir`/../run.json, when present) lists with no log (an interrupted run that never
        started them).

    Raises:
        FileNotFoundError: `log_dir` is not a directory.
        ValueError: one variant or DCP name has two definitions across the logs (the message
            names both logs), or one arm has two tasks.
    """
    from inspect_ai.log import list_eval_logs, read_eval_log, read_eval_log_sample_summaries

    path = Path(log_dir)
    if not path.is_dir():
        raise FileNotFoundError(f"log_dir {str(path)!r} is not a directory")
    set_aside = [UnreadableLog(str(p), "set aside by a resumed run: it could not be read, its arm ran again")
                 for p in sorted(path.rglob(f"*{UNREADABLE_SUFFIX}"))]
    unreadable: list[UnreadableLog] = []
    newest: dict[str, tuple[float, Any, Any]] = {}
    infos = list_eval_logs(str(path))
    gone = superseded_logs([i.name for i in infos])
    for info in infos:
        if info.name in gone:
            continue
        try:
            header = read_eval_log(info.name, header_only=True)
        except Exception as ex:  # noqa: BLE001 - any reader failure: name the file, read the others
            unreadable.append(UnreadableLog(_local(info.name), f"{type(ex).__name__}: {_first_line(str(ex))}"))
            continue
        if header.eval.task.split("/")[-1] != TASK_NAME:
            continue
        seen = newest.get(header.eval.task_id)
        if seen is None or (info.mtime or 0.0) > seen[0]:
            newest[header.eval.task_id] = (info.mtime or 0.0, info, header)
    arms: list[ArmRecord] = []
    definitions: dict[tuple[str, str], tuple[str, str]] = {}
    by_arm: dict[str, str] = {}
    for _, info, header in newest.values():
        args = header.eval.task_args or {}
        for key in ("variant", "dcp"):
            name, spec = str(spec_name(args.get(key))), _canonical(args.get(key))
            first = definitions.setdefault((key, name), (spec, _local(info.name)))
            if first[0] != spec:
                raise ValueError(
                    f"{key} {name!r} has two definitions: {first[0]} in {first[1]} and {spec} in "
                    f"{_local(info.name)}; report them as separate runs, or give the definitions different names")
        arm = arm_label(str(spec_name(args.get("variant"))), str(spec_name(args.get("dcp"))), header.eval.model,
                        args.get("agent"))
        if arm in by_arm:
            raise ValueError(f"arm {arm!r} has two tasks, in {by_arm[arm]} and {_local(info.name)}: keep one log per arm")
        by_arm[arm] = _local(info.name)
        try:
            summaries = read_eval_log_sample_summaries(info.name)
        except Exception as ex:  # noqa: BLE001 - as above
            unreadable.append(UnreadableLog(_local(info.name), f"{type(ex).__name__}: {_first_line(str(ex))}"))
            continue
        cancelled = [s for s in summaries if s.error and s.error.startswith(_CANCELLED)]
        errors = [s.error for s in summaries if s.error and not s.error.startswith(_CANCELLED)]
        error = _first_line(errors[0] if errors else (header.error.message if header.error else ""), 120)
        unfinished = len(cancelled) + (len(errors) if header.status != "success" else 0)
        arms.append(ArmRecord(arm=arm, log=_local(info.name), status=header.status, expected=_expected(header),
                              finished=len(summaries) - unfinished, errored=len(errors), error=error))
    return LogScan(tuple(sorted(arms, key=lambda a: a.arm)), tuple(unreadable), tuple(set_aside),
                   _not_started(path.parent / "run.json", {a.arm for a in arms}, bool(unreadable)))


def _not_started(meta_path: Path, seen: set[str], any_unreadable: bool) -> tuple[str, ...]:
    """Arms × models of ``run.json`` without a log (none when it is missing or unreadable, or
    when a log could not be read: that log's arm is unknown and is named as unreadable)."""
    if any_unreadable or not meta_path.is_file():
        return ()
    try:
        meta = json.loads(meta_path.read_text())
    except (OSError, ValueError):
        return ()
    arms = meta.get("arms") if isinstance(meta, dict) else None
    models = meta.get("models") if isinstance(meta, dict) else None
    if not (isinstance(arms, list) and isinstance(models, list)):
        return ()
    expected = [f"{arm} @ {model}" for arm in arms for model in models
                if isinstance(arm, str) and " × " in arm and isinstance(model, str)]
    return tuple(a for a in expected if a not in seen)


def superseded_logs(names: list[str]) -> set[str]:
    """The logs among `names` that a ``<name>-recovered.eval`` beside them replaces (module docstring)."""
    recovered = {n.removesuffix(RECOVERED_SUFFIX) + ".eval" for n in names if n.endswith(RECOVERED_SUFFIX)}
    return {n for n in names if n in recovered}


def _local(name: str) -> str:
    return name.removeprefix("file://")


def drop_unfinished(table: pd.DataFrame, scan: LogScan) -> pd.DataFrame:
    """`table` without the samples a cancellation cut short, with column ``arm_status``:
    "" for a complete arm, else `ArmRecord.describe` (e.g. ``partial: 4 of 5 samples, cancelled``)."""
    status = {a.arm: ("" if a.complete else a.describe()) for a in scan.arms}
    partial = table["arm"].map(lambda arm: bool(status.get(arm)))
    cut = partial & table["error"].astype(str).str.startswith(_CANCELLED)
    out = table.loc[~cut].copy()
    out["arm_status"] = out["arm"].map(lambda arm: status.get(arm, ""))
    return out.reset_index(drop=True)


def mark_partial(table: pd.DataFrame, scan: LogScan) -> pd.DataFrame:
    """`table` with every partial arm relabelled ``"{variant} × {dcp} [partial] @ {model}"``, so
    the arm tables and figures flag it wherever it is shown."""
    partial = {a.arm for a in scan.partial}
    if not partial:
        return table
    agents = table["agent"] if "agent" in table else [None] * len(table)
    labels = [arm_label(v, f"{d} [partial]", m, g) if a in partial else a
              for a, v, d, m, g in zip(table["arm"], table["variant"], table["dcp"], table["model"], agents)]
    return table.assign(arm=labels)


def incomplete_section(scan: LogScan, baseline: tuple[str, str]) -> list[Block]:
    """The report's flagged section (no blocks when every arm finished and every log was read;
    only a note when a resumed run set a log aside)."""
    aside = tuple(f"{u.path}: {u.reason}" for u in scan.set_aside)
    if scan.complete:
        return [Heading(2, "Set-aside logs"), Bullets(aside)] if aside else []
    items = [f"{a.arm}: {a.describe()}" for a in scan.partial]
    items += [f"unreadable log {u.path}: {u.reason}" for u in scan.unreadable]
    items += _not_started_items(scan)
    base = [a for a in scan.partial if a.arm.split(" @ ")[0] == f"{baseline[0]} × {baseline[1]}"]
    text = ("This run did not finish. Partial arms are listed in every table with the samples they have, and "
            "left out of the paired comparisons; an unreadable log's arm is missing. A partial arm's means and "
            "medians are over the samples it has, so they are not comparable with a complete arm's: the missing "
            "ones are often the longest (an interrupted smoke run's B × off, missing only its long session, "
            "showed a mean cost of $0.06 against stock's $0.43). Re-running the same `readbench eval` command "
            "resumes: finished samples are kept.")
    if base:
        text += " The baseline arm is partial, so its model has no paired comparison."
    return [Heading(2, "Incomplete run"), Paragraph(text), Bullets(tuple(items) + aside)]


def incomplete_line(scan: LogScan, resume: str = "re-run the same command to resume") -> str | None:
    """One line naming what is incomplete and how to resume, or None when nothing is."""
    if scan.complete:
        return None
    parts = [f"{a.arm} ({a.describe()})" for a in scan.partial]
    parts += [f"unreadable log {Path(u.path).name} ({u.reason})" for u in scan.unreadable]
    parts += _not_started_items(scan)
    return f"incomplete: {'; '.join(parts)}; {resume} (finished samples are kept)"


def _not_started_items(scan: LogScan) -> list[str]:
    n = len(scan.not_started)
    if not n:
        return []
    shown = ", ".join(scan.not_started[:4]) + (f", … ({n - 4} more)" if n > 4 else "")
    return [f"{n} arm{'s' if n > 1 else ''} not started: {shown}"]


def complete_arms(scan: LogScan) -> Sequence[str]:
    """Labels of the arms that finished."""
    return [a.arm for a in scan.arms if a.complete]
