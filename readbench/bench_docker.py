"""`make bench` item ``docker-exec``: CPU per command in a running container, inspect's ``docker
compose exec`` against readbench-docker's Engine API path (readbench.sandbox.dockerexec; GitHub
issue 26). The floor is the Engine API call itself, so the figure is the compose path's CPU as a
multiple of it.

CPU is counted where it is spent: the client (the ``docker compose`` child processes' rusage, or
this process's own for the in-process API call) and the engine (``dockerd`` and ``containerd``:
utime + stime + cutime + cstime from ``/proc/<pid>/stat``, before and after; the per-container
shims are not children of either and are left out). Other work on the machine that makes the
engine busy adds to the engine figure, so compare the two rows of one run.
"""

from __future__ import annotations

import os
import resource
import subprocess
import time
import uuid
from pathlib import Path
from typing import Any

__all__ = ["bench_docker_exec", "engine_cpu_seconds"]


def engine_cpu_seconds() -> float | None:
    """CPU seconds so far of every ``dockerd`` and ``containerd`` process (own and reaped
    children), or None when neither is visible in ``/proc`` (an engine elsewhere)."""
    total, found, hz = 0, False, os.sysconf("SC_CLK_TCK")
    for pid in filter(str.isdigit, os.listdir("/proc")):
        try:
            if Path(f"/proc/{pid}/comm").read_text().strip() not in ("dockerd", "containerd"):
                continue
            fields = Path(f"/proc/{pid}/stat").read_text().rsplit(")", 1)[1].split()
        except OSError:
            continue
        found = True
        total += sum(int(f) for f in fields[11:15])  # utime stime cutime cstime (stat fields 14-17)
    return total / hz if found else None


def _cpu() -> tuple[float, float, float | None]:
    own, kids = resource.getrusage(resource.RUSAGE_SELF), resource.getrusage(resource.RUSAGE_CHILDREN)
    return own.ru_utime + own.ru_stime, kids.ru_utime + kids.ru_stime, engine_cpu_seconds()


def _per_call(calls: int, one: Any) -> dict[str, float | None]:
    own0, kids0, eng0 = _cpu()
    start = time.perf_counter()
    for _ in range(calls):
        one()
    wall = time.perf_counter() - start
    own1, kids1, eng1 = _cpu()
    engine = None if eng0 is None or eng1 is None else (eng1 - eng0) / calls * 1000
    client = ((own1 - own0) + (kids1 - kids0)) / calls * 1000
    return {"client_cpu_ms": client, "engine_cpu_ms": engine, "wall_ms": wall / calls * 1000,
            "cpu_ms": client + (engine or 0.0)}


def bench_docker_exec(calls: int = 20) -> dict[str, Any]:
    """Per-call CPU (client, engine, total) and wall of ``true`` run `calls` times in one
    container of the offline base image, through ``docker compose exec`` and through the Engine
    API, and their ratio (``{"skipped": reason}`` without an engine).

    Raises:
        subprocess.CalledProcessError: compose could not start the container.
    """
    from readbench.bench_floor import ratio
    from readbench.sandbox.dockerexec import _run_exec, engine_client
    from readbench.sandbox.engine import docker_available
    from readbench.sandbox.images import OFFLINE_BASE, compose_for, default_base

    ok, why = docker_available()
    if not ok:
        return {"skipped": why}
    compose = str(compose_for(default_base() or OFFLINE_BASE))
    project = f"readbench-bench-{uuid.uuid4().hex[:8]}"
    base = ["docker", "compose", "--progress", "quiet", "--project-name", project, "-f", compose]
    subprocess.run([*base, "up", "-d"], check=True, capture_output=True)
    try:
        container = subprocess.run([*base, "ps", "-q", "default"], check=True, capture_output=True,
                                   text=True).stdout.strip()
        engine_client()  # made before the timed calls
        out: dict[str, Any] = {
            "calls": calls,
            "compose_exec": _per_call(calls, lambda: subprocess.run([*base, "exec", "default", "true"], check=True,
                                                                     capture_output=True)),
            "engine_api": _per_call(calls, lambda: _run_exec(container, ["true"], None, "/", None, None)),
        }
    finally:
        subprocess.run([*base, "down"], capture_output=True)
    out["compose_over_api_cpu"] = ratio(out["compose_exec"]["cpu_ms"], out["engine_api"]["cpu_ms"])
    return out
