"""The bridge's polling interval for a real harness's model requests (readbench.agents.bridge_poll).

The first test runs inspect's own ``run_model_service`` (what ``sandbox_agent_bridge`` starts) on a
readbench-local sandbox and records the seconds its polling loop sleeps: inspect's 2 without
`bridge_poll.install`, readbench-local's ``BRIDGE_POLL_SECONDS`` with it. If inspect renames or restructures what
bridge_poll patches, this fails (install refuses, or the loop sleeps 2).
"""

from __future__ import annotations

import asyncio
import logging
import shutil
from typing import Any

import anyio
import pytest
from inspect_ai.agent._bridge.sandbox import service as bridge_service
from inspect_ai.util._sandbox import service as inspect_service
from inspect_ai.util._sandbox.docker.docker import DockerSandboxEnvironment
from inspect_ai.util._sandbox.events import SandboxEnvironmentProxy
from inspect_ai.util._sandbox.local import LocalSandboxEnvironment

from readbench.agents import bridge_poll
from readbench.sandbox.dockerexec import ReadbenchDockerSandbox
from readbench.sandbox.local import ReadbenchLocalSandbox


class _Stop(Exception):
    pass


class _SleepRecorder:
    """Stands in for the ``anyio`` module inside inspect's sandbox service: records every
    ``anyio.sleep`` of its polling loop and stops the service at the second one."""

    def __init__(self) -> None:
        self.slept: list[float] = []

    def __getattr__(self, name: str) -> Any:
        return getattr(anyio, name)

    async def sleep(self, seconds: float) -> None:
        self.slept.append(seconds)
        if len(self.slept) == 2:
            raise _Stop
        await anyio.sleep(0)


def _slept(monkeypatch: pytest.MonkeyPatch, instance: str) -> list[float]:
    recorder = _SleepRecorder()
    monkeypatch.setattr(inspect_service, "anyio", recorder)
    sb = ReadbenchLocalSandbox()

    async def go() -> None:
        try:  # bridge=None: no request comes, so no method runs
            await bridge_service.run_model_service(sb, None, None, None, instance, anyio.Event())  # type: ignore[arg-type]
        except* _Stop:
            pass

    try:
        asyncio.run(go())
    finally:
        sb.directory.cleanup()  # and the service's queue on this host (a local sandbox's), as the bridge leaves it
        shutil.rmtree(f"{inspect_service.SERVICES_DIR}/{bridge_service.MODEL_SERVICE}/{instance}", ignore_errors=True)
    return recorder.slept


def test_inspects_bridge_loop_polls_a_local_sandbox_at_the_local_interval(monkeypatch: pytest.MonkeyPatch) -> None:
    assert bridge_poll.install() is True
    assert bridge_poll.install() is True  # idempotent: wrapped once
    patched = bridge_service.sandbox_service
    assert patched.__wrapped__.__module__ == "inspect_ai.util._sandbox.service"  # type: ignore[attr-defined]
    monkeypatch.setattr(bridge_service, "sandbox_service", patched.__wrapped__)  # type: ignore[attr-defined]
    assert _slept(monkeypatch, "suite-inspect") == [2, 2]  # inspect's own interval
    monkeypatch.setattr(bridge_service, "sandbox_service", patched)
    assert ReadbenchLocalSandbox.BRIDGE_POLL_SECONDS == 0.25
    assert _slept(monkeypatch, "suite-readbench") == [0.25, 0.25]


def test_poll_seconds_by_sandbox_kind() -> None:
    local = ReadbenchLocalSandbox()
    try:
        assert bridge_poll.poll_seconds(local) == 0.25
        assert bridge_poll.poll_seconds(SandboxEnvironmentProxy(local)) == 0.25  # as the bridge gets it
        assert bridge_poll.poll_seconds(LocalSandboxEnvironment()) is None  # inspect's own local sandbox
    finally:
        local.directory.cleanup()
    assert bridge_poll.poll_seconds(ReadbenchDockerSandbox("default", None, "/repo")) == 0.5  # type: ignore[arg-type]
    # inspect's compose-CLI docker: a poll costs ~0.2 CPU s, so inspect's own 2 s stays
    assert bridge_poll.poll_seconds(DockerSandboxEnvironment("default", None, "/repo")) is None  # type: ignore[arg-type]


def test_install_warns_and_keeps_inspects_interval_when_inspect_changed(monkeypatch: pytest.MonkeyPatch,
                                                                       caplog: pytest.LogCaptureFixture) -> None:
    async def sandbox_service(name: str, methods: Any, until: Any, sandbox: Any) -> None:  # no polling_interval
        return None

    monkeypatch.setattr(bridge_service, "sandbox_service", sandbox_service)
    bridge_poll._missing.cache_clear()
    with caplog.at_level(logging.WARNING, logger="readbench.agents.bridge_poll"):
        assert bridge_poll.install() is False
    assert bridge_service.sandbox_service is sandbox_service
    assert "has no sandbox_service's polling_interval argument" in caplog.text
    bridge_poll._missing.cache_clear()
