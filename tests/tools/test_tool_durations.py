"""Test runners' durations are removed from the bash tool's output, nothing else (issue 29)."""

from __future__ import annotations

import re
import subprocess
import sys

from readbench.tools.durations import strip_test_durations


def test_pytest_quiet_summary_loses_only_its_duration():
    out = (b"..F.\n=================================== FAILURES ===================================\n"
           b"E   assert 1 == 2 in 3.5s\n"
           b"FAILED tests/test_a.py::test_x - assert 1 == 2\n"
           b"1 failed, 3 passed, 1 warning in 0.12s\n")
    assert strip_test_durations(out) == out.replace(b"1 failed, 3 passed, 1 warning in 0.12s", b"1 failed, 3 passed, 1 warning")


def test_every_summary_form():
    cases = {
        b"1203 passed in 10.55s": b"1203 passed",
        b"5 passed in 75.10s (0:01:15)": b"5 passed",
        b"no tests ran in 0.01s": b"no tests ran",
        b"2 failed, 7 subtests passed in 1.00s": b"2 failed, 7 subtests passed",
        b"========================= 1 failed, 1 passed in 0.03s =========================":
            b"========================= 1 failed, 1 passed =========================",
        b"Ran 12 tests in 0.004s": b"Ran 12 tests",
        b"Ran 1 test in 2s\r": b"Ran 1 test\r",
    }
    for given, expected in cases.items():
        assert strip_test_durations(b"x\n" + given + b"\ny") == b"x\n" + expected + b"\ny"


def test_other_lines_with_a_duration_are_kept():
    for line in (b"took 1.5s", b"tests passed in 0.12s", b"  1 passed in 0.12s", b"1 passed in 0.12s!",
                 b"Finished in 2.00s", b"Ran tests in 1s"):
        assert strip_test_durations(line) == line


def test_real_pytest_output_is_the_same_in_two_runs(tmp_path):
    """Two runs of a real pytest (whose own durations differ) give identical normalised output."""
    (tmp_path / "test_t.py").write_text("import time\n\ndef test_a():\n    time.sleep(0.011)\n\ndef test_b():\n    assert 1 == 2\n")
    outs = [subprocess.run([sys.executable, "-m", "pytest", "-p", "no:cacheprovider", "-q", "test_t.py"], cwd=tmp_path,
                           capture_output=True, check=False).stdout for _ in range(2)]
    assert re.fullmatch(rb"1 failed, 1 passed in \d+\.\d\ds", outs[0].splitlines()[-1])
    assert [strip_test_durations(o).splitlines()[-1] for o in outs] == [b"1 failed, 1 passed"] * 2
    assert strip_test_durations(outs[0]) == strip_test_durations(outs[1])
