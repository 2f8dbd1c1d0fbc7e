"""readbench.sim: the embedded simulated agent, an inspect-ai model provider (``readbench/<profile>``).

A deterministic behaviour model of a coding agent (docs/specs/sim-agent.md): it knows the
task's intent from the oracle in the sample store, sees only the message list it is sent, and
acts only on text visible there (the perception rule). Modules:

- ``profiles`` + ``profiles.toml``: the behaviour knobs, one table row per profile.
- ``observe`` / ``perception``: parse the input's tool results; what of a file is visible now.
- ``policy``: one decision per call (locate, read, act, test, finish); ``memory``: the plan state.
- ``provider``: ``SimAgentAPI`` (usage, simulated time, overflow, deterministic ids).
- ``calibrate``: per-profile reading behaviour on the corpus; ``_cli``: ``readbench sim ...``.

Importing this package imports nothing else (the provider is loaded by readbench._registry).
"""

__all__ = ["is_simulated"]


def is_simulated(model: str) -> bool:
    """True for readbench's embedded simulated agent, an inspect model string ``readbench/sim-*``
    (the run stage gives real models other defaults; the replay names it as having no bill)."""
    return model.startswith("readbench/sim-")
