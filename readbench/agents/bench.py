"""`readbench bench --only agents` (GitHub issue 24 item 6): per-sample start-up and run time of each
harness an arm can run, beside readbench's loop.

- start-up: wall seconds of the harness's own ``--version`` from the cached prefix (a process
  start of Node.js and the bundle, or of the native binary), the median of 3;
- a sample: one corpus task (the first ``locate`` task) under ``stock × off`` in the local sandbox
  with the simulated agent ``readbench/sim-pager``: the sample's wall seconds and its relayed
  model calls, so the per-call overhead of the bridge shows beside the loop's.

Wall clock on whatever else the machine is doing.
"""

from __future__ import annotations

import statistics
import subprocess
import time
from typing import Any

__all__ = ["bench_agents"]

AGENTS = ("readbench", "pi", "pi@1.6.0")


def _startup(agent: str) -> float | None:
    from readbench.agents.install import ensure_node, ensure_pin
    from readbench.harness.agents import get_agent

    a = get_agent(agent)
    if a.pin is None:
        return None
    exe = ensure_pin(a) / "node_modules" / ".bin" / a.pin.bin
    argv = [str(exe), "--version"] if a.pin.bin == "claude" else [str(ensure_node() / "node"), str(exe), "--version"]
    times = []
    for _ in range(3):
        t0 = time.monotonic()
        subprocess.run(argv, capture_output=True, check=True, timeout=120)
        times.append(time.monotonic() - t0)
    return statistics.median(times)


def bench_agents(agents: tuple[str, ...] = AGENTS, model: str = "readbench/sim-pager") -> dict[str, Any]:
    """{agent: {startup_seconds, sample_wall_seconds, model_calls, solved}} (module docstring).

    Raises:
        RuntimeError: a sample did not finish (its log's error).
    """
    from inspect_ai import eval as inspect_eval

    from readbench.run.task import read_strategies_task

    out: dict[str, Any] = {}
    for agent in agents:
        task = read_strategies_task(variant="stock", dcp="off", agent=agent, sandbox_kind="local", families="locate",
                                    limit=1)
        t0 = time.monotonic()
        [log] = inspect_eval(task, model=model, display="none", log_dir="results/bench/agents-logs")
        wall = time.monotonic() - t0
        if log.status != "success" or not log.samples:
            raise RuntimeError(f"bench agents: {agent}'s sample did not finish: {log.error}")
        meta = log.samples[0].scores["readbench"].metadata
        out[agent] = {"startup_seconds": _startup(agent), "eval_wall_seconds": wall,
                      "sample_wall_seconds": meta["wall_seconds"], "model_calls": meta["turns"],
                      "solved": log.samples[0].scores["readbench"].value}
    return out
