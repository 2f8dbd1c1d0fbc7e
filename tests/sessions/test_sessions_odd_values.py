"""Files with values an importer does not foresee (a tester's fuzzing, 2026-12-07): one odd file or
call must not stop the import of the others, and must be named."""

from __future__ import annotations

import json
from pathlib import Path

from readbench.sessions.registry import ImportFailure, load_sessions
from readbench.sessions.synth import write_claude_session

DATA = Path(__file__).parent / "data"


def _codex_with_null_summary(path: Path) -> Path:
    """The repository's Codex rollout with its reasoning summary text redacted to null."""
    lines = (DATA / "codex" / "rollout-current.jsonl").read_text().splitlines()
    out = []
    for line in lines:
        obj = json.loads(line)
        if obj.get("payload", {}).get("type") == "reasoning":
            obj["payload"]["summary"] = [{"type": "summary_text", "text": None}]
        out.append(json.dumps(obj))
    path.write_text("\n".join(out) + "\n")
    return path


def test_an_importer_error_on_one_file_names_it_and_the_other_files_are_imported(tmp_path):
    write_claude_session(tmp_path / "a.jsonl", seed=1, calls=12, prompts=2)
    bad = _codex_with_null_summary(tmp_path / "b.jsonl")
    items = list(load_sessions([tmp_path]))
    sessions = [x for x in items if not isinstance(x, ImportFailure)]
    failures = [x for x in items if isinstance(x, ImportFailure)]
    assert [s.source for s in sessions] == [str(tmp_path / "a.jsonl")]
    assert failures == [ImportFailure(str(bad), "the codex importer could not read this file: TypeError: "
                                                "sequence item 0: expected str instance, NoneType found")]


def _lines(path: Path) -> list[dict]:
    return [json.loads(x) for x in path.read_text().splitlines() if x.strip()]


def _write(path: Path, objs: list[dict]) -> None:
    path.write_text("".join(json.dumps(o) + "\n" for o in objs))


def test_a_claude_code_file_opening_with_many_summary_lines_is_still_claude_code(tmp_path):
    """Claude Code writes the summaries of the project's earlier conversations at the top of a new
    session's file (anthropics/claude-code#2597): 25 of them hid the session from the sniffer."""
    src = write_claude_session(tmp_path / "src.jsonl", seed=2, calls=8, prompts=2)
    head = [{"type": "summary", "summary": f"earlier work {k}", "leafUuid": f"leaf-{k}"} for k in range(25)]
    head += [{"type": "file-history-snapshot", "messageId": f"m{k}", "snapshot": {}} for k in range(5)]
    _write(tmp_path / "s.jsonl", head + _lines(src))
    (session,) = list(load_sessions([tmp_path / "s.jsonl"]))
    assert not isinstance(session, ImportFailure)
    assert session.harness == "claude-code" and len(session.calls) == 8


def _assistant_lines(objs: list[dict]) -> list[dict]:
    return [o for o in objs if o.get("type") == "assistant" and isinstance(o.get("message"), dict)]


def test_one_unreadable_usage_value_leaves_that_call_unpriced_not_the_whole_file(tmp_path):
    objs = _lines(write_claude_session(tmp_path / "src.jsonl", seed=3, calls=8, prompts=2))
    first = _assistant_lines(objs)[0]
    first["message"]["usage"]["output_tokens"] = "lots"
    _write(tmp_path / "s.jsonl", objs)
    (session,) = list(load_sessions([tmp_path / "s.jsonl"]))
    assert not isinstance(session, ImportFailure)
    assert len(session.calls) == 8
    assert session.calls[0].usage is None and all(c.usage is not None for c in session.calls[1:])
    assert any("usage is not a bill (invalid literal for int() with base 10: 'lots')" in w for w in session.issues.warnings)


def test_a_token_count_no_call_is_billed_leaves_the_call_unpriced(tmp_path):
    """1e20 uncached input tokens imported as a bill, then overflowed the replay's int64 column
    and lost the run."""
    objs = _lines(write_claude_session(tmp_path / "src.jsonl", seed=4, calls=8, prompts=2))
    first = _assistant_lines(objs)[0]
    for o in _assistant_lines(objs):  # every line of the first response (a streamed one repeats its usage)
        if o["message"].get("id") == first["message"]["id"]:
            o["message"]["usage"]["input_tokens"] = 10**20
    _write(tmp_path / "s.jsonl", objs)
    (session,) = list(load_sessions([tmp_path / "s.jsonl"]))
    assert not isinstance(session, ImportFailure)
    assert session.calls[0].usage is None
    assert sum(c.usage is None for c in session.calls) == 1
    assert any("BilledUsage.uncached_input_tokens = 100000000000000000000 is more than any one call is billed "
               "(> 100,000,000 tokens)" in w for w in session.issues.warnings)


def test_a_session_the_replay_fails_on_is_named_and_the_file_s_other_work_is_kept(tmp_path, monkeypatch):
    """A replay error other than ValueError (e.g. an OverflowError in a DCP strategy) lost the whole
    run; it is now that session's failure, with the error's type."""
    from readbench.replay import run

    f = write_claude_session(tmp_path / "s.jsonl", seed=5, calls=8, prompts=2)

    def broken(item, options, timings=None):
        raise OverflowError("int too large to convert")

    monkeypatch.setattr(run, "_replay_session", broken)
    results, failures = run.replay_file(str(f), run.ReplayOptions())
    assert results == []
    assert [(x.path, x.reason) for x in failures] == [
        (str(f), "session 'synthetic-5' could not be replayed: OverflowError: int too large to convert")]


def test_a_model_written_line_count_past_any_file_is_capped():
    from readbench.sessions.reads import MAX_LINE_ARG, _int

    assert _int(10**19) == MAX_LINE_ARG == 2**31 - 1
    assert _int("10000000000000000000") == MAX_LINE_ARG
    assert _int(-(10**19)) == -MAX_LINE_ARG
    assert _int(120) == 120 and _int(120.0) == 120 and _int(" 7 ") == 7
    assert _int(True) is None and _int(1.5) is None and _int("²") is None


def test_call_times_that_are_no_date_are_named_once(tmp_path):
    """A pi session with its times in the wrong unit simulated at $176 against a $30 bill, no word."""
    objs = _lines(write_claude_session(tmp_path / "src.jsonl", seed=6, calls=8, prompts=2))
    for o in objs:  # every time 1,000 times too early: milliseconds read as seconds would be the reverse
        if isinstance(o.get("timestamp"), str) and o["timestamp"].startswith("2025-"):
            o["timestamp"] = "1970-01-21" + o["timestamp"][10:]
    _write(tmp_path / "s.jsonl", objs)
    (session,) = list(load_sessions([tmp_path / "s.jsonl"]))
    warned = [w for w in session.issues.warnings if "not a date between 2020 and 2100" in w]
    assert warned == [f"{tmp_path / 's.jsonl'}: call 0 starts at {_iso(session.calls[0].ts_start_seconds)}, not a "
                      "date between 2020 and 2100 (a time in the wrong unit, or a corrupt one?): the gaps between "
                      "calls, and so the simulated cache expiries and cost, are not to be trusted"]
    ok = write_claude_session(tmp_path / "ok.jsonl", seed=6, calls=8, prompts=2)
    (session,) = list(load_sessions([ok]))
    assert not [w for w in session.issues.warnings if "not a date" in w]


def _iso(seconds: float) -> str:
    import datetime as dt

    return dt.datetime.fromtimestamp(seconds, dt.timezone.utc).isoformat(timespec="seconds")
