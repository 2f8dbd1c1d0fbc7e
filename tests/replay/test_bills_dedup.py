"""Issue 22 item 1: a call is billed once per (`message.id`, `requestId`) across all the files of
one Claude Code session (sessions.md §7): sub-agent files (`agent-acompact-*`,
`agent-aside_question-*`) repeat the parent's assistant lines and add calls of their own."""

from __future__ import annotations

import json

from cc_sessions import CCFile, usage
from click.testing import CliRunner

from readbench.sessions import load_sessions
from readbench.sessions.registry import group_session_files, iter_session_files

SID = "5e551011-0000-4000-8000-000000000001"


def _project(tmp_path, *, placeholder_in_main: bool = False):
    """A main file with three calls; an acompact file repeating all three and adding the compaction
    call; an aside-question file repeating the first two and adding one call; a second session
    with one call of its own."""
    proj = tmp_path / "projects" / "-p"
    main = CCFile(SID)
    a = [main.user("read the notes " + "x " * 600)]
    a.append(main.tool("msg_1", "req_1", "toolu_1", "Read", {"file_path": "/p/a.md"}, usage(3, 0, 9000, 30)))
    a.append(main.result("toolu_1", "notes " * 200))
    a.append(main.text("msg_2", "req_2", "They say hi.", usage(4, 9000, 700, 1 if placeholder_in_main else 20)))
    a.append(main.user("thanks"))
    a.append(main.text("msg_3", "req_3", "You're welcome.", usage(5, 9700, 40, 8)))
    main.write(proj / f"{SID}.jsonl")
    compact = CCFile(SID, agent_id="acompact-0a1b2c")
    compact.copy_of(main, a)
    compact.user("Summarise the conversation so far.")
    compact.text("msg_c", "req_c", "Summary: notes read.", usage(6, 9740, 30, 60))
    compact.write(proj / SID / "subagents" / "agent-acompact-0a1b2c.jsonl")
    aside = CCFile(SID, agent_id="aside_question-9f8e")
    aside.copy_of(main, a[:4])
    if placeholder_in_main:  # the copy carries the final output count, the main file the streaming placeholder
        aside.lines[3]["message"]["usage"]["output_tokens"] = 20
    aside.user("what did the notes say?")
    aside.text("msg_q", "req_q", "hi", usage(7, 9700, 25, 3))
    aside.write(proj / SID / "subagents" / "agent-aside_question-9f8e.jsonl")
    other = CCFile("5e551011-0000-4000-8000-000000000002")
    other.user("hello " * 700)
    other.text("msg_o", "req_o", "hi", usage(2, 0, 1500, 2))
    other.write(proj / "5e551011-0000-4000-8000-000000000002.jsonl")
    return tmp_path / "projects"


def test_the_files_of_one_session_are_grouped_by_session_id(tmp_path):
    root = _project(tmp_path)
    groups = group_session_files(list(iter_session_files([root])))
    names = [[p.name for p, _ in g] for g in groups]
    assert names == [[f"{SID}.jsonl", "agent-acompact-0a1b2c.jsonl", "agent-aside_question-9f8e.jsonl"],
                     ["5e551011-0000-4000-8000-000000000002.jsonl"]]


def test_every_call_is_billed_once_across_the_sessions_files(tmp_path):
    root = _project(tmp_path)
    sessions = list(load_sessions([root]))
    by = {s.session_id: s for s in sessions}
    main, compact, aside = by[SID], by["acompact-0a1b2c"], by["aside_question-9f8e"]
    assert [len(s.calls) for s in (main, compact, aside)] == [3, 4, 3]
    assert [sum(c.usage is not None for c in s.calls) for s in (main, compact, aside)] == [3, 1, 1]
    assert [c.billing_id for c in compact.calls] == ["msg_1:req_1", "msg_2:req_2", "msg_3:req_3", "msg_c:req_c"]
    assert {c.billed_in for c in compact.calls[:3] + aside.calls[:2]} == {f"{main.source}#{SID}"}
    assert compact.issues.skipped["call:billed_in_another_copy"] == 3
    assert aside.issues.skipped["call:billed_in_another_copy"] == 2
    used = [c.usage for s in sessions for c in s.calls if c.usage is not None]
    # 3 main calls + the compaction call + the aside call + the other session's call
    assert sum(u.cache_write_tokens for u in used) == 9000 + 700 + 40 + 30 + 25 + 1500
    assert sum(u.output_tokens for u in used) == 30 + 20 + 8 + 60 + 3 + 2
    # the copies still send their requests: the compaction call sends the whole conversation
    assert compact.calls[3].n_messages == 7


def test_the_copy_with_the_larger_token_total_keeps_the_bill(tmp_path):
    root = _project(tmp_path, placeholder_in_main=True)
    by = {s.session_id: s for s in load_sessions([root])}
    main, aside = by[SID], by["aside_question-9f8e"]
    assert main.calls[1].usage is None and main.calls[1].billed_in == f"{aside.source}#aside_question-9f8e"
    assert aside.calls[1].usage.output_tokens == 20 and aside.calls[1].billed_in is None
    assert sum(c.usage is not None for s in by.values() for c in s.calls) == 6


def test_replay_of_the_folder_reports_each_call_once(tmp_path):
    from readbench.replay._cli import replay_cmd

    root = _project(tmp_path)
    res = CliRunner().invoke(replay_cmd, [str(root), "--out", str(tmp_path / "out"), "--json"])
    assert res.exit_code == 0, res.output
    rows = [json.loads(x) for x in res.stdout.splitlines() if x.startswith("{")]
    assert sorted((r["session_id"], r["calls"], r["calls_with_usage"]) for r in rows) == [
        (SID, 3, 3), ("5e551011-0000-4000-8000-000000000002", 1, 1), ("acompact-0a1b2c", 4, 1),
        ("aside_question-9f8e", 3, 1)]
    assert sum(r["billed_tokens"]["cache_write"] for r in rows) == 9000 + 700 + 40 + 30 + 25 + 1500


def _resumed(tmp_path):
    """Claude Code 2.0 on a resume re-writes the earlier responses into the same file without their
    `requestId` (same `message.id`), then goes on."""
    f = CCFile("5e551011-0000-4000-8000-000000000004", version="2.0.2")
    first = [f.user("start " * 600), f.text("msg_r1", "req_r1", "one", usage(3, 0, 3000, 5)),
             f.user("next"), f.text("msg_r2", "req_r2", "two", usage(4, 3000, 100, 6))]
    n = len(f.lines)
    f.copy_of(f, first)
    for row in f.lines[n:]:
        row.pop("requestId", None)
    f.user("after the resume")
    f.text("msg_r3", "req_r3", "three", usage(5, 3100, 50, 7))
    return f.write(tmp_path / "projects" / "-s" / "5e551011-0000-4000-8000-000000000004.jsonl")


def test_a_resumes_copies_without_request_id_are_billed_once(tmp_path):
    (s,) = load_sessions([_resumed(tmp_path)])
    assert [c.billing_id for c in s.calls] == ["msg_r1:req_r1", "msg_r2:req_r2", "msg_r1", "msg_r2", "msg_r3:req_r3"]
    assert [c.usage is not None for c in s.calls] == [True, True, False, False, True]
    assert sum(c.usage.cache_write_tokens for c in s.calls if c.usage) == 3000 + 100 + 50


def test_a_codex_sub_agent_rollout_does_not_bill_the_parent_threads_calls_again(tmp_path):
    from codex_spawn import spawned_rollout

    (s,) = load_sessions([spawned_rollout(tmp_path / "rollout-2026-04-15T11-58-35-sub-1.jsonl")])
    assert [(c.usage is None, c.billed_in) for c in s.calls] == [(True, "codex thread par-1"), (False, None)]
    u = s.calls[1].usage
    assert (u.uncached_input_tokens, u.cache_read_tokens, u.output_tokens) == (600, 900, 20)
    assert s.issues.skipped["token_count:parent_thread"] == 1
