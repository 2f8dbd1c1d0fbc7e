"""Per-sample effort and read-fragmentation metrics (docs/specs/metrics.md, "Effort" and
"Reads and fragmentation").

Pure functions over the full message history and the loop's per-call logs. Read facts come
from the structured details each read result carries in ``ChatMessageTool.metadata["readbench"]``
(written by readbench.tools.read from readbench.read.ReadDetails); no notice text is parsed.
"""

from __future__ import annotations

from collections import Counter
from typing import Any

from inspect_ai.model import ChatMessage, ChatMessageAssistant, ChatMessageTool

from readbench.cache import count_tokens
from readbench.harness import read_tool, shell_command, tool_role

TOOLS = ("read", "grep", "bash", "edit", "write")
_ROLE_TOOL = {"read": "read", "search": "grep", "shell": "bash", "edit": "edit", "view": "read"}


def pi_tool(function: str | None) -> str | None:
    """The pi tool a harness's tool stands for (`TOOLS`): pi's names as they are, another harness's
    by its role in the harness registry (readbench.harness.tool_role: Claude Code's `Read` -> `read`,
    `Grep` -> `grep`, `Bash` -> `bash`, `Edit` -> `edit`, `Write` -> `write` by its own name, other
    file-changing tools -> `edit`); None for a tool of no role."""
    name = function or ""
    if name in TOOLS:
        return name
    role = tool_role(name)
    if role == "edit" and name.lower() in TOOLS:
        return name.lower()
    return _ROLE_TOOL.get(role or "")


def _call_tool(function: str, arguments: dict[str, Any], details: dict[str, Any]) -> str:
    """The pi tool one call stands for (`{tool}_calls`): `pi_tool`, except that a shell call an
    imported session found to be a file read (`details["via_shell"]`: Codex reads through its shell)
    is `read`, and an `apply_patch` through the shell (Codex's edits) `edit`."""
    if details.get("via_shell"):
        return "read"
    tool = pi_tool(function) or function
    if tool == "bash" and (shell_command(arguments) or "").lstrip().startswith("apply_patch"):
        return "edit"
    return tool


def _tool_calls(messages: list[ChatMessage]) -> dict[str, tuple[str, dict[str, Any]]]:
    calls = {}
    for message in messages:
        if isinstance(message, ChatMessageAssistant):
            for call in message.tool_calls or []:
                calls[call.id] = (call.function, call.arguments)
    return calls


def effort_metrics(messages: list[ChatMessage], calls: list[dict[str, Any]]) -> dict[str, float]:
    """Turns, tool calls per tool, and token totals.

    Args:
        messages: the full history of the sample (``state.messages``).
        calls: the loop's per-call logs (``readbench:calls``; readbench.base.store.CallLog as dicts).

    Returns:
        ``turns`` (assistant messages generated), ``tool_calls``, ``{tool}_calls`` for each pi tool
        (another harness's tools counted as the pi tool they stand for, `pi_tool`; Codex's shell
        reads and patches as `read` and `edit`: `_call_tool`),
        ``input_tokens`` (Σ prompt tokens actually sent, tokens), ``output_tokens``,
        ``peak_context_tokens`` (max prompt, tokens), ``malformed_calls`` (tool calls whose
        arguments failed to parse: the tool never ran).
    """
    details = {m.tool_call_id: (m.metadata or {}).get("readbench", {}) for m in messages
               if isinstance(m, ChatMessageTool) and m.tool_call_id}
    per_tool = Counter(_call_tool(function, arguments or {}, details.get(call_id, {}))
                       for call_id, (function, arguments) in _tool_calls(messages).items())
    malformed = sum(isinstance(m, ChatMessageTool) and m.error is not None and m.error.type == "parsing"
                    for m in messages)
    prompts = [c["prompt_tokens"] or 0 for c in calls]
    out = {
        "turns": float(sum(isinstance(m, ChatMessageAssistant) for m in messages)),
        "tool_calls": float(sum(per_tool.values())),
        "input_tokens": float(sum(prompts)),
        "output_tokens": float(sum(c["output_tokens"] or 0 for c in calls)),
        "peak_context_tokens": float(max(prompts, default=0)),
        "malformed_calls": float(malformed),
    }
    for tool in TOOLS:
        out[f"{tool}_calls"] = float(per_tool.get(tool, 0))
    return out


def read_metrics(messages: list[ChatMessage]) -> dict[str, float]:
    """Read counts and fragmentation (metrics.md "Reads and fragmentation"), over the results of
    every harness's read tool (`pi_tool`; its file and range argument keys from the harness registry).

    A shell result an imported session's importer found to be a file read counts as a read too
    (`metadata["readbench"]["via_shell"]`: Codex reads through its shell; its path and range come
    from there; of an output the harness cut in the middle only the lines seen, `details["seen"]`,
    count as delivered). A line re-delivered after its file changed counts as new: lines are keyed by
    (path, content sha256, line number). A read whose arguments failed to parse (inspect's
    tool error of type ``parsing``) read nothing: it is no blind read, names no file and its
    error text is no read tokens (it is counted in ``malformed_calls`` by `effort_metrics`).

    Returns:
        ``blind_reads``, ``capped_reads``, ``blocked_reads``, ``dedup_stubs``,
        ``dedup_stub_misses``, ``files_read``, ``reads_per_file``, ``lines_delivered``,
        ``unique_lines_delivered``, ``reread_ratio`` (0 when nothing was delivered),
        ``read_tokens`` (tokens of read results, o200k), ``reread_tokens`` (the share of each
        result's tokens that re-delivered lines, tokens), ``mean_lines_per_read``.
    """
    calls = _tool_calls(messages)
    seen: set[tuple[str, str, int]] = set()
    files: set[str] = set()
    counts: Counter[str] = Counter()
    delivered = unique = 0
    read_tokens = reread_tokens = 0.0
    text_reads = 0
    for message in messages:
        if not isinstance(message, ChatMessageTool):
            continue
        details = (message.metadata or {}).get("readbench", {})
        if details.get("via_shell"):  # a shell read the importer found: its path and range
            function, args = "read", {k: details.get(k) for k in ("path", "offset", "limit")}
        elif pi_tool(message.function) == "read":
            function, args = calls.get(message.tool_call_id or "", ("read", {}))
        else:
            continue
        if message.error is not None and message.error.type == "parsing":
            continue
        counts["read"] += 1
        spec = read_tool(function)
        files.add(str(args.get(spec.path_key if spec else "path", "")))
        if args.get(spec.offset_key if spec else "offset") is None and args.get(spec.limit_key if spec else "limit") is None:
            counts["blind"] += 1
        counts["capped"] += bool(details.get("capped"))
        counts["blocked"] += bool(details.get("blocked"))
        counts["stubbed"] += bool(details.get("stubbed"))
        counts["stub_miss"] += bool(details.get("stub_miss"))
        text = message.error.message if message.error else message.text
        tokens = count_tokens(text)
        read_tokens += tokens
        first, last = details.get("first_line"), details.get("last_line")
        if first is None or last is None or details.get("stubbed"):
            continue
        text_reads += 1
        spans = [(int(a), int(b)) for a, b in details.get("seen") or [(first, last)]]  # a middle cut: what was seen
        n = sum(max(0, b - a + 1) for a, b in spans)
        if n == 0:
            continue
        key = (str(details.get("path")), str(details.get("content_sha256")))
        fresh = 0
        for a, b in spans:
            for line in range(a, b + 1):
                if (key[0], key[1], line) not in seen:
                    seen.add((key[0], key[1], line))
                    fresh += 1
        delivered += n
        unique += fresh
        reread_tokens += tokens * (n - fresh) / n
    reads = counts["read"]
    return {
        "blind_reads": float(counts["blind"]),
        "capped_reads": float(counts["capped"]),
        "blocked_reads": float(counts["blocked"]),
        "dedup_stubs": float(counts["stubbed"]),
        "dedup_stub_misses": float(counts["stub_miss"]),
        "files_read": float(len(files)),
        "reads_per_file": reads / len(files) if files else 0.0,
        "lines_delivered": float(delivered),
        "unique_lines_delivered": float(unique),
        "reread_ratio": 1 - unique / delivered if delivered else 0.0,
        "read_tokens": float(read_tokens),
        "reread_tokens": float(round(reread_tokens, 3)),
        "mean_lines_per_read": delivered / text_reads if text_reads else 0.0,
    }


def dcp_metrics(calls: list[dict[str, Any]]) -> dict[str, float]:
    """DCP economics that need no cache model (metrics.md "DCP economics").

    Returns:
        ``dcp_pruned_items`` (Σ items pruned over calls), ``dcp_footer_tokens_saved`` (Σ of
        pi-dcp's per-request footer estimate, tokens), ``dcp_prefix_breaks`` (calls whose input
        rewrote a position of the previous call's input).
    """
    return {
        "dcp_pruned_items": float(sum(sum(c["pruned"].values()) for c in calls)),
        "dcp_footer_tokens_saved": float(sum(c["footer_tokens_saved"] for c in calls)),
        "dcp_prefix_breaks": float(sum(bool(c["prefix_break"]) for c in calls)),
    }
