"""The last progress line of `readbench eval` counts what the logs hold (brk13): a sample that
finished while inspect was cancelling (Ctrl-C) is written to the log without reaching the
progress hook, and the run's last line said "stopped: 1/3 samples" beside a report of 2 of 3."""

from __future__ import annotations

import shutil

from readbench.run.progress import eval_progress

from conftest import contract_metrics


def test_the_last_line_counts_samples_that_reached_the_log_without_the_hook(make_logs, tmp_path, monkeypatch,
                                                                            capsys):
    monkeypatch.setenv("READBENCH_PROGRESS", "plain")
    written = make_logs([{"variant": "stock", "dcp": "off"}],
                        lambda variant, dcp, sid, epoch: contract_metrics(1.0, "solved", 1000.0))
    log_dir = tmp_path / "run" / "logs"
    log_dir.mkdir(parents=True)
    with eval_progress([("stock × off", 3)], False, log_dir):
        for path in written.glob("*.eval"):  # written during the run, no hook called
            shutil.copy(path, log_dir / path.name)
    last = capsys.readouterr().err.splitlines()[-1]
    assert last.startswith("readbench eval: finished: 3/3 samples (100%), elapsed "), last
