"""The provider-neutral request model: blocks, requests, chained prefix hashes, positions.

shared/specs/caching.md §8.1. A request is the ordered list of blocks the provider renders
(tools -> system -> messages, §1.1). Every block carries the tokens it adds and a hash of
the exact bytes sent; the prefix ending at block i is identified by the chained hash
h_i = H(h_{i-1} || content_hash_i), so any change at block p changes every h_i with i >= p
and the invalidation hierarchy of §1.4 falls out of prefix hashing.
"""

from __future__ import annotations

import hashlib
from dataclasses import dataclass, field

__all__ = [
    "BLOCK_KINDS",
    "ROLES",
    "Block",
    "PreparedRequest",
    "PrefixChainer",
    "Request",
    "content_hash",
]

#: Block kinds (§8.1). `params` is a virtual zero-token block for request settings that the
#: provider renders into the prefix; it has no position of its own.
BLOCK_KINDS = frozenset(
    {"tool_def", "system", "text", "image", "tool_use", "tool_result", "thinking", "params"}
)
#: Roles: `tools` (tool definitions), `system`, `user` (user text and tool results), `assistant`.
ROLES = frozenset({"tools", "system", "user", "assistant"})
#: Kinds whose consecutive runs count as one lookback position on Anthropic (§1.1).
COLLAPSING_KINDS = frozenset({"tool_use", "tool_result"})

_DIGEST_BYTES = 16


def content_hash(*parts: str | bytes) -> bytes:
    """16-byte BLAKE2b digest of `parts`, each length-prefixed so boundaries are unambiguous.

    Callers pass the exact serialized bytes of a block (e.g. the JSON of tool arguments in the
    order they were sent: key order breaks caches, §1.4), never a canonicalised form.
    """
    h = hashlib.blake2b(digest_size=_DIGEST_BYTES)
    for part in parts:
        data = part.encode("utf-8", "surrogatepass") if isinstance(part, str) else part
        h.update(len(data).to_bytes(8, "little"))
        h.update(data)
    return h.digest()


@dataclass(frozen=True, slots=True)
class Block:
    """One rendered block of a request.

    Attributes:
        kind: one of `BLOCK_KINDS`.
        role: one of `ROLES`.
        tokens: input tokens the block adds (>= 0; `params` blocks have 0).
        content_hash: digest of the exact serialized bytes (see `content_hash`).
        ends_message: True for the last block of a chat message (used by OpenAI's implicit
            breakpoints, §2.2, and DeepSeek's end-of-output units, §4).
    """

    kind: str
    role: str
    tokens: int
    content_hash: bytes
    ends_message: bool = True

    def __post_init__(self) -> None:
        if self.kind not in BLOCK_KINDS:
            raise ValueError(f"block kind {self.kind!r} not in {sorted(BLOCK_KINDS)}")
        if self.role not in ROLES:
            raise ValueError(f"block role {self.role!r} not in {sorted(ROLES)}")
        if not isinstance(self.tokens, int) or self.tokens < 0:
            raise ValueError(f"block tokens must be an int >= 0, got {self.tokens!r}")
        if self.kind == "params" and self.tokens != 0:
            raise ValueError(f"params blocks are virtual and carry 0 tokens, got {self.tokens}")


@dataclass(frozen=True)
class Request:
    """One model call as the cache sees it.

    Attributes:
        blocks: the rendered blocks in provider order.
        ts_start_seconds: when the request started (s; TTLs count from here, §1.3).
        ts_first_token_seconds: when the first output token arrived (s; a new entry becomes
            readable then, §1.1). Must be >= ts_start_seconds.
        output_tokens: generated tokens (>= 0).
        breakpoints: explicit cache breakpoints as block indices, or None to let the cache
            model's placement policy choose (for Anthropic: pi's placement, §9).
    """

    blocks: tuple[Block, ...]
    ts_start_seconds: float
    ts_first_token_seconds: float
    output_tokens: int
    breakpoints: tuple[int, ...] | None = None

    def __post_init__(self) -> None:
        if self.ts_first_token_seconds < self.ts_start_seconds:
            raise ValueError(
                f"ts_first_token_seconds ({self.ts_first_token_seconds}) precedes "
                f"ts_start_seconds ({self.ts_start_seconds})"
            )
        if not isinstance(self.output_tokens, int) or self.output_tokens < 0:
            raise ValueError(f"output_tokens must be an int >= 0, got {self.output_tokens!r}")
        if self.breakpoints is not None:
            n = len(self.blocks)
            for b in self.breakpoints:
                if not 0 <= b < n:
                    raise ValueError(f"breakpoint {b} outside the request's {n} blocks")
            if list(self.breakpoints) != sorted(set(self.breakpoints)):
                raise ValueError(f"breakpoints must be strictly increasing, got {self.breakpoints}")


@dataclass(frozen=True)
class PreparedRequest:
    """A request with its chained prefix hashes, cumulative tokens and positions.

    Attributes:
        request: the request.
        hashes: hashes[i] identifies the prefix ending with block i.
        cum_tokens: cum_tokens[i] = tokens of blocks 0..i (T_i of §8.1).
        position_ends: block index ending each Anthropic lookback position, in order: every
            non-params block is a position, except that a run of consecutive tool_use (or of
            consecutive tool_result) blocks is one position ending at its last block (§1.1).
        position_of: position_of[i] = index into position_ends of the position holding block i
            (a params block belongs to the position of the next real block).
    """

    request: Request
    hashes: tuple[bytes, ...]
    cum_tokens: tuple[int, ...]
    position_ends: tuple[int, ...]
    position_of: tuple[int, ...] = field(repr=False)

    @property
    def total_tokens(self) -> int:
        """Total input tokens of the request (0 for an empty request)."""
        return self.cum_tokens[-1] if self.cum_tokens else 0


def _positions(blocks: tuple[Block, ...]) -> tuple[tuple[int, ...], tuple[int, ...]]:
    ends: list[int] = []
    position_of = [0] * len(blocks)
    pending: list[int] = []  # params blocks waiting for their position
    prev_kind: str | None = None
    for i, b in enumerate(blocks):
        if b.kind == "params":
            pending.append(i)
            continue
        if ends and b.kind in COLLAPSING_KINDS and b.kind == prev_kind and not pending:
            ends[-1] = i  # extend the run
        else:
            ends.append(i)
        for j in pending:
            position_of[j] = len(ends) - 1
        pending.clear()
        position_of[i] = len(ends) - 1
        prev_kind = b.kind
    for j in pending:  # trailing params blocks: a position of their own
        ends.append(j)
        position_of[j] = len(ends) - 1
    return tuple(ends), tuple(position_of)


class PrefixChainer:
    """Computes `PreparedRequest`s, reusing the hash chain of the previous request.

    Consecutive requests of an agent loop share most of their blocks; only the blocks after the
    first difference are re-hashed, so preparing n requests of b blocks costs O(new blocks)
    hashing each, not O(b).
    """

    def __init__(self) -> None:
        self._blocks: tuple[Block, ...] = ()
        self._hashes: list[bytes] = []
        self._cum: list[int] = []

    def prepare(self, request: Request) -> PreparedRequest:
        """Return `request` with hashes, cumulative tokens and positions (see PreparedRequest)."""
        blocks = request.blocks
        prev = self._blocks
        k = 0
        limit = min(len(blocks), len(prev))
        while k < limit and (
            blocks[k] is prev[k]
            or (
                blocks[k].content_hash == prev[k].content_hash
                and blocks[k].tokens == prev[k].tokens
            )
        ):
            k += 1
        hashes = self._hashes[:k]
        cum = self._cum[:k]
        h = hashes[-1] if hashes else b""
        t = cum[-1] if cum else 0
        blake = hashlib.blake2b
        for b in blocks[k:]:
            h = blake(h + b.content_hash, digest_size=_DIGEST_BYTES).digest()
            t += b.tokens
            hashes.append(h)
            cum.append(t)
        self._blocks, self._hashes, self._cum = blocks, hashes, cum
        ends, position_of = _positions(blocks)
        return PreparedRequest(request, tuple(hashes), tuple(cum), ends, position_of)
