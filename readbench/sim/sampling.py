"""Sampled mode of the simulated agent: ``temperature > 0`` makes every model call draw afresh.

docs/specs/sim-agent.md keys every decision by (task, epoch, profile) and never by the arm, so two
arms of one task and epoch draw the same value in the same situation (paired by construction) and
two runs of one arm follow the same trajectory byte for byte. A real model sampled at a
temperature above 0 does neither: each call is a fresh sample. GitHub issue 25 item 4 needs that
behaviour to check that a forked run's per-arm marginals match an independent run's when the
forks' continuations are NOT coupled to the trunk's.

How the temperature reaches the provider: inspect's `GenerateConfig` (a matrix's ``generate:``
section, ``temperature`` 0-2 and ``seed`` an integer, readbench.run.settings; or
``inspect eval --temperature T --seed S``; or ``eval(..., temperature=T, seed=S)``) is merged by
inspect's ``Model.generate`` into the config every ``ModelAPI.generate`` call receives, which
``SimAgentAPI.generate`` hands to ``generate_in_store``. ``readbench eval`` has no
``--temperature`` flag: set it in the matrix file.

Sampled mode (``config.temperature > 0``; its magnitude is not modelled, any positive value
samples fully): every call takes a fresh 16-hex-digit nonce and draws its decisions from
``Draws(sample seed | nonce)`` instead of ``Draws(sample seed)``; a mixture's profile is drawn with
the sample's first call's nonce. The nonce comes from

- ``os.urandom`` when ``config.seed`` is None (two runs never repeat);
- otherwise the n-th call of the process with that seed (counted over every sample and eval of
  the process, like the random state of a seeded model server) gets
  SHA-256(``sampled|<seed>|<n>``): a run is reproducible when its calls happen in the same order
  in a fresh process (one sample at a time; `reset_streams` restarts the count in tests).

Tool-call ids and the order of calls still derive from the sample seed (readbench.sim.memory):
they name calls, they decide nothing. With ``temperature`` unset or 0 nothing changes.
"""

from __future__ import annotations

import hashlib
import itertools
import os
import threading

from inspect_ai.model import GenerateConfig

from readbench.sim.draws import Draws

__all__ = ["call_draws", "call_nonce", "is_sampled", "reset_streams"]

_STREAMS: dict[int, itertools.count[int]] = {}
_LOCK = threading.Lock()


def is_sampled(config: GenerateConfig | None) -> bool:
    """True when ``config`` asks for sampling: a temperature above 0 (None or 0: greedy, seeded)."""
    return config is not None and config.temperature is not None and config.temperature > 0


def call_nonce(config: GenerateConfig | None) -> str | None:
    """The fresh nonce of one model call (16 hex digits), or None when not `is_sampled`.

    Each call of this function is one model call: with ``config.seed`` set it advances that
    seed's process-wide count (module docstring).
    """
    if not is_sampled(config):
        return None
    assert config is not None
    if config.seed is None:
        return os.urandom(8).hex()
    with _LOCK:
        n = next(_STREAMS.setdefault(config.seed, itertools.count()))
    return hashlib.sha256(f"sampled|{config.seed}|{n}".encode()).hexdigest()[:16]


def call_draws(seed: str, nonce: str | None) -> Draws:
    """The draws of one call: keyed by the sample ``seed`` alone (deterministic mode, ``nonce``
    None) or by ``seed`` and the call's ``nonce`` (sampled mode)."""
    return Draws(seed if nonce is None else f"{seed}|{nonce}")


def reset_streams() -> None:
    """Restart every seed's call count (a test that wants its seeded run to repeat exactly)."""
    with _LOCK:
        _STREAMS.clear()
