"""Each sample's commands in the local sandbox get a private temporary directory (issue 29):
before, they used the host's /tmp, shared with every other sample and any outer test suite, and
pytest's clean-up of its numbered ``/tmp/pytest-of-<user>/pytest-N`` directories raced between
concurrent sessions, adding a ``PytestWarning: (rm_rf) error removing .../garbage-<uuid>`` block
to a tool result now and then (+~190 input tokens in one run of the determinism test on CI).
The bash tool's full output of a cut result goes there too (pi: ``os.tmpdir()``), not to the
host's /tmp."""

from __future__ import annotations

import os
import re

from corpus_fixture import eval_ok, tiny_corpus_fixture
from inspect_ai.model import ChatMessageTool, ModelOutput, ModelUsage, get_model

from readbench.run import task as rb_task
from readbench.sandbox.local import sample_tmpdir, workspace_name

#: where Python and the shell put temporary files, then what the directory holds after a write
COMMAND = ("python3 -c 'import tempfile; print(tempfile.gettempdir())'; echo \"$TMPDIR $TMP $TEMP\"; "
           "touch \"$TMPDIR/mine\"; ls -A \"$TMPDIR\"")

tiny_corpus = tiny_corpus_fixture(own_cache=True, own_workspaces=True)


#: more than pi's 2,000 lines: the tool result is cut and the full output saved to a temp file
LONG = "seq 2500"


def print_tmpdir(input, tools, tool_choice, config):  # noqa: A002 - mockllm's callable signature
    step = sum(isinstance(m, ChatMessageTool) for m in input)
    if step < 2:
        out = ModelOutput.for_tool_call("mockllm/model", "bash", {"command": [COMMAND, LONG][step]})
    else:
        out = ModelOutput.from_content("mockllm/model", "done")
    out.usage = ModelUsage(input_tokens=100, output_tokens=5, total_tokens=105)
    return out


def test_each_sample_has_its_own_temporary_directory_beside_its_workspace(tiny_corpus):
    ws = tiny_corpus / "ws"
    task = rb_task.read_strategies_task(sandbox_kind="local", allow_local=True)
    [log] = eval_ok(task, get_model("mockllm/model", custom_outputs=print_tmpdir), tiny_corpus / "logs")
    texts = {s.id: [m.text for m in s.messages if m.role == "tool"] for s in log.samples}
    for sample_id in ("logs/bugfix/0", "logs/locate/0"):
        tmp = ws / f"{workspace_name(sample_id, 1)}.tmp"
        assert sample_tmpdir(ws / workspace_name(sample_id, 1)) == tmp
        first, long = texts[sample_id]
        assert first == f"{tmp}\n{tmp} {tmp} {tmp}\nmine\n"
        # pi's truncation notice names the full output's file in the sample's TMPDIR (pi: os.tmpdir())
        assert long.startswith("501\n") and re.fullmatch(
            rf"\[Showing lines 501-2500 of 2500\. Full output: {re.escape(str(tmp))}/pi-bash-[0-9a-f]{{16}}\.log\]",
            long.splitlines()[-1]), long[-200:]
    assert sorted(os.listdir(ws)) == ["logs-bugfix-0-e1.lock", "logs-locate-0-e1.lock"]  # removed with the sample
