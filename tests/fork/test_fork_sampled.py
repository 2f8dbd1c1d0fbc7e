"""Forked arms with a SAMPLED model (GitHub issue 25 item 4, second half): with the simulated agent
at temperature > 0 (readbench.sim.sampling: every call draws afresh, so a fork's continuation is a
new sample, not the trunk's coupled one) a forked run's per-arm marginals of success, turns and
total tokens are statistically indistinguishable from an independent run's; the same check flags a
broken forking whose forks continue with the trunk's results instead of the arm's own.

The check (`marginal_pvalues`): per metric, per task a two-sample test of the forked design's
samples against the independent design's (Fisher's exact test for success, two-sided
Mann-Whitney U for turns and total tokens = input + output tokens), the two tasks' p-values
combined with Fisher's method (the designs hold the same number of samples per task, so tasks are
strata, not pooled). An arm is rejected when any metric's p-value is below ``ALPHA / 9``:
Bonferroni over the 3 metrics of the 3 arms the equivalence part compares (family-wise 0.05).

The arms share B's trunk: B itself (its forks replay the trunk whole, so its forked table is the
trunk samples' metrics: tests/fork/test_fork_equivalence.py shows a never-diverging fork equal to
the trunk; its fork eval is not run here, to keep the test short), B-nn (result forks at a read's
differing notice, early) and B x obs-mask-5 (request forks once a sixth tool result is masked,
late: a long shared prefix, then live calls).
"""

from __future__ import annotations

import math
from typing import Any

import numpy as np
import pytest
from fork_arms import eval_log
from scipy.stats import combine_pvalues, fisher_exact, mannwhitneyu

from readbench.fork import trunk as trunk_module
from readbench.fork.prefix import FORK
from readbench.fork.shadow import arm_key
from readbench.run.task import read_strategies_task
from readbench.sim.sampling import reset_streams

MODEL = "readbench/sim-mixed"
SAMPLED = {"temperature": 1.0, "seed": 2525}
EPOCHS = 15  # x 2 tasks = 30 samples per arm and design
MAX_TURNS = 10  # some samples stop at the turn limit: success varies
#: B without the "[N more lines in file...]" notice after a ranged read: B's tool schema (so B's
#: trunk), another result where a read's limit stops before the end of the file
B_NN = {"base": "B", "name": "B-nn", "limit_notice": False}
#: the same preset under another name, whose forks the negative control breaks
B_NN_BROKEN = {"base": "B", "name": "B-nn-broken", "limit_notice": False}
ARMS = [["B", "off"], [B_NN, "off"], ["B", "obs-mask-5"], [B_NN_BROKEN, "off"]]
LABELS = ["B x off", "B-nn x off", "B x obs-mask-5", "B-nn-broken x off"]
COMPARED = LABELS[:3]
METRICS = ("success", "turns", "total_tokens")
ALPHA = 0.05
THRESHOLD = ALPHA / (len(METRICS) * len(COMPARED))  # 0.00556


def marginal_pvalues(a: list[dict[str, Any]], b: list[dict[str, Any]]) -> dict[str, float]:
    """Per metric of `METRICS`, the p-value that samples ``a`` and ``b`` (rows with ``task``,
    ``success`` (bool), ``turns``, ``total_tokens``) come from the same distribution: per task
    Fisher's exact test (success) or two-sided Mann-Whitney U (turns, tokens), combined over tasks
    with Fisher's method. A task where both samples hold one and the same value gives p = 1.

    Raises:
        ValueError: the two samples do not cover the same tasks.
    """
    tasks = sorted({r["task"] for r in a})
    if tasks != sorted({r["task"] for r in b}):
        raise ValueError(f"the samples cover other tasks: {tasks} vs {sorted({r['task'] for r in b})}")
    out = {}
    for metric in METRICS:
        per_task = []
        for task in tasks:
            x = [r[metric] for r in a if r["task"] == task]
            y = [r[metric] for r in b if r["task"] == task]
            if len(set(x) | set(y)) == 1:
                per_task.append(1.0)
            elif metric == "success":
                table = [[sum(x), len(x) - sum(x)], [sum(y), len(y) - sum(y)]]
                per_task.append(float(fisher_exact(table).pvalue))
            else:
                per_task.append(float(mannwhitneyu(x, y, alternative="two-sided").pvalue))
        out[metric] = float(combine_pvalues(per_task, method="fisher").pvalue)
    return out


def rejects(pvalues: dict[str, float]) -> bool:
    """True when some metric's p-value is below `THRESHOLD` (the marginals differ)."""
    return min(pvalues.values()) < THRESHOLD


def _rows(log: Any) -> list[dict[str, Any]]:
    rows = []
    for s in log.samples:
        m = s.scores["readbench"].metadata
        rows.append({"task": s.id, "epoch": s.epoch, "success": bool(m["success"]), "turns": int(m["turns"]),
                     "total_tokens": int(m["input_tokens"] + m["output_tokens"]),
                     "fork": (s.store.get(FORK) or {}).get("fork_point")})
    return rows


def test_the_check_keeps_equal_marginals_and_rejects_a_shift():
    """`marginal_pvalues` on synthetic samples (30 per side, 2 tasks): same distributions pass,
    a 40 % token shift (about the broken fork's below) and a 0.95 vs 0.35 success rate are rejected."""
    rng = np.random.default_rng(3)

    def sample(scale: float, p: float) -> list[dict[str, Any]]:
        return [{"task": t, "success": bool(rng.random() < p), "turns": int(rng.integers(4, 11)),
                 "total_tokens": int(rng.lognormal(np.log(scale * base), 0.4))}
                for t, base in (("a", 40_000), ("b", 55_000)) for _ in range(15)]

    same = marginal_pvalues(sample(1.0, 0.8), sample(1.0, 0.8))
    assert same == pytest.approx({"success": 0.93059, "turns": 0.12709, "total_tokens": 0.26517}, abs=1e-5)
    assert not rejects(same)
    shifted = marginal_pvalues(sample(1.0, 0.8), sample(0.6, 0.8))
    assert shifted["total_tokens"] == pytest.approx(3.931e-6, rel=1e-3) and rejects(shifted), shifted
    assert marginal_pvalues(sample(1.0, 0.95), sample(1.0, 0.35))["success"] == pytest.approx(1.4032e-6, rel=1e-3)
    with pytest.raises(ValueError, match="other tasks"):
        marginal_pvalues(sample(1.0, 0.8), [{"task": "a"}])


def test_the_check_combines_per_task_exact_tests_by_fishers_method():
    """Hand-computed: in each of two tasks 3 of 4 successes against 1 of 4 (Fisher's exact test: of
    the 70 tables with these margins 1 + 16 + 16 + 1 are as unlikely, p = 34/70) and turns 1-4
    against 5-8 (exact Mann-Whitney U: 2 of the 70 splits are as extreme, p = 2/70); Fisher's method
    for two equal p-values gives p^2 (1 - 2 ln p); equal tokens everywhere give 1."""
    a = [{"task": t, "success": i < 3, "turns": i + 1, "total_tokens": 100} for t in "xy" for i in range(4)]
    b = [{"task": t, "success": i < 1, "turns": i + 5, "total_tokens": 100} for t in "xy" for i in range(4)]
    p_success, p_turns = 34 / 70, 2 / 70
    assert marginal_pvalues(a, b) == pytest.approx({"success": p_success**2 * (1 - 2 * math.log(p_success)),
                                                   "turns": p_turns**2 * (1 - 2 * math.log(p_turns)),
                                                   "total_tokens": 1.0}, rel=1e-9)
    assert marginal_pvalues(a, b)["turns"] == pytest.approx(0.006621, abs=1e-6)


@pytest.mark.slow
def test_sampled_forked_marginals_match_independent_and_a_broken_fork_is_flagged(tiny_corpus, fixed_sandbox_dir,
                                                                                 monkeypatch):
    reset_streams()  # the seed's stream from its start: the run repeats exactly
    broken = arm_key(B_NN_BROKEN, "off")
    shadow_results = trunk_module.shadow_results

    async def blind_to_broken_arm(*args: Any) -> Any:
        """The bug of the negative control: the shadow misses every differing result of one arm."""
        diverged, reads = await shadow_results(*args)
        return {k: v for k, v in diverged.items() if k != broken}, reads

    run = {"max_turns": MAX_TURNS, "sandbox_kind": "local"}
    root = tiny_corpus / "fork"
    with monkeypatch.context() as patch:
        patch.setattr(trunk_module, "shadow_results", blind_to_broken_arm)
        trunk = eval_log(read_strategies_task(variant="B", dcp="off", **run, fork={
            "role": "trunk", "root": str(root), "arms": ARMS, "labels": LABELS}), tiny_corpus / "trunk",
            epochs=EPOCHS, **SAMPLED)
    trunk_rows = _rows(trunk)
    forked = {"B x off": trunk_rows}
    forked |= {label: _rows(eval_log(read_strategies_task(variant=v, dcp=d, **run, fork={
        "role": "fork", "root": str(root), "arm_key": arm_key(v, d)}), tiny_corpus / "forks", epochs=EPOCHS, **SAMPLED))
        for (v, d), label in zip(ARMS[1:], LABELS[1:])}
    independent = {label: _rows(eval_log(read_strategies_task(variant=v, dcp=d, **run), tiny_corpus / "independent",
                                         epochs=EPOCHS, **SAMPLED))
                   for (v, d), label in zip(ARMS[:3], COMPARED)}
    assert all(len(r) == 2 * EPOCHS for r in [*forked.values(), *independent.values()])

    # sampled, not coupled: the independent run of B is not the trunk again
    key = {(r["task"], r["epoch"]): (r["turns"], r["total_tokens"]) for r in trunk_rows}
    same = sum(key[(r["task"], r["epoch"])] == (r["turns"], r["total_tokens"]) for r in independent["B x off"])
    assert same < EPOCHS // 2, same
    # B never leaves its own trunk; B-nn leaves it at a differing read result, obs-mask-5 once it masks
    assert {s.store[FORK]["arms"]["B x off"]["kind"] for s in trunk.samples} <= {"never", "cut"}
    live = [r for r in forked["B-nn x off"] if r["fork"]["kind"] == "result"]
    assert len(live) >= 10, [r["fork"] for r in forked["B-nn x off"]]
    masked = [r["fork"]["call"] for r in forked["B x obs-mask-5"] if r["fork"]["kind"] == "request"]
    assert len(masked) >= 10 and min(masked) >= 6, [r["fork"] for r in forked["B x obs-mask-5"]]

    pvalues = {label: marginal_pvalues(forked[label], independent[label]) for label in COMPARED}
    print(f"\n{same} of {2 * EPOCHS} independent B samples equal the trunk's; {len(live)} B-nn forks ran live; "
          f"{len(masked)} obs-mask-5 forks ran live from calls {sorted(masked)}")
    print("forked vs independent p-values:", pvalues)
    for label, p in pvalues.items():
        assert not rejects(p), (label, p)

    # negative control: the broken arm's forks never left the trunk, so they carry B's marginals
    assert {r["fork"]["kind"] for r in forked["B-nn-broken x off"]} <= {"never", "cut"}
    broken_p = marginal_pvalues(forked["B-nn-broken x off"], independent["B-nn x off"])
    print("broken forks vs independent B-nn:", broken_p)
    assert rejects(broken_p), broken_p
    # ... and the arm truly differs from B: B's own marginals against B-nn's are rejected alike
    truly = marginal_pvalues(independent["B x off"], independent["B-nn x off"])
    print("independent B vs independent B-nn:", truly)
    assert rejects(truly), truly
