"""`readbench sim profiles`: the table as text and JSON."""

from __future__ import annotations

import json

from click.testing import CliRunner

from readbench.sim._cli import sim_group


def test_profiles_table_lists_every_knob_per_profile():
    result = CliRunner().invoke(sim_group, ["profiles"])
    assert result.exit_code == 0
    lines = result.output.splitlines()
    assert lines[0].split()[:5] == ["knob", "sim-diligent", "sim-pager", "sim-rereader", "sim-stubborn"]
    row = next(line for line in lines if line.startswith("max_block_retries "))
    assert row.split()[:5] == ["max_block_retries", "1", "2", "2", "3"]
    assert row.endswith("Gemini CLI #19066")
    assert lines[-1] == ("sim-mixed: the default: each sample draws one profile with these weights "
                         "(sim-diligent 0.4, sim-pager 0.25, sim-rereader 0.15, sim-stubborn 0.2)")


def test_profiles_json_round_trips_the_table():
    result = CliRunner().invoke(sim_group, ["profiles", "--json"])
    assert result.exit_code == 0
    data = json.loads(result.output)
    assert list(data["profiles"]) == ["sim-diligent", "sim-pager", "sim-rereader", "sim-stubborn"]
    assert data["profiles"]["sim-pager"]["window_lines"] == [100, 300]
    assert data["mixtures"]["sim-mixed"]["weights"]["sim-stubborn"] == 0.2
    assert len(data["knobs"]) == 22


def test_unknown_subcommand_exits_2():
    assert CliRunner().invoke(sim_group, ["nope"]).exit_code == 2


def test_calibrate_rejects_an_unknown_profile_with_exit_2():
    from readbench.cli import main  # `sim calibrate` runs the benchmark task: readbench.run._cli adds it

    result = CliRunner().invoke(main, ["sim", "calibrate", "--profile", "sim-lazy"])
    assert result.exit_code == 2
    assert "unknown sim profile 'sim-lazy'" in result.output


def test_a_malformed_user_profile_file_is_a_named_error_not_a_traceback(tmp_path, monkeypatch):
    # issue 27 probe: `sim profiles` printed a ValueError traceback for a file that is not TOML
    bad = tmp_path / "bad.toml"
    bad.write_text("this is [not toml\n")
    monkeypatch.setenv("READBENCH_PROFILES", str(bad))
    result = CliRunner().invoke(sim_group, ["profiles"])
    assert result.exit_code == 1
    assert result.output == (f"Error: {bad}: not a readable profile file (Expected '=' after a key in a key/value "
                             "pair (at line 1, column 6))\n")


def test_a_user_profile_named_with_a_path_is_refused(tmp_path, monkeypatch):
    f = tmp_path / "p.toml"
    f.write_text('[profiles."sim-../x"]\nbase = "sim-diligent"\n')
    monkeypatch.setenv("READBENCH_PROFILES", str(f))
    result = CliRunner().invoke(sim_group, ["profiles"])
    assert result.exit_code == 1
    assert result.output == (f"Error: {f}: profile name 'sim-../x' must be 'sim-' then letters, digits, '.', '_' "
                             "or '-' (no '/' or '..'): it becomes the model name readbench/<name>\n")


def test_calibrate_against_sessions_without_reads_says_undefined_not_0(tmp_path, monkeypatch):
    """brk12: recorded sessions with no file read had blind-read share, reads per file, re-read
    ratio, lines per read and read-result share 0.0 (as if measured), '+inf%' differences, and
    --json printed bare `Infinity` (not JSON)."""
    import math

    import readbench.run.calibrate as run_calibrate
    from readbench.cli import main
    from readbench.sessions import load_sessions
    from readbench.sessions.synth import write_pi_session
    from readbench.sim.calibrate import compare_shapes
    from readbench.sim.shape import shape_of

    path = write_pi_session(tmp_path / "s.jsonl", seed=0, calls=40, prompts=3)
    lines = [json.loads(line) for line in path.read_text().splitlines()]
    for obj in lines:  # every read becomes `ls`: a session that never read a file
        for c in (obj.get("message") or {}).get("content", []) if isinstance(obj.get("message"), dict) else []:
            if isinstance(c, dict) and c.get("type") == "toolCall" and c.get("name") == "read":
                c["name"], c["arguments"] = "bash", {"command": "ls"}
    noreads = tmp_path / "noreads.jsonl"
    noreads.write_text("".join(json.dumps(o) + "\n" for o in lines))
    recorded = shape_of(list(load_sessions([str(noreads)])))
    simulated = shape_of(list(load_sessions([str(path)])))
    assert recorded.reads == 0 and simulated.reads > 0
    assert all(math.isnan(getattr(recorded, m)) for m in ("blind_read_share", "reads_per_file", "reread_ratio",
                                                          "lines_per_read"))
    rows = {r.metric: r for r in compare_shapes(recorded, simulated, "sim-diligent")}
    assert rows["blind_read_share"].why == "undefined: the recorded sessions have no reads"
    assert rows["lines_per_read"].why == "undefined: the recorded sessions have no read with a known delivered range"
    assert math.isnan(rows["reads_per_file"].relative_difference) and not rows["reads_per_file"].within
    assert rows["calls_per_prompt"].recorded == 40 / 3  # defined without reads: compared as before

    monkeypatch.setattr(run_calibrate, "calibrate_against",
                        lambda *a, **k: ("stock", recorded, simulated, list(rows.values())))
    r = CliRunner().invoke(main, ["sim", "calibrate", "--profile", "sim-diligent", "--against", str(noreads)])
    assert r.exit_code == 0, r.output
    line = next(x for x in r.output.splitlines() if x.startswith("reads_per_file"))
    assert line == (f"reads_per_file           n/a {simulated.reads_per_file:>9.3f}     n/a  "
                    "no: undefined: the recorded sessions have no reads")
    r = CliRunner().invoke(main, ["sim", "calibrate", "--profile", "sim-diligent", "--against", str(noreads), "--json"])
    data = json.loads(r.output, parse_constant=lambda c: (_ for _ in ()).throw(ValueError(c)))
    assert data["recorded"]["reads_per_file"] is None and data["rows"][1]["relative_difference"] is None


def test_calibrate_against_names_skipped_files_and_a_run_that_did_not_finish(tmp_path, monkeypatch):
    """brk12: files under --against that were not sessions were dropped without a word (the shape
    compared fewer sessions than given), and a corpus run that ended in error was a traceback."""
    import readbench.run.calibrate as run_calibrate
    from readbench.cli import main
    from readbench.sessions.synth import write_pi_session

    write_pi_session(tmp_path / "s.jsonl", seed=0, calls=20, prompts=2)
    (tmp_path / "notes.jsonl").write_text("{}\n")

    class Log:
        status, error, location = "error", "sandbox failed to start", ""

    monkeypatch.setattr(run_calibrate, "inspect_eval", lambda *a, **k: [Log()])
    monkeypatch.setattr(run_calibrate, "read_strategies_task", lambda **k: None)
    r = CliRunner().invoke(main, ["sim", "calibrate", "--profile", "sim-diligent", "--against", str(tmp_path)])
    assert r.exit_code == 1 and not isinstance(r.exception, RuntimeError), r.output
    assert r.output.splitlines() == [
        f"skipped {tmp_path / 'notes.jsonl'}: not a recorded session of any known format (tried: pi, claude-code, "
        "codex, codex-legacy, inspect)",
        "Error: calibration run of sim-diligent ended with status error: sandbox failed to start"]


def test_calibrate_against_says_how_many_corpus_samples_stopped_at_max_turns(tmp_path, monkeypatch):
    """brk12: a corpus sample cut by --max-turns was compared as if complete (its calls per prompt
    read as the agent's). The note says how many were cut."""
    from types import SimpleNamespace

    import readbench.run.calibrate as run_calibrate
    from readbench.base.store import STOP_REASON
    from readbench.cli import main
    from readbench.sessions.synth import write_pi_session

    (tmp_path / "rec").mkdir()
    recorded = write_pi_session(tmp_path / "rec" / "s.jsonl", seed=0, calls=20, prompts=2)
    run = write_pi_session(tmp_path / "run.jsonl", seed=1, calls=20, prompts=2)  # stands in for the run's log
    samples = [SimpleNamespace(store={STOP_REASON: "turn_limit"}), SimpleNamespace(store={STOP_REASON: "answer"}),
               SimpleNamespace(store=None), SimpleNamespace(store={STOP_REASON: "turn_limit"})]
    log = SimpleNamespace(status="success", error=None, location=str(run), samples=samples)
    assert run_calibrate.turn_limited(log) == (2, 4)
    monkeypatch.setattr(run_calibrate, "inspect_eval", lambda *a, **k: [log])
    monkeypatch.setattr(run_calibrate, "read_strategies_task", lambda **k: None)
    r = CliRunner().invoke(main, ["sim", "calibrate", "--profile", "sim-diligent", "--against", str(recorded.parent),
                                  "--max-turns", "50"])
    assert r.exit_code == 0, r.output
    assert ("note: 2 of 4 corpus samples stopped at --max-turns 50: their calls per prompt are lower bounds "
            "(raise --max-turns to compare them whole)") in r.output.splitlines()
