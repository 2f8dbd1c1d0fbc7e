"""The agent-harness arm dimension (GitHub issue 24; docs/specs/agents.md): which agent runs a
sample, and which read presets it can express.

An agent is `readbench` (readbench's own loop, `readbench.agent.loop`, every preset) or a real
harness release from a harness record's `npm` pins (`readbench.harness.Harness.npm`): the first
pin is named after the harness (`pi`, `claude-code`, `codex`), the others `<harness>@<version>`
(`pi@1.6.0`). A matrix lists them under `agents:`; `readbench agents` prints them.

A real harness expresses `stock` as its own read path unchanged (`Harness.own_read`) and the
presets its `read_arms` allow through its own extension point; `check_arm` refuses any other
before the run, naming the agent and the preset. This module imports nothing above the facts
layer: the caller passes the preset's family and parameters.
"""

from __future__ import annotations

from dataclasses import dataclass
from pathlib import Path
from typing import Any

from readbench.harness._record import Harness, NpmPin

__all__ = ["LOOP", "NPM_DIR", "RUNNABLE", "Agent", "agent_names", "check_arm", "expressible", "get_agent", "list_agents"]

LOOP = "readbench"
"""The agent name of readbench's own loop (the default of a matrix's `agents:`)."""

RUNNABLE = frozenset({"pi", "claude-code", "codex"})
"""Harnesses readbench runs inside the sandbox today (readbench.agents.run, each with a launcher in
readbench.agents.launch.LAUNCHERS); the others are pinned and installable, and an arm naming them is
refused by name when its task is built."""

NPM_DIR = Path(__file__).parent / "npm"
"""Committed `package.json` + `package-lock.json` per pin: `NPM_DIR/<harness>@<version>/`."""


@dataclass(frozen=True)
class Agent:
    """One agent an arm can run: `name` (`readbench`, `pi`, `pi@1.6.0`, ...), its harness record
    (None for readbench's loop) and the pinned release (None for the loop)."""

    name: str
    harness: Harness | None
    pin: NpmPin | None

    @property
    def npm_dir(self) -> Path | None:
        """The directory holding this pin's package.json and package-lock.json (None for the loop)."""
        if self.harness is None or self.pin is None:
            return None
        return NPM_DIR / f"{self.harness.name}@{self.pin.version}"

    def describe(self) -> dict[str, Any]:
        """JSON-ready facts (`readbench agents --json`)."""
        if self.harness is None or self.pin is None:
            return {"name": self.name, "harness": LOOP, "package": None, "version": None, "integrity": None,
                    "runs": "readbench's own Python loop (readbench.agent.loop), pi's tools", "stock": "pi's read",
                    "presets": "every registered read preset", "runnable": True}
        return {"name": self.name, "harness": self.harness.name, "package": self.pin.package,
                "version": self.pin.version, "integrity": self.pin.integrity, "node": self.pin.node,
                "runs": self.harness.runs, "stock": self.harness.own_read,
                "presets": ["stock"] + [f"{a.family} family with {a.params}" for a in self.harness.read_arms],
                "runnable": self.harness.name in RUNNABLE}


def list_agents() -> list[Agent]:
    """Every agent: the loop, then each harness's pins in registry order."""
    from readbench.harness import HARNESSES

    out = [Agent(LOOP, None, None)]
    for h in HARNESSES:
        for i, pin in enumerate(h.npm):
            out.append(Agent(h.name if i == 0 else f"{h.name}@{pin.version}", h, pin))
    return out


def agent_names() -> list[str]:
    """Every agent's name, in `list_agents` order."""
    return [a.name for a in list_agents()]


def get_agent(name: str) -> Agent:
    """The agent named `name`.

    Raises:
        ValueError: no such agent (the message lists them).
    """
    for agent in list_agents():
        if agent.name == name:
            return agent
    raise ValueError(f"unknown agent {name!r}; valid: {', '.join(agent_names())}")


def expressible(agent: str, preset: str, family: str, params: dict[str, Any]) -> str | None:
    """How `agent` expresses the read preset named `preset` (family `family`, effective parameters
    `params`), or None when it cannot.

    Raises:
        ValueError: an unknown agent.
    """
    a = get_agent(agent)
    if a.harness is None:
        return "readbench's loop runs the preset itself"
    if preset == "stock":
        return a.harness.own_read
    for arm in a.harness.read_arms:
        if arm.family == family and all(params.get(k) == v for k, v in arm.params.items()):
            return arm.how
    return None


def check_arm(agent: str, preset: str, family: str, params: dict[str, Any]) -> str:
    """`expressible` or a refusal naming the agent and the preset.

    Raises:
        ValueError: an unknown agent, or one that cannot express the preset (what it can is named).
    """
    how = expressible(agent, preset, family, params)
    if how is None:
        a = get_agent(agent)
        assert a.harness is not None
        can = ["stock"] + [f"the {r.family} family with {r.params}" for r in a.harness.read_arms]
        raise ValueError(f"agent {agent!r} cannot express read preset {preset!r} through its own extension point "
                         f"(stock there is {a.harness.own_read}); it can run: {'; '.join(can)}")
    return how
