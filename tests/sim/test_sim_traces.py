"""Hand-built traces per profile (docs/specs/sim-agent.md, "Tests the sim must pass"), driven
through the provider with real read variants and fake pi tools (sim_harness)."""

from __future__ import annotations

import pytest
from inspect_ai.model import ChatMessageTool
from sim_harness import TEST_CMD, Workspace, numbered_file, oracle, run_session

BIG = numbered_file(5000)  # "row 00001 value" ... ; T = 5001 under pi counting
FIX = oracle(search_key="row 04500", old_text="row 04500 value", new_text="row 04500 FIXED", target_line=4500)
# two lines: a grep for the key shows only the first, so the sim needs a read of the region
FIX2 = oracle(search_key="row 04500", old_text="row 04500 value\nrow 04501 value",
              new_text="row 04500 FIXED\nrow 04501 value", target_line=4500)
PLACEHOLDER = ("[DCP: Large output from read(big.py...) pruned due to age (Turn 1). "
               "If you need this data again, re-run the tool.]")


def _ws(variant: str = "stock", fixed: str | None = "row 04500 FIXED") -> Workspace:
    return Workspace({"big.py": BIG}, variant, fixed=fixed)


def _calls(trace):
    return [(f, {k: v for k, v in a.items() if k != "edits"}) for f, a in trace.tool_calls()]


def test_pager_under_stock_pages_to_the_target_before_acting():
    ws = _ws()
    trace = run_session("sim-pager", FIX, ws, overrides={"p_verify_reread": 0})
    assert _calls(trace) == [
        ("read", {"path": "big.py"}),
        ("read", {"path": "big.py", "offset": 2001}),
        ("read", {"path": "big.py", "offset": 4001}),
        ("edit", {"path": "big.py"}),
        ("bash", {"command": TEST_CMD}),
    ]
    assert trace.tool_calls()[3][1]["edits"] == [{"oldText": "row 04500 value", "newText": "row 04500 FIXED"}]
    assert "row 04500 FIXED" in ws.files["big.py"]
    final = trace.outputs[-1]
    assert final.message.tool_calls is None and final.stop_reason == "stop"
    assert final.message.text.startswith("Done: the change to big.py is in place.")


@pytest.mark.parametrize("comply, expected_blind", [(0.0, 4), (1.0, 1)])
def test_stubborn_repeats_the_blocked_blind_read_then_reads_ranges(comply, expected_blind):
    trace = run_session("sim-stubborn", FIX, _ws("B"), overrides={
        "p_comply_block": comply, "p_grep_first": 0, "p_follow_paging": 1, "p_verify_reread": 0,
        "p_restart_reread": 0})
    ranges = [(1, 1000), (1001, 1000), (2001, 1000), (3001, 1000), (4001, 1000)]
    assert trace.reads() == [(None, None)] * expected_blind + ranges  # max_block_retries = 3
    assert [f for f, _ in trace.tool_calls()][-2:] == ["edit", "bash"]
    blocked = [m for m in trace.messages if isinstance(m, ChatMessageTool) and m.error is not None]
    assert len(blocked) == expected_blind
    assert blocked[0].error.message == ("File has 5000 lines (78.1KB), over the 2000-line/50.0KB read limit. "
                                        "Read it in ranges, e.g. offset=1 limit=1000, or grep for what you need first.")


def _prune_first_result_of(call_number: int):
    """A projection that replaces the result of the sim's ``call_number``-th call by a DCP placeholder
    from the moment it appears on (sticky, like pi-dcp)."""
    def project(messages):
        out, seen = [], 0
        for m in messages:
            if isinstance(m, ChatMessageTool):
                seen += 1
                if seen == call_number:
                    m = m.model_copy(update={"content": PLACEHOLDER})
            out.append(m)
        return out
    return project


def test_target_pruned_by_dcp_is_read_again_before_the_edit():
    overrides = {"p_grep_first": 1, "p_verify_reread": 0}
    plain = run_session("sim-diligent", FIX2, _ws(), overrides=overrides)
    pruned = run_session("sim-diligent", FIX2, _ws(), overrides=overrides, project=_prune_first_result_of(2))
    window = plain.tool_calls()[1]
    assert [f for f, _ in plain.tool_calls()] == ["grep", "read", "edit", "bash"]
    assert pruned.tool_calls()[:4] == [plain.tool_calls()[0], window, window, plain.tool_calls()[2]]
    assert window[1]["offset"] <= 4500 < window[1]["offset"] + window[1]["limit"]


def test_naive_dedup_stub_over_pruned_text_makes_the_sim_print_the_range():
    overrides = {"p_grep_first": 1, "p_verify_reread": 0}
    trace = run_session("sim-diligent", FIX2, _ws("B+dedup-naive"), overrides=overrides,
                        project=_prune_first_result_of(2))
    (_, grep), (_, first), (_, again), (_, sed), (edit, _), (test, _) = trace.tool_calls()
    assert first == again
    stubs = [m.text for m in trace.messages if isinstance(m, ChatMessageTool) and m.text.startswith("File unchanged")]
    start, end = first["offset"], first["offset"] + first["limit"] - 1
    first_id = trace.outputs[1].message.tool_calls[0].id
    assert stubs == [f"File unchanged since your read of lines {start}-{end} (call {first_id});"
                     " that content is already in your context."]
    assert sed == {"command": f"sed -n '{start},{end}p' big.py"}
    assert (edit, test) == ("edit", "bash")


def test_context_aware_dedup_serves_text_when_the_copy_was_pruned():
    overrides = {"p_grep_first": 1, "p_verify_reread": 0}
    trace = run_session("sim-diligent", FIX2, _ws("B+dedup"), overrides=overrides, project=_prune_first_result_of(2))
    assert [f for f, _ in trace.tool_calls()] == ["grep", "read", "read", "edit", "bash"]


def test_failing_tests_make_the_sim_reinspect_the_changed_file_then_give_up():
    trace = run_session("sim-pager", FIX, _ws(fixed="never present"), overrides={"p_verify_reread": 0})
    calls = trace.tool_calls()
    assert [f for f, _ in calls] == ["read", "read", "read", "edit", "bash", "read"]
    offset, limit = calls[5][1]["offset"], calls[5][1]["limit"]
    assert offset <= 4500 < offset + limit  # its earlier reads are stale after its own edit
    assert trace.outputs[-1].message.text.startswith("I could not complete this (tests fail).")


def test_a_request_over_the_context_window_returns_the_overflow_output():
    trace = run_session("sim-pager", FIX, _ws(), overrides={"context_window_tokens": 5000})
    assert len(trace.outputs) == 2
    last = trace.outputs[-1]
    assert last.stop_reason == "model_length" and last.message.tool_calls is None and last.message.text == ""
    assert last.metadata["context_overflow"] is True
    assert last.usage.input_tokens > 5000 and last.usage.output_tokens == 0
    assert trace.outputs[0].usage.input_tokens < 5000


def test_map_user_jumps_to_the_definition_in_variant_c():
    source = "".join(f"def f{k}(x):\n" + "".join(f"    x = x + {k * 100 + j}\n" for j in range(18))
                     + "    return x\n\n" for k in range(1, 51))  # f40 spans lines 820-839
    task = oracle(target_file="m.py", search_key="x + 4009", old_text="    x = x + 4009",
                  new_text="    x = x - 4009", target_line=830)
    trace = run_session("sim-diligent", task, Workspace({"m.py": source}, "C", fixed="x - 4009"),
                        overrides={"p_grep_first": 0, "p_use_map": 1, "p_verify_reread": 0})
    assert _calls(trace) == [("read", {"path": "m.py"}), ("read", {"path": "m.py", "offset": 820, "limit": 20}),
                             ("edit", {"path": "m.py"}), ("bash", {"command": TEST_CMD})]


def test_rereader_restarts_from_line_one_in_chunks_after_paging():
    trace = run_session("sim-rereader", FIX, _ws(), overrides={"p_restart_reread": 1, "p_verify_reread": 0})
    assert trace.reads() == [(None, None), (2001, None), (4001, None),
                             (1, 1000), (1001, 1000), (2001, 1000), (3001, 1000), (4001, 1000)]


def test_line_question_is_answered_after_seeing_the_line():
    task = oracle(family="question", search_key="row 04500", answer="4500", target_line=4500, test_cmd=None)
    trace = run_session("sim-diligent", task, _ws(), overrides={"p_grep_first": 1})
    assert [f for f, _ in trace.tool_calls()] == ["grep", "read"]
    assert trace.outputs[-1].message.text.splitlines()[-1] == "ANSWER: 4500"


@pytest.mark.parametrize("variant, reads", [
    ("stock", [(None, None), (2001, None), (4001, None)]),
    ("B", [(None, None), (1, 1000), (1001, 1000), (2001, 1000), (3001, 1000), (4001, 1000)]),
])
def test_whole_file_question_needs_every_line(variant, reads):
    task = oracle(family="count", answer="5000", whole_file=True, test_cmd=None, evidence="row 05000 value")
    trace = run_session("sim-pager", task, _ws(variant), overrides={"p_comply_block": 1})
    assert trace.reads() == reads
    assert trace.outputs[-1].message.text.endswith("\n\nANSWER: 5000")


def test_multi_prompt_second_goal_rereads_the_file_its_first_goal_edited():
    step2 = {"answer": "00100", "evidence": "row 00100 value", "target_line": 100, "test_cmd": None}
    task = oracle(prompts=["Fix the bug.", "What is the id on row 100?"],
                  steps=[{k: FIX[k] for k in ("search_key", "old_text", "new_text", "target_line")}, step2])
    trace = run_session("sim-pager", task, _ws(), overrides={"p_verify_reread": 0})
    assert trace.reads() == [(None, None), (2001, None), (4001, None), (None, None)]
    assert trace.outputs[-1].message.text.endswith("ANSWER: 00100")
    gap = trace.outputs[6].metadata["sim_ts_start_seconds"] - trace.outputs[5].metadata["sim_ts_end_seconds"]
    assert gap == pytest.approx(45.0)  # user_gap_seconds before the second prompt, no tool ran


def test_multi_prompt_second_question_on_an_unchanged_file_needs_no_read():
    task = oracle(prompts=["Q1", "Q2"], test_cmd=None, steps=[
        {"answer": "a", "evidence": "row 00010 value", "target_line": 10},
        {"answer": "b", "evidence": "row 01999 value", "target_line": 1999}])
    trace = run_session("sim-pager", task, _ws())
    assert trace.reads() == [(None, None)]
    assert [o.message.text.splitlines()[-1] for o in trace.outputs[1:]] == ["ANSWER: a", "ANSWER: b"]


def test_only_offered_tools_are_called():
    from sim_harness import tool_infos

    no_grep = run_session("sim-diligent", FIX2, _ws(), overrides={"p_grep_first": 1, "p_verify_reread": 0},
                          tools=tool_infos("stock", ("read", "bash", "edit", "write")))
    assert no_grep.tool_calls()[0] == ("bash", {"command": "grep -n -F -e 'row 04500' -- big.py"})
    assert [f for f, _ in no_grep.tool_calls()][1:] == ["read", "edit", "bash"]
    no_edit = run_session("sim-pager", FIX, _ws(), tools=tool_infos("stock", ("read", "bash")))
    assert [f for f, _ in no_edit.tool_calls()] == ["read", "read", "read"]
    assert no_edit.outputs[-1].message.text.startswith("I could not complete this (no edit tool).")


def test_grep_hit_choice_is_the_definition_enclosing_the_target():
    lines = [f"# filler {i}" for i in range(1, 61)]
    lines[9] = "    def __init__(self):"  # line 10: the method holding the bug
    lines[44] = "        self.x = 1 + 1"  # line 45: the bug
    lines[49] = "    def __init__(self, y):"  # line 50: another class's method
    task = oracle(target_file="c.py", search_key="def __init__(", old_text="        self.x = 1 + 1",
                  new_text="        self.x = 1", target_line=45, test_cmd=None)
    trace = run_session("sim-diligent", task, Workspace({"c.py": "\n".join(lines) + "\n"}),
                        overrides={"p_grep_first": 1, "window_lines": [5, 5], "p_verify_reread": 0})
    assert trace.reads() == [(3, 21), (1, 42), (1, 84)]  # around line 10, widened until line 45 shows
    assert [f for f, _ in trace.tool_calls()] == ["grep", "read", "read", "read", "edit"]


def test_same_state_intact_input_edits_pruned_input_reads_again():
    import copy

    from inspect_ai.util import Store
    from sim_harness import tool_infos

    from readbench.sim.provider import generate_in_store

    overrides = {"p_grep_first": 1, "p_verify_reread": 0}
    trace = run_session("sim-diligent", FIX2, _ws(), overrides=overrides, max_calls=2)
    window = trace.tool_calls()[1]
    assert [f for f, _ in trace.tool_calls()] == ["grep", "read"]
    intact = trace.messages
    pruned = [m.model_copy(update={"content": PLACEHOLDER}) if m is intact[-1] else m for m in intact]

    def next_call(messages):
        st = Store(copy.deepcopy(dict(trace.store.items())))
        out = generate_in_store(st, "sim-diligent", overrides, messages, tool_infos("stock"))
        return out.message.tool_calls[0].function, out.message.tool_calls[0].arguments

    assert next_call(intact)[0] == "edit"
    assert next_call(pruned) == window


def test_rereader_under_c_continues_after_the_cut_it_was_shown():
    trace = run_session("sim-rereader", FIX, _ws("C"),
                        overrides={"p_restart_reread": 1, "p_verify_reread": 0, "p_use_map": 0})
    pages = [(None, None)] + [(o, None) for o in range(401, 4402, 400)]  # C cuts every read to 400 lines
    restart = [(o, 1000) for o in range(1, 4402, 400)]  # 1000-line ranges cut to 400: the next starts at +400
    assert trace.reads() == pages + restart


def test_exploration_fills_each_prompt_without_touching_the_target_or_running_tests():
    """readbench.sim.explore: calls per prompt reach the drawn count, exploration never reads,
    greps or lists the target file nor runs the test command, and the sim's own calls on the
    target are the same as without exploration (its draws do not count exploration calls)."""
    files = {"big.py": numbered_file(5000).replace("row 04500 value", "row 04500 BUG"),
             "tests/test_target.py": "def test_big():\n    assert 'row 04500 FIXED' in open('big.py').read()\n"}
    task = oracle(search_key="row 04500", old_text="row 04500 BUG", new_text="row 04500 FIXED", target_line=4500)
    plain = run_session("sim-pager", task, Workspace(dict(files), "stock", fixed="row 04500 FIXED"))
    knobs = {"calls_per_prompt": [12, 12], "explore_before_share": 0.5,
             "explore_tools": {"read": 0.4, "grep": 0.3, "bash": 0.3}}
    explored = run_session("sim-pager", task, Workspace(dict(files), "stock", fixed="row 04500 FIXED"), overrides=knobs)
    def own(trace):
        return [(f, a) for f, a in trace.tool_calls() if a.get("path") == "big.py" or a.get("command") == TEST_CMD]
    assert own(explored) == own(plain)
    # 12 calls drawn, 6 of them before locating; the pager's own work (3 pages, edit, verify read,
    # test run) already takes the prompt past 12, so nothing is added after it
    assert len(own(plain)) == 6 and len(explored.outputs) == 6 + 6 + 1
    extra = [(f, a) for f, a in explored.tool_calls() if (f, a) not in own(plain)]
    assert len(extra) == 6
    assert all("big.py" not in str(a.get("path", "")) and a.get("command") != TEST_CMD for _, a in extra)
    assert [f for f, _ in explored.tool_calls()][:6] == [f for f, _ in extra]
