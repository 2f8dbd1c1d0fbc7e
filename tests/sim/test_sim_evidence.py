"""readbench.sim.evidence on a hand-written pi session: every observation counted by hand."""

from __future__ import annotations

import json

from readbench.sessions import load_file
from readbench.sim.evidence import is_test_path, session_evidence
from readbench.sim.shape import shape_of

T0 = 1_764_000_000_000  # ms


def _assistant(n, at_ms, end_ms, text, call=None, output=50, prompt=1000):
    content = [{"type": "text", "text": text}]
    if call:
        content.append({"type": "toolCall", "id": f"c{n}", "name": call[0], "arguments": call[1]})
    return {"type": "message", "timestamp": _iso(end_ms), "message": {
        "role": "assistant", "content": content, "provider": "anthropic", "model": "claude-sonnet-4-5",
        "usage": {"input": prompt, "output": output, "cacheRead": 0, "cacheWrite": 0, "totalTokens": prompt + output},
        "stopReason": "toolUse" if call else "stop", "timestamp": at_ms}}


def _result(n, name, text, error=False):
    return {"type": "message", "timestamp": _iso(T0), "message": {
        "role": "toolResult", "toolCallId": f"c{n}", "toolName": name, "content": [{"type": "text", "text": text}],
        "isError": error, "timestamp": 0}}


def _iso(ms):
    import datetime as dt

    return dt.datetime.fromtimestamp(ms / 1000, dt.timezone.utc).strftime("%Y-%m-%dT%H:%M:%S.%f")[:-3] + "Z"


def _user(text, at_ms):
    return {"type": "message", "timestamp": _iso(at_ms),
            "message": {"role": "user", "content": [{"type": "text", "text": text}], "timestamp": at_ms}}


def _session(tmp_path):
    page = "\n".join(f"line {i}" for i in range(1, 2001))
    lines = [{"type": "session", "id": "s1", "timestamp": _iso(T0), "cwd": "/repo", "provider": "anthropic",
              "modelId": "claude-sonnet-4-5", "thinkingLevel": "off"}]
    t = T0
    steps = [  # prompt 1: list, grep, window read, edit, verify read, test, final
        ("user", "Fix the bug in src/core.py."),
        (("bash", {"command": "ls src"}), "core.py\nutil.py"),
        (("grep", {"pattern": "def parse(", "path": "src/core.py"}), "core.py:4100: def parse(x):"),
        (("read", {"path": "src/core.py", "offset": 4050, "limit": 120}),
         "\n".join(f"l{i}" for i in range(120)) + "\n\n[900 more lines in file. Use offset=4170 to continue.]"),
        (("edit", {"path": "src/core.py", "edits": [{"oldText": "a", "newText": "b"}]}),
         "Successfully replaced 1 block(s) in src/core.py."),
        (("read", {"path": "src/core.py", "offset": 4090, "limit": 40}), "\n".join(f"l{i}" for i in range(40))),
        (("bash", {"command": "python -m pytest tests/test_core.py -q"}), "3 passed"),
        (None, "Done."),
        ("user", "How long is src/util.py?"),  # prompt 2: a blind read that pages, followed, then answer
        (("read", {"path": "src/util.py"}), page + "\n\n[Showing lines 1-2000 of 2500. Use offset=2001 to continue.]"),
        (("read", {"path": "src/util.py", "offset": 2001}), "\n".join(f"line {i}" for i in range(2001, 2501))),
        (None, "ANSWER: 2500"),
    ]
    n = 0
    for step in steps:
        if step[0] == "user":
            t += 60_000
            lines.append(_user(step[1], t))
            continue
        call, text = step
        n += 1
        lines.append(_assistant(n, t, t + 2000, "Working on it." if call else text, call))
        t += 2000
        if call:
            lines.append(_result(n, call[0], text))
            t += 500
    path = tmp_path / "s.jsonl"
    path.write_text("".join(json.dumps(x) + "\n" for x in lines))
    return load_file(path)[0]


def test_hand_counted_observations_of_a_pi_session(tmp_path):
    ev = session_evidence(_session(tmp_path))
    assert ev.calls_per_prompt == [7, 3]
    assert ev.grep_first == [1, 0]  # prompt 1 read core.py after grepping it; prompt 2 read util.py blind
    assert ev.window == [120, 40] and ev.chunk == []
    assert ev.verify == [1]  # the edit was followed by a read of the edited file
    assert ev.follow == [1] and ev.restart == [0]
    assert ev.comply == []
    assert ev.tool_mix == {"bash": 2, "grep": 1, "read": 4, "edit": 1}
    assert ev.explore_tools == {"bash": 1}  # `ls src` touched neither target; the test run is no exploration
    assert ev.before_share == [1 / 7, 0.0]  # one call (ls) before prompt 1 first touched core.py
    assert ev.user_gaps == [60.0]  # the next prompt (and its first call) came 60 s after the final reply ended
    assert (ev.harness, ev.model) == ("pi", "claude-sonnet-4-5")


def test_shape_of_the_same_session(tmp_path):
    shape = shape_of([_session(tmp_path)])
    assert (shape.reads, shape.calls, shape.prompts) == (4, 10, 2)
    assert shape.blind_read_share == 1 / 4
    assert shape.reads_per_file == 2.0
    assert shape.lines_per_read == (120 + 40 + 2000 + 500) / 4
    # the verify read re-delivers 40 lines, but the edit before it started core.py afresh
    assert shape.reread_ratio == 0.0
    assert shape.calls_per_prompt == 5.0


def test_a_read_that_got_no_result_delivered_no_lines(tmp_path):
    # the session ends on a shell read of a range whose result was never recorded (the session
    # stopped): it asked for 5,000 lines (a tester's asked for 300 million, and the shape's set of
    # line numbers ran the machine out of memory) and delivered none, so lines per read are those
    # of the four reads with a result
    path = tmp_path / "s.jsonl"
    session = _session(tmp_path)
    last = json.loads(path.read_text().splitlines()[-1])
    at = last["message"]["timestamp"] + 5000
    extra = _assistant(99, at, at + 1000, "Let me look.", ("bash", {"command": "sed -n '1,5000p' src/util.py"}))
    path.write_text(path.read_text() + json.dumps(extra) + "\n")
    shape = shape_of(load_file(path))
    assert shape.calls == 11 and shape.reads == 5
    assert shape.lines_per_read == (120 + 40 + 2000 + 500) / 4
    assert session.calls  # the fixture itself still loads


def test_test_paths():
    assert is_test_path("tests/test_core.py") and is_test_path("pkg/test/x.py") and is_test_path("conftest.py")
    assert not is_test_path("src/core.py") and not is_test_path("latest.py")
