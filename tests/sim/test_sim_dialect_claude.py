"""The simulated agent speaking Claude Code's tools (readbench.sim.dialect_claude; issue 24 item 4).

Every Claude Code text below is what Claude Code 2.1.332 returned through inspect's sandbox agent
bridge in the probe recorded in notes/claude.md (paths shortened to /w)."""

from __future__ import annotations

import pytest
from inspect_ai.model import ChatMessageAssistant, ChatMessageSystem, ChatMessageTool, ChatMessageUser
from inspect_ai.tool import ToolCall, ToolCallError, ToolInfo, ToolParams
from inspect_ai.util import Store
from sim_harness import NO_EXPLORATION, oracle

from readbench.sim.dialect import dialect_for
from readbench.sim.dialect_claude import from_sim, to_sim
from readbench.sim.observe import exchanges, parse_grep, parse_read
from readbench.sim.oracle import ORACLE_KEY
from readbench.sim.provider import generate_in_store

SYSTEM = ChatMessageSystem(content="# Environment\n - Primary working directory: /w\n - Is a git repository: false")
CLAUDE_TOOLS = [ToolInfo(name=n, description=f"Claude Code {n}", parameters=ToolParams())
                for n in ("Bash", "Edit", "Glob", "Grep", "Read", "DeferredToolPlaceholder", "Write")]


def _conversation(*steps: tuple[str, dict, str, bool]) -> list:
    messages: list = [SYSTEM, ChatMessageUser(content="Fix a.py")]
    for i, (function, args, text, error) in enumerate(steps):
        messages.append(ChatMessageAssistant(content="", tool_calls=[ToolCall(id=f"toolu_{i}", function=function,
                                                                             arguments=args)]))
        messages.append(ChatMessageTool(content=text, tool_call_id=f"toolu_{i}", function=function,
                                        error=ToolCallError("unknown", text) if error else None))
    return messages


def test_the_dialect_is_picked_by_the_tools_offered():
    assert dialect_for(CLAUDE_TOOLS).name == "claude-code"
    assert dialect_for([ToolInfo(name="read", description="", parameters=ToolParams())]) is None


def test_reads_come_back_in_pi_names_with_the_sims_numbered_form():
    view = to_sim(_conversation(("Read", {"file_path": "/w/a.py", "offset": 2, "limit": 2}, "2\t    return 1\n3\t", False)),
                  CLAUDE_TOOLS)
    assert view.context == {"cwd": "/w"}
    assert [t.name for t in view.tools] == ["bash", "edit", "Glob", "grep", "read", "DeferredToolPlaceholder", "write"]
    (ex,) = exchanges(view.messages)
    assert (ex.function, ex.arguments, ex.text) == ("read", {"path": "a.py", "offset": 2, "limit": 2},
                                                   "     2\t    return 1\n     3\t")
    obs = parse_read(ex.text, ex.is_error, ex.arguments)
    assert obs.lines == {2: "    return 1", 3: ""} and obs.next_offset == 4  # a full page: there may be more


def test_a_token_capped_read_carries_pis_cap_notice_from_claude_codes_partial_view_message():
    lines = "\n".join(f"{n}\trow {n}" for n in range(1, 1029))
    messages = _conversation(("Read", {"file_path": "/w/dense.txt"}, lines, False))
    messages.append(ChatMessageSystem(content=(
        "[Truncated: PARTIAL view — /w/dense.txt: showing lines 1-1028 of 2501 total (51673 tokens, cap 25000). "
        "Call Read with offset=1029 limit=1028 for the next page, or Grep to find a specific section.]")))
    view = to_sim(messages, CLAUDE_TOOLS)
    assert not any(isinstance(m, ChatMessageSystem) and "PARTIAL" in m.text for m in view.messages)
    (ex,) = exchanges(view.messages)
    assert ex.text.endswith("\n\n[Showing lines 1-1028 of 2501. Use offset=1029 to continue.]")
    obs = parse_read(ex.text, ex.is_error, ex.arguments)
    assert (obs.next_offset, obs.total_lines, len(obs.lines), obs.lines[1028]) == (1029, 2501, 1028, "row 1028")


def test_read_past_the_end_is_pis_beyond_eof_error():
    text = ("<system-reminder>Warning: the file exists but is shorter than the provided offset (50). "
            "The file has 7 lines.</system-reminder>")
    (ex,) = exchanges(to_sim(_conversation(("Read", {"file_path": "/w/a.py", "offset": 50}, text, False)),
                             CLAUDE_TOOLS).messages)
    assert ex.is_error and ex.text == "Offset 50 is beyond end of file (7 lines total)"
    assert parse_read(ex.text, ex.is_error, ex.arguments).total_lines == 7


def test_an_unchanged_stub_points_at_the_earlier_read_of_the_file():
    view = to_sim(_conversation(("Read", {"file_path": "/w/a.py"}, "1\tdef f():\n2\t    return 1", False),
                                ("Read", {"file_path": "/w/a.py"}, "File unchanged since last read. The content from "
                                 "the earlier Read tool_result in this conversation is still current.", False)),
                  CLAUDE_TOOLS)
    stub = exchanges(view.messages)[1]
    assert stub.text.startswith("File unchanged since your read of lines 1-2 (call toolu_0);")
    assert parse_read(stub.text, False, stub.arguments).stub_range == (1, 2)


def test_grep_output_is_pis_relative_to_the_search_path():
    view = to_sim(_conversation(
        ("Grep", {"pattern": "x", "path": "/w/sub", "output_mode": "content", "-n": True}, "sub/b.py:1:x = 1", False),
        ("Grep", {"pattern": "def", "path": "/w/a.py", "output_mode": "content", "-n": True, "-C": 1},
         "1:def f():\n2-    return 1\n--\n4-\n5:def g():\n6-    return 3", False),
        ("Grep", {"pattern": "def", "path": "/w", "output_mode": "content", "-n": True, "head_limit": 1},
         "a.py:1:def f():\n\n[Showing results with pagination = limit: 1]", False)), CLAUDE_TOOLS)
    sub, one, paged = exchanges(view.messages)
    assert (sub.arguments, sub.text) == ({"pattern": "x", "literal": True, "path": "sub"}, "b.py:1: x = 1")
    assert parse_grep(sub.text, "sub") == {"sub/b.py": ({1: "x = 1"}, [1])}
    assert one.text == "a.py:1: def f():\na.py-2-     return 1\na.py-4- \na.py:5: def g():\na.py-6-     return 3"
    assert parse_grep(one.text, "a.py")["a.py"][1] == [1, 5]
    assert paged.text == "a.py:1: def f():\n\n[1 matches limit reached. Use limit=2 for more, or refine pattern]"
    assert paged.arguments["limit"] == 1
    (noext,) = exchanges(to_sim(_conversation(("Grep", {"pattern": "all", "path": "/w/Makefile", "output_mode": "content",
                                                        "-n": True}, "3:all: build", False)), CLAUDE_TOOLS).messages)
    assert noext.text == "Makefile:3: all: build"


def test_bash_results_read_as_pis():
    (failed, empty) = exchanges(to_sim(_conversation(
        ("Bash", {"command": "x", "description": "x"}, "Exit code 3\na\nberr", True),
        ("Bash", {"command": "true", "description": "nothing"}, "(Bash completed with no output)", False)),
        CLAUDE_TOOLS).messages)
    assert (failed.text, failed.is_error) == ("a\nberr\n\nCommand exited with code 3", True)
    assert (empty.text, empty.is_error) == ("(no output)", False)


def test_the_sims_calls_become_claude_codes():
    ctx = {"cwd": "/w"}
    assert from_sim("read", {"path": "a.py", "offset": 3, "limit": 10}, ctx) == (
        "Read", {"file_path": "/w/a.py", "offset": 3, "limit": 10})
    assert from_sim("grep", {"pattern": "f(x).y", "path": "src", "literal": True, "limit": 50}, ctx) == (
        "Grep", {"pattern": r"f\(x\)\.y", "output_mode": "content", "-n": True, "path": "/w/src", "head_limit": 50})
    assert from_sim("edit", {"path": "a.py", "edits": [{"oldText": "return 1", "newText": "return 2"}]}, ctx) == (
        "Edit", {"file_path": "/w/a.py", "old_string": "return 1", "new_string": "return 2"})
    assert from_sim("bash", {"command": "python -m pytest -q"}, ctx) == (
        "Bash", {"command": "python -m pytest -q", "description": "python -m pytest -q"})
    with pytest.raises(ValueError, match="one replacement per call; the sim asked for 2"):
        from_sim("edit", {"path": "a.py", "edits": [{"oldText": "a", "newText": "b"}] * 2}, ctx)
    # a literal pattern survives the round trip through Claude Code's regex Grep
    _, args = from_sim("grep", {"pattern": "f(x).y", "literal": True}, ctx)
    (ex,) = exchanges(to_sim(_conversation(("Grep", args, "No matches found", False)), CLAUDE_TOOLS).messages)
    assert ex.arguments == {"pattern": "f(x).y", "literal": True}


def test_the_provider_answers_claude_codes_request_in_claude_codes_tools():
    st = Store()
    st.set(ORACLE_KEY, oracle(search_key="row 00040", old_text="row 00040 value", new_text="row 00040 FIXED",
                              target_line=40))
    first = generate_in_store(st, "sim-pager", NO_EXPLORATION, [SYSTEM, ChatMessageUser(content="Fix it.")], CLAUDE_TOOLS)
    (call,) = first.message.tool_calls
    assert (call.function, call.arguments) == ("Read", {"file_path": "/w/big.py"})
    text = "\n".join(f"{n}\trow {n:05d} value" for n in range(1, 61)) + "\n61\t"
    second = generate_in_store(st, "sim-pager", NO_EXPLORATION, [
        SYSTEM, ChatMessageUser(content="Fix it."), first.message,
        ChatMessageTool(content=text, tool_call_id=call.id, function="Read")], CLAUDE_TOOLS)
    (edit,) = second.message.tool_calls
    assert (edit.function, edit.arguments) == ("Edit", {"file_path": "/w/big.py", "old_string": "row 00040 value",
                                                       "new_string": "row 00040 FIXED"})


def test_a_hook_denial_is_the_hooks_reason_which_the_sim_reads_as_bs_block():
    b = ("File has 2603 lines (38.3KB), over the 2000-line/50.0KB read limit. Read it in ranges, e.g. offset=1 "
         "limit=1000, or grep for what you need first.")
    (ex,) = exchanges(to_sim(_conversation(("Read", {"file_path": "/w/calc.py"}, f"PreToolUse:Read hook error: {b}",
                                            True)), CLAUDE_TOOLS).messages)
    assert (ex.text, ex.is_error) == (b, True)
    obs = parse_read(ex.text, ex.is_error, ex.arguments)
    assert obs.blocked and obs.total_lines == 2603


def test_dcp_pins_claude_codes_latest_test_run_once_its_calls_carry_pis_names():
    """pi-dcp's frontier pin keeps the latest test run's output (a `bash` verification command);
    under Claude Code's own name `Bash` the pin is missed and the output body replaced."""
    from readbench.dcp import project
    from readbench.sim.dialect import pi_named

    passing = "".join(f"test_calc.py::test_helper_{i} PASSED\n" for i in range(60)) + "60 passed in 0.1s"
    steps = [("Bash", {"command": "python3 -m pytest -v test_calc.py", "description": "tests"}, passing, False)]
    steps += [("Bash", {"command": f"echo {i}", "description": "echo"}, str(i), False) for i in range(12)]
    messages = _conversation(*steps)
    plain = project(messages, "pi-dcp", cwd="/w").messages
    assert [m for m in plain if isinstance(m, ChatMessageTool)][0].text != messages[3].text  # replaced
    named, restore = pi_named(messages, dialect_for(CLAUDE_TOOLS))
    assert [c.function for m in named if isinstance(m, ChatMessageAssistant) for c in m.tool_calls][:2] == [
        "bash", "bash"]
    view = restore(project(named, "pi-dcp", cwd="/w").messages)
    first = [m for m in view if isinstance(m, ChatMessageTool)][0]
    assert (first.function, first.text) == ("Bash", messages[3].text)  # pinned: kept whole
    calls = [c for m in view if isinstance(m, ChatMessageAssistant) for c in m.tool_calls]
    assert calls == [c for m in messages
                                               if isinstance(m, ChatMessageAssistant) for c in m.tool_calls]
