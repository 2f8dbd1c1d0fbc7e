"""The pi extension readbench writes from a read preset refuses exactly what readbench's own B
refuses, with the same text (GitHub issue 24 item 2), checked by running the extension's hook
under Node.js against files on disk."""

from __future__ import annotations

import json
import shutil
import subprocess

import pytest

from readbench.agents.pi_extension import pi_extension
from readbench.read import get_variant
from readbench.read._session import ReadSession

NODE = shutil.which("node")

_DRIVER = r"""
import ext from "./ext.mjs";
const handlers = {};
ext({ on: (name, fn) => { handlers[name] = fn; } });
const calls = JSON.parse(process.argv[2]);
const out = [];
for (const input of calls) out.push((await handlers["tool_call"]({ toolName: "read", input }, { cwd: process.argv[3] })) ?? null);
console.log(JSON.stringify(out));
"""


def _hook(tmp_path, preset, calls):
    (tmp_path / "ext.mjs").write_text(pi_extension(preset))
    (tmp_path / "driver.mjs").write_text(_DRIVER)
    got = subprocess.run([NODE, "driver.mjs", json.dumps(calls), str(tmp_path)], cwd=tmp_path, capture_output=True,
                         text=True, timeout=60)
    assert got.returncode == 0, got.stderr
    return json.loads(got.stdout)


def _readbench(tmp_path, preset, call):
    v = get_variant(preset)
    data = (tmp_path / call["path"]).read_bytes()
    return v.read(data, call["path"], call.get("offset"), call.get("limit"), call_id="c", session=ReadSession(),
                  visible_call_ids=None)


@pytest.mark.skipif(NODE is None, reason="no node on PATH")
@pytest.mark.parametrize("preset", ["B", {"base": "B", "name": "B-300", "max_lines": 300, "suggest_limit": 120}])
def test_the_hook_blocks_what_readbench_blocks_with_the_same_text(tmp_path, preset):
    (tmp_path / "big.py").write_text("".join(f"line {i} " + "x" * (i % 50) + "\n" for i in range(1, 2501)))
    (tmp_path / "small.py").write_text("a\nb\nc\n")
    (tmp_path / "wide.txt").write_text("short\n" + "y" * 60_000 + "\nend\n")
    calls = [{"path": "big.py"}, {"path": "big.py", "offset": 2400}, {"path": "big.py", "offset": 10, "limit": 250},
             {"path": "small.py"}, {"path": "wide.txt", "offset": 2}, {"path": "wide.txt"}, {"path": "missing.py"},
             {"path": "small.py", "offset": 99}]
    hooked = _hook(tmp_path, preset, calls)
    blocked_any = False
    for call, hook in zip(calls, hooked):
        if call["path"] == "missing.py" or call.get("offset") == 99:
            assert hook is None  # pi's own read reports these errors
            continue
        ours = _readbench(tmp_path, preset, call)
        if ours.details.blocked:
            blocked_any = True
            assert hook == {"block": True, "reason": ours.text}, call
        else:
            assert hook is None, call
    assert blocked_any
    assert hooked[0]["reason"].startswith("File has 2500 lines (")


def test_stock_needs_no_extension_and_other_presets_are_refused():
    assert pi_extension("stock") is None
    for preset in ("A", "B-soft", "C", "claude-code"):
        with pytest.raises(ValueError, match=f"read preset '{preset}' cannot be expressed as a pi extension"):
            pi_extension(preset)


@pytest.mark.skipif(NODE is None, reason="no node on PATH")
def test_the_claude_code_hook_denies_what_readbench_blocks_with_the_same_text(tmp_path):
    """The PreToolUse hook on Read answers deny with B's own text for an over-cap selection and
    nothing otherwise (Claude Code's own Read serves it)."""
    from readbench.agents.claude_hooks import claude_hook, claude_settings

    (tmp_path / "big.py").write_text("".join(f"line {i}\n" for i in range(1, 2501)))
    (tmp_path / "hook.mjs").write_text(claude_hook("B"))
    cases = [({"file_path": str(tmp_path / "big.py")}, True), ({"file_path": "big.py", "offset": 2400}, False),
             ({"file_path": str(tmp_path / "big.py"), "offset": 1, "limit": 2001}, True)]
    for args, denied in cases:
        call = {"tool_name": "Read", "tool_input": args, "cwd": str(tmp_path), "hook_event_name": "PreToolUse"}
        got = subprocess.run([NODE, "hook.mjs"], input=json.dumps(call), cwd=tmp_path, capture_output=True, text=True,
                             timeout=60)
        assert got.returncode == 0, got.stderr
        if not denied:
            assert got.stdout == ""
            continue
        ours = _readbench(tmp_path, "B", {"path": "big.py", "offset": args.get("offset"), "limit": args.get("limit")})
        assert ours.details.blocked
        assert json.loads(got.stdout) == {"hookSpecificOutput": {
            "hookEventName": "PreToolUse", "permissionDecision": "deny", "permissionDecisionReason": ours.text}}
    assert claude_hook("stock") is None
    with pytest.raises(ValueError, match="read preset 'A' cannot be expressed as a Claude Code hook"):
        claude_hook("A")
    assert claude_settings("/opt/readbench/node/bin/node", "/tmp/h.mjs") == {"hooks": {"PreToolUse": [
        {"matcher": "Read", "hooks": [{"type": "command", "command": "/opt/readbench/node/bin/node /tmp/h.mjs"}]}]}}
