"""The trunk's side of a forked run: shadow every arm, snapshot the workspace where one forks,
and write each arm's prefix when the sample ends (GitHub issue 25 items 1-2).

The agent loop (readbench.agent.loop) drives a `Trunk` through five hooks: `start` after setup,
`before_call` with each projected request, `after_call` with each reply, `before_tools` /
`after_tools` around each reply's tool calls, and `finish` when the loop ends (also when a turn,
token or time limit cut the trunk: the prefixes up to the cut are still valid). The store key
``readbench:fork`` records, per arm, its fork point (call, kind, reason, snapshot); the prefix
files (readbench.fork.prefix) hold what a fork needs to start from there.
"""

from __future__ import annotations

import hashlib
import json
import time
from pathlib import Path
from typing import Any

from inspect_ai.util import sandbox, store

from readbench.base import store as rbstore
from readbench.fork.prefix import FORK, CallRecord, Prefix, prefix_path, snapshot_path
from readbench.fork.shadow import ArmShadow, ForkPoint, note_changes, result_of, shadow_results
from readbench.fork.snapshot import drop_mark, mark_workspace, take_snapshot
from readbench.read import ReadSession, ReadVariant

__all__ = ["Trunk", "request_fingerprint"]


def request_fingerprint(fps: list[str], infos_json: str) -> str:
    """sha1 of one request: its messages' fingerprints after the system prompt, and the tool
    schemas. The system prompt is left out: it holds the sandbox's cwd, which differs between
    local sandboxes (the fork checks it equals its own arm's, below the fork point, by the header)."""
    return hashlib.sha1(("\x1e".join(fps[1:]) + "\x1d" + infos_json).encode()).hexdigest()


class Trunk:
    """One trunk sample's fork bookkeeping.

    Args:
        arms: the arms in shadow (every arm of the run, the trunk's own included: it never forks).
        trunk_variant: the trunk's read preset.
        root: the run's fork directory (prefixes and snapshots go under it).
        sample: ``(model, sample id, epoch)``.
        cwd: the workspace directory.
    """

    def __init__(self, arms: list[ArmShadow], trunk_variant: ReadVariant, root: Path,
                 sample: tuple[str, str, int], cwd: str) -> None:
        self.arms = arms
        self.trunk_variant = trunk_variant
        self.root = root
        self.sample = sample
        self.cwd = cwd
        self.records: list[CallRecord] = []
        self.mark: str | None = None
        self.snapshots: dict[int, str] = {}
        self.t0 = time.monotonic()
        self._trunk_reads: dict[str, Any] = {}

    # -- hooks -------------------------------------------------------------------------------
    async def start(self, t0: float, headers: dict[str, str]) -> None:
        """After setup: mark the workspace, fork at call 0 every arm whose system prompt or tool
        schemas differ from the trunk's (``headers``: arm key -> reason, only those that differ)."""
        self.t0 = t0
        self.mark = await mark_workspace(sandbox(), self.cwd)
        for arm in self.arms:
            if arm.key in headers:
                await self._fork(arm, 0, "request", headers[arm.key], before_reply=True)
        self._publish()

    async def before_call(self, index: int, history: list[Any], trunk_fps: list[str], usage: Any,
                          fingerprints: Any) -> None:
        """Project the history under each open arm's own DCP configuration; fork the arms whose
        projected request differs from the trunk's at this call (``kind="request"``)."""
        from readbench.dcp import project

        for arm in self.arms:
            if not arm.open or arm.dcp is None:
                continue
            projection = project(history, arm.dcp, state=arm.dcp_state, cwd=self.cwd, cache=arm.dcp_cache, usage=usage)
            arm.dcp_state = projection.state
            if fingerprints(projection.messages) != trunk_fps:
                await self._fork(arm, index, "request", f"call {index}: the {arm.label} projection differs",
                                 before_reply=True)
                self._publish()

    def after_call(self, output: Any, ts: tuple[float, float], request_fp: str, tripped: bool = False) -> None:
        """Record the trunk's reply to the call just made (``tripped``: an inspect limit raised on it
        after it returned, `readbench.fork.prefix.CallRecord`)."""
        self.records.append(CallRecord(output=output.model_dump(mode="json"), ts=list(ts), request=request_fp,
                                       tripped=tripped))

    async def before_tools(self, index: int, calls: list[dict[str, Any]], visible: frozenset[str] | None) -> None:
        """Shadow the reply's tool calls under each open arm's read preset; fork the arms whose
        result differs (``kind="result"``), with the workspace snapshot taken before execution."""
        shadowed = [a for a in self.arms if a.open and a.variant is not None]
        self._trunk_reads = {}
        if not shadowed:
            return
        trunk_session = _session_copy(store().get(rbstore.READ_SESSION))
        before = {a.key: a.session.to_dict() for a in shadowed}
        diverged, self._trunk_reads = await shadow_results(
            calls, shadowed, self.trunk_variant, trunk_session, visible, self.cwd,
            lambda path: sandbox().read_file(path, text=False))
        for arm in shadowed:
            if arm.key in diverged:
                arm.session = ReadSession.from_dict(before[arm.key])  # the fork re-executes the reply's calls
                await self._fork(arm, index, "result", diverged[arm.key], before_reply=False)
                self._publish()

    def after_tools(self, calls: list[dict[str, Any]], messages: list[Any]) -> None:
        """Record the reply's tool results; check the trunk got what its shadow computed; note
        edits and writes in the open arms' shadow sessions.

        Raises:
            RuntimeError: a trunk read's result differs from the shadow's computation of it
                (the shadow would then misplace fork points).
        """
        for message in messages:
            mine = self._trunk_reads.get(getattr(message, "tool_call_id", None) or "")
            if mine is not None and result_of(message) != (mine.is_error, mine.text):
                raise RuntimeError(f"fork shadow: the trunk's read {message.tool_call_id} differs from its shadow "
                                   "computation; fork points would be wrong")
        self.records[-1].tools = [m.model_dump(mode="json") for m in messages]
        note_changes(messages, calls, [a.session for a in self.arms if a.open and a.variant is not None], self.cwd)

    async def finish(self, final_read_session: dict[str, Any] | None, cut: str | None = None) -> None:
        """The loop ended: write every arm's prefix.

        Args:
            final_read_session: the trunk's read session at the end.
            cut: None when the trunk ended on its own (an answer, a context overflow): every open
                arm never diverged (``kind="never"``). Else the trunk's stop reason on a limit
                (``turn_limit``, ``token_limit``, ``time_limit``, ...): the prefixes up to the cut
                stay valid fork points for the arms that diverged before it; an open arm followed
                the trunk to the limit without differing (``kind="cut"``, its fork stops there with
                the same stop reason), except an arm whose read preset and DCP configuration are
                the trunk's own (it can never diverge: ``never``). Either way its fork stops where
                the trunk stopped (the fork point's ``stop_reason``).
        """
        n = len(self.records)
        for arm in self.arms:
            if not arm.open:
                continue
            if cut is None or (arm.variant is None and arm.dcp is None):
                await self._fork(arm, n, "never", f"identical to the trunk for all {n} calls", before_reply=True,
                                 session=final_read_session)
            else:
                await self._fork(arm, n, "cut", f"not diverged within the trunk's {n} calls: the trunk stopped on "
                                 f"its {cut}", before_reply=True, session=final_read_session)
            arm.fork.stop_reason = cut  # type: ignore[union-attr]
        for arm in self.arms:
            self._write(arm)
        self._publish()
        if self.mark is not None:
            await drop_mark(sandbox(), self.mark)

    # -- internals ---------------------------------------------------------------------------
    async def _fork(self, arm: ArmShadow, index: int, kind: str, reason: str, *, before_reply: bool,
                    session: dict[str, Any] | None = None) -> None:
        snap = None
        if index > 0:
            if index not in self.snapshots:
                snapshot = await take_snapshot(sandbox(), self.cwd, self.mark or "")
                path = snapshot_path(self.root, *self.sample, index)
                path.parent.mkdir(parents=True, exist_ok=True)
                path.write_text(json.dumps(snapshot.to_dict()))
                self.snapshots[index] = path.name
            snap = self.snapshots[index]
        if arm.variant is not None:
            own = arm.session.to_dict()
        else:  # the trunk's preset: its session is the trunk's (after the reply's reads for a request fork)
            own = session if session is not None else store().get(rbstore.READ_SESSION)
        arm.fork = ForkPoint(call=index, kind=kind, reason=reason, snapshot=snap,
                             sim=_copy(store().get(rbstore.SIM)), read_session=_copy(own),
                             elapsed_seconds=time.monotonic() - self.t0)

    def _write(self, arm: ArmShadow) -> None:
        fork = arm.fork
        assert fork is not None
        n = fork.call + (1 if fork.kind == "result" else 0)
        calls = []
        for i, record in enumerate(self.records[:n]):
            replay_tools = i < fork.call or fork.kind in ("never", "cut")
            tools = None
            if replay_tools and record.tools is not None:
                tools = [_with_details(m, arm.details) for m in record.tools]
            calls.append(CallRecord(record.output, record.ts, record.request, tools, record.tripped))
        prefix = Prefix(arm=arm.spec, arm_key=arm.key, fork=fork, calls=calls, cwd=self.cwd)
        path = prefix_path(self.root, *self.sample, arm.key)
        path.parent.mkdir(parents=True, exist_ok=True)
        path.write_text(json.dumps(prefix.to_dict()))

    def _publish(self) -> None:
        store().set(FORK, {"role": "trunk", "arms": {a.label: (a.fork.summary() if a.fork else None) for a in self.arms}})


def _copy(value: Any) -> Any:
    return None if value is None else json.loads(json.dumps(value))


def _session_copy(data: dict[str, Any] | None) -> ReadSession:
    return ReadSession() if data is None else ReadSession.from_dict(json.loads(json.dumps(data)))


def _with_details(message: dict[str, Any], details: dict[str, dict[str, Any]]) -> dict[str, Any]:
    """A recorded tool message with the arm's own read details in place of the trunk's."""
    own = details.get(message.get("tool_call_id") or "")
    if own is None:
        return message
    meta = dict(message.get("metadata") or {})
    meta["readbench"] = own
    return {**message, "metadata": meta}
