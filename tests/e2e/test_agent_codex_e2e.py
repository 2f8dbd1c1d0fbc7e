"""The real Codex CLI (npm @openai/codex 0.171.0, its native binary) inside the sample's sandbox,
offline, driven by readbench's simulated agent (sim-pager) through inspect's sandbox agent bridge
(GitHub issue 24): the sim reads, searches, edits and runs the tests through Codex's shell
(readbench.sim.dialect_codex), and every sample is scored from Codex's own rollout
(readbench.sessions.codex) joined with the bridge's relayed calls. Docker (networkless container,
the image `readbench images --agents codex` builds) and the local sandbox (the cached prefix)."""

from __future__ import annotations

import re

import pytest
from corpus_fixture import eval_ok, tiny_corpus_fixture

from readbench.run import task as rb_task

_READ = re.compile(r"^nl -ba (\S+)(?: \| sed -n '(\d+),(\d+|\$)p')?$")


tiny_corpus = tiny_corpus_fixture(own_cache=False)


def _run(tmp_path, sandbox_kind: str, arms: list[tuple[str, str]]):
    tasks = [rb_task.read_strategies_task(sandbox_kind=sandbox_kind, families=families, variant="stock", dcp=dcp,
                                          agent="codex") for families, dcp in arms]
    return eval_ok(tasks, "readbench/sim-pager", tmp_path / "logs")


def _check_sample(sample) -> dict:
    score = sample.scores["readbench"]
    assert score.value == 1.0, score.explanation
    meta = score.metadata
    # Codex's own transcript (its rollout), not readbench's loop: its base instructions, its context blocks
    assert sample.messages[0].role == "system" and "Codex" in sample.messages[0].text
    assert any((m.metadata or {}).get("harness_context") for m in sample.messages if m.role == "user")
    calls = [c for m in sample.messages if m.role == "assistant" for c in (m.tool_calls or [])]
    assert calls and {c.function for c in calls} <= {"exec_command", "write_stdin"}
    commands = [c.arguments["cmd"] for c in calls if c.function == "exec_command"]
    reads = [m for c in commands if (m := _READ.match(c))]
    # the metrics come from the rollout: every `nl -ba` read the importer found, counted as a read
    assert meta["read_calls"] == len(reads) >= 1
    assert meta["blind_reads"] == sum(m.group(2) is None for m in reads)
    assert meta["files_read"] == len({m.group(1) for m in reads})
    assert meta["lines_delivered"] >= 1 and meta["blocked_reads"] == 0
    assert meta["turns"] == sum(m.role == "assistant" for m in sample.messages) >= 2
    # and from the bridge's relayed calls: the sim's usage, priced by readbench's cache simulator
    assert meta["native_input_tokens"] == meta["input_tokens"] > 0 and meta["cost_usd_anthropic-5m"] > 0
    return meta


def _check(logs, arms) -> None:
    for (families, dcp), log in zip(arms, logs):
        samples = log.samples or []
        assert len(samples) == len(families.split(","))
        for sample in samples:
            meta = _check_sample(sample)
            if "bugfix" in sample.id:  # the fix went in through Codex's apply_patch, the tests through its shell
                assert meta["edit_calls"] >= 1 and meta["bash_calls"] >= 1
            if dcp == "off":
                assert meta["dcp_pruned_items"] == 0


@pytest.mark.slow
def test_real_codex_runs_in_the_local_sandbox_and_is_scored_from_its_rollout(tiny_corpus):
    arms = [("locate,bugfix", "off")]
    _check(_run(tiny_corpus, "local", arms), arms)


@pytest.mark.docker
@pytest.mark.slow
def test_real_codex_runs_offline_in_a_container_and_is_scored_from_its_rollout(tiny_corpus):
    arms = [("locate,bugfix", "off"), ("locate", "pi-dcp")]
    _check(_run(tiny_corpus, "docker", arms), arms)


@pytest.mark.slow
def test_real_codex_answers_every_prompt_of_a_session_through_resume(tmp_path):
    """A multi-prompt session task of the real corpus (locate, fix, two follow-up questions): one
    `codex exec` and a `codex exec resume --last` per follow-up, one rollout; Codex's context blocks
    are no prompts to the scorer, so each prompt's final reply is graded (4 user prompts)."""
    [log] = eval_ok(rb_task.read_strategies_task(sandbox_kind="local", families="session", sources="more-itertools",
                                                 limit=1, agent="codex"), "readbench/sim-pager", tmp_path / "logs")
    [sample] = log.samples
    meta = _check_sample(sample)
    prompts = [m for m in sample.messages if m.role == "user" and not (m.metadata or {}).get("harness_context")]
    assert len(prompts) == 4 and meta["edit_calls"] >= 1
    assert "answers 3/3" in sample.scores["readbench"].explanation
