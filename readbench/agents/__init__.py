"""Real agent harnesses under an arm (GitHub issue 24; docs/specs/agents.md).

- `install`: Node.js and each pinned harness in a cached prefix (the local sandbox, the images);
- `pi_extension`: a read preset as the pi extension readbench writes from it;
- `bridge`: the DCP configuration as the sandbox agent bridge's filter;
- `harness_agent`: the inspect agent that runs the harness inside the sample's sandbox through
  inspect's `sandbox_agent_bridge` and turns the harness's own session file into readbench's
  per-sample metrics.
"""

from typing import Any

__all__ = ["harness_agent"]


def __getattr__(name: str) -> Any:
    if name == "harness_agent":  # lazily: installing must not import inspect's agent machinery
        from readbench.agents.run import harness_agent

        return harness_agent
    raise AttributeError(name)
