"""The hit granularity a user's bills show, in place of the table's (issue 22).

caching.md §2.1 gives gpt-5.5 implicit breakpoints every 2,048 tokens, but every one of 438 real
gpt-5.5 cache reads (pi sessions through `openai-codex`, 2026-05) is a multiple of 512 and 240 of
them are not multiples of 1,024: flooring to 2,048 bills ~1,000 tokens per call as uncached that the
provider read. `infer_granularity` takes the granularity from the billed reads of the fitted calls
(the largest power of two dividing all of them, from 8 reads on) and the simulator floors to it.
Reads below are worked out by hand from §2.1 (whole prompt cached at block boundaries, the hit
floored to the granularity).
"""

from __future__ import annotations

import sys
from pathlib import Path
from types import SimpleNamespace

from readbench.cache.simulate import simulate
from readbench.replay.billing import MIN_GRANULARITY_READS, infer_granularity
from readbench.replay.simulate import SessionSimulator
from readbench.sessions import BilledUsage

sys.path.insert(0, str(Path(__file__).parents[1] / "cache"))
from rb_cache_helpers import blk, req


def _session(reads: list[int], model: str = "gpt-5.5") -> SimpleNamespace:
    """What `infer_granularity` reads of a session: each call's billed usage (300 uncached tokens
    besides the read)."""
    return SimpleNamespace(calls=[SimpleNamespace(model=model, usage=BilledUsage(300, r, 0, 10)) for r in reads])


def test_the_granularity_is_the_largest_power_of_two_dividing_every_billed_read():
    reads = [0, 13312, 14848, 17408, 17920, 19456, 19968, 22016, 28160]  # real gpt-5.5 reads (x 512)
    s = _session(reads)
    models = ["gpt-5.5"] * len(reads)
    assert infer_granularity(s, models, range(len(reads))) == {"gpt-5.5": 512}
    # fewer than 8 non-zero reads: the table's granularity stands
    assert MIN_GRANULARITY_READS == 8
    assert infer_granularity(s, models, range(8)) == {}
    # gpt-5.4 reads in multiples of 128 (one is 5,504 = 43 x 128)
    s4 = _session([5504, 17792, 50432, 105728, 58752, 128768, 81664, 132480])
    assert infer_granularity(s4, ["gpt-5.4"] * 8, range(8)) == {"gpt-5.4": 128}
    # Anthropic reads are exact: no granularity is inferred for it
    sc = _session([4096 * k for k in range(1, 10)], "claude-sonnet-4.6")
    assert infer_granularity(sc, ["claude-sonnet-4.6"] * 9, range(9)) == {}


def test_the_simulator_floors_hits_to_the_inferred_granularity():
    a = [blk("sys", 5000, "system"), blk("u1", 100)]
    b = a + [blk("u2", 100)]
    r0, r1 = req(a, 0.0), req(b, 10.0)
    # the table: gpt-5.5 hits in multiples of 2,048 -> 5,100 cached tokens read as 4,096
    assert simulate([r0, r1], "openai", "gpt-5.5").requests[1].cache_read_tokens == 4096
    sim = SessionSimulator("openai", simulate([r0], "openai", "gpt-5.5").prices_as_of, {"gpt-5.5": 512})
    sim.step("gpt-5.5", r0)
    usage, diag = sim.step("gpt-5.5", r1)
    # 5,100 // 512 x 512 = 4,608; and the diagnosis expects that floor, so the call is a hit
    assert (usage.cache_read_tokens, usage.uncached_input_tokens) == (4608, 5200 - 4608)
    assert diag.reason is None and diag.expected_read_tokens == 5100
