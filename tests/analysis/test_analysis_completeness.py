"""A run that did not finish never looks like a success (issue 13, defects 1, 2 and 5): every
log's status is read, partial arms are flagged and left out of the comparisons, an unreadable
log is named while the others are reported, and one arm name never merges two definitions.
The logs are written by inspect itself (conftest.make_logs) and edited with inspect's own API
into the states a Ctrl-C, a SIGKILL or failing samples leave."""

from __future__ import annotations

import os
import time
from pathlib import Path

import pytest
from click.testing import CliRunner
from inspect_ai.log import EvalError, read_eval_log, write_eval_log

from readbench.analysis.completeness import scan_logs
from readbench.analysis.report_cli import build_report, report
from readbench.analysis.table import read_table

from conftest import contract_metrics

CANCELLED = 'CancelledError("Cancelled via cancel scope 7f0 by <Task cancelling>")'


def _metrics(variant, dcp, sid, epoch):
    return contract_metrics(1.0, "solved", 1000.0 if variant == "stock" else 500.0)


def _two_arms(make_logs):
    log_dir = make_logs([{"variant": "stock", "dcp": "off"}, {"variant": "B", "dcp": "off"}], _metrics)
    logs = {read_eval_log(str(p), header_only=True).eval.task_args["variant"]: p for p in log_dir.glob("*.eval")}
    return log_dir, logs


def _edit(path, status, cut=None, drop=False):
    """Rewrite a log as inspect leaves it: `status`, the last sample cut short by `cut` (an
    error message) or dropped (never written)."""
    log = read_eval_log(str(path))
    log.status = status
    last = log.samples[-1]
    if drop:
        log.samples = log.samples[:-1]
    elif cut:
        last.error = EvalError(message=cut, traceback="", traceback_ansi="")
        last.scores = None
    write_eval_log(log, str(path))


def test_a_cancelled_arm_is_flagged_and_its_cut_samples_are_not_failures(make_logs):
    log_dir, logs = _two_arms(make_logs)
    _edit(logs["B"], "cancelled", cut=CANCELLED)
    md = build_report(log_dir.parent).read_text()
    assert "## Incomplete run" in md
    # no run.json before the run finishes: the title names the run directory, not "readbench run"
    assert md.splitlines()[0] == f"# readbench report: {log_dir.parent.name}"
    assert "- B × off @ mockllm/model: partial: 2 of 3 samples, cancelled" in md
    # its means are over fewer samples: said in words, not left to the n column (issue 27 trial)
    assert ("A partial arm's means and medians are over the samples it has, so they are not comparable with a "
            "complete arm's") in md
    # the cut sample is not counted as a failure (was: 66.7 % of 3), and the row says partial
    assert "| B × off [partial] | 2 (2×1) | 2 | 100.0% |" in md
    assert "| stock × off | 3 (3×1) | 2 | 100.0% |" in md
    # left out of the paired comparisons: no comparison row of B against the baseline
    paired = md.split("## Paired comparisons", 1)[1].split("\n## ", 1)[0]
    assert "B × off" not in paired
    table = read_table(log_dir.parent / "table.parquet")
    assert set(table.loc[table.variant == "B", "arm_status"]) == {"partial: 2 of 3 samples, cancelled"}
    assert set(table.loc[table.variant == "stock", "arm_status"]) == {""}


def test_a_killed_run_is_partial_and_the_report_command_says_so(make_logs):
    log_dir, logs = _two_arms(make_logs)
    _edit(logs["stock"], "started", drop=True)  # SIGKILL: the log is never closed, one sample never written
    r = CliRunner().invoke(report, [str(log_dir.parent)])
    assert r.exit_code == 0
    assert r.stderr.strip() == (
        "incomplete: stock × off @ mockllm/model (partial: 2 of 3 samples, interrupted (its log was never closed)); "
        "re-run `readbench eval` with the same run id to resume (finished samples are kept)")
    md = (log_dir.parent / "report" / "report.md").read_text()
    assert "| stock × off [partial] | 2 (2×1) |" in md
    assert "The baseline arm is partial, so its model has no paired comparison." in md


def test_samples_that_errored_after_retries_make_the_arm_partial(make_logs):
    log_dir, logs = _two_arms(make_logs)
    _edit(logs["B"], "error", cut="RuntimeError('sandbox exploded')")
    [b] = [a for a in scan_logs(log_dir).arms if a.arm.startswith("B ")]
    assert (b.complete, b.finished, b.errored) == (False, 2, 1)
    assert b.describe() == "partial: 2 of 3 samples, 1 errored: RuntimeError('sandbox exploded')"


def test_complete_runs_have_no_flag(make_logs):
    log_dir, _ = _two_arms(make_logs)
    scan = scan_logs(log_dir)
    assert scan.complete and [a.describe() for a in scan.arms] == ["complete: 3 of 3 samples"] * 2
    assert "Incomplete run" not in build_report(log_dir.parent).read_text()


def test_a_truncated_log_is_named_and_the_other_arms_are_reported(make_logs):
    log_dir, logs = _two_arms(make_logs)
    logs["B"].write_bytes(logs["B"].read_bytes()[:300])  # truncated: no zip directory
    md = build_report(log_dir.parent).read_text()
    assert f"- unreadable log {logs['B']}: ValueError: EOCD not found" in md
    assert "| stock × off | 3 (3×1) |" in md and "| B × off" not in md
    r = CliRunner().invoke(report, [str(log_dir.parent)])
    assert r.exit_code == 0 and f"unreadable log {logs['B'].name} (ValueError: EOCD not found)" in r.stderr


def test_one_variant_name_with_two_definitions_is_refused_not_merged(make_logs):
    make_logs([{"variant": {"base": "B", "name": "Bx", "max_lines": 50}, "dcp": "off"}], _metrics)
    log_dir = make_logs([{"variant": {"base": "B", "name": "Bx", "max_lines": 60}, "dcp": "off"}], _metrics)
    with pytest.raises(ValueError, match=r"variant 'Bx' has two definitions: \{.*\} in .*\.eval and \{.*\} in "
                                         r".*\.eval; report them as separate runs") as info:
        build_report(log_dir.parent)
    assert '"max_lines": 50' in str(info.value) and '"max_lines": 60' in str(info.value)


def test_a_recovered_log_replaces_its_original(make_logs, tmp_path):
    """Issue 18, item 5: after an interrupted run inspect leaves ``<name>-recovered.eval`` beside
    ``<name>.eval``; the report reads one of them, not both ("appears 2 times across logs")."""
    import shutil

    from readbench.analysis.completeness import scan_logs
    from readbench.analysis.report_cli import build_report
    from readbench.analysis.table import tidy_table

    log_dir = make_logs([{"variant": "stock", "dcp": "off"}], lambda v, d, s, e: contract_metrics(1.0, "solved", 5.0))
    [original] = list(log_dir.glob("*.eval"))
    recovered = original.with_name(original.name.removesuffix(".eval") + "-recovered.eval")
    shutil.copy(original, recovered)
    os.utime(original, (time.time() + 60, time.time() + 60))  # the original even looks newer
    assert [Path(a.log).name for a in scan_logs(log_dir).arms] == [recovered.name]
    table = tidy_table(log_dir)
    assert len(table) == 3 and set(table["log"].map(lambda x: Path(x).name)) == {recovered.name}
    run = tmp_path / "run"
    shutil.copytree(log_dir, run / "logs")
    assert build_report(run).is_file()


def test_arms_of_run_json_that_never_started_are_named(make_logs):
    # Ctrl-C before inspect reached the last arms: they have no log at all, and only run.json
    # (written when eval_set accepted the run) says they were meant to run
    import json

    log_dir, _ = _two_arms(make_logs)
    meta = {"matrix": "m", "models": ["mockllm/model"], "arms": ["stock × off", "B × off", "C × off", "A × pi-dcp"]}
    (log_dir.parent / "run.json").write_text(json.dumps(meta))
    scan = scan_logs(log_dir)
    assert (scan.complete, scan.not_started) == (False, ("C × off @ mockllm/model", "A × pi-dcp @ mockllm/model"))
    r = CliRunner().invoke(report, [str(log_dir.parent)])
    assert r.stderr.strip() == (
        "incomplete: 2 arms not started: C × off @ mockllm/model, A × pi-dcp @ mockllm/model; "
        "re-run `readbench eval` with the same run id to resume (finished samples are kept)")
    assert "- 2 arms not started: C × off @ mockllm/model, A × pi-dcp @ mockllm/model" in (
        log_dir.parent / "report" / "report.md").read_text()
    meta["arms"] = meta["arms"][:2]
    (log_dir.parent / "run.json").write_text(json.dumps(meta))
    assert scan_logs(log_dir).complete


@pytest.mark.parametrize("text", ["[]", "null", '"x"', '{"arms": "stock × off", "models": ["mockllm/model"]}',
                                  '{"arms": ["stock × off"], "models": "mockllm/model"}', "{not json"])
def test_a_run_json_of_another_shape_names_no_arm_and_does_not_crash(make_logs, text):
    log_dir, _ = _two_arms(make_logs)
    (log_dir.parent / "run.json").write_text(text)
    scan = scan_logs(log_dir)
    assert (scan.complete, scan.not_started) == (True, ())
