"""Aggregation and paired comparisons: pairing rules, unmatched counts, per-model baselines,
Holm across the confirmatory family, the one-call `paired_comparison`."""

from __future__ import annotations

import numpy as np
import pytest

import readbench.analysis as analysis
from readbench.analysis.aggregate import arm_summaries
from readbench.analysis.compare import paired_comparison, paired_comparisons
from readbench.analysis.stats import geometric_mean_ratio, holm_adjust, mcnemar_exact, paired_difference

from conftest import synthetic_table


def _row(variant, dcp, sid, success, model="readbench/sim-mixed", epoch=1, tokens=100.0):
    return dict(variant=variant, dcp=dcp, sample_id=sid, source=sid.split("/")[0], family="locate", epoch=epoch,
                model=model, success=success, stop_reason="solved" if success else "wrong", turns=3.0,
                input_tokens=tokens, read_calls=1.0, reread_ratio=0.0, cache_read_ratio_openai=0.5,
                cost_usd_openai=tokens / 1e4)


def test_holm_is_applied_across_the_confirmatory_family_of_one_model():
    ids = [f"r{i % 3}/t/{i}" for i in range(12)]
    base = [1.0 if i < 4 else 0.0 for i in range(12)]
    arm1 = [1.0 if i < 11 else 0.0 for i in range(12)]   # 7 arm-only, 0 baseline-only
    arm2 = [1.0 if i < 6 else 0.0 for i in range(12)]    # 2 arm-only
    rows = [_row("stock", "off", s, b) for s, b in zip(ids, base)]
    rows += [_row("A", "off", s, a) for s, a in zip(ids, arm1)]
    rows += [_row("C", "off", s, a) for s, a in zip(ids, arm2)]
    comps, notes = paired_comparisons(synthetic_table(rows))
    assert notes == ()
    assert [c.arm.split(" @ ")[0] for c in comps] == ["A × off", "C × off"]
    assert [c.mcnemar.p_value for c in comps] == [mcnemar_exact(arm1, base).p_value, mcnemar_exact(arm2, base).p_value]
    # family: success and cost_usd_openai of both arms (4 tests); other metrics stay unadjusted
    repos = [s.split("/")[0] for s in ids]
    cost = [np.array([100.0] * 12) / 1e4] * 3
    raw = [paired_difference(arm1, base, repos).p_value, paired_difference(arm2, base, repos).p_value]
    assert [c.success.p_value for c in comps] == pytest.approx(raw, abs=1e-15)
    cost_p = [c.metric("cost_usd_openai").p_value for c in comps]
    assert cost_p == [1.0, 1.0] and cost[0][0] == 0.01  # equal costs: log ratio 0, p = 1
    family = holm_adjust(raw[:1] + cost_p[:1] + raw[1:] + cost_p[1:])
    assert [comps[0].success.p_holm, comps[0].metric("cost_usd_openai").p_holm, comps[1].success.p_holm,
            comps[1].metric("cost_usd_openai").p_holm] == pytest.approx(list(family), abs=1e-15)
    assert np.isnan(comps[0].metric("turns").p_holm) and not comps[0].metric("turns").confirmatory
    assert comps[0].mcnemar.treatment_only == 7 and comps[0].success.estimate == pytest.approx(7 / 12)
    assert (comps[0].n_pairs, comps[0].n_tasks, comps[0].n_epochs, comps[0].n_clusters) == (12, 12, 1, 3)


def test_each_agent_is_paired_with_its_own_baseline():
    """Under several agents (GitHub issue 24) B × off × pi pairs with stock × off × pi, not with the
    loop's stock × off; an agent without a baseline arm is named in a note."""
    ids = [f"r{i}/t/{i}" for i in range(4)]
    rows = [_row("stock", "off", s, 1.0) | {"agent": a} for s in ids for a in ("readbench", "pi")]
    rows += [_row("B", "off", s, 1.0 if i < 2 else 0.0) | {"agent": "pi"} for i, s in enumerate(ids)]
    rows += [_row("B", "off", s, 1.0) | {"agent": "readbench"} for s in ids]
    rows += [_row("B", "off", s, 1.0) | {"agent": "pi@1.6.0"} for s in ids]
    comps, notes = paired_comparisons(synthetic_table(rows))
    assert [(c.arm, c.baseline_arm) for c in comps] == [
        ("B × off @ readbench/sim-mixed", "stock × off @ readbench/sim-mixed"),
        ("B × off × pi @ readbench/sim-mixed", "stock × off × pi @ readbench/sim-mixed")]
    assert [c.success.estimate for c in comps] == [0.0, -0.5]
    assert notes == ("No baseline arm (stock × off) for model readbench/sim-mixed under agent pi@1.6.0: its arms "
                     "have no paired comparison.",)


def test_pairs_join_on_sample_and_epoch_within_model_and_count_unmatched():
    rows = [_row("stock", "off", "r/t/1", 1.0), _row("stock", "off", "r/t/2", 0.0),
            _row("B", "off", "r/t/1", 1.0), _row("B", "off", "r/t/3", 1.0),  # r/t/3 has no baseline partner
            _row("stock", "off", "r/t/1", 0.0, model="other/m"), _row("B", "off", "r/t/1", 1.0, model="other/m")]
    comps, _ = paired_comparisons(synthetic_table(rows))
    by_model = {c.model: c for c in comps}
    assert by_model["readbench/sim-mixed"].n_pairs == 1 and by_model["readbench/sim-mixed"].n_unmatched == 2
    assert by_model["other/m"].baseline_arm == "stock × off @ other/m"
    assert by_model["other/m"].success.estimate == 1.0


def test_arm_without_shared_pairs_is_noted():
    rows = [_row("stock", "off", "r/t/1", 1.0), _row("B", "off", "r/t/2", 1.0)]
    comps, notes = paired_comparisons(synthetic_table(rows))
    assert comps == ()
    assert notes == ("Arm B × off @ readbench/sim-mixed shares no (task, epoch) with its baseline: no paired comparison.",)


def test_heavy_tailed_metrics_use_median_and_ratio():
    rows = [_row("stock", "off", f"r/t/{i}", 1.0, tokens=t) for i, t in enumerate([100.0, 200.0, 10_000.0])]
    rows += [_row("B", "off", f"r/t/{i}", 1.0, tokens=t / 2) for i, t in enumerate([100.0, 200.0, 10_000.0])]
    table = synthetic_table(rows)
    base = arm_summaries(table)[0]
    tok = base.metric("input_tokens")
    assert base.arm.startswith("stock") and (tok.n, tok.median, tok.headline) == (3, 200.0, 200.0)
    assert tok.mean == pytest.approx(10_300 / 3, rel=1e-15)
    assert base.metric("turns").headline == base.metric("turns").mean == 3.0
    with pytest.raises(KeyError, match="metric 'nope' not summarised for arm"):
        base.metric("nope")
    comps, _ = paired_comparisons(table)
    tok = comps[0].metric("input_tokens")
    assert tok.scale == "ratio" and tok.estimate == pytest.approx(0.5, rel=1e-12)
    assert tok.wilcoxon.scale == "log-ratio"
    turns = comps[0].metric("turns")
    assert turns.ratio is None and turns.scale == "difference" and turns.estimate == 0.0
    assert turns.wilcoxon.scale == "difference"


def test_paired_comparison_of_rows_from_two_tables_matches_the_statistics():
    # arm X in a run vs the same arm in a committed baseline run: one call per metric
    run = synthetic_table([_row("B", "off", f"r{i % 3}/t/{i}", float(i % 2), tokens=100.0 + 10 * i) for i in range(9)])
    ref = synthetic_table([_row("B", "off", f"r{i % 3}/t/{i}", float(i % 3 == 0), tokens=120.0) for i in range(9)])
    repos = [f"r{i % 3}" for i in range(9)]
    s = paired_comparison(run, ref, "success")
    expected = paired_difference([float(i % 2) for i in range(9)], [float(i % 3 == 0) for i in range(9)], repos)
    assert (s.estimate, s.p_value, s.n_clusters) == (expected.mean_difference, expected.p_value, 3)
    # the t interval (df 2) overshoots [-1, 1]; a difference of proportions is clipped to it
    assert expected.ci.low < -1 and (s.ci.low, s.ci.high) == (-1.0, min(1.0, expected.ci.high))
    c = paired_comparison(run, ref, "cost_usd_openai")
    gm = geometric_mean_ratio([(100.0 + 10 * i) / 1e4 for i in range(9)], [0.012] * 9, repos)
    assert (c.scale, c.estimate, c.ci, c.p_value) == ("ratio", gm.ratio, gm.ci, gm.p_value)
    with pytest.raises(ValueError, match="the two arms share no \\(task, epoch\\) with metric 'success'"):
        paired_comparison(run, ref.assign(epoch=2), "success")
    with pytest.raises(ValueError, match=r"treatment rows lack column\(s\) \['source'\] needed to pair samples"):
        paired_comparison(run.drop(columns=["source"]), ref, "success")


def test_aggregate_validation_messages():
    with pytest.raises(ValueError, match="table is empty: nothing to aggregate"):
        arm_summaries(synthetic_table([]))
    table = synthetic_table([_row("stock", "off", "r/t/1", 1.0)])
    with pytest.raises(ValueError, match="every sample is excluded: no denominator left"):
        arm_summaries(table, exclude=["r/t/1#1"])
    with pytest.raises(ValueError, match=r"table lacks column\(s\) \['stop_reason'\] needed to partition samples"):
        arm_summaries(table.drop(columns=["stop_reason"]))


def test_package_exports_are_lazy():
    assert analysis.tidy_table.__module__ == "readbench.analysis.table"
    assert analysis.render_report.__module__ == "readbench.analysis.report"
    with pytest.raises(AttributeError, match="has no attribute 'nope'"):
        analysis.nope  # noqa: B018


def test_single_repository_clusters_by_task_so_epochs_are_not_independent():
    # one repo, 2 tasks x 3 epochs, outcome constant within task: t1 always 1, t2 always 0.
    rows = [_row("stock", "off", f"repo/t/{t}", 1.0 if t == 1 else 0.0, epoch=e) for t in (1, 2) for e in (1, 2, 3)]
    s = arm_summaries(synthetic_table(rows))[0]
    assert (s.n_tasks, s.n_epochs, s.n_clusters) == (2, 3, 2)
    assert s.success.method == "wilson-cr2-t" and s.success.df == 1.0
    # e = +-0.5, task sums +-1.5, equal sizes: V_CR2 = (2.25 + 2.25) / (36 * (1 - 1/2)) = 0.25;
    # p(1-p)/n = 0.25/6 -> design effect 6 (each task is one effective sample)
    assert s.success.design_effect == pytest.approx(6.0, rel=1e-12)
