"""inspect-ai entry point: registers readbench's model provider (`readbench/sim-*`) and its task
(`readbench/read_strategies`).

Imported by inspect through the `inspect_ai` entry-point group declared in pyproject.toml, so
``inspect eval readbench/read_strategies --model readbench/sim-mixed -T variant=B`` finds the
task without a file path (inspect-notes.md; the same task as evals/read_strategies.py).
"""

from inspect_ai.model import modelapi

from readbench.run.task import read_strategies

__all__ = ["read_strategies", "readbench_sim"]


@modelapi(name="readbench")
def readbench_sim():
    """The embedded behaviour-model provider (see docs/specs/sim-agent.md)."""
    from readbench.sim.provider import SimAgentAPI

    return SimAgentAPI
