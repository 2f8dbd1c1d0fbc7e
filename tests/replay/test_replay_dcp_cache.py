"""DCP x cache replay of a recorded session, one arm's cost delta worked out by hand (issue 14).

Seven calls: a 2,000-token prompt, then six read round trips. Under `obs-mask-5` (keep the newest
five tool results, anchors.md §1) the seventh call masks the first result: its prefix changes at
that result, so pi's breakpoint lookback finds only the entry of the first call (the prompt) and
the rest is written again. Prices: Sonnet 4.5, $0.30 read, $3.75 5m write, $15 output per MTok.
"""

from __future__ import annotations

import json

import pytest

from readbench.cache import count_tokens
from readbench.dcp.configs import get_config
from readbench.dcp.strategies.obs_mask import placeholder
from readbench.replay.dcp_cache import replay_dcp
from readbench.sessions import load_file

PROMPT = " ".join(f"w{i}" for i in range(1500))
BODY = ["".join(f"line {k} of part {j}\n" for k in range(40)) for j in range(6)]


def _t(text: str) -> int:
    return count_tokens(text, "anthropic-legacy")


def _args(j: int) -> dict:
    return {"path": f"part{j}.txt"}


def _assistant_tokens(j: int) -> int:
    # "Step j." text block + the tool call rendered as name + JSON arguments (adapter.py)
    return _t(f"Step {j}.") + _t("read" + json.dumps(_args(j), separators=(",", ":")))


def test_obs_mask_cost_delta_by_hand(tmp_path, pi_session):
    b = pi_session().user(PROMPT)
    prompt = _t(PROMPT)
    prev = None
    for j in range(7):
        cur = prompt + sum(_assistant_tokens(k) + _t(BODY[k]) for k in range(j))
        read = 0 if prev is None else prev
        calls = (((f"c{j}", "read", _args(j)),) if j < 6 else ())
        b.assistant(f"Step {j}." if j < 6 else "Done.", 10.0 * j, (0, read, cur - read, 10), calls=calls)
        if j < 6:
            b.result(f"c{j}", BODY[j])
        prev = cur
    (s,) = load_file(b.write(tmp_path / "s.jsonl"))
    rep = replay_dcp(s, ["obs-mask-5"], ["anthropic-5m"])
    rows = {r["config"]: r for r in rep.rows}
    p5 = prompt + sum(_assistant_tokens(k) + _t(BODY[k]) for k in range(5))
    p6 = p5 + _assistant_tokens(5) + _t(BODY[5])
    masked = _t(placeholder(get_config("obs-mask-5").params, BODY[0]))
    p6_masked = p6 - _t(BODY[0]) + masked
    off_call6 = p5 * 0.30 + (p6 - p5) * 3.75
    mask_call6 = prompt * 0.30 + (p6_masked - prompt) * 3.75
    assert rows["obs-mask-5"]["cost_delta_usd"] == pytest.approx((mask_call6 - off_call6) / 1e6, abs=1e-12)
    assert rows["off"]["cost_delta_usd"] == 0.0
    # the bill matches the recorded requests call by call: the off replay is the bill
    assert rows["off"]["sim_cost_usd"] == pytest.approx(rows["off"]["billed_cost_usd"], abs=1e-12)
    assert rows["obs-mask-5"]["prefix_breaks"] == 1
    assert rows["obs-mask-5"]["pruned_items"] == 1
    assert rows["obs-mask-5"]["footer_tokens_saved"] == len(BODY[0]) // 4  # dcp.md §6: floor(chars / 4)
    per_call = [c for c in rep.calls if c["config"] == "obs-mask-5"]
    assert [c["prefix_break"] for c in per_call] == [None] * 6 + [2]  # messages: prompt, step 0, result 0 <- changed
