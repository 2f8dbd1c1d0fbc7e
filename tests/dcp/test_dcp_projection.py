"""Projection purity, observation masking, configuration registry and CLI."""

from __future__ import annotations

import copy
import json
from pathlib import Path

import pytest
from click.testing import CliRunner
from dcp_msgs import asst, step, system, tool, user

from readbench.dcp import CONFIG_NAMES, ContextUsage, get_config, list_configs, project
from readbench.dcp._cli import dcp_group

BIG = "x" * 1300
FIXTURE = Path(__file__).parents[1] / "sessions" / "data" / "pi_session_v3.jsonl"


def _rich_session() -> list:
    msgs = [system("sys"), user("go")]
    msgs += step("c1", "read", {"path": "a.py"}, BIG)
    msgs += step("c2", "read", {"path": "a.py"}, BIG)
    msgs += step("e1", "bash", {"command": "pytest " + "-k x " * 60}, "FAILED\n" + BIG, error=True)
    msgs += [asst("", ("w1", "edit", {"path": "a.py", "oldText": "o" * 300, "newText": "n" * 300}))]
    msgs += [tool("w1", "edit", "Successfully replaced text in a.py." + "." * 300)]
    msgs += step("c3", "read", {"path": "a.py"}, BIG)
    msgs += step("c4", "grep", {"pattern": "def"}, "a.py:1:def f():")  # 6th observation
    for i in range(9):
        msgs += [user(f"u{i}"), asst("ok")]
    return msgs + [user("now")]


@pytest.mark.parametrize("name", CONFIG_NAMES)
def test_projection_never_mutates_its_input(name):
    msgs = _rich_session()
    before = copy.deepcopy([m.model_dump() for m in msgs])
    ids = [m.id for m in msgs]
    # the gate rightly rejects this small batch against a long tail; switch it off to prune
    spec = {"base": name, "name": name, "gate_mode": "off"} if name == "dcp-gated" else name
    p = project(msgs, spec, usage=ContextUsage(95, 100))
    assert [m.model_dump() for m in msgs] == before
    assert [m.id for m in p.messages] == ids  # copies keep their ids
    assert len(p.messages) == len(msgs)
    changed = set(p.stats.changed_indices)
    for i, (a, b) in enumerate(zip(msgs, p.messages)):
        assert (a is not b) == (i in changed)
    if name != "off":
        assert changed, f"{name} pruned nothing on the rich session"


def test_obs_mask_keeps_the_last_five_observations():
    msgs = [user("go")]
    for k in range(7):
        msgs += step(f"c{k}", "bash", {"command": f"cmd {k}"}, f"line a{k}\nline b{k}\nline c{k}")
    p = project(msgs, "obs-mask-5")
    assert p.stats.changed_indices == (2, 4)
    assert p.messages[2].text == "Old environment output: (3 lines omitted)"
    assert p.messages[6].text == "line a2\nline b2\nline c2"
    assert p.stats.pruned == {"obsMask": 2}
    assert p.stats.footer_tokens_saved == 2 * (len("line a0\nline b0\nline c0") // 4)


def test_get_config_names_dicts_and_errors():
    assert CONFIG_NAMES == (
        "off", "pi-dcp", "pi-dcp-dedup-only", "pi-dcp-stable", "pi-dcp-aggressive", "dcp-gated", "obs-mask-5",
    )
    assert [c.name for c in list_configs()] == list(CONFIG_NAMES)
    custom = get_config({"base": "dcp-gated", "name": "gemini", "cached_price_ratio": 0.25, "threshold_idle": 29})
    assert (custom.name, custom.base, custom.family) == ("gemini", "dcp-gated", "sister")
    assert (custom.params.cached_price_ratio, custom.params.threshold_idle, custom.params.recent_turns) == (0.25, 29, 4)
    lists = get_config({"base": "pi-dcp", "name": "tools", "protected_tools": ["todo"]})
    assert lists.params.protected_tools == ("todo",)
    with pytest.raises(ValueError, match="unknown DCP configuration 'nope'"):
        get_config("nope")
    with pytest.raises(ValueError, match="unknown parameter 'turnz'"):
        get_config({"base": "pi-dcp", "name": "x", "turnz": 3})
    with pytest.raises(ValueError, match="'name'"):
        get_config({"base": "pi-dcp"})
    with pytest.raises(ValueError, match="cached_price_ratio"):
        get_config({"base": "dcp-gated", "name": "x", "cached_price_ratio": 1.5})
    with pytest.raises(ValueError, match="force_band"):
        get_config({"base": "pi-dcp", "name": "x", "force_band": "extreme"})


def test_cli_configs_and_project():
    runner = CliRunner()
    res = runner.invoke(dcp_group, ["configs", "--json"])
    assert res.exit_code == 0
    assert [c["name"] for c in json.loads(res.output)] == list(CONFIG_NAMES)
    res = runner.invoke(dcp_group, ["project", str(FIXTURE), "--config", "pi-dcp", "--json"])
    assert res.exit_code == 0, res.output
    out = json.loads(res.output)
    assert len(out["messages"]) == 6 and out["stats"]["earliest_changed_index"] is None
    res = runner.invoke(dcp_group, ["project", str(FIXTURE), "--config", "obs-mask-5", "--usage-tokens", "5", "--context-window", "10"])
    assert res.exit_code == 0
    assert "pruned items: 0 (obsMask=0)" in res.output
    assert "earliest changed position: None" in res.output


def test_cli_bad_arguments_exit_2_naming_the_input(tmp_path):
    runner = CliRunner()
    res = runner.invoke(dcp_group, ["project", str(FIXTURE), "--config", "bogus"])
    assert res.exit_code == 2 and "--config" in res.output and "'bogus'" in res.output
    res = runner.invoke(dcp_group, ["project", str(tmp_path / "missing.jsonl"), "--config", "pi-dcp"])
    assert res.exit_code == 2 and "FILE" in res.output and "missing.jsonl" in res.output
    bad = tmp_path / "bad.jsonl"
    bad.write_text('{"type":"session","version":9,"id":"x"}\n')
    res = runner.invoke(dcp_group, ["project", str(bad), "--config", "pi-dcp"])
    assert res.exit_code == 2 and "version 9 is not supported" in res.output
    res = runner.invoke(dcp_group, ["project", str(FIXTURE), "--config", '{"base": "pi-dcp"'])
    assert res.exit_code == 2 and "not valid JSON" in res.output
    res = runner.invoke(dcp_group, ["project", str(FIXTURE), "--config", "pi-dcp", "--context-window", "0"])
    assert res.exit_code == 2 and "--context-window" in res.output
