"""The trunk's shadow computation: where each arm's run would first differ from the trunk's.

GitHub issue 25 item 1. One trunk per task x epoch x model runs under the trunk arm; at every
trunk model call every undiverged arm with another DCP configuration projects the same history
in shadow (readbench.dcp.project, its own `DcpState`), and at every trunk tool call every
undiverged arm with another read preset computes its own result for the same call (read presets
are pure functions of the file bytes and the read session, readbench.read). An arm's fork point
is the first model call whose projected request (``kind="request"``: the arm calls the model
itself from there) or whose tool results (``kind="result"``: the trunk's reply is shared, the
arm executes that reply's tool calls itself) differ from the trunk's; ``kind="never"``: the arm's
whole trajectory is the trunk's; ``kind="cut"``: the trunk stopped on a limit (turn, token or
time) before the arm differed, so the arm followed the trunk to that limit and whether it would
have diverged later is unknown (its fork stops where the trunk did, with the trunk's stop reason). An arm whose system prompt or tool schemas differ forks at call
0 (its first request already differs).

Coupling (docs/specs/agents.md §6): up to the fork point the arm's inputs are the trunk's, so
its trajectory up to there is distributed as the trunk's. Forking EARLIER than needed is always
sound, so where the shadow cannot tell cheaply it forks conservatively (``reason`` says so): a
read after a mutating call (bash, edit, write) in the same reply.

The arm's read session is kept in shadow (its own reads, the trunk's edits and writes), so the
fork starts with the session an independent run would have; its read details replace the
trunk's in the replayed tool results (the read metrics count the arm's own details).
"""

from __future__ import annotations

import json
from dataclasses import dataclass, field
from typing import Any

from readbench.read import ReadSession, ReadVariant

__all__ = ["ArmShadow", "ForkPoint", "arm_key", "mutating", "shadow_results"]

#: tools that change the workspace (a read after one of them in the same reply is not shadowed)
MUTATING = frozenset({"bash", "edit", "write"})


def mutating(function: str) -> bool:
    """True for a tool call that may change the workspace."""
    return function in MUTATING


def arm_key(variant: Any, dcp: Any) -> str:
    """A stable file-name-safe key of one arm definition (sha1 of its JSON, 16 hex digits)."""
    import hashlib

    text = json.dumps([variant, "off" if dcp is False else dcp], sort_keys=True)
    return hashlib.sha1(text.encode()).hexdigest()[:16]


@dataclass
class ForkPoint:
    """Where an arm leaves the trunk.

    Attributes:
        call: 0-based index of the first model call that differs (``kind="never"`` or ``"cut"``:
            the trunk's number of calls).
        kind: ``request`` (the arm makes call ``call`` itself), ``result`` (the trunk's reply to
            call ``call`` is shared; the arm executes its tool calls itself), ``never`` or ``cut``
            (not diverged before the trunk stopped on a limit).
        reason: one line: what differed first.
        snapshot: file name of the workspace snapshot at the point (None at call 0 of a request fork).
        sim: the model provider's per-sample memory at the point (``readbench:sim``; None for a real model).
        read_session: the arm's read session at the point (`ReadSession.to_dict`).
        elapsed_seconds: the trunk's loop time at the point (replayed calls keep their times;
            live ones continue from here).
        stop_reason: for ``kind="cut"`` or ``"never"`` where a limit stopped the trunk, the trunk's
            stop reason (``turn_limit``, ``token_limit``, ``time_limit``, ...): the fork stops at
            the trunk's last call with it; None otherwise.
    """

    call: int
    kind: str
    reason: str
    snapshot: str | None = None
    sim: dict[str, Any] | None = None
    read_session: dict[str, Any] | None = None
    elapsed_seconds: float = 0.0
    stop_reason: str | None = None

    def summary(self) -> dict[str, Any]:
        """What the trunk's store and the fork's log record: call, kind, reason, snapshot (and
        stop_reason for a ``cut``)."""
        out = {"call": self.call, "kind": self.kind, "reason": self.reason, "snapshot": self.snapshot}
        if self.stop_reason is not None:
            out["stop_reason"] = self.stop_reason
        return out


@dataclass
class ArmShadow:
    """One arm in the trunk's shadow.

    Attributes:
        key: `arm_key` of the arm's definition.
        label: the arm's display label.
        variant: the arm's read preset, or None when it is the trunk's (its results are the trunk's).
        dcp: the arm's DCP configuration, or None when it is the trunk's (its requests are the trunk's).
        spec: ``[variant spec, dcp spec]`` as the matrix defines them.
    """

    key: str
    label: str
    variant: ReadVariant | None
    dcp: Any
    spec: list[Any]
    dcp_state: Any = None
    dcp_cache: Any = None
    session: ReadSession = field(default_factory=ReadSession)
    fork: ForkPoint | None = None
    details: dict[str, dict[str, Any]] = field(default_factory=dict)
    """The arm's own read details per tool-call id (they replace the trunk's when replayed)."""

    @property
    def open(self) -> bool:
        """Not yet forked."""
        return self.fork is None


@dataclass(frozen=True)
class ShadowRead:
    """One read call's result under one read preset: ``(is_error, text)`` and its details."""

    is_error: bool
    text: str
    details: dict[str, Any]


def _read(variant: ReadVariant, data: bytes, args: dict[str, Any], call_id: str, session: ReadSession,
          visible: frozenset[str] | None, file_key: str) -> ShadowRead:
    from readbench.tools.read import as_line_number

    result = variant.read(data, str(args.get("path", "")), as_line_number(args.get("offset")),
                          as_line_number(args.get("limit")), call_id=call_id, session=session,
                          visible_call_ids=visible, file_key=file_key)
    return ShadowRead(result.is_error, result.text, result.details.to_dict())


async def shadow_results(
    calls: list[dict[str, Any]], arms: list[ArmShadow], trunk_variant: ReadVariant, trunk_session: ReadSession,
    visible: frozenset[str] | None, cwd: str, read_bytes: Any,
) -> tuple[dict[str, str], dict[str, ShadowRead]]:
    """Shadow one reply's tool calls, BEFORE the trunk executes them (workspace untouched).

    Args:
        calls: the reply's tool calls ``[{"id", "function", "arguments"}]`` in order.
        arms: the open arms with a read preset of their own (each one's session is updated in place).
        trunk_variant: the trunk's read preset.
        trunk_session: a COPY of the trunk's read session before the reply (updated in place).
        visible: tool-call ids intact in the trunk's last request (equal for every open arm).
        cwd: the workspace directory (read sessions key files by absolute path).
        read_bytes: ``async (path) -> bytes``, raising FileNotFoundError / IsADirectoryError.

    Returns:
        (``{arm key: reason}`` for arms whose result differs, ``{call id: the trunk's own shadow
        result}`` for the reads shadowed, which the caller checks against what the trunk got).
    """
    from readbench.tools._paths import absolute, pi_path

    diverged: dict[str, str] = {}
    trunk_reads: dict[str, ShadowRead] = {}
    changed = False
    for call in calls:
        function, args, cid = call["function"], call.get("arguments") or {}, call["id"]
        live = [a for a in arms if a.key not in diverged]
        if function == "read" and live:
            if changed:
                for arm in live:
                    diverged[arm.key] = f"read {cid} follows a mutating call in the same reply (conservative)"
                continue
            key = absolute(cwd, str(args.get("path", "")))
            try:
                data = await read_bytes(pi_path(str(args.get("path", ""))))
            except (FileNotFoundError, IsADirectoryError):
                continue  # the same error text under every preset (the tool answers before the preset)
            mine = _read(trunk_variant, data, args, cid, trunk_session, visible, key)
            trunk_reads[cid] = mine
            for arm in live:
                theirs = _read(arm.variant, data, args, cid, arm.session, visible, key)  # type: ignore[arg-type]
                arm.details[cid] = theirs.details
                if (theirs.is_error, theirs.text) != (mine.is_error, mine.text):
                    diverged[arm.key] = f"read {cid} of {args.get('path')!r} returns another result"
        elif function == "edit":
            key = absolute(cwd, str(args.get("path", "")))
            refused_trunk = trunk_variant.requires_read_before_edit and not trunk_session.has_read(key)
            for arm in live:
                refused = arm.variant.requires_read_before_edit and not arm.session.has_read(key)  # type: ignore[union-attr]
                if refused != refused_trunk:
                    diverged[arm.key] = f"edit {cid}: the read-before-edit rule answers otherwise"
        if mutating(function):
            changed = True
    return diverged, trunk_reads


def note_changes(messages: list[Any], calls: list[dict[str, Any]], sessions: list[ReadSession], cwd: str) -> None:
    """After the trunk executed a reply: note each applied edit and each successful write in
    the shadow sessions (what readbench.tools.edit does to the real one)."""
    from readbench.tools._paths import absolute

    by_id = {c["id"]: c for c in calls}
    for message in messages:
        call = by_id.get(getattr(message, "tool_call_id", None) or "")
        if call is None or call["function"] not in ("edit", "write") or message.error is not None:
            continue
        if call["function"] == "edit" and not ((message.metadata or {}).get("readbench") or {}).get("applied"):
            continue
        key = absolute(cwd, str((call.get("arguments") or {}).get("path", "")))
        for session in sessions:
            session.note_file_changed(key)


def result_of(message: Any) -> tuple[bool, str]:
    """A tool message as ``(is_error, text)`` (the error's message for an error)."""
    if message.error is not None:
        return True, message.error.message
    return False, message.text
