"""Where each read preset and DCP configuration would first change a recorded session's requests
(GitHub issue 25 item 5: `readbench plan --design forked` from the user's recorded sessions).

First order, as the replays it reads (`readbench.replay.read_counterfactual`,
`readbench.replay.dcp_cache`): the session's own trajectory is kept; only what each arm would
send changes. A forked run's arm replays its trunk's calls up to its fork point, so the calls
shared with the trunk are the calls before the first request that differs:

- read presets, one row per ordered pair (trunk preset, arm preset): the first call whose request
  holds a tool result the two presets return differently (each preset's result is its first-order
  replacement, or the recorded result where it changes nothing or cannot be replayed);
- DCP configurations, one row per configuration against ``off`` (the recorded requests): the first
  call whose projected request differs from the recorded one (its first pruning or footer).

``first_call`` is that call's 0-based index in the session's call order, null when no request
differs (the arm would take the trunk's whole trajectory); ``calls`` is the session's number of
calls. Rows go to ``fork_points.parquet`` (`readbench replay --audit --dcp ... --fork-points`);
`fork_points_section` names the file in the replay's report.
"""

from __future__ import annotations

from typing import Any

from inspect_ai.model import ChatMessage, ChatMessageTool

from readbench.sessions import Session

__all__ = ["FORK_POINT_COLUMNS", "first_changed_call", "first_requests", "fork_point_rows", "fork_points_section"]

#: Columns of fork_points.parquet: one row per session x (trunk, arm) pair of read presets, and per
#: session x DCP configuration (trunk ``off``).
FORK_POINT_COLUMNS: dict[str, str] = {
    "file": "string", "session_id": "string", "harness": "string", "calls": "int64", "kind": "string",
    "trunk": "string", "arm": "string", "first_call": "int64",
}


def first_requests(session: Session) -> dict[str, int]:
    """tool_call_id -> index of the first call whose request holds that tool result (results no
    request holds are absent). Linear in the session's messages."""
    seen: dict[int, int] = {}  # context -> messages already visited
    out: dict[str, int] = {}
    for i, call in enumerate(session.calls):
        start = seen.get(call.context, 0)
        if call.n_messages <= start:
            continue
        for m in session.contexts[call.context][start:call.n_messages]:
            if isinstance(m, ChatMessageTool) and m.tool_call_id and m.tool_call_id not in out:
                out[m.tool_call_id] = i
        seen[call.context] = call.n_messages
    return out


def _same_message(a: ChatMessage, b: ChatMessage) -> bool:
    if a is b:
        return True
    from readbench.agent.loop import fingerprint

    return fingerprint(a) == fingerprint(b)


def first_changed_call(recorded: list[list[ChatMessage]], projected: list[list[ChatMessage]]) -> int | None:
    """Index of the first call whose projected request differs from the recorded one (another
    length or a message with another role, text, tool calls or tool result), None when none does.

    Args:
        recorded: each call's recorded request; projected: each call's projection (same length).
    """
    for i, (rec, proj) in enumerate(zip(recorded, projected)):
        if rec is proj:
            continue
        if len(rec) != len(proj) or not all(_same_message(a, b) for a, b in zip(rec, proj)):
            return i
    return None


def _read_pairs(session: Session, replaced: dict[str, dict[str, ChatMessageTool]]) -> list[tuple[str, str, int | None]]:
    """(trunk preset, arm preset, first differing call) for every ordered pair of distinct presets."""
    firsts = first_requests(session)

    def text(m: ChatMessageTool) -> tuple[bool, str]:
        return (m.error is not None, m.error.message if m.error is not None else m.text)

    out = []
    names = list(replaced)
    for p in names:
        for q in names:
            if p == q:
                continue
            ids = set(replaced[p]) | set(replaced[q])
            differ = [firsts[t] for t in ids if t in firsts and (
                t not in replaced[p] or t not in replaced[q] or text(replaced[p][t]) != text(replaced[q][t]))]
            out.append((p, q, min(differ) if differ else None))
    return out


def fork_point_rows(session: Session, replaced: dict[str, dict[str, ChatMessageTool]] | None,
                    dcp_first: dict[str, int | None] | None) -> list[dict[str, Any]]:
    """The rows of `fork_points.parquet` for one session (module docstring).

    Args:
        session: the imported session.
        replaced: `ReadArms.replaced` (preset -> {tool_call_id: its changed result}); None = no
            read counterfactual was run.
        dcp_first: DCP configuration -> `first_changed_call` of its projections (``off`` included,
            None); None = no DCP replay was run.
    """
    base = {"file": session.source, "session_id": session.session_id, "harness": session.harness,
            "calls": len(session.calls)}
    rows = [{**base, "kind": "read", "trunk": p, "arm": q, "first_call": first}
            for p, q, first in _read_pairs(session, replaced or {})]
    rows += [{**base, "kind": "dcp", "trunk": "off", "arm": c, "first_call": first} for c, first in (dcp_first or {}).items()]
    return rows


def fork_points_section(w: Any) -> list[Any]:
    """The replay report's paragraph on ``fork_points.parquet``: what it holds, how many of its
    pairs diverge, and that `readbench plan --design forked --sessions` reads it. None when the
    replay wrote no fork points (no ``--fork-points``, or no row).

    Args:
        w: the `readbench.replay.report.ReplayWriter` (its ``fork_points`` table).
    """
    from readbench.analysis._document import Heading, Paragraph

    df = w.table("fork_points")
    if df.empty:
        return []
    diverged = df["first_call"].notna()
    reads, dcp = df["kind"] == "read", (df["kind"] == "dcp") & (df["arm"] != "off")
    return [
        Heading(2, "Fork points"),
        Paragraph(f"`fork_points.parquet` ({len(df):,} rows, {df['file'].nunique():,} session file(s)): per "
                  "recorded session, each ordered pair of replayed read presets (`kind` read: `trunk`, `arm`) and "
                  "each DCP configuration against off (`kind` dcp), the 0-based index of the first model call whose "
                  "request the arm would change (`first_call`; empty when no request changes) and the session's "
                  f"number of calls (`calls`). Read-preset pairs that diverge: {int((diverged & reads).sum()):,} of "
                  f"{int(reads.sum()):,}; DCP configurations that change a request: {int((diverged & dcp).sum()):,} "
                  f"of {int(dcp.sum()):,}. `readbench plan --design forked --sessions <this directory> --matrix FILE` "
                  "reads it to estimate what a forked run of that matrix saves."),
    ]
