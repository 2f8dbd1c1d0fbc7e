"""Both savings tables of the read counterfactual sum the same rows, and every session left out
is named with its reason (issue 29 item 3; readbench.replay.read_savings).

Fixture: four sessions x two presets. `a` (pi, anthropic-5m and -1h both priced as recorded: two
rows per preset, the 5m one primary), `b` (Claude Code, openai's cache model only), `big` (pi,
like pi-large-session: its model is priced by no replayed cache model, so no primary row),
`codex` (no read-tool call); `idle` is audited but had no model call to replay."""

from __future__ import annotations

import pandas as pd
import pytest

from readbench.replay.read_savings import NO_PRIMARY, NO_READS, NOT_REPLAYED, read_savings


def _row(file, sid, harness, preset, cache, primary, reads, changed, delta, own=False):
    return {"file": f"/s/{file}.jsonl", "session_id": sid, "format": harness, "harness": harness, "preset": preset,
            "own": own, "cache_model": cache, "priced_as_recorded": primary, "primary": primary, "first_order": True,
            "reads": reads, "reads_same": reads - changed, "reads_changed": changed, "reads_notice_only": 0,
            "reads_not_replayable": 0, "reads_unsent": 0, "blocked": 0, "stubbed": 0, "capped": 0, "mapped": 0,
            "result_tokens_delta": -10 * changed, "input_tokens": 1000, "input_tokens_delta": -100 * changed,
            "sim_cost_usd": 2.0 + delta, "cost_delta_usd": delta, "billed_cost_usd": 2.0}

ROWS = [
    _row("a", "sess-a-1", "pi", "stock", "anthropic-5m", True, 10, 0, 0.0, own=True),
    _row("a", "sess-a-1", "pi", "stock", "anthropic-1h", False, 10, 0, 0.0, own=True),
    _row("a", "sess-a-1", "pi", "B", "anthropic-5m", True, 10, 4, -0.30),
    _row("a", "sess-a-1", "pi", "B", "anthropic-1h", False, 10, 4, +0.50),  # would flip the sign if summed
    _row("b", "sess-b-2", "claude-code", "stock", "openai", True, 6, 6, -0.05),
    _row("b", "sess-b-2", "claude-code", "B", "openai", True, 6, 6, -0.07),
    _row("big", "pi-large-session", "pi", "stock", "anthropic-5m", False, 90, 0, 0.0, own=True),
    _row("big", "pi-large-session", "pi", "B", "anthropic-5m", False, 90, 40, -3.0),
    _row("codex", "sess-c-3", "codex", "stock", "openai", True, 0, 0, 0.0),
    _row("codex", "sess-c-3", "codex", "B", "openai", True, 0, 0, 0.0),
]
AUDIT = pd.DataFrame({"file": ["/s/a.jsonl", "/s/b.jsonl", "/s/big.jsonl", "/s/codex.jsonl", "/s/idle.jsonl"],
                      "session_id": ["sess-a-1", "sess-b-2", "pi-large-session", "sess-c-3", "sess-idle-4"]})

def test_both_tables_sum_the_same_rows_and_every_left_out_session_is_named():
    sav = read_savings(pd.DataFrame(ROWS), AUDIT)
    assert sav.excluded == [
        ("big.jsonl (pi-large)", NO_PRIMARY.format(caches="anthropic-5m")),
        ("codex.jsonl (sess-c-3)", NO_READS),
        ("idle.jsonl (sess-idl)", NOT_REPLAYED),
    ]
    by_h, by_c = sav.by_harness(), sav.by_cache_model()
    # hand-computed: B = a's primary -0.30 + b's -0.07; the 1h row (+0.50) and pi-large-session are not in
    assert by_c.at["B", "total"] == pytest.approx(-0.37)
    assert by_c.at["B", "anthropic-5m"] == pytest.approx(-0.30) and by_c.at["B", "openai"] == pytest.approx(-0.07)
    assert by_c.at["stock", "total"] == pytest.approx(-0.05)
    for preset in ("stock", "B"):  # the invariant: a preset's total is the same in both tables
        assert by_c.at[preset, "total"] == pytest.approx(by_h.loc[preset]["cost_delta_usd"].sum())
        assert by_c.loc[preset].drop("total").fillna(0).sum() == pytest.approx(by_c.at[preset, "total"])
    assert by_h.loc[("B", "pi")][["sessions", "sessions_changed", "reads", "reads_changed"]].tolist() == [1, 1, 10, 4]
    assert by_h.loc[("stock", "claude-code")][["sessions", "sessions_changed"]].tolist() == [1, 1]
    assert set(sav.rows["session_id"]) == {"sess-a-1", "sess-b-2"}

def test_two_primary_rows_for_one_preset_are_refused():
    rows = ROWS[:1] + [{**ROWS[1], "primary": True}]
    with pytest.raises(ValueError, match="session 'sess-a-1' of /s/a.jsonl has two primary rows for one preset"):
        read_savings(pd.DataFrame(rows))

def test_no_rows_gives_empty_tables():
    sav = read_savings(pd.DataFrame(ROWS[-2:]))
    assert sav.rows.empty and sav.excluded == [("codex.jsonl (sess-c-3)", NO_READS)]
    assert list(sav.by_cache_model().columns) == ["total"]
