"""inspect-ai entry point: registers readbench's model provider (`readbench/sim-*`) and tasks.

Imported by inspect through the `inspect_ai` entry-point group declared in pyproject.toml.
"""

from inspect_ai.model import modelapi


@modelapi(name="readbench")
def readbench_sim():  # noqa: D401 - inspect registry factory
    """The embedded behaviour-model provider (see shared/specs/sim-agent.md)."""
    from readbench.sim.provider import SimAgentAPI

    return SimAgentAPI
