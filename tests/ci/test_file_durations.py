"""The per-file duration summary (tests/file_durations.py) that `make test` prints with --durations."""

from __future__ import annotations

from types import SimpleNamespace

import pytest
from file_durations import FileDurations, file_totals, pytest_configure

pytest_plugins = ["pytester"]


def test_file_totals_sum_every_phase_per_file_slowest_first():
    phases = [("a/test_x.py::t1", 1.5), ("a/test_x.py::t1", 0.25), ("b/test_y.py::t[2]", 2.0),
              ("a/test_x.py::t2", 0.5), ("c/test_z.py::t", 2.0)]
    assert file_totals(phases) == [("a/test_x.py", 2.25), ("b/test_y.py", 2.0), ("c/test_z.py", 2.0)]


class _Reporter:
    def __init__(self) -> None:
        self.lines: list[str] = []

    def write_sep(self, sep: str, title: str) -> None:
        self.lines.append(f"{sep} {title}")

    def write_line(self, line: str) -> None:
        self.lines.append(line)


def test_the_summary_lists_the_slowest_files_and_the_sum():
    plugin, reporter = FileDurations(), _Reporter()
    for nodeid, seconds in [("t/test_a.py::x", 0.5), ("t/test_b.py::y", 3.0), ("t/test_a.py::z", 1.25)]:
        plugin.pytest_runtest_logreport(SimpleNamespace(nodeid=nodeid, duration=seconds))
    plugin.pytest_terminal_summary(reporter)
    assert reporter.lines == [
        "= slowest 2 test files (setup + call + teardown; --dist loadfile runs a file on one worker)",
        "    3.00s t/test_b.py", "    1.75s t/test_a.py", "    4.75s all 2 files"]


def test_registered_only_with_durations_and_not_on_an_xdist_worker():
    registered: list[object] = []

    def config(durations: int | None, **extra: object) -> SimpleNamespace:
        manager = SimpleNamespace(register=lambda plugin, name: registered.append((type(plugin).__name__, name)))
        return SimpleNamespace(getoption=lambda name, default=None: durations, pluginmanager=manager, **extra)

    pytest_configure(config(None))
    pytest_configure(config(25, workerinput={}))
    assert registered == []
    pytest_configure(config(25))
    assert registered == [("FileDurations", "readbench-file-durations")]


def test_a_real_pytest_run_prints_it(pytester: pytest.Pytester):
    pytester.makepyfile(test_one="def test_a():\n    pass\n")
    result = pytester.runpytest("-p", "file_durations", "--durations=1")
    result.assert_outcomes(passed=1)
    result.stdout.re_match_lines([r"=+ slowest 1 test files \(setup \+ call \+ teardown; --dist loadfile runs a "
                                  r"file on one worker\) =+", r" +\d+\.\d\ds test_one\.py", r" +\d+\.\d\ds all 1 files"])


def test_files_with_slow_or_docker_tests_are_handed_out_first(pytester: pytest.Pytester):
    pytester.makeconftest("from file_durations import slow_files_first\n\n"
                          "def pytest_collection_modifyitems(items):\n    slow_files_first(items)\n")
    pytester.makeini("[pytest]\nmarkers =\n    slow: s\n    docker: d\n")
    pytester.makepyfile(test_a="def test_1():\n    pass\n\ndef test_2():\n    pass\n",
                        test_b="import pytest\n\ndef test_1():\n    pass\n\n@pytest.mark.slow\ndef test_2():\n    pass\n",
                        test_c="def test_1():\n    pass\n",
                        test_d="import pytest\n\npytestmark = pytest.mark.docker\n\ndef test_1():\n    pass\n")
    result = pytester.runpytest("--collect-only", "-q")
    assert result.stdout.lines[:6] == ["test_b.py::test_1", "test_b.py::test_2", "test_d.py::test_1",
                                       "test_a.py::test_1", "test_a.py::test_2", "test_c.py::test_1"]
