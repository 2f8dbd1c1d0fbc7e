"""Suite-wide capability gates.

Tests marked ``docker`` need an engine >= 24.0.6 with Compose v2; tests marked
``differential`` need pi's npm package (``make setup-differential``); tests marked ``browser``
need Debian's headless ``chromium`` (``make setup-browser``). Locally they skip with the
reason; in CI (``READBENCH_REQUIRE_DOCKER=1`` / ``READBENCH_REQUIRE_DIFFERENTIAL=1`` /
``READBENCH_REQUIRE_BROWSER=1``, set by .ci/run after provisioning) they run, so a broken
provisioning fails loudly instead of skipping.
"""

from __future__ import annotations

import os
import shutil
from pathlib import Path

import pytest
from file_durations import pytest_configure, slow_files_first  # noqa: F401 - pytest_configure: a pytest hook

DRIVER = Path(__file__).parent / "differential" / "driver" / "node_modules"

# The sim's user profile file (readbench.sim.profiles) is the developer's own data: tests see
# only the built-in rows unless a test points READBENCH_PROFILES at a file of its own.
os.environ["READBENCH_PROFILES"] = str(Path(__file__).parent / "_no_user_profiles.toml")


@pytest.fixture(autouse=True, scope="session")
def _own_local_workspaces(tmp_path_factory: pytest.TempPathFactory) -> None:
    """Each test process claims local-sandbox workspaces (readbench.sandbox.local) under a directory
    of its own: with the machine-wide default (/tmp/readbench-ws), two xdist workers, or a user's run
    beside the suite, running the tiny corpus's samples take turns on one lock per sample, which
    changed the timing the interrupt tests rely on (both failed in a CI dry run while another
    `readbench eval` ran). A test that sets READBENCH_WORKSPACES itself still wins (monkeypatch)."""
    os.environ.setdefault("READBENCH_WORKSPACES", str(tmp_path_factory.mktemp("readbench-ws")))


def pytest_collection_modifyitems(config: pytest.Config, items: list[pytest.Item]) -> None:
    docker_reason = None
    if any("docker" in item.keywords for item in items) and not os.environ.get("READBENCH_REQUIRE_DOCKER"):
        from readbench.sandbox.engine import docker_available

        ok, why = docker_available()
        docker_reason = None if ok else f"no usable Docker engine: {why} (run `make docker` as root)"
    diff_reason = None
    if not DRIVER.exists() and not os.environ.get("READBENCH_REQUIRE_DIFFERENTIAL"):
        diff_reason = "pi's npm package is not installed (run `make setup-differential`)"
    browser_reason = None
    if not shutil.which("chromium") and not os.environ.get("READBENCH_REQUIRE_BROWSER"):
        browser_reason = "Debian's chromium is not installed (run `make setup-browser` as root)"
    for item in items:
        if browser_reason and "browser" in item.keywords:
            item.add_marker(pytest.mark.skip(reason=browser_reason))
        if docker_reason and "docker" in item.keywords:
            item.add_marker(pytest.mark.skip(reason=docker_reason))
        if diff_reason and "differential" in item.keywords:
            item.add_marker(pytest.mark.skip(reason=diff_reason))
    slow_files_first(items)  # the order --dist loadfile hands files out in (tests/file_durations.py)
