"""Incremental pi-dcp for a growing history (same results as `readbench.dcp._pidcp.run_pi_dcp`).

pi-dcp is stateless (docs/specs/dcp.md §1): each call's decisions follow from the whole
history. Most of what they depend on is a fact of one message, or of one message and those
before it, and is computed once per history position (`PiSeq.add`):
- step segmentation (dcp.md §1) except its tail: a decision that looked past the end of the
  list ("does execution follow?") is redone on the next call from `seg_restart`;
- per tool result: name, arguments, dedup signature (§2.1), static tool/file protection (§4),
  error flag, placeholder flag, size, token estimate;
- "a later result has the same signature" (dedup keeps the newest, §2.1), which can only turn
  from false to true as results are appended;
- the frontier pins (§4), which only move forward.
Per call, `PiSeq.run` combines them with turn ages, step ages and the protection windows,
exactly as `ProtectionPolicy.get` and the three default strategies do, but re-evaluates only the
results whose inputs changed since the previous call; counters, output list and changed indices
are updated by difference.

supersedeWrites (off by default, on in `pi-dcp-aggressive`) is decided per call from its own
columns (`readbench.dcp._fast_supersede`): it runs between purgeErrors and outputBodyReplace, and
outputBodyReplace's placeholder quotes the arguments it replaced.

Fast only for well-formed histories: every tool-call id appears once across assistant messages,
and every tool result answers a call made earlier that no earlier result answered; with
supersedeWrites, also every call's arguments a dict. Otherwise (`PiSeq.ok` False, or `PiSeq.sw.ok`
False when supersedeWrites runs) the caller uses the straightforward implementation.
"""

from __future__ import annotations

import functools
from bisect import bisect_left, bisect_right, insort
from typing import Any

from inspect_ai.model import ChatMessage, ChatMessageTool

from readbench.dcp._fast_steps import StepSeq
from readbench.dcp._fast_supersede import SupersedeColumns
from readbench.dcp._glob import glob_to_regex
from readbench.dcp._params import PiDcpParams
from readbench.dcp._pidcp_run import is_dcp_placeholder
from readbench.dcp._protection import _path_info, _plan_like, is_verification_command, verification_outcome
from readbench.dcp._seq import text_only
from readbench.dcp._view import blocks, calls_of
from readbench.dcp.strategies.deduplicate import PLACEHOLDER as DEDUP_PLACEHOLDER
from readbench.dcp.strategies.deduplicate import signature_once
from readbench.dcp.strategies.output_replace import placeholder as obr_placeholder
from readbench.dcp.strategies.purge_errors import PREFIX as PURGE_PREFIX
from readbench.dcp.strategies.purge_errors import first_line

__all__ = ["PiSeq", "PiFastOutcome", "path_info"]

STRATEGY_NAMES = ("deduplicate", "purgeErrors", "supersedeWrites", "outputBodyReplace")
"""The strategies `PiSeq` computes (each names `readbench.dcp._fast_pidcp:PiSeq` as its
`incremental` hook; `project` takes this path only when every running strategy does)."""


@functools.lru_cache(maxsize=4096)
def _path_info_of(path: str | None, file: str | None, cwd: str | None) -> Any:
    return _path_info({"path": path, "file": file}, cwd)


def path_info(args: Any, cwd: str | None) -> Any:
    """`_protection._path_info` memoised on the string values it reads (a pure function of them)."""
    if not isinstance(args, dict):
        return None
    path, file = args.get("path"), args.get("file")
    return _path_info_of(path if isinstance(path, str) else None, file if isinstance(file, str) else None, cwd)


class PiFastOutcome:
    """Counters and replacements of one fast pi-dcp call (fields as in `PiDcpRun`)."""

    def __init__(self, pruned: dict[str, int], skipped: dict[str, dict[str, int]], tokens_saved: int,
                 messages: list[ChatMessage], changed: tuple[int, ...]) -> None:
        self.pruned = pruned
        self.skipped = skipped
        self.tokens_saved = tokens_saved
        self.messages = messages
        """Output list (input indices)."""
        self.changed = changed
        """Input indices of replaced messages, ascending."""


class PiSeq(StepSeq):
    """pi-dcp columns of one growing history under fixed `PiDcpParams`."""

    def __init__(self, params: PiDcpParams) -> None:
        super().__init__()
        self.params = params
        self.ok = True
        self.globs = [glob_to_regex(g.strip().replace("\\", "/")) for g in params.protected_file_patterns if g.strip()]
        # calls: id -> (function, arguments, path info)
        self.calls: dict[str, tuple[str, Any, Any]] = {}
        self.answered: set[str] = set()
        # per result ordinal
        self.r_cid: list[str] = []
        self.r_name: list[str] = []
        self.r_args: list[Any] = []
        self.r_static: list[bool] = []
        self.r_err: list[bool] = []
        self.r_ph: list[bool] = []
        self.r_size: list[int] = []
        self.r_dup_later: list[bool] = []
        self.r_summary: list[tuple[int, bool, str] | None] = []
        self.last_sig: dict[str, int] = {}
        # frontier pins (dcp.md §4)
        self.modified: set[str] = set()
        self.read_of_modified: dict[str, str] = {}
        self.plan_reads: dict[str, str] = {}
        self.failing: str | None = None
        self.passing: str | None = None
        # incremental evaluation (run)
        self.r_ord: dict[str, int] = {}
        self.dirty: set[int] = set()
        self.key: tuple[Any, ...] | None = None
        self.pins: set[str] = set()
        self.outcomes: list[tuple[tuple[tuple[str, str], ...], int, ChatMessage | None] | None] = []
        self.counts: dict[tuple[str, str], int] = {
            (name, r): 0 for name in STRATEGY_NAMES for r in ("pruned", "protected", "recent", "other")}
        self.saved = 0
        self.out: list[ChatMessage] = []
        self.changed: list[int] = []
        # supersedeWrites: its columns, the arguments it replaced and the assistant copies of the last call
        self.sw = SupersedeColumns()
        self.sw_args: dict[str, dict[str, Any]] = {}
        self.sw_out: dict[int, ChatMessage] = {}

    def add(self, pos: int, msg: ChatMessage, role: str) -> None:
        """Record the message at view position `pos` (see the module docstring)."""
        self.step_idx.append(-1)
        if role != "assistant":
            self.call_ids.append(None)
            self.text_only.append(False)
        if role == "user":
            self.rcid.append(None)
            return
        p = self.params
        if role == "assistant":
            self.rcid.append(None)
            calls = calls_of(msg)
            ids = frozenset(c.id for c in calls)
            self.call_ids.append(ids if calls else None)
            self.text_only.append(text_only(msg))
            if len(ids) != len(calls):
                self.ok = False
            for c in calls:
                if c.id in self.calls:
                    self.ok = False
                info = path_info(c.arguments, p.cwd)
                self.calls[c.id] = (c.function, c.arguments, info)
                self.sw.add_call(pos, c, c.function in p.protected_tools or self._file_protected(info))
                if c.function in ("write", "edit") and info and info.primary:
                    self.modified.add(info.primary)
            return
        assert isinstance(msg, ChatMessageTool)  # role "toolResult"
        cid = msg.tool_call_id
        self.rcid.append(cid)
        if cid is None or cid not in self.calls or cid in self.answered:
            self.ok = False
            cid = cid or ""
        self.answered.add(cid)
        function, args, info = self.calls.get(cid, ("", None, None))
        name = msg.function or function
        err = msg.error is not None
        k = len(self.r_cid)
        self.r_cid.append(cid)
        self.r_name.append(name)
        self.r_args.append(args)
        self.r_static.append(name in p.protected_tools or self._file_protected(info))
        self.sw.add_result(pos, name, args)
        self.r_err.append(err)
        self.r_ph.append(is_dcp_placeholder(msg.content))
        images = sum(1 for kind, _ in blocks(msg.content) if kind == "image")
        self.r_size.append(self.r_chars[k] + images * (p.min_chars + 1))
        self.r_dup_later.append(False)
        self.r_summary.append(None)
        self.outcomes.append(None)
        self.r_ord[cid] = k
        if p.deduplicate and args is not None:
            sig = signature_once(name, args)
            prev = self.last_sig.get(sig)
            if prev is not None:
                self.r_dup_later[prev] = True
                self.dirty.add(prev)
            self.last_sig[sig] = k
        if name == "read" and info and info.primary in self.modified:
            self.read_of_modified[info.primary] = cid
        if name == "read" and info and info.primary and _plan_like(info):
            self.plan_reads[info.primary] = cid
        if name == "bash" and isinstance(args, dict) and is_verification_command(args.get("command")):
            if verification_outcome(msg.content, err) == "fail":
                self.failing = cid
            else:
                self.passing = cid

    def _file_protected(self, info: Any) -> bool:
        return info is not None and any(g.fullmatch(c) for g in self.globs for c in info.candidates)

    # -- one call --

    def run(self, ran: tuple[str, ...]) -> PiFastOutcome:
        """Apply the strategies in `ran` to the consumed history.

        Only results whose decision inputs may have changed since the previous call are
        re-evaluated: new results, results whose "later duplicate" flag or pin changed, results
        in steps whose step age crossed the step window or whose step was re-segmented, results
        of calls whose arguments supersedeWrites replaced or restored; all of them after a new
        user prompt (turn ages shift) or a change of step engagement. supersedeWrites itself is
        decided afresh for every write/edit call (`SupersedeColumns.run`).
        """
        old_restart, old_nsteps = self.seg_restart, len(self.steps)
        self.out.extend(self.msgs[len(self.out):])
        self.segment()
        p = self.params
        users = self.users
        nsteps = len(self.steps)
        current_steps = nsteps - bisect_right(self.step_starts, users[-1] if users else -1)
        step_active = p.step_protection and p.steps > 0
        turn_active = p.turn_protection and p.turns > 0
        engaged = step_active and (not turn_active or current_steps > p.turns)
        pins: set[str] = set()
        if p.frontier_pins:
            pins.update(self.read_of_modified.values())
            pins.update(self.plan_reads.values())
            if self.failing is not None:
                pins.add(self.failing)
            if self.passing is not None:
                pins.add(self.passing)
        key = (len(users), engaged, ran)
        results = self.results
        if key != self.key:
            self.key = key
            todo: Any = range(len(results))
        else:
            j = min(old_nsteps, nsteps) - p.steps
            lo = old_restart
            if j <= 0:
                lo = 0
            elif j < nsteps and self.step_starts[j] < lo:
                lo = self.step_starts[j]
            todo = set(range(bisect_left(results, lo), len(results)))
            todo.update(self.dirty)
            for cid in pins.symmetric_difference(self.pins):
                todo.add(self.r_ord[cid])
            todo = sorted(todo)
        self.dirty.clear()
        self.pins = pins
        ctx = (users, nsteps, engaged, turn_active, pins, ran)
        sw = self.sw.run(lambda pos: self._recent(pos, ctx)) if "supersedeWrites" in ran else None
        sw_args = sw.args if sw is not None else {}
        if not isinstance(todo, range):
            flipped = [self.r_ord[c] for c in sw_args.keys() ^ self.sw_args.keys() if c in self.r_ord]
            if flipped:
                todo = sorted(set(todo).union(flipped))
        self.sw_args = sw_args
        counts, outcomes, out, changed = self.counts, self.outcomes, self.out, self.changed
        index, msgs = self.index, self.msgs
        for k in todo:
            new = self._evaluate(k, ctx)
            old = outcomes[k]
            if new == old:
                continue
            if old is not None:
                for c in old[0]:
                    counts[c] -= 1
                self.saved -= old[1]
            for c in new[0]:
                counts[c] += 1
            self.saved += new[1]
            outcomes[k] = new
            i = index[results[k]]
            was, now = old is not None and old[2] is not None, new[2] is not None
            out[i] = new[2] if new[2] is not None else msgs[i]  # now
            if now and not was:
                insort(changed, i)
            elif was and not now:
                del changed[bisect_left(changed, i)]
        self._supersede_output(sw_args)
        pruned = {name: counts[(name, "pruned")] for name in STRATEGY_NAMES}
        skipped = {name: {r: counts[(name, r)] for r in ("protected", "recent", "other")} for name in STRATEGY_NAMES}
        saved = self.saved
        if sw is not None:
            pruned["supersedeWrites"] = sw.counts["pruned"]
            skipped["supersedeWrites"] = {r: sw.counts[r] for r in ("protected", "recent", "other")}
            saved += sw.saved
        return PiFastOutcome(pruned, skipped, saved, list(out), tuple(changed))

    def _supersede_output(self, sw_args: dict[str, dict[str, Any]]) -> None:
        """Put this call's assistant copies (arguments superseded) into `out`/`changed`, and
        restore the assistant messages of the previous call's copies that are gone."""
        by_pos: dict[int, dict[str, dict[str, Any]]] = {}
        for pos, call, _ in self.sw.writes:
            if call.id in sw_args:
                by_pos.setdefault(pos, {})[call.id] = sw_args[call.id]
        if not by_pos and not self.sw_out:
            return
        out, changed, index, msgs = self.out, self.changed, self.index, self.msgs
        new = {pos: self.sw.copy(pos, msgs[index[pos]], args) for pos, args in by_pos.items()}
        for pos in self.sw_out.keys() - new.keys():
            i = index[pos]
            out[i] = msgs[i]
            del changed[bisect_left(changed, i)]
        for pos, msg in new.items():
            i = index[pos]
            if pos not in self.sw_out:
                insort(changed, i)
            out[i] = msg
        self.sw_out = new

    def _recent(self, pos: int, ctx: tuple[Any, ...]) -> bool:
        """The turn or step window protects view position `pos` in this call (`ProtectionPolicy.get`)."""
        users, nsteps, engaged, turn_active = ctx[:4]
        p = self.params
        turn_age = len(users) - bisect_right(users, pos)
        si = self.step_idx[pos]
        step_age = nsteps - 1 - si if si >= 0 else -1
        uses_steps = engaged and turn_age == 0 and step_age >= 0
        return (turn_active and turn_age < p.turns and not uses_steps) or (uses_steps and step_age < p.steps)

    def _evaluate(self, k: int, ctx: tuple[Any, ...]) -> tuple[tuple[tuple[str, str], ...], int, ChatMessage | None]:
        """(counter keys, tokens saved, replacement or None) of result `k` in this call:
        `ProtectionPolicy.get` then deduplicate, purgeErrors, outputBodyReplace (dcp.md §2, §4)."""
        users, nsteps, engaged, turn_active, pins, ran = ctx
        p = self.params
        pos = self.results[k]
        turn_age = len(users) - bisect_right(users, pos)
        si = self.step_idx[pos]
        step_age = nsteps - 1 - si if si >= 0 else -1
        uses_steps = engaged and turn_age == 0 and step_age >= 0
        err = self.r_err[k]
        do_dedup, do_purge, do_obr = "deduplicate" in ran, "purgeErrors" in ran, "outputBodyReplace" in ran
        if self.r_static[k] or self.r_cid[k] in pins:
            reason = "protected"
        elif (turn_active and turn_age < p.turns and not uses_steps) or (uses_steps and step_age < p.steps):
            reason = "recent"
        else:
            reason = ""
        keys: list[tuple[str, str]] = []
        if reason:
            if do_dedup:
                keys.append(("deduplicate", reason))
            if err and do_purge:
                keys.append(("purgeErrors", reason))
            elif not err and do_obr:
                keys.append(("outputBodyReplace", reason))
            return tuple(keys), 0, None
        tokens = self.r_chars[k] // 4
        if do_dedup and self.r_dup_later[k]:
            keys.append(("deduplicate", "pruned"))
            if err and do_purge:
                keys.append(("purgeErrors", "recent" if turn_age < p.min_turn_age else "other"))
            elif not err and do_obr:
                keys.append(("outputBodyReplace", "other"))
            return tuple(keys), tokens, self.replaced(k, DEDUP_PLACEHOLDER)
        if err:
            if not do_purge:
                return tuple(keys), 0, None
            if turn_age < p.min_turn_age:
                keys.append(("purgeErrors", "recent"))
            elif self.r_ph[k]:
                keys.append(("purgeErrors", "other"))
            else:
                keys.append(("purgeErrors", "pruned"))
                msg = self.msgs[self.index[pos]]
                return tuple(keys), tokens, self.replaced(k, f"{PURGE_PREFIX}{first_line(msg.content)}...")
            return tuple(keys), 0, None
        if not do_obr:
            return tuple(keys), 0, None
        if self.r_ph[k] or self.r_size[k] < p.min_chars:
            keys.append(("outputBodyReplace", "other"))
            return tuple(keys), 0, None
        keys.append(("outputBodyReplace", "pruned"))
        return tuple(keys), tokens, self.replaced(k, self._obr_text(k, turn_age))

    def _obr_text(self, k: int, turn_age: int) -> str:
        """outputBodyReplace placeholder of result `k` (cached per turn age), quoting its call's
        arguments as supersedeWrites left them in this call."""
        args = self.sw_args.get(self.r_cid[k])
        superseded = args is not None
        hit = self.r_summary[k]
        if hit is not None and hit[1] == superseded and (hit[0] == turn_age or not self.params.turn_counter):
            return hit[2]
        text = obr_placeholder(self.r_name[k], args if superseded else self.r_args[k], turn_age, self.params.turn_counter)
        self.r_summary[k] = (turn_age, superseded, text)
        return text
