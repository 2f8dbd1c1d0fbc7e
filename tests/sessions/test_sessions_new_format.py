"""Worked example (issue 23): a new session format (and its harness) is one module each.

Adding a session format touches these files:
1. `readbench/sessions/<format>.py`: `sniff`, `load` and its `FORMATS = [SessionFormat(...)]`;
2. `readbench/sessions/registry.py`: one line in `_FORMAT_MODULES` (its place is its detection order);
3. for a new harness, `readbench/harness/<name>.py` (its tools: read, shell, edit, search, argument
   keys, read preset) and one line in `readbench/harness/__init__.py`'s `_MODULES`;
4. a test like this one.
Below, the format and the harness are a module written to a temp directory, registered through
the registries' API. Detection, `readbench replay`, its read audit and the sim's evidence read
them from the records.
"""

from __future__ import annotations

import json
import sys
import textwrap

import pytest
from click.testing import CliRunner

from readbench.harness import HARNESSES
from readbench.sessions.registry import FORMATS, detect_format, load_sessions

MODULE = textwrap.dedent('''
    """acme-log: one JSON object per line, `{"acme": 1, "role", "text", "tool_calls", "usage", "t"}`."""
    import json
    from pathlib import Path

    from inspect_ai.model import ChatMessageAssistant, ChatMessageTool, ChatMessageUser
    from inspect_ai.tool import ToolCall

    from readbench.harness import Harness, ReadTool, ShellTool
    from readbench.sessions import BilledUsage, Session
    from readbench.sessions._build import SessionBuilder
    from readbench.sessions._types import SessionFormat

    HARNESS = Harness("acme", "Acme agent", "a test", read_tools=(ReadTool("open_file", "file", "start", "count"),),
                      shell_tools=(ShellTool("run", "script"),), edit_tools=("patch_file",), path_keys=("file",),
                      read_preset="stock", sessions="acme-log")


    def sniff(head, objects):
        return bool(objects) and objects[0].get("acme") == 1


    def load(path: Path) -> list[Session]:
        session = Session(str(path), "acme-log", "acme", "1", path.stem, cwd="/repo")
        b = SessionBuilder(session)
        for line in path.read_text().splitlines():
            o = json.loads(line)
            if o["role"] == "user":
                b.append(ChatMessageUser(content=o["text"]))
            elif o["role"] == "assistant":
                calls = [ToolCall(id=c["id"], function=c["name"], arguments=c["args"]) for c in o.get("tool_calls", [])]
                out = ChatMessageAssistant(content=o["text"], tool_calls=calls or None)
                u = o["usage"]
                b.call(model="claude-sonnet-4-5", provider="anthropic", ts_start_seconds=o["t"], ts_end_seconds=o["t"] + 2,
                       usage=BilledUsage(u["in"], u["read"], u["write"], u["out"]), output=out)
                b.append(out)
            else:
                b.append(ChatMessageTool(content=o["text"], tool_call_id=o["id"], function=o["name"]))
        return [session]


    FORMATS = [SessionFormat("acme-log", "acme", "Acme agent logs (a test)", sniff, load)]
''')


def _lines() -> list[dict]:
    body = "".join(f"line {k}\n" for k in range(1, 41))
    return [
        {"acme": 1, "role": "user", "text": "fix the bug"},
        {"role": "assistant", "text": "", "t": 1000.0, "usage": {"in": 3000, "read": 0, "write": 0, "out": 40},
         "tool_calls": [{"id": "c1", "name": "open_file", "args": {"file": "src/a.py", "start": 1, "count": 40}}]},
        {"role": "tool", "id": "c1", "name": "open_file", "text": body},
        {"role": "assistant", "text": "", "t": 1010.0, "usage": {"in": 3400, "read": 0, "write": 0, "out": 40},
         "tool_calls": [{"id": "c2", "name": "patch_file", "args": {"file": "src/a.py", "patch": "..."}}]},
        {"role": "tool", "id": "c2", "name": "patch_file", "text": "ok"},
        {"role": "assistant", "text": "", "t": 1020.0, "usage": {"in": 3450, "read": 0, "write": 0, "out": 40},
         "tool_calls": [{"id": "c3", "name": "run", "args": {"script": "cat src/a.py"}}]},
        {"role": "tool", "id": "c3", "name": "run", "text": body},
        {"role": "assistant", "text": "done", "t": 1030.0, "usage": {"in": 3900, "read": 0, "write": 0, "out": 5}},
    ]


@pytest.fixture
def acme(tmp_path, monkeypatch):
    (tmp_path / "rb_acme_log.py").write_text(MODULE)
    monkeypatch.syspath_prepend(str(tmp_path))
    import rb_acme_log

    HARNESSES.register(rb_acme_log.HARNESS)
    FORMATS.register(rb_acme_log.FORMATS[0])
    data = tmp_path / "logs"
    data.mkdir()
    (data / "run-1.log").write_text("\n".join(json.dumps(o) for o in _lines()) + "\n")
    try:
        yield data
    finally:
        FORMATS.unregister("acme-log")
        HARNESSES.unregister("acme")
        sys.modules.pop("rb_acme_log", None)


def test_detection_and_import(acme):
    assert detect_format(acme / "run-1.log").name == "acme-log"
    (s,) = [x for x in load_sessions([acme]) if not hasattr(x, "reason")]
    assert (s.format, s.harness, len(s.calls)) == ("acme-log", "acme", 4)
    assert [d["name"] for d in FORMATS.describe()][-1] == "acme-log"


def test_its_harness_record_drives_reads_writes_and_evidence(acme):
    from readbench.sessions.file_ops import file_writes
    from readbench.sessions.reads import read_calls
    from readbench.sim.evidence import prompt_tools, session_evidence

    (s,) = [x for x in load_sessions([acme]) if not hasattr(x, "reason")]
    assert [(r.tool, r.path, r.first_line, r.last_line, r.via_shell) for r in read_calls(s)] == [
        ("open_file", "src/a.py", 1, 40, False), ("run", "src/a.py", 1, 40, True)]
    assert [(w.tool, w.paths) for w in file_writes(s)] == [("patch_file", ("/repo/src/a.py",))]
    assert [a.kind for p in prompt_tools(s) for a in p.actions] == ["read", "edit", "read"]
    assert session_evidence(s).verify == [1]  # the edit was followed by a read of the edited file


def test_readbench_replay_audits_it(acme, tmp_path):
    import pandas as pd

    from readbench.replay._cli import replay_cmd

    out = tmp_path / "out"
    res = CliRunner().invoke(replay_cmd, [str(acme), "--audit", "--presets", "stock", "--out", str(out)])
    assert res.exit_code == 0, res.output
    audit = pd.read_parquet(out / "audit.parquet")
    assert (audit["format"].tolist(), audit["harness"].tolist(), audit["read_calls"].tolist()) == (
        ["acme-log"], ["acme"], [2])
    assert "run-1.log" in (out / "report.md").read_text()
