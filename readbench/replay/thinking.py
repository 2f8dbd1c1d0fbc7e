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

from readbench.cache.blocks import content_hash
from readbench.cache.tokenizer import o200k_tokens, scale_tokens

if TYPE_CHECKING:
    from readbench.sessions import Session

__all__ = ["thinking_sizes"]


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
