"""How each real harness is started in a sample's sandbox (GitHub issue 24; docs/specs/agents.md).

`readbench.agents.run.harness_agent` is the same for every harness: write the launch's files into
the sandbox, run its commands one after the other with the bridge up, pull the session file out of
`session_dir` and import it with the harness's session importer. What differs per harness is one
`Launch`, built by the harness's launcher (`LAUNCHERS`: harness name -> `module:function`, each
`launch(LaunchInput) -> Launch`). A new harness is one launcher module plus one line here.
"""

from __future__ import annotations

import importlib
from collections.abc import Callable
from dataclasses import dataclass, field
from typing import Any

__all__ = ["LAUNCHERS", "Launch", "LaunchInput", "launch"]

LAUNCHERS = {
    "pi": "readbench.agents.pi_run:launch",
    "claude-code": "readbench.agents.claude_run:launch",
    "codex": "readbench.agents.codex_run:launch",
}
"""Harness name (readbench.harness) -> its launcher, `module:function`."""


@dataclass(frozen=True)
class LaunchInput:
    """What a launcher knows about the sample.

    Attributes:
        work: an absolute sandbox directory for the harness's own files (never the workspace).
        port: the bridge's port in the sandbox.
        node: the Node.js executable in the sandbox.
        exe: the harness's executable in the sandbox (`node_modules/.bin/<bin>` of the pin).
        variant: the arm's read preset (name or derivation dict).
        prompts: the sample's prompts, the first and then each follow-up.
        cwd: the workspace (the harness's working directory), or None.
        context_window: the model's context window the harness is told (tokens).
        env: the workspace's environment (readbench.base.store.workspace()["env"]).
        resume: a session file in the sandbox the harness continues instead of starting on the
            prompts (a forked arm, readbench.agents.pi_fork), or None. Only pi's launcher takes one.
    """

    work: str
    port: int
    node: str
    exe: str
    variant: str | dict[str, Any]
    prompts: list[str]
    cwd: str | None
    context_window: int
    env: dict[str, str] = field(default_factory=dict)
    resume: str | None = None


@dataclass(frozen=True)
class Launch:
    """One harness run: `files` (sandbox path -> text) written first, then each argv of `runs` in
    order (one per prompt when the harness takes one prompt per process) with `env`; the session
    file is the newest `*.jsonl` under `session_dir`, imported by `importer` (a module with
    `load(path) -> list[Session]`, readbench.sessions). `shell_reads`: file reads through the shell
    count as reads (a harness with no read tool: Codex); `context_prefixes`: how the user messages
    the harness sends as context (not prompts) begin (Codex's `<environment_context>`, ...)."""

    files: dict[str, str]
    runs: list[list[str]]
    env: dict[str, str]
    session_dir: str
    importer: str
    shell_reads: bool = False
    context_prefixes: tuple[str, ...] = ()


def launch(harness: str, given: LaunchInput) -> Launch:
    """The `Launch` of `harness` for one sample.

    Raises:
        ValueError: readbench has no launcher for `harness` (named), or the launcher refuses
            the arm (e.g. a read preset its extension point cannot express).
    """
    if harness not in LAUNCHERS:
        raise ValueError(f"readbench cannot start harness {harness!r} in the sandbox yet; it starts: "
                         f"{', '.join(LAUNCHERS)}")
    module, _, name = LAUNCHERS[harness].partition(":")
    function: Callable[[LaunchInput], Launch] = getattr(importlib.import_module(module), name)
    return function(given)
