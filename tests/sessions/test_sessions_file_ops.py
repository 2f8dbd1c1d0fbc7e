"""File lines delivered by reads of every harness, the file changes between them, and the file
versions they imply (readbench.sessions.file_ops)."""

from __future__ import annotations

import json

from inspect_ai.model import ChatMessageAssistant, ChatMessageTool, ChatMessageUser
from inspect_ai.tool import ToolCall

from readbench.sessions import Call, Session
from readbench.sessions.file_ops import delivered_lines, file_writes, track_versions
from readbench.sessions.reads import read_calls, shell_output, tool_results


def _session(steps: list[tuple[str, dict, str]], cwd: str = "/repo") -> Session:
    """One call per (tool, arguments, result), a final call with no tool."""
    msgs = [ChatMessageUser(content="go")]
    calls = []
    for k, (tool, args, result) in enumerate(steps):
        out = ChatMessageAssistant(content="", tool_calls=[ToolCall(id=f"t{k}", function=tool, arguments=args)])
        calls.append(Call(k, 0, len(msgs), "claude-sonnet-4-5", output=out))
        msgs += [out, ChatMessageTool(content=result, tool_call_id=f"t{k}", function=tool)]
    calls.append(Call(len(steps), 0, len(msgs), "claude-sonnet-4-5", output=ChatMessageAssistant(content="done")))
    return Session("s.jsonl", "pi", "pi", None, "s", contexts=[msgs], calls=calls, cwd=cwd)


def test_shell_reads_after_cd_and_their_output_fix_the_range():
    s = _session([("bash", {"command": "cd /repo/pkg && sed -n '10,20p' a.py"}, "".join(f"l{k}\n" for k in range(10, 16))),
                  ("bash", {"command": "cat > /tmp/x.py << 'EOF'\nprint(1)\nEOF"}, ""),
                  ("bash", {"command": "nl -ba b.py | sed -n '3,4p'"}, "     3\tthree\n     4\tfour\n")])
    reads = read_calls(s)
    assert [(r.path, r.cd, r.first_line, r.last_line, r.total_lines) for r in reads] == [
        ("a.py", "/repo/pkg", 10, 15, 15),  # sed printed 6 of the 11 lines asked: the file ends at line 15
        ("b.py", None, 3, 4, None)]
    res = tool_results(s)
    assert delivered_lines(reads[0], res["t0"]) == [f"l{k}" for k in range(10, 16)]
    assert delivered_lines(reads[1], res["t2"]) == ["three", "four"]
    tracked, versions = track_versions(s, reads, res)
    assert [v.key for v in versions] == ["/repo/pkg/a.py", "/repo/b.py"]


def test_codex_output_wrappers_are_removed():
    assert shell_output(json.dumps({"output": "a\nb\n", "metadata": {"exit_code": 0}})) == "a\nb\n"
    assert shell_output("Exit code: 0\nWall time: 0.1 seconds\nOutput:\nx\ny") == "x\ny"
    assert shell_output("Total output lines: 3\n\nx\n") == "x\n"


def test_claude_code_numbered_lines_are_the_file_lines():
    s = _session([("Read", {"file_path": "/repo/a.py", "offset": 7, "limit": 2}, "     7→alpha\n     8→\tbeta\n\n"
                   "<system-reminder>remember</system-reminder>")])
    (r,) = read_calls(s)
    assert delivered_lines(r, tool_results(s)["t0"]) == ["alpha", "\tbeta"]


def test_writes_of_every_kind_end_a_file_version():
    s = _session([
        ("edit", {"path": "a.py", "oldText": "x", "newText": "y"}, "ok"),
        ("Write", {"file_path": "/repo/b.py", "content": "z"}, "ok"),
        ("bash", {"command": "cd sub && sed -i 's/a/b/' c.py d.py && echo hi > e.txt 2>/dev/null"}, ""),
        ("bash", {"command": "git checkout main"}, ""),
        ("apply_patch", {"input": "*** Begin Patch\n*** Update File: f.py\n@@\n-a\n+b\n*** End Patch"}, "ok"),
        ("bash", {"command": "grep -n foo a.py | head"}, "1:foo"),
    ])
    got = [(w.tool, w.paths, w.any_file) for w in file_writes(s)]
    assert got == [("edit", ("/repo/a.py",), False), ("Write", ("/repo/b.py",), False),
                   ("bash", ("/repo/sub/c.py", "/repo/sub/d.py", "/repo/sub/e.txt"), False), ("bash", (), True),
                   ("apply_patch", ("/repo/f.py",), False)]


def test_a_changed_line_or_an_edit_starts_a_new_version_and_pi_notices_count_the_phantom_line():
    body = "".join(f"line {k}\n" for k in range(1, 11))
    s = _session([
        ("read", {"path": "a.py", "limit": 3}, "line 1\nline 2\nline 3\n\n[8 more lines in file. Use offset=4 to continue.]"),
        ("read", {"path": "a.py", "offset": 2, "limit": 2}, "line 2\nline 3\n\n[8 more lines in file. Use offset=4 to continue.]"),
        ("read", {"path": "a.py", "offset": 2, "limit": 1}, "LINE 2\n\n[9 more lines in file. Use offset=3 to continue.]"),
        ("edit", {"path": "a.py", "oldText": "LINE", "newText": "line"}, "ok"),
        ("read", {"path": "a.py"}, body),
    ])
    tracked, versions = track_versions(s, read_calls(s), tool_results(s))
    assert [(v.index, new) for _, v, _, new in tracked] == [(0, True), (0, False), (1, True), (2, True)]
    # pi's T = 11 counts the segment after the final newline: the file has 10 lines
    assert versions[0].line_count == 10 and versions[0].lines == {1: "line 1", 2: "line 2", 3: "line 3"}
    assert versions[2].full and versions[2].text() == body


def test_powershell_get_content_reads_through_codexs_shell_command_tool():
    from readbench.sessions.reads import _powershell_read

    assert _powershell_read("Get-Content app\\events\\page.tsx") == ("app\\events\\page.tsx", None, None, False, None)
    assert _powershell_read("Get-Content -Raw C:\\Users\\me\\SKILL.md") == ("C:\\Users\\me\\SKILL.md", None, None, False, None)
    assert _powershell_read("Get-Content -LiteralPath 'app\\[slug]\\page.tsx'") == ("app\\[slug]\\page.tsx", None, None, False, None)
    assert _powershell_read("Get-Content a.ts -TotalCount 40") == ("a.ts", None, 40, False, None)
    assert _powershell_read("gc a.ts -Tail 5") == ("a.ts", None, 5, True, None)
    assert _powershell_read("Get-Content a.ts | Select-Object -Skip 100 -First 50") == ("a.ts", 101, 50, False, None)
    assert _powershell_read("Get-Content a.ts | Select-Object -Last 3") == ("a.ts", None, 3, True, None)
    # anything else is not a read of one range of one file
    for cmd in ("Get-Content a.ts b.ts", "if (Test-Path x) { Get-Content -Raw x }", "Get-Content $HOME\\x",
                "Get-Content a.ts | Select-String foo", "Get-Content a.ts -TotalCount 4 -Tail 2", "Get-ChildItem .",
                "Get-Content -Raw a.ts | Select-Object -First 2", "Get-Content a.ts,b.ts -TotalCount 5",
                "Get-Content src\\*.py", "Get-Content a.ts -TotalCount 5 -TotalCount 50",
                "Get-Content a.ts | Select-Object -First 5 -First 50", "Get-Content -Path a.ts -LiteralPath b.ts",
                "Get-Content a.ts |", "Get-Content a.ts | Select-Object", "Get-Content -Path -Raw",
                "Get-Content a.ts -TotalCount ²"):
        assert _powershell_read(cmd) is None, cmd
