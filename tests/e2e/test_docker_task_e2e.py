"""The read_strategies task inside Docker: the simulated agent fixes a bug-fix task in a
container with no network, and the checker (the task's own test) runs in that container."""

from __future__ import annotations

import pytest
from corpus_fixture import eval_ok, tiny_corpus_fixture

from readbench.run import task as rb_task

pytestmark = [pytest.mark.docker, pytest.mark.slow]


tiny_corpus = tiny_corpus_fixture(own_cache=False)


def test_sim_solves_bugfix_in_a_networkless_container(tiny_corpus):
    task = rb_task.read_strategies_task(sandbox_kind="docker", families="bugfix", variant="B", dcp="pi-dcp")
    assert task.metadata["sandbox"] == "docker"
    [log] = eval_ok(task, "readbench/sim-diligent", tiny_corpus / "logs")
    [sample] = log.samples
    assert sample.scores["readbench"].value == 1.0, sample.scores["readbench"].explanation
    # the workspace really is the container's /repo, not a host temp dir
    system = sample.messages[0].text
    assert system.endswith("Current working directory: /repo")
