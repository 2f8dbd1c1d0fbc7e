"""A recorded session's calls as cache-simulator requests, under a calibration.

shared/specs/sessions.md §5 (what the recorded files leave out and how the bill reveals it),
caching.md §8.1 (blocks and prefix hashes). Each call's recorded request is rendered once by the
live benchmark's own `RequestBuilder` (so replays and live evals count and hash the same way);
a `Calibration` then maps it to what the provider most likely received:

- tokens: every recorded block's count becomes `round(a * counted + b)` (billed ~ a x counted + b
  per block, fitted per model from the bill: `readbench.replay.calibrate`);
- the unrecorded head (system prompt + tool schemas, and anything else every request of a
  model starts with) is one or more `system` blocks of `heads[model]` tokens in all, split at
  `head_cuts`, in front (a harness may send each model its own system prompt);
- content a harness adds unrecorded at the start of one context (Claude Code re-attaches files
  after a compaction, sessions.md §2) is one more block of `context_extra[(model, context)]`
  tokens right after the head;
- unrecorded content that enters a context mid-way and stays (`Insertion`s, inferred from the
  bill: e.g. Claude Code's plan-mode instructions, files re-attached after a compaction) is one
  more block of its billed size at its place in every later call of that context;
- exogenous prefix changes (`Break`s, inferred from the bill): from the break's call on, every
  block that starts at or after the break's token position carries a new content salt, so the
  provider's cache sees new bytes there (a restart re-rendering the system prompt is a break at
  position 0);
- thinking parameters and the like enter as the call's `params` block (caching.md §8.1).
Blocks are interned per (recorded block, salt), so consecutive requests share block objects and
the simulator's prefix chaining stays O(new blocks) per call.
"""

from __future__ import annotations

import bisect
import functools
import hashlib
import itertools
import operator
from dataclasses import dataclass, field

from inspect_ai.model import ChatMessage

from readbench.cache.adapter import CallRecord, RequestBuilder
from readbench.cache.blocks import Block, Request
from readbench.sessions import Session

__all__ = ["CALL_KINDS", "Break", "Calibration", "Insertion", "RequestSet", "TokenFit", "call_records", "kind_rate"]

#: Seconds between calls of a transcript that records no times (e.g. Codex's Sept-2025 format).
UNTIMED_STEP_SECONDS = 10.0


@dataclass(frozen=True)
class TokenFit:
    """billed ~ a x counted + b per block (tokens), for one model.

    Attributes:
        a: multiplier on readbench's count (dimensionless).
        b: tokens added per block (framing, unrecorded per-block content).
        n: consecutive-call pairs the fit used (0 = not fitted: the identity).
        source: where it came from (`identity`, `session fit`, `calibration table <date>`).
    """

    a: float = 1.0
    b: float = 0.0
    n: int = 0
    source: str = "identity"

    def apply(self, tokens: int) -> int:
        """Calibrated tokens of one block: round(a x tokens + b), at least 0."""
        return max(int(round(self.a * tokens + self.b)), 0)


@dataclass(frozen=True)
class Break:
    """An exogenous prefix change: from call `call_index` on, content from token `token_position`
    on differs from what the recording shows (e.g. a restart that re-rendered the system prompt).

    Attributes:
        call_index: the first call that sent the changed bytes.
        token_position: first token (in the calibrated request) whose block changed; 0 = all.
        billed_read: the cache read the bill shows at that call (tokens), for the record.
    """

    call_index: int
    token_position: int
    billed_read: int


@dataclass(frozen=True)
class Insertion:
    """Unrecorded content the bill shows entering one context at one call and staying there (e.g.
    Claude Code's plan-mode instructions or the files it re-attaches after a compaction,
    sessions.md §2): from call `call_index` on, every call of context `context` carries a block of
    `tokens` billed tokens right after its first `after_messages` non-system messages.

    Attributes:
        call_index: the first call that sent it.
        context: the context (Session.contexts index) it belongs to.
        after_messages: non-system messages before it (the messages the previous call sent).
        tokens: its size in billed tokens (not rescaled by the token fit).
    """

    call_index: int
    context: int
    after_messages: int
    tokens: int


@dataclass(frozen=True)
class Calibration:
    """How to turn a recorded session into provider requests (module docstring).

    Attributes:
        tokens: canonical model -> TokenFit (a model absent here uses the identity).
        heads: model -> its unrecorded head, in tokens (absent = none).
        head_cuts: token offsets inside a head where it splits into separate blocks (from
            partial reads inside the head and a cold start's read).
        context_extra: (model, context index) -> unrecorded tokens at the start of that
            context's messages (absent = none).
        tier: the write TTL tier (`5m` or `1h`), None when unknown.
        cold_start_tokens: tokens of the first request already cached by an earlier session.
        breaks: exogenous prefix changes, by call.
        break_rates: call kind (`CALL_KINDS`: a call that sends tool results, a new user prompt,
            a prompt after an aborted call, ...) -> the share of priced calls of that kind in the
            fitted window that were exogenous breaks: the expected rate for calls the fit did not
            see (`kind_rate`: an unseen kind takes its coarser kind's rate).
        break_counts: call kind -> (breaks, priced calls) behind `break_rates`.
        insertions: unrecorded content entering a context mid-way, inferred from the bill.
        notes: what was fitted and what could not be, in words.
    """

    tokens: dict[str, TokenFit] = field(default_factory=dict)
    heads: dict[str, int] = field(default_factory=dict)
    head_cuts: tuple[int, ...] = ()
    context_extra: dict[tuple[str, int], int] = field(default_factory=dict)
    tier: str | None = None
    cold_start_tokens: int = 0
    breaks: tuple[Break, ...] = ()
    break_rates: dict[str, float] = field(default_factory=dict)
    break_counts: dict[str, tuple[int, int]] = field(default_factory=dict)
    insertions: tuple[Insertion, ...] = ()
    notes: tuple[str, ...] = ()

    def head(self, model: str) -> int:
        """The unrecorded head of `model`'s requests (tokens)."""
        return self.heads.get(model, 0)


#: Call kinds (`RequestSet.call_kind`) and the coarser kind whose break rate stands in for one
#: the fitted calls never saw (`user_turn`: every kind of user turn together).
CALL_KINDS: dict[str, str | None] = {
    "tool": None, "user_turn": None, "prompt": "user_turn", "resume": "user_turn", "after_abort": "user_turn",
    "notification": "user_turn", "command": "user_turn", "thinking_change": "user_turn", "model_change": "user_turn",
}


def kind_rate(rates: dict[str, float], kind: str) -> float:
    """The break rate of `kind`, or of its coarser kind when `kind` was not seen (0 when neither)."""
    while kind is not None:
        if kind in rates:
            return rates[kind]
        kind = CALL_KINDS.get(kind)
    return 0.0


def _salted(h: bytes, salt: int) -> bytes:
    return h if salt == 0 else hashlib.blake2b(h + salt.to_bytes(4, "big"), digest_size=16).digest()


def call_records(session: Session, requests: list[list[ChatMessage]] | None = None) -> list[CallRecord]:
    """Each call of `session` as a CallRecord (messages: `requests[i]` or the recorded request;
    tools and request settings as recorded; times and output are not used by RequestSet)."""
    return [CallRecord(requests[i] if requests is not None else session.request(i), list(call.tools or ()),
                       0, 0.0, 0.0, call.params) for i, call in enumerate(session.calls)]


class RequestSet:
    """The calls of one session rendered once, calibrated on demand.

    Args:
        session: the imported session.
        family: tokenizer family of the priced model (models.csv `tokenizer`).
        models: canonical priced model per call (same length as `session.calls`).
        requests: the message list each call sends, in place of the recorded ones (e.g. a DCP
            projection of each recorded request); default `session.request(i)`.
        builder: a RequestBuilder to share with other RequestSets of the same session (its memo
            renders each message object once, whatever set it appears in).
        records: the calls as CallRecords (`call_records`), to share between sets of other
            tokenizer families: the builder then renders each call once for all families.
    """

    def __init__(self, session: Session, family: str, models: list[str], *,
                 requests: list[list[ChatMessage]] | None = None, builder: RequestBuilder | None = None,
                 records: list[CallRecord] | None = None) -> None:
        self.session = session
        self.family = family
        self.models = models
        builder = builder if builder is not None else RequestBuilder()
        self.base: list[tuple[Block, ...]] = []
        self.times: list[tuple[float, float]] = []
        prev = float("-inf")
        records = records if records is not None else call_records(session, requests)
        for i, call in enumerate(session.calls):
            self.base.append(builder.build(records[i], family).blocks)
            start = call.ts_start_seconds
            if start is None:
                start = (prev + UNTIMED_STEP_SECONDS) if prev > float("-inf") else 0.0
            start = max(start, prev)  # clocks written by different processes can step back
            first = call.ts_first_token_seconds or call.ts_end_seconds or start
            self.times.append((start, max(first, start)))
            prev = start
        self._memo: dict[tuple[int, int, int], Block] = {}
        self._fit_ids: dict[tuple[float, float, int], int] = {}
        self._starts: dict[tuple, tuple[Calibration, tuple[Block, ...]]] = {}
        self._last: tuple | None = None  # (key, recorded blocks, calibrated blocks, positions, call, calib)
        self._inserted: dict[Insertion, Block] = {}  # one Block object per insertion (ids: no token fit)
        self._raw_ids: set[int] = set()

    def call_kind(self, i: int) -> str:
        """What started call i, from recorded facts (`CALL_KINDS`): `tool` when it sends tool
        results; a user turn is `prompt`, or more precisely (first match) `resume` (the harness
        restarted before it), `after_abort` (the previous call was aborted or errored),
        `notification` (Claude Code's background-task notification), `command` (the user's own
        command output, e.g. Claude Code's `/mcp`), `thinking_change` or `model_change` (an event
        at this call). Exogenous breaks are counted per kind (sessions.md §5: restarts and
        notification turns break the prefix, tool calls do not)."""
        from inspect_ai.model import ChatMessageTool, ChatMessageUser

        call = self.session.calls[i]
        ctx = self.session.contexts[call.context]
        last = ctx[call.n_messages - 1] if call.n_messages else None
        if isinstance(last, ChatMessageTool) or not isinstance(last, ChatMessageUser):
            return "tool"
        events = {e.kind for e in self.session.events if e.call_index == i}
        if "resume" in events:
            return "resume"
        prev = self.session.calls[i - 1] if i > 0 else None
        if prev is not None and (prev.stop_reason in ("aborted", "error") or (prev.usage is not None and prev.usage.input_tokens == 0)):
            return "after_abort"
        text = last.text.lstrip()
        if text.startswith("<task-notification>"):
            return "notification"
        if text.startswith(("<local-command-stdout>", "<command-name>", "<local-command-caveat>")):
            return "command"
        for kind in ("thinking_change", "model_change"):
            if kind in events:
                return kind
        return "prompt"

    def counted(self, i: int) -> tuple[int, ...]:
        """readbench's token count of each recorded block of call i (no calibration)."""
        return tuple(b.tokens for b in self.base[i])

    def _start_blocks(self, calib: Calibration, model: str, ctx: int, salt_at: tuple[tuple[int, int], ...]) -> tuple[Block, ...]:
        """The head segments and the context's unrecorded start (memoised: the same objects on
        every call that shares them, so the simulator finds the shared prefix by identity)."""
        key = (id(calib), model, ctx, salt_at)
        hit = self._starts.get(key)
        if hit is not None and hit[0] is calib:
            return hit[1]
        size = calib.head(model)
        out = []
        if size > 0:
            cuts = [c for c in sorted(set(calib.head_cuts)) if 0 < c < size]
            for lo, hi in itertools.pairwise([0, *cuts, size]):
                salt = _salt(salt_at, lo)
                h = hashlib.blake2b(f"head:{self.session.session_id}:{model}:{lo}:{hi}:{salt}".encode(), digest_size=16).digest()
                out.append(Block("system", "system", hi - lo, h, True))
        extra = calib.context_extra.get((model, ctx), 0)
        if extra > 0:
            salt = _salt(salt_at, max(size, 0))
            h = hashlib.blake2b(f"context:{self.session.session_id}:{ctx}:{salt}".encode(), digest_size=16).digest()
            out.append(Block("text", "user", extra, h, False))
        blocks = tuple(out)
        self._starts[key] = (calib, blocks)
        return blocks

    def request(self, i: int, calib: Calibration, output_tokens: int) -> Request:
        """Call i as the provider received it under `calib` (module docstring).

        Consecutive calls share most blocks: the calibrated blocks of the previous call are
        reused over the identical prefix of recorded blocks, so a call costs O(new blocks).

        Raises:
            IndexError: no call i.
        """
        model = self.models[i]
        fit = calib.tokens.get(model, TokenFit())
        fid = self._fit_ids.setdefault((fit.a, fit.b, fit.n), len(self._fit_ids))
        salt_at = tuple((b.token_position, k + 1) for k, b in enumerate(calib.breaks) if b.call_index <= i)
        start_blocks = self._start_blocks(calib, model, self.session.calls[i].context, salt_at)
        base = self.base[i]
        if calib.insertions:
            base = self._with_insertions(i, base, calib)
        key = (id(calib), fid, salt_at, start_blocks)
        last = self._last
        if last is not None and last[0] == key and last[5] is calib:
            prev_base, prev_out, prev_pos = last[1], last[2], last[3]
            k = _identical_prefix(base, prev_base)
            blocks = list(prev_out[: len(start_blocks) + k])
            positions = prev_pos[: k + 1]
        else:
            k = 0
            blocks = list(start_blocks)
            positions = [sum(b.tokens for b in start_blocks)]
        memo = self._memo
        pos = positions[-1]
        for b in base[k:]:
            salt = _salt(salt_at, pos) if salt_at else 0
            mk = (id(b), fid, salt)
            out = memo.get(mk)
            if out is None:
                tokens = 0 if b.kind == "params" else b.tokens if id(b) in self._raw_ids else fit.apply(b.tokens)
                out = Block(b.kind, b.role, tokens, _salted(b.content_hash, salt), b.ends_message)
                memo[mk] = out
            blocks.append(out)
            pos += out.tokens
            positions.append(pos)
        result = tuple(blocks)
        self._last = (key, base, result, positions, i, calib)
        start, first = self.times[i]
        return Request(result, start, first, output_tokens)


    def _with_insertions(self, i: int, base: tuple[Block, ...], calib: Calibration) -> tuple[Block, ...]:
        """Call i's recorded blocks with the insertions of its context that started at or before
        it, each after the block that ends its `after_messages`-th non-system message."""
        ctx = self.session.calls[i].context
        todo = sorted((x for x in calib.insertions if x.context == ctx and x.call_index <= i), key=lambda x: x.after_messages)
        if not todo:
            return base
        out: list[Block] = []
        count, k = 0, 0
        for b in base:
            while k < len(todo) and todo[k].after_messages <= count:
                out.append(self._insertion_block(todo[k]))
                k += 1
            out.append(b)
            if b.ends_message and b.role not in ("tools", "system"):
                count += 1
        out.extend(self._insertion_block(x) for x in todo[k:])
        return tuple(out)

    def _insertion_block(self, ins: Insertion) -> Block:
        blk = self._inserted.get(ins)
        if blk is None:
            h = hashlib.blake2b(f"insertion:{self.session.session_id}:{ins}".encode(), digest_size=16).digest()
            blk = self._inserted[ins] = Block("text", "user", ins.tokens, h, True)
            self._raw_ids.add(id(blk))
        return blk


def _identical_prefix(a: tuple, b: tuple) -> int:
    """Length of the longest prefix of identical objects, at C speed."""
    n = min(len(a), len(b))
    return next(itertools.compress(itertools.count(), map(operator.is_not, a, b)), n)


def _salt(salt_at: tuple[tuple[int, int], ...], position: int) -> int:
    """The salt of a block starting at token `position`: the latest break (highest epoch) whose
    position is at or before it; 0 when none is."""
    positions, best = _salt_index(salt_at)
    k = bisect.bisect_right(positions, position)
    return best[k - 1] if k else 0


@functools.lru_cache(maxsize=256)
def _salt_index(salt_at: tuple[tuple[int, int], ...]) -> tuple[list[int], list[int]]:
    """Break positions sorted, with the highest epoch among the breaks at or before each."""
    ordered = sorted(salt_at)
    positions = [p for p, _ in ordered]
    best, top = [], 0
    for _, epoch in ordered:
        top = max(top, epoch)
        best.append(top)
    return positions, best
