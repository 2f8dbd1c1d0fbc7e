"""A matrix entry `{name: AGENT, variants: [...]}` runs that agent under those variants only (Codex
expresses no read preset but stock, so a matrix with B can still hold it)."""

from __future__ import annotations

import pytest

from readbench.run.matrix import load_matrix


def _write(tmp_path, text: str):
    path = tmp_path / "m.yaml"
    path.write_text(text)
    return path


def test_an_agent_restricted_to_some_variants_runs_only_those_arms(tmp_path):
    m = load_matrix(_write(tmp_path, "variants: [stock, B]\ndcp: [off, pi-dcp]\n"
                                     "agents: [pi, {name: codex, variants: [stock]}]\n"))
    assert m.agents == ["pi", "codex"] and m.agent_variants == {"codex": ["stock"]}
    assert m.agent_arms() == [("stock", "off", "pi"), ("stock", "pi-dcp", "pi"), ("B", "off", "pi"),
                              ("B", "pi-dcp", "pi"), ("stock", "off", "codex"), ("stock", "pi-dcp", "codex")]


@pytest.mark.parametrize("agents, message", [
    ("[{name: codex, variants: [B]}]", "agents: agent 'codex' cannot express read preset 'B'"),
    ("[{name: codex, variants: [A]}]", "agents: 'codex' names variants the file does not run: ['A']"),
    ("[{name: codex}]", "`agents` entries are agent names or {name: AGENT, variants: [VARIANT, ...]}"),
    ("[{name: codex, variants: []}]", "`agents` entries are agent names or"),
    ("[codex, {name: codex, variants: [stock]}]", "`agents` must not repeat a name"),
    ("[codex]", "agents: agent 'codex' cannot express read preset 'B'"),
])
def test_a_restriction_is_checked_before_the_run(tmp_path, agents, message):
    with pytest.raises(ValueError, match=message.replace("[", r"\[").replace("]", r"\]").replace("{", r"\{")
                       .replace("}", r"\}").replace("(", r"\(").replace(")", r"\)")):
        load_matrix(_write(tmp_path, f"variants: [stock, B]\nagents: {agents}\n"))


def test_bench_table_shows_the_launch_to_first_request_time_when_measured():
    from readbench.bench import BENCH_AGENTS, format_table

    assert "codex" in BENCH_AGENTS
    table = format_table({"agents": {"codex": {"startup_seconds": 0.2, "first_request_seconds": 2.71,
                                               "sample_wall_seconds": 18.19, "model_calls": 6.0}}})
    assert table.splitlines()[2:] == [
        "| one sample under codex (stock × off, local, sim) | start-up s / launch to 1st request s / sample wall s / "
        "model calls | 0.20 / 2.71 / 18.2 / 6 | |"]
