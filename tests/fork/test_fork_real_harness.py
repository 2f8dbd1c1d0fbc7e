"""A forked run with real harnesses in its matrix (GitHub issue 25 item 2: "For a real harness a
fork restarts the harness from a session file it can resume; where one cannot, say so and run that
arm independently"): readbench's loop arms and pi's get their trunks and forks (one pi trunk per pi
pin, readbench.agents.pi_forked); a Claude Code or Codex arm runs as an ordinary independent eval
beside them, and the divergence table names it "run independently" (nothing replayed, nothing saved).
The pi trunk and forks run end to end in tests/fork/test_fork_pi_e2e.py (slow)."""

from __future__ import annotations

import math

import pandas as pd
from inspect_ai._eval.loader import resolve_task_args

from readbench.analysis.divergence import divergence_section, divergence_summary
from readbench.fork.shadow import arm_key
from readbench.run.forked import forked_tasks
from readbench.run.matrix import load_matrix

MATRIX = """
name: f
models: [readbench/sim-pager]
agents: [readbench, pi]
variants: [stock, B]
dcp: ["off", pi-dcp]
design: forked
cache_models: [anthropic-5m, openai]
"""


def _args(task) -> dict:
    return {k: v for k, v in resolve_task_args(task).items() if k in ("variant", "dcp", "agent", "fork")}


def test_pi_arms_get_a_pi_trunk_and_forks_beside_the_loops_trunks_and_forks(tiny_corpus):
    (tiny_corpus / "m.yaml").write_text(MATRIX)
    matrix = load_matrix(tiny_corpus / "m.yaml")
    assert matrix.design == "forked"  # no longer refused
    trunks, tasks = forked_tasks(matrix, "local", tiny_corpus / "fork")
    # stock and B send different read descriptions: two loop trunks; every pi arm sends pi's: one pi trunk
    assert [(_args(t)["variant"], _args(t)["dcp"], _args(t).get("agent"), _args(t)["fork"]["role"])
            for t in trunks] == [("stock", "off", None, "trunk"), ("B", "off", None, "trunk"),
                                 ("stock", "off", "pi", "trunk")]
    assert _args(trunks[2])["fork"]["arms"] == [["stock", "off"], ["stock", "pi-dcp"], ["B", "off"], ["B", "pi-dcp"]]
    got = [(a["variant"], a["dcp"], a.get("agent"), (a.get("fork") or {}).get("role")) for a in map(_args, tasks)]
    assert got == [("stock", "off", None, "fork"), ("stock", "pi-dcp", None, "fork"),
                   ("B", "off", None, "fork"), ("B", "pi-dcp", None, "fork"),
                   ("stock", "off", "pi", "fork"), ("stock", "pi-dcp", "pi", "fork"),
                   ("B", "off", "pi", "fork"), ("B", "pi-dcp", "pi", "fork")]
    # a pi fork's task loads its prefix by arm key at run time: no trunk session in its arguments
    assert _args(tasks[6])["fork"] == {"role": "fork", "root": str(tiny_corpus / "fork"), "arm_key": arm_key("B", "off")}


def test_a_loop_arm_alone_in_its_schema_group_runs_independently_without_a_trunk(tiny_corpus):
    # the nightly matrix's shape: stock under three DCP configurations share stock's trunk; B, C and
    # swe-agent each send their own read description, so each is alone in its group: a trunk of its own
    # would be its whole trajectory paid once and replayed once by its fork (no call saved)
    (tiny_corpus / "m.yaml").write_text(MATRIX.replace("agents: [readbench, pi]", "agents: [readbench]")
                                        .replace("variants: [stock, B]", "variants: [stock, B, C, swe-agent]")
                                        .replace('dcp: ["off", pi-dcp]', 'dcp: ["off"]\narms:\n  - [stock, pi-dcp]'))
    trunks, tasks = forked_tasks(load_matrix(tiny_corpus / "m.yaml"), "local", tiny_corpus / "fork")
    assert [(_args(t)["variant"], _args(t)["dcp"], _args(t)["fork"]["role"], _args(t)["fork"]["arms"])
            for t in trunks] == [("stock", "off", "trunk", [["stock", "off"], ["stock", "pi-dcp"]])]
    assert [(a["variant"], a["dcp"], (a.get("fork") or {}).get("role")) for a in map(_args, tasks)] == [
        ("stock", "off", "fork"), ("B", "off", None), ("C", "off", None), ("swe-agent", "off", None),
        ("stock", "pi-dcp", "fork")]


def test_claude_code_arms_run_independently_beside_the_pi_trunk(tiny_corpus):
    (tiny_corpus / "m.yaml").write_text(MATRIX.replace("agents: [readbench, pi]", "agents: [pi, claude-code]"))
    trunks, tasks = forked_tasks(load_matrix(tiny_corpus / "m.yaml"), "local", tiny_corpus / "fork")
    assert [(_args(t).get("agent"), _args(t)["fork"]["role"]) for t in trunks] == [("pi", "trunk")]
    assert [(_args(t).get("agent"), (_args(t).get("fork") or {}).get("role")) for t in tasks] == [
        ("pi", "fork")] * 4 + [("claude-code", None)] * 4


def test_the_divergence_table_names_an_independent_arm_and_saves_nothing_on_it():
    rows = pd.DataFrame([
        {"arm": "stock × pi-dcp @ m", "sample_id": "a", "epoch": 1, "kind": "result", "fork_call": 4, "calls": 10,
         "replayed_calls": 4, "input_tokens": 1000, "output_tokens": 100, "prefix_input_tokens": 300,
         "prefix_output_tokens": 40, "saved_usd_openai": 0.02, "cost_usd_openai": 0.08},
        {"arm": "stock × off × pi @ m", "sample_id": "a", "epoch": 1, "kind": "independent", "fork_call": None,
         "calls": 12, "replayed_calls": 0, "input_tokens": 1500, "output_tokens": 90, "prefix_input_tokens": 0,
         "prefix_output_tokens": 0, "saved_usd_openai": 0.0, "cost_usd_openai": 0.11},
    ])
    summary = divergence_summary(rows).set_index("arm")
    pi = summary.loc["stock × off × pi @ m"]
    assert (pi["run_independently"], pi["share_diverged"], pi["identical_to_trunk"]) == (1.0, 0.0, 0.0)
    assert (pi["calls_not_spent"], pi["tokens_not_spent"], pi["saved_usd_openai"], pi["share_saved_openai"]) == (
        0, 0, 0.0, 0.0)
    assert math.isnan(pi["median_fork_call"])
    loop = summary.loc["stock × pi-dcp @ m"]
    assert (loop["run_independently"], loop["share_diverged"], loop["calls_not_spent"]) == (0.0, 1.0, 4)
    table = divergence_section(divergence_summary(rows))[1]
    assert "run independently" in table.header
    assert table.rows[0][:6] == ("stock × off × pi @ m", "1", "0.0%", "0.0%", "0.0%", "100.0%")
    assert ("run independently = share of samples of an arm that ran its whole trajectory, paid in full: a Claude "
            "Code or Codex arm (the forked design forks readbench's loop and pi only: Claude Code 2.1.332 resumes a "
            "session only with a new prompt, which would change the fork's request, and resuming Codex 0.171.0 "
            "without one (`codex exec resume`) is untried), or an arm of readbench's loop alone in its schema group, "
            "i.e. no other arm sends its first request, has no trunk to share: its trunk would be its own trajectory, "
            "paid once and then replayed once; ") in table.caption


def test_divergence_rows_read_a_real_harness_log_as_run_independently(tiny_corpus, fixed_sandbox_dir, monkeypatch):
    # a log of readbench's loop relabelled as a pi arm's (a real pi run needs Docker or the cached
    # prefix: tests/e2e/test_agent_pi_e2e.py): its samples hold no fork record
    from click.testing import CliRunner
    from inspect_ai.log import list_eval_logs, read_eval_log, write_eval_log

    from readbench.analysis.divergence import divergence_rows
    from readbench.base.store import CACHE_METRICS, CALLS
    from readbench.run._cli import eval_cmd

    monkeypatch.chdir(tiny_corpus)
    (tiny_corpus / "m.yaml").write_text(MATRIX.replace("agents: [readbench, pi]", "agents: [readbench]")
                                        .replace("variants: [stock, B]", "variants: [stock]")
                                        .replace('dcp: ["off", pi-dcp]', 'dcp: ["off"]')
                                        .replace("design: forked", "max_samples: 1"))
    r = CliRunner().invoke(eval_cmd, ["--matrix", "m.yaml", "--sandbox", "local", "--run-id", "i"])
    assert r.exit_code == 0, r.output
    [info] = list_eval_logs("results/i/logs")
    log = read_eval_log(info.name)
    log.eval.task_args = {**log.eval.task_args, "agent": "pi"}
    (tiny_corpus / "pi").mkdir()
    write_eval_log(log, str(tiny_corpus / "pi" / "pi.eval"))
    rows = divergence_rows(tiny_corpus / "pi").sort_values("sample_id").reset_index(drop=True)
    samples = sorted(log.samples, key=lambda s: str(s.id))
    assert list(rows["arm"]) == ["stock × off × pi @ readbench/sim-pager"] * 2
    assert list(rows["kind"]) == ["independent"] * 2 and list(rows["replayed_calls"]) == [0, 0]
    assert list(rows["calls"]) == [len(s.store[CALLS]) for s in samples]
    assert list(rows["saved_usd_openai"]) == [0.0, 0.0]
    assert list(rows["cost_usd_openai"]) == [s.store[CACHE_METRICS]["cost_usd_openai"] for s in samples]
    # the same loop log: in an independent run no divergence rows; in a forked run (eval metadata) its task
    # without a fork argument is a loop arm alone in its schema group (readbench.run.forked), run independently
    assert divergence_rows(tiny_corpus / "results/i/logs").empty
    loop = read_eval_log(info.name)
    loop.eval.metadata = {**(loop.eval.metadata or {}), "readbench_design": "forked"}
    (tiny_corpus / "alone").mkdir()
    write_eval_log(loop, str(tiny_corpus / "alone" / "alone.eval"))
    rows = divergence_rows(tiny_corpus / "alone").sort_values("sample_id").reset_index(drop=True)
    assert list(rows["arm"]) == ["stock × off @ readbench/sim-pager"] * 2
    assert list(rows["kind"]) == ["independent"] * 2 and list(rows["replayed_calls"]) == [0, 0]
    assert list(rows["calls"]) == [len(s.store[CALLS]) for s in samples]
    assert list(rows["saved_usd_openai"]) == [0.0, 0.0]


def test_a_run_id_of_the_other_design_is_refused_naming_the_design(tiny_corpus, monkeypatch):
    # a trial re-used a forked run's id for an independent run: inspect refused its logs naming
    # "other task arguments, epochs or sandbox", not the design
    import json

    from click.testing import CliRunner

    from readbench.run._cli import eval_cmd

    monkeypatch.chdir(tiny_corpus)
    (tiny_corpus / "m.yaml").write_text(MATRIX.replace("agents: [readbench, pi]", "agents: [readbench]")
                                        .replace("design: forked", "design: independent"))
    run = tiny_corpus / "results" / "x"
    run.mkdir(parents=True)
    (run / "run.json").write_text(json.dumps({"design": "forked"}))
    r = CliRunner().invoke(eval_cmd, ["--matrix", "m.yaml", "--sandbox", "local", "--run-id", "x"])
    assert r.exit_code == 1
    assert r.output.splitlines()[-1] == (
        f"Error: {run.relative_to(tiny_corpus)} is a run with design forked, and this one has design independent: use "
        "another --run-id, or --design forked to resume or extend it")
    assert not (run / "logs").exists() or not any((run / "logs").glob("*.eval"))
