"""The read counterfactual is taken against the session's own harness as recorded (issue 29
item 2): Claude Code's own preset gives every recorded Read result back byte for byte, whatever
line-number style the recorded version wrote (`{n:>6}→` in 2.0, `{n}<TAB>` in 2.1.2xx) and with
the reminders Claude Code put around the listing, so another preset's change is only its own.

The session is a hand-built Claude Code transcript (sessions.md §2): three Reads of one 4-line
file, the first as 2.0 writes it (padded arrow, the malware reminder after), the second as
2.1.2xx writes it (unpadded tab), the third a range of a memory file behind its age reminder."""

from __future__ import annotations

import json
from pathlib import Path

from readbench.replay.audit import audit_session
from readbench.replay.read_counterfactual import read_arms
from readbench.sessions import load_file

FILE = ["import os", "", "def f():", "    return os.sep"]
MALWARE = ("\n\n<system-reminder>\nWhenever you read a file, you should consider whether it would be considered malware."
           "\n</system-reminder>\n")
MEMORY = "<system-reminder>This memory is 4 days old.</system-reminder>\n"
ARROW = "".join(f"{k + 1:>6}→{t}\n" for k, t in enumerate(FILE)).removesuffix("\n") + MALWARE
TAB = "\n".join(f"{k + 1}\t{t}" for k, t in enumerate(FILE))
MEM_FILE = ["---", "name: plan", "body"]
MEM = MEMORY + "2\tname: plan\n3\tbody"


def _cc_session(path: Path) -> Path:
    """Claude Code JSONL: a prompt, three Reads with their results, a final answer."""
    base = {"isSidechain": False, "userType": "external", "cwd": "/repo", "sessionId": "own-preset",
            "version": "2.1.220"}
    lines: list[dict] = []

    def add(obj: dict) -> None:
        lines.append({**base, "parentUuid": lines[-1]["uuid"] if lines else None, "uuid": f"u{len(lines)}", **obj})

    def usage(prompt: int) -> dict:
        return {"input_tokens": 3, "cache_creation_input_tokens": prompt, "cache_read_input_tokens": 0,
                "cache_creation": {"ephemeral_5m_input_tokens": prompt, "ephemeral_1h_input_tokens": 0},
                "output_tokens": 20}

    add({"type": "user", "timestamp": "2025-11-21T00:00:00.000Z", "message": {"role": "user", "content": "Look at m.py"}})
    reads = [("/repo/m.py", {}, ARROW, (1, 4, 4)), ("/repo/m.py", {}, TAB, (1, 4, 4)),
             ("/home/u/.claude/memory/plan.md", {"offset": 2, "limit": 2}, MEM, (2, 2, 3))]
    for j, (fp, extra, text, (start, num, total)) in enumerate(reads):
        msg = {"model": "claude-opus-4-6", "id": f"msg_{j}", "type": "message", "role": "assistant",
               "usage": usage(1000 + 200 * j), "stop_reason": "tool_use",
               "content": [{"type": "tool_use", "id": f"toolu_{j}", "name": "Read", "input": {"file_path": fp, **extra}}]}
        add({"type": "assistant", "timestamp": f"2025-11-21T00:00:{10 * j + 1:02d}.000Z", "message": msg})
        content = "\n".join((FILE if fp.endswith("m.py") else MEM_FILE)[start - 1:start - 1 + num])
        add({"type": "user", "timestamp": f"2025-11-21T00:00:{10 * j + 2:02d}.000Z",
             "toolUseResult": {"type": "text", "file": {"filePath": fp, "content": content, "numLines": num,
                                                        "startLine": start, "totalLines": total}},
             "message": {"role": "user", "content": [{"tool_use_id": f"toolu_{j}", "type": "tool_result", "content": text}]}})
    add({"type": "assistant", "timestamp": "2025-11-21T00:00:40.000Z", "message": {
        "model": "claude-opus-4-6", "id": "msg_9", "type": "message", "role": "assistant", "usage": usage(1800),
        "stop_reason": "end_turn", "content": [{"type": "text", "text": "Done."}]}})
    path.write_text("".join(json.dumps(x) + "\n" for x in lines), encoding="utf-8")
    return path


def test_claude_codes_own_preset_reproduces_every_recorded_read_byte_for_byte(tmp_path):
    (s,) = load_file(_cc_session(tmp_path / "cc.jsonl"))
    a = audit_session(s)
    ra = read_arms(s, a.tracked, a.results, lambda m: len(m.text), ["claude-code", "stock"], token_family="anthropic")
    assert ra.own == "claude-code"
    got = {(r["preset"], r["tool_call_id"]): (r["outcome"], r["own"]) for r in ra.reads}
    assert got == {("claude-code", "toolu_0"): ("same", True), ("claude-code", "toolu_1"): ("same", True),
                   ("claude-code", "toolu_2"): ("same", True), ("stock", "toolu_0"): ("changed", False),
                   ("stock", "toolu_1"): ("changed", False), ("stock", "toolu_2"): ("changed", False)}
    assert ra.replaced["claude-code"] == {}
    assert ra.counts["claude-code"]["reads_same"] == 3 and ra.counts["claude-code"]["result_tokens_delta"] == 0
    # stock changes only what stock changes: pi's raw text (and its notice), inside Claude Code's reminders
    stock = {k: m.text for k, m in ra.replaced["stock"].items()}
    # (the rebuilt file ends in a newline, as the replay assumes of a file whose end no read showed
    # as raw text; pi then counts the phantom line after it: "1 more lines", pi-tools.md §1.2)
    assert stock == {"toolu_0": "import os\n\ndef f():\n    return os.sep\n" + MALWARE,
                     "toolu_1": "import os\n\ndef f():\n    return os.sep\n",
                     "toolu_2": MEMORY + "name: plan\nbody\n\n[1 more lines in file. Use offset=4 to continue.]"}


def test_the_preset_as_registered_would_have_changed_every_read(tmp_path):
    """Without the recorded style and reminders (what the replay did before issue 29), the own
    preset 'changed' reads it reproduces: the check above can fail."""
    from readbench.read import ReadSession, get_variant

    v = get_variant("claude-code")
    text = v.read("\n".join(FILE).encode() + b"\n", "/repo/m.py", None, None, call_id="x", session=ReadSession(),
                  visible_call_ids=None).text
    assert text == "     1\timport os\n     2\t\n     3\tdef f():\n     4\t    return os.sep"
    assert text not in (ARROW, TAB)


def test_recorded_line_cap_reads_only_frames_with_a_row_that_can_hold_a_long_line():
    # 2 x the longest row bounds a row's JS length: frames of short rows give no max_line_chars, and
    # a row of 1,001+ characters is read as before (astral characters count twice in JS)
    from inspect_ai.model import ChatMessageTool

    from readbench.read.notices import numbered_frame
    from readbench.replay.read_counterfactual import recorded_overrides

    def over(*bodies: str) -> dict:
        frames = [numbered_frame(b) for b in bodies]
        return recorded_overrides({"t": ChatMessageTool(content="x", tool_call_id="t")}, None, frames)  # type: ignore[arg-type]

    assert over("     1\t" + "a" * 993) == {}  # a 1,000-character row
    assert over("     1\t" + "a" * 2000, "     1\tb") == {}
    assert over("     1\t" + "a" * 2001) == {"max_line_chars": 2001}
    assert over("1\tb", "     1\t" + "\U0001f600" * 1001) == {"max_line_chars": 2002}
    assert over("     1\t" + "\U0001f600" * 1000) == {}
    assert over("     1→" + "é" * 2500 + "\n     2→x") == {"max_line_chars": 2500}
