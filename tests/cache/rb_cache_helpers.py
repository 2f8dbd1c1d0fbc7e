"""Builders for hand-made requests in the cache tests (blocks with chosen tokens and labels)."""

from __future__ import annotations

from readbench.cache.blocks import Block, Request, content_hash

_ROLE = {"tool_def": "tools", "system": "system", "tool_use": "assistant", "thinking": "assistant"}


def blk(label: str, tokens: int, kind: str = "text", role: str | None = None, ends_message: bool = True) -> Block:
    """A block whose content identity is `label` (equal labels = byte-identical content)."""
    r = role or _ROLE.get(kind, "user")
    return Block(kind, r, tokens, content_hash(kind, r, label), ends_message)


def req(blocks, ts: float, first: float | None = None, out: int = 0, breakpoints=None) -> Request:
    """A request starting at `ts` s whose first token arrives at `first` (default ts + 1 s)."""
    return Request(tuple(blocks), ts, ts + 1.0 if first is None else first, out, breakpoints)


def agent_turns(k: int, *, tools: int = 1000, system: int = 2000, user: int = 500, use: int = 100, result: int = 400, changed: frozenset[int] = frozenset()):
    """Blocks of an agent loop after k tool round trips: tool_def, system, user task, then
    (tool_use_j, tool_result_j) for j = 1..k. Results listed in `changed` carry other content."""
    out = [blk("tools", tools, "tool_def"), blk("system", system, "system"), blk("task", user, "text")]
    for j in range(1, k + 1):
        out.append(blk(f"use{j}", use, "tool_use"))
        out.append(blk(f"result{j}" + ("-changed" if j in changed else ""), result, "tool_result"))
    return out


def split(result):
    """[(read, write, uncached)] per request of a SimulationResult."""
    return [(r.cache_read_tokens, r.cache_write_tokens, r.uncached_input_tokens) for r in result.requests]
