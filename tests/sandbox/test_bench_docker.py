"""`make bench` item docker-exec (readbench.bench_docker): its table rows, and a real run."""

from __future__ import annotations

import pytest

from readbench.bench_docker import bench_docker_exec, engine_cpu_seconds
from readbench.bench_table import format_table


def test_rows_give_compose_exec_against_the_engine_api_floor():
    dx = {"calls": 20, "compose_exec": {"client_cpu_ms": 141.2, "engine_cpu_ms": 160.4, "wall_ms": 726.0, "cpu_ms": 301.6},
          "engine_api": {"client_cpu_ms": 4.0, "engine_cpu_ms": None, "wall_ms": 158.0, "cpu_ms": 4.0},
          "compose_over_api_cpu": 75.4}
    rows = format_table({"docker_exec": dx}).splitlines()
    assert "| docker exec via `docker compose exec` (inspect) | CPU ms per call (client + engine) | 141 + 160 | |" in rows
    assert "| docker exec via Engine API (the floor) | CPU ms per call (client + engine) | 4 + n/a | |" in rows
    assert "| docker exec: compose / Engine API | CPU x floor | 75.4x | |" in rows
    assert format_table({"docker_exec": {"skipped": "no engine"}}).splitlines()[-1] == "| docker exec | skipped | no engine | |"


@pytest.mark.docker
@pytest.mark.slow
def test_engine_api_exec_costs_less_cpu_than_compose_exec(offline_base: str):
    out = bench_docker_exec(calls=5)
    assert out["calls"] == 5
    assert engine_cpu_seconds() is not None  # dockerd runs on this machine
    compose, api = out["compose_exec"], out["engine_api"]
    # the compose CLI is a Go process per call (~140 ms CPU here); the API call is in-process
    assert compose["client_cpu_ms"] > 3 * api["client_cpu_ms"]
    assert compose["cpu_ms"] > api["cpu_ms"]
    assert out["compose_over_api_cpu"] == pytest.approx(compose["cpu_ms"] / api["cpu_ms"])
