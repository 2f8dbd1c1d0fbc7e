"""The simulated agent through Codex CLI's tools (readbench.sim.dialect_codex) and Codex's shell result
format (readbench.harness.codex_output). The result texts are copied from codex-cli 0.171.0 run
through inspect's sandbox agent bridge (the requests the bridge relayed)."""

from __future__ import annotations

import shlex
import subprocess

from inspect_ai.model import ChatMessageAssistant, ChatMessageSystem, ChatMessageTool, ChatMessageUser
from inspect_ai.tool import ToolCall, ToolInfo, ToolParams

from readbench.harness.codex_output import parse_codex_output
from readbench.sim.dialect_codex import codex_call, codex_exchanges, is_codex_request, prompt_count, read_command
from readbench.sim.observe import parse_read

EXEC_OK = ("Chunk ID: 7d932e\nWall time: 0.0000 seconds\nProcess exited with code 0\nOriginal token count: 18\n"
           "Output:\n     1\tline 1\n     2\tline 2\n     3\tline 3\n     4\tline 4\n     5\tline 5\n")
EXEC_FAIL = ("Chunk ID: f6211e\nWall time: 0.0000 seconds\nProcess exited with code 3\nOriginal token count: 7\n"
             "Output:\nline 2\nline three\nline 4\n")
PATCH_OK = ("Wall time: 0.0000 seconds\nOutput:\nExit code: 0\nWall time: 0 seconds\nOutput:\n"
            "Success. Updated the following files:\nM a.py\n")
PATCH_FAIL = "apply_patch verification failed: Failed to find expected lines in /tmp/cxws-tyhagsez/a.py:\nno such line"
NO_FILE = ("Chunk ID: 278014\nWall time: 0.0000 seconds\nProcess exited with code 0\nOriginal token count: 11\n"
           "Output:\nnl: missing.py: No such file or directory\n")


def _cut(lines: int, head: int, tail: int) -> str:
    """Codex's cut of `nl -ba` over a `lines`-line file (`line N`), in 0.171.0's form: `head` whole
    lines, a partial one, the marker with the end of a partial line, `tail` whole lines."""
    body = [f"{n:>6}\tline {n}" for n in range(1, lines + 1)]
    kept = body[:head] + [body[head][:8] + "…56880 chars truncated…" + body[lines - tail - 1][-1]] + body[lines - tail:]
    return ("Chunk ID: 6e9aac\nWall time: 0.0000 seconds\nProcess exited with code 0\nOriginal token count: 16720\n"
            f"Output:\nWarning: truncated output (original token count: 16720)\nTotal output lines: {lines}\n\n"
            + "\n".join(kept) + "\n")


CODEX_TOOLS = [ToolInfo(name=n, description=f"codex {n}", parameters=ToolParams())
               for n in ("exec_command", "write_stdin", "view_image", "update_goal")]


def test_codex_output_forms():
    ok = parse_codex_output(EXEC_OK)
    assert (ok.exit_code, ok.total_lines, ok.cut) == (0, None, False)
    assert ok.body == "".join(f"{n:>6}\tline {n}\n" for n in range(1, 6))
    assert parse_codex_output(EXEC_FAIL).exit_code == 3
    patch = parse_codex_output(PATCH_OK)
    assert (patch.exit_code, patch.body) == (0, "Success. Updated the following files:\nM a.py\n")
    cut = parse_codex_output(_cut(3999, 87, 295))
    assert (cut.exit_code, cut.total_lines, cut.cut) == (0, 3999, True)
    assert cut.body.startswith("     1\tline 1\n")
    assert parse_codex_output(PATCH_FAIL) is None  # a failed apply_patch is a bare message
    legacy = parse_codex_output('{"output": "a\\n", "metadata": {"exit_code": 1, "duration_seconds": 0.1}}')
    assert (legacy.body, legacy.exit_code) == ("a\n", 1)
    assert parse_codex_output("plain pi bash output") is None


def test_read_commands_round_trip_through_a_shell(tmp_path):
    (tmp_path / "a b.py").write_text("".join(f"line {n}\n" for n in range(1, 11)))
    for offset, limit, first, last in ((None, None, 1, 10), (3, 4, 3, 6), (8, None, 8, 10), (9, 5, 9, 10)):
        cmd = read_command("a b.py", offset, limit)
        out = subprocess.run(["bash", "-c", cmd], cwd=tmp_path, capture_output=True, text=True, check=True).stdout
        call = ToolCall(id="c1", function="exec_command", arguments={"cmd": cmd})
        result = ChatMessageTool(content=f"Chunk ID: 1\nWall time: 0.0000 seconds\nProcess exited with code 0\n"
                                         f"Original token count: 9\nOutput:\n{out}", tool_call_id="c1")
        (ex,) = codex_exchanges([ChatMessageAssistant(content="", tool_calls=[call]), result])
        assert ex.function == "read" and not ex.is_error
        assert ex.arguments == {"path": "a b.py", **({} if offset is None else {"offset": offset}),
                                **({} if limit is None else {"limit": limit})}
        obs = parse_read(ex.text, ex.is_error, ex.arguments)
        assert obs.lines == {n: f"line {n}" for n in range(first, last + 1)}
        # a range that came back short ended the file; a full one may continue; no range: the end
        if limit is not None and last - first + 1 == limit:
            assert (obs.eof, obs.next_offset) == (False, last + 1)
        else:
            assert (obs.eof, obs.total_lines) == (True, 10)


def test_a_cut_output_keeps_whole_lines_and_states_the_count():
    call = ToolCall(id="c1", function="exec_command", arguments={"cmd": "nl -ba a.py"})
    (ex,) = codex_exchanges([ChatMessageAssistant(content="", tool_calls=[call]),
                             ChatMessageTool(content=_cut(3999, 87, 295), tool_call_id="c1")])
    obs = parse_read(ex.text, ex.is_error, ex.arguments)
    assert sorted(obs.lines) == list(range(1, 88)) + list(range(3705, 4000))  # line 88 and 3704 were cut mid-line
    assert (obs.eof, obs.total_lines) == (True, 3999)
    ranged = ToolCall(id="c2", function="exec_command", arguments={"cmd": "nl -ba a.py | sed -n '1,3999p'"})
    (ex,) = codex_exchanges([ChatMessageAssistant(content="", tool_calls=[ranged]),
                             ChatMessageTool(content=_cut(3999, 87, 295), tool_call_id="c2")])
    obs = parse_read(ex.text, ex.is_error, ex.arguments)  # the whole range printed: the file may go on
    assert (obs.eof, obs.next_offset, obs.total_lines) == (False, 4000, None)


def test_errors_edits_and_other_commands_are_perceived_as_the_sim_acted():
    calls = [ToolCall(id="r", function="exec_command", arguments={"cmd": "nl -ba missing.py | sed -n '1,5p'"}),
             ToolCall(id="t", function="shell", arguments={"command": ["bash", "-lc", "sed -n 2,4p a.py; exit 3"]}),
             ToolCall(id="p", function="exec_command", arguments={"cmd": "apply_patch <<'EOF'\n*** Begin Patch\n"
                                                                         "*** Update File: a.py\n@@\n-x\n+y\n*** End Patch\nEOF"}),
             ToolCall(id="q", function="exec_command", arguments={"cmd": "apply_patch <<'EOF'\n*** Begin Patch\n"
                                                                         "*** Update File: a.py\n@@\n-x\n+y\n*** End Patch\nEOF"})]
    msgs = [ChatMessageAssistant(content="", tool_calls=calls), ChatMessageTool(content=NO_FILE, tool_call_id="r"),
            ChatMessageTool(content=EXEC_FAIL, tool_call_id="t"), ChatMessageTool(content=PATCH_OK, tool_call_id="p"),
            ChatMessageTool(content=PATCH_FAIL, tool_call_id="q")]
    r, t, p, q = codex_exchanges(msgs)
    assert (r.function, r.is_error) == ("read", True)
    assert (t.function, t.arguments, t.is_error, t.text) == ("bash", {"command": "sed -n 2,4p a.py; exit 3"}, True,
                                                             "line 2\nline three\nline 4\n")
    assert (p.function, p.arguments, p.is_error) == ("edit", {"path": "a.py"}, False)
    assert (q.function, q.is_error, q.text) == ("edit", True, PATCH_FAIL)


def test_an_edit_is_a_patch_of_the_visible_lines_with_context(tmp_path):
    (tmp_path / "a.py").write_text("".join(f"line {n}\n" for n in range(1, 11)))
    read = ToolCall(id="c1", function="exec_command", arguments={"cmd": read_command("a.py", 2, 6)})
    out = subprocess.run(["bash", "-c", read_command("a.py", 2, 6)], cwd=tmp_path, capture_output=True, text=True,
                         check=True)
    msgs = [ChatMessageAssistant(content="", tool_calls=[read]),
            ChatMessageTool(content=f"Chunk ID: 1\nWall time: 0 seconds\nProcess exited with code 0\nOutput:\n{out.stdout}",
                            tool_call_id="c1")]
    call = codex_call("edit", {"path": "a.py", "edits": [{"oldText": "line 5\nline 6", "newText": "five"}]}, "c2",
                      CODEX_TOOLS, codex_exchanges(msgs))
    assert call.function == "exec_command"
    assert call.arguments["cmd"] == ("apply_patch <<'EOF'\n*** Begin Patch\n*** Update File: a.py\n@@\n"
                                     " line 2\n line 3\n line 4\n-line 5\n-line 6\n+five\n line 7\n*** End Patch\nEOF")
    # a snippet inside a line: the whole line is patched
    call = codex_call("edit", {"path": "a.py", "edits": [{"oldText": "ne 3", "newText": "NE 3"}]}, "c2",
                      CODEX_TOOLS, codex_exchanges(msgs))
    assert "\n line 2\n-line 3\n+liNE 3\n line 4\n" in call.arguments["cmd"]
    shell = codex_call("bash", {"command": "ls tests"}, "c3", [ToolInfo(name="shell", description="", parameters=ToolParams())], [])
    assert shell.arguments == {"command": ["bash", "-lc", "ls tests"]}
    assert shlex.split(codex_call("read", {"path": "x y"}, "c4", CODEX_TOOLS, []).arguments["cmd"]) == ["nl", "-ba", "x y"]


def test_codex_requests_and_prompts():
    assert is_codex_request(CODEX_TOOLS)
    assert not is_codex_request([ToolInfo(name=n, description="", parameters=ToolParams()) for n in ("read", "bash")])
    msgs = [ChatMessageSystem(content="You are a coding agent running in the Codex CLI"),
            ChatMessageUser(content="<environment_context>\n  <cwd>/w</cwd>\n</environment_context>"),
            ChatMessageUser(content="Fix the bug"), ChatMessageUser(content="# AGENTS.md instructions for /w\n..."),
            ChatMessageUser(content="Now run the tests")]
    assert prompt_count(msgs) == 2


def test_the_session_importer_reads_codex_0171_results_and_the_sims_read_forms():
    from readbench.sessions.reads import _shell_read, shell_output

    assert shell_output(EXEC_OK, "exec_command") == "".join(f"{n:>6}\tline {n}\n" for n in range(1, 6))
    assert shell_output(PATCH_OK, "exec_command") == "Success. Updated the following files:\nM a.py\n"
    assert shell_output(_cut(3999, 87, 295), "exec_command").startswith("     1\tline 1\n")
    assert _shell_read("nl -ba a.py") == ("a.py", None, None, False, None)
    assert _shell_read("nl -ba a.py | sed -n '12,$p'") == ("a.py", 12, None, False, None)
    assert _shell_read("nl -ba a.py | sed -n '12,20p'") == ("a.py", 12, 9, False, None)
    assert _shell_read("sed -n '5,$p' a.py") == ("a.py", 5, None, False, None)


def test_the_codex_dialect_is_registered_and_puts_a_request_in_the_sims_terms():
    from readbench.sim.dialect import dialect_for
    from readbench.sim.dialect_codex import DIALECT

    assert dialect_for(CODEX_TOOLS) is DIALECT
    call = ToolCall(id="c1", function="exec_command", arguments={"cmd": "nl -ba a.py | sed -n '1,5p'"})
    msgs = [ChatMessageSystem(content="You are Codex"),
            ChatMessageUser(content="<environment_context>\n  <cwd>/w</cwd>\n</environment_context>"),
            ChatMessageUser(content="Fix the bug"), ChatMessageAssistant(content="", tool_calls=[call]),
            ChatMessageTool(content=EXEC_OK, tool_call_id="c1", function="exec_command")]
    view = DIALECT.to_sim(msgs, CODEX_TOOLS)
    assert [m.role for m in view.messages] == ["system", "user", "assistant", "tool"]
    assert view.messages[2].tool_calls[0].function == "read"
    assert view.messages[2].tool_calls[0].arguments == {"path": "a.py", "offset": 1, "limit": 5}
    assert view.messages[3].text == "".join(f"{n:>6}\tline {n}\n" for n in range(1, 6))
    assert sorted(t.name for t in view.tools) == ["bash", "edit", "read"]
    assert DIALECT.from_sim("read", {"path": "a.py", "offset": 6, "limit": 5}, view.context) == (
        "exec_command", {"cmd": "nl -ba a.py | sed -n '6,10p'"})
    assert DIALECT.from_sim("bash", {"command": "python3 -m pytest -q"}, view.context) == (
        "exec_command", {"cmd": "python3 -m pytest -q"})


RUNNING = ("Chunk ID: 69fe02\nWall time: 10.0006 seconds\nProcess running with session ID 60565\n"
           "Original token count: 164\nOutput:\n........ [ 10%]\n")


def test_a_command_codex_left_running_is_polled_and_perceived_whole():
    from readbench.sim.dialect_codex import DIALECT

    test = ToolCall(id="t", function="exec_command", arguments={"cmd": "python3 -m pytest -q"})
    msgs = [ChatMessageUser(content="Fix the bug"), ChatMessageAssistant(content="", tool_calls=[test]),
            ChatMessageTool(content=RUNNING, tool_call_id="t")]
    view = DIALECT.to_sim(msgs, CODEX_TOOLS)
    assert view.context["wait"] == ("write_stdin", {"session_id": 60565, "chars": ""})
    poll = ToolCall(id="p", function="write_stdin", arguments={"session_id": 60565, "chars": ""})
    done = ("Chunk ID: 1\nWall time: 3.0 seconds\nProcess exited with code 1\nOriginal token count: 9\n"
            "Output:\n.F [100%]\n1 failed\n")
    msgs += [ChatMessageAssistant(content="Waiting", tool_calls=[poll]), ChatMessageTool(content=done, tool_call_id="p")]
    view = DIALECT.to_sim(msgs, CODEX_TOOLS)
    assert "wait" not in view.context
    assert [m.role for m in view.messages] == ["user", "assistant", "tool", "assistant"]
    (ex,) = codex_exchanges(msgs)
    assert (ex.call_id, ex.function, ex.is_error, ex.text) == ("t", "bash", True, "........ [ 10%]\n.F [100%]\n1 failed\n")


def test_codex_context_blocks_are_no_prompts_to_the_scorer():
    from readbench.metrics.scorer import final_replies

    msgs = [ChatMessageSystem(content="You are Codex"),
            ChatMessageUser(content="<environment_context>x</environment_context>", metadata={"harness_context": True}),
            ChatMessageUser(content="Where is it?"), ChatMessageAssistant(content="ANSWER: 1"),
            ChatMessageUser(content="And now?"), ChatMessageAssistant(content="ANSWER: 2")]
    assert final_replies(msgs) == ["ANSWER: 1", "ANSWER: 2"]
    msgs[1].metadata = None  # unmarked, it would open a prompt of its own with no reply
    assert final_replies(msgs) == ["", "ANSWER: 1", "ANSWER: 2"]


def test_dcp_sees_codex_calls_in_pis_names_and_gives_them_back_in_codexs():
    """pi-dcp's frontier pin keeps the latest test run's output (a `bash` verification command); under
    Codex's `exec_command` the pin is missed and the output body replaced. Through the dialect's
    pi_calls the projection sees `bash`, pins it, and the calls go back to Codex unchanged."""
    from readbench.dcp import project
    from readbench.sim.dialect import dialect_for, pi_named

    passing = "".join(f"test_calc.py::test_helper_{i} PASSED\n" for i in range(60)) + "60 passed in 0.1s\n"
    steps = [("python3 -m pytest -v test_calc.py", passing)] + [(f"echo {i}", f"{i}\n") for i in range(12)]
    messages: list = [ChatMessageSystem(content="You are Codex"), ChatMessageUser(content="Fix a.py")]
    for i, (cmd, out) in enumerate(steps):
        messages.append(ChatMessageAssistant(content="", tool_calls=[
            ToolCall(id=f"call_{i}", function="exec_command", arguments={"cmd": cmd})]))
        messages.append(ChatMessageTool(content=f"Chunk ID: {i}\nWall time: 0.1 seconds\nProcess exited with code 0\n"
                                                f"Original token count: 9\nOutput:\n{out}", tool_call_id=f"call_{i}",
                                        function="exec_command"))
    plain = project(messages, "pi-dcp", cwd="/w").messages
    assert [m for m in plain if isinstance(m, ChatMessageTool)][0].text != messages[3].text  # replaced
    named, restore = pi_named(messages, dialect_for(CODEX_TOOLS))
    assert [c.function for m in named if isinstance(m, ChatMessageAssistant) for c in m.tool_calls][:2] == ["bash", "bash"]
    view = restore(project(named, "pi-dcp", cwd="/w").messages)
    first = [m for m in view if isinstance(m, ChatMessageTool)][0]
    assert (first.function, first.text) == ("exec_command", messages[3].text)  # pinned: kept whole
    assert [c for m in view if isinstance(m, ChatMessageAssistant) for c in m.tool_calls] == [
        c for m in messages if isinstance(m, ChatMessageAssistant) for c in m.tool_calls]


def test_of_a_cut_output_only_the_lines_seen_count_as_delivered():
    from readbench.harness.codex_output import parse_codex_output
    from readbench.metrics.reads import read_metrics
    from readbench.sessions.reads import cut_ranges

    body = parse_codex_output(_cut(3999, 87, 295)).body
    assert cut_ranges(body, 1, 3999) == ((1, 87), (3705, 3999))
    assert cut_ranges(body, 101, 3999) == ((101, 187), (3805, 4099))  # a range read from line 101
    assert cut_ranges("     1\tline 1\n", 1, 1) == ()
    call = ToolCall(id="r1", function="exec_command", arguments={"cmd": "nl -ba a.py"})
    details = {"path": "a.py", "offset": None, "limit": None, "first_line": 1, "last_line": 3999, "capped": True,
               "via_shell": True, "content_sha256": ""}
    msgs = [ChatMessageAssistant(content="", tool_calls=[call]),
            ChatMessageTool(content=_cut(3999, 87, 295), tool_call_id="r1", function="exec_command",
                            metadata={"readbench": {**details, "seen": [[1, 87], [3705, 3999]]}})]
    m = read_metrics(msgs)
    assert (m["lines_delivered"], m["capped_reads"], m["blind_reads"], m["files_read"]) == (87 + 295, 1, 1, 1)
    msgs[1].metadata = {"readbench": details}  # without the ranges seen, the whole printed range
    assert read_metrics(msgs)["lines_delivered"] == 3999


def test_a_poll_passes_through_dcps_renaming_unchanged():
    """Every call is in pi_calls' map (a write_stdin poll under its own name): pi_named looks each up
    (a poll once made the bridge answer `invalid_request_error` with the call id, a KeyError)."""
    from readbench.dcp import project
    from readbench.sim.dialect import dialect_for, pi_named

    test = ToolCall(id="t", function="exec_command", arguments={"cmd": "python3 -m pytest -q"})
    poll = ToolCall(id="p", function="write_stdin", arguments={"session_id": 60565, "chars": ""})
    msgs = [ChatMessageSystem(content="You are Codex"), ChatMessageUser(content="Fix the bug"),
            ChatMessageAssistant(content="", tool_calls=[test]), ChatMessageTool(content=RUNNING, tool_call_id="t"),
            ChatMessageAssistant(content="Waiting", tool_calls=[poll]), ChatMessageTool(content=EXEC_OK, tool_call_id="p")]
    named, restore = pi_named(msgs, dialect_for(CODEX_TOOLS))
    assert [c.function for m in named if isinstance(m, ChatMessageAssistant) for c in m.tool_calls] == [
        "bash", "write_stdin"]
    view = restore(project(named, "off", cwd="/w").messages)
    assert [c for m in view if isinstance(m, ChatMessageAssistant) for c in m.tool_calls] == [test, poll]
