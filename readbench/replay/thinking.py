"""The size of reasoning a recorded session keeps only as a signature (issue 22).

Claude Code writes most thinking blocks with empty text and a signature (78 % of them in the real
files, sessions.md §7), and Codex most reasoning items with an empty summary and encrypted content;
the model received the whole reasoning when the harness sent the block back (caching.md §1.1:
thinking blocks "count as input tokens when read"), so readbench's count of 0 undercounts every
later request. One real Claude Code session (Opus 4.8, 181 responses, 413k output tokens of which
~70k are recorded text and tool calls) was billed 590k prompt tokens at its end where the recorded
blocks counted 340k.

`thinking_sizes` sizes such a block from its response's bill: the recorded reasoning tokens
(Codex's `reasoning_output_tokens`), else the output tokens minus readbench's count of the
response's recorded text and tool calls, shared equally among the response's signed empty
thinking blocks. `RequestSet` then gives those blocks that many tokens wherever they are sent
(after the provider's own dropping of earlier turns' reasoning, models.csv `earlier_reasoning`).
"""

from __future__ import annotations

import json
from typing import TYPE_CHECKING

from inspect_ai.model import ContentReasoning, ContentText

from readbench.cache.blocks import Block, content_hash
from readbench.cache.tokenizer import o200k_tokens, scale_tokens
from readbench.replay.prefix import identical_prefix, salted

if TYPE_CHECKING:
    from readbench.sessions import Session

__all__ = ["EarlierReasoning", "thinking_sizes"]

#: The salt of the markers that stand for dropped earlier-turn reasoning blocks (never a break epoch).
_DROPPED_SALT = 2**31 - 1


def _signed_empty(c: ContentReasoning) -> bool:
    return not (c.reasoning or "").strip() and bool((c.signature or "").strip()) and not c.redacted


def thinking_sizes(session: Session, family: str) -> dict[bytes, int]:
    """Block content hash (as `readbench.cache.adapter` hashes a thinking block) -> tokens, in
    tokenizer `family`'s scale, for every signed empty thinking block of a billed response of
    `session` (module docstring). Responses without usage or output are skipped.

    Raises:
        ValueError: unknown tokenizer family.
    """
    out: dict[bytes, int] = {}
    for call in session.calls:
        msg, u = call.output, call.usage
        if msg is None or u is None or isinstance(msg.content, str):
            continue
        empty = [c for c in msg.content if isinstance(c, ContentReasoning) and _signed_empty(c)]
        if not empty:
            continue
        if u.reasoning_tokens is not None:
            think = u.reasoning_tokens
        else:
            other = sum(o200k_tokens(c.text) for c in msg.content if isinstance(c, ContentText))
            other += sum(o200k_tokens(t.function + json.dumps(t.arguments, ensure_ascii=False, separators=(",", ":")))
                         for t in msg.tool_calls or ())
            think = u.output_tokens - scale_tokens(other, family)
        each = max(int(think), 0) // len(empty)
        for c in empty:
            out[content_hash("thinking", c.reasoning or "", c.signature or "", str(c.redacted))] = each
    return out


class EarlierReasoning:
    """Removes the reasoning of earlier turns from one request set's calls, as a provider that
    drops it does (models.csv `earlier_reasoning`; `readbench.replay.requests`): the thinking
    blocks before the last plain user message (text or image from the user: a tool result does
    not start a turn) are left out; a dropped block that ended its message is replaced by its
    0-token marker (one object per dropped block, so calls share it).

    Calls are taken in order and each is worked out from the previous one over their identical
    prefix of blocks (one scan per user turn, not per call).

    Args:
        raw_ids: the set's ids of blocks whose tokens are not calibrated; each marker's is added.
    """

    def __init__(self, raw_ids: set[int]) -> None:
        self._raw_ids = raw_ids
        self._markers: dict[int, tuple[Block, Block]] = {}  # id(dropped thinking block) -> (it, its marker)
        # the previous call's (blocks, last plain user block, `_dropped` of them, what it returned)
        self._prev: tuple[tuple[Block, ...], int | None, tuple[Block, ...] | None, tuple[Block, ...]] | None = None
        #: the length of the identical prefix of what the latest call returned and what the call
        #: before it returned, when it is known without a scan (else None)
        self.same: int | None = None

    def __call__(self, blocks: tuple[Block, ...],
                 shared: tuple[tuple[Block, ...], int] | None = None) -> tuple[Block, ...]:
        """`blocks` without the earlier turns' reasoning (`blocks` itself when there is none).

        `shared`: (other blocks, the length of their identical prefix with `blocks`) when the caller
        knows it (`RequestSet` does, from the builder's `prefix_hint`); used when the other blocks
        are the previous call's, which then are not scanned again."""
        prev = self._prev
        if prev is None:
            p = 0
        elif shared is not None and shared[0] is prev[0]:
            p = shared[1]
        else:
            p = identical_prefix(blocks, prev[0])
        last = _last_user_turn(blocks, p)
        if last is None and prev is not None and (prev[1] is None or prev[1] < p):
            last = prev[1]  # no new user message: the previous call's last one (or none) still is
        elif last is None and p:
            last = _last_user_turn(blocks, 0)
        reused = prev is not None and last is not None and last == prev[1] and p >= last
        if reused:
            assert prev is not None
            head = prev[2]  # the same blocks up to the same last user message
        else:
            head = self._dropped(blocks, last)
        out = blocks if head is None or last is None else head + blocks[last:]
        self.same = None
        if prev is not None:
            if out is blocks and prev[3] is prev[0]:
                self.same = p  # nothing dropped from either call
            elif reused and head is not None:
                assert last is not None
                self.same = len(head) + p - last  # both are `head` + their blocks from `last` on
        self._prev = (blocks, last, head, out)
        return out

    def _dropped(self, blocks: tuple[Block, ...], last: int | None) -> tuple[Block, ...] | None:
        """`blocks[:last]` with the thinking blocks dropped or replaced by their markers; None
        when there is none to drop."""
        if last is None or not any(b.kind == "thinking" for b in blocks[:last]):
            return None
        out: list[Block] = []
        for b in blocks[:last]:
            if b.kind != "thinking":
                out.append(b)
            elif b.ends_message:
                hit = self._markers.get(id(b))
                if hit is None or hit[0] is not b:
                    marker = Block("thinking", b.role, 0, salted(b.content_hash, _DROPPED_SALT), True)
                    hit = self._markers[id(b)] = (b, marker)
                    self._raw_ids.add(id(marker))
                out.append(hit[1])
        return tuple(out)


def _last_user_turn(blocks: tuple[Block, ...], start: int) -> int | None:
    """Index of the last plain user block (text or image) at or after `start`; None when none is."""
    return next((j for j in range(len(blocks) - 1, start - 1, -1)
                 if blocks[j].role == "user" and blocks[j].kind in ("text", "image")), None)
