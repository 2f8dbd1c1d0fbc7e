"""The second cache figure of a bridged run (GitHub issue 24 item 3; agents.md §1): the relayed
requests priced under the harness's own cache-breakpoint placement and under the placement the
bridge's provider actually used.

inspect's sandbox agent bridge does not pass a harness's `cache_control` markers on: the requests
reach the provider with inspect's own. The same relayed requests (readbench.cache.adapter
`CallRecord`s, as the per-call record holds them) are simulated by readbench's Anthropic cache model
(readbench.cache.policies.anthropic) under two placements, each a callable over the rendered blocks:

- `claude_code_breakpoints`, Claude Code 2.1.332's own (probed: its raw Messages requests recorded
  at a local endpoint, notes/claude.md): the system prompt's 2nd and 3rd text blocks (its identity
  line and its prompt; the 1st, the billing-header line, is unmarked), no tool, and the last block
  of the last message when it is a user text or tool_result block (the prompt, then the newest tool
  result), 5-minute TTL, no top-level automatic caching;
- `inspect_breakpoints`, inspect 0.3.285's Anthropic provider (`resolve_chat_input`,
  `add_lookback_cache_control`, and `request["cache_control"]`): the last system block, the last
  tool, the second-to-last cacheable message block, plus automatic caching (the last cacheable block).

Keys, for each Anthropic-family cache model `m` of the run: `harness_cost_usd_{m}` and
`harness_cache_read_ratio_{m}` (the harness's placement), `bridge_cost_usd_{m}` and
`bridge_cache_read_ratio_{m}` (the bridge's); not `cost_usd_*`-prefixed, which names a cache model
(readbench.analysis.table.cache_models_in). The plain `cost_usd_{m}` stays readbench's default
placement (pi's client), the loop's figure, so arms of every agent compare on one placement.
"""

from __future__ import annotations

from collections.abc import Callable, Sequence
from typing import Any

from readbench.cache.blocks import Block
from readbench.cache.policies.anthropic import pi_breakpoints

__all__ = ["PLACEMENTS", "claude_code_breakpoints", "inspect_breakpoints", "placement_metrics"]

_LAST_KINDS = frozenset({"text", "image", "tool_result"})
_UNCACHEABLE = frozenset({"thinking", "params"})


def _tier(blocks: Sequence[Block], kind: str) -> list[int]:
    return [i for i, b in enumerate(blocks) if b.kind == kind and b.role in ("tools", "system")]


def claude_code_breakpoints(blocks: Sequence[Block]) -> tuple[int, ...]:
    """Block indices Claude Code 2.1.332 marks (module docstring); increasing."""
    system = _tier(blocks, "system")
    out = system[1:3] if len(system) >= 3 else system[-1:]
    if blocks and blocks[-1].role == "user" and blocks[-1].kind in _LAST_KINDS and len(blocks) - 1 not in out:
        out = [*out, len(blocks) - 1]
    return tuple(sorted(out))


def inspect_breakpoints(blocks: Sequence[Block]) -> tuple[int, ...]:
    """Block indices inspect's Anthropic provider marks (module docstring), automatic caching's
    last cacheable block included; increasing, at most 4."""
    out = set(_tier(blocks, "system")[-1:] + _tier(blocks, "tool_def")[-1:])
    cacheable = [i for i, b in enumerate(blocks) if b.role in ("user", "assistant") and b.kind not in _UNCACHEABLE
                 and b.tokens > 0]
    out.update(cacheable[-2:])  # the second-to-last (lookback write) and the last (automatic)
    return tuple(sorted(out))


PLACEMENTS: dict[str, Callable[[Sequence[Block]], Sequence[int]]] = {
    "pi": pi_breakpoints,  # = readbench's default placement: its harness figure equals cost_usd_{m}
    "claude-code": claude_code_breakpoints,
}
"""Harness name -> its own placement (a harness without one gets no `harness` figure)."""


def placement_metrics(calls: list[Any], cache_models: list[str], harness: str) -> dict[str, float]:
    """The harness's and the bridge's placement figures (module docstring) for `calls` (the
    relayed requests, `CallRecord`s in start order).

    Raises:
        ValueError: as readbench.cache.simulate (unknown cache or priced model).
    """
    from readbench.cache.adapter import RequestBuilder
    from readbench.cache.calibration import token_fit
    from readbench.cache.prices import get_model_spec
    from readbench.cache.registry import CACHE_MODELS
    from readbench.cache.simulate import simulate

    placements: dict[str, Callable[[Sequence[Block]], Sequence[int]]] = {"bridge": inspect_breakpoints}
    if harness in PLACEMENTS:
        placements["harness"] = PLACEMENTS[harness]
    out: dict[str, float] = {}
    builder = RequestBuilder()
    for m in cache_models:
        cm = CACHE_MODELS.get(m)
        if cm.family != "anthropic":
            continue
        spec = get_model_spec(cm.default_priced_model)
        fit = token_fit(spec.model, spec.tokenizer)
        requests = [builder.build(c, spec.tokenizer, (fit.a, fit.b) if fit is not None else None) for c in calls]
        for label, placement in placements.items():
            res = simulate(requests, m, cm.default_priced_model, placement=placement)
            out[f"{label}_cost_usd_{m}"] = res.cost_usd
            out[f"{label}_cache_read_ratio_{m}"] = res.cache_read_ratio
    return out
