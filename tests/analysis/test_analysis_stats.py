"""readbench.analysis.stats against independent implementations (tolerances stated per test)."""

from __future__ import annotations

import doctest
import itertools

import numpy as np
import pytest
from scipy import stats as sps
from statsmodels.regression.linear_model import OLS
from statsmodels.stats.contingency_tables import mcnemar as sm_mcnemar
from statsmodels.stats.multitest import multipletests
from statsmodels.stats.proportion import proportion_confint

from readbench.analysis import _paired, _summaries, stats
from readbench.analysis.stats import (
    cluster_bootstrap_mean,
    clustered_standard_error,
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
    for mod in (stats, _paired, _summaries):
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


# --- clustered SE and success rate -------------------------------------------------------


def test_clustered_se_hand_example():
    # s = [1,1,0,0], clusters a,a,b,b: e = ±0.5, sum e^2 = 1, cluster sums +1,-1
    # var = 1/(4*3) + (2 - 1)/16 = 0.0833333 + 0.0625 = 0.1458333
    assert clustered_standard_error([1, 1, 0, 0], ["a", "a", "b", "b"]) == pytest.approx(
        np.sqrt(1 / 12 + 1 / 16), abs=1e-15
    )


def test_clustered_se_singleton_clusters_is_clt_se():
    x = np.array([0.3, 1.2, -0.7, 2.2, 0.0])
    expected = np.std(x, ddof=1) / np.sqrt(x.size)
    assert clustered_standard_error(x, list("abcde")) == pytest.approx(expected, rel=1e-12)


def test_clustered_se_against_statsmodels_cluster_sandwich():
    # statsmodels' intercept-only OLS with cluster-robust CR0 (use_correction=False) gives
    # V0 = (1/n^2) sum_g (sum_{i in g} e_i)^2. Miller's formula replaces the diagonal term
    # sum e^2 / n^2 by sum e^2 / (n (n-1)): expected = V0 - S/n^2 + S/(n(n-1)). Tol 1e-12.
    rng = np.random.default_rng(7)
    groups = rng.integers(0, 6, size=60)
    y = (rng.random(60) < 0.3 + 0.08 * groups).astype(float)
    fit = OLS(y, np.ones((60, 1))).fit(
        cov_type="cluster", cov_kwds={"groups": groups, "use_correction": False}
    )
    v0 = float(fit.cov_params()[0, 0])
    e = y - y.mean()
    s = float(np.sum(e * e))
    expected = np.sqrt(v0 - s / 60**2 + s / (60 * 59))
    assert clustered_standard_error(y, groups) == pytest.approx(expected, rel=1e-12)


def test_success_rate_unclustered_is_plain_wilson():
    est = success_rate([1, 1, 1, 0, 0, 1, 0, 1])
    low, high = proportion_confint(5, 8, alpha=0.05, method="wilson")
    assert (est.rate, est.n, est.n_clusters, est.method, est.design_effect) == (0.625, 8, 1, "wilson", 1.0)
    assert (est.ci.low, est.ci.high) == (pytest.approx(low, abs=1e-12), pytest.approx(high, abs=1e-12))
    assert est.se_clt == pytest.approx(np.std([1, 1, 1, 0, 0, 1, 0, 1], ddof=1) / np.sqrt(8), rel=1e-12)


def test_success_rate_clustered_uses_design_effect():
    # clusters perfectly separate outcomes: a=[1,1,1,1], b=[0,0,0,0], n=8, p=0.5
    # sum e^2 = 2, se_clt^2 = 2/56; cluster sums +2, -2 -> cross = 8 - 2 = 6 -> +6/64
    s = [1, 1, 1, 1, 0, 0, 0, 0]
    est = success_rate(s, clusters=list("aaaabbbb"))
    deff = (2 / 56 + 6 / 64) / (2 / 56)
    n_eff = 8 / deff
    low, high = proportion_confint(0.5 * n_eff, n_eff, alpha=0.05, method="wilson")
    assert est.method == "wilson-design-effect" and est.n_clusters == 2
    assert est.design_effect == pytest.approx(deff, rel=1e-12)
    assert (est.ci.low, est.ci.high) == (pytest.approx(low, abs=1e-12), pytest.approx(high, abs=1e-12))
    assert est.ci.high - est.ci.low > success_rate(s).ci.high - success_rate(s).ci.low


def test_success_rate_design_effect_floored_at_one_and_constant_outcomes():
    # alternating outcomes inside each cluster: negative intra-cluster correlation -> floor 1
    est = success_rate([1, 0, 1, 0], clusters=list("aabb"))
    assert est.design_effect == 1.0
    # all-success: se_clt = 0 -> deff 1, interval is the Wilson interval at p = 1
    allone = success_rate([1, 1, 1], clusters=list("abc"))
    low, _ = proportion_confint(3, 3, alpha=0.05, method="wilson")
    assert allone.design_effect == 1.0 and allone.ci.low == pytest.approx(low, abs=1e-12)
    assert allone.ci.high == 1.0


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


# --- bootstrap ------------------------------------------------------------------------


def test_unclustered_bootstrap_agrees_with_scipy_bootstrap():
    # Monte-Carlo tolerance: n=50 normal(0,1) values, 20,000 resamples each with different
    # seeds; the percentile endpoints' MC standard error is ~0.003, CI half-width ~0.28.
    x = np.random.default_rng(1).normal(size=50)
    ours = cluster_bootstrap_mean(x, rng=np.random.default_rng(2), n_resamples=20_000)
    ref = sps.bootstrap((x,), np.mean, method="percentile", n_resamples=20_000, rng=np.random.default_rng(3))
    assert ours.method == "bootstrap" and ours.n_clusters == 1
    assert ours.ci.low == pytest.approx(ref.confidence_interval.low, abs=0.015)
    assert ours.ci.high == pytest.approx(ref.confidence_interval.high, abs=0.015)


def test_single_cluster_label_falls_back_to_iid_bootstrap():
    x = [1.0, 2.0, 4.0]
    a = cluster_bootstrap_mean(x, ["r", "r", "r"], rng=np.random.default_rng(5), n_resamples=500)
    b = cluster_bootstrap_mean(x, None, rng=np.random.default_rng(5), n_resamples=500)
    assert a == b


def test_cluster_bootstrap_resamples_whole_clusters():
    # two clusters with constant values 0 (size 1) and 10 (size 3); any cluster resample's
    # mean is one of {0, 10, (0*1+10*3)/4 = 7.5}, (0+0)/2=0, (10*6)/6=10 -> endpoints in that set
    r = cluster_bootstrap_mean([0, 10, 10, 10], ["a", "b", "b", "b"], rng=np.random.default_rng(0), n_resamples=4000)
    assert r.method == "cluster-bootstrap" and r.n_clusters == 2 and r.estimate == 7.5
    assert (r.ci.low, r.ci.high) == (0.0, 10.0)


def test_bootstrap_of_a_single_value_has_no_interval():
    r = cluster_bootstrap_mean([4.0], rng=np.random.default_rng(0))
    assert r.estimate == 4.0 and np.isnan(r.ci.low) and np.isnan(r.ci.high)
    d = paired_difference([1.0], [0.0], ["repo"], rng=np.random.default_rng(0))
    assert d.mean_difference == 1.0 and np.isnan(d.ci.low) and np.isnan(d.se)


def test_bootstrap_rejects_global_seed_style_rng():
    with pytest.raises(TypeError, match="rng must be a numpy.random.Generator"):
        cluster_bootstrap_mean([1.0], rng=0)  # type: ignore[arg-type]
    with pytest.raises(ValueError, match=r"n_resamples \(0\) must be an integer >= 1"):
        cluster_bootstrap_mean([1.0], rng=np.random.default_rng(0), n_resamples=0)


# --- paired difference ------------------------------------------------------------------


def test_paired_difference_hand_example():
    # d = [2, 3, 1, 2] -> mean 2; sd(d, ddof=1) = sqrt(2/3); se = sqrt(2/3)/2 = 0.408248...
    r = paired_difference([3, 5, 4, 6], [1, 2, 3, 4], rng=np.random.default_rng(0), n_resamples=1000)
    assert r.mean_difference == 2.0 and r.n_pairs == 4 and r.n_clusters == 1
    assert r.se == pytest.approx(np.sqrt(2 / 3) / 2, abs=1e-15)
    assert 1.0 <= r.ci.low <= 2.0 <= r.ci.high <= 3.0


def test_paired_difference_clustered_se_hand_example():
    # d = [1,1,0,0] in clusters a,a,b,b -> same numbers as the clustered SE hand example
    r = paired_difference([1, 1, 0, 0], [0, 0, 0, 0], ["a", "a", "b", "b"], rng=np.random.default_rng(0))
    assert r.se == pytest.approx(np.sqrt(1 / 12 + 1 / 16), abs=1e-15)
    assert r.method == "cluster-bootstrap" and r.n_clusters == 2
    assert (r.ci.low, r.ci.high) == (0.0, 1.0)


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
        paired_difference(t, b, rng=np.random.default_rng(0))


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


# --- ratios, summaries, multiplicity ------------------------------------------------------


def test_geometric_mean_ratio_hand_example_and_exclusions():
    # ratios 2 and 4 -> exp(mean(log 2, log 4)) = sqrt(8); the (0, 5) pair is excluded
    r = geometric_mean_ratio([2, 8, 0], [1, 2, 5], ["a", "b", "c"], rng=np.random.default_rng(0))
    assert r.ratio == pytest.approx(np.sqrt(8), rel=1e-12)
    assert (r.n_pairs, r.n_excluded, r.n_clusters) == (2, 1, 2)
    assert r.ci.low == pytest.approx(2.0, rel=1e-12) and r.ci.high == pytest.approx(4.0, rel=1e-12)


def test_geometric_mean_ratio_validation_messages():
    rng = np.random.default_rng(0)
    with pytest.raises(ValueError, match=r"no pair has both treatment and baseline > 0 \(n pairs = 2\)"):
        geometric_mean_ratio([0, 1], [1, 0], rng=rng)
    with pytest.raises(ValueError, match=r"treatment must be >= 0 for a ratio, got -1.0 at position 0"):
        geometric_mean_ratio([-1], [1], rng=rng)


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
