"""`readbench eval --design forked` (GitHub issue 25 items 1-2 and 4): the trunk eval goes to
<run>/trunk, one fork eval per arm to <run>/logs, and the run's table equals an independent
run's table on every metric (the seeded sim, one fixed sandbox directory: tests/fork/conftest.py)."""

from __future__ import annotations

import json

import pandas as pd
import pytest
from click.testing import CliRunner

from readbench.analysis import _format as F
from readbench.analysis.table import read_table
from readbench.run._cli import eval_cmd
from readbench.run.matrix import load_matrix

MATRIX = """
name: f
models: [readbench/sim-pager]
variants: [B, B-s250, stock]
dcp: ["off"]
arms:
  - [B, pi-dcp]
presets:
  B-s250: {base: B, suggest_limit: 250}
cache_models: [anthropic-5m, openai]
max_samples: 1
max_tasks: 1
"""
#: columns that differ between any two runs: ids, paths and wall-clock times
RUN_COLUMNS = ["run_id", "eval_set_id", "eval_id", "log", "total_time", "working_time", "wall_seconds"]


@pytest.fixture()
def workdir(tiny_corpus, fixed_sandbox_dir, monkeypatch):
    monkeypatch.chdir(tiny_corpus)
    (tiny_corpus / "m.yaml").write_text(MATRIX)
    return tiny_corpus


def _eval(*args):
    r = CliRunner().invoke(eval_cmd, ["--matrix", "m.yaml", "--sandbox", "local", *args])
    assert r.exit_code == 0, r.output
    return r


def _table(run):
    table = read_table(f"results/{run}/table.parquet").drop(columns=RUN_COLUMNS)
    return table.sort_values(["arm", "sample_id", "epoch"]).reset_index(drop=True)


def test_forked_run_table_equals_the_independent_run_table(workdir):
    _eval("--run-id", "forked", "--design", "forked")
    _eval("--run-id", "indep")
    forked, indep = _table("forked"), _table("indep")
    assert sorted(forked["arm"].unique()) == sorted(indep["arm"].unique()) and len(forked) == 8
    pd.testing.assert_frame_equal(forked, indep)
    assert json.loads((workdir / "results/forked/run.json").read_text())["design"] == "forked"
    assert json.loads((workdir / "results/indep/run.json").read_text())["design"] == "independent"
    # two schema groups: {B, B-s250, B x pi-dcp} under B's trunk; {stock} alone: no trunk, run independently
    assert len(list((workdir / "results/forked/trunk").glob("*.eval"))) == 1
    assert len(list((workdir / "results/forked/logs").glob("*.eval"))) == 4
    assert not (workdir / "results/indep/trunk").exists()
    # the divergence table (fork points as in test_fork_equivalence: B never leaves its own trunk;
    # B-s250 forks at the first blocked read, call 2 of bugfix and call 1 of locate, replaying
    # calls 0..2 and 0..1; B x pi-dcp forks at call 9 of bugfix and never in locate)
    div = pd.read_csv(workdir / "results/forked/divergence.csv").set_index("arm")
    m = "@ readbench/sim-pager"
    # B is the trunk: its fork replays it whole, but the trunk paid every call
    assert div.loc[f"B × off {m}", ["trunk", "samples", "share_diverged", "calls_not_spent", "calls"]].tolist() == [
        True, 2, 0, 0, 18]
    assert div.loc[f"B × off {m}", "share_saved_anthropic-5m"] == 0.0
    assert div.loc[f"B-s250 × off {m}", ["share_diverged", "median_fork_call", "calls_not_spent"]].tolist() == [1, 1.5, 5]
    assert div.loc[f"B × pi-dcp {m}", ["share_diverged", "identical_to_trunk", "median_fork_call",
                                       "calls_not_spent"]].tolist() == [0.5, 0.5, 9, 15]
    assert 0 < div.loc[f"B × pi-dcp {m}", "share_saved_openai"] < 1
    assert div.loc[f"stock × off {m}", ["trunk", "share_diverged", "run_independently", "calls_not_spent",
                                        "share_saved_openai"]].tolist() == [False, 0, 1, 0, 0]
    # all arms: what the forked run did not pay, the trunks paid: B-s250's 5 and B x pi-dcp's 15 calls
    assert div.loc["all arms", ["trunk", "samples", "calls_not_spent"]].tolist() == [False, 8, 20]
    md = (workdir / "results/forked/report/report.md").read_text()
    assert f"| B × off {m} (trunk, paid in full) | 2 |" in md and "| all arms | 8 |" in md
    assert not (workdir / "results/indep/divergence.csv").exists()
    # readbench plan --design forked: a task x epoch costs the trunk (B) once plus what each fork paid
    # (its mean cost times the share it did not save; stock, run independently, saved nothing)
    from readbench.run.plan_cli import plan

    r = CliRunner().invoke(plan, ["--from", "results/forked", "--design", "forked"])
    assert r.exit_code == 0, r.output
    costs = forked.groupby("arm")["cost_usd_openai"].mean()
    share = div["share_saved_openai"]
    expect_forked = (sum(c * (1 - share[a]) for a, c in costs.items() if not div.loc[a, "trunk"])
                     + costs[f"B × off {m}"])
    line = next(x for x in r.output.splitlines() if "/ openai:" in x)
    assert line == (f"  readbench/sim-pager / openai: independent {F.usd(costs.sum())}, forked {F.usd(expect_forked)} "
                    f"({F.pct(1 - expect_forked / costs.sum())} saved)"), r.output
    r = CliRunner().invoke(plan, ["--from", "results/indep", "--design", "forked"])
    assert r.exit_code == 2 and "needs a run made with --design forked" in r.output
    report = (workdir / "results/forked/report/report.md").read_text()
    assert "## Divergence (forked design)" in report
    assert "(no CUPED): the trunk's metrics are shared by both arms of a pair" in report
    assert "## Divergence" not in (workdir / "results/indep/report/report.md").read_text()


def test_design_is_checked(workdir):
    (workdir / "bad.yaml").write_text(MATRIX + "design: maybe\n")
    with pytest.raises(ValueError, match="design must be one of independent, forked, got 'maybe'"):
        load_matrix(workdir / "bad.yaml")
    assert load_matrix(workdir / "m.yaml").design == "independent"
    r = CliRunner().invoke(eval_cmd, ["--matrix", "m.yaml", "--design", "maybe"])
    assert r.exit_code == 2 and "Invalid value for '--design'" in r.output
