"""`make bench`'s floors (issue 26 item 3): every figure also as a ratio to the cheapest work on
the same input, measured in the same run. The floors' own values are machine-dependent and not
asserted; what they measure and how the ratios are printed is."""

from __future__ import annotations

import json
import math

import pytest

from readbench.bench_floor import eval_log_floor, floor_seconds, hash_floor, parse_hash_floor, ratio
from readbench.bench_table import format_table


def test_floor_is_the_best_of_the_runs_and_never_zero():
    calls = []
    assert floor_seconds(lambda: calls.append(1), reps=4) >= 1e-9
    assert len(calls) == 4
    with pytest.raises(ValueError, match="reps must be >= 1, got 0"):
        floor_seconds(lambda: None, reps=0)


def test_parse_hash_floor_parses_every_line(tmp_path):
    good = tmp_path / "s.jsonl"
    good.write_text(json.dumps({"a": 1}) + "\n\n" + json.dumps({"b": [1, 2]}) + "\n")
    assert parse_hash_floor([good], reps=1) > 0
    bad = tmp_path / "bad.jsonl"
    bad.write_text('{"a": 1}\n{not json\n')
    with pytest.raises(json.JSONDecodeError):  # the floor does the parse for real
        parse_hash_floor([bad], reps=1)
    assert hash_floor([b"x" * 1000, b"y"], reps=2) > 0


def test_ratio():
    assert ratio(3.0, 1.5) == 2.0
    assert math.isnan(ratio(1.0, 0.0))


def test_rows_give_each_figure_against_its_floor():
    per = {"calls": 300, "session_tokens": 200_000, "dcp": "pi-dcp", "ms_per_call": {"projection": 0.5, "total": 1.2},
           "goal_ms_per_call": 2.0, "floor_ms_per_call": 0.004, "total_x_floor": 300.0}
    docker = {"seconds_per_sample_x1": 3.0, "seconds_per_sample_x4": 1.0, "local_seconds_per_sample_x1": 0.6,
              "local_seconds_per_sample_x4": 0.25, "x1_docker_over_local": 5.0, "x4_docker_over_local": 4.0,
              "goal_seconds_per_sample": 1.5}
    m = {"seconds_per_session": 2.5, "cpu_seconds_per_session": 1.25, "startup_cpu_seconds": 7.5, "peak_rss_mb": 900.4,
         "extrapolated_seconds_for_goal": 2400.0, "extrapolated_cpu_bound_seconds_for_goal": 628.8,
         "cpu_per_session_x_floor": 41.7}
    big = {"file_bytes": 100_000_000, "goal_ratio_to_stock": 1.5, "floor_cpu_seconds": 0.25,
           "stock": {"seconds": 7.0, "cpu_seconds": 6.5, "peak_rss_mb": 1300.0, "cpu_x_floor": 26.0}}
    rows = format_table({"per_call": [per], "docker": docker, "big_read": big, "replay_scale": {
        "sessions": 8, "jobs": 2, "goal_sessions": 1000, "goal_seconds": 300.0, "goal_memory_mb": 2048.0,
        "floor_cpu_seconds_per_session": 0.03, "dcp": m, "dcp_audit_sweep": m}}).splitlines()
    assert "| per call (pi-dcp) / floor (hashing each message once: 0.0040 ms per call) | total x floor | 300x | |" in rows
    assert "| local sample (the floor) | local_seconds_per_sample_x1 | 0.60 | |" in rows
    assert "| docker sample / local sample | x1_docker_over_local | 5.0x | |" in rows
    assert ("| the same / floor (parsing + hashing each session file once: 0.030 CPU s per session) | "
            "CPU per session x floor | 42x | |") in rows
    assert ("| read of a 100 MB .py (stock) / floor (reading + hashing the file once: 0.25 CPU s) | "
            "CPU s x floor | 26x | |") in rows


def test_eval_log_floor_reads_every_sample_of_every_log(tmp_path):
    import zipfile

    for name, samples in (("a.eval", ["samples/x/0_epoch_1.json", "samples/y_epoch_1.json"]), ("sub/b.eval", ["samples/z_epoch_2.json"])):
        path = tmp_path / name
        path.parent.mkdir(exist_ok=True)
        with zipfile.ZipFile(path, "w") as z:
            z.writestr("header.json", "{}")
            for member in samples:
                z.writestr(member, json.dumps({"messages": ["m" * 100]}))
    cpu, samples = eval_log_floor(tmp_path, reps=1)
    assert samples == 3 and cpu > 0
    with zipfile.ZipFile(tmp_path / "a.eval", "a") as z:
        z.writestr("samples/bad_epoch_1.json", "{not json")
    with pytest.raises(json.JSONDecodeError):  # the floor parses for real
        eval_log_floor(tmp_path, reps=1)
    with pytest.raises(ValueError, match="no inspect sample in any .eval log under"):
        eval_log_floor(tmp_path / "sub" / "none", reps=1)


def test_forked_rows_give_the_cpu_per_simulated_sample_against_its_goal_and_floor():
    fk = {"matrix": "evals/nightly.yaml", "task_args": ["per_family=1"], "samples": 56,
          "floor_cpu_seconds_per_sample": 0.0125, "goal_cpu_seconds_per_sample": 2.0,
          "independent": {"model_calls": 4000, "cpu_seconds": 280.0, "wall_seconds": 900.0,
                          "cpu_seconds_per_sample": 5.0, "cpu_per_sample_x_floor": 400.0},
          "forked": {"model_calls": 1000, "cpu_seconds": 112.0, "wall_seconds": 300.0,
                     "cpu_seconds_per_sample": 2.0, "cpu_per_sample_x_floor": 160.0},
          "saved": {"model_calls": 0.75, "cpu_seconds": 0.6}, "tables": {"equal": True, "columns_differing": []}}
    rows = format_table({"forked": fk}).splitlines()
    what = "evals/nightly.yaml per_family=1, sim, local"
    assert (f"| {what}: independent, per sample (56 samples) | CPU s per sample / x floor (reading + parsing + "
            "hashing each sample's transcript once: 0.0125 CPU s) | 5.00 / 400x | <= 2 CPU s |") in rows
    assert (f"| {what}: forked, per sample (56 samples) | CPU s per sample / x floor (reading + parsing + "
            "hashing each sample's transcript once: 0.0125 CPU s) | 2.00 / 160x | <= 2 CPU s |") in rows
    assert f"| {what}: forked vs independent | calls saved / CPU saved / per-arm tables equal | 75% / 60% / yes | tables equal |" in rows


def test_forked_rows_project_the_cpu_per_sample_onto_the_nightly():
    from readbench.run.forked_bench import nightly_projection

    # 150 CPU s in all, 133.2 inside run_plan for 56 samples; the nightly has 600: 16.8 CPU s once per run
    p = nightly_projection(150.0, 133.2, 56, 600)
    assert p["fixed_cpu_seconds"] == pytest.approx(16.8)
    assert p["run_cpu_seconds_per_sample"] == pytest.approx(133.2 / 56)  # 2.3786
    assert p["cpu_seconds_per_nightly_sample"] == pytest.approx(133.2 / 56 + 16.8 / 600)  # 2.4066
    with pytest.raises(ValueError, match="run_cpu_seconds must be within"):
        nightly_projection(10.0, 11.0, 56, 600)
    with pytest.raises(ValueError, match="samples and nightly must be > 0, got 0 and 600"):
        nightly_projection(10.0, 5.0, 0, 600)
    fk = {"matrix": "evals/nightly.yaml", "task_args": ["per_family=1"], "samples": 56, "nightly_samples": 600,
          "floor_cpu_seconds_per_sample": 0.0125, "goal_cpu_seconds_per_sample": 2.0,
          "independent": {"model_calls": 4000, "cpu_seconds": 150.0, "wall_seconds": 900.0,
                          "cpu_seconds_per_sample": 150 / 56, "cpu_per_sample_x_floor": 214.0, **p,
                          "run_children_cpu_seconds_per_sample": 84.0 / 56},
          "forked": {"model_calls": 1000, "cpu_seconds": 112.0, "wall_seconds": 300.0,
                     "cpu_seconds_per_sample": 2.0, "cpu_per_sample_x_floor": 160.0,
                     **nightly_projection(112.0, 95.2, 56, 600), "run_children_cpu_seconds_per_sample": 47.6 / 56},
          "saved": {"model_calls": 0.75, "cpu_seconds": 0.25}, "tables": {"equal": True, "columns_differing": []}}
    rows = format_table({"forked": fk}).splitlines()
    what = "evals/nightly.yaml per_family=1, sim, local"
    assert (f"| {what}: independent, per nightly sample (600 samples; start-up and report 16.8 CPU s once per run) "
            "| samples' CPU s per sample / projected per nightly sample | 2.38 / 2.41 | <= 2 CPU s |") in rows
    assert (f"| {what}: forked, per nightly sample (600 samples; start-up and report 16.8 CPU s once per run) "
            "| samples' CPU s per sample / projected per nightly sample | 1.70 / 1.73 | <= 2 CPU s |") in rows
    # children: 84 of the independent run's 133.2 CPU s inside run_plan (63 %), 47.6 of the forked run's 95.2 (50 %)
    assert (f"| {what}: independent, the samples' child processes (test runs, rg, cp) | CPU s per sample / share of "
            "the samples' CPU | 1.50 / 63% | |") in rows
    assert (f"| {what}: forked, the samples' child processes (test runs, rg, cp) | CPU s per sample / share of "
            "the samples' CPU | 0.85 / 50% | |") in rows


def test_cpu_recorded_adds_the_cpu_of_each_call_even_when_it_raises():
    from readbench.run.forked_bench import cpu_recorded

    def spin(n: int) -> int:
        total = 0
        for k in range(n):
            total += k * k
        if n == 0:
            raise RuntimeError("no work")
        return total

    spent: list[float] = []
    wrapped = cpu_recorded(spin, spent)
    assert wrapped(300_000) == sum(k * k for k in range(300_000))
    with pytest.raises(RuntimeError, match="no work"):
        wrapped(0)
    assert len(spent) == 2 and spent[0] > 0.005 and spent[1] >= 0


def test_cpu_recorded_splits_off_the_cpu_of_reaped_child_processes():
    import subprocess
    import sys

    from readbench.run.forked_bench import cpu_recorded

    def child_spins() -> None:
        subprocess.run([sys.executable, "-c", "sum(k * k for k in range(2_000_000))"], check=True)

    spent: list[float] = []
    children: list[float] = []
    cpu_recorded(child_spins, spent, children)()
    assert len(children) == 1 and children[0] > 0.05  # the child's loop (and its interpreter start-up)
    assert spent[0] >= children[0]  # the total holds the children's part
