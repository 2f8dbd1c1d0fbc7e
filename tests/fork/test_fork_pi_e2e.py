"""`design: forked` with pi arms (GitHub issue 25 item 2 for a real harness; readbench.agents.pi_forked):
one pi trunk per task x epoch under the group's first pi arm, one pi fork eval per arm, and per arm
the metric columns of the run's table equal an independent run's (slow: real pi 0.84.4 in the local
sandbox, the seeded sim-pager, the tiny corpus's locate task).

The fork points (as tests/agents/test_pi_fork_e2e.py found them by hand): B refuses the trunk's read
of calc.py answered in call 2's request, so B's fork resumes pi at call 2 with B's refusal in place
and makes calls 2-5 itself; stock is the trunk's own arm ("never"): its sample is the trunk's, no pi run.
On the bugfix task (the sim edits calc.py, then runs the tests), the obs-mask-5 arm's projection first
changes call 6's request: its fork restores the trunk's workspace (the edit) and resumes pi there under
obs-mask-5.
"""

from __future__ import annotations

import json
import sys
from pathlib import Path

import pandas as pd
import pytest
from click.testing import CliRunner
from inspect_ai.event import ModelEvent
from inspect_ai.log import list_eval_logs, read_eval_log

from readbench.agents.run import SNAPSHOTS_KEY
from readbench.analysis.divergence import divergence_rows
from readbench.analysis.table import read_table
from readbench.corpus import task_index
from readbench.fork.prefix import FORK
from readbench.run._cli import eval_cmd

pytestmark = [pytest.mark.slow]

MATRIX = """
name: f
models: [readbench/sim-pager]
agents: [pi]
variants: [stock, B]
dcp: ["off"]
cache_models: [anthropic-5m, openai]
task_args: {families: locate}
max_samples: 1
max_tasks: 1
"""
#: columns that differ between any two runs: ids, paths and wall-clock times (the harness's start-up too)
RUN_COLUMNS = ["run_id", "eval_set_id", "eval_id", "log", "total_time", "working_time", "wall_seconds"]


@pytest.fixture()
def workdir(tmp_path, monkeypatch, request):
    # the tiny corpus, READBENCH_CACHE left as set (the installed pi pin lives there)
    sys.path.insert(0, str(Path(__file__).parents[1] / "e2e"))
    from corpus_fixture import write_corpus

    monkeypatch.setenv("READBENCH_TASKS", str(write_corpus(tmp_path)))
    task_index.cache_clear()
    monkeypatch.chdir(tmp_path)
    (tmp_path / "m.yaml").write_text(getattr(request, "param", MATRIX))
    yield tmp_path
    task_index.cache_clear()


def _eval(*args):
    r = CliRunner().invoke(eval_cmd, ["--matrix", "m.yaml", "--sandbox", "local", *args])
    assert r.exit_code == 0, r.output
    return r


def _table(run):
    table = read_table(f"results/{run}/table.parquet")
    table = table.drop(columns=[c for c in RUN_COLUMNS if c in table.columns])
    return table.sort_values(["arm", "sample_id", "epoch"]).reset_index(drop=True)


def _samples(log_dir):
    out = {}
    for info in list_eval_logs(str(log_dir)):
        log = read_eval_log(info.name)
        out[log.eval.task_args["variant"]] = log.samples
    return out


def test_a_forked_matrix_with_pi_arms_forks_b_at_its_call_and_equals_the_independent_run(workdir):
    _eval("--run-id", "forked", "--design", "forked")
    _eval("--run-id", "indep")
    forked, indep = _table("forked"), _table("indep")
    assert list(forked["arm"]) == ["B × off × pi @ readbench/sim-pager", "stock × off × pi @ readbench/sim-pager"]
    pd.testing.assert_frame_equal(forked, indep)
    # one pi trunk (stock, the group's first arm) and one fork eval per pi arm
    [trunk] = _samples(workdir / "results/forked/trunk")["stock"]
    assert trunk.store[FORK] == {"role": "trunk", "arms": {
        "stock × off × pi": {"call": 5, "kind": "never", "reason": "not diverged within the trunk's 5 calls"},
        "B × off × pi": {"call": 2, "kind": "result", "reason": "its read results differ"}}}
    forks = _samples(workdir / "results/forked/logs")
    [b], [stock] = forks["B"], forks["stock"]
    # the workspace restored from the trunk's latest snapshot at or before call 2 (taken after a bash call)
    taken = max(int(k) for k in trunk.store[SNAPSHOTS_KEY] if int(k) <= 2)
    assert b.store[FORK]["fork_point"] == {"call": 2, "kind": "result", "reason": "its read results differ",
                                           "snapshot": f"call {taken}"}
    assert b.store[FORK]["replayed_calls"] == 2
    b_calls = len(b.store["readbench:calls"])
    assert b_calls == 6 and sum(isinstance(e, ModelEvent) for e in b.events) == b_calls - 2  # calls 2-5 live
    # the trunk's own arm takes the trunk's sample: no pi run, no model call
    assert stock.store[FORK]["fork_point"]["kind"] == "never" and stock.store[FORK]["fork_point"]["snapshot"] == "final"
    assert not any(isinstance(e, ModelEvent) for e in stock.events)
    assert stock.store[FORK]["replayed_calls"] == len(trunk.store["readbench:calls"])
    # the divergence table: B forked at call 2, its first 2 calls not spent; stock is the trunk
    div = pd.read_csv(workdir / "results/forked/divergence.csv").set_index("arm")
    m = "@ readbench/sim-pager"
    assert div.loc[f"B × off × pi {m}", ["trunk", "samples", "share_diverged", "run_independently",
                                         "median_fork_call", "calls_not_spent", "calls"]].tolist() == [
        False, 1, 1.0, 0.0, 2.0, 2, 6]
    assert 0 < div.loc[f"B × off × pi {m}", "share_saved_openai"] < 1
    assert div.loc[f"stock × off × pi {m}", ["trunk", "share_diverged", "calls_not_spent"]].tolist() == [True, 0, 0]
    rows = divergence_rows(workdir / "results/forked/logs").set_index("arm")
    assert rows.loc[f"B × off × pi {m}", "prefix_input_tokens"] == sum(
        c["prompt_tokens"] for c in b.store["readbench:calls"][:2])
    assert json.loads((workdir / "results/forked/run.json").read_text())["trunk_arms"] == ["stock × off × pi"]


@pytest.mark.parametrize("workdir", [MATRIX.replace("variants: [stock, B]", "variants: [stock]")
                                     .replace('dcp: ["off"]', 'dcp: ["off", obs-mask-5]')
                                     .replace("families: locate", "families: bugfix")], indirect=True)
def test_a_forked_pi_dcp_arm_resumes_at_its_first_changed_request_with_the_trunks_workspace(workdir):
    _eval("--run-id", "forked", "--design", "forked")
    _eval("--run-id", "indep")
    forked, indep = _table("forked"), _table("indep")
    assert list(forked["arm"]) == ["stock × obs-mask-5 × pi @ readbench/sim-pager",
                                   "stock × off × pi @ readbench/sim-pager"]
    pd.testing.assert_frame_equal(forked, indep)
    assert list(forked["success"]) == [1.0, 1.0]  # the fork's tests ran on the restored edit
    [trunk] = _samples(workdir / "results/forked/trunk")["stock"]
    arms = trunk.store[FORK]["arms"]
    assert arms["stock × obs-mask-5 × pi"] == {"call": 6, "kind": "request", "reason": "its DCP projection differs"}
    assert arms["stock × off × pi"]["kind"] == "never"
    [log] = [read_eval_log(i.name) for i in list_eval_logs(str(workdir / "results/forked/logs"))
             if read_eval_log(i.name, header_only=True).eval.task_args["dcp"] == "obs-mask-5"]
    [fork] = log.samples
    taken = max(int(k) for k in trunk.store[SNAPSHOTS_KEY] if int(k) <= 6)
    assert fork.store[FORK]["fork_point"] == {"call": 6, "kind": "request", "reason": "its DCP projection differs",
                                              "snapshot": f"call {taken}"}
    calls = len(fork.store["readbench:calls"])
    assert calls == 10 and sum(isinstance(e, ModelEvent) for e in fork.events) == calls - 6
