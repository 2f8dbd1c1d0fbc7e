"""pi-dcp `outputBodyReplace` (docs/specs/dcp.md §2.4, `strategies/output-replace.ts`).

A non-error tool result that is not protected, not already a `[DCP:` placeholder and whose size
(text UTF-16 units, plus minChars+1 per image block) is >= minChars is replaced whole by
`[DCP: Large output from <tool>(<argsSummary>...) pruned due to age (Turn <turnAge>). If you
need this data again, re-run the tool.]`, `argsSummary = JSON.stringify(args).slice(0, 100)` or
`unknown args`. The `(Turn N)` counter grows with every new user prompt, which rewrites every
earlier placeholder on the first call of each user turn (dcp.md §2.5); `turn_counter=False`
(configuration `pi-dcp-stable`) drops it.
"""

from __future__ import annotations

from inspect_ai.model import ChatMessageTool

from readbench.base.js import js_stringify, utf16_head
from readbench.dcp._pidcp_run import PiDcpRun, estimate_tokens, is_dcp_placeholder
from readbench.dcp._strategy import DcpStrategy
from readbench.dcp._view import blocks, is_error, text_chars, tool_name

__all__ = ["STRATEGY", "apply", "placeholder"]

NAME = "outputBodyReplace"


def placeholder(tool: str, args: object, turn_age: int, turn_counter: bool = True) -> str:
    """The replacement text; with `turn_counter=False` the ` (Turn N)` part is omitted."""
    summary = utf16_head(js_stringify(args), 100) if args is not None else "unknown args"
    turn = f" (Turn {turn_age})" if turn_counter else ""
    return (
        f"[DCP: Large output from {tool}({summary}...) pruned due to age{turn}. "
        "If you need this data again, re-run the tool.]"
    )


def apply(run: PiDcpRun) -> None:
    """Replace large aged outputs, oldest first."""
    view = run.view
    min_chars = run.params.min_chars
    for pos in range(len(view)):
        msg = view.current(pos)
        if not isinstance(msg, ChatMessageTool):  # role "toolResult"
            continue
        if is_error(msg):
            continue
        prot = run.protection(pos)
        if run.check(NAME, prot):
            continue
        if is_dcp_placeholder(msg.content):
            run.skip(NAME, "other")
            continue
        size = text_chars(msg.content) + sum(min_chars + 1 for kind, _ in blocks(msg.content) if kind == "image")
        if size < min_chars:
            run.skip(NAME, "other")
            continue
        run.record(NAME, estimate_tokens(msg.content))
        text = placeholder(tool_name(msg, view.call_names), run.args_of(msg.tool_call_id), prot.turn_age, run.params.turn_counter)
        view.set_result_text(pos, text)


STRATEGY = DcpStrategy(NAME, "pi-dcp", "PSU3D0/pi-dcp 8d15a33 strategies/output-replace.ts (dcp.md §2.4)", apply,
                       "[DCP: Large output from ", flag="output_body_replace",
                       incremental="readbench.dcp._fast_pidcp:PiSeq")
