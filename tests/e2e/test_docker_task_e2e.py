"""The read_strategies task inside Docker: the simulated agent fixes a bug-fix task in a
container with no network, and the checker (the task's own test) runs in that container."""

from __future__ import annotations

import pytest
from corpus_fixture import write_corpus
from inspect_ai import eval as inspect_eval

from readbench.corpus import task_index
from readbench.run import task as rb_task

pytestmark = [pytest.mark.docker, pytest.mark.slow]


@pytest.fixture()
def tiny_corpus(tmp_path, monkeypatch):
    monkeypatch.setenv("READBENCH_TASKS", str(write_corpus(tmp_path)))
    task_index.cache_clear()
    yield tmp_path
    task_index.cache_clear()


def test_sim_solves_bugfix_in_a_networkless_container(tiny_corpus):
    task = rb_task.read_strategies_task(sandbox_kind="docker", families="bugfix", variant="B", dcp="pi-dcp")
    assert task.metadata["sandbox"] == "docker"
    [log] = inspect_eval(task, model="readbench/sim-diligent", log_dir=str(tiny_corpus / "logs"), display="none")
    assert log.status == "success", log.error
    [sample] = log.samples
    assert sample.scores["readbench"].value == 1.0, sample.scores["readbench"].explanation
    # the workspace really is the container's /repo, not a host temp dir
    system = sample.messages[0].text
    assert system.endswith("Current working directory: /repo")
