"""Tools run with an allow-listed environment (issue 13, defect 4): the bash tool printing
`env`, grep and the checker see PATH, HOME, LANG, PYTHONHASHSEED, on the local sandbox the
sample's own TMPDIR/TMP/TEMP (issue 29), and the task's own variables, never the host's (a fake
API key printed by `env` used to land in the .eval log)."""

from __future__ import annotations

import zipfile

import pytest
from corpus_fixture import eval_ok, tiny_corpus_fixture
from inspect_ai.model import ChatMessageTool, ModelOutput, ModelUsage, get_model

from readbench.run import task as rb_task

SECRET = "sk-ant-FAKE-0123456789-do-not-log"
#: names bash itself sets in any environment
BASH_OWN = {"PWD", "SHLVL", "_"}


tiny_corpus = tiny_corpus_fixture(own_cache=True, env={"ANTHROPIC_API_KEY": SECRET, "READBENCH_TEST_SECRET": SECRET})


def print_env(input, tools, tool_choice, config):  # noqa: A002 - mockllm's callable signature
    """bash `env`, grep for the key's name in the environment's own listing, then stop."""
    step = sum(isinstance(m, ChatMessageTool) for m in input)
    if step == 0:
        out = ModelOutput.for_tool_call("mockllm/model", "bash", {"command": "env; echo KEY=$ANTHROPIC_API_KEY"})
    elif step == 1:
        out = ModelOutput.for_tool_call("mockllm/model", "bash", {"command": "env > env.txt"})
    elif step == 2:
        out = ModelOutput.for_tool_call("mockllm/model", "grep", {"pattern": "sk-ant|PATH", "path": "env.txt"})
    else:
        out = ModelOutput.from_content("mockllm/model", "done")
    out.usage = ModelUsage(input_tokens=100, output_tokens=5, total_tokens=105)
    return out


def _run(tmp_path, sandbox_kind):
    task = rb_task.read_strategies_task(sandbox_kind=sandbox_kind, families="bugfix", allow_local=True)
    [log] = eval_ok(task, get_model("mockllm/model", custom_outputs=print_env), tmp_path / "logs")
    [sample] = log.samples
    tool_texts = [m.text for m in sample.messages if m.role == "tool"]
    names = {line.split("=", 1)[0] for line in tool_texts[0].splitlines() if "=" in line}
    own_tmp = {"TMPDIR", "TMP", "TEMP"} if sandbox_kind == "local" else set()
    assert names - BASH_OWN - {"KEY"} == {"PATH", "HOME", "LANG", "PYTHONHASHSEED"} | own_tmp, names
    assert "KEY=\n" in tool_texts[0] + "\n"
    assert "PATH=" in tool_texts[2] and SECRET not in tool_texts[2]
    with zipfile.ZipFile(log.location) as z:  # nothing anywhere in the log file
        for name in z.namelist():
            assert SECRET.encode() not in z.read(name), name


def test_local_sandbox_tools_never_see_the_host_environment(tiny_corpus):
    _run(tiny_corpus, "local")


@pytest.mark.docker
@pytest.mark.slow
def test_docker_sandbox_tools_never_see_the_host_environment(tiny_corpus):
    _run(tiny_corpus, "docker")
