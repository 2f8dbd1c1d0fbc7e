"""Power planning (`analysis.power`, `analysis.plan`, `readbench plan`).

The planner is checked three ways: against statsmodels' exact power of the one-sample t test
(unclustered, tolerance stated), by simulating the design it prescribes and measuring the
power of the report's own CR2 t test, and by recovering known variance components.
"""

from __future__ import annotations

import json
import math

import numpy as np
import pytest
from click.testing import CliRunner
from statsmodels.stats.power import TTestPower

from readbench.analysis.power import VarianceComponents, detectable_effect, required_tasks, variance_components
from readbench.analysis.stats import cr2_df, cr2_mean_se, t_quantile
from readbench.run.plan_cli import plan

from conftest import contract_metrics


def _vc(c=0.0, w=1.0, e=0.0, m=1.0, binary=False, psi=float("nan"), n_pairs=100):
    return VarianceComponents(scale="difference", binary=binary, n_pairs=n_pairs, n_tasks=n_pairs, epochs=1.0,
                              n_clusters=int(n_pairs / m), tasks_per_cluster=m, between_cluster=c, between_task=w,
                              within_task=e, discordance=psi, mean_difference=0.0, notes=())


@pytest.mark.parametrize("effect_size", [0.2, 0.35, 0.5])
def test_unclustered_plan_agrees_with_statsmodels_exact_t_power(effect_size):
    # One task per cluster, one epoch: the plan is a one-sample t test on N differences of
    # variance 1. Our t-quantile approximation vs statsmodels' noncentral t: within 2 tasks.
    plan_ = required_tasks(_vc(w=1.0), effect_size, epochs=1, power=0.8, alpha=0.05)
    exact = TTestPower().solve_power(effect_size=effect_size, alpha=0.05, power=0.8, alternative="two-sided")
    assert abs(plan_.n_tasks - math.ceil(exact)) <= 2, (plan_.n_tasks, exact)


def test_prescribed_clustered_design_reaches_the_target_power_with_the_reports_test():
    # components: repository 0.01, task 0.04, epoch 0.2; 4 tasks per repository, 2 epochs, delta 0.1
    vc = _vc(c=0.01, w=0.04, e=0.2, m=4.0)
    p = required_tasks(vc, 0.1, epochs=2, power=0.8, alpha=0.05)
    g = p.n_clusters
    n_tasks = g * 4
    rng = np.random.default_rng(11)
    reps = 4000
    repo = np.repeat(np.arange(g), 4)
    d = (0.1 + rng.normal(0, 0.1, (reps, g))[:, repo] + rng.normal(0, 0.2, (reps, n_tasks)))[..., None] \
        + rng.normal(0, math.sqrt(0.2), (reps, n_tasks, 2))
    codes = np.repeat(repo, 2)
    mean, se = cr2_mean_se(d.reshape(reps, -1), codes, g)
    power = float(np.mean(np.abs(mean) / se > t_quantile(0.95, cr2_df(np.bincount(codes)))))
    print(f"\nplanned {p.n_tasks} tasks ({g} repositories) x 2 epochs; simulated power {power:.3f}")
    assert 0.77 <= power <= 0.86  # target 0.8; rounding N up to whole repositories adds a little
    # one repository fewer falls short
    assert detectable_effect(vc, n_tasks=n_tasks - 4, epochs=2, n_clusters=g - 1) > 0.1


def test_variance_components_recover_a_known_design():
    rng = np.random.default_rng(3)
    g, m, k = 60, 5, 3
    repo = np.repeat(np.arange(g), m)
    true = rng.normal(0, math.sqrt(0.05), g)[repo] + rng.normal(0, math.sqrt(0.1), g * m)
    d = (true[:, None] + rng.normal(0, math.sqrt(0.4), (g * m, k))).ravel()
    tasks = np.repeat(np.arange(g * m), k)
    vc = variance_components(d, tasks, np.repeat(repo, k), binary=False)
    assert (vc.n_tasks, vc.n_clusters, vc.epochs, vc.tasks_per_cluster) == (300, 60, 3.0, 5.0)
    assert vc.within_task == pytest.approx(0.4, rel=0.1)
    assert vc.between_task == pytest.approx(0.1, rel=0.35)
    assert vc.between_cluster == pytest.approx(0.05, rel=0.5)
    assert vc.icc == pytest.approx(1 / 3, abs=0.15)


def test_binary_plan_uses_discordance_and_its_bound_when_none_is_seen():
    # 40 pairs, 8 discordant (psi = .2), all between tasks: Var under delta = psi - delta^2
    d = np.array([1.0] * 5 + [-1.0] * 3 + [0.0] * 32)
    vc = variance_components(d, np.arange(40), np.arange(40), binary=True)
    assert vc.discordance == 0.2 and "one epoch per task" in vc.notes[0]
    p = required_tasks(vc, 0.05, epochs=1)
    q = t_quantile(0.95, p.n_tasks - 1) + float(__import__("scipy").stats.t.ppf(0.8, p.n_tasks - 1))
    assert q * q * (0.2 - 0.0025) / p.n_tasks <= 0.0025 < q * q * (0.2 - 0.0025) / (p.n_tasks - 1)
    none = variance_components(np.zeros(20), np.arange(20), np.arange(20), binary=True)
    assert any("no discordant pair in 20" in n for n in none.notes)
    p0 = required_tasks(none, 0.05, epochs=1)
    psi = 1 - 0.05 ** (1 / 20)  # 95% upper bound of the discordance, 0.139
    assert p0.n_tasks == required_tasks(_vc(w=psi - 0.0025 + 1e-12, binary=True, psi=psi), 0.05, epochs=1).n_tasks


def test_plan_validation_and_no_variation():
    vc = _vc(w=1.0)
    with pytest.raises(ValueError, match=r"effect \(0.0\) must be > 0"):
        required_tasks(vc, 0.0, epochs=1)
    with pytest.raises(ValueError, match=r"power \(1.5\) must be in the open interval \(0, 1\)"):
        required_tasks(vc, 0.1, epochs=1, power=1.5)
    flat = required_tasks(_vc(w=0.0), 0.1, epochs=1)
    assert flat.n_tasks is None and "no variation" in flat.reason
    assert math.isnan(detectable_effect(vc, n_tasks=3, epochs=1, n_clusters=1))


def _metrics(variant, dcp, sid, epoch):
    ok = variant == "B" or sid == "repoA/locate/1" or epoch == 2
    return contract_metrics(1.0 if ok else 0.0, "solved" if ok else "wrong", 1000.0 if variant == "stock" else 500.0)


def test_plan_command_answers_from_a_run_directory(make_logs):
    log_dir = make_logs([{"variant": "stock", "dcp": "off"}, {"variant": "B", "dcp": "off"}], _metrics, epochs=2)
    run_dir = log_dir.parent
    (run_dir / "run.json").write_text(json.dumps({"matrix": "unit"}))
    res = CliRunner().invoke(plan, ["--from", str(run_dir), "--effect", "0.05", "--cost-ratio", "0.9"])
    assert res.exit_code == 0, res.output
    out = res.output
    assert out.startswith("Power 80%, two-sided level 0.05;")
    assert "B × off @ mockllm/model vs baseline — success" in out
    assert "run: 3 tasks × 2 epoch(s) in 2 cluster(s) (1.5 tasks per cluster)" in out
    assert "to detect 5.0 pp: about" in out and "tasks × 2 epoch(s)" in out
    assert "B × off @ mockllm/model vs baseline — cost_usd_openai" in out
    assert "to detect a ratio of 0.900×" in out
    bad = CliRunner().invoke(plan, ["--from", str(run_dir), "--effect", "5"])
    assert bad.exit_code == 2 and "effect (5.0) must be a fraction in (0, 1)" in bad.output
    missing = CliRunner().invoke(plan, ["--from", str(log_dir)])
    assert missing.exit_code == 2 and "has neither table.parquet nor logs/" in missing.output


def test_a_plan_without_two_paired_samples_says_what_is_missing():
    # a trial's run had its arms paired with the baseline on 1 task: the plan said "the run has no
    # arm paired with a baseline arm", which the report's pairs contradicted
    from readbench.analysis.plan import format_plan

    assert format_plan((), power=0.8, alpha=0.05).splitlines()[-1] == (
        "No comparison to plan: no arm has 2 or more samples (task × epoch) paired with its baseline arm's; "
        "a plan needs at least 2 paired samples per arm (run more tasks or epochs).")


def test_a_cost_effect_past_100x_reads_as_the_report_says_it():
    """`plan --alpha 0.000833` printed "a ratio of 0.000× (or 8806489066741052392605780653412899446849536.000×)"
    where the report said "no ratio between 0.01× and 100×" (a new user's trial, 2026-12-07)."""
    import math

    from readbench.analysis.plan import effect_text

    assert effect_text("cost", math.log(8.8e42)) == "no ratio between 0.01× and 100×"
    assert effect_text("cost", math.inf) == "no ratio between 0.01× and 100×"
    assert effect_text("cost", math.log(1.25)) == "a ratio of 0.800× (or 1.250×)"


def test_plan_refuses_an_infinite_cost_ratio_and_names_a_target_past_100x(make_logs):
    """brk12: `plan --cost-ratio inf` answered "to detect no ratio between 0.01× and 100×: about 18
    tasks", and `--cost-ratio 150` printed the same words for a target the user had asked for."""
    import math

    from readbench.analysis.plan import effect_text

    log_dir = make_logs([{"variant": "stock", "dcp": "off"}, {"variant": "B", "dcp": "off"}], _metrics, epochs=2)
    run_dir = log_dir.parent
    (run_dir / "run.json").write_text(json.dumps({"matrix": "unit"}))
    bad = CliRunner().invoke(plan, ["--from", str(run_dir), "--cost-ratio", "inf"])
    assert bad.exit_code == 2 and "cost ratio (inf) must be finite, > 0 and != 1, e.g. 0.9" in bad.output
    res = CliRunner().invoke(plan, ["--from", str(run_dir), "--cost-ratio", "150"])
    assert res.exit_code == 0, res.output
    assert "to detect a ratio of 0.007× (or 150.000×): " in res.output
    assert "to detect no ratio between" not in res.output
    assert effect_text("cost", math.log(150), target=True) == "a ratio of 0.007× (or 150.000×)"


def test_an_exclude_id_that_matches_no_sample_is_refused_by_plan_and_report(make_logs):
    """brk12: `plan --exclude zzz` (a misspelt task id) planned with the task still in every
    denominator and said nothing; `report` did the same. Both now refuse it before writing."""
    from readbench.analysis.report_cli import report

    log_dir = make_logs([{"variant": "stock", "dcp": "off"}, {"variant": "B", "dcp": "off"}], _metrics, epochs=2)
    run_dir = log_dir.parent
    (run_dir / "run.json").write_text(json.dumps({"matrix": "unit"}))
    bad = CliRunner().invoke(plan, ["--from", str(run_dir), "--exclude", "repoA/locate/9", "--exclude", "repoA/locate/1"])
    assert bad.exit_code == 2
    assert ("Invalid value for --exclude: 'repoA/locate/9': no such sample in the run (ids look like "
            "'repoA/locate/1#1')") in bad.output
    ok = CliRunner().invoke(plan, ["--from", str(run_dir), "--exclude", "repoA/locate/1", "--exclude", "repoA/locate/2#2"])
    assert ok.exit_code == 0, ok.output
    rep = CliRunner().invoke(report, [str(run_dir), "--exclude", "repoA/locate/1#3"])
    assert rep.exit_code == 2 and "Invalid value for --exclude: 'repoA/locate/1#3': no such sample" in rep.output
    assert not (run_dir / "table.parquet").exists() and not (run_dir / "report").exists()  # nothing written


def test_a_named_baseline_that_is_no_arm_of_the_run_is_refused_by_plan_and_report(make_logs):
    """brk12: `plan --baseline nope:off` printed a plan of no comparison and exited 0. A baseline
    the user names must be an arm of the run; the default's absence stays a note (a matrix
    without stock × off still gets its report from `readbench eval`)."""
    from readbench.analysis.report_cli import report

    log_dir = make_logs([{"variant": "B", "dcp": "off"}, {"variant": "C", "dcp": "off"}], _metrics)
    run_dir = log_dir.parent
    (run_dir / "run.json").write_text(json.dumps({"matrix": "unit"}))
    bad = CliRunner().invoke(plan, ["--from", str(run_dir), "--baseline", "nope:off"])
    assert bad.exit_code == 2
    assert "Invalid value for --baseline: nope:off: no such arm in the run (its arms: B:off, C:off)" in bad.output
    rep = CliRunner().invoke(report, [str(run_dir), "--baseline", "stock:off"])
    assert rep.exit_code == 2 and "Invalid value for --baseline: stock:off: no such arm in the run" in rep.output
    assert not (run_dir / "report").exists()
    default = CliRunner().invoke(plan, ["--from", str(run_dir)])  # stock:off by default: a note, as before
    assert default.exit_code == 0 and "No baseline arm (stock × off)" in default.output
    assert CliRunner().invoke(report, [str(run_dir)]).exit_code == 0
    assert CliRunner().invoke(plan, ["--from", str(run_dir), "--baseline", "B:off"]).exit_code == 0
