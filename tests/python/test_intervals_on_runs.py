"""The confidence intervals on real runs: the null connector injects seeded
exponential latencies, so two runs with the same distribution have a true
throughput ratio of exactly 1.0, and their per-interval series' interval
must cover it in about 95% of trials. The runs are on simulated time
(`time=simulated`): each series is exactly what its seeded latencies make
it, so no drift of the host's gets into it (real sleeps once let a loaded
host's drift push coverage to 0.81), and the test is deterministic. 400
trials (standard error ~1.2 points) with the band 0.86-0.99 tell that from
an 80% interval (3 standard errors below 0.86) and from a too-wide one. A
run with stalls gives an autocorrelated series, whose interval must be
wider than the naive one."""

from __future__ import annotations

from concurrent.futures import ThreadPoolExecutor
from pathlib import Path

import numpy as np
import numpy.typing as npt
import ibench
from ibench import stats

TRIALS = 400

SIMULATED = "null:?time=simulated&query_latency=fixed:1ms"
"""The null connector on simulated time (it needs a query latency, which l.i0 does not use)."""


def series(out: Path, dsn: str, rows: int = 1500, interval: float = 0.01) -> npt.NDArray[np.float64]:
    """The all-clients insert rate per interval of one l.i0 run (the last, partial interval left out)."""
    r = ibench.run(
        db=dsn,
        steps=["l.i0"],
        rows_l_i0=rows,
        rows_per_commit_l_i0=1,
        interval_seconds=interval,
        verify="off",
        progress=False,
        out=out,
    )
    i = r.intervals
    rows_ = i[(i["op"] == "insert") & i["client"].isna()].sort_values("t_s")
    return np.asarray(rows_["rate"].to_numpy()[:-1], dtype=np.float64)


def test_the_series_interval_covers_a_true_ratio_of_one_about_95_percent_of_the_time(tmp_path: Path) -> None:
    covered = 0
    # ibench.run releases the GIL: the two runs of a trial are concurrent.
    with ThreadPoolExecutor(max_workers=2) as pool:
        for trial in range(TRIALS):
            a, b = pool.map(
                lambda side: series(tmp_path / side[0], f"{SIMULATED}&insert_latency=exp:100us&seed={side[1]}"),
                [("a", 2 * trial), ("b", 2 * trial + 1)],
            )
            ratio = stats.ratio_of_series(a, b, ci=0.95)
            covered += ratio.low <= 1.0 <= ratio.high
    coverage = covered / TRIALS
    # 80% would fall below 0.86 almost surely (0.80 + 3 standard errors of 2 points).
    assert 0.86 <= coverage <= 0.99, f"coverage {coverage:.3f} of {TRIALS} trials"


def test_a_stalled_runs_series_gets_a_wider_interval_than_the_naive_one(tmp_path: Path) -> None:
    # Two stalls of 60 ms (6 intervals in a row at zero): the series is autocorrelated.
    stalled = series(tmp_path, f"{SIMULATED}&insert_latency=exp:100us&stall=60ms@40ms,60ms@160ms&seed=7", rows=2500)
    plain = series(tmp_path, f"{SIMULATED}&insert_latency=exp:100us&seed=8", rows=2500)
    assert stats.integrated_autocorrelation_time(stalled) > 1.5
    honest = stats.ratio_of_series(plain, stalled)
    naive = stats.naive_ratio_of_series(plain, stalled)
    assert honest.high - honest.low > 1.3 * (naive.high - naive.low), (honest, naive)
