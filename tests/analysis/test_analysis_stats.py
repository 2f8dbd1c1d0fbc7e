"""readbench.analysis.stats against independent implementations (tolerances stated per test)."""

from __future__ import annotations

import doctest
import itertools

import numpy as np
import pytest
from scipy import stats as sps
from statsmodels.stats.contingency_tables import mcnemar as sm_mcnemar
from statsmodels.stats.multitest import multipletests
from statsmodels.stats.proportion import proportion_confint

from readbench.analysis import _cluster, _paired, _summaries, stats
from readbench.analysis.stats import (
    geometric_mean_ratio,
    heavy_tail_summary,
    holm_adjust,
    mcnemar_exact,
    paired_difference,
    success_rate,
    wilcoxon_signed_rank,
    wilson_interval,
)


def test_docstring_examples_run():
    for mod in (stats, _paired, _summaries, _cluster):
        result = doctest.testmod(mod)
        assert result.attempted > 0 and result.failed == 0, mod.__name__


# --- Wilson -----------------------------------------------------------------------------


@pytest.mark.parametrize("k,n", [(0, 10), (1, 10), (7, 10), (10, 10), (13, 40), (250, 300), (1, 1)])
@pytest.mark.parametrize("conf", [0.9, 0.95, 0.99])
def test_wilson_matches_statsmodels(k, n, conf):
    # tolerance 1e-12: same closed form, different code
    low, high = proportion_confint(k, n, alpha=1 - conf, method="wilson")
    ci = wilson_interval(k, n, conf)
    assert ci.low == pytest.approx(low, abs=1e-12)
    assert ci.high == pytest.approx(high, abs=1e-12)


def test_wilson_fractional_effective_n_matches_statsmodels():
    low, high = proportion_confint(0.6 * 12.5, 12.5, alpha=0.05, method="wilson")
    ci = wilson_interval(0.6 * 12.5, 12.5)
    assert (ci.low, ci.high) == (pytest.approx(low, abs=1e-12), pytest.approx(high, abs=1e-12))


@pytest.mark.parametrize(
    "args,msg",
    [
        ((3, 0), r"n \(0.0\) must be a finite number > 0"),
        ((5, 4), r"successes \(5.0\) must be in \[0, n\] with n = 4.0"),
        ((-1, 4), r"successes \(-1.0\) must be in \[0, n\]"),
        ((1, 4, 1.0), r"confidence \(1.0\) must be in the open interval \(0, 1\)"),
    ],
)
def test_wilson_validation_messages(args, msg):
    with pytest.raises(ValueError, match=msg):
        wilson_interval(*args)


# --- success rate -------------------------------------------------------------------------


def test_success_rate_unclustered_is_plain_wilson():
    est = success_rate([1, 1, 1, 0, 0, 1, 0, 1])
    low, high = proportion_confint(5, 8, alpha=0.05, method="wilson")
    assert (est.rate, est.n, est.n_clusters, est.method, est.design_effect) == (0.625, 8, 1, "wilson", 1.0)
    assert (est.ci.low, est.ci.high) == (pytest.approx(low, abs=1e-12), pytest.approx(high, abs=1e-12))
    assert est.se_clt == pytest.approx(np.std([1, 1, 1, 0, 0, 1, 0, 1], ddof=1) / np.sqrt(8), rel=1e-12)


def test_success_rate_clustered_is_wilson_on_the_cr2_effective_size_with_t():
    # clusters a=[1,1,1,0], b=[0,0,0,1] (n = 8, p = .5): residual sums +1, -1, equal sizes ->
    # V_CR2 = G/(G-1) * (1 + 1) / 64 = 4/64; deff = V / (.25/8) = 2; n_eff = 4; q = t(.975, 1)
    s = [1, 1, 1, 0, 0, 0, 0, 1]
    est = success_rate(s, clusters=list("aaaabbbb"))
    q = sps.t.ppf(0.975, 1)
    center = (0.5 + q * q / 8) / (1 + q * q / 4)
    half = q / (1 + q * q / 4) * np.sqrt(0.25 / 4 + q * q / 64)
    assert est.method == "wilson-cr2-t" and (est.n_clusters, est.df) == (2, 1.0)
    assert est.design_effect == pytest.approx(2.0, rel=1e-12)
    assert est.se_clustered == pytest.approx(0.25, rel=1e-12)
    assert est.ci.low == pytest.approx(max(0.0, center - half), abs=1e-12)
    assert est.ci.high == pytest.approx(min(1.0, center + half), abs=1e-12)
    # Wilson with z and n_eff = 4 is statsmodels' Wilson interval on 2 of 4: narrower than ours (t_1 >> z)
    low_z, high_z = proportion_confint(2, 4, alpha=0.05, method="wilson")
    assert est.ci.low < low_z and est.ci.high > high_z


def test_success_rate_constant_outcomes_use_one_sample_per_cluster():
    # 6 successes in 3 clusters: nothing to estimate the correlation from -> n_eff = G = 3, t(2)
    est = success_rate([1] * 6, clusters=list("aabbcc"))
    q = sps.t.ppf(0.975, 2)
    assert est.design_effect == 2.0 and est.ci.high == 1.0
    assert est.ci.low == pytest.approx(3 / (3 + q * q), abs=1e-12)  # Wilson lower bound at p = 1
    # every cluster at exactly the overall rate: SE 0 -> design effect 1
    even = success_rate([1, 0, 1, 0], clusters=list("aabb"))
    assert even.se_clustered == 0.0 and even.design_effect == 1.0 and even.ci.low < 0.5 < even.ci.high


def test_success_rate_single_sample_has_nan_se():
    est = success_rate([1])
    assert est.n == 1 and np.isnan(est.se_clt) and est.ci.high == 1.0


@pytest.mark.parametrize(
    "args,kwargs,msg",
    [
        (([],), {}, "successes is empty: no samples in this group"),
        (([1, 0.5],), {}, r"successes must hold only 0 and 1, got 0.5 at position 1"),
        (([1, np.nan],), {}, r"successes has a non-finite value \(nan\) at position 1"),
        (([1, 0],), {"clusters": ["a"]}, r"clusters \(length 1\) must have one label per value \(length 2\)"),
        (([1, 0],), {"clusters": ["a", None]}, "clusters has a missing label at position 1"),
        (([[1, 0]],), {}, r"successes must be 1-D, got shape \(1, 2\)"),
    ],
)
def test_success_rate_validation_messages(args, kwargs, msg):
    with pytest.raises(ValueError, match=msg):
        success_rate(*args, **kwargs)


# --- paired difference ------------------------------------------------------------------


def test_unclustered_paired_difference_is_scipys_paired_t_test():
    # tolerance 1e-12: the same t statistic and distribution, different code
    rng = np.random.default_rng(4)
    a, b = rng.normal(10, 2, 15), rng.normal(9, 2, 15)
    r = paired_difference(a, b)
    ref = sps.ttest_rel(a, b)
    ci = ref.confidence_interval(0.95)
    assert (r.method, r.df, r.n_clusters) == ("paired-t", 14.0, 15)
    assert r.p_value == pytest.approx(ref.pvalue, abs=1e-12)
    assert (r.ci.low, r.ci.high) == (pytest.approx(ci.low, abs=1e-12), pytest.approx(ci.high, abs=1e-12))
    # one cluster label = unclustered
    assert paired_difference(a, b, ["r"] * 15) == r


def test_paired_difference_hand_example():
    # d = [2, 3, 1, 2] -> mean 2; sd(d, ddof=1) = sqrt(2/3); se = sqrt(2/3)/2 = 0.408248...
    r = paired_difference([3, 5, 4, 6], [1, 2, 3, 4])
    assert r.mean_difference == 2.0 and r.n_pairs == 4 and r.n_clusters == 4
    assert r.se == pytest.approx(np.sqrt(2 / 3) / 2, abs=1e-15)
    assert r.ci.low == pytest.approx(2 - sps.t.ppf(0.975, 3) * np.sqrt(2 / 3) / 2, abs=1e-12)


def test_paired_difference_clustered_hand_example():
    # d = [1,1,0,0] in clusters a,a,b,b: mean .5, residual sums +1, -1 -> V = 2/(16 * 1/2) = 1/4
    r = paired_difference([1, 1, 0, 0], [0, 0, 0, 0], ["a", "a", "b", "b"])
    assert r.se == pytest.approx(0.5, abs=1e-15) and (r.method, r.df, r.n_clusters) == ("cr2-t", 1.0, 2)
    q = sps.t.ppf(0.975, 1)
    assert (r.ci.low, r.ci.high) == (pytest.approx(0.5 - q * 0.5, abs=1e-12), pytest.approx(0.5 + q * 0.5, abs=1e-12))
    assert r.p_value == pytest.approx(2 * sps.t.sf(1.0, 1), abs=1e-12)


def test_paired_difference_degenerate_cases():
    d = paired_difference([1.0], [0.0], ["repo"])
    assert d.mean_difference == 1.0 and np.isnan(d.ci.low) and np.isnan(d.se) and np.isnan(d.p_value)
    same = paired_difference([1, 0, 1], [1, 0, 1], list("abc"))
    assert (same.ci.low, same.ci.high, same.se, same.p_value) == (0.0, 0.0, 0.0, 1.0)


@pytest.mark.parametrize(
    "t,b,msg",
    [
        ([1, 2, 3], [1, 2], r"treatment \(length 3\) and baseline \(length 2\) must have the same length"),
        ([], [], "treatment is empty: no samples in this group"),
        ([1.0], [np.inf], r"baseline has a non-finite value \(inf\) at position 0"),
    ],
)
def test_paired_difference_validation_messages(t, b, msg):
    with pytest.raises(ValueError, match=msg):
        paired_difference(t, b)
    with pytest.raises(ValueError, match=r"confidence \(1.5\) must be in the open interval"):
        paired_difference([1.0, 2.0], [1.0, 1.0], confidence=1.5)


# --- McNemar ----------------------------------------------------------------------------


@pytest.mark.parametrize("seed", range(6))
def test_mcnemar_matches_statsmodels_exact(seed):
    rng = np.random.default_rng(seed)
    a = (rng.random(40) < 0.6).astype(int)
    b = (rng.random(40) < 0.45).astype(int)
    r = mcnemar_exact(a, b)
    table = [[r.both_success, r.treatment_only], [r.baseline_only, r.neither]]
    ref = sm_mcnemar(table, exact=True)
    assert r.p_value == pytest.approx(ref.pvalue, abs=1e-12)  # tol 1e-12: both exact binomial sums
    assert r.both_success + r.treatment_only + r.baseline_only + r.neither == 40


def test_mcnemar_no_discordant_pairs():
    r = mcnemar_exact([1, 0, 1], [1, 0, 1])
    assert (r.treatment_only, r.baseline_only, r.p_value) == (0, 0, 1.0)
    assert sm_mcnemar([[2, 0], [0, 1]], exact=True).pvalue == 1.0


def test_mcnemar_validation_messages():
    with pytest.raises(ValueError, match=r"treatment_success \(length 2\) and baseline_success \(length 3\)"):
        mcnemar_exact([1, 0], [1, 0, 1])
    with pytest.raises(ValueError, match="baseline_success must hold only 0 and 1, got 2.0 at position 0"):
        mcnemar_exact([1], [2])


# --- Wilcoxon ---------------------------------------------------------------------------


def _exact_signed_rank_p(d: np.ndarray) -> float:
    """Independent brute force: enumerate all 2^n sign patterns of the ranks (no ties)."""
    ranks = sps.rankdata(np.abs(d))
    r_plus = ranks[d > 0].sum()
    dist = [sum(r for r, s in zip(ranks, signs) if s) for signs in itertools.product([0, 1], repeat=len(d))]
    dist = np.array(dist)
    return min(1.0, 2 * min(np.mean(dist <= r_plus), np.mean(dist >= r_plus)))


@pytest.mark.parametrize("seed", range(4))
def test_wilcoxon_matches_brute_force_exact_distribution(seed):
    rng = np.random.default_rng(seed)
    a = rng.normal(1000, 300, size=11)
    b = a * rng.lognormal(0.1, 0.3, size=11)
    r = wilcoxon_signed_rank(a, b)
    assert r.n_nonzero == 11
    assert r.p_value == pytest.approx(_exact_signed_rank_p(a - b), abs=1e-12)  # exact vs exact


def test_wilcoxon_drops_zeros_and_handles_all_equal():
    r = wilcoxon_signed_rank([5, 6, 7, 8, 9], [5, 5, 5, 5, 5])
    assert (r.n_pairs, r.n_nonzero) == (5, 4)
    assert r.p_value == pytest.approx(_exact_signed_rank_p(np.array([1.0, 2, 3, 4])), abs=1e-12)
    same = wilcoxon_signed_rank([3, 3], [3, 3])
    assert (same.statistic, same.p_value, same.n_nonzero) == (0.0, 1.0, 0)


def test_wilcoxon_on_log_scale_ranks_log_ratios_of_positive_pairs():
    a = np.array([100.0, 2000.0, 0.0, 35.0, 900.0, 61.0])
    b = np.array([120.0, 1000.0, 5.0, 30.0, 1000.0, 50.0])
    r = wilcoxon_signed_rank(a, b, log_scale=True)
    keep = (a > 0) & (b > 0)
    d = np.log(a[keep]) - np.log(b[keep])
    assert (r.scale, r.n_pairs, r.n_nonzero) == ("log-ratio", 5, 5)
    assert r.p_value == pytest.approx(_exact_signed_rank_p(d), abs=1e-12)
    # raw differences rank the 2000-vs-1000 pair first; on the log scale it is one ratio among others
    assert wilcoxon_signed_rank(a[keep], b[keep]).p_value != r.p_value
    with pytest.raises(ValueError, match=r"baseline must be >= 0 for a ratio, got -1.0 at position 0"):
        wilcoxon_signed_rank([1.0], [-1.0], log_scale=True)


# --- ratios, summaries, multiplicity ------------------------------------------------------


def test_geometric_mean_ratio_hand_example_and_exclusions():
    # ratios 2 and 4 -> exp(mean(log 2, log 4)) = sqrt(8); the (0, 5) pair is excluded.
    # log ratios ln2, ln4 in 2 clusters: mean 1.5 ln2, SE = ln2 / 2 (paired t, df 1)
    r = geometric_mean_ratio([2, 8, 0], [1, 2, 5], ["a", "b", "c"])
    assert r.ratio == pytest.approx(np.sqrt(8), rel=1e-12)
    assert (r.n_pairs, r.n_excluded, r.n_clusters, r.df) == (2, 1, 2, 1.0)
    q = sps.t.ppf(0.975, 1)
    assert r.ci.low == pytest.approx(np.exp(1.5 * np.log(2) - q * np.log(2) / 2), rel=1e-12)
    assert r.p_value == pytest.approx(2 * sps.t.sf(3.0, 1), abs=1e-12)


def test_geometric_mean_ratio_validation_messages():
    with pytest.raises(ValueError, match=r"no pair has both treatment and baseline > 0 \(n pairs = 2\)"):
        geometric_mean_ratio([0, 1], [1, 0])
    with pytest.raises(ValueError, match=r"treatment must be >= 0 for a ratio, got -1.0 at position 0"):
        geometric_mean_ratio([-1], [1])


def test_heavy_tail_summary_against_scipy_gmean():
    v = np.array([120.0, 3400.0, 56.0, 0.0, 980.0, 77000.0])
    s = heavy_tail_summary(v)
    assert s.geometric_mean == pytest.approx(sps.gmean(v[v > 0]), rel=1e-12)
    assert (s.n, s.n_nonpositive, s.median) == (6, 1, (120.0 + 980.0) / 2)
    assert np.isnan(heavy_tail_summary([0.0, 0.0]).geometric_mean)


def test_holm_matches_statsmodels():
    p = [0.01, 0.04, 0.03, 0.2, 0.5, 0.001]
    ref = multipletests(p, method="holm")[1]
    assert holm_adjust(p) == pytest.approx(tuple(ref), abs=1e-15)
    assert holm_adjust([]) == ()
    with pytest.raises(ValueError, match=r"p_values must be in \[0, 1\], got \[1.5\]"):
        holm_adjust([1.5])
