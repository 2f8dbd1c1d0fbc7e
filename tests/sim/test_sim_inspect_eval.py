"""End to end through inspect: the sim as ``--model readbench/sim-diligent`` inside readbench's
agent loop (readbench.agent.loop.pi_agent), pi tools and the local sandbox. The checker is a
real test script run in the sandbox after the sample (docs/specs/sim-agent.md: "with nocap on
a small file and sim-diligent, bug-fix tasks succeed (the checker really passes)")."""

from __future__ import annotations

import math
import sys
from pathlib import Path

import pytest
from inspect_ai import Task, eval
from inspect_ai.dataset import Sample
from inspect_ai.model import ChatMessageSystem, ChatMessageUser
from inspect_ai.scorer import Score, Target, accuracy, scorer
from inspect_ai.solver import Generate, TaskState, solver
from inspect_ai.util import sandbox, store

pytest.importorskip("readbench.agent.loop")

from readbench.agent.loop import pi_agent
from readbench.base import store as rbstore

LIB = "".join(f"def f{k}(x):\n    return x + {k}\n\n" for k in range(1, 301))  # 900 lines, f150 at 447
BUGGY = LIB.replace("    return x + 150\n", "    return x - 150\n")
CHECK = "import lib\nassert lib.f150(1) == 151, lib.f150(1)\nprint('ok')\n"
TEST_CMD = "python3 check.py"


@solver
def _setup(oracle: dict):
    async def solve(state: TaskState, generate: Generate) -> TaskState:
        sb = sandbox()
        await sb.write_file("lib.py", BUGGY)
        await sb.write_file("check.py", CHECK)
        cwd = (await sb.exec(["pwd"])).stdout.strip()
        store().set(rbstore.WORKSPACE, {"cwd": cwd, "env": {}, "sandbox": "local",
                                        "rg": str(Path(sys.prefix) / "bin" / "rg")})
        store().set(rbstore.ORACLE, {**oracle, "epoch": state.epoch})
        state.messages = [ChatMessageSystem(content="You are an expert coding assistant."),
                          ChatMessageUser(content=oracle["prompts"][0])]
        return state

    return solve


@scorer(metrics=[accuracy()])
def _checker():
    async def score(state: TaskState, target: Target) -> Score:
        result = await sandbox().exec(["bash", "-c", TEST_CMD])
        return Score(value=1.0 if result.success else 0.0, explanation=result.stdout + result.stderr)

    return score


def _run(model: str, variant: str, tmp_path: Path, **model_args):
    oracle = {"task_id": "lib-f150", "family": "bugfix", "prompts": ["f150 subtracts instead of adding; fix it."],
              "target_file": "lib.py", "search_key": "def f150(", "old_text": "    return x - 150",
              "new_text": "    return x + 150", "target_line": 448, "test_cmd": TEST_CMD}
    task = Task(dataset=[Sample(id="lib-f150", input=oracle["prompts"][0])], setup=_setup(oracle),
                solver=pi_agent(variant=variant, dcp="off", cache_models=["anthropic-5m"]),
                scorer=_checker(), sandbox="local", name="sim_e2e")
    model_args = {"calls_per_prompt": [0, 0], **model_args}  # the sim's own navigation, no exploration
    [log] = eval(task, model=model, log_dir=str(tmp_path), display="none", max_tool_output=0, model_args=model_args)
    return log


def test_diligent_fixes_a_bug_under_nocap_and_the_checker_passes(tmp_path):
    log = _run("readbench/sim-diligent", "nocap", tmp_path)
    assert log.status == "success", log.error
    sample = log.samples[0]
    assert sample.scores["_checker"].value == 1.0, sample.scores["_checker"].explanation
    calls = [c.function for m in sample.messages if m.role == "assistant" for c in (m.tool_calls or [])]
    assert calls[-2:] == ["edit", "bash"]
    assert "read" in calls
    usage = sample.model_usage["readbench/sim-diligent"]
    assert usage.input_tokens > 0 and usage.output_tokens > 0
    # readbench's own log imports as a recorded session (issue 12, sessions.md §4): one call per
    # model event, the exact input sent, the simulated times
    from inspect_ai.log import read_eval_log

    from readbench.sessions import load_file

    (session,) = load_file(log.location)
    resolved = read_eval_log(log.location, resolve_attachments=True).samples[0]
    events = [e for e in resolved.events if e.event == "model"]
    assert (session.format, session.session_id, len(session.calls)) == ("inspect", "sim_e2e:lib-f150:1", len(events))
    assert [[m.text for m in session.request(i)] for i in range(len(events))] == [[m.text for m in e.input] for e in events]
    assert [c.ts_start_seconds for c in session.calls] == [e.output.metadata["sim_ts_start_seconds"] for e in events]
    assert session.calls[0].usage.input_tokens == events[0].output.usage.input_tokens


def test_the_live_loop_and_the_session_replay_see_the_same_context_usage(tmp_path):
    """pi's context usage before each call (the number pi-dcp's pressure band is read from) is the
    same whether the live loop computes it from the model outputs or the DCP replay computes it
    from the run's own log imported as a recorded session (they used to differ: the loop counted
    floor(text / 4) of the messages after the last reply and nothing before the first, the replay
    counted ceil(chars / 4) with tool calls and images, and the reply itself on top of its usage)."""
    from readbench.replay.dcp_cache import _usage
    from readbench.sessions import load_file

    log = _run("readbench/sim-pager", "stock", tmp_path)
    assert log.status == "success", log.error
    live = [c["context_tokens"] for c in log.samples[0].store[rbstore.CALLS]]
    (session,) = load_file(log.location)
    requests = [session.request(i) for i in range(len(session.calls))]
    replayed = [_usage(session, requests, i, 200_000).tokens for i in range(len(session.calls))]
    assert len(live) == len(replayed) > 3
    assert live == replayed
    assert live[0] == sum(math.ceil(len(m.text) / 4) for m in requests[0] if m.role == "user")
    assert all(b > a for a, b in zip(live, live[1:]))  # the history only grows (no DCP)


@pytest.mark.slow
def test_pager_under_stock_also_succeeds_and_reports_simulated_time(tmp_path):
    log = _run("readbench/sim-pager", "stock", tmp_path)
    sample = log.samples[0]
    assert sample.scores["_checker"].value == 1.0, sample.scores["_checker"].explanation
    ends = [e.output.metadata["sim_ts_end_seconds"] for e in sample.events if e.event == "model"]
    assert ends == sorted(ends) and ends[0] > 0


def test_a_request_over_the_context_window_is_not_billed_and_stays_a_context_overflow(tmp_path):
    # nocap returns the whole 900-line file; with a 4,000-token window the next request is rejected
    # (the sim's model_length output). The provider bills nothing for it: the cache simulation
    # covers only the accepted requests, whose prompts are each below the window.
    log = _run("readbench/sim-diligent", "nocap", tmp_path, context_window_tokens=4000, p_grep_first=0)
    sample = log.samples[0]
    assert sample.store[rbstore.STOP_REASON] == "context_overflow"
    outputs = [e.output for e in sample.events if e.event == "model"]
    rejected = [o for o in outputs if o.stop_reason == "model_length"]
    assert len(rejected) == 1 and rejected[0].usage.input_tokens > 4000
    accepted = [o for o in outputs if o.stop_reason != "model_length"]
    metrics = sample.store[rbstore.CACHE_METRICS]
    billed = sum(metrics[f"{k}_anthropic-5m"] for k in ("cache_read_tokens", "cache_write_tokens",
                                                          "uncached_input_tokens"))
    assert 0 < billed < 1.2 * sum(o.usage.input_tokens for o in accepted) < rejected[0].usage.input_tokens
