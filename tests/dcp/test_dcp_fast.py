"""The cached projection (`project`) equals the straightforward one (`project_reference`) call by call.

The agent loop projects a growing history before every model call; `project` reuses per-history
state (`readbench.dcp._cache.ProjectionCache`). These tests replay histories prefix by prefix,
threading the sister's state, and compare every call's messages and statistics.
"""

from __future__ import annotations

from pathlib import Path

import pytest
from dcp_msgs import asst, step, system, tool, user
from dcp_random import random_history

from readbench.bench import synthetic_session
from readbench.dcp import ContextUsage, DcpState, project
from readbench.dcp._cache import ProjectionCache
from readbench.dcp._project import project_reference
from readbench.dcp._sister_common import estimate_message_tokens
from readbench.sessions import load_messages

FIXTURE = Path(__file__).parents[1] / "sessions" / "data" / "pi_session_v3.jsonl"
REQUIRED = ["pi-dcp", "pi-dcp-stable", "pi-dcp-aggressive", "dcp-gated", "obs-mask-5"]
CUSTOM = [
    {"base": "pi-dcp", "name": "tight", "turns": 2, "steps": 1, "min_turn_age": 1, "min_chars": 100},
    {"base": "pi-dcp", "name": "noturn", "turn_protection": False, "steps": 3, "min_chars": 50, "cwd": "/repo"},
    # supersedeWrites with narrow windows, and with the band from usage (it runs only at >= high)
    {"base": "pi-dcp-aggressive", "name": "sw-tight", "turns": 1, "steps": 1, "min_chars": 100, "cwd": "/repo"},
    {"base": "pi-dcp", "name": "sw-banded", "supersede_writes": True, "turns": 2, "steps": 1, "auto_prune": 0.3},
    {"base": "dcp-gated", "name": "open", "gate_mode": "off", "recent_turns": 1, "min_turns_old": 1, "cwd": "/repo"},
    {"base": "dcp-gated", "name": "r05", "recent_turns": 2, "min_chars_saved": 0, "cached_price_ratio": 0.5},
]


def _view(p) -> tuple:
    msgs = [(m.id, m.role, m.text, repr(m.content), repr(getattr(m, "error", None)), repr(getattr(m, "tool_calls", None)))
            for m in p.messages]
    return msgs, p.stats.to_dict(), p.state.to_dict()


def _replay(history: list, config, usage=lambda k: None, start: int = 1) -> int:
    """Compare cached and reference projections of every prefix; returns the calls compared."""
    cache = ProjectionCache()
    fast_state = ref_state = DcpState()
    calls = 0
    for k in range(start, len(history) + 1):
        fast = project(history[:k], config, state=fast_state, usage=usage(k), cache=cache)
        ref = project_reference(history[:k], config, state=ref_state, usage=usage(k))
        assert _view(fast) == _view(ref), f"{config} differs at prefix {k}"
        fast_state, ref_state = fast.state, ref.state
        calls += 1
    return calls


@pytest.mark.parametrize("name", REQUIRED)
def test_synthetic_session_matches_reference_at_every_call(name):
    history = synthetic_session(n_calls=40)
    assert _replay(history, name, usage=lambda k: ContextUsage(650 * k, 200_000), start=2) == 81


def _rich_session() -> list:
    big = "x" * 1300
    msgs = [system("sys"), user("go")]
    msgs += step("c1", "read", {"path": "a.py"}, big)
    msgs += step("c2", "read", {"path": "a.py"}, big)
    msgs += step("e1", "bash", {"command": "pytest " + "-k x " * 60}, "FAILED\n" + big, error=True)
    msgs += [asst("", ("w1", "edit", {"path": "a.py", "oldText": "o" * 300, "newText": "n" * 300}))]
    msgs += [tool("w1", "edit", "Successfully replaced text in a.py." + "." * 300)]
    msgs += step("c3", "read", {"path": "a.py"}, big)
    for i in range(9):
        msgs += [user(f"u{i}"), asst("ok")]
    return msgs + [user("now")]


@pytest.mark.parametrize("name", REQUIRED + CUSTOM[:1])
def test_fixtures_match_reference_at_every_call(name):
    assert _replay(_rich_session(), name, usage=lambda k: ContextUsage(95, 100)) == 31
    assert _replay(load_messages(FIXTURE), name) == len(load_messages(FIXTURE))


@pytest.mark.parametrize("seed", [0, 1, 3])
@pytest.mark.parametrize("config", REQUIRED + CUSTOM, ids=lambda c: c if isinstance(c, str) else c["name"])
def test_random_histories_match_reference_at_every_call(seed, config):
    # seed 3 has reused call ids and orphan results (the fast path falls back there)
    history = random_history(seed, 80, ill_formed=0.05 if seed == 3 else 0.0)
    usage = lambda k: ContextUsage(k * 1000, 100_000) if k % 7 else None  # noqa: E731
    assert _replay(history, config, usage=usage) == len(history)


def test_edited_history_restarts_the_sequence():
    history = synthetic_session(n_calls=30)
    cache = ProjectionCache()
    project(history, "pi-dcp", cache=cache)
    assert len(cache) == 1
    edited = history[:20] + [tool("call_9", "read", "rewritten")] + history[21:]
    fast = project(edited, "pi-dcp", cache=cache)
    assert _view(fast) == _view(project_reference(edited, "pi-dcp"))
    shorter = history[:31]
    assert _view(project(shorter, "pi-dcp", cache=cache)) == _view(project_reference(shorter, "pi-dcp"))
    assert len(cache) == 1  # same first two messages and parameters: one sequence, rebuilt


def test_histories_sharing_a_system_message_are_kept_apart():
    a, b = synthetic_session(n_calls=30), synthetic_session(n_calls=30)
    b[0] = a[0]
    b[5] = tool("call_1", "read", "other output")
    cache = ProjectionCache()
    for k in range(2, 62, 6):  # interleaved calls, as concurrent samples make them
        for h in (a, b):
            assert _view(project(h[:k], "pi-dcp", cache=cache)) == _view(project_reference(h[:k], "pi-dcp"))
    assert len(cache) == 2


def test_cache_is_bounded_and_can_be_disabled():
    cache = ProjectionCache(max_histories=2)
    sessions = [synthetic_session(n_calls=3) for _ in range(3)]
    for s in sessions:
        project(s, "obs-mask-5", cache=cache)
    assert len(cache) == 2
    off = ProjectionCache(max_histories=0)
    p = project(sessions[0], "pi-dcp", cache=off)
    assert len(off) == 0 and _view(p) == _view(project_reference(sessions[0], "pi-dcp"))
    with pytest.raises(ValueError, match="max_histories"):
        ProjectionCache(-1)


def test_unchanged_replacements_are_reused_between_calls():
    history = synthetic_session(n_calls=40)
    cache = ProjectionCache()
    a = project(history[:70], "pi-dcp-stable", cache=cache)
    b = project(history[:72], "pi-dcp-stable", cache=cache)
    assert a.stats.changed_indices[0] == 3
    assert b.messages[3] is a.messages[3] and b.messages[3] is not history[3]


@pytest.mark.parametrize("seed", [0, 1, 3])
@pytest.mark.parametrize("config", ["dcp-gated", CUSTOM[4], CUSTOM[5]], ids=lambda c: c if isinstance(c, str) else c["name"])
def test_gate_candidates_match_reference_at_every_call(seed, config):
    from readbench.dcp import gate_candidates, get_config
    from readbench.dcp._sister import run_sister
    from readbench.dcp._view import PiView

    history = random_history(seed, 80, ill_formed=0.05 if seed == 3 else 0.0)
    params = get_config(config).params
    cache = ProjectionCache()
    state = DcpState()
    seen = 0
    for k in range(1, len(history) + 1):
        fast = gate_candidates(history[:k], config, state=state, cache=cache)
        view = PiView(history[:k])
        ref = run_sister(view, params, state)
        assert fast.candidates == ref.candidates and fast.state == ref.state, f"{config} differs at prefix {k}"
        assert fast.gate.candidates == len(fast.candidates)
        for c in fast.candidates:  # each measured on its own: tail from its own message to the end
            first = view.index.index(c.index)
            assert c.tail_tokens == sum(estimate_message_tokens(view, p) for p in range(first, len(view)))
        state, seen = fast.state, seen + len(fast.candidates)
    assert seen > 0


def test_gate_candidates_need_a_sister_configuration():
    from readbench.dcp import gate_candidates

    with pytest.raises(ValueError, match="sister-family.*'pi-dcp'"):
        gate_candidates(synthetic_session(n_calls=3), "pi-dcp")
