"""The real pi (npm @earendil-works/pi-coding-agent 0.84.4) inside a networkless container, driven
by readbench's simulated agent (sim-pager: it reads blind first) through inspect's sandbox agent bridge (GitHub issue 24): one task,
stock and B, DCP off and pi-dcp. Every sample is scored from pi's own session file."""

from __future__ import annotations

import pytest
from corpus_fixture import eval_ok, tiny_corpus_fixture

from readbench.run import task as rb_task

pytestmark = [pytest.mark.docker, pytest.mark.slow]

B_REFUSAL = "File has 2603 lines (38.3KB), over the 2000-line/50.0KB read limit. Read it in ranges, e.g. offset="


tiny_corpus = tiny_corpus_fixture(own_cache=False)


def test_real_pi_runs_every_arm_in_a_container_and_is_scored_from_its_session(tiny_corpus):
    arms = [(v, d) for v in ("stock", "B") for d in ("off", "pi-dcp")]
    tasks = [rb_task.read_strategies_task(sandbox_kind="docker", families="locate", variant=v, dcp=d, agent="pi")
             for v, d in arms]
    logs = eval_ok(tasks, "readbench/sim-pager", tiny_corpus / "logs")
    for (variant, _dcp), log in zip(arms, logs):
        [sample] = log.samples
        score = sample.scores["readbench"]
        assert score.value == 1.0, score.explanation
        meta = score.metadata
        # the metrics come from pi's session and the bridge's relayed calls
        assert meta["read_calls"] >= 1 and meta["turns"] >= 2 and meta["input_tokens"] > 0
        assert meta["native_input_tokens"] == meta["input_tokens"] and meta["cost_usd_anthropic-5m"] > 0
        # pi's transcript, not readbench's loop: no readbench system prompt in the history
        assert sample.messages[0].role == "user"
        texts = [m.error.message if m.error else m.text for m in sample.messages if m.role == "tool"
                 and m.function == "read"]
        refused = [t for t in texts if t.startswith("File has")]
        if variant == "B":  # the extension's refusal, B's exact text
            assert refused and all(t.startswith(B_REFUSAL) and t.endswith(", or grep for what you need first.")
                                   for t in refused)
            assert meta["blocked_reads"] == len(refused)
        else:  # pi's own read never refuses
            assert refused == [] and meta["blocked_reads"] == 0
