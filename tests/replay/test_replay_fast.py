"""The replay's shortcuts give what the straightforward computation gives (issue 14, scale).

- `RequestSet.request` renders each call incrementally from the previous one and hands the
  simulator its chained prefix hashes and cumulative tokens: every call equals a from-scratch
  rendering (start blocks, token fit, salts by token position, insertions) whatever the order
  the calls are asked in;
- `simulate.run` replays a simulation already run on the same requests (the last pass of
  `infer_breaks` is the calibrated replay) instead of running it again;
- `infer_breaks` stops a pass that found a break after the last billed miss, diagnoses only the
  billed misses once it found one, and keeps its outcome per request set: the breaks, head cuts
  and calibrated replay are those of passes simulated in full every time;
- `ArmSimulator` simulates an arm that renders to the blocks of another arm once;
- `RequestBuilder.blocks` is `build(...).blocks` without the hashing.
"""

from __future__ import annotations

import dataclasses
import gc
import itertools
import random

import pytest

from readbench.cache.adapter import RequestBuilder
from readbench.cache.blocks import Block, chain_hashes
from readbench.cache.prices import canonical_model
from readbench.replay import simulate as simulate_mod
from readbench.replay.arms import ArmSimulator
from readbench.replay.bill import session_date
from readbench.replay.prefix import salt_of, salted
from readbench.replay.records import Break, Calibration, Insertion, TokenFit
from readbench.replay.requests import RequestSet, call_records
from readbench.replay.simulate import run
from readbench.sessions import load_file
from readbench.sessions.synth import write_claude_session, write_pi_session


@pytest.fixture(scope="module", params=["pi", "claude"])
def session(request, tmp_path_factory):
    path = tmp_path_factory.mktemp("fast") / f"{request.param}.jsonl"
    writer = write_pi_session if request.param == "pi" else write_claude_session
    (s,) = load_file(writer(path, seed=7, calls=60, prompts=5, compact_at=25_000))
    return s


def _calibrations(s) -> list[Calibration]:
    model = canonical_model(s.calls[0].model)
    ctx = s.calls[-1].context
    out = [
        Calibration(),
        Calibration(tokens={model: TokenFit(1.13, 2.6, 20, "test")}, heads={model: 3000}, head_cuts=(1200, 2500),
                    context_extra={(model, ctx): 700}),
    ]
    third = Calibration(tokens={model: TokenFit(0.91, -1.4, 20, "test")}, heads={model: 2500}, head_cuts=(900,),
                        insertions=(Insertion(15, s.calls[15].context, s.calls[14].n_messages, 640),))
    # breaks at token positions inside the head, between blocks and exactly at a block boundary
    # (where the bill's read ends: the common case); a break never moves a boundary
    cum = RequestSet(s, "anthropic", [model] * len(s.calls)).request(31, third, 0).cum_tokens
    breaks = (Break(9, 0, 0), Break(23, 1700, 1700), Break(31, cum[12], cum[12]), Break(44, cum[12] + 5, 900))
    # no head: the recorded blocks start the request
    bare = Calibration(tokens={model: TokenFit(1.05, 0.0, 20, "test")})
    cum = RequestSet(s, "anthropic", [model] * len(s.calls)).request(27, bare, 0).cum_tokens
    bare_breaks = (Break(5, 300, 300), Break(27, cum[len(cum) // 2], 0), Break(40, 0, 0))
    return out + [dataclasses.replace(third, breaks=breaks), dataclasses.replace(bare, breaks=bare_breaks)]


def _reference(rs: RequestSet, i: int, calib: Calibration) -> tuple[Block, ...]:
    """Call i rendered from scratch (the rules of readbench.replay.requests' module docstring)."""
    model = rs.models[i]
    fit = calib.tokens.get(model, TokenFit())
    salt_at = tuple((b.token_position, k + 1) for k, b in enumerate(calib.breaks) if b.call_index <= i)
    start = rs._start_blocks(calib, model, rs.session.calls[i].context, salt_at)
    base = rs._with_insertions(i, rs.base[i], calib) if calib.insertions else rs.base[i]
    out = list(start)
    pos = sum(b.tokens for b in start)
    for b in base:
        salt = salt_of(salt_at, pos) if salt_at else 0
        tokens = 0 if b.kind == "params" else b.tokens if id(b) in rs._raw_ids else fit.apply(b.tokens)
        out.append(Block(b.kind, b.role, tokens, salted(b.content_hash, salt), b.ends_message))
        pos += tokens
    return tuple(out)


def test_every_call_equals_a_from_scratch_rendering_in_any_order(session):
    s = session
    models = [canonical_model(c.model) for c in s.calls]
    rs = RequestSet(s, "anthropic", models)
    calibs = _calibrations(s)
    n = len(s.calls)
    order = [(c, i) for c in calibs for i in range(n)]  # in call order, as a simulation asks
    rng = random.Random(3)
    jumbled = order[:]
    rng.shuffle(jumbled)  # and out of order, switching calibrations
    salted = 0
    for calib, i in order + jumbled:
        req = rs.request(i, calib, 11)
        ref = _reference(rs, i, calib)
        assert req.blocks == ref, f"call {i} differs"
        assert req.prefix_hashes == chain_hashes(ref)
        assert req.cum_tokens == tuple(itertools.accumulate(b.tokens for b in ref))
        assert rs.prompt_tokens(i, calib) == sum(b.tokens for b in ref)
        assert (req.ts_start_seconds, req.ts_first_token_seconds, req.output_tokens) == (*rs.times[i], 11)
        salted += any(b.call_index <= i for b in calib.breaks)
    assert salted > n  # calls after a break were compared


def test_a_simulation_already_run_is_replayed_not_run_again(session, monkeypatch):
    s = session
    models = [canonical_model(c.model) for c in s.calls]
    calib = _calibrations(s)[2]
    rs = RequestSet(s, "anthropic", models)
    first = list(run(s, rs, calib, "anthropic-5m", session_date(s), 300.0))
    # the same fields in a new object (rates and notes differ): the same requests, replayed
    again = dataclasses.replace(calib, break_rates={"tool": 0.5}, notes=("another object",))
    made = []
    monkeypatch.setattr(simulate_mod, "SessionSimulator", lambda *a: made.append(a))
    assert list(run(s, rs, again, "anthropic-5m", session_date(s), 300.0)) == first
    assert made == []
    monkeypatch.undo()
    # and a fresh set simulates the same thing from nothing
    fresh = list(run(s, RequestSet(s, "anthropic", models), calib, "anthropic-5m", session_date(s), 300.0))
    assert fresh == first
    # another cache model, or other breaks, is another simulation
    assert list(run(s, rs, calib, "anthropic-1h", session_date(s), 300.0)) != first
    other = dataclasses.replace(calib, breaks=calib.breaks[:1])
    assert [u for _, u, _ in run(s, rs, other, "anthropic-5m", session_date(s), 300.0)] != [u for _, u, _ in first]


def _reference_breaks(s, rs, calib, cache_model, when, window):
    """`infer_breaks` as the straightforward loop: every pass simulated in full on its own."""
    from readbench.cache.registry import tier_ttl_seconds
    from readbench.replay.billing import billed, cached_after
    from readbench.replay.simulate import MISS_MIN_TOKENS, is_miss

    ttl = tier_ttl_seconds(calib.tier or "5m")
    for _ in range(25):
        found, cuts, prev = [], set(calib.head_cuts), {}
        known = {b.call_index for b in calib.breaks}
        for i, usage, diag in run(s, RequestSet(s, rs.family, rs.models), calib, cache_model, when, ttl):
            bill = billed(s.calls[i])
            if bill is None:
                continue
            model = rs.models[i]
            before = prev.get(model)
            prev[model] = (cached_after(bill, model, calib.granularity.get(model)), usage.input_tokens)
            if i not in window or i in known or before is None:
                continue
            if not is_miss(bill.cache_read_tokens, before[0]) or diag.reason is not None:
                continue
            read = bill.cache_read_tokens
            if read <= MISS_MIN_TOKENS:
                pos = 0
            elif read < calib.head(model):
                pos = read
                cuts.add(pos)
            else:
                pos = int(round(read * before[1] / max(before[0], 1)))
            found.append(Break(i, pos, read))
        if not found:
            return calib
        calib = dataclasses.replace(calib, head_cuts=tuple(sorted(cuts)),
                                    breaks=tuple(sorted(calib.breaks + tuple(found), key=lambda b: b.call_index)))
    return calib


@pytest.fixture(scope="module")
def broken_sessions(tmp_path_factory):
    """Sessions whose bills show exogenous breaks: synthetic ones with runs of consecutive breaks
    under anthropic-1h, and a planted one whose restart re-sent only part of the head (a head cut)."""
    import json

    from replay_sessions import HEAD, RESTART, PiSessionFile, planted_session

    tmp = tmp_path_factory.mktemp("breaks")
    out = [load_file(write_pi_session(tmp / "pi.jsonl", seed=7, calls=120))[0],
           load_file(write_claude_session(tmp / "cc.jsonl", seed=101, calls=200))[0]]
    path, usages = planted_session(tmp, PiSessionFile)
    lines = [json.loads(x) for x in path.read_text().splitlines()]
    calls = [x for x in lines if x.get("message", {}).get("role") == "assistant"]
    u = calls[RESTART]["message"]["usage"]  # the restart's bill reads the first 1,200 tokens of the head
    u.update(cacheRead=1200, cacheWrite=u["cacheWrite"] + u["cacheRead"] - 1200)
    assert usages[RESTART].cache_read_tokens < HEAD
    path.write_text("".join(json.dumps(x) + "\n" for x in lines))
    return out + [load_file(path)[0]]


def test_break_inference_finds_what_passes_simulated_in_full_find(broken_sessions):
    from readbench.replay.calibrate import calibrate, content_calibration, infer_breaks

    cuts = passes = 0
    for s in broken_sessions:
        models = [canonical_model(c.model) for c in s.calls]
        family = "anthropic-legacy" if s.calls[0].model.startswith("claude-sonnet-4-5") else "anthropic"
        rs = RequestSet(s, family, models)
        when = session_date(s)
        for window in (range(len(s.calls)), range(len(s.calls) // 2)):
            base = content_calibration(s, rs, when, window)
            for cm in ("anthropic-5m", "anthropic-1h"):
                want = _reference_breaks(s, rs, base, cm, when, window)
                got = infer_breaks(s, rs, base, cm, when, window)
                assert (got.head_cuts, got.breaks) == (want.head_cuts, want.breaks)
                cuts += got.head_cuts != base.head_cuts
                passes += len({b.call_index for b in got.breaks}) > 1
                ttl = 3600.0 if got.tier == "1h" else 300.0
                fresh = RequestSet(s, family, models)
                # the replay is the kept last pass, equal to a simulation of the result from nothing
                assert list(run(s, rs, got, cm, when, ttl)) == list(run(s, fresh, want, cm, when, ttl))
                # and the next calibration of the same requests finds the outcome kept
                again = infer_breaks(s, rs, dataclasses.replace(base, notes=("another object",)), cm, when, window)
                assert (again.head_cuts, again.breaks, again.notes) == (got.head_cuts, got.breaks, ("another object",))
                assert calibrate(s, rs, cm, when, window).breaks == got.breaks
    assert cuts and passes  # a head cut and several breaks were inferred


def test_a_pass_of_requests_left_early_is_built_on_by_the_next(session):
    from readbench.replay.simulate import calibrated_requests

    s = session
    models = [canonical_model(c.model) for c in s.calls]
    calib = _calibrations(s)[3]
    rs = RequestSet(s, "anthropic", models)
    left = list(itertools.islice(calibrated_requests(rs, calib), 17))
    rs.request(40, _calibrations(s)[1], 0)  # another calibration built in between
    full = list(calibrated_requests(rs, calib))
    assert all(x is y for x, y in zip(left, full))
    fresh = RequestSet(s, "anthropic", models)
    assert full == [fresh.request(i, calib, c.usage.output_tokens if c.usage is not None else 0)
                    for i, c in enumerate(s.calls)]


def test_an_arm_rendering_to_the_same_blocks_is_simulated_once(session):
    s = session
    caches = ["anthropic-5m", "openai"]
    arms = ArmSimulator(s, caches)
    copy = [list(s.request(i)) for i in range(len(s.calls))]  # other list objects, the same messages
    off = arms.run(None)
    assert arms.run(copy) == off
    assert len(arms._results) == len(caches)
    # a different arm (the last tool result of every call dropped) is simulated on its own
    fewer = [r[:-1] if r[-1].role == "tool" else r for r in copy]
    other = arms.run(fewer)
    assert len(arms._results) == 2 * len(caches)
    assert other != off
    assert ArmSimulator(s, caches).run(fewer) == other


def test_builder_blocks_are_the_built_blocks_without_hashing(session):
    records = call_records(session)
    a, b = RequestBuilder(), RequestBuilder()
    for family in ("anthropic", "openai", "deepseek"):
        for r in records[::-1] + records:  # out of order too
            built = a.build(r, family)
            assert b.blocks(r, family) == built.blocks
            assert built.prefix_hashes == chain_hashes(built.blocks)
    assert all(req.prefix_hashes is None for _, req in b._base.values())


def test_the_collector_runs_less_often_during_a_replay_and_as_before_after():
    from readbench.replay.run import GC_THRESHOLD, _fewer_collections

    before = gc.get_threshold()
    with _fewer_collections():
        assert gc.get_threshold()[0] == max(before[0], GC_THRESHOLD)
    assert gc.get_threshold() == before


def test_a_request_with_its_hashes_and_cumulative_tokens_is_prepared_as_given():
    from readbench.cache.blocks import PrefixChainer, Request

    blocks = (Block("system", "system", 1500, b"s" * 16), Block("text", "user", 40, b"u" * 16))
    hashes = chain_hashes(blocks)
    prep = PrefixChainer().prepare(Request(blocks, 0.0, 1.0, 5, prefix_hashes=hashes, cum_tokens=(1500, 1540)))
    assert (prep.hashes, prep.cum_tokens) == (hashes, (1500, 1540))
    assert PrefixChainer().prepare(Request(blocks, 0.0, 1.0, 5)).cum_tokens == (1500, 1540)
    with pytest.raises(ValueError, match="cum_tokens has 1 entries for 2 blocks"):
        Request(blocks, 0.0, 1.0, 5, prefix_hashes=hashes, cum_tokens=(1500,))


def test_worker_tables_convert_to_what_the_writer_wrote_from_rows():
    import json
    import math

    import pyarrow as pa

    from readbench.replay.report import TABLE_COLUMNS, _clean, arrow_tables

    rows = [{"file": "a.jsonl", "session_id": "s", "format": "pi", "harness": "pi", "cache_model": "openai",
             "mode": "raw", "calls": 3, "billed_cost_usd": 1.5, "billed_miss_reasons": {"ttl_expired": 2},
             "simulated_cost_interval_usd": [math.nan, 2.0], "notes": ["x", "y"], "token_fit": {"m": [1.0, math.inf, 3]},
             "not_a_column": 7},
            {"file": "b.jsonl", "session_id": "t", "calls": 4, "notes": []}]
    tables = arrow_tables({"sessions": rows, "calls": [], "extra": [{"k": 1}]})
    assert set(tables) == {"sessions", "extra"} and tables["extra"] == [{"k": 1}]
    # the rows as the writer converted them before: every dict or list value as JSON text
    reference = pa.Table.from_pylist(
        [{k: (json.dumps(_clean(v)) if isinstance(v, (dict, list)) else v) for k, v in r.items()} for r in rows],
        schema=pa.schema([(k, pa.type_for_alias(t)) for k, t in TABLE_COLUMNS["sessions"].items()]))
    assert tables["sessions"].equals(reference)
    assert tables["sessions"].column("simulated_cost_interval_usd").to_pylist() == ["[null, 2.0]", None]
    assert arrow_tables(tables)["sessions"] is tables["sessions"]
