"""The perception rule on hand-built message lists (docs/specs/sim-agent.md, "The perception rule")."""

from __future__ import annotations

from inspect_ai.model import ChatMessageAssistant, ChatMessageTool, ChatMessageUser
from inspect_ai.tool import ToolCall, ToolCallError

from readbench.sim.observe import exchanges
from readbench.sim.oracle import parse_oracle
from readbench.sim.perception import file_view, find_snippet, first_missing_line, goal_perceived, whole_file_visible


def _call(cid: str, function: str, **args) -> ChatMessageAssistant:
    return ChatMessageAssistant(content="", tool_calls=[ToolCall(id=cid, function=function, arguments=args)])


def _result(cid: str, function: str, text: str, error: bool = False) -> ChatMessageTool:
    if error:
        return ChatMessageTool(content="", tool_call_id=cid, function=function, error=ToolCallError("unknown", text))
    return ChatMessageTool(content=text, tool_call_id=cid, function=function)


FILE = "\n".join(f"line {i}" for i in range(1, 11)) + "\n"  # T = 11 under pi counting


def test_multi_line_snippet_spanning_two_reads_is_visible_with_its_line():
    msgs = [ChatMessageUser(content="go"),
            _call("a", "read", path="f.py", limit=5), _result("a", "read", "line 1\nline 2\nline 3\nline 4\nline 5"
                                                               "\n\n[6 more lines in file. Use offset=6 to continue.]"),
            _call("b", "read", path="f.py", offset=6),
            _result("b", "read", "line 6\nline 7\nline 8\nline 9\nline 10\n")]
    view = file_view(exchanges(msgs), "f.py")
    assert find_snippet(view, "line 5\nline 6") == 5
    assert find_snippet(view, "line 10\n") == 10  # the phantom 11th line is the empty string
    assert view.total_lines == 11 and whole_file_visible(view)
    assert find_snippet(view, "line 11") is None


def test_numbered_output_is_matched_without_its_prefixes():
    msgs = [_call("a", "read", path="./f.py", offset=3, limit=2),
            _result("a", "read", "     3\tline 3\n     4\tline 4\n\n[7 more lines in file. Use offset=5 to continue.]")]
    view = file_view(exchanges(msgs), "f.py")
    assert view.lines == {3: "line 3", 4: "line 4"}
    assert find_snippet(view, "line 3\nline 4") == 3
    assert first_missing_line(view) == 1 and first_missing_line(view, 3) == 5


def test_a_successful_edit_makes_earlier_results_of_that_file_stale():
    msgs = [_call("a", "read", path="f.py"), _result("a", "read", FILE),
            _call("b", "edit", path="f.py", edits=[{"oldText": "line 3", "newText": "LINE 3"}]),
            _result("b", "edit", "Successfully replaced text in f.py."),
            _call("c", "grep", pattern="line 9", path="f.py"), _result("c", "grep", "f.py:9: line 9")]
    view = file_view(exchanges(msgs), "f.py")
    assert view.lines == {9: "line 9"}
    assert find_snippet(view, "line 4") is None and view.total_lines is None
    # a failed edit changes nothing
    msgs[3] = _result("b", "edit", "Could not find the exact text in f.py.", error=True)
    assert find_snippet(file_view(exchanges(msgs), "f.py"), "line 4") == 4
    # an edit of another file changes nothing either
    msgs[2] = _call("b", "edit", path="g.py", edits=[])
    msgs[3] = _result("b", "edit", "Successfully replaced text in g.py.")
    assert find_snippet(file_view(exchanges(msgs), "f.py"), "line 4") == 4


def test_the_sims_own_edit_record_counts_when_dcp_dropped_the_edit_exchange():
    msgs = [_call("simabcdef01c001", "read", path="f.py"), _result("simabcdef01c001", "read", FILE),
            _call("simabcdef01c003", "read", path="f.py", offset=9, limit=2),
            _result("simabcdef01c003", "read", "line 9\nline 10\n\n[1 more lines in file. Use offset=11 to continue.]")]
    order = {"simabcdef01c001": 1, "simabcdef01c003": 3}.get
    view = file_view(exchanges(msgs), "f.py", mutation_orders=[2], order_of=order)
    assert view.lines == {9: "line 9", 10: "line 10"}


def test_pruned_and_stubbed_results_show_nothing():
    msgs = [_call("a", "read", path="f.py"),
            _result("a", "read", "[DCP: Large output from read(f.py...) pruned due to age (Turn 2). "
                                 "If you need this data again, re-run the tool.]"),
            _call("b", "read", path="f.py"),
            _result("b", "read", "File unchanged since your read of lines 1-11 (call a); that content is already in "
                                 "your context.")]
    view = file_view(exchanges(msgs), "f.py")
    assert view.lines == {} and find_snippet(view, "line 3") is None
    assert view.latest_read.stub_range == (1, 11)


def test_goal_rules_for_edits_questions_and_whole_files():
    msgs = [_call("a", "grep", pattern="line 7", path="f.py"), _result("a", "grep", "f.py:7: line 7")]
    view = file_view(exchanges(msgs), "f.py")
    base = {"task_id": "t", "target_file": "f.py"}
    assert goal_perceived(parse_oracle({**base, "old_text": "line 7", "new_text": "x"}).goals[0], view)
    assert not goal_perceived(parse_oracle({**base, "old_text": "line 7\nline 8", "new_text": "x"}).goals[0], view)
    line_question = parse_oracle({**base, "answer": "7", "target_line": 7}).goals[0]
    assert (line_question.evidence_line, line_question.evidence_text) == (7, None)
    assert goal_perceived(line_question, view)
    assert not goal_perceived(parse_oracle({**base, "answer": "8", "target_line": 8}).goals[0], view)
    assert not goal_perceived(parse_oracle({**base, "answer": "7", "target_line": 7, "whole_file": True}).goals[0],
                              view)


def test_oracle_steps_inherit_file_and_test_command_and_may_be_dataclasses():
    from dataclasses import dataclass

    @dataclass
    class Step:
        kind: str
        answer: str
        target_line: int
        search_key: str

    oracle = parse_oracle({"task_id": "t", "target_file": "f.py", "test_cmd": "make test", "prompts": ["a", "b"],
                           "steps": [{"kind": "fix", "old_text": "x", "new_text": "y", "target_line": 3},
                                     Step("answer", "f.g", 9, "def g(")]})
    fix, locate = oracle.goals
    assert (fix.kind, fix.edits, fix.test_cmd, fix.target_file) == ("edit", (("x", "y"),), "make test", "f.py")
    assert (locate.kind, locate.evidence_text, locate.evidence_line) == ("question", "f.g", 9)
    assert oracle.epoch == 1 and oracle.prompts == ("a", "b")
