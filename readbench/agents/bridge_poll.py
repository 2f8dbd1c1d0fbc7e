"""How often the host polls a sample's sandbox for a real harness's model requests.

inspect's sandbox agent bridge (``sandbox_agent_bridge``, readbench.agents.run) serves the harness's
model requests by polling the sandbox for request files: its ``run_model_service``
(``inspect_ai.agent._bridge.sandbox.service``) calls ``sandbox_service(..., polling_interval=2)``,
and each poll is one ``find`` of the request directory run in the sandbox. The harness's tools take
milliseconds on small tasks, so every relayed call waited for the next poll: a Codex session's 39
calls were 2.0 s apart, one pi run's 6 calls 2.0 s apart.

`install` routes that one call through `_polling`, which passes `poll_seconds` of the sandbox
instead of inspect's 2 s (inspect still floors it at the sandbox's ``default_polling_interval``,
0.2 s for local and Docker). Only the wait between a request and its pickup changes: the requests,
the replies and every table column except the wall-clock ones are the same.

Intervals, chosen from the CPU one poll costs (`find` through inspect's
``privileged_exec`` as the bridge runs it, 100-200 polls in a running sample, load 2-3.5):

=====================================  ==============  =====================  =========
one poll                               readbench CPU   dockerd + containerd   wall
                                       (ms)            + runc CPU (ms)        (ms)
=====================================  ==============  =====================  =========
readbench-local (setarch, sh, find)    7.6-8.2         -                      8-15
readbench-docker (Engine API exec)     5.7-8.2         49-70                  73-107
inspect ``docker`` (compose CLI)       132             73                     287
=====================================  ==============  =====================  =========

Each readbench sandbox class states its interval as its `ATTRIBUTE` (``BRIDGE_POLL_SECONDS``): 0.25 s
local (polls cost ~3 % of a core), 0.5 s readbench-docker (~12 %, mostly the Docker daemons: 0.25 s would
double that for at most 0.25 s less wait per call). A sandbox without one (inspect's compose-CLI
``docker``, Kubernetes: not measured) keeps inspect's 2 s.

If inspect renames what this relies on, `install` logs a warning once and harness runs poll every
2 s as before; tests/agents/test_bridge_poll.py fails (it checks the interval inspect's loop sleeps).
"""

from __future__ import annotations

import functools
import inspect
import logging
from typing import Any

__all__ = ["ATTRIBUTE", "install", "poll_seconds"]

logger = logging.getLogger(__name__)

ATTRIBUTE = "BRIDGE_POLL_SECONDS"
"""The sandbox class attribute naming its interval (readbench.sandbox.local.ReadbenchLocalSandbox: 0.25 s;
readbench.sandbox.dockerexec.ReadbenchDockerSandbox: 0.5 s); see the module docstring for the costs."""


def poll_seconds(sb: Any) -> float | None:
    """The polling interval for sandbox `sb` (a ``SandboxEnvironment`` or inspect's proxies of one):
    its class's `ATTRIBUTE`, or None (inspect's own 2 s) for a class without one (inspect's
    compose-CLI ``docker``, where a poll costs ~0.2 CPU s; Kubernetes: not measured)."""
    from inspect_ai.util import SandboxEnvironment

    inner = sb
    for _ in range(8):  # inspect's proxies (events, injected tools) hand out what they wrap
        unwrapped = inner.as_type(SandboxEnvironment)
        if unwrapped is inner:
            break
        inner = unwrapped
    seconds = getattr(type(inner), ATTRIBUTE, None)
    return None if seconds is None else float(seconds)


def _polling(original: Any) -> Any:
    """`original` (inspect's ``sandbox_service``) with the bridge's model service polling at
    `poll_seconds` of its sandbox; every other service and argument unchanged."""

    @functools.wraps(original)
    async def sandbox_service(*args: Any, **kwargs: Any) -> Any:
        from inspect_ai.agent._bridge.sandbox.service import MODEL_SERVICE

        if kwargs.get("name") == MODEL_SERVICE and kwargs.get("sandbox") is not None:
            seconds = poll_seconds(kwargs["sandbox"])
            if seconds is not None:
                kwargs["polling_interval"] = seconds
        return await original(*args, **kwargs)

    sandbox_service.readbench_polling = True  # type: ignore[attr-defined]
    return sandbox_service


def install() -> bool:
    """Make inspect's bridge model service poll at `poll_seconds` in this process (idempotent).

    Returns:
        True when installed (now or before); False when inspect no longer has what this patches
        (``inspect_ai.agent._bridge.sandbox.service.sandbox_service`` with a ``polling_interval``
        argument, called by name in its ``run_model_service``): a warning naming them is logged once
        and the bridge keeps inspect's 2 s.
    """
    try:
        from inspect_ai.agent._bridge.sandbox import service
    except ImportError as exc:
        return _missing(f"module inspect_ai.agent._bridge.sandbox.service ({exc})")
    current = getattr(service, "sandbox_service", None)
    if getattr(current, "readbench_polling", False):
        return True
    runner = getattr(service, "run_model_service", None)
    if current is None or runner is None or "sandbox_service" not in getattr(runner, "__code__", _NO_CODE).co_names:
        return _missing("run_model_service calling sandbox_service in inspect_ai.agent._bridge.sandbox.service")
    if "polling_interval" not in inspect.signature(current).parameters:
        return _missing("sandbox_service's polling_interval argument")
    service.sandbox_service = _polling(current)
    return True


_NO_CODE = compile("", "<none>", "exec")


@functools.lru_cache(maxsize=None)
def _missing(what: str) -> bool:
    from importlib.metadata import version

    logger.warning("readbench.agents.bridge_poll: inspect_ai %s has no %s; real harnesses' model requests are "
                   "picked up every 2 s (inspect's own interval)", version("inspect_ai"), what)
    return False
