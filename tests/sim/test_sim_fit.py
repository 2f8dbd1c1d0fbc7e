"""readbench sim fit: knobs recovered from sessions the sim made with stated knobs, deterministic
per seed, written to the user profile file and run from there (issue 16)."""

from __future__ import annotations

from dataclasses import replace

import pytest
from click.testing import CliRunner
from sim_sessions import TRUTH, sim_sessions

from readbench.sim.fit import _comply, _latency, _uniform, fit_profile, write_profile
from readbench.sim.profiles import get_profile, profile_names

N_SESSIONS = 24


@pytest.fixture(scope="module")
def sessions():
    return sim_sessions(N_SESSIONS)


@pytest.fixture(scope="module")
def fitted(sessions):
    return fit_profile(sessions, "sim-mine", base="sim-diligent", seed=0, bootstrap=200)


def _covers(interval, truth) -> bool:
    low, high = interval
    return low - 1e-6 <= truth <= high + 1e-6


def test_every_identified_knob_covers_the_knob_the_sessions_were_made_with(fitted):
    identified = {k.knob for k in fitted.knobs if k.identified}
    assert identified == set(TRUTH)
    for knob, truth in TRUTH.items():
        fit = fitted.knob(knob)
        if isinstance(truth, list):  # a range: each end inside its own interval
            assert all(_covers(iv, t) for iv, t in zip(fit.interval, truth)), (knob, fit)
        elif isinstance(truth, dict):
            assert all(_covers(iv, truth[t]) for iv, t in zip(fit.interval, ("read", "grep", "bash"))), (knob, fit)
        else:
            assert _covers(fit.interval, truth), (knob, fit)


def test_knobs_sessions_cannot_identify_keep_the_base_value_and_say_why(fitted):
    base = get_profile("sim-diligent")
    for knob in ("p_use_map", "max_fix_attempts", "max_step_actions", "context_window_tokens"):
        fit = fitted.knob(knob)
        assert (fit.identified, fit.value, fit.interval) == (False, getattr(base, knob), None)
        assert fit.note.startswith("not identifiable: ")
    assert fitted.profile.p_use_map == base.p_use_map


def test_exact_knobs_are_exact(fitted):
    p = fitted.profile
    assert (p.range_chunk_lines, p.max_block_retries, p.test_seconds, p.user_gap_seconds) == (700, 2, 5.0, 30.0)
    assert p.ttft_seconds == pytest.approx(1.5, abs=1e-4) and p.output_tokens_per_second == pytest.approx(45.0, abs=1e-3)
    assert fitted.evidence == f"fitted from {N_SESSIONS} sessions: inspect, sim, 1970-01-01..1970-01-01"


def test_a_fit_is_deterministic_per_seed(sessions, fitted):
    again = fit_profile(sessions, "sim-mine", base="sim-diligent", seed=0, bootstrap=200)
    assert again == fitted
    other = fit_profile(sessions, "sim-mine", base="sim-diligent", seed=1, bootstrap=200)
    assert replace(other.profile, summary="") == replace(fitted.profile, summary="")  # point estimates: seed-free
    assert other.knob("p_grep_first").interval != fitted.knob("p_grep_first").interval


def test_the_fitted_row_runs_from_the_user_profile_file(tmp_path, monkeypatch, fitted):
    path = tmp_path / "profiles.toml"
    monkeypatch.setenv("READBENCH_PROFILES", str(path))
    assert "sim-mine" not in profile_names()
    assert write_profile(fitted) == path
    loaded = get_profile("sim-mine")
    assert loaded == replace(fitted.profile)
    assert loaded.evidence.startswith(f"fitted from {N_SESSIONS} sessions")
    assert profile_names()[-1] == "sim-mine"
    with pytest.raises(ValueError, match="built-in profile name"):
        write_profile(replace(fitted, profile=replace(fitted.profile, name="sim-pager")))
    path.write_text("[profiles.sim-x]\np_grep_first = 2\n")
    with pytest.raises(ValueError, match=str(path)):
        get_profile("sim-x")


def test_cli_fits_inspect_logs_and_names_what_it_kept(tmp_path, monkeypatch, sessions):
    from readbench.sim._cli import sim_group

    monkeypatch.setenv("READBENCH_PROFILES", str(tmp_path / "p.toml"))
    missing = CliRunner().invoke(sim_group, ["fit", str(tmp_path / "none"), "--name", "x"])
    assert missing.exit_code == 2
    empty = tmp_path / "empty"
    empty.mkdir()
    result = CliRunner().invoke(sim_group, ["fit", str(empty), "--name", "x"])
    assert result.exit_code == 1 and "nothing fitted" in result.output


def test_uniform_range_from_deciles_of_hand_made_data():
    values = list(range(10, 111))  # uniform on 10..110: q10 = 20, q90 = 100 -> w = 100
    assert _uniform(values) == (10, 110)
    assert _uniform([5.0] * 20) == (5, 5)
    assert _uniform([]) is None


def test_comply_counts_forced_compliance_out():
    # repeats before each outcome: comply at 0 (draw), repeat (draw 0), comply after 1 (draw),
    # repeat twice then comply at 2 = the most seen: forced, not a draw
    obs = [(1, 0), (0, 0), (1, 1), (0, 0), (0, 1), (1, 2)]
    assert _comply(obs) == (pytest.approx(2 / 5), 2, 5)
    assert _comply([(1, 0), (1, 0)]) == (1.0, None, 2)


def test_latency_regression_is_exact_on_the_sims_model():
    rows = [(1.5 + 0.02 * p / 1000 + o / 45.0, float(p), float(o)) for p, o in [(1000, 10), (50000, 90), (9000, 300), (120000, 40)]]
    ttft, per_1k, tps = _latency(rows)
    assert (ttft, per_1k, tps) == (pytest.approx(1.5), pytest.approx(0.02), pytest.approx(45.0))
    assert _latency(rows[:2]) is None


def test_cli_refuses_a_profile_name_with_a_path_before_reading_sessions(tmp_path, monkeypatch):
    from readbench.sim._cli import sim_group

    monkeypatch.setenv("READBENCH_PROFILES", str(tmp_path / "p.toml"))
    result = CliRunner().invoke(sim_group, ["fit", str(tmp_path), "--name", "../x"])
    assert result.exit_code == 2
    assert "Invalid value for --name: profile name 'sim-../x' must be 'sim-' then letters" in result.output
    assert not (tmp_path / "p.toml").exists()


def test_one_session_gives_fitted_knobs_without_a_made_up_interval(sessions):
    """brk12: a fit from one session printed a "95% interval" of [x, x] for every knob (the bootstrap
    over sessions resamples the one session to itself)."""
    one = fit_profile(sessions[:1], "sim-one", base="sim-diligent", seed=0, bootstrap=200)
    many = fit_profile(sessions[:2], "sim-two", base="sim-diligent", seed=0, bootstrap=200)
    fitted = [k for k in one.knobs if k.identified]
    assert fitted and {k.knob for k in fitted} <= set(TRUTH)
    assert {(k.interval, k.note) for k in fitted} == {
        (None, "fitted; no interval: the bootstrap resamples sessions and there is 1")}
    assert one.evidence == "fitted from 1 session: inspect, sim, 1970-01-01..1970-01-01"
    assert one.profile.summary == "fitted by readbench sim fit (1 session: no bootstrap; base sim-diligent)"
    assert one.knob("p_grep_first").value == fit_profile(sessions[:1], "sim-one", bootstrap=1).knob("p_grep_first").value
    assert all(k.interval is not None for k in many.knobs if k.identified)


def test_cli_prints_the_fit_when_the_profile_file_cannot_be_written(tmp_path, monkeypatch):
    """brk12: an unwritable --out (or a profile file whose `profiles` is not a table, or a
    $READBENCH_PROFILES that is a directory) crashed with a traceback after the fit, which was lost."""
    from readbench.sessions.synth import write_pi_session
    from readbench.sim._cli import sim_group

    session = write_pi_session(tmp_path / "s.jsonl", seed=0, calls=60, prompts=4)
    (tmp_path / "afile").write_text("")
    monkeypatch.setenv("READBENCH_PROFILES", str(tmp_path / "p.toml"))
    r = CliRunner().invoke(sim_group, ["fit", str(session), "--name", "x", "--bootstrap", "2",
                                       "--out", str(tmp_path / "afile" / "sub.toml")])
    assert r.exit_code == 1 and not isinstance(r.exception, OSError), r.output
    assert r.output.splitlines()[1].split() == ["knob", "value", "95%", "interval", "obs", "source"]
    assert r.output.splitlines()[-1] == (f"Error: cannot write {tmp_path / 'afile' / 'sub.toml'}: {tmp_path / 'afile'}: "
                                         "File exists; nothing written (the fit above was not saved)")
    bad = tmp_path / "bad.toml"
    bad.write_text("profiles = 3\n")
    r = CliRunner().invoke(sim_group, ["fit", str(session), "--name", "x", "--bootstrap", "2", "--out", str(bad),
                                       "--json"])
    assert r.exit_code == 1 and r.output.startswith("{"), r.output
    assert r.output.splitlines()[-1] == (f"Error: {bad}: not a readable profile file ('profiles' is not a table); "
                                         "nothing written (the fit above was not saved)")
    assert bad.read_text() == "profiles = 3\n"
    for env, why in ((bad, "not a readable profile file ('profiles' must be a table of [profiles.NAME] tables)"),
                     (tmp_path, "cannot read the profile file (Is a directory)")):
        monkeypatch.setenv("READBENCH_PROFILES", str(env))
        r = CliRunner().invoke(sim_group, ["fit", str(session), "--name", "x"])
        assert (r.exit_code, r.output) == (1, f"Error: {env}: {why}\n")
