"""Observation masking, SWE-agent's `LastNObservations` history processor (anchors.md §1:
"last-5 observations collapsed" = 18.0% vs 15.0% full history on SWE-bench Lite).

The newest `keep_last` tool results are kept verbatim; every older one is replaced by
`Old environment output: (<N> lines omitted)` (SWE-agent's text; N = line count of the original
text, so a masked message's text never changes again), plus ` (<K> images omitted)` when it
had images. Stateless; user prompts and assistant messages are never touched.
"""

from __future__ import annotations

from readbench.dcp._params import ObsMaskParams
from readbench.dcp._strategy import DcpStrategy
from readbench.dcp._view import PiView, blocks, text_of

__all__ = ["STRATEGY", "STRATEGY_ID", "apply", "placeholder"]

STRATEGY_ID = "obsMask"


def line_count(text: str) -> int:
    """`len(text.splitlines())` without building the lines: with no line boundary but `\\n`
    (none of `\\r`, `\\v`, `\\f`, `\\x1c`-`\\x1e`, `\\x85`, `\\u2028`, `\\u2029`), it is the number
    of `\\n` plus one for an unterminated last line (tool output is plain text: the usual case)."""
    if ("\r" in text or "\x0b" in text or "\x0c" in text or "\x1c" in text or "\x1d" in text or "\x1e" in text
            or "\x85" in text or "\u2028" in text or "\u2029" in text):
        return len(text.splitlines())
    return text.count("\n") + (1 if text and text[-1] != "\n" else 0)


def placeholder(params: ObsMaskParams, content: object) -> str:
    """Masked text for a result with `content`."""
    lines = line_count(text_of(content))
    images = sum(1 for kind, _ in blocks(content) if kind == "image")
    text = params.placeholder.format(lines=lines)
    return f"{text} ({images} images omitted)" if images else text


def apply(view: PiView, params: ObsMaskParams) -> list[int]:
    """Mask all but the newest `keep_last` tool results; returns the masked view positions."""
    results = [p for p in range(len(view)) if view.role(p) == "toolResult"]
    cut = max(0, len(results) - params.keep_last)
    masked = results[:cut]
    for pos in masked:
        view.set_result_text(pos, placeholder(params, view.original(pos).content))
    return masked


STRATEGY = DcpStrategy(STRATEGY_ID, "obs-mask", "SWE-agent LastNObservations (anchors.md §1)", apply,
                       "Old environment output: (", incremental="readbench.dcp._fast_obs:ObsSeq")
