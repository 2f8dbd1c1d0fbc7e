"""A recorded session's calls as cache-simulator requests, under a calibration.

docs/specs/sessions.md §5 (what the recorded files leave out and how the bill reveals it),
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
- thinking parameters and the like enter as the call's `params` block (caching.md §8.1);
- where the priced model's provider drops the reasoning of earlier turns (models.csv
  `earlier_reasoning`, `readbench.cache.prices`: OpenAI's Responses API; Anthropic models before
  Opus 4.5 / Sonnet 4.6, caching.md §1.4), the thinking blocks before a call's last plain user
  message are left out of its request (one that ended its message leaves a 0-token marker, so
  messages keep their count): the prefix then changes at the previous turn's first reasoning
  block when a new user turn starts, as the bills show (Codex: a user turn's read is the previous
  turn's first prompt, not the previous call's);
- a thinking block recorded empty with a signature carries the reasoning its response was billed
  for (`readbench.replay.thinking`), not 0 tokens.
Blocks are interned per (recorded block, salt), so consecutive requests share block objects; each
request carries its chained prefix hashes and cumulative tokens, extended from the previous call's
over the identical prefix, so the simulator prepares it with no work and a call costs O(new
blocks) Python work (the salt and prefix arithmetic: `readbench.replay.prefix`). The records
(`Calibration` and its parts) live in `readbench.replay.records`, the call kinds in
`readbench.replay.call_kinds`.
"""

from __future__ import annotations

import bisect
import hashlib
import itertools

from inspect_ai.model import ChatMessage

from readbench.cache.adapter import CallRecord, RequestBuilder
from readbench.cache.blocks import Block, Request, chain_hashes, chain_step
from readbench.replay.call_kinds import CallKinds
from readbench.replay.prefix import blocks_before, first_salt_change, identical_prefix, salt_index, salt_of, salted
from readbench.replay.records import Break, Calibration, Insertion, TokenFit
from readbench.replay.thinking import EarlierReasoning, thinking_sizes
from readbench.sessions import Session

__all__ = ["RequestSet", "RequestSets", "call_records"]

#: Seconds between calls of a transcript that records no times (e.g. Codex's Sept-2025 format).
UNTIMED_STEP_SECONDS = 10.0


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
        calibrated: a memo of calibrated blocks to share with the other sets of the same session,
            builder and tokenizer family (the arms of `readbench.replay.arms.ArmSimulator`): each
            recorded block is then calibrated once per token fit and salt for all of them.
        sizes: `thinking_sizes(session, family)` when the caller has it (`RequestSets.sizes`).
    """

    def __init__(self, session: Session, family: str, models: list[str], *,
                 requests: list[list[ChatMessage]] | None = None, builder: RequestBuilder | None = None,
                 records: list[CallRecord] | None = None, calibrated: dict | None = None,
                 sizes: dict[bytes, int] | None = None) -> None:
        self.session = session
        self.family = family
        self.models = models
        builder = builder if builder is not None else RequestBuilder()
        self.base: list[tuple[Block, ...]] = []
        self.times: list[tuple[float, float]] = []
        prev = float("-inf")
        records = records if records is not None else call_records(session, requests)
        self._raw_ids: set[int] = set()  # blocks whose tokens are not calibrated: markers, insertions
        self._drop = EarlierReasoning(self._raw_ids)
        drops = {m: _drops_earlier_reasoning(m) for m in set(models)}
        self._sizes = sizes if sizes is not None else thinking_sizes(session, family)
        self._sized: dict[int, tuple[Block, Block]] = {}  # id(signed empty thinking block) -> (it, sized copy)
        #: same[i]: the length of the identical prefix of base[i] and base[i - 1] when it is known
        #: without a full scan (`request` then compares no blocks); None otherwise
        self._same: list[int | None] = []
        prev_blocks: tuple[Block, ...] = ()
        dropped = False  # whether the previous call went through `self._drop`
        for i, call in enumerate(session.calls):
            blocks = builder_blocks = builder.blocks(records[i], family)
            # the builder knows how many leading message objects call i shares with call i - 1, so
            # only the blocks after them are compared (exact: a lower bound, then a short scan)
            hint = builder.prefix_hint(records[i], records[i - 1]) if i else None
            p = hint + identical_prefix(blocks[hint:], prev_blocks[hint:]) if hint is not None else None
            if drops[models[i]]:
                blocks = self._drop(blocks, (prev_blocks, p) if p is not None else None)
                same = self._drop.same if dropped else None
                dropped = True
            else:
                same = p if not dropped else None
                dropped = False
            prev_blocks = builder_blocks
            if self._sizes:
                blocks, same = self._with_thinking_sizes(blocks), None
            self._same.append(same)
            self.base.append(blocks)
            start = call.ts_start_seconds
            if start is None:
                start = (prev + UNTIMED_STEP_SECONDS) if prev > float("-inf") else 0.0
            start = max(start, prev)  # clocks written by different processes can step back
            first = call.ts_first_token_seconds or call.ts_end_seconds or start
            self.times.append((start, max(first, start)))
            prev = start
        # (a, b, n of the fit, salt) -> id(recorded block) -> (recorded block, calibrated block)
        self._memos: dict[tuple[float, float, int, int], dict[int, tuple[Block, Block]]] = (
            calibrated if calibrated is not None else {})
        self._salts: dict[int, tuple[Calibration, list[int], dict[int, tuple[tuple[int, int], ...]]]] = {}
        self._fit_ids: dict[tuple[float, float, int], int] = {}
        self._starts: dict[tuple, tuple[Calibration, tuple[Block, ...]]] = {}
        self._last: tuple | None = None  # (key, recorded blocks, calibrated blocks, hashes, cum tokens, call, calib)
        self._inserted: dict[Insertion, Block] = {}  # one Block object per insertion (ids: no token fit)
        self._kinds = CallKinds(session)
        self._counted: list[tuple[int, int]] | None = None
        #: simulations of this set already run (`readbench.replay.simulate.run` memo): key -> results
        self.runs: dict[tuple, list] = {}
        #: passes of requests already built (`readbench.replay.simulate.calibrated_requests` memo):
        #: calibration key -> every call's Request
        self.passes: dict[tuple, list[Request]] = {}
        #: content calibrations fitted on this set (`readbench.replay.calibrate.calibrate` memo):
        #: (window start, stop, step, date) -> Calibration without breaks
        self.fitted: dict[tuple, Calibration] = {}
        #: exogenous breaks inferred on this set (`readbench.replay.calibrate.infer_breaks` memo):
        #: (run_key, window start, stop, step) -> (head cuts, breaks) of the calibration it returned
        self.inferred: dict[tuple, tuple[tuple[int, ...], tuple[Break, ...]]] = {}

    def call_kind(self, i: int) -> str:
        """What started call i, from recorded facts (readbench.replay.call_kinds: `tool`, `opening`,
        `prompt`, `resume`, `after_abort`, `notification`, `command`, `thinking_change`,
        `model_change`; the coarser kinds in `readbench.replay.records.CALL_KINDS`).

        Raises:
            IndexError: no call i.
        """
        return self._kinds[i]

    def _with_thinking_sizes(self, blocks: tuple[Block, ...]) -> tuple[Block, ...]:
        """`blocks` with each signed empty thinking block sized from its response's bill
        (`readbench.replay.thinking`; one sized copy per block, shared by every call)."""
        sizes = self._sizes
        if not any(b.kind == "thinking" and b.content_hash in sizes for b in blocks):
            return blocks
        out = []
        for b in blocks:
            if b.kind == "thinking" and b.content_hash in sizes:
                hit = self._sized.get(id(b))
                if hit is None or hit[0] is not b:
                    hit = self._sized[id(b)] = (b, Block(b.kind, b.role, b.tokens + sizes[b.content_hash], b.content_hash,
                                                         b.ends_message))
                b = hit[1]
            out.append(b)
        return tuple(out)

    def recorded(self, i: int) -> list[Block]:
        """Call i's recorded blocks that carry content: not `params` blocks nor the markers of
        dropped earlier-turn reasoning (no calibration)."""
        return [b for b in self.base[i] if b.kind != "params" and id(b) not in self._raw_ids]

    def counted(self, i: int) -> tuple[int, ...]:
        """readbench's token count of each recorded block of call i (no calibration)."""
        return tuple(b.tokens for b in self.base[i])

    def counted_total(self, i: int) -> tuple[int, int]:
        """(tokens, blocks) of call i's `recorded` blocks (no calibration)."""
        if self._counted is None:
            self._counted = []
            for k in range(len(self.base)):
                blocks = [b.tokens for b in self.recorded(k)]
                self._counted.append((sum(blocks), len(blocks)))
        return self._counted[i]

    def prompt_tokens(self, i: int, calib: Calibration) -> int:
        """Input tokens of call i under `calib`: the summed block tokens of `request(i, calib, 0)`."""
        cum = self.request(i, calib, 0).cum_tokens
        return cum[-1] if cum else 0

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
                salt = salt_of(salt_at, lo)
                h = hashlib.blake2b(f"head:{self.session.session_id}:{model}:{lo}:{hi}:{salt}".encode(), digest_size=16).digest()
                out.append(Block("system", "system", hi - lo, h, True))
        extra = calib.context_extra.get((model, ctx), 0)
        if extra > 0:
            salt = salt_of(salt_at, max(size, 0))
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
        fit = calib.tokens.get(model, _IDENTITY)
        fid = self._fit_ids.setdefault((fit.a, fit.b, fit.n), len(self._fit_ids))
        salt_at = self._salt_at(calib, i)
        start_blocks = self._start_blocks(calib, model, self.session.calls[i].context, salt_at)
        base = self.base[i]
        if calib.insertions:
            base = self._with_insertions(i, base, calib)
        key = (id(calib), fid, salt_at, start_blocks)
        last = self._last
        ns = len(start_blocks)
        k = -1
        if last is not None and last[6] is calib:
            lkey = last[0]
            if lkey == key or (lkey[1] == fid and lkey[3] == start_blocks):
                # call i - 1 just before, both without insertions: `_same` knows their prefix
                same = self._same[i] if last[5] == i - 1 and base is self.base[i] and last[1] is self.base[i - 1] else None
                k = same if same is not None else identical_prefix(base, last[1])
            if lkey != key and k >= 0:
                # a break since the previous call: its blocks before the first position whose salt
                # changed are still the same blocks
                changed = first_salt_change(lkey[2], salt_at)
                if changed is not None:
                    k = min(k, blocks_before(last[4], ns, changed))
        if k >= 0:
            # tuple slices: the whole previous tuple itself when the call only appends
            blocks0, hashes0, cum0 = last[2][: ns + k], last[3][: ns + k], last[4][: ns + k]
        else:
            k = 0
            blocks0, hashes0 = start_blocks, chain_hashes(start_blocks)
            cum0 = tuple(itertools.accumulate(b.tokens for b in start_blocks))
        pos = cum0[-1] if cum0 else 0
        h = hashes0[-1] if hashes0 else b""
        blocks: list[Block] = []
        hashes: list[bytes] = []
        cum: list[int] = []
        # the salt changes only where the running position crosses a break's position
        cut, best = salt_index(salt_at) if salt_at else ([], [])
        j = bisect.bisect_right(cut, pos)
        salt, nxt = (best[j - 1] if j else 0), (cut[j] if j < len(cut) else _INF)
        memos = self._memos
        fk = (fit.a, fit.b, fit.n)
        memo = memos.setdefault((*fk, salt), {})
        step = chain_step
        for b in base[k:]:
            if pos >= nxt:
                j = bisect.bisect_right(cut, pos)
                salt, nxt = best[j - 1], (cut[j] if j < len(cut) else _INF)
                memo = memos.setdefault((*fk, salt), {})
            hit = memo.get(id(b))
            if hit is not None and hit[0] is b:
                out = hit[1]
            else:
                tokens = 0 if b.kind == "params" else b.tokens if id(b) in self._raw_ids else fit.apply(b.tokens)
                out = Block(b.kind, b.role, tokens, salted(b.content_hash, salt), b.ends_message)
                memo[id(b)] = (b, out)
            blocks.append(out)
            h = step(h + out.content_hash)  # blocks.chain_hashes, one step
            hashes.append(h)
            pos += out.tokens
            cum.append(pos)
        result, result_hashes, result_cum = blocks0 + tuple(blocks), hashes0 + tuple(hashes), cum0 + tuple(cum)
        self._last = (key, base, result, result_hashes, result_cum, i, calib)
        start, first = self.times[i]
        return Request(result, start, first, output_tokens, prefix_hashes=result_hashes, cum_tokens=result_cum)

    def _salt_at(self, calib: Calibration, i: int) -> tuple[tuple[int, int], ...]:
        """(token position, epoch) of the breaks of `calib` at or before call i (epoch k + 1 for
        `calib.breaks[k]`), memoised per number of such breaks."""
        hit = self._salts.get(id(calib))
        if hit is None or hit[0] is not calib:
            hit = self._salts[id(calib)] = (calib, sorted(b.call_index for b in calib.breaks), {})
        n = bisect.bisect_right(hit[1], i)
        out = hit[2].get(n)
        if out is None:
            out = hit[2][n] = tuple((b.token_position, k + 1) for k, b in enumerate(calib.breaks) if b.call_index <= i)
        return out

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


class RequestSets:
    """The RequestSets of one session's recorded requests, one per (tokenizer family, priced
    models), shared by every replay of the session (the bill check under each cache model, the
    `off` arm of `readbench.replay.arms.ArmSimulator`): each call is rendered, and each recorded
    block calibrated, once for all of them, and a simulation already run on a set
    (`RequestSet.runs`) is found by the next cache model's replay of the same requests.

    Args:
        session: the imported session.
        builder: the session's RequestBuilder.
    """

    def __init__(self, session: Session, builder: RequestBuilder) -> None:
        self.session = session
        self.builder = builder
        #: tokenizer family -> the calibrated-block memo shared by every set of that family
        self.calibrated: dict[str, dict] = {}
        self._records: list[CallRecord] | None = None
        self._sets: dict[tuple[str, tuple[str, ...]], RequestSet] = {}
        self._sizes: dict[tuple[int, str], tuple[Session, dict[bytes, int]]] = {}

    def records(self) -> list[CallRecord]:
        """The recorded calls as CallRecords (`call_records`), built once."""
        if self._records is None:
            self._records = call_records(self.session)
        return self._records

    def sizes(self, family: str, session: Session | None = None) -> dict[bytes, int]:
        """`thinking_sizes` of `session` (default `self.session`) in tokenizer `family`, worked out
        once per session object and family (the session is kept, so its id stays unique)."""
        session = self.session if session is None else session
        hit = self._sizes.get((id(session), family))
        if hit is None:
            hit = self._sizes[(id(session), family)] = (session, thinking_sizes(session, family))
        return hit[1]

    def get(self, family: str, models: list[str], session: Session | None = None) -> RequestSet:
        """The set of the recorded requests in tokenizer `family`, priced as `models` (one per call).
        `session`: another session object than `self.session` (the bill's copy with some usage hidden,
        `bill._only_comparable`) gets a set of its own, sharing the renderings and calibrated blocks."""
        if session is not None and session is not self.session:
            return RequestSet(session, family, list(models), builder=self.builder, records=self.records(),
                              calibrated=self.calibrated.setdefault(family, {}), sizes=self.sizes(family, session))
        key = (family, tuple(models))
        rs = self._sets.get(key)
        if rs is None:
            rs = self._sets[key] = RequestSet(self.session, family, list(models), builder=self.builder,
                                              records=self.records(), calibrated=self.calibrated.setdefault(family, {}),
                                              sizes=self.sizes(family))
        return rs


_IDENTITY = TokenFit()
_INF = float("inf")


def _drops_earlier_reasoning(model: str) -> bool:
    """True when `model`'s provider removes earlier turns' reasoning (models.csv `earlier_reasoning`);
    False for a model readbench has no row for."""
    from readbench.cache.prices import get_model_spec

    try:
        return get_model_spec(model).drops_earlier_reasoning
    except ValueError:
        return False


