"""Incremental sister pipeline for a growing history (same results as `_sister.run_sister`).

The sister extension (docs/specs/dcp.md Part B) proposes, per call, replacements derived
from the completed tool calls; its proposals change only when calls complete or user prompts
arrive, so `SisterSeq` keeps them up to date as messages are appended:
- `dedupe` (§7.2): per key the completed calls in order; a new member re-targets the older
  members' placeholders at the newest call;
- `error-purge`: an errored call becomes eligible once more than `min_turns_old` user prompts
  follow its assistant message;
- `superseded-file-ops`: per path, each op's nearest later successful write and (reads) nearest
  later covering read; an appended op can only fill these in for ops that had none.
Per call, the filters (known keys, `minCharsSaved`, target collapse, claims, protection,
savings), the gate and the application of sticky decisions run over the maintained proposals
with precomputed effects, exactly in the reference's order where order is observable (the
order of new decisions).

Fast only when tool-call ids are unique, every result answers an earlier call that no earlier
result answered, and calls complete in call order; otherwise `ok` is False and the caller
uses `run_sister`.
"""

from __future__ import annotations

import dataclasses
from bisect import bisect_right
from typing import Any

from inspect_ai.model import ChatMessage, ChatMessageTool

from readbench.base.js import js_stringify, utf16_len
from readbench.dcp._fast_fileops import FileOps, file_proposal
from readbench.dcp._gate import accepts, cost_model
from readbench.dcp._glob import glob_to_regex
from readbench.dcp._params import SisterParams
from readbench.dcp._seq import SeqBase, copy_with_text
from readbench.dcp._sister import GateCandidate
from readbench.dcp._sister_common import (
    Proposal,
    _arg_strings,
    estimate_content_tokens,
    estimate_text_tokens,
)
from readbench.dcp._strategy import family_strategies
from readbench.dcp._types import DcpState, DecisionRecord, GateInfo, finite_or_none
from readbench.dcp._view import blocks, calls_of
from readbench.dcp.strategies import sister_dedupe as dd
from readbench.dcp.strategies import sister_error_purge as ep

__all__ = ["SisterSeq", "SisterFastOutcome"]

RESULT, INPUT = "tool_result_content", "tool_call_input"


class _Call:
    """One tool call: position, arguments and (once completed) its result's facts."""

    __slots__ = ("cid", "ordinal", "apos", "cidx", "tool", "args", "rpos", "err", "chars", "ctokens", "image",
                 "name", "static", "before_chars")

    def __init__(self, cid: str, ordinal: int, apos: int, cidx: int, tool: str, args: Any) -> None:
        self.cid, self.ordinal, self.apos, self.cidx, self.tool, self.args = cid, ordinal, apos, cidx, tool, args
        self.rpos: int | None = None
        self.err = False
        self.chars = self.ctokens = 0
        self.image = False
        self.name = tool
        self.static: tuple[bool, bool] | None = None
        self.before_chars = utf16_len(js_stringify(args or {}))


class SisterFastOutcome:
    """What one fast sister call did (fields as `_sister.SisterOutcome`, plus the output)."""

    def __init__(self, state: DcpState, pruned: dict[str, int], newly: dict[str, int], saved: int, gate: GateInfo,
                 messages: list[ChatMessage], changed: tuple[int, ...], candidates: tuple[GateCandidate, ...] = ()) -> None:
        self.state, self.pruned, self.newly_pruned, self.footer_tokens_saved, self.gate = state, pruned, newly, saved, gate
        self.messages, self.changed, self.candidates = messages, changed, candidates


class SisterSeq(SeqBase):
    """Sister proposals and per-call facts of one growing history under fixed `SisterParams`."""

    def __init__(self, params: SisterParams) -> None:
        super().__init__()
        self.params = params
        self.ok = True
        self.names = {n.strip().lower() for n in params.protected_tools}
        self.globs = [glob_to_regex(g) for g in params.protected_path_globs]
        self.calls: dict[str, _Call] = {}
        self.n_calls = 0
        self.last_completed = -1
        self.tok_prefix = [0]
        self.groups: dict[str, list[_Call]] = {}
        self.err_waiting: list[_Call] = []
        self.fileops: FileOps[_Call] = FileOps(params.cwd)
        # proposals: cid -> (proposal, order key, effect (pos, chars, tokens) or None)
        self.p_dedupe: dict[str, tuple[Proposal, tuple[int, ...], tuple[int, int, int] | None]] = {}
        self.p_error: dict[str, tuple[Proposal, tuple[int, ...], tuple[int, int, int] | None]] = {}
        self.p_file: dict[str, tuple[Proposal, tuple[int, ...], tuple[int, int, int] | None]] = {}
        self.copies: dict[int, tuple[Any, ChatMessage]] = {}

    # -- appending messages --

    def add(self, pos: int, msg: ChatMessage, role: str) -> None:
        """Record the message at view position `pos` and update the proposals."""
        call: _Call | None  # a call of an assistant message, or the one a tool result answers
        if role == "user":
            self.tok_prefix.append(self.tok_prefix[-1] + estimate_content_tokens(msg.content))
            self._users_changed()
            return
        if role == "assistant":
            calls = calls_of(msg)
            tokens = sum(estimate_text_tokens(t) for kind, t in blocks(msg.content) if kind in ("text", "thinking"))
            for k, c in enumerate(calls):
                if c.id in self.calls:
                    self.ok = False
                call = _Call(c.id, self.n_calls, pos, k, c.function, c.arguments or {})
                tokens += -(-call.before_chars // 4)  # estimate_text_tokens(JSON.stringify(arguments)), never ""
                self.calls[c.id] = call
                self.n_calls += 1
            self.tok_prefix.append(self.tok_prefix[-1] + tokens)
            return
        ctokens = estimate_content_tokens(msg.content)
        self.tok_prefix.append(self.tok_prefix[-1] + ctokens)
        assert isinstance(msg, ChatMessageTool)  # role "toolResult"
        call = self.calls.get(msg.tool_call_id or "")
        if call is None or call.rpos is not None or call.ordinal <= self.last_completed:
            self.ok = False
            return
        self.last_completed = call.ordinal
        call.rpos = pos
        call.err = msg.error is not None
        call.chars = self.r_chars[-1]
        call.ctokens = ctokens
        call.image = any(kind == "image" for kind, _ in blocks(msg.content))
        call.name = msg.function or call.tool
        self._complete(call)

    def _complete(self, call: _Call) -> None:
        p = self.params
        if p.dedupe:
            group = self.groups.setdefault(dd.dedupe_key(call.tool, call.args), [])
            group.append(call)
            first = group[0].ordinal
            for older in group[:-1]:
                prop = Proposal(dd.STRATEGY_ID, older.cid, RESULT,
                                f"duplicate {older.tool} call; see result of call {call.cid}", dd.placeholder(older.tool, call.cid))
                self.p_dedupe[older.cid] = (prop, (first, older.ordinal), self._effect(older, prop))
        if p.error_purge and call.err:
            self.err_waiting.append(call)
            self._users_changed()
        if p.superseded_file_ops:
            self._add_fileop(call)

    def _users_changed(self) -> None:
        if not self.err_waiting:
            return
        p = self.params
        users = self.users
        waiting = []
        for call in self.err_waiting:
            after = len(users) - bisect_right(users, call.apos)
            if after <= p.min_turns_old:
                waiting.append(call)
                continue
            reason = f"errored {call.tool} call input older than {p.min_turns_old} turns"
            prop = Proposal(ep.STRATEGY_ID, call.cid, INPUT, reason, None)
            self.p_error[call.cid] = (prop, (call.ordinal,), self._effect(call, prop))
        self.err_waiting = waiting

    def _add_fileop(self, call: _Call) -> None:
        filled, first = self.fileops.add(call)
        for op in filled:  # (re)state the proposal of each op from its nearest later write/read
            prop = file_proposal(op)
            if prop is not None:
                self.p_file[op.call.cid] = (prop, (first, -op.call.ordinal), self._effect(op.call, prop))

    # -- per-call helpers --

    def _effect(self, call: _Call | None, d: Any) -> tuple[int, int, int] | None:
        """`_sister._effect`: (position changed, chars saved, tokens saved) or None."""
        if call is None or call.rpos is None:
            return None
        if d.kind == RESULT:
            text = d.placeholder if d.placeholder is not None else ""
            return (call.rpos, max(0, call.chars - utf16_len(text)),
                    max(0, call.ctokens - estimate_text_tokens(text)))
        if not call.err:
            return None
        before = call.before_chars
        after = js_stringify(ep.pruned_arguments(d.reason))
        return (call.apos, max(0, before - utf16_len(after)),
                max(0, -(-before // 4) - estimate_text_tokens(after)))

    def _protected(self, call: _Call | None, boundary: int) -> bool:
        """`_sister_common.is_protected` for a call id whose record is `call`."""
        if call is None:
            return False
        if (call.rpos is not None and call.rpos >= boundary) or call.apos >= boundary:
            return True
        completed = call.rpos is not None
        if call.static is None or call.static[0] != completed:
            name = call.name
            static = bool(name) and name.strip().lower() in self.names
            if not static:
                for s in _arg_strings(call.args, 2):
                    v = s.strip()
                    if v and any(g.fullmatch(v) for g in self.globs):
                        static = True
                        break
            call.static = (completed, static)
        return call.static[1]

    def _result_copy(self, call: _Call, text: str) -> ChatMessage:
        hit = self.copies.get(call.rpos)  # type: ignore[arg-type]
        if hit is not None and hit[0] == text:
            return hit[1]
        new = copy_with_text(self.msgs[self.index[call.rpos]], text)  # type: ignore[index]
        self.copies[call.rpos] = (text, new)  # type: ignore[index]
        return new

    def _input_copy(self, apos: int, purged: dict[str, str]) -> ChatMessage:
        key = tuple(sorted(purged.items()))
        hit = self.copies.get(apos)
        if hit is not None and hit[0] == key:
            return hit[1]
        msg = self.msgs[self.index[apos]]
        calls = [dataclasses.replace(c, arguments=ep.pruned_arguments(purged[c.id])) if c.id in purged else c
                 for c in calls_of(msg)]
        new = msg.model_copy(update={"tool_calls": calls})
        self.copies[apos] = (key, new)
        return new

    # -- one call --

    def run(self, state: DcpState) -> SisterFastOutcome:
        """`run_sister` over the consumed history with sticky `state`."""
        p = self.params
        n = len(self.roles)
        users = self.users
        if p.recent_turns <= 0:
            boundary = n
        elif not users:
            boundary = 0
        else:
            boundary = users[max(0, len(users) - p.recent_turns)]
        known = state.keys
        claimed = {f"{d.kind}:toolCallId:{d.tool_call_id}" for d in state.decisions}
        calls = self.calls
        floor = p.min_chars_saved

        def fresh(entry: tuple[Proposal, tuple[int, ...], Any]) -> bool:
            prop, _, eff = entry
            if prop.key in known:
                return False
            if floor <= 0:
                return True
            return (prop.kind == RESULT and calls[prop.tool_call_id].image) or (eff is not None and eff[1] >= floor)

        candidates: list[tuple[tuple[int, ...], Proposal, int, int]] = []
        taken: set[str] = set()
        for block, table in ((0, self.p_dedupe), (1, self.p_error), (2, self.p_file)):
            for cid, entry in table.items():
                if not fresh(entry):
                    continue
                prop, order, eff = entry
                if prop.kind == RESULT:
                    if cid in taken:
                        continue
                    taken.add(cid)
                if prop.target in claimed or self._protected(calls.get(cid), boundary):
                    continue
                if eff is None or eff[2] <= 0:
                    continue
                candidates.append(((block, *order), prop, eff[0], eff[2]))

        a_state = "idle" if n and self.roles[-1] == "user" or n == 0 else "mid_loop"
        threshold = p.threshold_idle if a_state == "idle" else p.threshold_mid_loop
        if not candidates:
            gate = GateInfo(p.gate_mode, a_state, threshold, 0, None, 0, 0, 0.0, 0.0, None, False)
            accepted: list[Proposal] = []
        elif p.gate_mode == "off":
            removed = sum(c[3] for c in candidates)
            gate = GateInfo("off", a_state, threshold, len(candidates), None, 0, removed, 0.0, 0.0, None, True)
            accepted = [c[1] for c in sorted(candidates, key=lambda c: c[0])]
        else:
            earliest = min(c[2] for c in candidates)
            tail = self.tok_prefix[n] - self.tok_prefix[earliest]
            removed = sum(c[3] for c in candidates)
            model = cost_model(tail, removed, p.cached_price_ratio)
            ok = accepts(model, threshold, p.gate_mode)
            gate = GateInfo(
                p.gate_mode, a_state, threshold, len(candidates), self.index[earliest], tail, removed,
                model.penalty_tokens, model.recurring_saving_tokens, finite_or_none(model.break_even_calls), ok,
            )
            accepted = [c[1] for c in sorted(candidates, key=lambda c: c[0])] if ok else []

        ids = [s.name for s in family_strategies("sister")]  # the reference path's counters
        pruned = {sid: 0 for sid in ids}
        newly = {sid: 0 for sid in ids}
        saved = 0
        applied: set[str] = set()
        new_decisions = list(state.decisions)
        results: dict[int, ChatMessage] = {}
        inputs: dict[int, dict[str, str]] = {}
        todo: list[DecisionRecord | Proposal] = [*state.decisions, *accepted]
        for d in todo:
            target = f"{d.kind}:toolCallId:{d.tool_call_id}"
            call = calls.get(d.tool_call_id)
            if target in applied or self._protected(call, boundary):
                continue
            if self._effect(call, d) is None:
                continue
            if d.kind == RESULT:
                results[call.rpos] = self._result_copy(call, d.placeholder or "")  # type: ignore[union-attr,index,arg-type]
                saved += call.chars // 4  # type: ignore[union-attr]
            else:
                inputs.setdefault(call.apos, {})[call.cid] = d.reason  # type: ignore[union-attr]
                saved += call.before_chars // 4  # type: ignore[union-attr]
            applied.add(target)
            pruned[d.strategy_id] = pruned.get(d.strategy_id, 0) + 1
            if isinstance(d, Proposal):
                newly[d.strategy_id] += 1
                new_decisions.append(DecisionRecord(d.key, d.strategy_id, d.kind, d.tool_call_id, d.reason, d.placeholder))
        for apos, purged in inputs.items():
            results[apos] = self._input_copy(apos, purged)
        out = list(self.msgs)
        index = self.index
        changed = []
        for pos in sorted(results):
            out[index[pos]] = results[pos]
            changed.append(index[pos])
        new_state = DcpState(tuple(new_decisions)) if len(new_decisions) != len(state.decisions) else state
        measured = tuple(
            GateCandidate(prop.strategy_id, prop.kind, prop.tool_call_id, index[pos], self.tok_prefix[n] - self.tok_prefix[pos], tokens)
            for _, prop, pos, tokens in sorted(candidates, key=lambda c: c[0])
        )
        return SisterFastOutcome(new_state, pruned, newly, saved, gate, out, tuple(changed), measured)


