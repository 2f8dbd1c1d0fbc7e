"""pi-dcp `supersedeWrites` (docs/specs/dcp.md §2.3, `strategies/supersede-writes.ts`).

Off by default and only at band >= high. Walk newest -> oldest: a `read` result adds its raw
`args.path` to the read set; for each `write`/`edit` call of an assistant message that is not
protected (subject `toolCall:<id>` plus the message's turn/step window) and whose
`path || file` is in the read set (a later read of the same string), every string field among
`content`, `text`, `oldText`, `newText` becomes `[DCP: Content superseded by later read]`.
Unsafe by design: a later partial read (offset/limit) still supersedes.
"""

from __future__ import annotations

from inspect_ai.model import ChatMessageTool

from readbench.base.js import utf16_len
from readbench.dcp._pidcp_run import PiDcpRun
from readbench.dcp._strategy import DcpStrategy
from readbench.dcp._view import calls_of, tool_name

__all__ = ["STRATEGY", "PLACEHOLDER", "FIELDS", "apply"]

PLACEHOLDER = "[DCP: Content superseded by later read]"
FIELDS = ("content", "text", "oldText", "newText")
NAME = "supersedeWrites"


def apply(run: PiDcpRun) -> None:
    """Replace superseded write/edit argument bodies."""
    view = run.view
    read_paths: set[object] = set()
    for pos in range(len(view) - 1, -1, -1):
        role = view.role(pos)
        if role == "toolResult":
            msg = view.current(pos)
            assert isinstance(msg, ChatMessageTool)
            args = run.args_of(msg.tool_call_id)
            if args is None:
                run.skip(NAME, "other")
                continue
            path = args.get("path")
            if tool_name(msg, view.call_names) == "read" and path:
                try:
                    read_paths.add(path)
                except TypeError:  # unhashable path value: JS Set.has would never match it
                    pass
            continue
        if role != "assistant":
            continue
        for call in calls_of(view.original(pos)):
            if call.function not in ("write", "edit"):
                continue
            if run.check(NAME, run.protection(pos, call.id)):
                continue
            args = dict(run.args_of(call.id) or {})
            path = args.get("path") or args.get("file")
            try:
                hit = bool(path) and path in read_paths
            except TypeError:
                hit = False
            if not hit:
                run.skip(NAME, "other")
                continue
            saved = 0
            for field in FIELDS:
                if isinstance(args.get(field), str):
                    saved += utf16_len(args[field]) // 4
                    args[field] = PLACEHOLDER
            # pi-dcp writes the placeholders even when they save 0 tokens, but then counts the
            # call as skipped ("other") rather than pruned.
            if args != run.args_of(call.id):
                view.set_call_arguments(pos, call.id, args)
            if saved > 0:
                run.record(NAME, saved)
            else:
                run.skip(NAME, "other")


STRATEGY = DcpStrategy(NAME, "pi-dcp", "PSU3D0/pi-dcp 8d15a33 strategies/supersede-writes.ts (dcp.md §2.3)", apply,
                       PLACEHOLDER, flag="supersede_writes", min_band="high",
                       incremental="readbench.dcp._fast_pidcp:PiSeq")  # through its SupersedeColumns
