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
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest

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


#: seconds between the host's polls for a real harness's model requests in local-sandbox tests (inspect's own: 2)
BRIDGE_POLL_SECONDS = 0.25


@pytest.fixture(autouse=True, scope="session")
def _fast_bridge_polling() -> Iterator[None]:
    """inspect's sandbox agent bridge (readbench.agents.run) serves a real harness's model requests
    by polling the sandbox for request files every 2 s, a constant in
    inspect_ai.agent._bridge.sandbox.service (its `sandbox_service` call's ``polling_interval=2``).
    The harness's tools take milliseconds on the tiny corpus, so every relayed call waited ~2 s for
    the next poll (measured: a Codex session's 39 calls 2.0 s apart; one pi run's 6 calls 2.0 s apart,
    its sample 21-26 s, with 0.25 s 8-11 s and no more CPU). In the LOCAL sandbox tests poll every
    `BRIDGE_POLL_SECONDS` (a poll is one `find` there; inspect floors it at the sandbox's 0.2 s).
    Docker keeps inspect's 2 s: a poll is a `docker exec`, which took about 1 s under load, so faster
    polls gained nothing measurable and cost CPU. Only the waiting changes: the requests, replies and
    every table column but the wall-clock ones are the same."""
    from inspect_ai.agent._bridge.sandbox import service
    from inspect_ai.util._sandbox.local import LocalSandboxEnvironment

    original = service.sandbox_service

    def polling_faster(*args: Any, **kwargs: Any) -> Any:
        try:
            local = kwargs.get("sandbox") is not None and bool(kwargs["sandbox"].as_type(LocalSandboxEnvironment))
        except TypeError:  # another kind of sandbox
            local = False
        if local and kwargs.get("polling_interval") is not None:
            kwargs["polling_interval"] = min(kwargs["polling_interval"], BRIDGE_POLL_SECONDS)
        return original(*args, **kwargs)

    service.sandbox_service = polling_faster
    yield
    service.sandbox_service = original


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
