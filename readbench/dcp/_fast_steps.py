"""Incremental step segmentation of a growing history (pi-dcp's steps, docs/specs/dcp.md §1).

The same steps as `readbench.dcp._ages.segment_steps`, kept up to date as messages are appended:
a decision that looked past the end of the list ("does execution follow?") is redone on the next
call from `seg_restart`; everything before it is final. `StepSeq` holds the columns; its
subclass (`readbench.dcp._fast_pidcp.PiSeq`) fills `call_ids`, `text_only`, `rcid` and
`step_idx` as it consumes each message.
"""

from __future__ import annotations

from readbench.dcp._seq import SeqBase

__all__ = ["StepSeq"]


class StepSeq(SeqBase):
    """Step columns over the view positions of one growing history.

    Attributes (index = view position): `call_ids` the ids of an assistant message's tool calls
    (None for other roles or without calls); `text_only` an assistant message without calls and
    with some non-blank text; `rcid` a tool result's call id; `step_idx` the step holding the
    position (-1 = none). `steps` (start, end) view positions per step, `step_starts` their
    starts, `seg_restart` the first position whose segmentation may still change.
    """

    def __init__(self) -> None:
        super().__init__()
        self.call_ids: list[frozenset[str] | None] = []
        self.text_only: list[bool] = []
        self.rcid: list[str | None] = []
        self.step_idx: list[int] = []
        self.steps: list[tuple[int, int]] = []
        self.step_starts: list[int] = []
        self.seg_restart = 0

    def _progress(self, p: int) -> tuple[bool, bool]:
        """(`_progress(p)`, whether the answer can no longer change as messages are appended)."""
        roles = self.roles
        n = len(roles)
        if p >= n:
            return False, False
        if roles[p] != "assistant" or not self.text_only[p]:
            return False, True
        for q in range(p + 1, n):
            r = roles[q]
            if r == "user":
                return False, True
            if r == "toolResult" or (r == "assistant" and self.call_ids[q]):
                return True, True
        return False, False

    def segment(self) -> None:
        """Bring `steps`/`step_idx` up to date with the consumed messages."""
        start = self.seg_restart
        while self.steps and self.steps[-1][0] >= start:
            s, e = self.steps.pop()
            self.step_starts.pop()
            for q in range(s, e + 1):
                self.step_idx[q] = -1
        roles, call_ids, rcid = self.roles, self.call_ids, self.rcid
        n = len(roles)
        restart: int | None = None
        pos = start
        while pos < n:
            role = roles[pos]
            if role == "user":
                pos += 1
                continue
            if role == "assistant" and not call_ids[pos]:
                prog, final = self._progress(pos)
                if not final and restart is None:
                    restart = pos
                if prog:
                    self._add_step(pos, pos)
                pos += 1
                continue
            ids = call_ids[pos]
            end = pos
            cur = pos + 1 if ids else pos
            while cur < n and roles[cur] == "toolResult" and (ids is None or rcid[cur] in ids):
                end = cur
                cur += 1
            prog, final = self._progress(cur)
            if not final and restart is None:
                restart = pos
            if prog:
                end = cur
            self._add_step(pos, end)
            pos = end + 1
        self.seg_restart = restart if restart is not None else n

    def _add_step(self, start: int, end: int) -> None:
        k = len(self.steps)
        self.steps.append((start, end))
        self.step_starts.append(start)
        for q in range(start, end + 1):
            self.step_idx[q] = k
