"""Synthetic sessions (readbench.sessions.synth): valid in both formats, deterministic, the
shape the module promises (tool results ~84 % of context tokens, reads first, capped blind reads,
compactions keep prompts under the threshold)."""

from __future__ import annotations

from inspect_ai.model import ChatMessageTool

from readbench.sessions import load_file
from readbench.sessions.reads import read_calls
from readbench.sessions.synth import session_script, write_claude_session, write_pi_session


def test_same_seed_same_file_and_both_formats_import_the_same_calls(tmp_path):
    a = write_pi_session(tmp_path / "a.jsonl", seed=7, calls=120, prompts=4)
    b = write_pi_session(tmp_path / "b.jsonl", seed=7, calls=120, prompts=4)
    assert a.read_bytes() == b.read_bytes()
    (pi,) = load_file(a)
    (cc,) = load_file(write_claude_session(tmp_path / "c.jsonl", seed=7, calls=120, prompts=4))
    assert (pi.format, cc.format) == ("pi", "claude-code")
    assert len(pi.calls) == len(cc.calls) == 120
    assert [c.usage.cache_read_tokens for c in pi.calls] == [c.usage.cache_read_tokens for c in cc.calls]
    assert pi.issues.malformed_lines == cc.issues.malformed_lines == 0
    steps = session_script(seed=7, calls=120, prompts=4)
    reads = [s for s in steps if s.kind == "call" and s.tool == "read"]
    assert len(read_calls(pi)) == len(read_calls(cc)) == len(reads)
    assert sum(r.blind for r in read_calls(pi)) == sum(1 for s in reads if "offset" not in s.args and "limit" not in s.args)


def test_the_shape_follows_the_public_audit(tmp_path):
    (s,) = load_file(write_pi_session(tmp_path / "s.jsonl", seed=1))
    total = tools = 0
    for ctx in s.contexts:
        for m in ctx:
            n = len(m.text) // 4
            total += n
            tools += n if isinstance(m, ChatMessageTool) else 0
    assert 0.75 <= tools / total <= 0.92  # sessions.md §6: 84 %
    assert max(c.usage.input_tokens for c in s.calls) <= 150_000 + 30_000  # compacted below the threshold + one turn
    assert any(r.capped for r in read_calls(s))
