""".github/workflows/nightly.yml is a valid GitHub workflow (offline, against the schema PyPI
check-jsonschema vendors) and does what analysis/README.md says: scheduled and manual, installs
like .ci/run, caches the corpus, runs `make nightly` with nothing that would swallow its exit
status, uploads the report and table, and runs the real-model matrix only with API-key secrets
(issue 17). The matrices it runs load."""

from __future__ import annotations

import re
import subprocess
import sys
from pathlib import Path

import pytest
import yaml

from readbench.run.matrix import load_matrix

REPO = Path(__file__).resolve().parents[2]
WORKFLOW = REPO / ".github" / "workflows" / "nightly.yml"


def _schema_check(path: Path) -> subprocess.CompletedProcess:
    cmd = [sys.executable, "-m", "check_jsonschema", "--builtin-schema", "vendor.github-workflows", str(path)]
    return subprocess.run(cmd, capture_output=True, text=True, timeout=120)


def test_the_workflow_passes_the_vendored_github_workflow_schema():
    r = _schema_check(WORKFLOW)
    assert r.returncode == 0, r.stdout + r.stderr
    assert "ok -- validation done" in r.stdout


@pytest.mark.parametrize("old, new", [
    ("    timeout-minutes: 300\n", "    timeout-minutes: soon\n"),
    ('    - cron: "17 2 * * *"', '    - crontab: "17 2 * * *"'),
    ("  cancel-in-progress: false", "  cancel-in-progress: maybe"),
])
def test_the_schema_check_rejects_a_broken_workflow(tmp_path, old, new):
    text = WORKFLOW.read_text()
    assert old in text
    broken = tmp_path / "nightly.yml"
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


def test_it_is_scheduled_and_manually_triggerable(workflow):
    assert [c["cron"] for c in workflow["on"]["schedule"]] == ["17 2 * * *", "17 4 * * 6"]
    assert workflow["on"]["workflow_dispatch"]["inputs"]["matrix"]["options"] == ["nightly", "weekly"]
    nightly = workflow["jobs"]["nightly"]
    assert "github.event.schedule == '17 2 * * *'" in nightly["if"] and "workflow_dispatch" in nightly["if"]
    assert "github.event.schedule == '17 4 * * 6'" in workflow["jobs"]["weekly"]["if"]


def test_the_nightly_job_installs_like_ci_run_and_fails_on_any_nonzero_verdict(workflow):
    ci = (REPO / ".ci" / "run").read_text()
    job = workflow["jobs"]["nightly"]
    assert job["container"] == {"image": "debian:bookworm", "options": "--privileged --volume /var/lib/docker"}
    install = next(r for r in _runs(job) if "make setup" in r)
    assert install.split() == ["make", "setup", "make", "docker", "make", "corpus"]
    assert all(f"make {t}" in ci for t in ("setup", "docker", "corpus"))
    (step,) = [s for s in job["steps"] if s.get("run", "").startswith("make nightly")]
    shell = re.sub(r"\$\{\{.*?\}\}", "", step["run"])  # the shell text, without GitHub expressions
    assert "continue-on-error" not in step and "||" not in shell and ";" not in shell and "&" not in shell
    caches = [s["with"]["path"] for s in job["steps"] if s.get("uses", "").startswith("actions/cache@")]
    assert ".cache/readbench" in caches
    (upload,) = [s for s in job["steps"] if s.get("uses", "").startswith("actions/upload-artifact@")]
    assert upload["if"] == "always()"
    paths = upload["with"]["path"].splitlines()
    assert {"results/nightly-${{ github.run_id }}/report/", "results/nightly-${{ github.run_id }}/table.parquet",
            "results/nightly-${{ github.run_id }}/compare/"} <= set(paths)


def test_the_real_model_matrix_runs_only_with_api_key_secrets(workflow):
    job = workflow["jobs"]["real-model"]
    assert job["env"]["ANTHROPIC_API_KEY"] == "${{ secrets.ANTHROPIC_API_KEY }}"
    assert job["env"]["OPENAI_API_KEY"] == "${{ secrets.OPENAI_API_KEY }}"
    assert job["steps"][0]["id"] == "keys"
    assert all(s.get("if", "").startswith(("steps.keys.outputs.models != ''", "always() && steps.keys.outputs.models"))
               for s in job["steps"][1:])
    run = next(r for r in _runs(job) if "evals/nightly-real.yaml" in r)
    assert "NIGHTLY_SANDBOX=docker" in run and "--sandbox docker" in run


@pytest.mark.parametrize("path, name, arms, models", [
    ("evals/nightly.yaml", "nightly", 8, 1),
    ("evals/weekly.yaml", "weekly", 40, 3),
    ("evals/nightly-real.yaml", "nightly-real", 3, 1),
])
def test_the_matrices_the_workflow_runs_load(path, name, arms, models):
    m = load_matrix(REPO / path)
    assert (m.name, len(m.arms()), len(m.models)) == (name, arms, models)
