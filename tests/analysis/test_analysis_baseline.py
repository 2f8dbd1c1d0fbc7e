"""Baseline directories (`readbench baseline`) and `readbench compare` on run directories whose
logs inspect wrote (conftest.make_logs): what a baseline holds, that a partial run is refused,
the newest complete run of the matrix is the one taken, and compare's exit codes and files (issue 17)."""

from __future__ import annotations

import json
import os
import time

import pytest
from click.testing import CliRunner
from inspect_ai.log import read_eval_log, write_eval_log

from readbench.analysis.baseline import IncompleteRun, compare_run, decision_text, latest_run, write_baseline
from readbench.analysis.baseline_cli import baseline as baseline_cmd
from readbench.analysis.baseline_cli import compare as compare_cmd

from conftest import contract_metrics

ARMS = [{"variant": "stock", "dcp": "off"}, {"variant": "B", "dcp": "off"}]


def _metrics(variant, dcp, sid, epoch):
    return contract_metrics(1.0, "solved", 1000.0 if variant == "stock" else 500.0)


@pytest.fixture
def run_dir(make_logs, tmp_path):
    make_logs(ARMS, _metrics)  # tmp_path/logs
    (tmp_path / "run.json").write_text(json.dumps({"matrix": "nightly", "models": ["mockllm/model"],
                                                   "arms": ["stock × off", "B × off"], "sandbox": "local"}))
    return tmp_path


def _cancel(run_dir):
    path = next(p for p in (run_dir / "logs").glob("*.eval")
                if read_eval_log(str(p), header_only=True).eval.task_args["variant"] == "B")
    log = read_eval_log(str(path))
    log.status, log.samples = "cancelled", log.samples[:2]
    write_eval_log(log, str(path))


def test_a_baseline_holds_the_table_run_json_report_and_provenance_but_no_logs(run_dir, tmp_path):
    out = write_baseline(run_dir, tmp_path / "analysis" / "baselines" / "nightly", tmp_path / "analysis" / "decisions")
    files = sorted(str(p.relative_to(out)) for p in out.rglob("*") if p.is_file())
    assert {"table.parquet", "run.json", "baseline.json", "report/report.md", "report/partition.json"} <= set(files)
    assert not [f for f in files if f.endswith((".eval", ".html"))]
    prov = json.loads((out / "baseline.json").read_text())
    assert (prov["matrix"], prov["arms"], prov["samples"]) == ("nightly", 2, 6)
    assert prov["run_wall_seconds"] >= 0 and prov["source_run"] == str(run_dir)
    assert set(prov) == {"matrix", "source_run", "run_git_commit", "git_commit", "created", "arms", "samples",
                         "run_wall_seconds", "rebuild"}
    decision = (tmp_path / "analysis" / "decisions" / "nightly.md").read_text()
    report = (out / "report" / "report.md").read_text()
    assert decision.endswith(decision_text(report).replace("## Decision", "## The report's decision", 1))
    assert "The full report with figures: [../baselines/nightly/report/report.md](../baselines/nightly/report/report.md)" \
        in decision
    # the baseline against the run it came from: no regression, but 3 tasks cannot detect the smallest
    # difference that matters (5 pp): underpowered, not a pass
    r = compare_run(run_dir, out)
    assert (r.exit_code, r.regressions) == (3, ())
    # 2 repositories (t on 1 df) detect a success drop of 99.96 pp at the Holm level of 12 checks
    assert {round(c.detectable, 4) for c in r.checks if c.metric == "success"} == {0.9996}
    # a run of another matrix never replaces it
    (run_dir / "run.json").write_text(json.dumps({"matrix": "smoke", "models": ["mockllm/model"]}))
    with pytest.raises(ValueError, match=f"^{out} is the baseline of matrix 'nightly', {run_dir} a run of 'smoke': "):
        write_baseline(run_dir, out)


def test_a_partial_run_is_refused_as_a_baseline_and_is_no_verdict(run_dir, tmp_path):
    good = write_baseline(run_dir, tmp_path / "bl")
    _cancel(run_dir)
    with pytest.raises(IncompleteRun, match=r"^incomplete: B × off @ mockllm/model \(partial: 2 of 3 samples, "
                                             r"cancelled\); finish it"):
        write_baseline(run_dir, tmp_path / "bl")
    assert (good / "table.parquet").is_file()  # the old baseline is untouched
    r = CliRunner().invoke(compare_cmd, [str(run_dir), "--baseline", str(good)])
    assert r.exit_code == 2, r.output
    assert r.output.splitlines()[0] == ("incomplete: B × off @ mockllm/model (partial: 2 of 3 samples, cancelled): "
                                        "a partial arm is never a verdict")
    assert json.loads((run_dir / "compare" / "compare.json").read_text())["exit_code"] == 2
    r = CliRunner().invoke(baseline_cmd, [str(run_dir), "--out", str(tmp_path / "bl2")])
    assert r.exit_code == 2 and not (tmp_path / "bl2").exists()


def test_a_run_without_run_json_is_no_verdict(run_dir, tmp_path):
    good = write_baseline(run_dir, tmp_path / "bl")
    (run_dir / "run.json").unlink()
    r = compare_run(run_dir, good)
    assert r.exit_code == 2
    assert r.incomplete == (f"{run_dir / 'run.json'} is missing: readbench eval did not finish recording the run",)


def test_compare_cli_exit_codes_and_missing_baseline(run_dir, tmp_path):
    good = write_baseline(run_dir, tmp_path / "bl")
    r = CliRunner().invoke(compare_cmd, [str(run_dir), "--baseline", str(good)])
    assert r.exit_code == 3, r.output  # underpowered: no regression found, but 5 pp was undetectable
    assert r.output.splitlines()[0] == (
        "UNDERPOWERED B × off @ mockllm/model · success: this run detects a drop ≥ 100.0 pp; the smallest difference "
        "that matters is 5 pp (80% power, Holm level; `readbench plan` says what would)")
    assert r.output.splitlines()[-1].startswith("underpowered: 2 of the success and cost checks cannot detect the "
                                                "smallest difference that matters (5 pp in success, ")
    record = json.loads((run_dir / "compare" / "compare.json").read_text())
    assert record["exit_code"] == 3 and record["smallest_difference"] == {"success_pp": 5.0, "cost_ratio": 0.9}
    # the command line (or the matrix's smallest_difference in run.json) sets what matters
    r = CliRunner().invoke(compare_cmd, [str(run_dir), "--baseline", str(good), "--smallest-success-pp", "99.99"])
    assert r.exit_code == 0, r.output
    assert r.output.splitlines()[-1] == (
        f"no regression in 12 checks of 2 arm(s) against {good.as_posix()} (Holm across the checks at 0.05; "
        "tolerance: success −5.0 pp; cost and input tokens ×1.10; turns and read calls +10 % of the baseline mean; "
        "every success and cost check detects 99.99 pp in success, a cost ratio of 0.9× (or 1.111×)); "
        f"details: {run_dir / 'compare' / 'compare.md'}")
    meta = json.loads((run_dir / "run.json").read_text())
    (run_dir / "run.json").write_text(json.dumps({**meta, "smallest_difference": {"success_pp": 99.99}}))
    assert CliRunner().invoke(compare_cmd, [str(run_dir), "--baseline", str(good)]).exit_code == 0
    r = CliRunner().invoke(compare_cmd, [str(run_dir), "--baseline", str(good), "--smallest-cost-ratio", "1"])
    assert r.exit_code == 2 and "1.0 must be a ratio > 0 and != 1" in r.output
    r = CliRunner().invoke(compare_cmd, [str(run_dir), "--baseline", str(tmp_path / "nothing")])
    assert r.exit_code == 2 and f"no baseline at {tmp_path / 'nothing'}: build one" in r.output
    r = CliRunner().invoke(compare_cmd, [str(run_dir), "--baseline", str(good), "--tolerance", "1.5"])
    assert r.exit_code == 2 and "tolerance relative must be a fraction in [0, 1), got 1.5" in r.output


def test_latest_run_is_the_newest_complete_run_of_the_matrix(make_logs, tmp_path, monkeypatch):
    results = tmp_path / "results"
    for name, matrix, age in (("old", "nightly", 300), ("smoke", "smoke", 0), ("new", "nightly", 100),
                              ("newest", "nightly", 10)):
        d = results / name
        (d / "logs").mkdir(parents=True)
        if name in ("new", "newest"):  # the others are never read: older, or another matrix
            for p in make_logs(ARMS, _metrics).glob("*.eval"):
                p.rename(d / "logs" / p.name)
        (d / "run.json").write_text(json.dumps({"matrix": matrix}))
        os.utime(d / "run.json", (time.time() - age, time.time() - age))
    _cancel(results / "newest")
    assert latest_run(results, "nightly") == results / "new"
    with pytest.raises(FileNotFoundError, match="no complete run of matrix 'weekly' under"):
        latest_run(results, "weekly")
    monkeypatch.chdir(tmp_path)
    r = CliRunner().invoke(baseline_cmd, ["--out", "analysis/baselines/nightly", "--decisions", "analysis/decisions"])
    assert r.exit_code == 0, r.output
    assert r.output.strip() == "baseline: analysis/baselines/nightly (from results/new)"
    assert json.loads((tmp_path / "analysis/baselines/nightly/baseline.json").read_text())["rebuild"] == \
        "make nightly && make baseline"


def test_a_run_of_another_matrix_is_named_as_the_cause(run_dir, tmp_path):
    good = write_baseline(run_dir, tmp_path / "bl")
    meta = json.loads((good / "run.json").read_text())
    (good / "run.json").write_text(json.dumps({**meta, "matrix": "weekly"}))
    r = CliRunner().invoke(compare_cmd, [str(run_dir), "--baseline", str(good)])
    assert (f"note: this run is of matrix {meta['matrix']!r}, the baseline of 'weekly': compare a run of the "
            "baseline's matrix (make nightly) or a baseline of this one "
            f"(make baseline BASELINE=analysis/baselines/{meta['matrix']})") in r.output.splitlines()


def test_baseline_out_never_deletes_the_run_or_a_directory_that_is_not_a_baseline(run_dir, tmp_path):
    """brk12: `readbench baseline RUN --out RUN` (or --out results, --out analysis) replaced the
    directory with the baseline and so deleted the run's logs (or every run)."""
    results = tmp_path / "results"
    run = results / "run1"
    (run / "logs").mkdir(parents=True)
    for p in (run_dir / "logs").glob("*.eval"):
        p.rename(run / "logs" / p.name)
    (run / "run.json").write_text((run_dir / "run.json").read_text())
    logs = sorted(p.name for p in (run / "logs").iterdir())
    for out, why in ((run, f"--out {run} is the run directory: writing the baseline there would delete the run's "
                           "logs; nothing written"),
                     (results, f"--out {results} holds the run directory {run}: writing the baseline there would "
                               "delete the run's logs; nothing written")):
        with pytest.raises(ValueError, match=f"^{why}"):
            write_baseline(run, out)
        assert sorted(p.name for p in (run / "logs").iterdir()) == logs
    other = tmp_path / "analysis"
    (other / "decisions").mkdir(parents=True)
    (other / "notes.md").write_text("mine")
    r = CliRunner().invoke(baseline_cmd, [str(run), "--out", str(other), "--decisions", str(tmp_path / "dec")])
    assert r.exit_code == 1
    assert r.output.strip() == (f"Error: --out {other} exists and is not a baseline directory (no baseline.json): "
                                "it would be replaced; nothing written (give a new or empty directory, or an "
                                "existing baseline)")
    assert (other / "notes.md").read_text() == "mine"
    # a new directory, then the same baseline again, are fine
    good = write_baseline(run, tmp_path / "bl")
    assert write_baseline(run, good) == good and (good / "baseline.json").is_file()


def test_a_run_table_with_no_rows_is_no_verdict(run_dir, tmp_path):
    """brk12: a copied run whose table.parquet has no rows gave `no regression in 0 checks of 0
    arm(s)` and exit 0."""
    import pandas as pd

    good = write_baseline(run_dir, tmp_path / "bl")
    copy = tmp_path / "copy"
    copy.mkdir()
    pd.read_parquet(good / "table.parquet").iloc[:0].to_parquet(copy / "table.parquet")
    (copy / "run.json").write_text((run_dir / "run.json").read_text())
    r = CliRunner().invoke(compare_cmd, [str(copy), "--baseline", str(good)])
    assert r.exit_code == 2, r.output
    assert r.output.splitlines()[0] == f"incomplete: {copy / 'table.parquet'} has no rows: no sample of the run finished"


def test_compare_with_an_unwritable_out_prints_the_verdict_and_never_exits_1(run_dir, tmp_path):
    """brk12: `compare --out afile/sub` crashed with a traceback after the comparison (exit 1, which
    `make nightly` reads as "regressions"), and the verdict was not printed."""
    good = write_baseline(run_dir, tmp_path / "bl")
    (tmp_path / "afile").write_text("")
    out = tmp_path / "afile" / "sub"
    r = CliRunner().invoke(compare_cmd, [str(run_dir), "--baseline", str(good), "--out", str(out),
                                         "--smallest-success-pp", "99.99"])
    assert r.exit_code == 2, r.output
    assert r.exception is None or isinstance(r.exception, SystemExit)
    assert r.output.splitlines()[-2].startswith("no regression in 12 checks of 2 arm(s) against ")
    assert r.output.splitlines()[-2].endswith(f"; details: not written ({out}: Not a directory)")
    assert r.output.splitlines()[-1] == f"readbench compare: compare.md and compare.json were not written ({out}: " \
        "Not a directory)"
    r = CliRunner().invoke(compare_cmd, [str(run_dir), "--baseline", str(good), "--out", str(out)])
    assert r.exit_code == 3, r.output  # underpowered stays underpowered


def test_an_unreadable_run_json_is_named(run_dir, tmp_path):
    """brk11 item 13 / brk12: a baseline's broken run.json gave `no verdict: Expecting value: line 1
    column 1 (char 0)` (no file named), and a run.json holding a list was a traceback."""
    good = write_baseline(run_dir, tmp_path / "bl")
    (good / "run.json").write_text("{")
    r = CliRunner().invoke(compare_cmd, [str(run_dir), "--baseline", str(good)])
    assert r.exit_code == 2
    assert r.output.splitlines()[-1] == (f"no verdict: {good / 'run.json'}: not a readable run.json (Expecting "
                                         "property name enclosed in double quotes: line 1 column 2 (char 1))")
    (good / "run.json").write_text("[1, 2]")
    r = CliRunner().invoke(compare_cmd, [str(run_dir), "--baseline", str(good)])
    assert r.exit_code == 2 and "Traceback" not in r.output
    assert r.output.splitlines()[-1] == (f"no verdict: {good / 'run.json'}: not a readable run.json (a JSON object "
                                         "is expected, got list)")


def test_a_truncated_table_next_to_its_logs_is_rebuilt_not_no_verdict(run_dir, tmp_path):
    """brk12: a table.parquet cut short (a killed `readbench report`) newer than the logs made
    compare say `no verdict: Could not open Parquet input source ...` although the logs were there."""
    good = write_baseline(run_dir, tmp_path / "bl")
    table = run_dir / "table.parquet"
    table.write_bytes(table.read_bytes()[:1000])
    r = CliRunner().invoke(compare_cmd, [str(run_dir), "--baseline", str(good), "--smallest-success-pp", "99.99"])
    assert r.exit_code == 0, r.output
    assert r.output.splitlines()[-1].startswith("no regression in 12 checks of 2 arm(s) against ")
    assert len(__import__("pandas").read_parquet(table)) == 6


def test_baseline_to_an_unwritable_out_or_decisions_is_named_not_a_traceback(run_dir, tmp_path):
    """brk12: `baseline --out /proc/bl` blamed RUN_DIR and named the staging directory
    ('Invalid value for RUN_DIR: ... /proc/bl.new'); `--decisions afile/dec` was a traceback after
    the baseline had been written."""
    (tmp_path / "afile").write_text("")
    r = CliRunner().invoke(baseline_cmd, [str(run_dir), "--out", str(tmp_path / "afile" / "bl")])
    assert r.exit_code == 1
    assert r.output == f"Error: cannot write the baseline to {tmp_path / 'afile' / 'bl'}: Not a directory; nothing written\n"
    r = CliRunner().invoke(baseline_cmd, [str(run_dir), "--out", str(tmp_path / "bl"),
                                          "--decisions", str(tmp_path / "afile" / "dec")])
    assert r.exit_code == 1 and not isinstance(r.exception, OSError), r.output
    assert r.output == (f"Error: the baseline is written to {tmp_path / 'bl'}, but not the decision "
                        f"{tmp_path / 'afile' / 'dec' / 'nightly.md'}: Not a directory\n")
    assert (tmp_path / "bl" / "baseline.json").is_file()
