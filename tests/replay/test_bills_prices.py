"""Issue 22 item 2: every model with a price is billed at it; a model without one is a named note
(never dropped silently, never reported under the stand-in model). Costs worked out by hand from
Anthropic's list prices for Opus 4.5-5 (issue 22): $5 input, $6.25 5-minute write, $10 1-hour
write, $0.50 read, $25 output per million tokens."""

from __future__ import annotations

import datetime as dt

import pytest
from cc_sessions import CCFile, usage

from readbench.cache.prices import canonical_model, get_price, price_date
from readbench.cache.simulate import billed_usage_cost
from readbench.replay.bill import replay_session
from readbench.replay.report import session_json
from readbench.sessions import BilledUsage, load_file

WORDS = " ".join(f"w{i}" for i in range(1500))


@pytest.mark.parametrize("spelling", ["claude-opus-4-8", "claude-opus-4.8", "claude-opus-4-7", "claude-opus-4-7-20260101"])
def test_opus_4_7_and_4_8_are_priced_like_opus_4_5_to_5(spelling):
    # a session older than the row is priced at it (price_date)
    row = get_price(spelling, as_of=price_date(canonical_model(spelling), dt.date(2026, 1, 1)))
    assert (row.input_usd_per_mtok, row.cache_write_5m_usd_per_mtok, row.cache_write_1h_usd_per_mtok,
            row.cache_read_usd_per_mtok, row.output_usd_per_mtok) == (5.0, 6.25, 10.0, 0.5, 25.0)
    u = BilledUsage(1000, 100_000, 24_000, 3000, cache_write_5m_tokens=20_000, cache_write_1h_tokens=4000)
    # 1,000 x 5 + 100,000 x 0.50 + 20,000 x 6.25 + 4,000 x 10 + 3,000 x 25 = 295,000 per million
    assert billed_usage_cost(u, spelling, None, dt.date(2026, 7, 1)) == pytest.approx(0.295, abs=1e-12)


def _session(tmp_path, models: list[str]):
    f = CCFile("s-price")
    f.user(WORDS)
    for k, m in enumerate(models):
        if k:
            f.user(f"go on {k}")
        f.text(f"msg_{k}", f"req_{k}", "ok", usage(3 + k, 5000 * k, 5000 if k == 0 else 200, 40), model=m)
    (s,) = load_file(f.write(tmp_path / "s-price.jsonl"))
    return s


def test_an_opus_4_8_session_is_billed_call_by_call(tmp_path):
    s = _session(tmp_path, ["claude-opus-4-8", "claude-opus-4-8"])
    rep = replay_session(s)
    rows = [r for r in rep.calls if r["mode"] == "raw"]
    # call 0: 3 x 5 + 5,000 x 6.25 + 40 x 25 = 32,265; call 1: 4 x 5 + 5,000 x 0.5 + 200 x 6.25 + 40 x 25 = 4,770
    assert [r["billed_cost_usd"] for r in rows] == pytest.approx([0.032265, 0.004770], abs=1e-12)
    assert [r["priced_model"] for r in rows] == ["claude-opus-4.8"] * 2
    assert not [n for n in rep.notes if "price" in n]
    assert session_json(rep, 0, 0)["billed_cost_usd"] == pytest.approx(0.037035, abs=1e-12)


def test_a_model_with_cache_parameters_but_no_price_is_named_and_left_out_of_the_comparison(tmp_path):
    s = _session(tmp_path, ["claude-opus-4-8", "claude-mythos-5", "claude-opus-4-8", "claude-mythos-5"])
    rep = replay_session(s)
    assert ("model 'claude-mythos-5' (claude-mythos-5) has cache parameters but no price on 2026-07-01: add a row "
            "to readbench/cache/prices.csv; its 2 calls are not compared with the bill (their billed tokens are "
            "still reported)") in rep.notes
    ins = [r for r in rep.calls if r["mode"] == "in_sample"]
    assert [r["billed_input_tokens"] is not None for r in ins] == [True, False, True, False]
    j = session_json(rep, 0, 0)
    assert (j["priced_calls"], j["calls_with_usage"]) == (2, 4)
    # billed cost of the two priced calls only: 32,265 + (5 x 5 + 10,000 x 0.5 + 200 x 6.25 + 40 x 25)
    assert j["billed_cost_usd"] == pytest.approx((32265 + 7275) / 1e6, abs=1e-12)
    # the calibration's notes never name the stand-in model the unpriced calls were simulated as
    assert not any("sonnet-5.5" in n or "opus-5.5" in n for n in j["notes"])


def test_a_session_whose_only_model_has_no_price_is_a_note_not_a_bill_under_a_stand_in(tmp_path):
    s = _session(tmp_path, ["claude-mythos-5"] * 3)
    rep = replay_session(s)
    assert rep.summaries == []
    assert rep.notes == ["model 'claude-mythos-5' (claude-mythos-5) has cache parameters but no price on 2026-07-01: "
                         "add a row to readbench/cache/prices.csv; its 3 calls are not compared with the bill (their "
                         "billed tokens are still reported)"]
    j = session_json(rep, 0, 0)
    assert (j["billed_cost_usd"], j["calls_with_usage"]) == (None, 3)
    assert j["billed_tokens"]["cache_write"] == 5000 + 200 + 200
