"""Recorded sessions made by the simulated agent itself with stated knobs (for readbench.sim.fit tests).

Each session is one multi-prompt task on an 8,000-line file (bug fixes and questions past line
2,100, so stock's 2,000-line cap pages and B blocks blind reads), run through the test harness
(sim_harness) and turned into a readbench.sessions.Session like an imported inspect log.
"""

from __future__ import annotations

import random
from typing import Any

from sim_harness import TEST_CMD, Workspace, oracle, run_session, trace_session

#: The knobs the sessions are generated with (sim-pager's other knobs stay as they are).
TRUTH: dict[str, Any] = {
    "p_grep_first": 0.5, "window_lines": [60, 200], "p_follow_paging": 0.6, "p_restart_reread": 0.4,
    "p_comply_block": 0.6, "max_block_retries": 2, "p_verify_reread": 0.5, "range_chunk_lines": 700,
    "think_tokens": [40, 160], "ttft_seconds": 1.5, "ttft_seconds_per_1k_input_tokens": 0.02,
    "output_tokens_per_second": 45.0, "tool_seconds": 0.3, "test_seconds": 5.0, "user_gap_seconds": 30.0,
    "calls_per_prompt": [14, 22], "explore_before_share": 0.4,
    "explore_tools": {"read": 0.5, "grep": 0.2, "bash": 0.3},
}


def long_task(seed: int, n_lines: int = 8000, goals: int = 8) -> tuple[dict[str, Any], dict[str, str]]:
    """(oracle, files) of one task: ``goals`` prompts alternating fixes and questions."""
    rng = random.Random(seed)
    lines = [f"row {i:05d} value" for i in range(1, n_lines + 1)]
    steps, prompts = [], []
    for k, at in enumerate(sorted(rng.sample(range(2100, n_lines - 50), goals))):
        if k % 2 == 0:
            lines[at - 1], lines[at] = f"def fix_{k}(x):", f"    return x + {k}  # bug {k}"
            steps.append({"kind": "fix", "target_file": "big.py", "search_key": f"def fix_{k}(",
                          "old_text": lines[at], "new_text": f"    return x - {k}  # bug {k}", "target_line": at + 1})
            prompts.append(f"Fix fix_{k}.")
        else:
            lines[at - 1], lines[at] = f"def ask_{k}(x):", f"    name = 'answer_{k}_{seed}'"
            steps.append({"kind": "answer", "target_file": "big.py", "search_key": f"def ask_{k}(",
                          "answer": f"answer_{k}_{seed}", "target_line": at + 1})
            prompts.append(f"What name does ask_{k} set?")
    files = {"big.py": "\n".join(lines) + "\n",
             "tests/test_target.py": "".join(f"def test_{k}():\n    assert fix_{k}(1) == 1 - {k}\n" for k in range(goals)),
             "tests/test_other.py": "def test_other():\n    assert ask_1(0) is None\n"}
    return oracle(task_id=f"long{seed}", prompts=prompts, steps=steps, test_cmd=TEST_CMD), files


def sim_sessions(n: int, knobs: dict[str, Any] | None = None, profile: str = "sim-pager") -> list[Any]:
    """``n`` sessions, every other one under B (blocks) and the rest under stock (paging)."""
    out = []
    for seed in range(n):
        task_oracle, files = long_task(seed)
        ws = Workspace(files=dict(files), variant=("stock", "B")[seed % 2])
        trace = run_session(profile, task_oracle, ws, overrides=knobs if knobs is not None else TRUTH, max_calls=600)
        out.append(trace_session(trace))
    return out
