"""Worked example (issue 23): a new cache model is one record, and everything picks it up.

Adding a cache model touches these files:
1. `readbench/cache/policies/<name>.py`: the caching rules (a `CachePolicy`), unless an existing
   policy with other parameters does (as below: Anthropic's rules with a 30-minute TTL);
2. `readbench/cache/registry.py`: one `CacheModel` row (family, TTL, write tier, default priced model);
3. a test like this one;
(4. models.csv / prices.csv rows when it prices a provider the tables do not have yet: data, as for
   any new model).
The TTL, write tier and default priced model are read from the record everywhere: the
simulator, the replay's cold start and bill check (`tier_ttl_seconds`, `cache_model_for`), the
CLI and the report. Below, the record is added through the registry API.
"""

from __future__ import annotations

import json

import pytest
from click.testing import CliRunner
from rb_cache_helpers import agent_turns, req, split

from readbench.cache import CACHE_MODELS, simulate
from readbench.cache._cli import cache_group
from readbench.cache.registry import cache_model_for, tier_ttl_seconds


@pytest.fixture
def registered():
    model = CACHE_MODELS.register(CACHE_MODELS.derive({"base": "anthropic-5m", "name": "anthropic-30m",
                                                        "ttl_seconds": 1800.0, "origin": "a test: a 30-minute TTL"}))
    try:
        yield model
    finally:
        CACHE_MODELS.unregister("anthropic-30m")


def test_its_ttl_is_the_one_the_simulator_uses(registered):
    # the same prefix sent again 20 minutes later: gone after 5 minutes, still there after 30
    requests = [req(agent_turns(1), 0.0), req(agent_turns(2), 1200.0)]
    five = simulate(requests, "anthropic-5m", "claude-sonnet-5")
    thirty = simulate(requests, "anthropic-30m", "claude-sonnet-5")
    assert split(five) == [(0, 4000, 0), (0, 4500, 0)]
    assert split(thirty) == [(0, 4000, 0), (4000, 500, 0)]
    # claude-sonnet-5: $2 input, $2.50 5-minute write (the tier it inherits), $0.20 read per MTok
    assert five.requests[1].cost_usd == pytest.approx(4500 * 2.5e-6)
    assert thirty.requests[1].cost_usd == pytest.approx(4000 * 0.2e-6 + 500 * 2.5e-6)


def test_the_records_are_the_one_table_of_ttls_and_tiers(registered):
    assert tier_ttl_seconds("5m") == 300.0 and tier_ttl_seconds("1h") == 3600.0 and tier_ttl_seconds(None) == 300.0
    assert cache_model_for("anthropic") == "anthropic-5m" and cache_model_for("anthropic", "1h") == "anthropic-1h"
    assert cache_model_for("openai", "1h") == "openai" and cache_model_for("mistral") is None
    assert registered.describe() == {
        "name": "anthropic-30m", "family": "anthropic", "default_priced_model": "claude-sonnet-5.5",
        "origin": "a test: a 30-minute TTL", "ttl_seconds": 1800.0, "write_tier": "5m", "provider_default": False}
    with pytest.raises(ValueError, match=r"unknown cache model field\(s\) \['ttl'\]"):
        CACHE_MODELS.derive({"base": "anthropic-5m", "name": "x", "ttl": 3})
    with pytest.raises(ValueError, match="default_priced_model 'gpt-5.5' is priced under the openai family, not anthropic"):
        CACHE_MODELS.derive({"base": "anthropic-5m", "name": "x", "default_priced_model": "gpt-5.5"})


def test_the_cli_lists_it(registered):
    res = CliRunner().invoke(cache_group, ["models"])
    assert "  anthropic-30m    family=anthropic  default=claude-sonnet-5.5  ttl=1800 s     writes=5m" in res.output
    res = CliRunner().invoke(cache_group, ["models", "--json"])
    assert [m["name"] for m in json.loads(res.output)][-1] == "anthropic-30m"


def test_a_matrix_file_names_it(registered, tmp_path):
    from readbench.run.matrix import load_matrix

    path = tmp_path / "m.yaml"
    path.write_text("cache_models: [anthropic-30m, openai]\n")
    assert load_matrix(path).cache_models == ["anthropic-30m", "openai"]
    path.write_text("cache_models: [all]\n")
    assert load_matrix(path).cache_models == ["anthropic-5m", "anthropic-1h", "openai", "gemini-implicit", "deepseek",
                                              "none", "anthropic-30m"]


def test_the_per_sample_metrics_and_the_replay_report_show_it(registered, tmp_path):
    import pandas as pd
    from inspect_ai.model import ChatMessageUser

    from readbench.cache import CallRecord, sample_cache_metrics
    from readbench.replay._cli import replay_cmd
    from readbench.sessions.synth import write_pi_session

    # an experiment's per-sample metrics: one column set per cache model (the table's `*_<name>`)
    calls = [CallRecord([ChatMessageUser(content="x " * 3000)], [], 10, t, t + 1.0) for t in (0.0, 1200.0)]
    metrics = sample_cache_metrics(calls, ["anthropic-5m", "anthropic-30m"])
    assert metrics["cache_read_tokens_anthropic-5m"] == 0 and metrics["cache_read_tokens_anthropic-30m"] > 0

    session = write_pi_session(tmp_path / "s.jsonl", seed=1, calls=30, prompts=3)
    out = tmp_path / "out"
    res = CliRunner().invoke(replay_cmd, [str(session), "--cache", "anthropic-5m,anthropic-30m", "--dcp", "pi-dcp",
                                          "--out", str(out)])
    assert res.exit_code == 0, res.output
    rows = pd.read_parquet(out / "sessions.parquet")
    assert sorted(set(rows["cache_model"])) == ["anthropic-30m", "anthropic-5m"]
    assert "| pi-dcp | anthropic-30m |" in (out / "report.md").read_text()
