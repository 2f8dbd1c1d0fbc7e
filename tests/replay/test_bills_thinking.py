"""A thinking block recorded empty with a signature carries the reasoning its response was billed
for (issue 22, `readbench.replay.thinking`). Claude Code writes 78 % of its thinking blocks so; the
model received the whole reasoning each time the block was sent back (caching.md §1.1). Counts by
hand: readbench's `anthropic` counts of the recorded text and the billed output tokens.
"""

from __future__ import annotations

import json

from readbench.cache import count_tokens
from readbench.cache.prices import canonical_model
from readbench.replay.billing import billed
from readbench.replay.records import Calibration
from readbench.replay.requests import RequestSet
from readbench.sessions import load_file

WORDS = " ".join(f"w{i}" for i in range(1500))
ARGS = {"path": "a.py"}


def test_a_signed_empty_thinking_block_is_sized_from_its_responses_output_tokens(tmp_path, pi_session):
    f = (pi_session(model="claude-opus-4-6")
         .user(WORDS)
         .assistant("Reading.", 0.0, (3, 0, 2000, 900), calls=(("c1", "read", ARGS),), thinking="")
         .result("c1", "x = 1\n" * 50)
         .assistant("Done.", 10.0, (3, 2000, 300, 40))
         .write(tmp_path / "s.jsonl"))
    (s,) = load_file(f)
    assert billed(s.calls[0]).output_tokens == 900
    fam = "anthropic-legacy"  # Opus 4.6's tokenizer family (models.csv)
    rs = RequestSet(s, fam, [canonical_model(c.model) for c in s.calls])
    tok = lambda t: count_tokens(t, fam)  # noqa: E731
    call = tok("read" + json.dumps(ARGS, separators=(",", ":")))
    thinking = 900 - tok("Reading.") - call  # the output the recorded text and tool call do not explain
    (block,) = [b for b in rs.base[1] if b.kind == "thinking"]
    assert block.tokens == thinking
    assert rs.prompt_tokens(1, Calibration()) == tok(WORDS) + thinking + tok("Reading.") + call + tok("x = 1\n" * 50)
