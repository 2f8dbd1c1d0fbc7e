"""`report` command (readbench.analysis.report_cli) on logs written by inspect."""

from __future__ import annotations

import json

from click.testing import CliRunner

from readbench.analysis.report_cli import report
from readbench.analysis.table import read_table

from conftest import contract_metrics


def _metrics(variant, dcp, sid, epoch):
    ok = variant == "B" or sid == "repoA/locate/1"
    return contract_metrics(1.0 if ok else 0.0, "solved" if ok else "wrong", 1000.0 if variant == "stock" else 500.0)


def test_report_command_writes_table_and_report(make_logs):
    log_dir = make_logs([{"variant": "stock", "dcp": "off"}, {"variant": "B", "dcp": "off"}], _metrics)
    run_dir = log_dir.parent
    (run_dir / "run.json").write_text(json.dumps({"matrix": "unit", "models": ["mockllm/model"]}))
    res = CliRunner().invoke(report, [str(run_dir),
                                      "--exclude", "repoB/edit/1"])
    assert res.exit_code == 0, res.output
    assert res.output.strip() == str(run_dir / "report" / "report.md")
    assert len(read_table(run_dir / "table.parquet")) == 6
    text = (run_dir / "report" / "report.md").read_text()
    assert text.startswith("# readbench report: unit\n")
    assert "- models: mockllm/model" in text
    # stock: 1 of 2 non-excluded samples solved; B: 2 of 2. Only repoA is left -> clusters are its 2 tasks.
    assert "| stock × off | 2 (2×1) | 2 | 50.0% |" in text and "| B × off | 2 (2×1) | 2 | 100.0% |" in text
    assert "- stock × off — excluded: repoB/edit/1#1" in text


def test_report_command_bad_arguments_exit_2(tmp_path):
    res = CliRunner().invoke(report, [str(tmp_path), "--baseline", "stock"])
    assert res.exit_code == 2 and "'stock' is not VARIANT:DCP (e.g. stock:off)" in res.output
    res = CliRunner().invoke(report, [str(tmp_path)])
    assert res.exit_code == 2 and "is not a directory" in res.output and "RUN_DIR" in res.output
    res = CliRunner().invoke(report, [str(tmp_path / "nope")])
    assert res.exit_code == 2 and "does not exist" in res.output
