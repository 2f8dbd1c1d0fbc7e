"""The real pi 0.84.4 against readbench's loop under the same simulated agent (GitHub issue 24
item 5): both runs of one sample make the same tool calls and get the same results, and every
other difference in what they send the model is named here (local sandbox; slow)."""

from __future__ import annotations

import sys
from pathlib import Path

import pytest
from inspect_ai import eval as inspect_eval
from inspect_ai.event import ModelEvent
from inspect_ai.log import read_eval_log

from readbench.agents.differential import request_differences
from readbench.run import task as rb_task

pytestmark = [pytest.mark.slow]

NAMED = {
    # readbench's loop emulates pi 0.84.1's system prompt: 0.84.4 adds its "Pi documentation" section
    # (paths of the installed package) and drops 0.84.1's "- - read: Read file contents" guideline
    "system 0 text",
    # pi's built-in read keeps its own description: the extension refuses calls, it does not
    # replace the tool, so B's "a read whose selection exceeds this limit returns an error" sentence is absent
    "tool read description",
    # inspect renders the loop's optional arguments as anyOf[number, null]; pi sends plain
    # `number`/`string`; 0.84.4 also words bash's and edit's argument descriptions differently
    "tool read parameters", "tool bash parameters", "tool edit parameters", "tool grep parameters",
    # the local sandbox: inspect's sandbox-tools, injected for the bridge, show in `ls .`
    "tool 3 text",
    # through the OpenAI chat-completions relay a tool message has no error flag: pi's blocked read
    # (isError) reaches the model as plain text, readbench's loop sends it as an error
    "tool 5 error flag",
}


sys.path.insert(0, str(Path(__file__).parents[1] / "e2e"))
from corpus_fixture import tiny_corpus_fixture  # noqa: E402

tiny_corpus = tiny_corpus_fixture(own_cache=False)  # the installed pi pin lives in the user's cache


def _events(log) -> list[ModelEvent]:
    sample = read_eval_log(log.location, resolve_attachments=True).samples[0]
    return [e for e in sample.events if isinstance(e, ModelEvent)]


def test_real_pi_and_the_loop_differ_only_where_named(tiny_corpus):
    logs = [inspect_eval(rb_task.read_strategies_task(sandbox_kind="local", families="locate", variant="B", agent=a),
                         model="readbench/sim-pager", log_dir=str(tiny_corpus / a), display="none",
                         log_realtime=False)[0]  # no live-view event buffer: tests/fork/fork_arms.eval_log
            for a in ("readbench", "pi")]
    assert [log.status for log in logs] == ["success", "success"]
    loop, pi = (_events(log) for log in logs)
    assert len(loop) == len(pi) == 6
    assert set(request_differences(loop, pi)) == NAMED
