"""`project_calls` (all configurations over one call sequence, pi-dcp columns shared) equals
threading `project` per configuration with its own cache, call by call (readbench.dcp._many)."""

from __future__ import annotations

import pytest
from dcp_random import random_history

from readbench.bench import synthetic_session
from readbench.dcp import CONFIG_NAMES, ContextUsage, DcpState, ProjectionCache, get_config, project, project_calls

CUSTOM = [
    {"base": "pi-dcp", "name": "tight", "turns": 2, "steps": 1, "min_turn_age": 1, "min_chars": 100},
    # other static protection and cwd: their own shared columns
    {"base": "pi-dcp", "name": "protect-bash", "protected_tools": ("bash",), "cwd": "/repo"},
    {"base": "pi-dcp", "name": "globbed", "protected_file_patterns": ("*.md", "src/**"), "turns": 1, "steps": 1},
    {"base": "pi-dcp", "name": "no-dedup", "deduplicate": False, "turns": 1},
    {"base": "pi-dcp-aggressive", "name": "sw-tight", "turns": 1, "steps": 1, "min_chars": 100, "cwd": "/repo"},
    {"base": "pi-dcp", "name": "sw-banded", "supersede_writes": True, "turns": 2, "steps": 1, "auto_prune": 0.3},
    {"base": "dcp-gated", "name": "open", "gate_mode": "off", "recent_turns": 1, "min_turns_old": 1},
    # twins of "narrow" (readbench.dcp._many._twins): supersedeWrites on always, and from the high band
    {"base": "pi-dcp", "name": "narrow", "turns": 1, "steps": 1, "min_chars": 100},
    {"base": "pi-dcp-aggressive", "name": "narrow-sw", "turns": 1, "steps": 1, "min_chars": 100},
    {"base": "pi-dcp", "name": "narrow-sw-banded", "turns": 1, "steps": 1, "min_chars": 100, "supersede_writes": True,
     "auto_prune": 0.3},
]


def _view(messages: list) -> list:
    return [(m.id, m.role, m.text, repr(m.content), repr(getattr(m, "error", None)), repr(getattr(m, "tool_calls", None)))
            for m in messages]


def _threaded(requests: list, configs: list, usages: list, cwd: str | None) -> dict:
    out = {}
    for spec in configs:
        cache, state, calls = ProjectionCache(max_histories=4), DcpState(), []
        for messages, usage in zip(requests, usages):
            p = project(messages, spec, state=state, usage=usage, cwd=cwd, cache=cache)
            calls.append((_view(p.messages), p.stats.pruned_items, p.stats.footer_tokens_saved))
            state = p.state
        out[get_config(spec).name] = calls
    return out


def _check(requests: list, usages: list, cwd: str | None = None) -> None:
    configs = [*CONFIG_NAMES, *CUSTOM]
    want = _threaded(requests, configs, usages, cwd)
    got = project_calls(requests, configs, usages, cwd=cwd)
    assert list(got) == list(want)
    for name, calls in want.items():
        g = got[name]
        assert [(_view(m), p, s) for m, p, s in zip(g.messages, g.pruned_items, g.footer_tokens_saved)] == calls, name


@pytest.mark.parametrize("seed", [1, 2, 3])
def test_growing_history_with_usage(seed):
    history = random_history(seed, length=90)
    requests = [history[:k] for k in range(1, len(history) + 1)]
    usages = [ContextUsage(900 * k, 60_000) for k in range(len(requests))]
    _check(requests, usages, cwd="/work")


def test_interleaved_histories_restarts_and_empty_calls():
    """Two histories alternating (each continued where it stopped), a truncated list (a fresh
    history), an empty request and unknown usage."""
    a, b = synthetic_session(n_calls=20), random_history(7, length=60)
    requests: list = []
    for k in range(2, 40, 3):
        requests.append(a[:k])
        requests.append(b[: k + 10])
    requests += [[], b[:5], b[:30], a[: len(a)]]
    _check(requests, [None] * len(requests))


def test_unhashable_parameters():
    from readbench.dcp import DcpConfig
    from readbench.dcp._params import PiDcpParams

    history = random_history(4, length=50)
    requests = [history[:k] for k in range(1, len(history) + 1)]
    odd = DcpConfig("odd", "pi-dcp", "pi-dcp", "test", PiDcpParams(protected_tools=["bash"], turns=1))
    want = _threaded(requests, ["pi-dcp", odd], [None] * len(requests), None)
    got = project_calls(requests, ["pi-dcp", odd], [None] * len(requests))
    for name, calls in want.items():
        g = got[name]
        assert [(_view(m), p, s) for m, p, s in zip(g.messages, g.pruned_items, g.footer_tokens_saved)] == calls, name


def test_ill_formed_history_falls_back():
    history = random_history(11, length=80, ill_formed=0.1)
    requests = [history[:k] for k in range(1, len(history) + 1)]
    _check(requests, [ContextUsage(2_000 * k, 100_000) for k in range(len(requests))])


def test_line_count_is_splitlines():
    import random

    from readbench.dcp.strategies.obs_mask import line_count

    rng = random.Random(5)
    alphabet = ["a", "b", " ", "\n", "\r", "\r\n", "\x0b", "\x0c", "\x1c", "\x1d", "\x1e", "\x85", "\u2028", "\u2029", "é"]
    for _ in range(3_000):
        text = "".join(rng.choice(alphabet) for _ in range(rng.randint(0, 12)))
        assert line_count(text) == len(text.splitlines()), repr(text)


def test_same_ignores_ids_only():
    from inspect_ai.model import ChatMessageTool, ContentText

    from readbench.dcp._project import _same

    a = ChatMessageTool(content="out", tool_call_id="c1", function="read")
    assert _same(a, a.model_copy(update={"id": "other"}))
    assert not _same(a, a.model_copy(update={"content": "other"}))
    assert not _same(a, a.model_copy(update={"content": [ContentText(text="out")]}))
    assert not _same(a, a.model_copy(update={"function": "bash"}))
    listed = a.model_copy(update={"content": [ContentText(text="out")]})
    assert _same(listed, listed.model_copy(update={"id": "x", "content": [ContentText(text="out")]}))
