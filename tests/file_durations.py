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


def slow_files_first(items: list[pytest.Item]) -> None:
    """Reorder `items` in place: every test of a file holding a ``slow`` or ``docker`` test first, the
    other files after, each group and each file's tests in collection order.

    ``make test`` passes ``--no-loadscope-reorder``, so ``--dist loadfile`` hands files to its two
    workers in this order. xdist's default orders files by their number of tests, most first, which
    put the few-test end-to-end files (a real harness's runs, the sampled fork check: 1-4 tests, 50-150 s
    each) last: the run then ended on one of them while the other worker idled. Slow files first and
    the many short files after let both workers finish within a short file of each other."""
    heavy = {item.path for item in items if "slow" in item.keywords or "docker" in item.keywords}
    items.sort(key=lambda item: item.path not in heavy)  # a stable sort: collection order kept within each group
