"""pi-dcp `purgeErrors` (docs/specs/dcp.md §2.2, `strategies/purge-errors.ts`).

For an errored tool result (`isError`) that is not protected, whose turnAge >= minTurnAge and
which is not already a `[DCP:` placeholder: concatenate its text blocks until the text is longer
than 200 chars, keep the first line cut to 150 chars, and replace the content with
`[DCP: Stale error payload minimized.]\\n<firstLine>...`. With default turn protection (8 turns)
every message of a single-prompt session has turnAge 0, so this never fires there.
"""

from __future__ import annotations

from inspect_ai.model import ChatMessageTool

from readbench.base.js import utf16_head, utf16_len
from readbench.dcp._pidcp_run import PiDcpRun, estimate_tokens, is_dcp_placeholder
from readbench.dcp._strategy import DcpStrategy
from readbench.dcp._view import blocks, is_error

__all__ = ["STRATEGY", "PREFIX", "apply", "first_line"]

PREFIX = "[DCP: Stale error payload minimized.]\n"
NAME = "purgeErrors"


def first_line(content: object) -> str:
    """Text kept from an error payload: first line of the first >200 chars, at most 150 chars."""
    summary = ""
    for kind, text in blocks(content):
        if kind == "text":
            summary += text
            if utf16_len(summary) > 200:
                break
    return utf16_head(summary.split("\n")[0], 150)


def apply(run: PiDcpRun) -> None:
    """Minimise stale error payloads, oldest first."""
    view = run.view
    for pos in range(len(view)):
        msg = view.current(pos)
        if not isinstance(msg, ChatMessageTool):  # role "toolResult"
            continue
        if not is_error(msg):
            continue
        prot = run.protection(pos)
        if run.check(NAME, prot):
            continue
        if prot.turn_age < run.params.min_turn_age:
            run.skip(NAME, "recent")
            continue
        if is_dcp_placeholder(msg.content):
            run.skip(NAME, "other")
            continue
        run.record(NAME, estimate_tokens(msg.content))
        view.set_result_text(pos, f"{PREFIX}{first_line(msg.content)}...")


STRATEGY = DcpStrategy(NAME, "pi-dcp", "PSU3D0/pi-dcp 8d15a33 strategies/purge-errors.ts (dcp.md §2.2)", apply,
                       PREFIX.rstrip("\n"), flag="purge_errors", incremental="readbench.dcp._fast_pidcp:PiSeq")
