"""End to end: the simulated agent in readbench's real loop and scorer -> logs -> table -> report.

Only the corpus lookup is replaced (a one-file task written by the setup solver), so the
scorer's flat metadata contract (readbench/metrics/scorer.py) is exercised as produced, and
the analysis must read it without any hand-built log.
"""

from __future__ import annotations

import sys
import types
from pathlib import Path

import pytest

pytest.importorskip("readbench.agent.loop")

LIB = "".join(f"def f{k}(x):\n    return x + {k}\n\n" for k in range(1, 301))  # 900 lines, f150 at 448
BUGGY = LIB.replace("    return x + 150\n", "    return x - 150\n")
CHECK = "import lib\nassert lib.f150(1) == 151, lib.f150(1)\nprint('ok')\n"
TEST_CMD = "python3 check.py"
ORACLE = {"task_id": "srcA/bugfix/1", "family": "bugfix", "prompts": ["f150 subtracts instead of adding; fix it."],
          "target_file": "lib.py", "search_key": "def f150(", "old_text": "    return x - 150",
          "new_text": "    return x + 150", "target_line": 448, "test_cmd": TEST_CMD}


def _task_factory():
    from inspect_ai import Task, task
    from inspect_ai.dataset import Sample
    from inspect_ai.model import ChatMessageSystem, ChatMessageUser
    from inspect_ai.solver import solver
    from inspect_ai.util import sandbox, store

    from readbench.agent.loop import pi_agent
    from readbench.base import store as rbstore
    from readbench.metrics.scorer import readbench_scorer

    @solver
    def setup():
        async def solve(state, generate):
            sb = sandbox()
            await sb.write_file("lib.py", BUGGY)
            await sb.write_file("check.py", CHECK)
            cwd = (await sb.exec(["pwd"])).stdout.strip()
            store().set(rbstore.WORKSPACE, {"cwd": cwd, "env": {}, "sandbox": "local",
                                            "rg": str(Path(sys.prefix) / "bin" / "rg")})
            store().set(rbstore.ORACLE, {**ORACLE, "epoch": state.epoch})
            state.messages = [ChatMessageSystem(content="You are an expert coding assistant."),
                              ChatMessageUser(content=ORACLE["prompts"][0])]
            return state

        return solve

    @task
    def read_strategies(variant="stock", dcp="off", cache_models="anthropic-5m,openai"):
        sample = Sample(id="srcA/bugfix/1", input=ORACLE["prompts"][0],
                        metadata={"family": "bugfix", "source": "srcA", "file": "lib.py", "file_lines": 900,
                                  "target_line": 448})
        return Task(dataset=[sample], setup=setup(), sandbox="local", name="read_strategies",
                    solver=pi_agent(variant=variant, dcp=dcp, cache_models=cache_models.split(",")),
                    scorer=readbench_scorer())

    return read_strategies


@pytest.mark.slow
def test_sim_logs_make_a_complete_table_and_report(tmp_path, monkeypatch):
    from inspect_ai import eval as inspect_eval

    import readbench.corpus
    from readbench.analysis.report_cli import build_report
    from readbench.analysis.table import BASE_METRICS, CACHE_METRICS, read_table

    check = types.SimpleNamespace(kind="tests", answer=None, answers=[], test_cmd=TEST_CMD, timeout_seconds=120)
    monkeypatch.setattr(readbench.corpus, "get_task", lambda task_id: types.SimpleNamespace(check=check))
    read_strategies = _task_factory()
    logs = inspect_eval([read_strategies("stock", "off"), read_strategies("B", "pi-dcp")],
                        model="readbench/sim-diligent", log_dir=str(tmp_path / "logs"), display="none",
                        max_tool_output=0, epochs=2)
    assert [log.status for log in logs] == ["success", "success"]
    md = build_report(tmp_path)
    df = read_table(tmp_path / "table.parquet")
    assert len(df) == 4 and set(df["arm"]) == {"stock × off @ readbench/sim-diligent",
                                               "B × pi-dcp @ readbench/sim-diligent"}
    assert (df["success"] == 1.0).all() and set(df["stop_reason"]) == {"solved"}
    # every contract metric arrives from the real scorer; `wall_seconds` is not emitted yet
    # (readbench/metrics/scorer.py), so it may be all-NaN until the scorer adds it; the native
    # cost is NaN because readbench has no list price for a simulated agent
    missing = {c for c in BASE_METRICS if df[c].isna().all()}
    assert missing <= {"wall_seconds", "native_cost_usd"}, missing
    assert (df["native_calls"] == df["turns"]).all() and (df["native_input_tokens"] == df["input_tokens"]).all()
    for m in ("anthropic-5m", "openai"):
        assert not df[[f"{n}_{m}" for n in CACHE_METRICS]].isna().any().any()
    assert (df["input_tokens"] > 0).all() and (df["read_calls"] >= 1).all()
    text = md.read_text()
    assert "readbench/sim-diligent is a simulated agent" in text
    assert "| stock × off | 2 (1×2) | 1 | 100.0% | [34.2%, 100.0%] ‡ |" in text  # ‡: one cluster (issue 28)
    assert "| B × pi-dcp | stock × off | 2 (1×2) | 1 | 0 | +0.0 pp |" in text
