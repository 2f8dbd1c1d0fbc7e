"""`readbench replay`: mixed formats in one walk, the stable JSON, outputs never half-written,
bad inputs named, and the user's token calibration saved and then used by live evals."""

from __future__ import annotations

import json
import shutil
from pathlib import Path

import pytest
from click.testing import CliRunner
from replay_sessions import planted_session

from readbench.replay._cli import replay_cmd

DATA = Path(__file__).parents[1] / "sessions" / "data"
JSON_KEYS = {"file", "format", "session_id", "harness", "cache_model", "calls", "priced_calls", "billed_cost_usd",
             "simulated_cost_usd", "simulated_cost_usd_raw", "billed_cost_usd_out_of_sample",
             "simulated_cost_usd_out_of_sample", "calls_read_within_5pct", "calls_read_within_5pct_raw",
             "calls_read_within_5pct_out_of_sample", "read_calls", "blind_reads", "unexplained_misses",
             "exogenous_breaks", "billed_miss_reasons", "notes", "simulated_cost_usd_out_of_sample_interval",
             "calls_with_usage", "billed_tokens"}


def _corpus(tmp_path: Path) -> Path:
    root = tmp_path / "sessions"
    shutil.copytree(DATA / "claude", root / "claude")
    shutil.copytree(DATA / "codex", root / "codex")
    shutil.copy(DATA / "pi_session_v3.jsonl", root / "pi.jsonl")
    (root / "README.md").write_text("not a session\n")
    (root / "notes.json").write_text('{"a": 1}\n')
    return root


def test_replay_walks_mixed_formats_and_prints_one_object_per_session(tmp_path):
    out = tmp_path / "out"
    res = CliRunner().invoke(replay_cmd, [str(_corpus(tmp_path)), "--out", str(out), "--json"])
    assert res.exit_code == 0, res.output
    objs = [json.loads(x) for x in res.stdout.splitlines()]
    assert sorted(o["format"] for o in objs) == ["claude-code", "claude-code", "codex", "codex-legacy", "pi"]
    assert all(set(o) >= JSON_KEYS for o in objs if o["cache_model"]) and all(set(o) >= {"file", "format", "calls"} for o in objs)
    cc = next(o for o in objs if o["session_id"] == "s1")
    assert (cc["cache_model"], cc["calls"], cc["priced_calls"], cc["read_calls"], cc["blind_reads"]) == ("anthropic-1h", 4, 4, 2, 1)
    # Opus 4.6, 1h writes: (3 x 5 + 20,000 x 10 + 120 x 25) + (3 x 5 + 20,000 x 0.5 + 150 x 10 + 9 x 25)
    # + (3 x 5 + 20,150 x 0.5 + 40 x 10 + 30 x 25) + (3 x 5 + 16,000 x 0.5 + 4,000 x 10 + 5 x 25), per million
    assert cc["billed_cost_usd"] == pytest.approx((203015 + 11740 + 11240 + 48140) / 1e6, abs=1e-9)
    codex = next(o for o in objs if o["format"] == "codex")
    # gpt-5.1-codex $1.25 / $0.125 cached / $10 output
    assert codex["billed_cost_usd"] == pytest.approx(
        (10128 * 1.25 + 37 * 10 + 1888 * 1.25 + 9984 * 0.125 + 63 * 10 + 324 * 1.25 + 11776 * 0.125 + 5 * 10) / 1e6, abs=1e-9)
    legacy = next(o for o in objs if o["format"] == "codex-legacy")
    assert (legacy["priced_calls"], legacy["billed_cost_usd"]) == (0, None)
    assert "notes.json: not a recorded session of any known format" in res.stderr  # JSON, so reported; README skipped
    assert "README" not in res.stderr
    # not a terminal: plain progress lines on stderr, the first at 0 and the last at the total (every
    # file listed), the warning on its own line between them
    progress = [line for line in res.stderr.splitlines() if line.startswith("readbench replay: ")]
    assert progress[0] == "readbench replay: 0/7 files (0%), elapsed 0:00, ETA ?"
    assert progress[-1].startswith("readbench replay: finished: 7/7 files (100%), elapsed ")
    [warning] = [line for line in res.stderr.splitlines() if "notes.json: not a recorded session" in line]
    assert warning.startswith("warning: ") and "readbench replay" not in warning
    assert sorted(p.name for p in out.iterdir()) == ["calls.parquet", "cost.png", "report.html", "report.md", "sessions.parquet"]
    import pandas as pd

    calls = pd.read_parquet(out / "calls.parquet")
    assert set(calls["mode"]) == {"raw", "in_sample", "out_of_sample"}
    assert len(calls[(calls.session_id == "s1") & (calls["mode"] == "raw")]) == 4
    assert "| s1.jsonl (s1) | claude-code | 4 | 4 |" in (out / "report.md").read_text()
    assert 'src="data:image/png;base64,' in (out / "report.html").read_text()


def test_a_named_file_of_no_known_format_exits_2_naming_the_formats_tried(tmp_path):
    bad = tmp_path / "x.jsonl"
    bad.write_text('{"hello": "world"}\n')
    res = CliRunner().invoke(replay_cmd, [str(bad), "--out", str(tmp_path / "o")])
    assert res.exit_code == 2
    assert "not a recorded session of any known format (tried: pi, claude-code, codex, codex-legacy, inspect)" in res.stderr
    res = CliRunner().invoke(replay_cmd, [str(tmp_path / "missing"), "--out", str(tmp_path / "o")])
    assert res.exit_code == 2 and "missing: no such file or directory" in res.output
    res = CliRunner().invoke(replay_cmd, [str(bad), "--cache", "anthropic-9m"])
    assert res.exit_code == 2 and "unknown cache model(s) 'anthropic-9m'" in res.output


def test_a_failure_midway_names_that_session_and_keeps_the_others(tmp_path, monkeypatch):
    """An error the replay did not foresee in one session used to end the run and delete every
    session already replayed (a tester's fuzzing, 2026-12-07): that session now fails, named with
    the error, and the others are written."""
    import readbench.replay.bill as bill

    seen = []

    def boom(session, cache="auto", builder=None, sets=None):
        seen.append(session)
        if len(seen) == 2:
            raise RuntimeError("disk on fire")
        return real(session, cache, builder, sets)

    real = bill.replay_session
    monkeypatch.setattr(bill, "replay_session", boom)
    out = tmp_path / "out"
    res = CliRunner().invoke(replay_cmd, [str(DATA / "claude"), "--out", str(out)])
    assert len(seen) >= 2
    failed = seen[1]
    assert f"warning: {failed.source}: session {failed.session_id!r} could not be replayed: RuntimeError: disk on fire" in res.output
    assert res.exit_code == 0, res.output
    import pyarrow.parquet as pq

    ids = pq.read_table(out / "sessions.parquet").column("session_id").to_pylist()
    assert failed.session_id not in ids and seen[0].session_id in ids


def test_an_error_midway_keeps_the_sessions_done_in_a_partial_report_and_propagates(tmp_path, monkeypatch):
    # brk11 item 1b: any error but Ctrl-C removed the temporary directory: every session done was lost
    from readbench.replay.report import ReplayWriter

    real = ReplayWriter.add

    def boom(self, result):
        if self.sessions:
            raise RuntimeError("disk on fire")
        real(self, result)

    monkeypatch.setattr(ReplayWriter, "add", boom)
    out = tmp_path / "out"
    res = CliRunner().invoke(replay_cmd, [str(DATA / "claude"), "--out", str(out)])
    assert res.exit_code == 1 and isinstance(res.exception, RuntimeError)
    assert f"error: stopped after 1 session(s) replayed -> {out}/report.md (partial)" in res.stderr
    report = (out / "report.md").read_text()
    assert ("**Partial: stopped by an error after 0 of 2 files (RuntimeError: disk on fire); the tables and this "
            "report hold the 1 session(s) replayed before it.**") in report
    import pandas as pd

    assert len(set(pd.read_parquet(out / "calls.parquet")["file"])) == 1
    assert sorted(p.name for p in tmp_path.iterdir()) == ["out"]  # no temporary directory left


def test_save_calibration_appends_a_dated_row_the_simulator_then_uses(tmp_path, monkeypatch, pi_session):
    from readbench.cache import CallRecord, sample_cache_metrics
    from readbench.cache.calibration import load_rows, token_fit

    table = tmp_path / "calibration.csv"
    monkeypatch.setenv("READBENCH_CALIBRATION", str(table))
    path, _ = planted_session(tmp_path, pi_session)
    res = CliRunner().invoke(replay_cmd, [str(path), "--out", str(tmp_path / "o"), "--save-calibration"])
    assert res.exit_code == 0, res.output
    (row,) = load_rows(table)
    assert row.key == "claude-sonnet-4.5" and row.a == pytest.approx(1.2, abs=0.01) and row.b == pytest.approx(10, abs=2)
    assert (row.sessions, row.harnesses, str(row.first_session)) == (1, "pi", "2025-11-21")
    assert token_fit("claude-sonnet-4.5", "anthropic-legacy") == row

    # live evals: the same messages cost more tokens once a calibration exists for the priced model
    from inspect_ai.model import ChatMessageUser

    calls = [CallRecord([ChatMessageUser(content="word " * 2000)], [], 10, 0.0, 1.0)]
    table.write_text("key,a,b,calls,sessions,harnesses,first_session,last_session,fitted,note\n"
                     "claude-sonnet-4.5,2,0,10,1,pi,2025-11-21,2025-11-21,2026-12-01,test\n")
    doubled = sample_cache_metrics(calls, ["anthropic-5m"], priced_models={"anthropic-5m": "claude-sonnet-4.5"})
    monkeypatch.setenv("READBENCH_CALIBRATION", str(tmp_path / "none.csv"))
    plain = sample_cache_metrics(calls, ["anthropic-5m"], priced_models={"anthropic-5m": "claude-sonnet-4.5"})
    assert doubled["cache_write_tokens_anthropic-5m"] == 2 * plain["cache_write_tokens_anthropic-5m"]


def test_a_calibration_file_that_cannot_be_written_is_named_and_the_outputs_kept(tmp_path, monkeypatch, pi_session):
    # brk11 item 12: a traceback after the success line
    path, _ = planted_session(tmp_path, pi_session)
    out = tmp_path / "o"
    for table, reason in ((tmp_path, "Is a directory"), (Path("/proc/rw11.csv"), "No such file or directory")):
        monkeypatch.setenv("READBENCH_CALIBRATION", str(table))
        res = CliRunner().invoke(replay_cmd, [str(path), "--out", str(out), "--save-calibration"])
        assert res.exit_code == 1 and isinstance(res.exception, SystemExit), res.output
        assert res.stderr.splitlines()[-1] == f"calibration: cannot write {table}: {reason}; nothing saved"
        assert (out / "report.md").exists()


def _json_objects(tmp_path: Path, caches: str) -> list[dict]:
    """`readbench replay --json --cache CACHES` over the mixed corpus: one object per session."""
    res = CliRunner().invoke(replay_cmd, [str(_corpus(tmp_path)), "--out", str(tmp_path / "out"), "--json",
                                          "--cache", caches])
    assert res.exit_code == 0, res.output
    return [json.loads(x) for x in res.stdout.splitlines()]


def test_with_every_cache_model_each_session_is_compared_with_its_bill_under_its_own_family(tmp_path):
    # `--cache all` prices a Codex session under the Anthropic models too, as a what-if; its JSON
    # and report row must still show the bill check under the OpenAI model, not "0 priced"
    objs = _json_objects(tmp_path, "anthropic-5m,openai")
    codex = next(o for o in objs if o["format"] == "codex")
    assert (codex["cache_model"], codex["priced_calls"]) == ("openai", 3)
    assert codex["billed_cost_usd"] == pytest.approx(
        (10128 * 1.25 + 37 * 10 + 1888 * 1.25 + 9984 * 0.125 + 63 * 10 + 324 * 1.25 + 11776 * 0.125 + 5 * 10) / 1e6, abs=1e-9)
    cc = next(o for o in objs if o["session_id"] == "s1")
    assert (cc["cache_model"], cc["priced_calls"]) == ("anthropic-5m", 4)


def test_a_session_billed_at_1h_writes_is_reported_under_the_1h_model_when_both_tiers_are_replayed(tmp_path):
    # s1's bill records 1-hour writes: with both Anthropic tiers replayed, its row (and the bill's
    # price) is the 1h model's, as under --cache auto, not the first tier listed
    objs = _json_objects(tmp_path, "anthropic-5m,anthropic-1h,openai")
    cc = next(o for o in objs if o["session_id"] == "s1")
    assert (cc["cache_model"], cc["priced_calls"]) == ("anthropic-1h", 4)
    assert cc["billed_cost_usd"] == pytest.approx((203015 + 11740 + 11240 + 48140) / 1e6, abs=1e-9)
    assert next(o for o in objs if o["format"] == "codex")["cache_model"] == "openai"


def test_out_at_the_filesystem_root_is_a_named_usage_error(tmp_path):
    # issue 27 probe: `--out /` was a ValueError traceback from Path('/').with_name
    res = CliRunner().invoke(replay_cmd, [str(DATA / "pi_session_v3.jsonl"), "--out", "/"])
    assert res.exit_code == 2
    assert ("Invalid value for --out: the filesystem root cannot be a replay's output directory; name a "
            "directory of its own") in res.output


def test_an_out_that_cannot_be_written_is_a_usage_error_naming_out_and_why(tmp_path):
    # brk11 item 11: `--out afile/sub` was a FileExistsError traceback, `--out /proc/x` blamed PATHS
    (tmp_path / "afile").write_text("x")
    session = str(DATA / "pi_session_v3.jsonl")
    res = CliRunner().invoke(replay_cmd, [session, "--out", str(tmp_path / "afile" / "sub")])
    assert res.exit_code == 2
    assert (f"Invalid value for --out: {tmp_path}/afile/sub: cannot write in {tmp_path}/afile: Not a directory"
            in res.output)
    res = CliRunner().invoke(replay_cmd, [session, "--out", "/proc/rw11-out"])
    assert res.exit_code == 2
    assert "Invalid value for --out: /proc/rw11-out: cannot write in /proc: No such file or directory" in res.output
    assert sorted(p.name for p in tmp_path.iterdir()) == ["afile"]


def test_more_jobs_than_sessions_or_cpus_start_no_more_workers(monkeypatch):
    # issue 27 probe: --jobs 1000 on 4 files took 155 s against 21 s with one worker
    import readbench.replay.run as run

    started = []

    class Pool(run.ProcessPoolExecutor):
        def __init__(self, max_workers):
            started.append(max_workers)
            super().__init__(max_workers=max_workers)

    monkeypatch.setattr(run, "ProcessPoolExecutor", Pool)
    monkeypatch.setattr(run.os, "cpu_count", lambda: 2)
    files = [(str(DATA / "pi_session_v3.jsonl"), True), (str(DATA / "codex" / "rollout-current.jsonl"), True),
             (str(DATA / "codex" / "rollout-legacy.jsonl"), True)]
    options = run.ReplayOptions()
    out = [([f for f, _ in g], len(results)) for g, results, _ in run.replay_paths([], options, jobs=1000, files=files)]
    assert started == [2] and out == [([f], 1) for f, _ in files]
    one = files[:1]
    assert list(run.replay_paths([], options, jobs=1000, files=one))[0][1][0].json == \
        list(run.replay_paths([], options, jobs=1, files=one))[0][1][0].json
    assert started == [2]  # one session: no pool at all


def _three_sessions(tmp_path: Path, pi_session) -> Path:
    """A folder `in` of three pi sessions (a, b, c.jsonl), one id each."""
    planted, _ = planted_session(tmp_path, pi_session)
    src = tmp_path / "in"
    src.mkdir()
    for k, name in enumerate(("a.jsonl", "b.jsonl", "c.jsonl")):
        head, rest = planted.read_text().split("\n", 1)
        (src / name).write_text(json.dumps({**json.loads(head), "id": f"s{k}"}) + "\n" + rest)
    planted.unlink()
    return src


def _ctrl_c_at_the_second_group(monkeypatch) -> None:
    """A Ctrl-C when the replay reaches its second session group (the first is replayed)."""
    import readbench.replay.run as run

    seen = []
    real = run.replay_group

    def interrupt_second(files, options):
        seen.append(files)
        if len(seen) == 2:
            raise KeyboardInterrupt
        return real(files, options)

    monkeypatch.setattr(run, "replay_group", interrupt_second)


def test_an_interrupted_json_replay_prints_the_sessions_done(tmp_path, monkeypatch, pi_session):
    """`--json` printed nothing after Ctrl-C though sessions had finished (brk11 item 8)."""
    _ctrl_c_at_the_second_group(monkeypatch)
    src = _three_sessions(tmp_path, pi_session)
    res = CliRunner().invoke(replay_cmd, [str(src), "--json", "--out", str(tmp_path / "out")])
    assert res.exit_code == 1
    (line,) = res.stdout.splitlines()
    obj = json.loads(line)
    assert obj["file"] == str(src / "a.jsonl")
    assert obj["out_of_sample_pool"] == {"pool": "own", "sessions": 0}  # not pooled: the run did not finish


def test_an_interrupted_replay_keeps_the_sessions_done_and_says_partial(tmp_path, monkeypatch, pi_session):
    # issue 27 probe: Ctrl-C or SIGTERM mid-replay threw away every session already replayed
    _ctrl_c_at_the_second_group(monkeypatch)
    src = _three_sessions(tmp_path, pi_session)
    out = tmp_path / "out"
    res = CliRunner().invoke(replay_cmd, [str(src), "--out", str(out)])
    assert res.exit_code == 1
    assert f"interrupted: 1 session(s) replayed before it -> {out}/report.md (partial)" in res.stderr
    report = (out / "report.md").read_text()
    assert ("**Partial: interrupted after 1 of 3 files; the tables and this report hold the 1 session(s) replayed "
            "before the interrupt.**") in report
    import pandas as pd

    assert set(pd.read_parquet(out / "calls.parquet")["file"]) == {str(src / "a.jsonl")}
    assert sorted(p.name for p in tmp_path.iterdir()) == ["in", "out"]  # no temporary directory left


def test_a_second_replay_into_an_out_in_use_is_refused_naming_the_first(tmp_path):
    # issue 27 probe: two replays into one --out each moved their files in: a mix of both
    from readbench.base.lock import OutputLock

    out = tmp_path / "out"
    with OutputLock(tmp_path / ".out.lock", str(out), "readbench replay", "wait for it to finish or use another --out"):
        res = CliRunner().invoke(replay_cmd, [str(DATA / "pi_session_v3.jsonl"), "--out", str(out)])
    assert res.exit_code == 1
    assert res.output.startswith(f"Error: {out} is in use by another readbench replay (pid ")
    assert res.output.rstrip().endswith("; wait for it to finish or use another --out")
    assert not out.exists()
    res = CliRunner().invoke(replay_cmd, [str(DATA / "pi_session_v3.jsonl"), "--out", str(out)])
    assert res.exit_code == 0 and (out / "report.md").exists()
    assert sorted(p.name for p in tmp_path.iterdir()) == ["out"]  # the lock file went with the replay


def test_a_killed_replays_temporary_directory_is_removed_by_the_next(tmp_path):
    # issue 27 probe: after SIGKILL, .out.partial-<pid> stayed beside --out for good
    import subprocess
    import sys

    dead = subprocess.run([sys.executable, "-c", "import os; print(os.getpid())"], capture_output=True, text=True)
    stale = tmp_path / f".out.partial-{dead.stdout.strip()}"
    (stale / "calls.parquet").parent.mkdir()
    (stale / "calls.parquet").write_text("half")
    res = CliRunner().invoke(replay_cmd, [str(DATA / "pi_session_v3.jsonl"), "--out", str(tmp_path / "out")])
    assert res.exit_code == 0
    assert sorted(p.name for p in tmp_path.iterdir()) == ["out"]


def test_stopping_a_replay_early_terminates_the_workers_instead_of_waiting_for_them():
    """After a SIGTERM to the main process with --jobs 2 the run waited 19-23 s for its workers'
    sessions (a tester's run, 2026-12-07): past the 10 s a `docker stop` grants before SIGKILL."""
    import time
    from concurrent.futures import ProcessPoolExecutor
    from concurrent.futures.process import BrokenProcessPool

    from readbench.replay.run import _stop_workers

    pool = ProcessPoolExecutor(max_workers=1)
    busy = pool.submit(time.sleep, 30)
    while not busy.running():
        time.sleep(0.05)
    _stop_workers(pool)
    pool.shutdown(wait=True, cancel_futures=True)
    assert isinstance(busy.exception(timeout=0), BrokenProcessPool)  # it did not sleep its 30 s out


def _ctrl_c_while_finishing(monkeypatch) -> None:
    """The report's first section sends SIGINT to this process: a Ctrl-C while the report is written."""
    import signal

    import readbench.replay.report as report

    def ctrl_c(w):
        signal.raise_signal(signal.SIGINT)
        return []

    monkeypatch.setattr(report, "SECTIONS", [ctrl_c, *report.SECTIONS])


def test_a_second_ctrl_c_while_the_partial_report_is_written_keeps_it(tmp_path, monkeypatch, pi_session):
    # brk11 item 2: the second Ctrl-C escaped the writer before its files were moved: no report,
    # the tables stranded in .out.partial-<pid>, and the CLI still named out/report.md
    import signal

    _ctrl_c_at_the_second_group(monkeypatch)
    _ctrl_c_while_finishing(monkeypatch)
    src, out = _three_sessions(tmp_path, pi_session), tmp_path / "out"
    res = CliRunner().invoke(replay_cmd, [str(src), "--out", str(out)])
    assert res.exit_code == 1
    assert res.stderr.splitlines()[-1] == f"interrupted: 1 session(s) replayed before it -> {out}/report.md (partial)"
    assert "**Partial: interrupted after 1 of 3 files;" in (out / "report.md").read_text()
    assert sorted(p.name for p in tmp_path.iterdir()) == ["in", "out"]
    assert signal.getsignal(signal.SIGINT) is signal.default_int_handler  # restored


def test_a_ctrl_c_while_a_whole_report_is_written_still_stops_the_run_and_says_so(tmp_path, monkeypatch, pi_session):
    _ctrl_c_while_finishing(monkeypatch)
    src, out = _three_sessions(tmp_path, pi_session), tmp_path / "out"
    res = CliRunner().invoke(replay_cmd, [str(src), "--out", str(out), "--json"])
    assert res.exit_code == 1 and res.stdout.count("\n") == 3
    assert res.stderr.splitlines()[-1] == f"interrupted after the report was written: 3 session(s) replayed -> {out}/report.md"
    assert "Partial" not in (out / "report.md").read_text()


def test_a_ctrl_c_during_the_folder_walk_says_nothing_was_written(tmp_path, monkeypatch):
    # brk11 item 2: it said `-> out/report.md (partial)`, and there was no out
    import readbench.replay.run as run

    def walk(paths):
        raise KeyboardInterrupt

    monkeypatch.setattr(run, "session_files", walk)
    out = tmp_path / "out"
    res = CliRunner().invoke(replay_cmd, [str(DATA / "claude"), "--out", str(out)])
    assert res.exit_code == 1
    assert res.stderr.splitlines()[-1] == "interrupted before any session was replayed: nothing was written"
    assert list(tmp_path.iterdir()) == []


def test_a_replay_into_a_used_out_removes_the_previous_runs_outputs_and_nothing_else(tmp_path, pi_session):
    # brk11 item 3: dcp.parquet, audit.parquet, dcp_*.png ... of the first run stayed beside the
    # second run's tables (and `plan --design forked` read the stale fork points)
    from readbench.replay.report import OUTPUT_FILES

    out = tmp_path / "out"
    session = str(planted_session(tmp_path, pi_session)[0])
    res = CliRunner().invoke(replay_cmd, [session, "--out", str(out), "--audit", "--dcp", "all", "--gate-sweep",
                                          "--fork-points"])
    assert res.exit_code == 0, res.output
    first = {p.name for p in out.iterdir()}
    assert {"dcp.parquet", "audit.parquet", "fork_points.parquet", "dcp_cost.png"} <= first <= OUTPUT_FILES
    (out / "notes.txt").write_text("mine")
    (out / "mine.png").write_text("mine")
    (out / "old").mkdir()
    res = CliRunner().invoke(replay_cmd, [session, "--out", str(out)])
    assert res.exit_code == 0, res.output
    assert sorted(p.name for p in out.iterdir()) == ["calls.parquet", "cost.png", "mine.png", "notes.txt", "old",
                                                     "report.html", "report.md", "sessions.parquet"]


def test_json_has_null_not_nan_for_an_unpriced_sessions_audit(tmp_path):
    # brk11 item 8: `"billed_cost_usd": NaN` in the audit of an unpriced session is not JSON
    session = tmp_path / "s1.jsonl"
    session.write_text((DATA / "claude" / "s1.jsonl").read_text().replace("claude-opus-4-6", "claude-imaginary-9"))
    res = CliRunner().invoke(replay_cmd, [str(session), "--out", str(tmp_path / "out"), "--json", "--audit"])
    assert res.exit_code == 0, res.output
    (line,) = res.stdout.splitlines()
    audit = json.loads(line, parse_constant=lambda c: pytest.fail(f"{c} in --json"))["audit"]
    assert (audit["billed_cost_usd"], audit["redelivered_cost_usd"], audit["redelivered_cost_share"]) == (None, None, None)


def test_a_copy_of_a_session_file_is_replayed_once_and_a_diverging_one_is_flagged(tmp_path, pi_session):
    """A pi session file and its backup were both replayed: $42.60 billed counted twice, no word
    (a tester's folder, 2026-12-07)."""
    import pyarrow.parquet as pq

    planted, _ = planted_session(tmp_path, pi_session)
    src = planted.read_text()
    planted.unlink()
    d = tmp_path / "in"
    d.mkdir()
    (d / "a.jsonl").write_text(src)
    (d / "b.jsonl").write_text(src)
    out = tmp_path / "out"
    res = CliRunner().invoke(replay_cmd, [str(d), "--out", str(out)])
    assert res.exit_code == 0, res.output
    table = pq.read_table(out / "sessions.parquet")  # a row per cache model the session was priced under
    assert set(table.column("file").to_pylist()) == {str(d / "a.jsonl")}
    sid = sorted(set(table.column("session_id").to_pylist()))
    assert (f"warning: {d / 'b.jsonl'}: a copy of session {sid[0]!r} in {d / 'a.jsonl'} (the same calls and bill): "
            "replayed once") in res.stderr
    assert "1 session(s) replayed" in res.stderr
    assert f"a copy of session {sid[0]!r}" in (out / "report.md").read_text()

    lines = src.splitlines(keepends=True)
    last_assistant = max(i for i, line in enumerate(lines) if '"role":"assistant"' in line.replace(" ", ""))
    (d / "b.jsonl").write_text("".join(lines[:last_assistant]))  # the backup taken before the last call
    res = CliRunner().invoke(replay_cmd, [str(d), "--out", str(out)])
    assert res.exit_code == 0, res.output
    assert set(pq.read_table(out / "sessions.parquet").column("file").to_pylist()) == {str(d / "a.jsonl"), str(d / "b.jsonl")}
    assert (f"warning: {d / 'b.jsonl'}: session {sid[0]!r} is also in {d / 'a.jsonl'}, with other calls: both are "
            "replayed, and the calls both files hold are counted twice") in res.stderr
