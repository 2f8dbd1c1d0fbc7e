"""The agent-harness arm dimension (GitHub issue 24): `agents:` in a matrix, the pinned releases,
which presets each harness expresses, and the harness in arm labels."""

from __future__ import annotations

import json

import pytest
from click.testing import CliRunner

from readbench.analysis.arms import arm_label, arm_name
from readbench.harness._cli import agents_cmd
from readbench.harness.agents import NPM_DIR, agent_names, check_arm, expressible, get_agent, list_agents
from readbench.read import get_variant
from readbench.read._cli import variants_cmd
from readbench.run.matrix import load_matrix


def _write(tmp_path, text):
    path = tmp_path / "m.yaml"
    path.write_text(text)
    return path


def test_agents_are_the_loop_then_each_pinned_release():
    assert agent_names() == ["readbench", "pi", "pi@1.6.0", "claude-code", "codex"]
    pi = get_agent("pi")
    assert (pi.pin.package, pi.pin.version, pi.pin.node) == ("@earendil-works/pi-coding-agent", "0.84.4", ">=22.19.0")
    assert get_agent("pi@1.6.0").pin.version == "1.6.0"
    with pytest.raises(ValueError, match="unknown agent 'pi@9'; valid: readbench, pi, pi@1.6.0, claude-code, codex"):
        get_agent("pi@9")


def test_each_pin_matches_its_committed_lock_file():
    """The integrity in the record is the one npm ci checks against (package-lock.json)."""
    for agent in list_agents()[1:]:
        pkg = json.loads((agent.npm_dir / "package.json").read_text())
        lock = json.loads((agent.npm_dir / "package-lock.json").read_text())
        assert pkg["dependencies"] == {agent.pin.package: agent.pin.version}
        entry = lock["packages"][f"node_modules/{agent.pin.package}"]
        assert (entry["version"], entry["integrity"]) == (agent.pin.version, agent.pin.integrity)
        assert agent.pin.bin in entry["bin"]
    assert sorted(p.name for p in NPM_DIR.iterdir() if p.is_dir()) == [
        "claude-code@2.1.332", "codex@0.171.0", "pi@0.84.4", "pi@1.6.0"]


def test_which_presets_each_agent_expresses():
    def can(agent, preset):
        v = get_variant(preset)
        return expressible(agent, v.name, v.family, v.params) is not None

    assert [p for p in ("stock", "A", "B", "B-soft", "B+dedup", "C") if can("pi", p)] == ["stock", "B"]
    assert [p for p in ("stock", "A", "B", "B+dedup", "claude-code") if can("claude-code", p)] == ["stock", "B"]
    assert [p for p in ("stock", "A", "B", "C") if can("codex", p)] == ["stock"]
    assert all(can("readbench", p) for p in ("stock", "A", "B", "B+dedup", "C"))
    # a user preset of B's family with B's switches is expressed too (its caps go into the extension)
    b1500 = get_variant({"base": "B", "name": "B-1500", "max_lines": 1500})
    assert expressible("pi", b1500.name, b1500.family, b1500.params) is not None
    b = get_variant("B")
    with pytest.raises(ValueError, match=r"agent 'codex' cannot express read preset 'B' through its own extension "
                                         r"point \(stock there is Codex's shell"):
        check_arm("codex", b.name, b.family, b.params)


def test_a_matrix_runs_every_arm_under_every_agent_and_refuses_what_an_agent_cannot_express(tmp_path):
    m = load_matrix(_write(tmp_path, "variants: [stock, B]\ndcp: [off, pi-dcp]\nagents: [pi, claude-code]\n"
                                     "arms: [[B, off]]\n"))
    assert m.agents == ["pi", "claude-code"] and m.arms() == [("stock", "off"), ("stock", "pi-dcp"), ("B", "off"),
                                                          ("B", "pi-dcp")]
    assert m.agent_arms()[:2] == [("stock", "off", "pi"), ("stock", "pi-dcp", "pi")]
    assert len(m.agent_arms()) == 8
    assert load_matrix(_write(tmp_path, "variants: [stock]\n")).agents == ["readbench"]
    for text, message in (
        ("variants: [B]\nagents: [codex]", "agents: agent 'codex' cannot express read preset 'B'"),
        ("variants: [A]\nagents: [pi]", "agents: agent 'pi' cannot express read preset 'A'"),
        ("agents: [hermes]", "agents: unknown agent 'hermes'"),
        ("agents: []", "`agents` must be a non-empty list of agent names"),
        ("agents: [pi, pi]", "`agents` must not repeat a name"),
    ):
        with pytest.raises(ValueError, match=message):
            load_matrix(_write(tmp_path, text))


def test_the_harness_is_an_arm_part_and_the_loop_keeps_its_label():
    assert arm_label("B", "off", "readbench/sim-mixed") == "B × off @ readbench/sim-mixed"
    assert arm_label("B", "off", "readbench/sim-mixed", "readbench") == "B × off @ readbench/sim-mixed"
    assert arm_label("B", "pi-dcp", "readbench/sim-mixed", "pi") == "B × pi-dcp × pi @ readbench/sim-mixed"
    assert arm_name("stock", "off", "claude-code") == "stock × off × claude-code"


def test_task_refuses_an_arm_its_agent_cannot_express_before_anything_runs():
    from readbench.run.task import read_strategies_task

    with pytest.raises(ValueError, match="agent 'codex' cannot express read preset 'B'"):
        read_strategies_task(variant="B", agent="codex", sandbox_kind="local")
    assert read_strategies_task(variant="stock", agent="codex", sandbox_kind="local") is not None
    with pytest.raises(ValueError, match="agent 'claude-code' cannot express read preset 'C'"):
        read_strategies_task(variant="C", agent="claude-code", sandbox_kind="local")
    assert read_strategies_task(variant="B", agent="claude-code", sandbox_kind="local") is not None


def test_cli_lists_agents_and_what_an_agent_expresses():
    out = CliRunner().invoke(agents_cmd, []).output
    assert "pi@1.6.0     @earendil-works/pi-coding-agent@1.6.0" in out
    assert "codex        @openai/codex@0.171.0\n" in out
    assert "claude-code  @anthropic-ai/claude-code@2.1.332\n" in out
    assert "pi           @earendil-works/pi-coding-agent@0.84.4\n" in out
    rows = json.loads(CliRunner().invoke(variants_cmd, ["--json", "--agent", "codex"]).output)
    assert {r["name"]: bool(r["expressed_by"]) for r in rows}["B"] is False
    text = CliRunner().invoke(variants_cmd, ["--agent", "pi"]).output
    assert "B              yes  pi extension readbench writes from the preset" in text
    assert "A              no   cannot be expressed on pi" in text
    bad = CliRunner().invoke(variants_cmd, ["--agent", "nope"])
    assert bad.exit_code == 2 and "unknown agent 'nope'" in bad.output


def test_bench_table_shows_each_agents_start_up_and_sample_time():
    from readbench.bench import BENCHMARKS
    from readbench.bench_table import format_table

    assert "agents" in BENCHMARKS
    table = format_table({"agents": {
        "readbench": {"startup_seconds": None, "sample_wall_seconds": 3.5, "model_calls": 6.0},
        "pi": {"startup_seconds": 3.22, "sample_wall_seconds": 34.31, "model_calls": 6.0},
        "claude-code": {"startup_seconds": 0.05, "first_request_seconds": 2.681, "sample_wall_seconds": 18.79,
                        "model_calls": 6.0}}})
    assert table.splitlines()[2:] == [
        "| one sample under readbench (stock × off, local, sim) | sample wall s / model calls | 3.5 / 6 | |",
        "| one sample under pi (stock × off, local, sim) | start-up s / sample wall s / model calls | 3.22 / 34.3 / 6 | |",
        "| one sample under claude-code (stock × off, local, sim) | start-up s / first request s / sample wall s / "
        "model calls | 0.05 / 2.68 / 18.8 / 6 | |"]
