"""A pytest plugin (loaded by tests/conftest.py): with ``--durations``, the terminal summary also
lists the slowest test FILES, each the sum of its tests' setup, call and teardown seconds, and
the sum over all files.

Why: ``make test`` runs ``pytest -n 2 --dist loadfile``, which runs every test of a file on one
worker, so the suite's wall time is at least the slowest file's total and about half of the sum
when the two workers are balanced; pytest's own ``--durations`` lists single phases only (a
module-scoped fixture's setup apart from its tests). Under xdist the controller gets every
worker's reports, so the figures cover the whole run.
"""

from __future__ import annotations

from collections import defaultdict

import pytest

#: how many files the summary lists
TOP_FILES = 10


def file_totals(durations: list[tuple[str, float]]) -> list[tuple[str, float]]:
    """(test file, seconds) summed per file over `durations` (nodeid, seconds of one phase), slowest
    first (ties by name)."""
    totals: defaultdict[str, float] = defaultdict(float)
    for nodeid, seconds in durations:
        totals[nodeid.split("::", 1)[0]] += seconds
    return sorted(totals.items(), key=lambda item: (-item[1], item[0]))


class FileDurations:
    """Collects every report's duration (on the xdist controller: all workers') and prints the summary."""

    def __init__(self) -> None:
        self.phases: list[tuple[str, float]] = []

    def pytest_runtest_logreport(self, report: pytest.TestReport) -> None:
        self.phases.append((report.nodeid, report.duration))

    def pytest_terminal_summary(self, terminalreporter: pytest.TerminalReporter) -> None:
        totals = file_totals(self.phases)
        if not totals:
            return
        terminalreporter.write_sep("=", f"slowest {min(TOP_FILES, len(totals))} test files (setup + call + "
                                        "teardown; --dist loadfile runs a file on one worker)")
        for path, seconds in totals[:TOP_FILES]:
            terminalreporter.write_line(f"{seconds:8.2f}s {path}")
        terminalreporter.write_line(f"{sum(s for _, s in totals):8.2f}s all {len(totals)} files")


def pytest_configure(config: pytest.Config) -> None:
    """Register a `FileDurations` when ``--durations`` is given, on the controller (not an xdist worker)."""
    if config.getoption("durations", None) is not None and not hasattr(config, "workerinput"):
        config.pluginmanager.register(FileDurations(), "readbench-file-durations")
