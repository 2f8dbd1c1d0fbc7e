"""Several DCP configurations projected over one call sequence, in call order, sharing work.

The session replay (docs/specs/dcp.md §7.5: project the prefix at every call boundary, carrying
the sticky state; `readbench.replay.dcp_cache`) runs every configuration over the same recorded
requests. Threading `project` once per configuration computes pi-dcp's per-message facts once per
pi-dcp configuration, although they depend on only four of its parameters (`PiColumns.key`).
`project_calls` walks the calls once and, at each call, projects it under every configuration:
the pi-dcp configurations that agree on `PiColumns.key` share one `PiColumns` per history, synced
once per call, and each runs only its own evaluation (`PiSeq.catch_up`, `PiSeq.run`). The other
families, and every call the fast path does not cover, go through `project` itself, each with its
own `ProjectionCache` and sticky state.

Same results as threading `project(requests[i], config, state=, usage=usages[i], cwd=cwd,
cache=ProjectionCache(max_histories=4))` per configuration: the same fast-path code on the same
histories, and a history is recognised as `ProjectionCache` recognises it (its first two message
objects, and a list that starts with the messages consumed so far); which sequences a cache keeps
never changes a result (`readbench.dcp._cache`). tests/dcp/test_dcp_many.py checks it.
"""

from __future__ import annotations

from collections import OrderedDict
from dataclasses import dataclass, field
from typing import Any

from inspect_ai.model import ChatMessage

from readbench.dcp._cache import ProjectionCache
from readbench.dcp._fast_picols import PiColumns
from readbench.dcp._fast_pidcp import PiSeq
from readbench.dcp._params import PiDcpParams
from readbench.dcp._pidcp import running_strategies
from readbench.dcp._pressure import compute_band
from readbench.dcp._project import _PI_FAST, _fast, _resolve, project, project_reference
from readbench.dcp._types import ContextUsage, DcpState
from readbench.dcp.configs import DcpConfig

__all__ = ["ProjectedCalls", "project_calls"]

_HISTORIES = 4
"""Histories kept (least recently used dropped), as the replay's per-configuration caches."""


@dataclass
class ProjectedCalls:
    """One configuration over a call sequence: per call, what the replay reads of its `Projection`."""

    messages: list[list[ChatMessage]] = field(default_factory=list)
    """`Projection.messages` of each call."""
    pruned_items: list[int] = field(default_factory=list)
    """`ProjectionStats.pruned_items` of each call."""
    footer_tokens_saved: list[int] = field(default_factory=list)
    """`ProjectionStats.footer_tokens_saved` of each call."""

    def append(self, messages: list[ChatMessage], pruned: int, saved: int) -> None:
        """Record one call."""
        self.messages.append(messages)
        self.pruned_items.append(pruned)
        self.footer_tokens_saved.append(saved)


class _History:
    """The shared pi-dcp columns of one history (per `PiColumns.key`) and each configuration's `PiSeq`."""

    def __init__(self, pi: dict[str, PiDcpParams], messages: list[ChatMessage]) -> None:
        self.cols: dict[tuple[Any, ...], PiColumns] = {}
        self.seqs: dict[str, PiSeq] = {}
        for name, params in pi.items():
            key = PiColumns.key(params)
            cols = self.cols.get(key)
            if cols is None:
                cols = self.cols[key] = PiColumns(params)
                cols.sync(messages)
            self.seqs[name] = PiSeq(params, cols)

    def sync(self, messages: list[ChatMessage]) -> bool:
        """Consume the new tail (False: `messages` does not extend this history; nothing consumed)."""
        return all(cols.sync(messages) for cols in self.cols.values())


def project_calls(
    requests: list[list[ChatMessage]],
    configs: list[DcpConfig | str | dict[str, Any]],
    usages: list[ContextUsage | None],
    *,
    cwd: str | None = None,
) -> dict[str, ProjectedCalls]:
    """Project `requests` (one message list per call, in call order) under every configuration.

    Args:
        requests: each call's full history (docs/specs/dcp.md §7.5).
        configs: configurations as `project` takes them; the result is keyed by their names.
        usages: pi's context usage before each call (`readbench.dcp.pi_context_usage`), or None.
        cwd: the agent's working directory, as `project`'s `cwd`.

    Returns:
        configuration name -> its projection of each call (module docstring: equal to threading
        `project` per configuration).

    Raises:
        ValueError: a bad configuration (`get_config`).
    """
    cfgs = {}
    for spec in configs:
        cfg = _resolve(spec, cwd)
        cfgs[cfg.name] = cfg
    pi = {name: cfg.params for name, cfg in cfgs.items() if isinstance(cfg.params, PiDcpParams)}
    out = {name: ProjectedCalls() for name in cfgs}
    states = {name: DcpState() for name in cfgs}
    caches = {name: ProjectionCache(max_histories=_HISTORIES) for name in cfgs}
    ran_of: dict[tuple[str, str], tuple[tuple[str, ...], bool]] = {}
    histories: OrderedDict[tuple[int, int | None], _History] = OrderedDict()
    for messages, usage in zip(requests, usages):
        history: _History | None = None
        if pi and messages:
            key = (id(messages[0]), id(messages[1]) if len(messages) > 1 else None)
            history = histories.get(key)
            if history is None or not history.sync(messages):
                history = histories[key] = _History(pi, messages)
            histories.move_to_end(key)
            while len(histories) > _HISTORIES:
                histories.popitem(last=False)
        for name, cfg in cfgs.items():
            params = cfg.params
            if history is not None and isinstance(params, PiDcpParams):
                band, _ = compute_band(params, usage)
                hit = ran_of.get((name, band))
                if hit is None:
                    running = running_strategies(params, band)
                    hit = ran_of[(name, band)] = (tuple(s.name for s in running), _fast(running, _PI_FAST))
                ran, fast = hit
                seq = history.seqs[name]
                seq.catch_up()
                if fast and seq.ok and (seq.sw.ok or "supersedeWrites" not in ran):
                    res = seq.run(ran)
                    out[name].append(res.messages, sum(res.pruned[k] for k in ran), res.tokens_saved)
                    continue
                proj = project_reference(messages, cfg, state=states[name], usage=usage)
            else:
                proj = project(messages, cfg, state=states[name], usage=usage, cache=caches[name])
            states[name] = proj.state
            out[name].append(proj.messages, proj.stats.pruned_items, proj.stats.footer_tokens_saved)
    return out
