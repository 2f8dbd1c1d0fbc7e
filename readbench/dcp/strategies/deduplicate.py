"""pi-dcp `deduplicate` (docs/specs/dcp.md §2.1, `strategies/deduplicate.ts`).

Walk newest -> oldest over tool results; key = sha256 of
`JSON.stringify({name: toolName, args: normalizeAndSort(args)})` (keys sorted recursively,
null values dropped, array order kept). The newest result of a key is kept; protected or
recent results still enter the seen-set, so their older unprotected duplicates are pruned.
Errors are not exempt; output content is not compared.
"""

from __future__ import annotations

import hashlib
from typing import Any

from inspect_ai.model import ChatMessageTool

from readbench.base.idmemo import IdentityMemo
from readbench.base.js import js_stringify
from readbench.dcp._pidcp_run import PiDcpRun, estimate_tokens
from readbench.dcp._strategy import DcpStrategy
from readbench.dcp._view import tool_name

__all__ = ["STRATEGY", "PLACEHOLDER", "apply", "normalize_and_sort", "signature", "signature_once"]

PLACEHOLDER = "[DCP: Exact duplicate of a later tool call. Pruned to save tokens.]"
NAME = "deduplicate"


def normalize_and_sort(value: Any) -> Any:
    """Sort object keys recursively and drop keys whose value is None; lists keep their order."""
    if isinstance(value, list):
        return [normalize_and_sort(v) for v in value]
    if isinstance(value, dict):
        return {k: normalize_and_sort(value[k]) for k in sorted(value) if value[k] is not None}
    return value


def signature(tool: str, args: Any) -> str:
    """Hex sha256 dedup key of a call (`getToolSignature`)."""
    payload = js_stringify({"name": tool, "args": normalize_and_sort(args)})
    return hashlib.sha256(payload.encode("utf-8")).hexdigest()


#: (arguments object, tool name) -> signature for `signature_once`; 4,096 kept (one long session's
#: tool calls; bounds the argument objects kept alive)
_SIGNATURES: IdentityMemo[str] = IdentityMemo(lambda args, tool: signature(tool, args), size=4_096)


def signature_once(tool: str, args: Any) -> str:
    """`signature(tool, args)`, worked out once per arguments object: the configurations projecting
    one session (`readbench.replay.dcp_cache`, `readbench.dcp._fast_pidcp.PiSeq`) see the same
    recorded argument objects. Only for arguments that are not mutated afterwards (messages given to
    `project` are not: the `readbench.dcp._cache.ProjectionCache` contract)."""
    return _SIGNATURES(args, tool)


def apply(run: PiDcpRun) -> None:
    """Replace older exact duplicates' content by `PLACEHOLDER`."""
    view = run.view
    seen: set[str] = set()
    for pos in range(len(view) - 1, -1, -1):
        msg = view.current(pos)
        if not isinstance(msg, ChatMessageTool):  # role "toolResult"
            continue
        args = run.args_of(msg.tool_call_id)
        if args is None:
            run.skip(NAME, "other")
            continue
        prot = run.protection(pos)
        sig = signature(tool_name(msg, view.call_names), args)
        if run.check(NAME, prot):
            seen.add(sig)
            continue
        if sig in seen:
            run.record(NAME, estimate_tokens(msg.content))
            view.set_result_text(pos, PLACEHOLDER)
        else:
            seen.add(sig)


STRATEGY = DcpStrategy(NAME, "pi-dcp", "PSU3D0/pi-dcp 8d15a33 strategies/deduplicate.ts (dcp.md §2.1)", apply, PLACEHOLDER,
                       flag="deduplicate", incremental="readbench.dcp._fast_pidcp:PiSeq")
