"""Statistics for comparing benchmark runs honestly: ratios with confidence intervals.

A comparison of two configurations A and B is the ratio of B's mean
throughput over A's, with a confidence interval that says how sure the ratio
is. Two kinds of data give such an interval:

* **Repeats** (:func:`ratio_of_means`): a step's figure in each of several
  independent runs per side (2 or more per side). The runs are independent, so
  the usual standard error of a mean applies.
* **Series** (:func:`ratio_of_series`): one run per side, with the step's
  per-interval series (e.g. inserts per second, second by second). Successive
  intervals are *not* independent samples (a compaction or a checkpoint slows
  several seconds in a row), so each mean's standard error is computed from
  the series' effective sample size (:func:`effective_sample_size`). Treating
  the intervals as independent (:func:`naive_ratio_of_series`, kept only for
  comparison) gives intervals that are far too narrow. A series can be kept
  as its :class:`SeriesSummary` (mean, sd, length, effective sample size) and
  compared later with :func:`ratio_of_summaries`, to the same result.
* **Pairs** (:func:`ratio_of_pairs`): repeats where A and B ran side by side,
  one of each per round (alternating on one machine); the round's drift,
  shared by both, cancels out of each round's ratio.

:func:`compare` picks the method from what it is given. All functions are pure
functions over numbers (sequences of floats or numpy arrays); they raise
``ValueError`` for inputs they cannot use (too few values, a non-positive mean,
values that are not finite).

Both interval methods use the delta method on the log of the ratio:
``log(mean_b / mean_a) = log(mean_b) - log(mean_a)``, with
``Var(log mean) ~= (SE(mean) / mean)**2``, a Student t quantile, and
Welch–Satterthwaite degrees of freedom (Welch 1947, "The generalization of
'Student's' problem when several different population variances are
involved", Biometrika 34(1/2):28-35). The interval is
``exp(log ratio ± t · SE(log ratio))``: it is symmetric on the log scale, so a
ratio is as likely to be off by a factor ``f`` as by ``1/f``, and it never
crosses zero.
"""

from __future__ import annotations

import math
from dataclasses import dataclass
from typing import Optional, Sequence, Union

import numpy as np
import numpy.typing as npt
from scipy import stats as _scipy_stats  # type: ignore[import-untyped,unused-ignore]

Values = Union[Sequence[float], npt.NDArray[np.floating]]
"""A sequence of numbers: a list, a tuple or a 1-d numpy array."""

_MIN_SERIES = 4
"""The fewest values a per-interval series needs for an autocorrelation estimate."""


@dataclass(frozen=True)
class Ratio:
    """A ratio of B over A with its confidence interval.

    ``estimate`` is B's mean over A's mean; ``[low, high]`` is the ``ci``
    (e.g. 0.95) confidence interval; ``method`` says how it was computed;
    ``n_a`` and ``n_b`` are the sample sizes behind each mean (the number of
    repeats, or a series' effective sample size, which may be fractional).
    """

    estimate: float
    low: float
    high: float
    ci: float
    method: str
    n_a: float
    n_b: float

    @property
    def significant(self) -> bool:
        """True when the interval excludes 1.0: A and B differ at level ``ci``."""
        return not (self.low <= 1.0 <= self.high)

    @property
    def half_width(self) -> float:
        """Half the interval's width, ``(high - low) / 2``."""
        return (self.high - self.low) / 2

    @property
    def symmetric(self) -> bool:
        """True when the interval's two sides differ by at most 10% of the larger one."""
        return _symmetric(self.estimate, self.low, self.high)

    def __str__(self) -> str:
        """``1.12 ±0.04``; ``1.12 [0.95, 1.35]`` when the interval is asymmetric beyond 10%."""
        return format_interval(self.estimate, self.low, self.high)


def decimals(width: float) -> int:
    """Decimals showing ``width`` to about one significant digit (2 to 6)."""
    if not width > 0 or not math.isfinite(width):
        return 2
    return int(min(6, max(2, -math.floor(math.log10(width)))))


def _symmetric(estimate: float, low: float, high: float) -> bool:
    """True when the interval's two sides differ by at most 10% of the larger one."""
    up, down = high - estimate, estimate - low
    return abs(up - down) <= 0.1 * max(up, down)


def format_interval(estimate: float, low: float, high: float) -> str:
    """``1.12 ±0.04``, or ``1.12 [0.95, 1.35]`` when the interval's sides differ by more than 10%.

    One rule for every place that prints an interval (:class:`Ratio`, the
    report tables), so a figure reads the same everywhere; the decimals show
    the half-width to about one significant digit (:func:`decimals`).
    """
    half = (high - low) / 2
    digits = decimals(half)
    if _symmetric(estimate, low, high):
        return f"{estimate:.{digits}f} ±{half:.{digits}f}"
    return f"{estimate:.{digits}f} [{low:.{digits}f}, {high:.{digits}f}]"


def _array(values: Values, side: str, minimum: int, what: str) -> npt.NDArray[np.float64]:
    """``values`` as a float array, checked: finite, at least ``minimum`` of them."""
    x = np.asarray(values, dtype=np.float64)
    if x.ndim != 1:
        raise ValueError(f"{side}: expected a 1-d sequence of numbers, got shape {x.shape}")
    if len(x) < minimum:
        raise ValueError(f"{side} has {len(x)} value{'s' if len(x) != 1 else ''}; {what} needs at least {minimum}")
    if not np.all(np.isfinite(x)):
        raise ValueError(f"{side} holds values that are not finite (NaN or infinite)")
    return x


def _positive_mean(x: npt.NDArray[np.float64], side: str) -> float:
    mean = float(np.mean(x))
    if not mean > 0:
        raise ValueError(f"{side} has mean {mean}; a ratio needs positive means")
    return mean


def _check_ci(ci: float) -> None:
    if not 0 < ci < 1:
        raise ValueError(f"ci must be between 0 and 1 (e.g. 0.95), got {ci}")


def _log_ratio_interval(
    mean_a: float, se_a: float, df_a: float, mean_b: float, se_b: float, df_b: float, ci: float
) -> tuple[float, float, float]:
    """Estimate and interval of ``mean_b / mean_a`` by the delta method on the log.

    ``se_*`` are the standard errors of the means, ``df_*`` their degrees of
    freedom; the interval's degrees of freedom are Welch–Satterthwaite's.
    """
    estimate = mean_b / mean_a
    var_a, var_b = (se_a / mean_a) ** 2, (se_b / mean_b) ** 2
    se = math.sqrt(var_a + var_b)
    if se == 0:
        return estimate, estimate, estimate
    df = (var_a + var_b) ** 2 / (var_a**2 / df_a + var_b**2 / df_b)
    t = float(_scipy_stats.t.ppf((1 + ci) / 2, df))
    return estimate, estimate * math.exp(-t * se), estimate * math.exp(t * se)


def ratio_of_means(a: Values, b: Values, ci: float = 0.95) -> Ratio:
    """Ratio of ``b``'s mean over ``a``'s mean for independent repeats.

    ``a`` and ``b`` hold one figure per independent run (e.g. a step's
    throughput in each repeat), at least 2 per side. Method: each mean's
    standard error is ``s / sqrt(n)`` (sample standard deviation); the delta
    method on the log of the ratio gives ``SE(log ratio) = sqrt((SE_a/mean_a)**2
    + (SE_b/mean_b)**2)``, with Welch–Satterthwaite degrees of freedom (from
    ``n - 1`` per side) and a Student t quantile.

    Raises ValueError naming the side that has fewer than 2 values (with one
    run per side, use :func:`ratio_of_series` on the runs' per-interval series).
    """
    _check_ci(ci)
    xa = _array(a, "a", 2, "ratio_of_means (independent repeats; with one run use ratio_of_series)")
    xb = _array(b, "b", 2, "ratio_of_means (independent repeats; with one run use ratio_of_series)")
    mean_a, mean_b = _positive_mean(xa, "a"), _positive_mean(xb, "b")
    se_a = float(np.std(xa, ddof=1)) / math.sqrt(len(xa))
    se_b = float(np.std(xb, ddof=1)) / math.sqrt(len(xb))
    est, low, high = _log_ratio_interval(mean_a, se_a, len(xa) - 1, mean_b, se_b, len(xb) - 1, ci)
    return Ratio(est, low, high, ci, "ratio of means of independent repeats (delta method, Welch t)", len(xa), len(xb))


def ratio_of_pairs(a: Values, b: Values, ci: float = 0.95) -> Ratio:
    """B over A from paired repeats: ``a[i]`` and ``b[i]`` ran side by side in round ``i``.

    When A and B alternate on one machine, round after round, the machine's
    drift (another tenant, a warmer cache, a slower hour) moves both figures
    of a round together, and :func:`ratio_of_means`, which takes the sides
    as independent, counts that drift as noise on both. Pairing cancels it:
    the estimate is the geometric mean of the rounds' ratios ``b[i] / a[i]``,
    and the interval is :func:`mean_interval` (Student's t) of their logs,
    exponentiated (symmetric on the log scale, like the others). What it estimates is the
    typical (median) ratio of a round, which equals the ratio of means when
    the rounds' noise is multiplicative. Pairing costs degrees of freedom
    (``n - 1`` where independent repeats have about ``2(n - 1)``; with 2
    rounds t is 12.7): it pays when the drift is large against each run's
    own noise and the rounds are several. Choose the method by the design
    before looking at the figures, not by which interval is narrower.

    Raises ValueError when the two sides' lengths differ (they must be
    pairs), when there are fewer than 2 pairs, or when a value is not
    positive (a ratio needs both figures), naming the side and the round.
    """
    _check_ci(ci)
    xa = _array(a, "a", 2, "ratio_of_pairs (one figure per side per round)")
    xb = _array(b, "b", 2, "ratio_of_pairs (one figure per side per round)")
    if len(xa) != len(xb):
        raise ValueError(f"ratio_of_pairs needs one figure of each side per round: a has {len(xa)}, b has {len(xb)}")
    for side, x in (("a", xa), ("b", xb)):
        bad = np.flatnonzero(x <= 0)
        if len(bad):
            raise ValueError(f"{side} holds {x[bad[0]]} in round {bad[0]}; a ratio needs positive figures")
    mean, low, high = mean_interval(np.log(xb) - np.log(xa), ci)
    method = "geometric mean of paired ratios (Student t on the log ratios)"
    return Ratio(math.exp(mean), math.exp(low), math.exp(high), ci, method, len(xa), len(xb))


def _autocorrelation(x: npt.NDArray[np.float64]) -> npt.NDArray[np.float64]:
    """Sample autocorrelations at lags 0..n-1 (biased autocovariance, 1/n), by FFT."""
    n = len(x)
    d = x - x.mean()
    size = 1 << (2 * n - 1).bit_length()  # zero-padded: no circular wrap-around
    f = np.fft.rfft(d, size)
    acov = np.fft.irfft(f * np.conj(f), size)[:n] / n
    result: npt.NDArray[np.float64] = acov / acov[0]
    return result


def integrated_autocorrelation_time(x: Values) -> float:
    """Integrated autocorrelation time ``tau = 1 + 2 * sum(rho_k)`` of a series.

    Method: Geyer's initial monotone sequence estimator (Geyer 1992, "Practical
    Markov Chain Monte Carlo", Statistical Science 7(4):473-483, section 3.3;
    also the estimator of the Stan Reference Manual, "Effective sample size").
    Sums of adjacent autocorrelations ``Gamma_m = rho_2m + rho_2m+1`` are
    positive for a stationary series; the sum stops at the first ``Gamma_m``
    that is not positive, and each ``Gamma_m`` is capped at the previous one
    (monotone), which removes most of the noise of the far lags. White noise
    gives about 1, an AR(1) series with coefficient φ about (1+φ)/(1-φ). A
    constant series gives 1.
    """
    s = _array(x, "series", _MIN_SERIES, "an autocorrelation estimate")
    if np.all(s == s[0]):
        return 1.0
    rho = _autocorrelation(s)
    pairs = len(rho) // 2
    gamma = rho[0 : 2 * pairs : 2] + rho[1 : 2 * pairs : 2]
    nonpositive = np.flatnonzero(gamma <= 0)
    stop = int(nonpositive[0]) if len(nonpositive) else pairs
    tau = -1.0 + 2.0 * float(np.sum(np.minimum.accumulate(gamma[:stop])))
    return tau


def effective_sample_size(x: Values) -> float:
    """Effective sample size ``n / tau`` of an autocorrelated series.

    ``tau`` is the integrated autocorrelation time by Geyer's initial monotone
    sequence estimator (:func:`integrated_autocorrelation_time`). The mean of
    ``n`` autocorrelated values is as precise as the mean of ``n / tau``
    independent ones: white noise gives about ``n``, an AR(1) series with
    coefficient φ about ``n (1-φ)/(1+φ)``. The result is bounded to ``[1, n]``:
    never more than the series' length (a negatively correlated series is not
    credited with more than its values; conservative), never less than one value.
    """
    s = _array(x, "series", _MIN_SERIES, "an effective sample size")
    tau = integrated_autocorrelation_time(s)
    n = len(s)
    return float(min(n, max(1.0, n / tau))) if tau > 0 else float(n)


def mean_standard_error(x: Values) -> float:
    """Standard error of the mean of an autocorrelated series: ``s / sqrt(n_eff)``.

    ``s`` is the sample standard deviation and ``n_eff`` the
    :func:`effective_sample_size` (Geyer's initial monotone sequence
    estimator), so the error accounts for the series' autocorrelation.
    """
    s = _array(x, "series", _MIN_SERIES, "a standard error")
    return float(np.std(s, ddof=1)) / math.sqrt(effective_sample_size(s))


@dataclass(frozen=True)
class SeriesSummary:
    """What :func:`ratio_of_series` needs of one per-interval series: its
    mean, sample standard deviation (n-1), length and effective sample size.

    Small enough to store (the pytest plugin's baselines keep one per step),
    and enough to compare a later series with it (:func:`ratio_of_summaries`)
    exactly as :func:`ratio_of_series` would compare the two series.
    """

    mean: float
    sd: float
    n: int
    n_eff: float


def summarize_series(x: Values) -> SeriesSummary:
    """The :class:`SeriesSummary` of a per-interval series (at least 4 values, finite).

    ``n_eff`` is the :func:`effective_sample_size` (Geyer's initial monotone
    sequence estimator), so the summary carries the series' autocorrelation.
    """
    s = _array(x, "series", _MIN_SERIES, "a series summary (a per-interval series)")
    return SeriesSummary(float(np.mean(s)), float(np.std(s, ddof=1)), len(s), effective_sample_size(s))


def ratio_of_summaries(a: SeriesSummary, b: SeriesSummary, ci: float = 0.95) -> Ratio:
    """:func:`ratio_of_series` from the two series' summaries (:func:`summarize_series`).

    The same method and the same figures as :func:`ratio_of_series` on the
    series themselves: each mean's standard error is ``sd / sqrt(n_eff)``, the
    delta method on the log of the ratio, Welch–Satterthwaite degrees of
    freedom from ``n_eff - 1`` per side (at least 1), a Student t quantile.
    """
    _check_ci(ci)
    for side, summary in (("a", a), ("b", b)):
        if summary.n < _MIN_SERIES or not summary.n_eff >= 1:
            raise ValueError(f"{side} summarizes {summary.n} values; ratio_of_series needs at least {_MIN_SERIES}")
        if not (math.isfinite(summary.mean) and math.isfinite(summary.sd) and summary.sd >= 0):
            raise ValueError(f"{side} has a mean or standard deviation that is not finite")
        if not summary.mean > 0:
            raise ValueError(f"{side} has mean {summary.mean}; a ratio needs positive means")
    se_a, se_b = a.sd / math.sqrt(a.n_eff), b.sd / math.sqrt(b.n_eff)
    df_a, df_b = max(a.n_eff - 1, 1.0), max(b.n_eff - 1, 1.0)
    est, low, high = _log_ratio_interval(a.mean, se_a, df_a, b.mean, se_b, df_b, ci)
    method = "ratio of series means, autocorrelation-corrected (Geyer IMS, delta method, Welch t)"
    return Ratio(est, low, high, ci, method, a.n_eff, b.n_eff)


def ratio_of_series(a: Values, b: Values, ci: float = 0.95) -> Ratio:
    """Ratio of the means of two per-interval series, one run per side.

    ``a`` and ``b`` are a step's per-interval figures (e.g. inserts per
    second, interval by interval), at least 4 values each. Method: each mean's
    standard error is corrected for autocorrelation (:func:`mean_standard_error`:
    Geyer's initial monotone sequence estimate of the integrated
    autocorrelation time); the delta method on the log of the ratio, with
    Welch–Satterthwaite degrees of freedom from ``n_eff - 1`` per side (at
    least 1) and a Student t quantile. ``n_a``/``n_b`` are the effective sample
    sizes. (:func:`ratio_of_summaries` does the same from stored summaries.)
    """
    _check_ci(ci)
    xa = _array(a, "a", _MIN_SERIES, "ratio_of_series (a per-interval series)")
    xb = _array(b, "b", _MIN_SERIES, "ratio_of_series (a per-interval series)")
    _positive_mean(xa, "a")
    _positive_mean(xb, "b")
    return ratio_of_summaries(summarize_series(xa), summarize_series(xb), ci)


def naive_ratio_of_series(a: Values, b: Values, ci: float = 0.95) -> Ratio:
    """The ratio of two series' means treating every interval as an independent sample.

    Same as :func:`ratio_of_means` over the series' values. Wrong for
    per-interval series (their values are autocorrelated, so the interval is
    too narrow); kept to show how wrong, in tests and docs.
    """
    r = ratio_of_means(a, b, ci)
    method = "naive: series values treated as independent samples (too narrow for autocorrelated series)"
    return Ratio(r.estimate, r.low, r.high, ci, method, r.n_a, r.n_b)


def coefficient_of_variation(values: Values) -> float:
    """Run-to-run spread: sample standard deviation (n-1) over the mean.

    Needs at least 2 values and a positive mean.
    """
    x = _array(values, "values", 2, "a coefficient of variation")
    return float(np.std(x, ddof=1)) / _positive_mean(x, "values")


def mean_interval(values: Values, ci: float = 0.95) -> tuple[float, float, float]:
    """Mean of independent repeats and its Student t confidence interval: ``(mean, low, high)``.

    ``mean ± t(ci, n-1) · s / sqrt(n)``; needs at least 2 values.
    """
    _check_ci(ci)
    x = _array(values, "values", 2, "a confidence interval of the mean")
    mean = float(np.mean(x))
    half = float(_scipy_stats.t.ppf((1 + ci) / 2, len(x) - 1)) * float(np.std(x, ddof=1)) / math.sqrt(len(x))
    return mean, mean - half, mean + half


def compare(
    *,
    repeats_a: Optional[Values] = None,
    repeats_b: Optional[Values] = None,
    series_a: Optional[Values] = None,
    series_b: Optional[Values] = None,
    ci: float = 0.95,
) -> Ratio:
    """B over A by the best method the data allows.

    Keyword arguments only: ``repeats_a``/``repeats_b`` are a step's figure in
    each independent run of A and B; ``series_a``/``series_b`` are the step's
    per-interval series of one run of each side. With at least 2 repeats on
    both sides, :func:`ratio_of_means`; otherwise, :func:`ratio_of_series` on
    the two series (both must be given). Raises ValueError saying what is
    missing.
    """
    if repeats_a is not None and repeats_b is not None and len(repeats_a) >= 2 and len(repeats_b) >= 2:
        return ratio_of_means(repeats_a, repeats_b, ci)
    if series_a is not None and series_b is not None:
        return ratio_of_series(series_a, series_b, ci)
    have = {k: len(v) for k, v in dict(repeats_a=repeats_a, repeats_b=repeats_b).items() if v is not None}
    missing = [k for k, v in dict(series_a=series_a, series_b=series_b).items() if v is None]
    raise ValueError(
        "compare needs at least 2 repeats on each side, or a per-interval series of each side; "
        f"got repeats {have or 'none'}, missing {', '.join(missing)}"
    )
