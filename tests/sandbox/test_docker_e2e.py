"""End to end on a real engine: build a source image, run an inspect eval in its compose sandbox.

The model is ``mockllm/model`` driven by a callable that scripts three calls of inspect's own
``bash`` tool, then answers (docs/specs/inspect-notes.md §3: always set ``usage`` offline;
§9.2: tool output untruncated via ``max_tool_output=0``). Asserted from the eval log:

- the tree is baked at /repo, the process runs as root, python is 3.11, PYTHONPATH is the deps dir;
- ``network_mode: none`` holds: no DNS answer and ``lo`` is the only interface;
- neither pip nor setuptools is importable (corpus.md §4 leak rule);
- the compose project is torn down afterwards (no container of the image is left).
"""

from __future__ import annotations

import subprocess
from pathlib import Path

import pytest
from inspect_ai import Task, eval
from inspect_ai.dataset import Sample
from inspect_ai.model import ChatMessageTool, ModelOutput, ModelUsage, get_model
from inspect_ai.solver import generate, use_tools
from inspect_ai.tool import bash

from readbench.sandbox.images import build_source_image, compose_for

COMMANDS = [
    "pwd; id -u; python3 -c 'import sys; print(sys.version_info[:2])'; echo \"PYTHONPATH=$PYTHONPATH\"; cat pkg/calc.py",
    "getent hosts deb.debian.org >/dev/null 2>&1 && echo DNS || echo NO-DNS; "
    "awk 'NR > 2 {sub(\":\", \"\", $1); print $1}' /proc/net/dev",
    "python3 -c 'from pkg.calc import add; print(add(2, 3))'; "
    "python3 -c \"import importlib.util as u; print([m for m in ('pip', 'setuptools') if u.find_spec(m)])\"",
]
EXPECTED = [
    "/repo\n0\n(3, 11)\nPYTHONPATH=/opt/readbench/deps\ndef add(a, b):\n    return a + b\n",
    "NO-DNS\nlo\n",
    "5\n[]\n",
]


def scripted(input, tools, tool_choice, config) -> ModelOutput:  # noqa: A002 - mockllm's signature
    n_done = sum(isinstance(m, ChatMessageTool) for m in input)
    if n_done < len(COMMANDS):
        out = ModelOutput.for_tool_call("mockllm/model", "bash", {"command": COMMANDS[n_done]})
    else:
        out = ModelOutput.from_content("mockllm/model", "done")
    # offline: without usage mockllm would download a tiktoken vocabulary (inspect-notes §9.1)
    out.usage = ModelUsage(input_tokens=10, output_tokens=5, total_tokens=15)
    return out


@pytest.mark.docker
def test_bash_tool_runs_in_baked_image_without_network(offline_base: str, tiny_repo, tmp_path: Path) -> None:
    tree, deps = tiny_repo
    tag = build_source_image("e2e-tiny", tree, deps, offline_base)
    compose = compose_for(tag, tmp_path / "compose")
    task = Task(
        dataset=[Sample(id="s1", input="inspect the repository")],
        solver=[use_tools(bash(timeout=60)), generate()],
        sandbox=("docker", str(compose)),
    )
    model = get_model("mockllm/model", custom_outputs=scripted)
    [log] = eval(task, model=model, log_dir=str(tmp_path / "logs"), display="none", max_tool_output=0)

    assert log.status == "success", log.error
    [sample] = log.samples
    assert sample.error is None
    tool_msgs = [m for m in sample.messages if isinstance(m, ChatMessageTool)]
    assert [m.text for m in tool_msgs] == EXPECTED
    assert [m.error for m in tool_msgs] == [None, None, None]
    assert sample.output.completion == "done"

    left = subprocess.run(["docker", "ps", "-aq", "--filter", f"ancestor={tag}"],
                          capture_output=True, text=True, check=True).stdout
    assert left == ""
