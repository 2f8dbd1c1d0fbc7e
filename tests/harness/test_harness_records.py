"""The harness records (readbench.harness): one list of tools per harness, read by sessions/,
sim/ and replay/ alike (issue 23)."""

from __future__ import annotations

import pytest
from inspect_ai.model import ChatMessageAssistant, ChatMessageTool, ChatMessageUser
from inspect_ai.tool import ToolCall

from readbench.harness import (
    HARNESSES,
    Harness,
    ReadTool,
    ShellTool,
    path_keys,
    read_preset,
    shell_command,
    tool_role,
)
from readbench.read.registry import get_variant, preset_names
from readbench.sessions import Call, Session
from readbench.sessions.file_ops import file_writes
from readbench.sessions.reads import read_calls
from readbench.sim.evidence import prompt_tools


def _session(steps: list[tuple[str, dict, str]], harness: str = "pi") -> Session:
    """One call per (tool, arguments, result), a final call with no tool."""
    msgs = [ChatMessageUser(content="go")]
    calls = []
    for k, (tool, args, result) in enumerate(steps):
        out = ChatMessageAssistant(content="", tool_calls=[ToolCall(id=f"t{k}", function=tool, arguments=args)])
        calls.append(Call(k, 0, len(msgs), "claude-sonnet-4-5", output=out))
        msgs += [out, ChatMessageTool(content=result, tool_call_id=f"t{k}", function=tool)]
    calls.append(Call(len(steps), 0, len(msgs), "claude-sonnet-4-5", output=ChatMessageAssistant(content="done")))
    return Session("s.jsonl", harness, harness, None, "s", contexts=[msgs], calls=calls, cwd="/repo")


def _kinds(s: Session) -> list[str]:
    return [a.kind for p in prompt_tools(s) for a in p.actions]


def test_the_registry_lists_every_harness_the_code_knows():
    assert HARNESSES.names() == ["pi", "claude-code", "codex", "inspect", "swe-agent", "other"]
    assert [d["name"] for d in HARNESSES.describe()] == HARNESSES.names()


def test_each_read_preset_is_a_registered_preset_that_reproduces_the_harness():
    assert {h.name: h.read_preset for h in HARNESSES} == {
        "pi": "stock", "claude-code": "claude-code", "codex": None, "inspect": None, "swe-agent": "swe-agent",
        "other": None}
    assert all(h.read_preset in preset_names() for h in HARNESSES if h.read_preset)
    assert read_preset("pi") == "stock" and read_preset("unknown-agent") is None
    # Claude Code's Read returns its default 2000 lines exactly as the claude-code preset does
    (cc_read,) = HARNESSES.get("claude-code").read_tools
    assert cc_read.default_limit == get_variant("claude-code").params["default_limit"] == 2000


def test_file_changes_and_sim_evidence_agree_on_every_edit_tool_of_every_harness():
    """The drift the issue names: sessions/file_ops.py counted 5 tools as edits (create_file,
    write_file, edit_file, replace, str_replace_based_edit_tool) that sim/evidence.py did not."""
    edits = [(name, h.path_keys[0] if h.path_keys else "path") for h in HARNESSES for name in h.edit_tools]
    assert len(edits) >= 14
    s = _session([(name, {key: f"/repo/f{k}.py"}, "ok") for k, (name, key) in enumerate(edits)])
    assert [w.tool for w in file_writes(s)] == [name for name, _ in edits]
    assert _kinds(s) == ["edit"] * len(edits)
    for name in ("create_file", "write_file", "edit_file", "replace", "str_replace_based_edit_tool"):
        assert tool_role(name) == "edit"


def test_a_swe_agent_view_is_no_edit_anywhere():
    """SWE-agent's str_replace_editor `view` shows a file: sim fit counted it as an edit (it was
    in sim/evidence.py's edit list without the file_ops exception)."""
    s = _session([("str_replace_editor", {"command": "view", "path": "/repo/a.py"}, "1 x"),
                  ("str_replace_editor", {"command": "str_replace", "path": "/repo/a.py", "old_str": "x",
                                          "new_str": "y"}, "ok")], harness="inspect")
    assert [w.tool_call_id for w in file_writes(s)] == ["t1"]
    assert _kinds(s) == ["other", "edit"]
    assert tool_role("str_replace_editor", {"command": "view"}) == "view"
    assert tool_role("text_editor", {"command": "view", "path": "a"}) == "view"


def test_one_command_extraction_for_every_consumer():
    """An argv command list (Codex's `shell`): file_ops joined it with spaces, so
    `bash -lc "sed -i ... f"` was seen as a `bash` command and its write missed."""
    assert shell_command({"command": ["bash", "-lc", "sed -n '1,5p' a.py"]}) == "sed -n '1,5p' a.py"
    assert shell_command({"command": ["/bin/zsh", "-c", "cat a.py"]}) == "cat a.py"
    assert shell_command({"command": ["rg", "two words", "src"]}) == "rg 'two words' src"
    assert shell_command({"cmd": "cat a.py"}) == "cat a.py"
    assert shell_command({"path": "a.py"}) is None
    s = _session([("shell", {"command": ["bash", "-lc", "sed -i 's/a/b/' src/m.py"]}, ""),
                  ("shell", {"command": ["bash", "-lc", "sed -n '1,2p' src/m.py"]}, "x\ny\n")], harness="codex")
    assert [(w.tool_call_id, w.paths) for w in file_writes(s)] == [("t0", ("/repo/src/m.py",))]
    assert [(r.tool_call_id, r.path, r.first_line, r.last_line) for r in read_calls(s)] == [("t1", "src/m.py", 1, 2)]
    assert _kinds(s) == ["shell", "read"]


def test_path_keys_are_the_union_of_the_records():
    keys = path_keys()
    for h in HARNESSES:
        assert set(h.path_keys) <= set(keys)
        assert {t.path_key for t in h.read_tools} <= set(keys)
    assert keys[0] == "path"


def test_a_new_harness_is_one_record_and_every_consumer_sees_it():
    """Worked example: a harness with its own read tool (`open_file {file, start, count}`), shell
    (`run {script}`) and edit tool, registered at run time."""
    h = Harness("acme", "Acme agent", "a test", read_tools=(ReadTool("open_file", "file", "start", "count"),),
                shell_tools=(ShellTool("run", "script"),), edit_tools=("patch_file",), search_tools=("find_text",),
                path_keys=("file",), read_preset="B")
    HARNESSES.register(h)
    try:
        s = _session([("open_file", {"file": "a.py", "start": 3, "count": 2}, "three\nfour"),
                      ("run", {"script": "cat b.py"}, "b\n"),
                      ("patch_file", {"file": "a.py"}, "ok"),
                      ("find_text", {"pattern": "x", "file": "c.py"}, "")], harness="acme")
        assert [(r.tool, r.path, r.offset, r.limit, r.via_shell) for r in read_calls(s)] == [
            ("open_file", "a.py", 3, 2, False), ("run", "b.py", None, None, True)]
        assert [w.tool for w in file_writes(s)] == ["patch_file"]
        assert _kinds(s) == ["read", "read", "edit", "search"]
        assert read_preset("acme") == "B"
    finally:
        HARNESSES.unregister("acme")
    assert tool_role("open_file") is None


def test_two_harnesses_cannot_give_one_tool_two_roles():
    HARNESSES.register(Harness("bad", "bad", "a test", edit_tools=("Bash",)))
    try:
        with pytest.raises(ValueError, match="harness 'bad': tool 'Bash' has role 'edit' here and role 'shell' in "
                                             "harness 'claude-code'"):
            tool_role("Bash")
    finally:
        HARNESSES.unregister("bad")
    assert tool_role("Bash") == "shell"


def test_a_codex_local_shell_call_is_a_shell_read(tmp_path):
    """Codex writes its `local_shell` tool's calls as `local_shell_call` items (no `name`); the
    importer names the call after the item type, which no shell-tool list held: its reads were
    never audited."""
    import json

    from readbench.sessions.registry import load_file

    def line(kind: str, payload: dict, t: int) -> str:
        return json.dumps({"timestamp": f"2026-05-11T10:00:{t:02d}.000Z", "type": kind, "payload": payload})

    def usage(total: int, inp: int, cached: int) -> dict:
        last = {"input_tokens": inp, "cached_input_tokens": cached, "output_tokens": 7}
        return {"type": "token_count", "info": {"total_token_usage": {"input_tokens": total}, "last_token_usage": last}}

    call = {"type": "local_shell_call", "call_id": "c1", "status": "completed",
            "action": {"type": "exec", "command": ["bash", "-lc", "sed -n '1,3p' a.py"]}}
    lines = [line("session_meta", {"id": "cx", "cwd": "/r", "cli_version": "0.125.0"}, 0),
             line("turn_context", {"model": "gpt-5.3-codex", "effort": "medium"}, 0),
             line("response_item", {"type": "message", "role": "user", "content": [{"type": "input_text", "text": "go"}]}, 1),
             line("response_item", call, 2),
             line("event_msg", usage(100, 100, 0), 3),
             line("response_item", {"type": "function_call_output", "call_id": "c1", "output": "a\nb\nc\n"}, 3),
             line("response_item", {"type": "message", "role": "assistant", "content": [{"type": "output_text", "text": "ok"}]}, 4),
             line("event_msg", usage(220, 120, 100), 5)]
    path = tmp_path / "rollout.jsonl"
    path.write_text("\n".join(lines) + "\n")
    (s,) = load_file(path)
    assert [t.function for t in s.calls[0].output.tool_calls] == ["local_shell_call"]
    (r,) = read_calls(s)
    assert (r.tool, r.path, r.first_line, r.last_line, r.via_shell) == ("local_shell_call", "a.py", 1, 3, True)
