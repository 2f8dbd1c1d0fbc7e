"""The real-model path: any inspect model string drives the same task. inspect's `mockllm`
plays a scripted model (tool calls chosen from what it sees), and the local-sandbox guard
refuses real models unless the user opts in."""

from __future__ import annotations

from corpus_fixture import eval_ok, tiny_corpus_fixture
from inspect_ai import eval as inspect_eval
from inspect_ai.model import ChatMessageTool, ModelOutput, ModelUsage, get_model

from readbench.run import task as rb_task

tiny_corpus = tiny_corpus_fixture(own_cache=True)


def scripted(input, tools, tool_choice, config):  # noqa: A002 - mockllm's callable signature
    """grep for the function, read 3 lines at the hit, fix it, run the tests, stop."""
    results = [m for m in input if isinstance(m, ChatMessageTool)]
    step = len(results)
    if step == 0:
        out = ModelOutput.for_tool_call("mockllm/model", "grep", {"pattern": "def helper_480\\(", "path": "calc.py"})
    elif step == 1:
        assert results[0].error is None, results[0].error
        line = int(results[0].text.split(":")[1])  # `calc.py:LINE: def helper_480(a, b):`
        out = ModelOutput.for_tool_call("mockllm/model", "read", {"path": "calc.py", "offset": line, "limit": 3})
    elif step == 2:
        assert "return a - b" in results[1].text
        out = ModelOutput.for_tool_call("mockllm/model", "edit", {
            "path": "calc.py", "edits": [{"oldText": "    return a - b", "newText": "    return a + b"}]})
    elif step == 3:
        out = ModelOutput.for_tool_call("mockllm/model", "bash", {"command": "python3 test_calc.py"})
    else:
        out = ModelOutput.from_content("mockllm/model", "Fixed helper_480.")
    # usage must be set: without it inspect counts tokens with tiktoken, which cannot download offline
    out.usage = ModelUsage(input_tokens=1000 + 100 * step, output_tokens=20, total_tokens=1020 + 100 * step)
    return out


def test_scripted_model_solves_the_bugfix_through_the_same_tools(tiny_corpus):
    task = rb_task.read_strategies_task(sandbox_kind="local", families="bugfix", allow_local=True)
    [log] = eval_ok(task, get_model("mockllm/model", custom_outputs=scripted), tiny_corpus / "logs")
    [sample] = log.samples
    score = sample.scores["readbench"]
    assert score.value == 1.0, score.explanation
    tools = [m.function for m in sample.messages if m.role == "tool"]
    assert tools == ["grep", "read", "edit", "bash"]
    edit = [m for m in sample.messages if m.role == "tool" and m.function == "edit"][0]
    assert edit.text == "Successfully replaced 1 block(s) in calc.py."
    assert score.metadata["turns"] == 5.0 and score.metadata["blind_reads"] == 0.0
    assert score.metadata["input_tokens"] == sum(1000 + 100 * k for k in range(5))


def test_real_model_refused_in_local_sandbox_without_opt_in(tiny_corpus):
    task = rb_task.read_strategies_task(sandbox_kind="local", families="bugfix")
    [log] = inspect_eval(task, model=get_model("mockllm/model", custom_outputs=scripted),
                         log_dir=str(tiny_corpus / "logs"), display="none", fail_on_error=False)
    [sample] = log.samples
    assert sample.error is not None
    assert "refusing to run a real model in the local sandbox" in sample.error.message
