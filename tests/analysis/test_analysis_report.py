"""render_report on a small synthetic table whose numbers are computed by hand.

Two arms of readbench/sim-mixed, 4 tasks (2 repositories), 1 epoch, cache model openai.
baseline stock × off: success 1,0,1,0 (task repoA/locate/2 hit the turn limit)
arm      B × pi-dcp : success 1,1,1,- (repoB/edit/2 errored: no score, counts as failure)

Two repositories leave one degree of freedom: every interval uses t(0.975, 1) = 12.7062.
Wilson bounds with that quantile q on an effective size m: (p + q²/2m ± q·sqrt(p(1-p)/m + q²/4m²)) / (1 + q²/m).
"""

from __future__ import annotations

import json
import math

import pytest

from readbench.analysis.partition import partition_samples
from readbench.analysis.report import render_report

from conftest import synthetic_table

TASKS = [("repoA/locate/1", "repoA", "locate"), ("repoA/locate/2", "repoA", "locate"),
         ("repoB/edit/1", "repoB", "edit"), ("repoB/edit/2", "repoB", "edit")]


def _rows():
    rows = []
    for i, (sid, src, fam) in enumerate(TASKS):
        k = i + 1
        rows.append(dict(
            variant="stock", dcp="off", sample_id=sid, source=src, family=fam, file_lines=[800, 1500, 3000, 6000][i],
            success=[1.0, 0.0, 1.0, 0.0][i], stop_reason=["solved", "turn_limit", "solved", "wrong"][i],
            turns=10.0 * k, input_tokens=1000.0 * k, read_calls=6.0, blind_reads=2.0, capped_reads=1.0,
            blocked_reads=0.0, reread_ratio=0.25, dcp_footer_tokens_saved=0.0, cache_read_ratio_openai=0.5,
            cost_usd_openai=0.01 * k, cost_usd_unpruned_openai=0.01 * k, dcp_cost_delta_openai=0.0))
        if sid == "repoB/edit/2":
            rows.append(dict(variant="B", dcp="pi-dcp", sample_id=sid, source=src, family=fam,
                             error="RuntimeError('boom')"))
            continue
        rows.append(dict(
            variant="B", dcp="pi-dcp", sample_id=sid, source=src, family=fam, success=1.0, stop_reason="solved",
            file_lines=[800, 1500, 3000, 6000][i],
            turns=5.0 * k, input_tokens=500.0 * k, read_calls=3.0, blind_reads=0.0, capped_reads=0.0,
            blocked_reads=1.0, reread_ratio=0.1, dcp_footer_tokens_saved=100.0 * k, cache_read_ratio_openai=0.8,
            cost_usd_openai=0.005 * k, cost_usd_unpruned_openai=0.006 * k, dcp_cost_delta_openai=-0.001 * k))
    return rows


@pytest.fixture(scope="module")
def report(tmp_path_factory):
    table = synthetic_table(_rows())
    md = render_report(table, tmp_path_factory.mktemp("rep") / "report", run_meta={"name": "unit", "epochs": 1})
    return md, md.read_text()


def test_header_names_model_and_simulation_caveat(report):
    _, text = report
    assert text.startswith("# readbench report: unit\n")
    assert "Model(s): readbench/sim-mixed. Arms: 2; samples: 8 (4 tasks × 1 epoch(s) per arm at most); " \
           "clusters (source repositories): 2; task families: 2." in text
    assert "readbench/sim-mixed is a simulated agent: these results measure the harness mechanics" in text
    assert "not the quality of any LLM" in text
    assert "- epochs: 1\n- name: unit" in text
    assert "Paired comparisons use the " \
           "baseline arm stock × off of the same model, per (task, epoch)" in text


def test_report_opens_with_the_decision(report):
    _, text = report
    headings = [line for line in text.splitlines() if line.startswith("## ")]
    assert headings[:2] == ["## Decision", "## Figures"] and headings[-1] == "## Methods"
    # B's cost ratio is 0.5 on every pair (zero variance on the log scale: p = 0, significant after
    # Holm); its success difference (+25 pp, p = .5) is not. Cheaper with "no significant change in
    # success" would be a recommendation, but 2 repositories (t on 1 df) at Holm's level 0.05/2 detect
    # only a 99.4 pp success difference: no decision, and the command that says what would.
    assert ("- Priced as openai — no decision: this run detects only ≥ 99.4 pp in success for B × pi-dcp (the "
            "smallest that matters: 5 pp); `readbench plan` says what would (`readbench plan --from RUN_DIR "
            "--effect 0.05 --cost-ratio 0.9 --alpha 0.025`). B × pi-dcp is significantly cheaper under openai (cost "
            "0.500× [0.500×, 0.500×] of stock × off's), but a success drop that matters could go undetected. Pareto "
            "frontier (success ↑, median cost ↓): B × pi-dcp.") in text
    assert "Ship" not in text and "Keep" not in text
    assert "Success vs stock × off (Holm-adjusted p < 0.05): better — none; worse — none." in text
    assert ("Limit of the evidence: 4 task(s) × 1 epoch(s) from 2 cluster(s) (source repositories; tasks when "
            "there is one repository) cannot separate arms closer than 99.4 pp in success (80% power, two-sided "
            "0.05/2 = 0.025, Holm's first step over 2 confirmatory tests; ") in text
    # success p = .5 (t = .25 / .25 on 1 df), cost p = 0 -> Holm: cost 0 * 2 = 0, success max(.5 * 1, 0) = .5;
    # both intervals come from 2 clusters: marked †2 in the table itself, with the footnote in the caption
    assert ("| B × pi-dcp | +25.0 pp [-100.0 pp, +100.0 pp] †2 | 0.500 | 99.4 pp | 0.500× [0.500×, 0.500×] †2 | "
            "<0.001 | about ") in text
    assert " †N: the interval comes from N clusters (source repositories; fewer than 6), a t interval on N − 1 " \
           "degrees of freedom" in text


def test_the_detectable_difference_is_connors_rule_at_the_holm_level(report):
    """99.4 pp by hand: B vs stock has 1 discordant pair in 4 (psi = .25), 2 clusters of 2 tasks; the
    observed components (all between tasks) scaled to psi' - D^2 with psi' = max(.25, D):
    D = (t_{1-.025/2, 1} + t_{.8, 1}) sqrt((D - D^2) / 4) on 1 df."""
    import math

    from scipy import optimize
    from scipy import stats as sps

    q = sps.t.ppf(1 - 0.025 / 2, 1) + sps.t.ppf(0.8, 1)
    d = optimize.brentq(lambda x: x - q * math.sqrt((max(0.25, x) - x * x) / 4), 0.3, 1 - 1e-9)
    assert f"{100 * d:.1f}" == "99.4"


def test_arm_table_rows_are_hand_computed(report):
    _, text = report
    # stock: repos A (1,0), B (1,0) have the overall rate: CR2 SE 0 -> design effect 1, m = 4:
    # Wilson(p=.5, m=4, q=12.706) = [0.61%, 99.39%].
    # B: A (1,1), B (1,0): residual sums +.5, -.5 -> V = .5 / (16 * .5) = 1/16; p(1-p)/n = .046875;
    # deff 4/3, m = 3: Wilson(.75, 3, q) = [1.03%, 99.88%].
    # B's turns/tokens come from its 3 scored samples: mean(5,10,15) = 10, median(500,1000,1500) = 1000.
    assert ("| stock × off | 4 (4×1) | 2 | 50.0% | [0.6%, 99.4%] †2 | 25.00 | 2,500 | 6.00 | 2.00 | 1.00 | 0.00 "
            "| 0.250 | 0 | 1 |") in text
    assert ("| B × pi-dcp | 4 (4×1) | 2 | 75.0% | [1.0%, 99.9%] †2 | 10.00 | 1,000 | 3.00 | 0.00 | 0.00 | 1.00 "
            "| 0.100 | 1 | 0 |") in text


def test_family_rows_grouped(report):
    _, text = report
    # One repository per family -> the clusters are the 2 tasks (singletons), df 1.
    # locate: stock 1/2: V = (.25 + .25) / (4 * .5) = .25 = 2 p(1-p)/n -> m = 1: Wilson(.5, 1, q):
    # centre .5, half-width q / (1 + q²) * sqrt(.25 + q²/4) = .49847 -> [0.2%, 99.8%];
    # B 2/2: constant outcomes -> m = G = 2: Wilson(1, 2, q) lower 2 / (2 + q²) = 1.2%.
    assert "| **family: locate** |" in text
    assert "| stock × off | 2 (2×1) | 2 | 50.0% | [0.2%, 99.8%] †2 | 15.00 | 1,500 | 6.00 | 0.250 |" in text
    assert "| B × pi-dcp | 2 (2×1) | 2 | 100.0% | [1.2%, 100.0%] †2 | 7.50 | 750 | 3.00 | 0.100 |" in text


def test_cache_table_puts_footer_estimate_next_to_real_delta(report):
    _, text = report
    # B: mean footer (100,200,300) = 200 tokens; delta mean(-.001,-.002,-.003) = -$0.0020;
    # unpruned mean(.006,.012,.018) = $0.0120; -0.002/0.012 = -16.7%
    # mean cost B = mean(.005,.010,.015) = $0.0100 = mean unpruned $0.0120 + mean delta -$0.0020
    assert "| B × pi-dcp | openai | 3 | 2 | 0.800 | $0.0100 | $0.0100 | $0.0120 | 200 | -$0.0020 | -16.7% |" in text
    assert "| stock × off | openai | 4 | 2 | 0.500 | $0.0250 | $0.0250 | $0.0250 | 0 | $0.0000 | 0.0% |" in text


def test_paired_tables_are_hand_computed(report):
    _, text = report
    # success pairs: d = 0,+1 (repoA), 0,0 (repoB) -> +25.0 pp; residual sums +.5, -.5 -> V = 1/16,
    # SE .25, df 1: t interval .25 ± 12.706 * .25, clipped to [-1, 1]; p = 2 P(t_1 > 1) = .5.
    # McNemar: 2 both, 1 arm-only, 0 baseline-only, 1 neither -> binomtest(1, 1) p = 1.
    assert ("| B × pi-dcp | stock × off | 4 (4×1) | 2 | 0 | +25.0 pp | [-100.0 pp, +100.0 pp] †2 | 1.0 | 0.500 | 0.500 "
            "| 2/1/0/1 | 1.000 |") in text
    # turns over the 3 scored pairs: d = -5, -10 (repoA), -15 (repoB): mean -10, residual sums +5, -5 with
    # sizes 2, 1: V = (25 / (1 - 2/3) + 25 / (1 - 1/3)) / 9 = 12.5, SE 3.5355, df 1 -> [-54.9, +34.9];
    # p = 2 P(t_1 > 2.828) = .216; Wilcoxon: 3 negative differences, exact p = 2/2^3 = .25.
    assert "| B × pi-dcp | turns | 3 (3×1) | 2 | 20.00 | 10.00 | -10.0 | [-54.9, +34.9] †2 | — | — | 0.216 | — | 0.250 |" in text
    # tokens: ratio 0.5 on every pair -> log ratios all equal: SE 0, interval [0.5, 0.5], p 0 (exploratory: no Holm)
    assert ("| B × pi-dcp | input tokens | 3 (3×1) | 2 | 2,000 | 1,000 | -1,000.0 | [-5,492.3, +3,492.3] †2 | 0.500× "
            "| [0.500×, 0.500×] †2 | <0.001 | — | 0.250 |") in text
    # cost: confirmatory, Holm p = min(1, 2 * 0) = 0
    assert ("| B × pi-dcp | cost USD (openai) | 3 (3×1) | 2 | $0.0200 | $0.0100 | -$0.0100 | [-$0.0549, +$0.0349] †2 "
            "| 0.500× | [0.500×, 0.500×] †2 | <0.001 | <0.001 | 0.250 |") in text


def test_partition_section_and_json(report):
    md, text = report
    assert "| stock × off | 4 (4×1) | 2 | 3 | 2 | 1 | 0 | 0 | 4 |" in text
    assert "| B × pi-dcp | 4 (4×1) | 2 | 3 | 3 | 0 | 1 | 0 | 4 |" in text
    assert "- B × pi-dcp — errored: repoB/edit/2#1" in text
    assert "- stock × off — limit-hit: repoA/locate/2#1" in text
    data = json.loads((md.parent / "partition.json").read_text())
    assert [a["arm"] for a in data["arms"]] == ["stock × off @ readbench/sim-mixed", "B × pi-dcp @ readbench/sim-mixed"]
    b = data["arms"][1]
    assert b["arm"] == "B × pi-dcp @ readbench/sim-mixed" and b["errored_ids"] == ["repoB/edit/2#1"]
    assert b["completed_ids"] == ["repoA/locate/1#1", "repoA/locate/2#1", "repoB/edit/1#1"]
    assert (b["n_completed"], b["n_errored"], b["n_tasks"], b["n_epochs"], b["n_clusters"]) == (3, 1, 4, 1, 2)


def test_html_is_self_contained_and_figures_written(report):
    md, text = report
    html = (md.parent / "report.html").read_text()
    assert html.startswith("<!doctype html>")
    assert "src=\"data:image/png;base64," in html and "success.png" not in html.split("<body>")[1].split("alt=")[0]
    assert "<td>[0.6%, 99.4%] †2</td>" in html
    assert '<tr class="group"><td colspan="9">family: edit</td></tr>' in html
    assert "<script" not in html and "http" not in html.split("<body>")[1]  # nothing fetched
    for name in ("pareto.png", "forest.png", "cache_ratio.png", "fragmentation.png"):
        assert (md.parent / name).read_bytes()[:8] == b"\x89PNG\r\n\x1a\n"
        assert "![" in text and f"]({name})" in text


def test_exclusion_leaves_denominators(tmp_path):
    table = synthetic_table(_rows())
    md = render_report(table, tmp_path / "r", run_meta={}, exclude=("repoB/edit/2",))
    text = md.read_text()
    assert "| stock × off | 3 (3×1) | 2 | 66.7% |" in text
    assert "| stock × off | 4 (4×1) | 2 | 2 | 2 | 1 | 0 | 1 | 3 |" in text  # edit/2 (wrong) moved to excluded
    assert "- stock × off — excluded: repoB/edit/2#1" in text


def test_missing_baseline_is_stated(tmp_path):
    rows = [r for r in _rows() if r["variant"] == "B"]
    text = render_report(synthetic_table(rows), tmp_path / "r", run_meta={}).read_text()
    assert ("No paired comparison: No baseline arm (stock × off) for model readbench/sim-mixed: its arms have no "
            "paired comparison.") in text


def test_render_report_validation_messages(tmp_path):
    table = synthetic_table(_rows())
    with pytest.raises(ValueError, match="table is empty: no samples to report"):
        render_report(table.iloc[0:0], tmp_path, run_meta={})
    with pytest.raises(ValueError, match=r"table lacks column\(s\) \['source'\] needed for the report"):
        render_report(table.drop(columns=["source"]), tmp_path, run_meta={})
    with pytest.raises(ValueError, match="every sample is excluded: no denominator left"):
        render_report(table, tmp_path, run_meta={}, exclude=tuple(t[0] for t in TASKS))


def test_partition_is_disjoint_and_complete():
    table = synthetic_table(_rows())
    part = partition_samples(table)
    for p in part.arms:
        buckets = [set(p.completed), set(p.limit_hit), set(p.errored), set(p.excluded)]
        assert sum(len(b) for b in buckets) == p.n_total == 4
        assert set().union(*buckets) == {f"{t[0]}#1" for t in TASKS}
    with pytest.raises(KeyError, match="arm 'nope' not in partition"):
        part.for_arm("nope")
    with pytest.raises(ValueError, match="table is empty: no samples to partition"):
        partition_samples(table.iloc[0:0])


def test_frontier_arms_not_significantly_different_from_the_baseline_are_marked_ns(tmp_path):
    """B's cost varies around the baseline's (×0.8, ×1.1, ×0.9 on its 3 scored pairs: Holm p > .05) and
    its success difference is n.s.: it is on the frontier (higher success, lower median cost) but marked
    "(n.s.)" in the decision and drawn hollow in the figure."""
    from readbench.analysis._decision import pareto_points
    from readbench.analysis.aggregate import arm_summaries
    from readbench.analysis.compare import paired_comparisons

    rows = _rows()
    factors = iter([0.8, 1.1, 0.9])
    for r in rows:
        if r["variant"] == "B" and "cost_usd_openai" in r:
            base = next(x for x in rows if x["variant"] == "stock" and x["sample_id"] == r["sample_id"])
            r["cost_usd_openai"] = base["cost_usd_openai"] * next(factors)
    table = synthetic_table(rows)
    comparisons, _ = paired_comparisons(table)
    points = pareto_points(arm_summaries(table), ["openai"], False, ("stock", "off"), comparisons)
    assert points.set_index("arm")[["frontier", "ns", "baseline"]].to_dict("index") == {
        "stock × off": {"frontier": False, "ns": False, "baseline": True},
        "B × pi-dcp": {"frontier": True, "ns": True, "baseline": False}}
    md = render_report(table, tmp_path / "report", run_meta={"name": "ns"})
    text = md.read_text()
    assert "Pareto frontier (success ↑, median cost ↓): B × pi-dcp (n.s.)." in text
    assert ("n.s.: not significantly different from stock × off in success or in cost under that cache model (Holm): "
            "its place on the frontier is within noise.") in text
    assert (tmp_path / "report" / "pareto.png").stat().st_size > 10_000


def test_no_decision_wording_reads_as_a_sentence_at_the_extremes():
    """The smoke report said "this run detects only nothing short of a 100 pp success difference" and
    "this run detects only no cost ratio between 0.01× and 100×"."""
    from readbench.analysis._decision import _cost_only, _success_only

    # (a trial read "this run detects only nothing in success (fewer than 2 clusters)")
    assert _success_only(1.0) == "only a 100 pp success difference (every task flipped)"
    assert _success_only(float("nan")) == "no success difference at all (fewer than 2 clusters of tasks)"
    assert _success_only(0.966) == "only ≥ 96.6 pp in success"
    assert _cost_only(math.log(1000.0)) == "only cost ratios below 0.01× or above 100×"
    assert _cost_only(float("nan")) == "no cost difference at all (fewer than 2 clusters of tasks)"
