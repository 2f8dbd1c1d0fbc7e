"""Differential suite fixtures: a long-lived node process running pi 0.84.1's shipped tool code
(tests/differential/driver/driver.mjs) and a tally of agreeing cases printed at session end.

Skips (with the reason) when node or the pinned npm package is missing: run
`bash tests/differential/setup.sh` (`make setup-differential`).
"""

from __future__ import annotations

import os
import shutil

import pytest
from pi_diff_gen import AGREED
from pi_driver_client import PI_PACKAGE, PiDriver


@pytest.fixture(scope="session")
def pi_driver(tmp_path_factory: pytest.TempPathFactory):
    """A running pi 0.84.1 driver (session-wide).

    Skips when node or the npm package is missing, unless READBENCH_REQUIRE_DIFFERENTIAL is set
    (CI, after provisioning), where a missing install fails loudly (tests/conftest.py).
    """
    missing = None
    if shutil.which("node") is None:
        missing = "differential: node is not installed (needs node >= 20)"
    elif not PI_PACKAGE.exists():
        missing = (
            "differential: pi 0.84.1 npm package not installed; run `bash tests/differential/setup.sh` "
            "(make setup-differential)"
        )
    if missing:
        if os.environ.get("READBENCH_REQUIRE_DIFFERENTIAL"):
            pytest.fail(missing + " (READBENCH_REQUIRE_DIFFERENTIAL is set)")
        pytest.skip(missing)
    driver = PiDriver(tmp_path_factory.mktemp("pi-driver"))
    yield driver
    driver.close()


def pytest_terminal_summary(terminalreporter, exitstatus, config) -> None:
    if AGREED:
        parts = ", ".join(f"{tool} {count}" for tool, count in sorted(AGREED.items()))
        terminalreporter.write_line(
            f"differential: {sum(AGREED.values())} cases agree with pi 0.84.1 ({parts})"
        )
