"""The trunk's shadow of one reply (readbench.fork.shadow.shadow_results): which arms' tool
results differ, computed before the trunk executes the reply."""

from __future__ import annotations

import asyncio

from readbench.fork.shadow import ArmShadow, shadow_results
from readbench.read import ReadSession, get_variant

BIG = ("\n".join(f"line {i}" for i in range(3000)) + "\n").encode()
FILES = {"big.py": BIG, "small.py": b"x = 1\n"}


async def _bytes(path):
    if path == "pkg":
        raise IsADirectoryError(path)
    if path not in FILES:
        raise FileNotFoundError(path)
    return FILES[path]


def _arm(key, variant):
    return ArmShadow(key=key, label=key, variant=get_variant(variant), dcp=None, spec=[variant, "off"])


def _shadow(calls, arms):
    return asyncio.run(shadow_results(calls, arms, get_variant("B"), ReadSession(), None, "/w", _bytes))


def test_a_blind_read_of_a_big_file_diverges_only_where_the_block_text_differs():
    s250, dedup = _arm("s250", {"base": "B", "name": "B-s250", "suggest_limit": 250}), _arm("dedup", "B+dedup")
    diverged, trunk = _shadow([{"id": "c1", "function": "read", "arguments": {"path": "big.py"}}], [s250, dedup])
    assert diverged == {"s250": "read c1 of 'big.py' returns another result"}
    assert trunk["c1"].is_error and "offset=1 limit=1000" in trunk["c1"].text
    assert s250.details["c1"] != {} and dedup.session.to_dict() == ReadSession().to_dict()  # a block reads nothing


def test_missing_files_and_directories_answer_alike_and_windows_match():
    s250 = _arm("s250", {"base": "B", "name": "B-s250", "suggest_limit": 250})
    calls = [{"id": "c1", "function": "read", "arguments": {"path": "nope.py"}},
             {"id": "c2", "function": "read", "arguments": {"path": "pkg"}},
             {"id": "c3", "function": "read", "arguments": {"path": "big.py", "offset": 10, "limit": 5}}]
    diverged, trunk = _shadow(calls, [s250])
    assert diverged == {} and list(trunk) == ["c3"]
    assert trunk["c3"].text.startswith("line 9\nline 10\n")
    assert s250.session.has_read("/w/big.py")


def test_a_read_after_a_mutating_call_in_the_same_reply_forks_conservatively():
    s250 = _arm("s250", {"base": "B", "name": "B-s250", "suggest_limit": 250})
    calls = [{"id": "c1", "function": "bash", "arguments": {"command": "echo hi > small.py"}},
             {"id": "c2", "function": "read", "arguments": {"path": "small.py"}}]
    diverged, _ = _shadow(calls, [s250])
    assert diverged == {"s250": "read c2 follows a mutating call in the same reply (conservative)"}


def test_claude_codes_read_before_edit_rule_forks_at_an_edit_of_an_unread_file():
    cc = _arm("cc", "claude-code")
    edit = {"id": "c1", "function": "edit", "arguments": {"path": "small.py", "edits": []}}
    assert _shadow([edit], [cc])[0] == {"cc": "edit c1: the read-before-edit rule answers otherwise"}
    read = {"id": "c0", "function": "read", "arguments": {"path": "small.py"}}
    cc = _arm("cc", "claude-code")
    diverged, _ = _shadow([read, edit], [cc])
    assert "cc" in diverged and diverged["cc"].startswith("read c0")  # claude-code numbers its lines
