"""The real Claude Code (npm @anthropic-ai/claude-code 2.1.332) inside the sample's sandbox — a
networkless container, and the local sandbox — driven offline by readbench's simulated agent
(sim-pager: it reads blind first) through inspect's sandbox agent bridge (GitHub issue 24): stock ×
off and B × pi-dcp on one locate task. Every sample is scored from Claude Code's own project JSONL.

The task's file calc.py has 2603 lines: Claude Code 2.1.332's Read returns all of them, numbered
1..2604 (the empty segment after the final newline is line 2604, as pi counts), so stock reads it
once, blind; B's PreToolUse hook refuses that read with B's text and the sim reads 1-1000,
1001-2000 and 2001-2604.
"""

from __future__ import annotations

import pytest
from corpus_fixture import eval_ok, tiny_corpus_fixture

from readbench.run import task as rb_task

B_REFUSAL = ("PreToolUse:Read hook error: File has 2603 lines (38.3KB), over the 2000-line/50.0KB read limit. "
             "Read it in ranges, e.g. offset=1 limit=1000, or grep for what you need first.")


tiny_corpus = tiny_corpus_fixture(own_cache=False)


@pytest.mark.slow
@pytest.mark.parametrize("sandbox", [pytest.param("docker", marks=pytest.mark.docker), "local"])
def test_real_claude_code_runs_stock_and_b_and_is_scored_from_its_project_jsonl(tiny_corpus, sandbox):
    arms = [("stock", "off"), ("B", "pi-dcp")]
    tasks = [rb_task.read_strategies_task(sandbox_kind=sandbox, families="locate", variant=v, dcp=d,
                                          agent="claude-code") for v, d in arms]
    logs = eval_ok(tasks, "readbench/sim-pager", tiny_corpus / "logs")
    for (variant, _dcp), log in zip(arms, logs):
        [sample] = log.samples
        score = sample.scores["readbench"]
        assert score.value == 1.0, score.explanation
        meta = score.metadata
        # Claude Code's transcript: its own tool names, absolute paths, no readbench system prompt
        assert sample.messages[0].role == "user"
        reads = [c for m in sample.messages if m.role == "assistant" for c in m.tool_calls or [] if c.function == "Read"]
        assert reads and all(c.arguments["file_path"].startswith("/") and c.arguments["file_path"].endswith("/calc.py")
                             for c in reads)
        results = [m.error.message if m.error else m.text for m in sample.messages
                   if m.role == "tool" and m.function == "Read"]
        # metrics from the imported session and the bridge's relayed calls
        assert meta["native_input_tokens"] == meta["input_tokens"] > 0 and meta["cost_usd_anthropic-5m"] > 0
        assert meta["lines_delivered"] == 2604.0 and meta["files_read"] == 1.0
        if variant == "stock":  # Claude Code's own Read: the whole file at once
            assert meta["read_calls"] == 1.0 and meta["blind_reads"] == 1.0 and meta["blocked_reads"] == 0.0
            assert results[0].startswith('1\t"""Generated arithmetic helpers."""\n2\t\n') and results[0].endswith("\n2604\t")
        else:  # the hook's refusal with B's exact text, then three ranged reads
            assert results[0] == B_REFUSAL
            assert meta["blocked_reads"] == 1.0 and meta["read_calls"] == 4.0
            assert [(c.arguments.get("offset"), c.arguments.get("limit")) for c in reads] == [
                (None, None), (1, 1000), (1001, 1000), (2001, 1000)]
