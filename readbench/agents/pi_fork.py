"""A real pi run forked from another pi run's session (GitHub issue 25 item 2, real harnesses).

A fork of a pi arm continues a trunk pi run at the arm's fork point: the first call whose request
holds a tool result the arm returns differently, or that the arm's DCP configuration projects
differently (readbench.agents.pi_shadow). readbench writes a pi session file holding the
trunk's entries up to that request, with the arm's own results in place (`fork_session_text`),
and restarts pi on it (`pi --session FILE`, no prompt) with `CONTINUE_EXTENSION`, which makes pi
run its agent loop on from the last tool result.

Spec: docs/specs/agents.md §4 (pi's extension hooks, `--session-dir`, RPC commands) and §6 (pi's
own `fork` copies the conversation only; readbench restores the workspace too,
readbench.fork.snapshot). Why an extension (facts read off pi 0.84.4's package, 1.6.0 the same):
- pi's agent core can continue a transcript without a new message (`Agent.continue()`,
  pi-agent-core dist/agent.js:234; the last message must be a user or tool-result message), but
  neither pi's CLI nor its RPC mode calls it for a loaded session: print mode only runs
  `session.prompt(...)` for the prompts it is given (dist/modes/print-mode.js), RPC mode has no
  `continue` command (dist/modes/rpc/rpc-mode.js), and `AgentSession` calls `agent.continue()` only
  after its own run, for retries and queued messages (dist/core/agent-session.js:777).
- An extension can start a turn: `pi.sendMessage(custom, {triggerTurn: true})` runs the loop with
  a `custom` message appended (agent-session.js:1120, `_runAgentPrompt`), which pi would send to
  the model as user text (dist/core/messages.js `convertToLlm`). The same extension's `context`
  hook, which pi calls on the messages before every model call (dist/core/sdk.js:227), removes that
  marker, so the model sees the prefix exactly as the trunk sent it. `session_start` handlers are
  awaited before print mode returns (agent-session.js `bindExtensions`), and `sendMessage` does not
  return the run's promise (agent-session.js:2004), so the handler waits until pi is idle.
- The marker stays in the session file as a `custom_message` entry of type `MARKER`; readbench's
  pi importer leaves it out (readbench.sessions.pi), as the model never received it.

What a fork's requests share with the trunk's: pi 0.84.4's system prompt holds no date or time
(dist/core/system-prompt.js; sessions.md §1's "ends with the current date and time" describes an
older pi), and the messages are the session file's entries, so the resumed request equals the
trunk's request at that call when the fork's working directory is the trunk's (the prompt's
"Current working directory" line: the same path in every Docker sample; a different temporary
directory per sample in the local sandbox).
"""

from __future__ import annotations

import json
from dataclasses import dataclass, field
from typing import Any

from readbench.sessions.pi import FORK_MARKER

__all__ = ["CONTINUE_EXTENSION", "MARKER", "READ_ONLY_TOOLS", "ArmResult", "fork_files", "fork_session_text",
           "may_change_files",
           "snapshot_for"]

READ_ONLY_TOOLS = ("read", "grep")
"""pi's tools that never change the workspace (pi-tools.md §1-3); bash, edit and write may."""

MARKER = FORK_MARKER
"""`customType` of the message `CONTINUE_EXTENSION` appends to start pi's loop (never sent to the model)."""

CONTINUE_EXTENSION = """// readbench: continue pi's agent loop from a session ending in tool results (no user message).
const MARKER = "%s";
export default function (pi) {
  pi.on("session_start", async (_event, ctx) => {
    pi.sendMessage({ customType: MARKER, content: "", display: false }, { triggerTurn: true });
    await new Promise((r) => setTimeout(r, 0));
    while (!ctx.isIdle()) await new Promise((r) => setTimeout(r, 20));
  });
  pi.on("context", (event) => ({
    messages: event.messages.filter((m) => !(m.role === "custom" && m.customType === MARKER)),
  }));
}
""" % MARKER
"""The pi extension (TypeScript, loaded with `-e`) that continues a resumed session (module docstring)."""


@dataclass(frozen=True)
class ArmResult:
    """The arm's own result for one tool call of the fork point's request.

    Attributes:
        text: the result's text (pi's `content`, one text block).
        is_error: pi's `isError` (True for a blocked call: pi's `createErrorToolResult`).
        details: pi's `details` (never sent to the model; `{}` for a blocked call, as pi writes it).
    """

    text: str
    is_error: bool
    details: dict[str, Any] = field(default_factory=dict)


_FAILED = ("error", "aborted")
"""Stop reasons of an assistant entry that is no model call's reply: a failed request pi retried (it
drops the entry from the next request, and the relay records no call for it)."""


def _failed(entry: dict[str, Any]) -> bool:
    """A session entry that is a failed request's reply (`_FAILED`): no call."""
    message = entry.get("message") or {}
    return entry.get("type") == "message" and message.get("role") == "assistant" and message.get("stopReason") in _FAILED


def _dumps(obj: Any) -> str:
    """One session line as pi writes it (`JSON.stringify`: no spaces, non-ASCII as is)."""
    return json.dumps(obj, ensure_ascii=False, separators=(",", ":"))


def fork_session_text(trunk: str, call: int, results: dict[str, ArmResult], cwd: str | None = None) -> str:
    """The pi session file a fork resumes: the trunk's entries before its reply to call `call`,
    the tool results of that request replaced by the arm's.

    Args:
        trunk: a pi session JSONL (version 3, one linear path: what `pi --print` writes).
        call: the fork point, a 0-based index of the trunk's model calls: its assistant messages
            but those that stopped on `error` or `aborted` (a failed request pi retried: seen in a
            trunk here, an empty reply between two calls); must be >= 1 (call 0's request holds no
            tool result).
        results: tool_call_id -> the arm's result; every id must be a tool result of call
            `call`'s request (the results after call `call - 1`'s reply).
        cwd: the fork's working directory for the header's `cwd` (pi runs the resumed session
            there); None keeps the trunk's.

    Returns:
        JSONL text: the trunk's lines verbatim up to the fork point, except the header (with `cwd`)
        and the replaced results (`content` one text block, `details`, `isError`), ending with a
        newline. Where pi retried call `call` itself (failed attempts after its request's last
        message), the file ends before the first failed attempt: the retried request is the call
        (the relay records one call for it), and the fork makes it with the arm's results.
        Failed attempts of earlier calls stay (pi never sends them again).

    Raises:
        ValueError: not a version-3 session, a branched file, fewer than `call` replies in the
            trunk (nothing to fork from), a request that does not
            end in tool results (pi cannot continue it without a user message), or a result id that
            is not among that request's tool results.
    """
    lines = [line for line in trunk.splitlines() if line.strip()]
    if not lines:
        raise ValueError("fork_session_text: the trunk session is empty")
    header = json.loads(lines[0])
    if header.get("type") != "session" or header.get("version") != 3:
        raise ValueError(f"fork_session_text: not a pi version-3 session header: {lines[0][:200]}")
    if call < 1:
        raise ValueError(f"fork_session_text: call {call}: the first call's request holds no tool result")
    entries = [json.loads(line) for line in lines[1:]]
    for prev, entry in zip([header, *entries], entries):
        if prev is not header and entry.get("parentId") != prev.get("id"):
            raise ValueError(f"fork_session_text: entry {entry.get('id')} does not follow {prev.get('id')}: "
                             "a branched session (fork one linear path)")
    replies = [i for i, e in enumerate(entries) if e.get("type") == "message" and e["message"].get("role") == "assistant"
               and not _failed(e)]
    if len(replies) < call:
        raise ValueError(f"fork_session_text: call {call}: the trunk made {len(replies)} model calls")
    end = replies[call] if call < len(replies) else len(entries)
    kept = entries[:end]
    last = max(i for i, e in enumerate(kept) if e.get("type") == "message" and not _failed(e))
    retried = [i for i in range(last + 1, len(kept)) if _failed(kept[i])]
    if retried:  # call `call`'s failed attempts: the fork makes that call itself (the retry is the call)
        kept = kept[:retried[0]]
    tail = [i for i in range(len(kept)) if kept[i].get("type") == "message"][-1:]
    last_message = kept[tail[0]]["message"] if tail else {}
    if last_message.get("role") != "toolResult":
        raise ValueError(f"fork_session_text: call {call}'s request ends with a {last_message.get('role')!r} "
                         "message: pi continues only from tool results without a new user message")
    answered = {e["message"]["toolCallId"]: i for i, e in enumerate(kept[replies[call - 1]:], replies[call - 1])
                if e.get("type") == "message" and e["message"].get("role") == "toolResult"}
    unknown = sorted(set(results) - set(answered))
    if unknown:
        raise ValueError(f"fork_session_text: {unknown} are not tool results of call {call}'s request "
                         f"(it holds {sorted(answered)})")
    out = [_dumps({**header, "cwd": cwd}) if cwd is not None else lines[0]]
    for i, entry in enumerate(kept):
        message = entry.get("message", {})
        arm = results.get(message.get("toolCallId", "")) if message.get("role") == "toolResult" else None
        if arm is None:
            out.append(lines[i + 1])
        else:
            out.append(_dumps({**entry, "message": {**message, "content": [{"type": "text", "text": arm.text}],
                                                    "details": arm.details, "isError": arm.is_error}}))
    return "\n".join(out) + "\n"


def may_change_files(messages: list[Any]) -> bool:
    """True when a request (inspect messages, as the bridge relays them) ends with the result of a
    tool that may have changed the workspace: one not in `READ_ONLY_TOOLS` among the tool messages
    after its last assistant message (a tool message's function, else the name of the assistant's
    call it answers; an unknown name counts as changing). A fork at that call needs a snapshot
    taken there."""
    tail, names = [], {}
    for m in reversed(messages):
        if getattr(m, "role", None) == "tool":
            tail.append(m)
            continue
        if getattr(m, "role", None) == "assistant":  # a relayed tool message may lack its function's name
            names = {c.id: c.function for c in getattr(m, "tool_calls", None) or []}
        break
    return any((getattr(m, "function", None) or names.get(getattr(m, "tool_call_id", ""))) not in READ_ONLY_TOOLS
               for m in tail)


def snapshot_for(snapshots: dict[str, Any], call: int) -> Any:
    """The trunk's snapshot a fork at `call` restores: the one taken at the latest call <= `call`
    (each holds every change since setup), None when the workspace had not changed by then.

    Args:
        snapshots: the trunk's {str(call): Snapshot.to_dict()} (readbench.agents.run.SNAPSHOTS_KEY).
    """
    taken = [int(k) for k in snapshots if int(k) <= call]
    return snapshots[str(max(taken))] if taken else None


def fork_files(fork: dict[str, Any], work: str, cwd: str) -> tuple[str, dict[str, str]]:
    """(the session file pi resumes, {sandbox path: text} to write) for `harness_agent`'s `fork`
    (``trunk``, ``call``, ``results`` {tool_call_id: [text, is_error]}) in the run's directory
    `work`, the header's cwd the sample's `cwd`.

    Raises:
        ValueError: as `fork_session_text`.
    """
    resume = f"{work}/sessions/fork.jsonl"
    results = {k: ArmResult(str(v[0]), bool(v[1])) for k, v in dict(fork["results"]).items()}
    return resume, {resume: fork_session_text(str(fork["trunk"]), int(fork["call"]), results, cwd)}
