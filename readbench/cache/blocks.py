"""The provider-neutral request model: blocks, requests, chained prefix hashes, positions.

docs/specs/caching.md §8.1. A request is the ordered list of blocks the provider renders
(tools -> system -> messages, §1.1). Every block carries the tokens it adds and a hash of
the exact bytes sent; the prefix ending at block i is identified by the chained hash
h_i = H(h_{i-1} || content_hash_i), so any change at block p changes every h_i with i >= p
and the invalidation hierarchy of §1.4 falls out of prefix hashing.
"""

from __future__ import annotations

import hashlib
import itertools
import operator
from dataclasses import dataclass, field

import xxhash

__all__ = [
    "BLOCK_KINDS",
    "ROLES",
    "Block",
    "PreparedRequest",
    "PrefixChainer",
    "Request",
    "chain_hashes",
    "chain_step",
    "content_hash",
    "lookback_candidates",
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

#: One step of the prefix chain, ``chain_step(h_prev + content_hash) -> h`` (16 bytes): XXH3-128
#: (PyPI ``xxhash``). caching.md §8.1 asks only for ``h_i = H(h_{i-1}, block_i)``: a prefix hash is
#: an identity among the prefixes one simulation sees, never stored or shown, so it needs no
#: cryptographic strength, only 128 bits against accidental collisions (about n^2 / 2^129 for n
#: prefixes). The step runs once per new block of every request of every arm and cache-model
#: family; BLAKE2b-128 took ~1.1 us a step against ~0.1 us (2026-12-07, 2 cores at load ~2), ~1.2
#: CPU s of a 453-call recorded pi session's replay (`--dcp all`, 5 cache models). Block contents
#: keep BLAKE2b (`content_hash`), computed once per distinct block.
chain_step = xxhash.xxh3_128_digest


def content_hash(*parts: str | bytes) -> bytes:
    """16-byte BLAKE2b digest of `parts`, framed unambiguously (the `repr` of the tuple).

    Callers pass the exact serialized bytes of a block (e.g. the JSON of tool arguments in the
    order they were sent: key order breaks caches, §1.4), never a canonicalised form.
    """
    return hashlib.blake2b(repr(parts).encode("utf-8", "surrogatepass"), digest_size=_DIGEST_BYTES).digest()


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
        prefix_hashes: optional precomputed chained hashes, one per block, equal to what
            `chain_hashes` computes (RequestBuilder supplies them so that simulating several
            tokenizer families does not re-hash); None = computed when prepared. Not part of
            equality.
        cum_tokens: optional precomputed cumulative tokens, one per block, equal to
            `PreparedRequest.cum_tokens` (used together with `prefix_hashes`: the request is then
            prepared without any work, `readbench.replay.requests.RequestSet` supplies both).
            Not part of equality.
    """

    blocks: tuple[Block, ...]
    ts_start_seconds: float
    ts_first_token_seconds: float
    output_tokens: int
    breakpoints: tuple[int, ...] | None = None
    prefix_hashes: tuple[bytes, ...] | None = field(default=None, compare=False, repr=False)
    cum_tokens: tuple[int, ...] | None = field(default=None, compare=False, repr=False)

    def __post_init__(self) -> None:
        if self.prefix_hashes is not None and len(self.prefix_hashes) != len(self.blocks):
            raise ValueError(
                f"prefix_hashes has {len(self.prefix_hashes)} entries for {len(self.blocks)} blocks"
            )
        if self.cum_tokens is not None and len(self.cum_tokens) != len(self.blocks):
            raise ValueError(f"cum_tokens has {len(self.cum_tokens)} entries for {len(self.blocks)} blocks")
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
    """A request with its chained prefix hashes and cumulative tokens.

    Attributes:
        request: the request.
        hashes: hashes[i] identifies the prefix ending with block i.
        cum_tokens: cum_tokens[i] = tokens of blocks 0..i (T_i of §8.1).
    """

    request: Request
    hashes: tuple[bytes, ...]
    cum_tokens: tuple[int, ...]

    @property
    def total_tokens(self) -> int:
        """Total input tokens of the request (0 for an empty request)."""
        return self.cum_tokens[-1] if self.cum_tokens else 0


def lookback_candidates(blocks: tuple[Block, ...], index: int, positions: int) -> list[int]:
    """Block indices an Anthropic read checks from a breakpoint at `index` (§1.1, §8.2 step 2).

    The breakpoint's own block first, then the last block of each earlier position, newest
    first, `positions` positions in all (20 on the Claude API). Every block is a position,
    except that a run of consecutive tool_use blocks, or of consecutive tool_result blocks,
    is one position; virtual params blocks are not positions.

    Raises:
        IndexError: `index` outside `blocks`.
    """
    if not 0 <= index < len(blocks):
        raise IndexError(f"block index {index} outside {len(blocks)} blocks")
    out = [index]
    i = index
    while len(out) < positions:
        kind = blocks[i].kind
        if kind in COLLAPSING_KINDS:  # skip the rest of this run: same position
            while i > 0 and blocks[i - 1].kind == kind:
                i -= 1
        i -= 1
        while i >= 0 and blocks[i].kind == "params":
            i -= 1
        if i < 0:
            break
        out.append(i)
    return out


def _common_prefix(a: tuple[Block, ...], b: tuple[Block, ...]) -> int:
    """Length of the longest common prefix of two block tuples.

    Identical objects are found at C speed; after the first non-identical pair, equal blocks
    (same fields) still extend the prefix, compared one by one.
    """
    n = min(len(a), len(b))
    k = next(itertools.compress(itertools.count(), map(operator.is_not, a, b)), n)
    while k < n and a[k] == b[k]:
        k += 1
    return k


def _extend_hashes(blocks: tuple[Block, ...], k: int, prev_hashes: tuple[bytes, ...]) -> tuple[bytes, ...]:
    hashes = list(prev_hashes[:k])
    h = hashes[-1] if hashes else b""
    step = chain_step
    for b in blocks[k:]:
        h = step(h + b.content_hash)
        hashes.append(h)
    return tuple(hashes)


def chain_hashes(
    blocks: tuple[Block, ...], prev_blocks: tuple[Block, ...] = (), prev_hashes: tuple[bytes, ...] = ()
) -> tuple[bytes, ...]:
    """Chained prefix hashes h_i = H(h_{i-1} || content_hash_i) of `blocks` (§8.1), reusing
    `prev_hashes` (the hashes of `prev_blocks`) over the common prefix."""
    return _extend_hashes(blocks, _common_prefix(blocks, prev_blocks), prev_hashes)


_TOKENS = operator.attrgetter("tokens")


class PrefixChainer:
    """Computes `PreparedRequest`s, reusing the hash chain of the previous request.

    Consecutive requests of an agent loop share most of their blocks; only the blocks after the
    first difference are hashed and summed, so preparing a request costs O(new blocks) Python
    work (no hashing at all when the request carries `prefix_hashes`).
    """

    def __init__(self) -> None:
        self._blocks: tuple[Block, ...] = ()
        self._hashes: tuple[bytes, ...] = ()
        self._cum: tuple[int, ...] = ()

    def prepare(self, request: Request) -> PreparedRequest:
        """Return `request` with its chained hashes and cumulative tokens."""
        blocks = request.blocks
        if request.prefix_hashes is not None and request.cum_tokens is not None:
            self._blocks, self._hashes, self._cum = blocks, request.prefix_hashes, request.cum_tokens
            return PreparedRequest(request, request.prefix_hashes, request.cum_tokens)
        k = _common_prefix(blocks, self._blocks)
        if request.prefix_hashes is not None:
            hashes = request.prefix_hashes
        else:
            hashes = _extend_hashes(blocks, k, self._hashes)
        start = self._cum[k - 1] if k else 0
        cum = self._cum[:k] + tuple(itertools.accumulate(map(_TOKENS, blocks[k:]), initial=start))[1:]
        self._blocks, self._hashes, self._cum = blocks, hashes, cum
        return PreparedRequest(request, hashes, cum)
