"""The replay scale benchmark's pieces (issue 14): per-stage CPU seconds of one session, and the
rows `readbench bench` prints. The benchmark's own figures are not asserted (speed targets are
checked by `readbench bench`, never by timed tests)."""

from __future__ import annotations

from readbench.bench_table import format_table
from readbench.replay.bench import replay_stage_seconds
from readbench.sessions.synth import write_pi_session


def test_stage_seconds_cover_every_stage_of_a_session(tmp_path):
    path = write_pi_session(tmp_path / "s.jsonl", seed=3, calls=24, prompts=3)
    st = replay_stage_seconds(path, reps=1)
    stages = {"import", "bill", "dcp_project", "dcp_simulate", "audit", "read_counterfactual", "gate_sweep"}
    assert set(st) == stages | {"other", "total"}
    assert all(st[k] > 0 for k in stages)
    assert abs(sum(v for k, v in st.items() if k != "total") - st["total"]) < 1e-9


def test_scale_rows_say_what_was_measured_and_the_projection():
    m = {"seconds_per_session": 2.5, "cpu_seconds_per_session": 1.25, "startup_cpu_seconds": 7.5, "peak_rss_mb": 900.4,
         "extrapolated_seconds_for_goal": 2400.0, "extrapolated_cpu_bound_seconds_for_goal": 628.8}
    table = format_table({"replay_scale": {
        "sessions": 8, "jobs": 2, "goal_sessions": 1000, "goal_seconds": 300.0, "goal_memory_mb": 2048.0,
        "dcp": m, "dcp_audit_sweep": m,
        "stages_cpu_seconds": {"pi": {"import": 0.05, "bill": 0.5, "other": 0.01, "total": 0.56}}}})
    rows = table.splitlines()
    assert rows[2] == ("| replay --dcp all x 5 cache models (8 x 450 calls, 2 jobs) | wall s per session / CPU s per "
                       "session / start-up CPU s / peak RSS MB | 2.50 / 1.25 / 7.5 / 900 | <= 2048 MB |")
    assert rows[3] == "| the same, projected to 1,000 sessions | wall s / CPU-bound s over 2 cores | 2400 / 629 | <= 300 s |"
    assert rows[-1] == ("| one pi session, --audit --gate-sweep, in-process | CPU s per stage | import 0.05, bill 0.50, "
                        "other 0.01 (total 0.56) | |")


def test_scale_rows_on_the_users_sessions_say_whose_and_how_long(tmp_path):
    m = {"seconds_per_session": 9.0, "cpu_seconds_per_session": 8.5, "startup_cpu_seconds": 7.5, "peak_rss_mb": 800.0,
         "extrapolated_seconds_for_goal": 9000.0, "extrapolated_cpu_bound_seconds_for_goal": 8503.8}
    table = format_table({"replay_scale": {
        "sessions": 2, "jobs": 1, "goal_sessions": 1000, "goal_seconds": 300.0, "goal_memory_mb": 2048.0,
        "source": "/home/u/.pi/agent/sessions", "calls_per_session": 468.5, "dcp": m, "dcp_audit_sweep": m}})
    assert table.splitlines()[2] == (
        "| replay --dcp all x 5 cache models (2 of /home/u/.pi/agent/sessions, 468 calls each on average, 1 jobs) | "
        "wall s per session / CPU s per session / start-up CPU s / peak RSS MB | 9.00 / 8.50 / 7.5 / 800 | <= 2048 MB |")


def test_scale_from_needs_two_session_files(tmp_path):
    import pytest

    from readbench.replay.bench import bench_replay_scale

    (tmp_path / "in").mkdir()
    one = write_pi_session(tmp_path / "in" / "s.jsonl", seed=3, calls=24, prompts=3)
    with pytest.raises(ValueError, match=r"--scale-from .*: 1 session file\(s\); the per-session cost needs at least 2"):
        bench_replay_scale(tmp_path / "out", source=one.parent)
