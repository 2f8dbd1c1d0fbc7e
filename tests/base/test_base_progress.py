"""readbench.base.progress: plain progress lines when the stream is not a terminal (counts, elapsed,
ETA, the running rows), and in a terminal a bar that ends at the total with warnings printed above it
(issues 28 item 3, 29 item 4)."""

from __future__ import annotations

import io
import re
import time

import pytest

from readbench.base.progress import ProgressReporter, clock_text, progress_mode


class _Clock:
    def __init__(self) -> None:
        self.t = 100.0

    def __call__(self) -> float:
        return self.t


class _Tty(io.StringIO):
    def isatty(self) -> bool:
        return True


def test_clock_text():
    assert [clock_text(x) for x in (0, 7.4, 725, 3723, float("nan"))] == ["0:00", "0:07", "12:05", "1:02:03", "?"]


def test_not_a_terminal_prints_plain_lines_with_counts_elapsed_and_eta(monkeypatch):
    monkeypatch.delenv("READBENCH_PROGRESS", raising=False)
    out, clock = io.StringIO(), _Clock()
    assert progress_mode(out) == "plain"
    with ProgressReporter("readbench eval", "samples", [("stock × off", 2), ("B × off", 2)], stream=out,
                          every=3600, clock=clock) as p:
        clock.t += 10
        p.finish("B × off", ("a/1", 1))
        p.finish("B × off", ("a/1", 1))  # the same sample again (a retry): counted once
        assert p.line() == "1/4 samples (25%), elapsed 0:10, ETA 0:30; running: B × off 1/2"
        p.finish("B × off", ("a/2", 1))
        clock.t += 10
        p.warn("warning: something")
    assert out.getvalue().splitlines() == [
        "readbench eval: 0/4 samples (0%), elapsed 0:00, ETA ?",
        "readbench eval: B × off done (2/2 samples); 2/4 samples (50%), elapsed 0:10, ETA 0:10",
        "warning: something",
        "readbench eval: stopped: 2/4 samples (50%), elapsed 0:20, ETA 0:20",  # short of the total
    ]


def test_plain_lines_come_every_interval_while_work_runs(monkeypatch):
    monkeypatch.delenv("READBENCH_PROGRESS", raising=False)
    out = io.StringIO()
    with ProgressReporter.single("readbench replay", "files", 6, stream=out, every=0.05) as p:
        p.advance()
        p.advance()
        time.sleep(0.4)
    lines = out.getvalue().splitlines()
    ticks = [line for line in lines if line.startswith("readbench replay: 2/6 files (33%), elapsed 0:00, ETA ")]
    assert len(ticks) >= 3, lines  # periodic, without any new item
    assert lines[0] == "readbench replay: 0/6 files (0%), elapsed 0:00, ETA ?"
    assert lines[-1].startswith("readbench replay: stopped: 2/6 files (33%)")


def test_a_terminal_bar_ends_at_the_total_with_warnings_above_it(monkeypatch):
    monkeypatch.delenv("READBENCH_PROGRESS", raising=False)
    monkeypatch.setenv("TERM", "xterm")
    out = _Tty()
    assert progress_mode(out) == "rich"
    with ProgressReporter.single("readbench replay", "files", 6, stream=out) as p:
        for k in range(6):
            p.advance()
            if k == 1:
                p.warn("warning: b.jsonl: not a session")
    text = re.sub(r"\x1b\[[0-9;?]*[A-Za-z]", "", out.getvalue()).replace("\r", "\n")
    lines = [line.rstrip() for line in text.splitlines() if line.strip()]
    warning = [line for line in lines if "warning: b.jsonl" in line]
    assert warning == ["warning: b.jsonl: not a session"]  # its own line, not inside the bar's line
    assert "6/6" in lines[-1] and lines[-1].startswith("readbench replay: all")  # the bar is left at the total


def test_bad_settings_are_named(monkeypatch):
    monkeypatch.setenv("READBENCH_PROGRESS", "fancy")
    with pytest.raises(ValueError, match="READBENCH_PROGRESS='fancy': use rich, plain or none"):
        progress_mode(io.StringIO())
    monkeypatch.setenv("READBENCH_PROGRESS", "none")
    out = io.StringIO()
    with ProgressReporter.single("x", "files", 1, stream=out) as p:
        p.advance()
    assert out.getvalue() == ""
    with pytest.raises(ValueError, match="progress interval must be > 0 seconds, got 0.0"):
        ProgressReporter.single("x", "files", 1, every=0)
