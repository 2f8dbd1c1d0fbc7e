"""Progress of a long command (``readbench eval``, ``readbench replay``): counts, time left, warnings.

In a terminal: a rich progress display (one bar for the total and one per row, e.g. per arm:
done/total, elapsed, time left), with warnings printed above the bars and every bar left at its
final count when the work ends. When the stream is not a terminal (a file, a CI log): plain lines,
one at the start, one every `every` seconds while work runs, one per finished row and one at the
end, each with done/total, percent, elapsed and ETA (GitHub issues 28 item 3 and 29 item 4).

``READBENCH_PROGRESS`` overrides the choice: ``rich``, ``plain`` or ``none``;
``READBENCH_PROGRESS_SECONDS`` sets the interval of plain lines (default 30).
This module imports nothing from readbench (``base`` layer); rich comes with inspect-ai.
"""

from __future__ import annotations

import os
import sys
import threading
import time
from collections.abc import Callable, Hashable, Iterable
from typing import Any, TextIO

__all__ = ["DEFAULT_SECONDS", "ProgressReporter", "clock_text", "progress_mode"]

DEFAULT_SECONDS = 30.0
"""Seconds between plain progress lines (``READBENCH_PROGRESS_SECONDS`` overrides)."""


def progress_mode(stream: TextIO) -> str:
    """``"rich"`` for a terminal, ``"plain"`` otherwise; ``READBENCH_PROGRESS`` (rich, plain, none) overrides.

    Raises
    ------
    ValueError
        ``READBENCH_PROGRESS`` set to anything else (named).
    """
    forced = os.environ.get("READBENCH_PROGRESS", "").strip().lower()
    if forced:
        if forced not in ("rich", "plain", "none"):
            raise ValueError(f"READBENCH_PROGRESS={forced!r}: use rich, plain or none")
        return forced
    tty = bool(getattr(stream, "isatty", lambda: False)())
    return "rich" if tty and os.environ.get("TERM", "") != "dumb" else "plain"


def clock_text(seconds: float) -> str:
    """``"0:07"``, ``"12:05"``, ``"1:02:03"`` (h:mm:ss), ``"?"`` for a non-finite value."""
    if seconds != seconds or seconds in (float("inf"), float("-inf")):
        return "?"
    s = int(round(max(0.0, seconds)))
    h, rest = divmod(s, 3600)
    m, s = divmod(rest, 60)
    return f"{h}:{m:02d}:{s:02d}" if h else f"{m}:{s:02d}"


class ProgressReporter:
    """Done/total of one command, overall and per row (thread-safe; a context manager).

    Parameters
    ----------
    what : str
        The command, first word of every plain line (``"readbench eval"``).
    unit : str
        What is counted (``"samples"``, ``"files"``).
    rows : iterable of (name, total)
        The rows (e.g. arms) and their totals; the overall total is their sum. One row named
        `what` when there is only a total (`ProgressReporter.single`).
    stream : text stream, default sys.stderr
    mode : {"rich", "plain", "none"}, optional
        Default `progress_mode(stream)`.
    every : float, optional
        Seconds between plain lines; default ``READBENCH_PROGRESS_SECONDS`` or 30.
    clock : callable, default time.monotonic
        Seconds (tests pass a fake clock).

    Items are counted once per key (`finish`): a sample retried after an error is one item.
    """

    def __init__(self, what: str, unit: str, rows: Iterable[tuple[str, int]], *, stream: TextIO | None = None,
                 mode: str | None = None, every: float | None = None,
                 clock: Callable[[], float] = time.monotonic) -> None:
        self.what, self.unit = what, unit
        self.stream = stream if stream is not None else sys.stderr
        self.mode = mode or progress_mode(self.stream)
        self.every = float(every if every is not None else os.environ.get("READBENCH_PROGRESS_SECONDS",
                                                                          DEFAULT_SECONDS))
        if not self.every > 0:
            raise ValueError(f"progress interval must be > 0 seconds, got {self.every!r}")
        self.clock = clock
        self.totals: dict[str, int] = {}
        for name, total in rows:
            self.totals[name] = self.totals.get(name, 0) + int(total)
        self.done: dict[str, set[Hashable]] = {name: set() for name in self.totals}
        self._lock = threading.RLock()
        self._start = clock()
        self._initial = 0
        self._started = False
        self._rich: Any = None
        self._rich_ids: dict[str | None, Any] = {}  # None: the overall row
        self._stop = threading.Event()
        self._thread: threading.Thread | None = None

    @classmethod
    def single(cls, what: str, unit: str, total: int, **kwargs: Any) -> ProgressReporter:
        """A reporter with one total and no rows."""
        return cls(what, unit, [(what, total)], **kwargs)

    # counts -------------------------------------------------------------------------------
    @property
    def total(self) -> int:
        """Items in all rows."""
        return sum(self.totals.values())

    def count(self, row: str | None = None) -> int:
        """Items finished in `row` (every row when None)."""
        with self._lock:
            if row is None:
                return sum(len(v) for v in self.done.values())
            return len(self.done.get(row, ()))

    def finish(self, row: str, key: Hashable) -> None:
        """Count item `key` of `row` as finished (again: no change). An unknown row is added."""
        with self._lock:
            if row not in self.totals:
                self.totals[row] = 0
                self.done[row] = set()
                if self._rich is not None:
                    self._rich_ids[row] = self._rich.add_task(row, total=None)
            keys = self.done[row]
            if key in keys:
                return
            keys.add(key)
            self.totals[row] = max(self.totals[row], len(keys))
            n = len(keys)
            if self._rich is not None:
                self._rich.update(self._rich_ids[row], completed=n, total=self.totals[row])
                self._rich.update(self._rich_ids[None], completed=self.count(), total=self.total)
            elif self.mode == "plain" and self._started and n == self.totals[row] and len(self.totals) > 1:
                self._print(f"{self.what}: {row} done ({n}/{self.totals[row]} {self.unit}); {self.line()}")

    def advance(self, row: str | None = None) -> None:
        """Count one more item of `row` (default: the single row) under a fresh key."""
        name = row if row is not None else next(iter(self.totals))
        with self._lock:
            self.finish(name, ("item", len(self.done.get(name, ()))))

    # text ---------------------------------------------------------------------------------
    def line(self) -> str:
        """``"7/16 samples (44%), elapsed 1:02, ETA 1:19; running: B × off 3/7, C × off 0/7"``."""
        with self._lock:
            done, total = self.count(), self.total
            elapsed = self.clock() - self._start
            fresh = done - self._initial  # items done before this command started (a resumed run) take no time here
            eta = elapsed / fresh * (total - done) if fresh > 0 else float("nan")
            pct = f"{100 * done / total:.0f}%" if total else "—"
            text = (f"{done}/{total} {self.unit} ({pct}), elapsed {clock_text(elapsed)}, "
                    f"ETA {clock_text(eta) if done < total else '0:00'}")
            running = [f"{r} {len(self.done[r])}/{t}" for r, t in self.totals.items() if 0 < len(self.done[r]) < t]
            if len(self.totals) > 1 and running:
                text += "; running: " + ", ".join(running)
            return text

    def warn(self, message: str) -> None:
        """Print `message` above the bars (terminal) or as its own line."""
        with self._lock:
            if self._rich is not None:
                self._rich.console.print(message, markup=False, highlight=False, soft_wrap=True)
            elif self.mode != "none":
                self._print(message)

    def _print(self, text: str) -> None:
        print(text, file=self.stream, flush=True)

    # lifecycle ----------------------------------------------------------------------------
    def __enter__(self) -> ProgressReporter:
        self._start = self.clock()
        self._initial = self.count()
        self._started = True
        if self.mode == "rich":
            from rich.console import Console
            from rich.progress import (
                BarColumn,
                MofNCompleteColumn,
                Progress,
                TextColumn,
                TimeElapsedColumn,
                TimeRemainingColumn,
            )

            console = Console(file=self.stream)
            self._rich = Progress(TextColumn("{task.description}"), BarColumn(), MofNCompleteColumn(),
                                  TextColumn(self.unit), TimeElapsedColumn(), TextColumn("left"),
                                  TimeRemainingColumn(), console=console, transient=False, refresh_per_second=4)
            self._rich_ids[None] = self._rich.add_task(f"{self.what}: all", total=self.total, completed=self.count())
            if len(self.totals) > 1:
                for row, total in self.totals.items():
                    self._rich_ids[row] = self._rich.add_task(row, total=total, completed=self.count(row))
            else:
                self._rich_ids[next(iter(self.totals))] = self._rich_ids[None]
            self._rich.start()
        elif self.mode == "plain":
            self._print(f"{self.what}: {self.line()}")
            self._thread = threading.Thread(target=self._tick, name="readbench-progress", daemon=True)
            self._thread.start()
        return self

    def _tick(self) -> None:
        while not self._stop.wait(self.every):
            self._print(f"{self.what}: {self.line()}")

    def __exit__(self, *exc: object) -> None:
        self._stop.set()
        if self._thread is not None:
            self._thread.join()
        if self._rich is not None:
            self._rich.stop()
            self._rich = None
        elif self.mode == "plain":
            done = exc[0] is None and self.count() >= self.total  # not "finished" short of the total
            self._print(f"{self.what}: {'finished' if done else 'stopped'}: {self.line()}")
