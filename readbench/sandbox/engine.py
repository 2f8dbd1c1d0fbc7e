"""Is a Docker engine usable for inspect's docker sandbox on this machine?

inspect-ai 0.3.285 refuses Docker Engine < 24.0.6 and Compose < 2.21.0 (its
``util/_sandbox/docker/prereqs.py``; docs/specs/inspect-notes.md §4 and §9.3). This module
asks the same two commands inspect asks (``docker version --format json`` and
``docker compose version --format json``) so that readbench can choose docker vs local *before*
inspect fails a whole run, and so tests can skip with the exact reason.

The version rule is a pure function (:func:`check_versions`) over the two reported versions;
:func:`engine_status` is the thin subprocess adapter around it.
"""

from __future__ import annotations

import json
import re
import subprocess
from dataclasses import dataclass

__all__ = [
    "MIN_COMPOSE_VERSION",
    "MIN_ENGINE_VERSION",
    "EngineStatus",
    "check_versions",
    "docker_available",
    "engine_status",
    "parse_version",
]

#: inspect-ai's DOCKER_ENGINE_REQUIRED_VERSION (docs/specs/inspect-notes.md §4)
MIN_ENGINE_VERSION = (24, 0, 6)
#: inspect-ai's DOCKER_COMPOSE_REQUIRED_VERSION (docs/specs/inspect-notes.md §4)
MIN_COMPOSE_VERSION = (2, 21, 0)

_PROVISION_HINT = "run `sudo sandboxes/provision-docker.sh`"
_VERSION_RE = re.compile(r"^v?(\d+)\.(\d+)(?:\.(\d+))?")


def _fmt(version: tuple[int, int, int]) -> str:
    return ".".join(str(p) for p in version)


def parse_version(text: str) -> tuple[int, int, int]:
    """Parse a Docker or Compose version string into ``(major, minor, patch)``.

    Accepts what the tools print: ``26.1.5+dfsg1`` (Debian engine), ``v2.40.3`` (Compose),
    ``28.2.2``, ``2.21`` (patch taken as 0). Anything after the numbers is ignored.

    Raises:
        ValueError: ``text`` does not start with ``[v]MAJOR.MINOR``; the message quotes it.
    """
    m = _VERSION_RE.match(text.strip())
    if not m:
        raise ValueError(f"not a version string: {text!r}")
    return int(m.group(1)), int(m.group(2)), int(m.group(3) or 0)


@dataclass(frozen=True)
class EngineStatus:
    """What the engine check found."""

    ok: bool
    """True when both the engine and Compose answer and meet the minimum versions."""
    reason: str
    """One line: the versions found when ok, else why docker is unusable and what to do."""
    engine_version: str | None = None
    """The server version the engine reported (e.g. ``26.1.5+dfsg1``), None when it did not answer."""
    compose_version: str | None = None
    """The Compose version reported (e.g. ``2.40.3``), None when the plugin did not answer."""


def check_versions(engine_version: str | None, compose_version: str | None) -> EngineStatus:
    """Apply inspect's version rule to the versions the tools reported.

    Args:
        engine_version: ``Server.Version`` from ``docker version``; None when no engine answered.
        compose_version: ``version`` from ``docker compose version``; None when Compose did not answer.

    Returns:
        An :class:`EngineStatus`; ``ok`` is True iff engine >= 24.0.6 and compose >= 2.21.0.
        Unparseable versions give ``ok=False`` with the text quoted in ``reason``.
    """
    if engine_version is None:
        return EngineStatus(False, f"no Docker engine answers ({_PROVISION_HINT})", None, compose_version)
    try:
        ev = parse_version(engine_version)
    except ValueError:
        return EngineStatus(False, f"unparseable Docker engine version {engine_version!r}",
                            engine_version, compose_version)
    if ev < MIN_ENGINE_VERSION:
        return EngineStatus(
            False,
            f"Docker engine {engine_version} is older than {_fmt(MIN_ENGINE_VERSION)}, which inspect-ai "
            f"requires ({_PROVISION_HINT})",
            engine_version, compose_version)
    if compose_version is None:
        return EngineStatus(False, f"Docker Compose v2 plugin not found ({_PROVISION_HINT})",
                            engine_version, None)
    try:
        cv = parse_version(compose_version)
    except ValueError:
        return EngineStatus(False, f"unparseable Docker Compose version {compose_version!r}",
                            engine_version, compose_version)
    if cv < MIN_COMPOSE_VERSION:
        return EngineStatus(
            False,
            f"Docker Compose {compose_version} is older than {_fmt(MIN_COMPOSE_VERSION)}, which inspect-ai "
            f"requires ({_PROVISION_HINT})",
            engine_version, compose_version)
    return EngineStatus(True, f"Docker engine {engine_version}, Compose {compose_version}",
                        engine_version, compose_version)


def _run_json(cmd: list[str], timeout_seconds: float) -> dict | None:
    try:
        proc = subprocess.run(cmd, capture_output=True, text=True, timeout=timeout_seconds, check=False)
    except (FileNotFoundError, subprocess.TimeoutExpired):
        return None
    # `docker version` exits 1 without a daemon but still prints the client part as JSON.
    try:
        data = json.loads(proc.stdout)
    except json.JSONDecodeError:
        return None
    return data if isinstance(data, dict) else None


def engine_status(timeout_seconds: float = 20.0) -> EngineStatus:
    """Ask the ``docker`` CLI on PATH for the engine and Compose versions and check them.

    Runs ``docker version --format json`` and ``docker compose version --format json``
    (the commands inspect-ai itself runs), each with ``timeout_seconds``. Never raises: a missing
    CLI, a silent daemon or a timeout all become ``ok=False`` with the reason.
    """
    ver = _run_json(["docker", "version", "--format", "json"], timeout_seconds)
    if ver is None:
        return check_versions(None, None)
    server = ver.get("Server") or {}
    engine = server.get("Version") if isinstance(server, dict) else None
    if engine is None:
        return check_versions(None, None)
    comp = _run_json(["docker", "compose", "version", "--format", "json"], timeout_seconds)
    compose = comp.get("version") if comp else None
    return check_versions(engine, compose.removeprefix("v") if isinstance(compose, str) else None)


def docker_available() -> tuple[bool, str]:
    """``(ok, reason)``: can inspect's docker sandbox run here? See :func:`engine_status`.

    Used by ``readbench.run.task.resolve_sandbox`` (auto -> docker or local) and by the Docker tests
    to skip with the reason (docs/specs/inspect-notes.md §4).
    """
    status = engine_status()
    return status.ok, status.reason
