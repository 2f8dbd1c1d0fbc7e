"""Incremental pi-dcp for a growing history (same results as `readbench.dcp._pidcp.run_pi_dcp`).

pi-dcp is stateless (docs/specs/dcp.md §1): each call's decisions follow from the whole
history. Most of what they depend on is a fact of one message, or of one message and those
before it, and is computed once per history position (`readbench.dcp._fast_picols.PiColumns`,
shared by the configurations that agree on the four parameters it reads):
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

from bisect import bisect_left, bisect_right, insort
from typing import Any

from inspect_ai.model import ChatMessage

from readbench.dcp._fast_picols import PiColumns, path_info
from readbench.dcp._fast_supersede import SupersedeColumns, SupersedeOutcome
from readbench.dcp._params import PiDcpParams
from readbench.dcp._seq import SeqBase
from readbench.dcp.strategies.deduplicate import PLACEHOLDER as DEDUP_PLACEHOLDER
from readbench.dcp.strategies.output_replace import placeholder as obr_placeholder
from readbench.dcp.strategies.purge_errors import PREFIX as PURGE_PREFIX
from readbench.dcp.strategies.purge_errors import first_line

__all__ = ["PiSeq", "PiFastOutcome", "path_info"]

STRATEGY_NAMES = ("deduplicate", "purgeErrors", "supersedeWrites", "outputBodyReplace")
"""The strategies `PiSeq` computes (each names `readbench.dcp._fast_pidcp:PiSeq` as its
`incremental` hook; `project` takes this path only when every running strategy does)."""
_REASONS = ("protected", "recent", "other")


class PiFastOutcome:
    """Counters and replacements of one fast pi-dcp call (fields as in `PiDcpRun`)."""

    def __init__(self, pruned: dict[str, int], counts: dict[tuple[str, str], int], sw_counts: dict[str, int] | None,
                 tokens_saved: int, messages: list[ChatMessage], changed: tuple[int, ...]) -> None:
        self.pruned = pruned
        self._counts = counts
        self._sw_counts = sw_counts
        self.tokens_saved = tokens_saved
        self.messages = messages
        """Output list (input indices)."""
        self.changed = changed
        """Input indices of replaced messages, ascending."""

    @property
    def skipped(self) -> dict[str, dict[str, int]]:
        """strategy -> reason -> results skipped (built on demand from the call's counters: the
        session replay reads only `pruned` and `tokens_saved`)."""
        counts = self._counts
        out = {name: {r: counts[(name, r)] for r in _REASONS} for name in STRATEGY_NAMES}
        if self._sw_counts is not None:
            out["supersedeWrites"] = {r: self._sw_counts[r] for r in _REASONS}
        return out


class PiSeq(SeqBase):
    """pi-dcp decisions of one growing history under fixed `PiDcpParams`.

    The per-message facts live in `cols` (`PiColumns`): its own (`project`'s cache: `sync`
    consumes the new messages) or one shared with other configurations of the same
    `PiColumns.key` (`readbench.dcp._many`: the caller syncs `cols`, then calls `catch_up`).
    The column lists are aliased here, so the evaluation reads them as its own.
    """

    def __init__(self, params: PiDcpParams, cols: PiColumns | None = None) -> None:
        super().__init__()
        self.params = params
        self.own = cols is None
        c = self.cols = cols if cols is not None else PiColumns(params)
        self.msgs, self.index, self.roles, self.users, self.results, self.r_chars = (
            c.msgs, c.index, c.roles, c.users, c.results, c.r_chars)
        self.step_idx, self.steps, self.step_starts = c.step_idx, c.steps, c.step_starts
        self.r_cid, self.r_name, self.r_args, self.r_static = c.r_cid, c.r_name, c.r_args, c.r_static
        self.r_err, self.r_ph, self.r_images, self.r_dup_later, self.r_ord = c.r_err, c.r_ph, c.r_images, c.r_dup_later, c.r_ord
        # per result ordinal, this configuration's
        self.r_summary: list[tuple[int, bool, str] | None] = []
        # incremental evaluation (run)
        self.dirty: set[int] = set()
        self.key: tuple[Any, ...] | None = None
        self.seg = (0, 0)  # (seg_restart, number of steps) after the previous call's segmentation
        self.pins: set[str] = set()
        self.outcomes: list[tuple[tuple[tuple[str, str], ...], int, ChatMessage | None] | None] = []
        self.counts: dict[tuple[str, str], int] = {
            (name, r): 0 for name in STRATEGY_NAMES for r in ("pruned", *_REASONS)}
        self.saved = 0
        self.out: list[ChatMessage] = []
        self.changed: list[int] = []
        # supersedeWrites (fed only when enabled): its columns, the arguments it replaced and the
        # assistant copies of the last call
        self.sw = SupersedeColumns()
        self.sw_args: dict[str, dict[str, Any]] = {}
        self.sw_out: dict[int, ChatMessage] = {}
        self._seen_flips = self._seen_calls = 0

    @property
    def ok(self) -> bool:
        """The history is well formed (`PiColumns.ok`)."""
        return self.cols.ok

    def sync(self, messages: list[ChatMessage]) -> bool:
        """`SeqBase.sync` through the own `cols` (a shared `cols` is synced by its owner)."""
        if self.own and not self.cols.sync(messages):
            return False
        self.catch_up()
        return True

    def catch_up(self) -> None:
        """Take in what `cols` consumed since the last call: per-result slots, the results whose
        later-duplicate flag turned true, and (with supersedeWrites) its calls and reads."""
        c = self.cols
        done = len(self.outcomes)
        n = len(c.r_cid)
        if n > done:
            new = [None] * (n - done)
            self.outcomes.extend(new)
            self.r_summary.extend(new)
            self.r_copy.extend(new)
        if len(c.dup_flips) > self._seen_flips:
            self.dirty.update(c.dup_flips[self._seen_flips:])
            self._seen_flips = len(c.dup_flips)
        if self.params.supersede_writes:
            for pos, call, static in c.call_log[self._seen_calls:]:
                self.sw.add_call(pos, call, static)
            for k in range(done, n):
                self.sw.add_result(c.results[k], c.r_name[k], c.r_args[k])
        self._seen_calls = len(c.call_log)

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
        old_restart, old_nsteps = self.seg
        self.out.extend(self.msgs[len(self.out):])
        ctx = self.context(ran)
        users, nsteps, engaged, _, pins, _ = ctx
        self.seg = (self.cols.seg_restart, nsteps)
        p = self.params
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
        saved = self.saved
        if sw is not None:
            pruned["supersedeWrites"] = sw.counts["pruned"]
            saved += sw.saved
        return PiFastOutcome(pruned, dict(counts), sw.counts if sw is not None else None, saved, list(out), tuple(changed))

    def context(self, ran: tuple[str, ...]) -> tuple[Any, ...]:
        """The call's evaluation context: (user positions, steps, step protection engaged, turn
        protection active, pinned call ids, strategies run), after segmenting the consumed history."""
        cols = self.cols
        cols.segment()
        p = self.params
        users = self.users
        nsteps = len(self.steps)
        current_steps = nsteps - bisect_right(self.step_starts, users[-1] if users else -1)
        step_active = p.step_protection and p.steps > 0
        turn_active = p.turn_protection and p.turns > 0
        engaged = step_active and (not turn_active or current_steps > p.turns)
        pins: set[str] = set()
        if p.frontier_pins:
            pins.update(cols.read_of_modified.values())
            pins.update(cols.plan_reads.values())
            if cols.failing is not None:
                pins.add(cols.failing)
            if cols.passing is not None:
                pins.add(cols.passing)
        return (users, nsteps, engaged, turn_active, pins, ran)

    def supersede(self, ran: tuple[str, ...]) -> SupersedeOutcome:
        """supersedeWrites' decisions in this call, as `run` would take them, without applying
        anything (`readbench.dcp._many` asks it whether a twin configuration's output stands)."""
        ctx = self.context(ran)
        return self.sw.run(lambda pos: self._recent(pos, ctx))

    def reset(self) -> None:
        """Forget the evaluation state (the next `run` evaluates every result afresh, as a new
        sequence's first call does); the columns, supersedeWrites' included, are kept."""
        n = len(self.outcomes)
        self.outcomes = [None] * n
        self.r_summary = [None] * n
        self.counts = dict.fromkeys(self.counts, 0)
        self.saved = 0
        self.out, self.changed = [], []
        self.key = None
        self.dirty.clear()
        self.pins = set()
        self.sw_args, self.sw_out = {}, {}

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
        if self.r_ph[k] or self.r_chars[k] + self.r_images[k] * (p.min_chars + 1) < p.min_chars:
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
