"""pytest plugin: fixtures that run a small workload, and assertions on results.

Loaded automatically once ibench is installed (entry point ``pytest11``).

* ``--ibench-db DSN`` (or ``IBENCH_DB``): the database the fixtures use;
  default, a SQLite file in the test's temporary directory.
* ``ibench_db``: that DSN (None for the default).
* ``ibench_run``: a function ``ibench_run(steps=None, **params) -> Results``
  running a small Insert Benchmark (the quick preset, scaled down) into the
  test's temporary directory.

Assertions: :func:`assert_verified`, :func:`assert_sla_met`,
:func:`assert_throughput` (against a stored baseline: fails only on a
significant regression beyond the tolerance, with its confidence interval).
"""

from __future__ import annotations

import json
import os
import warnings
from pathlib import Path
from typing import Any, Callable, Optional, Sequence

import pytest

import ibench
from ibench import stats
from ibench.results import Results

SMALL = dict(rows_l_i0=5000, rows_l_i1=1000, rows_l_i2=200, query_seconds=1.0, wait_seconds=0.0)
"""The scaled-down quick preset the ``ibench_run`` fixture starts from."""


def pytest_addoption(parser: pytest.Parser) -> None:
    group = parser.getgroup("ibench")
    group.addoption("--ibench-db", default=None, help="DSN of the database ibench fixtures run against (env IBENCH_DB)")


@pytest.fixture
def ibench_db(request: pytest.FixtureRequest) -> Optional[str]:
    """The DSN from --ibench-db or IBENCH_DB; None means a SQLite file per run."""
    option = request.config.getoption("--ibench-db")
    return option if option is not None else os.environ.get("IBENCH_DB")


@pytest.fixture
def ibench_run(ibench_db: Optional[str], tmp_path: Path) -> Callable[..., Results]:
    """Runs a small workload: ``ibench_run(steps=["l.i0", "qp100"], clients=2)``."""

    def run(steps: Optional[Sequence[str]] = None, **params: Any) -> Results:
        merged = {**SMALL, "progress": False, **params}
        return ibench.run(db=ibench_db, steps=steps, out=tmp_path / "ibench-results", **merged)

    return run


def assert_verified(results: Results) -> None:
    """Every write step's tables held exactly their window and regenerated rows."""
    written = results.steps[results.steps["verified"].notna()]
    bad = written[written["verified"] == False]  # noqa: E712 - a nullable boolean column
    assert not written.empty, "no step was verified (the null connector keeps no rows)"
    assert bad.empty, "verify failed: " + "; ".join(f"{r.step}: {r.verify_error}" for r in bad.itertuples())


def assert_sla_met(results: Results) -> None:
    """Every q step kept at least 95% of its background insert rate."""
    q = results.steps[results.steps["sla_ok"].notna()]
    missed = q[q["sla_ok"] == False]  # noqa: E712
    assert not q.empty, "no q step ran"
    assert missed.empty, "SLA missed: " + ", ".join(
        f"{r.step} {r.ips:.0f} of {r.target_ips:.0f} rows/s" for r in missed.itertuples()
    )


def _throughput(results: Results) -> dict[str, float]:
    frame = ibench.tables.throughput(results).frame
    row = frame.iloc[0]
    return {str(step): float(v) for step, v in row.items() if v == v}


def _summary(results: Results, step: str) -> Optional[stats.SeriesSummary]:
    """The step's per-interval throughput summarized (one run only: a
    series is one run's); None when there are several runs or too few
    intervals (under 4) for an estimate."""
    if len(results.runs) != 1:
        return None
    try:
        return stats.summarize_series(ibench.tables.throughput_series(results, step))
    except ValueError:
        return None


def _baseline(results: Results) -> dict[str, dict[str, float]]:
    """The baseline file's content: per step its figure (``value``) and,
    where the step's series allows, its summary (``mean``, ``sd``, ``n``,
    ``n_eff``) for an interval at the next comparison."""
    out: dict[str, dict[str, float]] = {}
    for step, value in _throughput(results).items():
        entry: dict[str, float] = {"value": value}
        summary = _summary(results, step)
        if summary is not None:
            entry.update(mean=summary.mean, sd=summary.sd, n=summary.n, n_eff=summary.n_eff)
        out[step] = entry
    return out


def _stored(entry: Any) -> tuple[float, Optional[stats.SeriesSummary]]:
    """A baseline entry's figure and summary: a bare number is the old
    format (figure only), an object the new one."""
    if isinstance(entry, (int, float)):
        return float(entry), None
    value = float(entry["value"])
    if all(k in entry for k in ("mean", "sd", "n", "n_eff")):
        mean, sd, n, n_eff = (entry[k] for k in ("mean", "sd", "n", "n_eff"))
        return value, stats.SeriesSummary(float(mean), float(sd), int(n), float(n_eff))
    return value, None


def _interval(
    ratio: float, base: Optional[stats.SeriesSummary], now: Optional[stats.SeriesSummary], ci: float
) -> Optional[tuple[float, float]]:
    """The ``ci`` interval of ``ratio`` (now over the baseline) from the two
    series' summaries, its relative width put around the figures' ratio (as
    :func:`ibench.tables.relative` does); None without both summaries."""
    if base is None or now is None:
        return None
    try:
        r = stats.ratio_of_summaries(base, now, ci)
    except ValueError:
        return None
    return ratio * r.low / r.estimate, ratio * r.high / r.estimate


def _said(
    step: str, now: float, base: float, bounds: Optional[tuple[float, float]], ci: float, tolerance: float
) -> str:
    """``qp100: 0.71× the baseline (95% CI 0.65–0.78), beyond the 20% tolerance (2,350 vs 3,310)``."""
    if bounds is None:
        interval = "no interval: too few intervals in the run or the baseline, or a baseline of the old format"
    else:
        digits = stats.decimals((bounds[1] - bounds[0]) / 2)
        interval = f"{ci * 100:g}% CI {bounds[0]:.{digits}f}–{bounds[1]:.{digits}f}"
    figures = f"{now:,.0f} vs {base:,.0f}"
    return f"{step}: {now / base:.2f}× the baseline ({interval}), beyond the {tolerance:.0%} tolerance ({figures})"


def assert_throughput(
    results: Results, baseline: str | Path, tolerance: float = 0.2, update: bool = False, ci: float = 0.95
) -> None:
    """Fails on a significant regression beyond the tolerance: a step whose
    throughput is below (1 − tolerance) × the stored baseline's, and whose
    ``ci`` confidence interval on that ratio lies below 1.0. The interval
    comes from the two runs' per-interval series, corrected for
    autocorrelation (:func:`ibench.stats.ratio_of_summaries` on the series'
    summaries), so a slower figure within the run-to-run noise passes, with
    a warning. A step of the baseline the run lacks fails.

    The baseline is a JSON file of step → ``{"value": figure, "mean", "sd",
    "n", "n_eff"}`` (the figure of :func:`ibench.tables.throughput` and its
    per-interval series' mean, standard deviation, length and effective
    sample size; the last four are left out for a step of under 4
    intervals). An old baseline of step → figure is still read: its steps
    (and steps without a series) fail on the figure alone, as before. A
    missing baseline, or ``update=True``, records the current run instead
    (in the new format)."""
    path = Path(baseline)
    if update or not path.exists():
        path.write_text(json.dumps(_baseline(results), indent=2, sort_keys=True))
        return
    stored: dict[str, Any] = json.loads(path.read_text())
    current = _throughput(results)
    failed = []
    for step, entry in stored.items():
        base, base_summary = _stored(entry)
        if step not in current:
            failed.append(f"{step}: not in this run (the baseline has {base:,.0f})")
            continue
        ratio = current[step] / base if base > 0 else float("inf")
        if ratio >= 1 - tolerance:
            continue
        bounds = _interval(ratio, base_summary, _summary(results, step), ci)
        said = _said(step, current[step], base, bounds, ci, tolerance)
        if bounds is not None and bounds[1] >= 1.0:
            warnings.warn(f"{said}, but not significant: within the noise", stacklevel=2)
            continue
        failed.append(said)
    assert not failed, "slower than the baseline: " + "; ".join(failed)
