"""What the forked-design tests that run trunks and forks by hand share: the simulated agent, the
four arms of the B trunk (B itself, B-s250 which leaves it at the first blocked read, B x pi-dcp,
stock with another tool schema), one eval at a time, and the per-sample comparison of a fork with
an independent run."""

from __future__ import annotations

import math
from typing import Any

from inspect_ai import eval as inspect_eval
from inspect_ai.log import EvalLog, read_eval_log

MODEL = "readbench/sim-pager"
#: B with a smaller suggested range: same tool schema as B, so it shares B's trunk
B_S250 = {"base": "B", "name": "B-s250", "suggest_limit": 250}
ARMS = [["B", "off"], [B_S250, "off"], ["B", "pi-dcp"], ["stock", "off"]]
LABELS = ["B x off", "B-s250 x off", "B x pi-dcp", "stock x off"]


def eval_log(task: Any, log_dir: Any, **kwargs: Any) -> EvalLog:
    """``task`` run under `MODEL`, one sample at a time (the fixed sandbox directory needs it), into
    ``log_dir``; the log read back whole. ``kwargs`` go to inspect's eval (e.g. limits).

    ``log_realtime=False``: inspect's live-view buffer (a SQLite copy of every event, for `inspect
    view` during a run) is not written; nothing here or in readbench reads it, and the log file
    still holds every event. It was ~10-20 % of a forked test's sample time (py-spy)."""
    [log] = inspect_eval(task, model=MODEL, log_dir=str(log_dir), display="none", max_samples=1,
                         log_realtime=False, **kwargs)
    assert log.status == "success", log.error
    return read_eval_log(log.location)


def metrics(log: EvalLog) -> dict[Any, dict[str, Any]]:
    """Sample id -> the readbench scorer's per-sample metrics."""
    return {s.id: s.scores["readbench"].metadata for s in log.samples}


def metric_diff(fork: dict[str, Any], independent: dict[str, Any]) -> dict[str, tuple[Any, Any]]:
    """The metrics (but wall_seconds) where a fork's sample differs from the independent run's:
    ``{name: (fork's, independent's)}``; NaN equals NaN."""
    def same(a: Any, b: Any) -> bool:
        return a == b or (isinstance(a, float) and isinstance(b, float) and math.isnan(a) and math.isnan(b))

    return {k: (fork.get(k), v) for k, v in independent.items() if k != "wall_seconds" and not same(fork.get(k), v)}
