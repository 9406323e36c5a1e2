"""ibench.stats: the intervals cover the true ratio as often as they claim.

Coverage is checked on seeded simulations of known distributions: 400 trials
tell a 95% interval (coverage in [0.92, 0.98]) from an 80% one.
"""

from __future__ import annotations

import math

import numpy as np
import numpy.typing as npt
import pytest
from scipy import signal
from scipy import stats as scipy_stats

from ibench import stats

TRIALS = 400
PHI = 0.7


def ar1(rng: np.random.Generator, n: int, mean: float, sd: float, phi: float, trials: int) -> npt.NDArray[np.float64]:
    """``trials`` stationary AR(1) series of length ``n``: marginal mean ``mean``, sd ``sd``, coefficient ``phi``."""
    burn_in = 200
    eps = rng.normal(0.0, sd * math.sqrt(1 - phi**2), (trials, n + burn_in))
    x: npt.NDArray[np.float64] = signal.lfilter([1.0], [1.0, -phi], eps, axis=1)[:, burn_in:]
    return mean + x


def coverage(ratios: list[stats.Ratio], true: float) -> float:
    return float(np.mean([r.low <= true <= r.high for r in ratios]))


# Repeats: ratio_of_means


def test_ratio_of_means_covers_the_true_ratio_of_normal_repeats_95_percent_of_the_time() -> None:
    rng = np.random.default_rng(11)
    ratios = [stats.ratio_of_means(rng.normal(1000, 50, 5), rng.normal(1200, 90, 5)) for _ in range(TRIALS)]
    assert 0.92 <= coverage(ratios, 1.2) <= 0.98


def test_ratio_of_means_covers_the_true_ratio_of_lognormal_repeats_95_percent_of_the_time() -> None:
    rng = np.random.default_rng(12)
    sa, sb = 0.1, 0.2
    true = (1100 * math.exp(sb**2 / 2)) / (1000 * math.exp(sa**2 / 2))  # ratio of the lognormals' means
    ratios = [
        stats.ratio_of_means(rng.lognormal(math.log(1000), sa, 8), rng.lognormal(math.log(1100), sb, 8))
        for _ in range(TRIALS)
    ]
    assert 0.92 <= coverage(ratios, true) <= 0.98


def test_an_80_percent_interval_covers_about_80_percent_of_the_time() -> None:
    rng = np.random.default_rng(13)
    ratios = [stats.ratio_of_means(rng.normal(1000, 50, 5), rng.normal(1000, 50, 5), ci=0.8) for _ in range(TRIALS)]
    assert 0.75 <= coverage(ratios, 1.0) <= 0.85


def test_ratio_of_means_estimates_b_mean_over_a_mean() -> None:
    r = stats.ratio_of_means([90.0, 100.0, 110.0], [200.0, 220.0])
    assert r.estimate == pytest.approx(210.0 / 100.0)
    assert r.low < r.estimate < r.high
    assert (r.n_a, r.n_b, r.ci) == (3, 2, 0.95)


def test_ratio_of_means_interval_is_symmetric_on_the_log_scale() -> None:
    r = stats.ratio_of_means([90.0, 100.0, 110.0], [200.0, 210.0, 230.0])
    assert math.log(r.high / r.estimate) == pytest.approx(math.log(r.estimate / r.low))


def test_ratio_of_means_needs_two_repeats_on_each_side_and_names_the_short_side() -> None:
    with pytest.raises(ValueError, match=r"^a has 1 value;.*ratio_of_series"):
        stats.ratio_of_means([100.0], [100.0, 101.0])
    with pytest.raises(ValueError, match=r"^b has 1 value;"):
        stats.ratio_of_means([100.0, 101.0], [100.0])


def test_ratio_of_means_rejects_a_mean_that_is_not_positive() -> None:
    with pytest.raises(ValueError, match="a has mean 0.0"):
        stats.ratio_of_means([0.0, 0.0], [1.0, 2.0])


def test_values_that_are_not_finite_are_rejected() -> None:
    with pytest.raises(ValueError, match="b holds values that are not finite"):
        stats.ratio_of_means([1.0, 2.0], [1.0, float("nan")])


def test_identical_repeats_give_a_zero_width_interval() -> None:
    r = stats.ratio_of_means([100.0, 100.0], [150.0, 150.0])
    assert (r.estimate, r.low, r.high) == (1.5, 1.5, 1.5)


# Series: ratio_of_series against the naive interval


def test_ratio_of_series_covers_the_true_ratio_of_autocorrelated_series_95_percent_of_the_time() -> None:
    rng = np.random.default_rng(21)
    a, b = ar1(rng, 300, 1000, 50, PHI, TRIALS), ar1(rng, 300, 1100, 50, PHI, TRIALS)
    ratios = [stats.ratio_of_series(x, y) for x, y in zip(a, b)]
    assert 0.92 <= coverage(ratios, 1.1) <= 0.98


def test_the_naive_interval_covers_autocorrelated_series_clearly_less_often() -> None:
    rng = np.random.default_rng(21)
    a, b = ar1(rng, 300, 1000, 50, PHI, TRIALS), ar1(rng, 300, 1100, 50, PHI, TRIALS)
    ratios = [stats.naive_ratio_of_series(x, y) for x, y in zip(a, b)]
    assert coverage(ratios, 1.1) < 0.85


def test_an_autocorrelated_series_gets_a_wider_interval_than_the_naive_one() -> None:
    rng = np.random.default_rng(22)
    a, b = ar1(rng, 300, 1000, 50, PHI, 100), ar1(rng, 300, 1100, 50, PHI, 100)
    widths = np.array(
        [stats.ratio_of_series(x, y).half_width / stats.naive_ratio_of_series(x, y).half_width for x, y in zip(a, b)]
    )
    assert np.all(widths > 1.0)
    # sqrt((1+φ)/(1-φ)) = 2.38 for φ = 0.7
    assert 1.8 < float(np.median(widths)) < 3.0


def test_white_noise_series_get_about_the_naive_interval() -> None:
    rng = np.random.default_rng(23)
    a, b = rng.normal(1000, 50, (100, 1000)), rng.normal(1100, 50, (100, 1000))
    widths = [stats.ratio_of_series(x, y).half_width / stats.naive_ratio_of_series(x, y).half_width for x, y in zip(a, b)]
    assert 1.0 <= float(np.median(widths)) < 1.1


def test_ratio_of_series_reports_the_effective_sample_sizes() -> None:
    rng = np.random.default_rng(24)
    a, b = ar1(rng, 2000, 1000, 50, PHI, 1)[0], rng.normal(1000, 50, 2000)
    r = stats.ratio_of_series(a, b)
    assert r.n_a == pytest.approx(stats.effective_sample_size(a))
    assert r.n_b == pytest.approx(stats.effective_sample_size(b))
    assert r.n_a < r.n_b


def test_ratio_of_series_needs_four_values_per_series() -> None:
    with pytest.raises(ValueError, match=r"^b has 3 values;"):
        stats.ratio_of_series([1.0, 2.0, 3.0, 4.0], [1.0, 2.0, 3.0])


# Effective sample size and standard error of autocorrelated series


def test_effective_sample_size_of_white_noise_is_about_n() -> None:
    rng = np.random.default_rng(31)
    ess = [stats.effective_sample_size(x) for x in rng.normal(0, 1, (20, 2000))]
    assert float(np.mean(ess)) == pytest.approx(2000, rel=0.15)


def test_effective_sample_size_of_ar1_is_about_n_times_1_minus_phi_over_1_plus_phi() -> None:
    rng = np.random.default_rng(32)
    ess = [stats.effective_sample_size(x) for x in ar1(rng, 2000, 0, 1, PHI, 20)]
    assert float(np.mean(ess)) == pytest.approx(2000 * (1 - PHI) / (1 + PHI), rel=0.15)


def test_integrated_autocorrelation_time_of_ar1_is_about_1_plus_phi_over_1_minus_phi() -> None:
    rng = np.random.default_rng(33)
    taus = [stats.integrated_autocorrelation_time(x) for x in ar1(rng, 2000, 0, 1, PHI, 20)]
    assert float(np.mean(taus)) == pytest.approx((1 + PHI) / (1 - PHI), rel=0.15)


def test_mean_standard_error_of_ar1_matches_the_spread_of_the_means() -> None:
    rng = np.random.default_rng(34)
    series = ar1(rng, 500, 1000, 50, PHI, TRIALS)
    observed = float(np.std(series.mean(axis=1), ddof=1))
    estimated = float(np.mean([stats.mean_standard_error(x) for x in series]))
    assert estimated == pytest.approx(observed, rel=0.15)


def test_effective_sample_size_never_exceeds_the_series_length() -> None:
    alternating = np.tile([1.0, 3.0], 50)
    assert stats.effective_sample_size(alternating) == 100


def test_a_constant_series_has_effective_size_n_and_zero_standard_error() -> None:
    assert stats.effective_sample_size([5.0] * 10) == 10
    assert stats.mean_standard_error([5.0] * 10) == 0


def test_a_trending_series_has_a_small_effective_sample_size() -> None:
    trend = np.linspace(100.0, 200.0, 200)
    assert stats.effective_sample_size(trend) < 10


# Significance and display


def test_significant_is_false_when_the_interval_contains_one() -> None:
    rng = np.random.default_rng(41)
    r = stats.ratio_of_means(rng.normal(1000, 50, 5), rng.normal(1005, 50, 5))
    assert r.low < 1.0 < r.high
    assert not r.significant


def test_significant_is_true_for_a_clear_difference() -> None:
    rng = np.random.default_rng(42)
    r = stats.ratio_of_means(rng.normal(1000, 10, 5), rng.normal(1500, 10, 5))
    assert r.low > 1.0
    assert r.significant


def test_significant_is_true_for_a_clear_slowdown() -> None:
    r = stats.Ratio(0.5, 0.4, 0.6, 0.95, "test", 5, 5)
    assert r.significant


def test_str_shows_the_estimate_and_the_half_width() -> None:
    assert str(stats.Ratio(1.12, 1.08, 1.16, 0.95, "test", 5, 5)) == "1.12 ±0.04"


def test_str_shows_more_decimals_for_a_narrow_interval() -> None:
    assert str(stats.Ratio(1.1234, 1.1204, 1.1264, 0.95, "test", 5, 5)) == "1.123 ±0.003"


def test_str_shows_the_bounds_when_the_interval_is_asymmetric_beyond_10_percent() -> None:
    assert str(stats.Ratio(1.12, 0.95, 1.35, 0.95, "test", 5, 5)) == "1.12 [0.95, 1.35]"


# Run-to-run spread, one side's interval, compare


def test_coefficient_of_variation_is_the_sample_standard_deviation_over_the_mean() -> None:
    assert stats.coefficient_of_variation([90.0, 100.0, 110.0]) == pytest.approx(10.0 / 100.0)


def test_coefficient_of_variation_needs_two_values() -> None:
    with pytest.raises(ValueError, match="values has 1 value"):
        stats.coefficient_of_variation([100.0])


def test_mean_interval_is_the_student_t_interval() -> None:
    values = [90.0, 100.0, 110.0, 104.0]
    mean, low, high = stats.mean_interval(values)
    expected = scipy_stats.t.interval(0.95, 3, loc=np.mean(values), scale=scipy_stats.sem(values))
    assert mean == pytest.approx(101.0)
    assert (low, high) == pytest.approx(expected)


def test_compare_uses_the_repeats_when_both_sides_have_two() -> None:
    r = stats.compare(repeats_a=[100.0, 102.0], repeats_b=[110.0, 111.0], series_a=[1.0] * 10, series_b=[2.0] * 10)
    assert r == stats.ratio_of_means([100.0, 102.0], [110.0, 111.0])


def test_compare_falls_back_to_the_series_with_one_repeat_on_a_side() -> None:
    rng = np.random.default_rng(51)
    a, b = rng.normal(1000, 50, 100), rng.normal(1100, 50, 100)
    r = stats.compare(repeats_a=[1000.0], repeats_b=[1100.0, 1090.0], series_a=a, series_b=b)
    assert r == stats.ratio_of_series(a, b)


def test_compare_without_repeats_or_series_says_what_is_missing() -> None:
    with pytest.raises(ValueError, match=r"got repeats \{'repeats_a': 1\}, missing series_b"):
        stats.compare(repeats_a=[1.0], series_a=[1.0, 2.0, 3.0, 4.0])


def test_a_confidence_level_outside_0_1_is_rejected() -> None:
    with pytest.raises(ValueError, match="ci must be between 0 and 1"):
        stats.ratio_of_means([1.0, 2.0], [1.0, 2.0], ci=95)


# Summaries of series (what the pytest plugin's baselines store)


def test_ratio_of_summaries_is_ratio_of_series_from_stored_figures() -> None:
    rng = np.random.default_rng(61)
    a, b = ar1(rng, 60, 1000.0, 80.0, PHI, 1)[0], ar1(rng, 40, 900.0, 60.0, PHI, 1)[0]
    sa = stats.summarize_series(a)
    assert (sa.mean, sa.sd, sa.n) == pytest.approx((float(np.mean(a)), float(np.std(a, ddof=1)), 60))
    assert sa.n_eff == pytest.approx(stats.effective_sample_size(a))
    assert stats.ratio_of_summaries(sa, stats.summarize_series(b)) == stats.ratio_of_series(a, b)


def test_ratio_of_summaries_rejects_a_summary_of_too_few_values_or_a_mean_that_is_not_positive() -> None:
    good = stats.SeriesSummary(100.0, 5.0, 10, 8.0)
    with pytest.raises(ValueError, match="a summarizes 3 values"):
        stats.ratio_of_summaries(stats.SeriesSummary(100.0, 5.0, 3, 3.0), good)
    with pytest.raises(ValueError, match="b has mean 0.0"):
        stats.ratio_of_summaries(good, stats.SeriesSummary(0.0, 5.0, 10, 8.0))
    with pytest.raises(ValueError, match="at least 4"):
        stats.summarize_series([1.0, 2.0, 3.0])


def test_format_interval_is_the_rule_ratio_prints_with() -> None:
    assert stats.format_interval(1.12, 1.08, 1.16) == "1.12 ±0.04"
    assert str(stats.Ratio(1.12, 1.08, 1.16, 0.95, "t", 5, 5)) == "1.12 ±0.04"
    assert stats.format_interval(0.5, 0.498, 0.502) == "0.500 ±0.002"
    assert stats.format_interval(1.12, 0.95, 1.35) == "1.12 [0.95, 1.35]"


# Pairs: ratio_of_pairs


def drifting_rounds(
    rng: np.random.Generator, rounds: int, ratio: float, drift: float, noise: float
) -> tuple[npt.NDArray[np.float64], npt.NDArray[np.float64]]:
    """A and B run side by side: each round's drift (lognormal, sd ``drift``) moves both; ``noise`` is each run's own."""
    shared = rng.lognormal(0.0, drift, rounds)
    a = 1000 * shared * rng.lognormal(0.0, noise, rounds)
    b = 1000 * ratio * shared * rng.lognormal(0.0, noise, rounds)
    return a, b


def test_ratio_of_pairs_covers_the_true_ratio_of_drifting_rounds_95_percent_of_the_time() -> None:
    rng = np.random.default_rng(31)
    ratios = [stats.ratio_of_pairs(*drifting_rounds(rng, 6, 0.9, 0.3, 0.05)) for _ in range(TRIALS)]
    assert 0.92 <= coverage(ratios, 0.9) <= 0.98


def test_pairing_cancels_the_drift_that_widens_the_interval_of_independent_repeats() -> None:
    rng = np.random.default_rng(32)
    paired, independent = [], []
    for _ in range(TRIALS):
        a, b = drifting_rounds(rng, 6, 0.9, 0.3, 0.03)
        paired.append(stats.ratio_of_pairs(a, b))
        independent.append(stats.ratio_of_means(a, b))
    width = float(np.median([(p.high - p.low) / (i.high - i.low) for p, i in zip(paired, independent)]))
    assert width < 0.3, width
    # Both are honest about the 10% difference; only the paired one sees it.
    assert np.mean([p.significant for p in paired]) > 0.9
    assert np.mean([i.significant for i in independent]) < 0.5


def test_ratio_of_pairs_is_the_geometric_mean_of_the_rounds_ratios() -> None:
    r = stats.ratio_of_pairs([100.0, 200.0, 400.0], [50.0, 200.0, 800.0])
    assert r.estimate == pytest.approx(1.0)
    logs = np.log([0.5, 1.0, 2.0])
    half = scipy_stats.t.ppf(0.975, 2) * np.std(logs, ddof=1) / math.sqrt(3)
    assert (r.low, r.high) == (pytest.approx(math.exp(-half)), pytest.approx(math.exp(half)))
    assert (r.n_a, r.n_b) == (3, 3) and "paired" in r.method


def test_rounds_with_one_ratio_give_a_zero_width_interval() -> None:
    r = stats.ratio_of_pairs([100.0, 300.0, 50.0], [110.0, 330.0, 55.0])
    assert r.estimate == pytest.approx(1.1) and r.low == pytest.approx(1.1) and r.high == pytest.approx(1.1)


def test_ratio_of_pairs_rejects_unpaired_short_or_non_positive_figures() -> None:
    with pytest.raises(ValueError, match="a has 3, b has 2"):
        stats.ratio_of_pairs([1.0, 2.0, 3.0], [1.0, 2.0])
    with pytest.raises(ValueError, match="b has 1 value; ratio_of_pairs"):
        stats.ratio_of_pairs([1.0, 2.0], [1.0])
    with pytest.raises(ValueError, match="a holds 0.0 in round 1"):
        stats.ratio_of_pairs([1.0, 0.0], [1.0, 2.0])
    with pytest.raises(ValueError, match="b holds -2.0 in round 0"):
        stats.ratio_of_pairs([1.0, 2.0], [-2.0, 2.0])
    with pytest.raises(ValueError, match="ci must be between 0 and 1"):
        stats.ratio_of_pairs([1.0, 2.0], [1.0, 2.0], ci=95)
