"""What the real-pi fork tests share (tests/fork/test_fork_pi_e2e.py: the locate task, B's fork;
tests/fork/test_fork_pi_dcp_e2e.py: the bugfix task, obs-mask-5's fork and a workspace restore).

Each module runs its matrix ONCE (a module-scoped fixture, `matrix_runs`): `design: forked` (one pi
trunk, one pi fork eval per arm) and the independent design of the same arms. Its tests then assert
different facts about those runs: the tables are equal (the forked design's pipeline,
readbench.agents.pi_forked) and the matrix's forks make the independent runs' calls. A fork resumed by
hand (`run` with ``fork=...``, readbench.agents.pi_fork) from a trunk run by hand (`run`: its store
keeps the session, sim memories and shadow, which the matrix's trunk drops once its prefix files hold
them) continues exactly as the matrix's independent run of the arm, request by request. Before, the
hand-driven tests (tests/agents/test_pi_fork_e2e.py) ran their own independent runs too, the same pi
runs as the matrix's, and one trunk per test.
"""

from __future__ import annotations

import contextlib
import json
import re
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pandas as pd
import pytest
from click.testing import CliRunner
from corpus_fixture import write_corpus  # tests/e2e, on the path by tests/fork/conftest.py
from inspect_ai import eval as inspect_eval
from inspect_ai.agent import as_solver
from inspect_ai.event import ModelEvent
from inspect_ai.log import list_eval_logs, read_eval_log

from readbench.agents import harness_agent
from readbench.analysis.table import read_table
from readbench.base.store import WORKSPACE
from readbench.corpus import task_index
from readbench.read import get_variant
from readbench.read._session import ReadSession
from readbench.run import task as rb_task
from readbench.run._cli import eval_cmd

#: the matrices' cache models and the task's default turn limit: a hand-run fork prices and limits
#: its calls as the matrix's runs do, so their per-call logs and cache figures compare exactly
CACHE_MODELS = ["anthropic-5m", "openai"]
MAX_TURNS = 80
MATRIX = f"""
name: f
models: [readbench/sim-pager]
agents: [pi]
variants: [stock, B]
dcp: ["off"]
cache_models: [{", ".join(CACHE_MODELS)}]
task_args: {{families: locate}}
max_samples: 1
max_tasks: 1
"""
#: columns that differ between any two runs: ids, paths and wall-clock times (the harness's start-up too)
RUN_COLUMNS = ["run_id", "eval_set_id", "eval_id", "log", "total_time", "working_time", "wall_seconds"]


@contextlib.contextmanager
def matrix_runs(directory: Path, matrix: str) -> Iterator[Path]:
    """In `directory` (the working directory, the tiny corpus as READBENCH_TASKS, READBENCH_CACHE
    left as set: the installed pi pin lives there): `matrix` run forked (run id ``forked``) and
    independently (``indep``); yields `directory`, the environment kept until the context ends."""
    with pytest.MonkeyPatch.context() as mp:
        mp.setenv("READBENCH_TASKS", str(write_corpus(directory)))
        task_index.cache_clear()
        mp.chdir(directory)
        (directory / "m.yaml").write_text(matrix)
        try:
            _eval("--run-id", "forked", "--design", "forked")
            _eval("--run-id", "indep")
            yield directory
        finally:
            task_index.cache_clear()


def _eval(*args: str) -> None:
    r = CliRunner().invoke(eval_cmd, ["--matrix", "m.yaml", "--sandbox", "local", *args])
    assert r.exit_code == 0, r.output


def table(directory: Path, run: str) -> pd.DataFrame:
    """The run's table without the run-specific columns, sorted by arm, sample, epoch."""
    t = read_table(directory / f"results/{run}/table.parquet")
    t = t.drop(columns=[c for c in RUN_COLUMNS if c in t.columns])
    return t.sort_values(["arm", "sample_id", "epoch"]).reset_index(drop=True)


def samples(log_dir: Path, key: str = "variant") -> dict[Any, list[Any]]:
    """Task argument `key` of each log in `log_dir` -> its samples (attachments resolved)."""
    out = {}
    for info in list_eval_logs(str(log_dir)):
        log = read_eval_log(info.name, resolve_attachments=True)
        out[log.eval.task_args[key]] = log.samples
    return out


def run(directory: Path, name: str, variant: str, families: str = "locate", dcp: str = "off", agent: str = "pi",
        sandbox: str = "local", **agent_args: Any) -> Any:
    """One pi sample of the tiny corpus's `families` task run by hand (`harness_agent` with its
    session kept, priced and limited as the matrices are; `agent_args` e.g. ``fork``, ``shadow``,
    ``snapshots``), logs in `directory`/`name`; the sample, attachments resolved."""
    task = rb_task.read_strategies_task(sandbox_kind=sandbox, families=families, variant=variant, dcp=dcp, agent=agent)
    task.solver = as_solver(harness_agent(agent=agent, variant=variant, dcp=dcp, keep_session=True,
                                          cache_models=CACHE_MODELS, max_turns=MAX_TURNS, **agent_args))
    # log_realtime=False: no live-view event buffer (tests/fork/fork_arms.eval_log says why)
    log = inspect_eval(task, model="readbench/sim-pager", log_dir=str(directory / name), display="none",
                       log_realtime=False)[0]
    assert log.status == "success", (name, log.error)
    return read_eval_log(log.location, resolve_attachments=True).samples[0]


def calls(sample: Any) -> list[Any]:
    """Each relayed call as plain data, the sample's working directory written `<cwd>` and unittest's
    run time (`Ran 1 test in 0.001s`, which differs between any two runs) written `<t>`."""
    cwd = sample.store[WORKSPACE]["cwd"]
    out = []
    for e in sample.events:
        if not isinstance(e, ModelEvent):
            continue
        msgs = [(m.role, m.text, getattr(m, "tool_call_id", None),
                 [(c.id, c.function, c.arguments) for c in getattr(m, "tool_calls", None) or []]) for m in e.input]
        reply = e.output.message
        text = json.dumps({"input": msgs, "tools": [t.model_dump() for t in e.tools],
                           "reply": [reply.text, [(c.id, c.function, c.arguments) for c in reply.tool_calls or []]]})
        out.append(json.loads(re.sub(r"(Ran \d+ tests? in )\d+\.\d+s", r"\1<t>s", text.replace(cwd, "<cwd>"))))
    return out


def first_difference(a: list[Any], b: list[Any]) -> tuple[Any, ...]:
    """(call, message index, the two messages) where two lists of `calls` first differ, for a failure's text."""
    for k, (x, y) in enumerate(zip(a, b)):
        if x != y:
            i = next((i for i, (m, n) in enumerate(zip(x["input"], y["input"])) if m != n), None)
            return k, i, (x["input"][i], y["input"][i]) if i is not None else (x["reply"], y["reply"])
    return len(a), len(b)


def b_fork_point(session_text: str, calc: bytes) -> tuple[int, str, str]:
    """(call, tool_call_id, B's text) of the first read B refuses, from the trunk's session file."""
    entries = [json.loads(line) for line in session_text.splitlines()[1:]]
    replies = [e["message"] for e in entries if e.get("type") == "message" and e["message"]["role"] == "assistant"
               and e["message"]["stopReason"] not in ("error", "aborted")]  # a retried request is no call
    for k, reply in enumerate(replies):
        for block in reply["content"]:
            if block["type"] == "toolCall" and block["name"] == "read" and block["arguments"]["path"] == "calc.py":
                a = block["arguments"]
                got = get_variant("B").read(calc, "calc.py", a.get("offset"), a.get("limit"), call_id=block["id"],
                                            session=ReadSession(), visible_call_ids=None)
                if got.details.blocked:
                    return k + 1, block["id"], got.text
    raise AssertionError("B blocks no read of the trunk")
