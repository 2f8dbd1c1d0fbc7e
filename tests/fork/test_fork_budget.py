"""`readbench eval --budget-usd` (GitHub issue 25 item 5): spend at list prices as the run goes,
a clean stop that says how far it got and does not report success, and a resume with a larger
budget that keeps every finished sample (readbench.base.budget)."""

from __future__ import annotations

import re
from pathlib import Path

import pandas as pd
import pytest
from click.testing import CliRunner

from readbench.analysis.table import read_table
from readbench.base.budget import Budget, sample_spend, spent_in_logs
from readbench.run._cli import eval_cmd

MATRIX = """
name: b
models: [readbench/sim-pager]
variants: [stock]
dcp: ["off"]
arms:
  - [stock, pi-dcp]
cache_models: [anthropic-5m, openai]
max_samples: 1
max_tasks: 1
retry_attempts: 0
"""
RUN_COLUMNS = ["run_id", "eval_set_id", "eval_id", "log", "total_time", "working_time", "wall_seconds"]
SPENT = re.compile(r"readbench: spent ([0-9.]+) of ([0-9.]+) USD at anthropic-5m list prices")


@pytest.fixture()
def workdir(tiny_corpus, fixed_sandbox_dir, monkeypatch):
    monkeypatch.chdir(tiny_corpus)
    (tiny_corpus / "m.yaml").write_text(MATRIX)
    return tiny_corpus


def _eval(*args):
    return CliRunner().invoke(eval_cmd, ["--matrix", "m.yaml", "--sandbox", "local", *args])


def _table(run):
    table = read_table(f"results/{run}/table.parquet").drop(columns=RUN_COLUMNS)
    return table.sort_values(["arm", "sample_id", "epoch"]).reset_index(drop=True)


def test_budget_stops_cleanly_and_resumes_with_a_larger_budget(workdir):
    full = _eval("--run-id", "full")
    assert full.exit_code == 0, full.output
    ref = _table("full")
    costs = ref["cost_usd_anthropic-5m"].tolist()
    assert len(costs) == 4 and min(costs) > 0
    outcomes: dict = {}  # what a resumed --sequential run starts from
    assert spent_in_logs(Path("results/full"), "anthropic-5m", outcomes) == pytest.approx(sum(costs), rel=1e-9)
    assert outcomes == {("readbench/sim-pager", arm.split(" @ ")[0]): {
        (r["sample_id"], r["epoch"]): r["success"] for r in ref[ref["arm"] == arm].to_dict("records")}
        for arm in ref["arm"].unique()}
    # whichever sample runs first passes this budget alone: no other sample starts
    budget = min(costs) / 2
    stopped = _eval("--run-id", "cut", "--budget-usd", f"{budget:.10f}")
    assert stopped.exit_code == 1, stopped.output
    cut = _table("cut")
    assert (cut["stop_reason"] == "error").sum() == 3  # refused: the table and report name the arms partial
    assert cut["arm_status"].str.contains("errored: BudgetStop\\('budget spent: spent").all()
    done = cut[cut["stop_reason"] != "error"].iloc[0]
    first = float(ref[(ref["arm"] == done["arm"]) & (ref["sample_id"] == done["sample_id"])]["cost_usd_anthropic-5m"].iloc[0])
    assert done["cost_usd_anthropic-5m"] == pytest.approx(first, rel=1e-12)
    spent, limit = (float(x) for x in SPENT.search(stopped.output).groups())
    assert spent == pytest.approx(first, abs=5e-5) and limit == pytest.approx(budget, abs=5e-5)
    assert "stopped (budget spent: spent" in stopped.output
    assert "3 sample starts refused" in stopped.output
    assert "incomplete:" in stopped.output
    # resume: the finished sample is kept (the spend already in the logs counts), the rest run
    resumed = _eval("--run-id", "cut", "--budget-usd", "1000")
    assert resumed.exit_code == 0, resumed.output
    spent, _ = (float(x) for x in SPENT.search(resumed.output).groups())
    assert spent == pytest.approx(sum(costs), abs=5e-5)
    pd.testing.assert_frame_equal(_table("cut"), ref)


def test_budget_already_spent_refuses_every_sample_and_bad_budgets_are_named(workdir):
    assert _eval("--run-id", "x", "--budget-usd", "1000").exit_code == 0
    again = _eval("--run-id", "x", "--budget-usd", "0.0000001")
    assert again.exit_code == 0, again.output  # nothing left to run: finished, nothing refused
    assert "stopped" not in again.output
    bad = _eval("--run-id", "y", "--budget-usd", "-1")
    assert bad.exit_code == 1
    assert "--budget-usd must be a positive number of USD, got -1.0" in bad.output


def test_sample_spend_subtracts_what_a_fork_replayed():
    metrics = {"cost_usd_anthropic-5m": 0.30, "cost_usd_openai": 0.2}
    assert sample_spend(metrics, None, "anthropic-5m") == 0.30
    assert sample_spend(metrics, {"role": "fork", "prefix_cost_usd": {"anthropic-5m": 0.25}}, "anthropic-5m") == \
        pytest.approx(0.05)
    assert sample_spend(None, None, "openai") == 0.0
    with pytest.raises(ValueError, match="cache model 'deepseek' did not price this run's samples"):
        sample_spend(metrics, None, "deepseek")
    with pytest.raises(ValueError, match="positive number of USD, got 0"):
        Budget(0, "openai")
