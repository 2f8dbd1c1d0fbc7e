"""readbench's bash tool gives the agent a test run's summary without its duration (issue 29):
the same trajectory then gets the same tool results on an idle and a loaded machine."""

from __future__ import annotations

from corpus_fixture import eval_ok, tiny_corpus_fixture
from inspect_ai.model import ChatMessageTool, ModelOutput, ModelUsage, get_model

from readbench.run import task as rb_task

#: what pytest -q and unittest print, durations included, and one line that only looks alike
COMMAND = "printf '..F\\n1 failed, 2 passed in 0.37s\\nRan 3 tests in 0.004s\\nbuild took 1.5s\\n'"


tiny_corpus = tiny_corpus_fixture(own_cache=True, own_workspaces=True)


def run_tests_once(input, tools, tool_choice, config):  # noqa: A002 - mockllm's callable signature
    if any(isinstance(m, ChatMessageTool) for m in input):
        out = ModelOutput.from_content("mockllm/model", "done")
    else:
        out = ModelOutput.for_tool_call("mockllm/model", "bash", {"command": COMMAND})
    out.usage = ModelUsage(input_tokens=100, output_tokens=5, total_tokens=105)
    return out


def test_bash_tool_drops_test_durations_only(tiny_corpus):
    task = rb_task.read_strategies_task(sandbox_kind="local", families="bugfix", allow_local=True)
    [log] = eval_ok(task, get_model("mockllm/model", custom_outputs=run_tests_once), tiny_corpus / "logs")
    [sample] = log.samples
    [tool] = [m for m in sample.messages if m.role == "tool"]
    assert tool.text == "..F\n1 failed, 2 passed\nRan 3 tests\nbuild took 1.5s\n"
