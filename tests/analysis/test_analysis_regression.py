"""The nightly verdict (`regression.compare_to_baseline`) on tables built by hand: planted
regressions (a price change, a success drop, more read calls) are named with exact lines, the
baseline against itself and changes within the tolerance pass, differing arms / tasks / cache
models / columns are named, a partial arm is no verdict; the tolerance-shifted one-sided CR2 t
test and Holm are checked against statsmodels (issue 17)."""

from __future__ import annotations

import math

import numpy as np
import pandas as pd
import pytest
import statsmodels.api as sm
from scipy import stats as sps
from statsmodels.stats.multitest import multipletests

from readbench.analysis.regression import Tolerance, compare_to_baseline
from readbench.analysis.smallest import SmallestDifference

from conftest import synthetic_table

SOURCES = "abcdef"
TASKS = 5
LOOSE = SmallestDifference(success_pp=60)
"""What these 30-task, 6-repository tables can detect in success at the Holm level (51.9 pp, see
`test_an_underpowered_comparison_exits_3_and_names_what_it_detects`)."""


def _rows(variants=("stock", "B"), seed=0, families=("locate",), epochs=(1, 2)):
    rng = np.random.default_rng(seed)
    rows = []
    for variant in variants:
        for src in SOURCES:
            for k in range(TASKS):
                for epoch in epochs:
                    cost = float(rng.lognormal(-3, 0.5))
                    rows.append(dict(
                        variant=variant, dcp="off", sample_id=f"{src}/{families[k % len(families)]}/{k}", source=src,
                        family=families[k % len(families)], epoch=epoch, success=float(rng.random() < 0.7),
                        stop_reason="solved", turns=float(rng.integers(3, 20)), input_tokens=cost * 1e6,
                        read_calls=float(rng.integers(1, 8)), cost_usd_openai=cost, cost_usd_deepseek=cost / 4,
                        file_lines=1000.0 + k, target_line=7.0))
    return rows


@pytest.fixture(scope="module")
def base() -> pd.DataFrame:
    return synthetic_table(_rows(), cache_models=("openai", "deepseek"))


def _b(table: pd.DataFrame) -> pd.Series:
    return table["variant"] == "B"


def test_the_baseline_against_itself_passes_every_check(base):
    r = compare_to_baseline(base, base, smallest=LOOSE)
    assert r.exit_code == 0 and not r.regressions and not r.notes and not r.incomplete
    # 2 arms x (success, turns, input_tokens, read_calls, cost openai, cost deepseek)
    assert [(c.arm.split(" @ ")[0], c.metric) for c in r.checks][:6] == [
        ("stock × off", m) for m in ("success", "turns", "input_tokens", "read_calls", "cost_usd_deepseek",
                                     "cost_usd_openai")]
    assert len(r.checks) == 12 and all(c.p_holm == 1.0 for c in r.checks)
    assert r.summary("analysis/baselines/nightly") == (
        "no regression in 12 checks of 2 arm(s) against analysis/baselines/nightly (Holm across the checks at 0.05; "
        "tolerance: success −5.0 pp; cost and input tokens ×1.10; turns and read calls +10 % of the baseline mean; "
        "every success and cost check detects 60 pp in success, a cost ratio of 0.9× (or 1.111×))")


def _detectable_drop(n_tasks: int, n_clusters: int, m: int, margin: float = 0.05) -> float:
    """Connor's rule by hand: D = margin + (t_{1-0.05/m} + t_{0.8}) sqrt((D - D^2) / n_tasks) on
    n_clusters - 1 df (no discordant pair: all variance between tasks, epochs do not help)."""
    from scipy import optimize

    q = sps.t.ppf(1 - 0.05 / m, n_clusters - 1) + sps.t.ppf(0.8, n_clusters - 1)
    return optimize.brentq(lambda d: d - margin - q * math.sqrt((d - d * d) / n_tasks), margin, 1 - 1e-9)


def test_an_underpowered_comparison_exits_3_and_names_what_it_detects(base):
    r = compare_to_baseline(base, base)  # default smallest difference: 5 pp, 0.9
    assert r.exit_code == 3 and not r.regressions
    drop = _detectable_drop(30, 6, 12)
    assert drop == pytest.approx(0.5188, abs=1e-4)
    success = [c for c in r.checks if c.metric == "success"]
    assert [c.detectable for c in success] == pytest.approx([drop, drop], abs=1e-6)
    assert r.underpowered == tuple(success)  # identical costs: detects ×1.10 (the tolerance) <= ×1.111
    cost = next(c for c in r.checks if c.metric == "cost_usd_openai")
    assert cost.detectable == pytest.approx(1.1) and not cost.underpowered
    assert success[1].underpowered_line() == (
        "B × off @ readbench/sim-mixed · success: this run detects a drop ≥ 51.9 pp; the smallest difference that "
        "matters is 5 pp (80% power, Holm level; `readbench plan` says what would)")
    assert r.summary("bl") == (
        "underpowered: 2 of the success and cost checks cannot detect the smallest difference that matters (5 pp "
        "in success, a cost ratio of 0.9× (or 1.111×)); e.g. stock × off @ readbench/sim-mixed · success: this run "
        "detects a drop ≥ 51.9 pp; the smallest difference that matters is 5 pp (80% power, Holm level; "
        "`readbench plan` says what would); no regression found in 12 checks of 2 arm(s) against bl, which is no "
        "verdict")
    # a cost check that varies: the detectable ratio comes from its clustered log-ratio variance
    rng = np.random.default_rng(11)
    noisy = base.assign(cost_usd_openai=base["cost_usd_openai"] * rng.lognormal(0, 0.3, len(base)))
    r = compare_to_baseline(noisy, base, smallest=LOOSE)
    cost = next(c for c in r.checks if c.metric == "cost_usd_openai" and c.arm.startswith("B "))
    assert cost.detectable > 1.2 and cost.underpowered and r.exit_code == 3
    # a regression found is a verdict even where other checks are underpowered
    assert compare_to_baseline(base.assign(cost_usd_openai=base["cost_usd_openai"] * 1.25), base).exit_code == 1


def test_a_price_change_is_a_cost_regression_of_every_arm_under_that_cache_model_only(base):
    now = base.assign(cost_usd_openai=base["cost_usd_openai"] * 1.25)
    r = compare_to_baseline(now, base)
    assert r.exit_code == 1
    assert [(c.arm, c.metric) for c in r.regressions] == [
        ("stock × off @ readbench/sim-mixed", "cost_usd_openai"), ("B × off @ readbench/sim-mixed", "cost_usd_openai")]
    b = base[_b(base)]
    median = float(np.median(b["cost_usd_openai"]))
    # every pair moved by exactly x1.25: the CR2 SE is 0, so the interval is the point and p = 0
    assert r.regressions[1].line() == (
        f"B × off @ readbench/sim-mixed · cost_usd_openai: ${median:.4f} -> ${median * 1.25:.4f} (median over 60 "
        "pairs, 6 clusters); 1.250× 95% CI [1.250×, 1.250×], tolerance ×1.10; Holm-adjusted p < 0.001; "
        "detects ≥ ×1.100")


def test_a_change_within_the_tolerance_is_not_a_regression(base):
    now = base.assign(cost_usd_openai=base["cost_usd_openai"] * 1.08, turns=base["turns"] + 0.5)
    r = compare_to_baseline(now, base, smallest=LOOSE)
    assert r.exit_code == 0
    cost = next(c for c in r.checks if c.metric == "cost_usd_openai")
    assert cost.estimate == pytest.approx(1.08) and cost.p_value == 1.0  # deterministic, under x1.10
    # the same shift with a tighter tolerance is one
    assert compare_to_baseline(now, base, tolerance=Tolerance(relative=0.05)).exit_code == 1


def test_a_success_drop_in_one_arm_is_named_with_baseline_now_interval_and_adjusted_p(base):
    now = base.copy()
    idx = now.index[_b(now) & (now["success"] == 1.0)]
    now.loc[idx[::2], "success"] = 0.0  # B loses every other success: about half, in every repository
    r = compare_to_baseline(now, base)
    assert r.exit_code == 1
    (reg,) = r.regressions
    assert (reg.arm, reg.metric, reg.scale) == ("B × off @ readbench/sim-mixed", "success", "difference")
    b = base[_b(base)]
    assert reg.baseline_value == pytest.approx(b["success"].mean())
    assert reg.current_value == pytest.approx(now[_b(now)]["success"].mean())
    assert reg.ci.high < -0.05 and reg.p_holm < 0.05
    assert reg.line().startswith(f"B × off @ readbench/sim-mixed · success: {100 * reg.baseline_value:.1f}% -> "
                                 f"{100 * reg.current_value:.1f}% (mean over 60 pairs, 6 clusters); ")
    assert ", tolerance -5.0 pp; Holm-adjusted p " in reg.line() and reg.line().endswith(" pp")
    assert "; detects a drop ≥ " in reg.line()


def test_noise_without_a_shift_is_not_a_regression(base):
    rng = np.random.default_rng(7)
    noisy = base.assign(read_calls=base["read_calls"] + rng.integers(-2, 3, len(base)),
                        input_tokens=base["input_tokens"] * rng.lognormal(0, 0.2, len(base)))
    assert compare_to_baseline(noisy, base, smallest=LOOSE).exit_code == 0


def _statsmodels_one_sided(d: np.ndarray, clusters: np.ndarray, bound: float) -> float:
    """p of H0 mean(d) <= bound from statsmodels' cluster-robust OLS on a constant (CR1 = CR2 for
    equal cluster sizes, _cluster docstring) with t(G - 1)."""
    fit = sm.OLS(d - bound, np.ones_like(d)).fit(cov_type="cluster", cov_kwds={"groups": pd.factorize(clusters)[0]})
    t = float(fit.params[0] / fit.bse[0])
    return float(sps.t.sf(t, len(set(clusters)) - 1))


def test_one_sided_tests_and_holm_match_statsmodels(base):
    rng = np.random.default_rng(3)
    now = base.assign(read_calls=base["read_calls"] + rng.integers(0, 3, len(base)),
                      input_tokens=base["input_tokens"] * rng.lognormal(0.12, 0.15, len(base)))
    r = compare_to_baseline(now, base)
    for arm in ("stock", "B"):
        t, b = now[now["variant"] == arm], base[base["variant"] == arm]
        assert list(t["sample_id"]) == list(b["sample_id"]) and list(t["epoch"]) == list(b["epoch"])
        reads = next(c for c in r.checks if c.arm.startswith(f"{arm} ×") and c.metric == "read_calls")
        d = t["read_calls"].to_numpy() - b["read_calls"].to_numpy()
        bound = 0.10 * b["read_calls"].mean()
        assert reads.bound == pytest.approx(bound)
        # tolerance 1e-10: the same estimator in two implementations
        assert reads.p_value == pytest.approx(_statsmodels_one_sided(d, t["source"].to_numpy(), bound), abs=1e-10)
        tokens = next(c for c in r.checks if c.arm.startswith(f"{arm} ×") and c.metric == "input_tokens")
        log_ratio = np.log(t["input_tokens"].to_numpy()) - np.log(b["input_tokens"].to_numpy())
        assert tokens.p_value == pytest.approx(
            _statsmodels_one_sided(log_ratio, t["source"].to_numpy(), math.log(1.1)), abs=1e-10)
    raw = [c.p_value for c in r.checks]
    assert [c.p_holm for c in r.checks] == pytest.approx(list(multipletests(raw, method="holm")[1]), abs=1e-12)


def test_new_tasks_removed_arms_new_arms_and_cache_models_are_named_not_judged(base):
    extra = synthetic_table(_rows(variants=("stock", "C"), seed=1, families=("longsession",), epochs=(1,)),
                            cache_models=("openai", "deepseek", "gemini-implicit"))
    extra["sample_id"] = "new/" + extra["sample_id"]
    extra["cost_usd_gemini-implicit"] = 0.01
    kept = base[base["variant"] == "stock"]
    now = pd.concat([kept, extra[extra["variant"] == "stock"], extra[extra["variant"] == "C"]], ignore_index=True)
    r = compare_to_baseline(now, base, smallest=LOOSE)
    assert r.exit_code == 0
    assert r.notes == (
        "cache model gemini-implicit: new in this run (no baseline), cost not compared",
        "arm B × off @ readbench/sim-mixed: in the baseline, not in this run (removed from the matrix?), not compared",
        "arm C × off @ readbench/sim-mixed: new in this run, no baseline to compare with; `make baseline` starts "
        "tracking it",
        "30 task(s) new since the baseline, not compared (longsession: 30): new/a/longsession/0, "
        "new/a/longsession/1, new/a/longsession/2, new/a/longsession/3, new/a/longsession/4, … (25 more)"
        "; `make baseline` after an accepted run starts tracking them",
    )
    assert {c.arm for c in r.checks} == {"stock × off @ readbench/sim-mixed"}
    assert {c.n_pairs for c in r.checks} == {60}  # the new tasks are not paired


def test_a_changed_task_and_fewer_epochs_are_named_and_left_out(base):
    now = base[base["epoch"] == 1].copy()
    now.loc[now["sample_id"] == "a/locate/0", "file_lines"] = 5000.0
    r = compare_to_baseline(now, base)
    assert r.notes == (
        "1 task(s) changed since the baseline (same id, other task), not compared: a/locate/0 (file_lines 1000 "
        "-> 5000)",
        "epochs: baseline [1, 2], this run [1]: pairs use the common ones",
    )
    assert {c.n_pairs for c in r.checks} == {29}
    # half the epochs minus one task: under half of the baseline is covered, so no verdict
    assert r.exit_code == 2 and r.incomplete[0].startswith("only 58 of the 120 baseline samples ")


def test_a_partial_arm_a_missing_arm_or_a_missing_column_is_no_verdict_even_with_a_regression(base):
    now = base.assign(cost_usd_openai=base["cost_usd_openai"] * 2, arm_status="")
    now.loc[_b(now), "arm_status"] = "partial: 40 of 60 samples, cancelled"
    r = compare_to_baseline(now, base)
    assert r.exit_code == 2
    assert r.incomplete == ("B × off @ readbench/sim-mixed (partial: 40 of 60 samples, cancelled): a partial arm "
                            "is never a verdict",)
    assert {c.arm for c in r.regressions} == {"stock × off @ readbench/sim-mixed"}  # still shown, not a verdict
    r = compare_to_baseline(base, base, expected_arms=["stock × off @ readbench/sim-mixed",
                                                       "A × off @ readbench/sim-mixed"])
    assert r.incomplete == ("A × off @ readbench/sim-mixed: in the run's matrix but it has no sample in the table",)
    r = compare_to_baseline(base.drop(columns=["read_calls"]), base)
    assert r.exit_code == 2
    assert r.incomplete == ("this run's table lacks headline column(s) ['read_calls'] that the baseline has",)


def test_a_run_that_covers_less_than_half_of_the_baseline_is_no_verdict(base):
    few = base[base["source"].isin(["a", "b"])]  # 2 of 6 repositories left, e.g. a broken corpus build
    r = compare_to_baseline(few, base)
    assert r.exit_code == 2
    assert r.incomplete == ("only 40 of the 120 baseline samples of the compared arms have a partner in this run "
                            "(< 50 %): it no longer covers the baseline; if the corpus or the epochs shrank on "
                            "purpose, make an accepted run the baseline (`make baseline`)",)
    assert r.notes[0].startswith("20 task(s) of the baseline missing from this run, not compared (locate: 20): ")
    # a verdict on what is left? 2 repositories (t on 1 df) detect only a success drop of 99.9 pp: underpowered
    r = compare_to_baseline(few, base, min_coverage=0.3, smallest=SmallestDifference(99))
    assert r.exit_code == 3 and {c.detects() for c in r.underpowered} == {"detects a drop ≥ 99.9 pp"}


def test_nothing_in_common_is_no_verdict(base):
    other = base.assign(sample_id="z/" + base["sample_id"])
    r = compare_to_baseline(other, base)
    assert r.exit_code == 2 and r.incomplete == ("nothing to compare: no arm shares a (task, epoch) with the baseline",)


def test_one_cluster_is_untested_and_named():
    rows = [r for r in _rows(variants=("stock",)) if r["source"] == "a"]
    table = synthetic_table(rows, cache_models=("openai",)).assign(source="a")
    one = table[table["sample_id"] == "a/locate/0"]
    r = compare_to_baseline(one.assign(turns=one["turns"] + 5), one)
    # untestable success and cost checks cannot detect anything: underpowered, not "no regression"
    assert r.exit_code == 3 and all(math.isnan(c.p_value) for c in r.checks)
    assert r.underpowered[0].underpowered_line().startswith("stock × off @ readbench/sim-mixed · success: this run "
                                                            "detects nothing (fewer than 2 clusters); ")
    assert r.notes[-1].startswith("5 check(s) untested (fewer than 2 clusters: no variance estimate): ")


@pytest.mark.parametrize("kwargs, message", [
    ({"success": 1.0}, "tolerance success must be a fraction in [0, 1), got 1.0"),
    ({"relative": -0.1}, "tolerance relative must be a fraction in [0, 1), got -0.1"),
    ({"relative": float("nan")}, "tolerance relative must be a fraction in [0, 1), got nan"),
])
def test_tolerance_validation(kwargs, message):
    with pytest.raises(ValueError, match=message.replace("[", r"\[").replace("(", r"\(").replace(")", r"\)")):
        Tolerance(**kwargs)


def test_the_nightly_against_its_committed_baseline_gives_a_verdict_at_the_matrix_smallest_difference():
    """The committed nightly baseline compared with itself (an unchanged harness reproduces it): at
    evals/nightly.yaml's smallest_difference (40 pp, 0.9) every success and cost check is powered and
    the verdict is "no regression" (exit 0); at the 5 pp default it is underpowered (exit 3): 72
    checks, 8 repositories and 1 epoch detect a success drop only from 38.8 pp."""
    from pathlib import Path

    from readbench.analysis.table import read_table
    from readbench.run.matrix import load_matrix

    root = Path(__file__).parents[2]
    table = read_table(root / "analysis/baselines/nightly/table.parquet")
    smallest = load_matrix(root / "evals/nightly.yaml").smallest
    assert smallest == SmallestDifference(success_pp=40, cost_ratio=0.9)
    r = compare_to_baseline(table, table, smallest=smallest)
    assert r.exit_code == 0 and len(r.checks) == 72 and not r.underpowered
    drops = {round(c.detectable, 3) for c in r.checks if c.metric == "success"}
    assert drops == {round(_detectable_drop(75, 8, 72), 3)} == {0.388}
    assert compare_to_baseline(table, table).exit_code == 3


def test_missing_values_are_named_and_a_metric_with_none_is_no_verdict(base):
    """brk12: a run whose cost under one cache model was NaN in every row passed with exit 0 ("no
    regression in 64 checks": those checks vanished), and NaN in some rows left pairs out silently."""
    run = base.copy()
    run["cost_usd_deepseek"] = np.nan
    r = compare_to_baseline(run, base, smallest=LOOSE)
    assert r.exit_code == 2
    assert r.incomplete == tuple(f"{arm} @ readbench/sim-mixed · cost_usd_deepseek: no value in any of this run's 60 "
                                 "paired samples (the baseline has them): not checked" for arm in ("stock × off", "B × off"))
    assert "cost_usd_deepseek" not in {c.metric for c in r.checks}
    run = base.copy()
    run.loc[_b(run) & (run["source"] == "a"), "cost_usd_openai"] = np.nan
    r = compare_to_baseline(run, base, smallest=LOOSE)
    assert r.exit_code == 0 and not r.incomplete
    assert r.notes == ("B × off @ readbench/sim-mixed · cost_usd_openai: 10 of 60 pairs left out, no value (10 in this "
                       "run, 0 in the baseline)",)
