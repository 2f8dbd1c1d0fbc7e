""".github/workflows/ci.yml is a valid GitHub workflow (offline, against the schema PyPI
check-jsonschema vendors) that runs on every push and pull request: `make lint`, and the tests the
way .ci/run runs them (issue 23 item 4). .ci/run lints before it tests; `make lint` runs ruff and
mypy as pyproject.toml configures them, and the pre-commit hooks run the same two."""

from __future__ import annotations

import re
import subprocess
import sys
from pathlib import Path

import pytest
import yaml

REPO = Path(__file__).resolve().parents[2]
WORKFLOW = REPO / ".github" / "workflows" / "ci.yml"


def _schema_check(path: Path) -> subprocess.CompletedProcess:
    cmd = [sys.executable, "-m", "check_jsonschema", "--builtin-schema", "vendor.github-workflows", str(path)]
    return subprocess.run(cmd, capture_output=True, text=True, timeout=120)


def test_the_workflow_passes_the_vendored_github_workflow_schema():
    r = _schema_check(WORKFLOW)
    assert r.returncode == 0, r.stdout + r.stderr
    assert "ok -- validation done" in r.stdout


@pytest.mark.parametrize("old, new", [
    ("    timeout-minutes: 120\n", "    timeout-minutes: later\n"),
    ("      - uses: actions/checkout@v4\n", "      - use: actions/checkout@v4\n"),
])
def test_the_schema_check_rejects_a_broken_workflow(tmp_path, old, new):
    text = WORKFLOW.read_text()
    assert old in text
    broken = tmp_path / "ci.yml"
    broken.write_text(text.replace(old, new, 1))
    r = _schema_check(broken)
    assert r.returncode == 1 and "Schema validation errors were encountered." in r.stdout + r.stderr


@pytest.fixture(scope="module")
def workflow() -> dict:
    data = yaml.safe_load(WORKFLOW.read_text())
    data["on"] = data.pop(True)  # YAML 1.1 reads the key `on` as True
    return data


def _runs(job: dict) -> list[str]:
    return [step.get("run", "") for step in job["steps"]]


def test_it_runs_on_every_push_and_pull_request(workflow):
    assert set(workflow["on"]) == {"push", "pull_request"}
    assert workflow["on"]["push"] is None and workflow["on"]["pull_request"] is None  # no branch filter


def test_the_lint_job_runs_make_lint_with_nothing_swallowing_its_status(workflow):
    job = workflow["jobs"]["lint"]
    (step,) = [s for s in job["steps"] if "make lint" in s.get("run", "")]
    assert step["run"] == "make lint" and "continue-on-error" not in step


def test_the_test_job_runs_ci_run_in_a_privileged_container_like_the_nightly(workflow):
    job = workflow["jobs"]["test"]
    assert job["container"] == {"image": "debian:bookworm", "options": "--privileged --volume /var/lib/docker"}
    assert _runs(job)[-1] == "bash .ci/run"
    assert all("continue-on-error" not in s for s in job["steps"])
    node = [s for s in job["steps"] if s.get("uses", "").startswith("actions/setup-node@")]
    assert node and int(node[0]["with"]["node-version"]) >= 20  # tests/differential/setup.sh needs node >= 20
    caches = [s["with"]["path"] for s in job["steps"] if s.get("uses", "").startswith("actions/cache@")]
    assert ".cache/readbench" in caches


def test_ci_run_lints_before_it_tests():
    commands = [line.split("#")[0].strip() for line in (REPO / ".ci" / "run").read_text().splitlines()]
    commands = [c for c in commands if c.startswith("make ")]
    assert commands[0] == "make setup" and commands[-1] == "make test"
    assert commands.index("make lint") < commands.index("make test")


def test_make_lint_runs_ruff_check_and_mypy():
    r = subprocess.run(["make", "-n", "lint"], cwd=REPO, capture_output=True, text=True, timeout=60,
                       env={"PATH": "/usr/bin:/bin", "HOME": str(REPO)})
    assert r.returncode == 0, r.stderr
    lines = [line for line in r.stdout.splitlines() if re.search(r"\b(ruff|mypy)\b", line)]
    assert lines[-2:] == [".venv/bin/ruff check .", ".venv/bin/mypy"]


def test_the_pre_commit_hooks_run_the_same_checks():
    config = yaml.safe_load((REPO / ".pre-commit-config.yaml").read_text())
    hooks = {h["id"]: h for repo in config["repos"] for h in repo["hooks"]}
    assert hooks["ruff"]["entry"].startswith(".venv/bin/ruff check")
    assert hooks["mypy"]["entry"] == ".venv/bin/mypy" and hooks["mypy"]["pass_filenames"] is False
