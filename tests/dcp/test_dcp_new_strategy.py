"""Worked example (issue 23): a new DCP strategy is one record, and everything picks it up.

Adding a pi-dcp strategy touches these files:
1. `readbench/dcp/strategies/<name>.py`: the rule (`apply(run)`) and its `STRATEGY` record (flag,
   pressure band, placeholder, optional incremental hook);
2. `readbench/dcp/_strategy.py`: one line in `_MODULES` (its place is its run order);
3. `readbench/dcp/configs.py`: a preset row running it (optional: a matrix file's `dcp_presets`
   does the same without code, `{base: pi-dcp, extra_strategies: [<name>]}`);
4. a test like this one.
The strategy below is registered through the registry API instead (steps 1-2 in one call).
Without an incremental hook, `project`'s fast path falls back to the reference path whenever the
strategy runs; before, the fast path ran its four built-ins and skipped a new strategy silently.
"""

from __future__ import annotations

import json

import pytest
from click.testing import CliRunner
from dcp_msgs import step, user

from readbench.dcp import CONFIGS, ProjectionCache, get_config, project
from readbench.dcp._cli import dcp_group
from readbench.dcp._pidcp_run import PiDcpRun, estimate_tokens, is_dcp_placeholder
from readbench.dcp._project import project_reference
from readbench.dcp._strategy import STRATEGIES, DcpStrategy

PLACEHOLDER = "[DCP: Long output truncated.]"


def _truncate_long(run: PiDcpRun) -> None:
    """Replace every unprotected tool result over 3,000 characters."""
    view = run.view
    for pos in range(len(view)):
        if view.role(pos) != "toolResult":
            continue
        msg = view.current(pos)
        if run.check("truncateLong", run.protection(pos)) or is_dcp_placeholder(msg.content) or len(msg.text) <= 3000:
            continue
        run.record("truncateLong", estimate_tokens(msg.content))
        view.set_result_text(pos, PLACEHOLDER)


STRATEGY = DcpStrategy("truncateLong", "pi-dcp", "a test: results over 3,000 characters", _truncate_long, PLACEHOLDER)


@pytest.fixture
def registered():
    STRATEGIES.register(STRATEGY)
    config = CONFIGS.register(get_config({"base": "pi-dcp", "name": "pi-dcp-trunc", "extra_strategies": ["truncateLong"]}))
    try:
        yield config
    finally:
        CONFIGS.unregister("pi-dcp-trunc")
        STRATEGIES.unregister("truncateLong")


def _history(turns: int = 10) -> list:
    msgs = []
    for t in range(turns):
        msgs.append(user(f"prompt {t}"))
        msgs += step(f"c{t}", "bash", {"command": f"make log{t}"}, f"line {t}\n" * 500)  # 4,000+ characters
    return msgs


def test_the_fast_path_falls_back_and_the_strategy_runs(registered):
    msgs = _history()
    cache = ProjectionCache()
    fast = project(msgs, registered, cache=cache)
    ref = project_reference(msgs, registered)
    # turn protection keeps the newest 8 prompts; outputBodyReplace replaces the first two results
    # and truncateLong, running after it, finds only placeholders there
    assert fast.stats.pruned == ref.stats.pruned
    assert [m.text for m in fast.messages] == [m.text for m in ref.messages]
    assert set(fast.stats.pruned) == {"deduplicate", "purgeErrors", "outputBodyReplace", "truncateLong"}
    # without outputBodyReplace (which replaces the same results first) the new strategy prunes both
    only = get_config({"base": "pi-dcp-trunc", "name": "trunc-only", "output_body_replace": False})
    out = project(msgs, only, cache=cache)
    assert out.stats.pruned["truncateLong"] == 2
    assert [m.text for m in out.messages if m.role == "tool"][:3] == [PLACEHOLDER, PLACEHOLDER, "line 2\n" * 500]
    assert out.stats.changed_indices == (2, 5)
    assert [m.text for m in out.messages] == [m.text for m in project_reference(msgs, only).messages]


def test_a_configuration_without_it_is_unchanged_and_keeps_the_fast_path(registered):
    msgs = _history()
    plain = project(msgs, "pi-dcp", cache=ProjectionCache())
    assert "truncateLong" not in plain.stats.pruned and plain.stats.pruned["outputBodyReplace"] == 2
    with pytest.raises(ValueError, match="'nope' is not a registered pi-dcp strategy without a flag of its own; "
                                         "valid: \\['truncateLong'\\]"):
        get_config({"base": "pi-dcp", "name": "x", "extra_strategies": ["nope"]})


def test_the_cli_lists_the_strategy_and_the_configuration(registered):
    res = CliRunner().invoke(dcp_group, ["strategies"])
    assert res.exit_code == 0
    assert "truncateLong  [pi-dcp]  a test: results over 3,000 characters\n" \
           "    flag=(extra_strategies) min_band=low fast path=none (reference path) " \
           'placeholder="[DCP: Long output truncated.]"' in res.output
    res = CliRunner().invoke(dcp_group, ["configs", "--json"])
    (cfg,) = [c for c in json.loads(res.output) if c["name"] == "pi-dcp-trunc"]
    assert cfg["strategies"] == ["deduplicate", "purgeErrors", "outputBodyReplace", "truncateLong"]
    assert cfg["params"]["extra_strategies"] == ["truncateLong"]


def test_a_matrix_file_names_it(registered, tmp_path):
    from readbench.run.matrix import load_matrix

    path = tmp_path / "m.yaml"
    path.write_text("dcp_presets:\n  trunc: {base: pi-dcp, extra_strategies: [truncateLong]}\n"
                    "dcp: [off, trunc, pi-dcp-trunc]\n")
    m = load_matrix(path)
    assert [get_config(d).strategies() for d in m.dcp] == [
        [], ["deduplicate", "purgeErrors", "outputBodyReplace", "truncateLong"],
        ["deduplicate", "purgeErrors", "outputBodyReplace", "truncateLong"]]
    path.write_text("dcp: [all]\n")
    assert "pi-dcp-trunc" in load_matrix(path).dcp


def test_the_replay_report_shows_it(registered, tmp_path):
    from readbench.replay._cli import replay_cmd
    from readbench.sessions.synth import write_pi_session

    session = write_pi_session(tmp_path / "s.jsonl", seed=3, calls=80, prompts=12)
    out = tmp_path / "out"
    res = CliRunner().invoke(replay_cmd, [str(session), "--dcp", "off,pi-dcp-trunc", "--cache", "anthropic-5m",
                                          "--out", str(out)])
    assert res.exit_code == 0, res.output
    import pandas as pd

    dcp = pd.read_parquet(out / "dcp.parquet")
    assert sorted(dcp["config"]) == ["off", "pi-dcp-trunc"]
    assert dcp.set_index("config").loc["pi-dcp-trunc", "pruned_items"] > 0
    assert "| pi-dcp-trunc | anthropic-5m |" in (out / "report.md").read_text()


def test_the_records_name_the_fast_paths_that_compute_them():
    from readbench.dcp import _fast_pidcp

    on_pi_seq = [s.name for s in STRATEGIES if s.incremental == "readbench.dcp._fast_pidcp:PiSeq"]
    assert on_pi_seq == list(_fast_pidcp.STRATEGY_NAMES)
    assert {s.family: s.incremental for s in STRATEGIES if s.family != "pi-dcp"} == {
        "sister": "readbench.dcp._fast_sister:SisterSeq", "obs-mask": "readbench.dcp._fast_obs:ObsSeq"}
    assert [(s.name, s.min_band) for s in STRATEGIES if s.min_band != "low"] == [("supersedeWrites", "high")]
