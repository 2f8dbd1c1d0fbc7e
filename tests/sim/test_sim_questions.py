"""Question goals of the corpus (corpus.md §3.2, §3.4, §3.5): what must be visible before answering."""

from __future__ import annotations

from sim_harness import Workspace, oracle, run_session

# 50 functions of 20 lines + a blank line: f{k} starts at 21k-20; its body holds two returns
SOURCE = "".join(
    f"def f{k}(x):\n" + "".join(f"    x = x + {k * 100 + j}\n" for j in range(16))
    + "    if x:\n        return x\n    return 0\n\n" for k in range(1, 51))


def _question(**fields):
    return oracle(target_file="m.py", test_cmd=None, family="question", **fields)


def test_return_count_needs_the_whole_definition_visible():
    task = _question(search_key="def f40(", answer="2", target_line=820)  # f40: lines 820-839, blank 840
    trace = run_session("sim-diligent", task, Workspace({"m.py": SOURCE}),
                        overrides={"p_grep_first": 1, "window_lines": [5, 5]})
    # a window is at least 21 lines: 813-833, then 799-840; the block ends at line 841 (def f41)
    assert [(f, a.get("offset"), a.get("limit")) for f, a in trace.tool_calls()] == [
        ("grep", None, None), ("read", 813, 21), ("read", 799, 42), ("read", 778, 84)]
    assert trace.outputs[-1].message.text.endswith("\n\nANSWER: 2")


def test_locate_step_needs_the_def_line_and_the_bug_line():
    task = _question(kind="locate", search_key="def f40(", answer="f40", target_line=835)
    trace = run_session("sim-diligent", task, Workspace({"m.py": SOURCE}),
                        overrides={"p_grep_first": 1, "window_lines": [10, 10]})
    assert [f for f, _ in trace.tool_calls()][0] == "grep"
    assert trace.reads() == [(813, 21), (799, 42)]  # the first window shows the def, not the bug line
    assert trace.outputs[-1].message.text.endswith("ANSWER: f40")


LOG = "".join(f"2026-01-01 00:00:{i % 60:02d} {'ERROR billing' if i % 7 == 0 else 'INFO api'} event {i}\n"
              for i in range(1, 2101))  # 300 ERROR billing lines, 2101 lines under pi counting


def test_count_question_is_answered_from_a_complete_search_listing():
    task = oracle(target_file="svc.log", family="log", test_cmd=None, search_key="ERROR billing", answer="300",
                  whole_file=True)
    trace = run_session("sim-diligent", task, Workspace({"svc.log": LOG}), overrides={"p_grep_first": 1})
    assert trace.tool_calls() == [
        ("grep", {"pattern": "ERROR billing", "path": "svc.log", "literal": True}),
        ("grep", {"pattern": "ERROR billing", "path": "svc.log", "literal": True, "limit": 200}),
        ("grep", {"pattern": "ERROR billing", "path": "svc.log", "literal": True, "limit": 400}),
    ]
    assert trace.outputs[-1].message.text.endswith("ANSWER: 300")


def test_count_question_without_search_reads_every_line():
    task = oracle(target_file="svc.log", family="log", test_cmd=None, search_key="ERROR billing", answer="300",
                  whole_file=True)
    trace = run_session("sim-pager", task, Workspace({"svc.log": LOG}))
    first = trace.messages[3].text  # 1,284 lines of 36-44 bytes fit in 51,200 bytes (computed by hand)
    assert first.endswith("\n\n[Showing lines 1-1284 of 2101 (50.0KB limit). Use offset=1285 to continue.]")
    assert trace.reads() == [(None, None), (1285, None)]
    assert trace.outputs[-1].message.text.endswith("ANSWER: 300")


def test_a_wrong_count_in_the_listing_does_not_count_as_evidence():
    task = oracle(target_file="svc.log", family="log", test_cmd=None, search_key="ERROR billing", answer="301",
                  whole_file=True)
    trace = run_session("sim-diligent", task, Workspace({"svc.log": LOG}), overrides={"p_grep_first": 1})
    assert [f for f, _ in trace.tool_calls()][:3] == ["grep", "grep", "grep"]
    assert trace.reads() == [(None, None), (1285, None)]  # falls back to reading the file
    assert trace.outputs[-1].message.text.endswith("ANSWER: 301")  # the oracle's answer, after seeing all


def test_a_map_entry_states_where_a_definition_ends():
    task = _question(search_key="def f40(", answer="2", target_line=820)
    trace = run_session("sim-diligent", task, Workspace({"m.py": SOURCE}, "C"),
                        overrides={"p_grep_first": 0, "p_use_map": 1})
    assert trace.reads() == [(None, None), (820, 20)]  # "def f40 (lines 820-839)": no need to see line 841
    assert trace.outputs[-1].message.text.endswith("ANSWER: 2")
