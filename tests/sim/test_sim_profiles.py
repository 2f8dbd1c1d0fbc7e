"""The profile table (docs/specs/sim-agent.md "Behaviour knobs"): data rows, documented knobs,
overrides, and the per-sample mixture draw."""

from __future__ import annotations

from collections import Counter

import pytest

from readbench.sim.profiles import KNOB_NAMES, get_mixture, get_profile, knob_docs, mixture_names, profile_names
from readbench.sim.provider import choose_profile


def test_table_has_the_spec_profiles_and_mixture():
    assert profile_names() == ["sim-diligent", "sim-pager", "sim-rereader", "sim-stubborn"]
    assert mixture_names() == ["sim-mixed"]
    assert get_mixture("sim-mixed").weights == (
        ("sim-diligent", 0.4), ("sim-pager", 0.25), ("sim-rereader", 0.15), ("sim-stubborn", 0.2))
    assert get_mixture("sim-pager") is None


def test_every_knob_is_documented_with_unit_and_evidence():
    docs = knob_docs()
    assert [d.name for d in docs] == list(KNOB_NAMES)
    assert len(KNOB_NAMES) == 22
    assert all(d.unit and d.meaning and d.evidence for d in docs)
    by_name = {d.name: d for d in docs}
    assert by_name["p_comply_block"].evidence == "Gemini CLI #19066: repeated prompts needed"
    assert by_name["range_chunk_lines"].evidence == "B directive example (limit=1000)"


def test_profiles_differ_where_the_spec_says():
    pager, rereader = get_profile("sim-pager"), get_profile("sim-rereader")
    diligent, stubborn = get_profile("sim-diligent"), get_profile("sim-stubborn")
    assert (pager.p_grep_first, pager.p_follow_paging, pager.p_restart_reread) == (0.0, 1.0, 0.0)
    assert rereader.p_restart_reread == 0.8
    assert (diligent.p_grep_first, diligent.p_comply_block, diligent.p_restart_reread) == (0.9, 0.95, 0.0)
    assert (stubborn.p_comply_block, stubborn.max_block_retries) == (0.15, 3)
    assert pager.window_lines == (100, 300)


def test_overrides_accept_numbers_strings_and_ranges():
    p = get_profile("sim-pager", {"p_grep_first": 0.5, "max_block_retries": "4", "window_lines": "60-120",
                                  "think_tokens": [10, 20], "test_seconds": "2.5"})
    assert (p.p_grep_first, p.max_block_retries, p.window_lines, p.think_tokens, p.test_seconds) == (
        0.5, 4, (60, 120), (10, 20), 2.5)
    assert get_profile("sim-pager").p_grep_first == 0.0  # the table row is untouched


@pytest.mark.parametrize("overrides, message", [
    ({"p_grep": 0.5}, "unknown sim knob 'p_grep'"),
    ({"p_follow_paging": 1.5}, "bad value for knob 'p_follow_paging': 1.5"),
    ({"window_lines": [300, 60]}, "bad value for knob 'window_lines'"),
    ({"max_block_retries": -1}, "bad value for knob 'max_block_retries': -1"),
    ({"range_chunk_lines": 0}, "bad value for knob 'range_chunk_lines': 0"),
    ({"output_tokens_per_second": 0}, "bad value for knob 'output_tokens_per_second': 0"),
    ({"ttft_seconds": "fast"}, "bad value for knob 'ttft_seconds': 'fast'"),
])
def test_bad_overrides_name_the_knob(overrides, message):
    with pytest.raises(ValueError, match=message.replace("(", r"\(").replace("[", r"\[")):
        get_profile("sim-pager", overrides)


def test_unknown_profile_lists_the_known_ones():
    with pytest.raises(ValueError, match="unknown sim profile 'sim-lazy' .known: sim-diligent, sim-pager, "
                                         "sim-rereader, sim-stubborn, sim-mixed."):
        get_profile("sim-lazy")


def test_mixture_draw_is_per_sample_deterministic_and_follows_the_weights():
    draws = [choose_profile("sim-mixed", f"task-{i}", 1) for i in range(4000)]
    assert draws == [choose_profile("sim-mixed", f"task-{i}", 1) for i in range(4000)]
    shares = {k: v / 4000 for k, v in Counter(draws).items()}
    for name, weight in get_mixture("sim-mixed").weights:
        assert abs(shares[name] - weight) < 0.03, (name, shares[name])
    assert choose_profile("sim-pager", "task-1", 1) == "sim-pager"
