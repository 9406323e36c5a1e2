"""The pytest plugin, exercised with pytester: its fixtures run a workload
and its assertions pass and fail as they should."""

from __future__ import annotations

import json
import re
from pathlib import Path

import pytest

import ibench
from ibench import stats, tables
from ibench.pytest_plugin import SMALL, assert_throughput

pytest_plugins = ["pytester"]


def test_the_fixtures_run_a_small_workload_and_the_assertions_pass(pytester: pytest.Pytester) -> None:
    pytester.makepyfile(
        """
        from ibench.pytest_plugin import assert_sla_met, assert_throughput, assert_verified

        def test_sqlite(ibench_run, ibench_db, tmp_path):
            assert ibench_db is None
            results = ibench_run(steps=["l.i0", "l.x", "qp100"])
            assert_verified(results)
            assert_sla_met(results)
            assert_throughput(results, tmp_path / "baseline.json")   # records it
            assert_throughput(results, tmp_path / "baseline.json")   # meets it
        """
    )
    result = pytester.runpytest_subprocess("-q")
    result.assert_outcomes(passed=1)


def test_a_missed_sla_and_a_slower_run_fail_with_what_went_wrong(pytester: pytest.Pytester) -> None:
    pytester.makepyfile(
        """
        import json
        from ibench.pytest_plugin import assert_sla_met, assert_throughput

        def test_sla(ibench_run):
            assert_sla_met(ibench_run(steps=["qp100"], rows_per_commit_q=1))

        def test_baseline(ibench_run, tmp_path):
            results = ibench_run(steps=["l.i0"])
            (tmp_path / "b.json").write_text(json.dumps({"l.i0": 1e12}))
            assert_throughput(results, tmp_path / "b.json")
        """
    )
    result = pytester.runpytest_subprocess("-q", "--ibench-db", "null:?latency=fixed:20ms")
    result.assert_outcomes(failed=2)
    result.stdout.fnmatch_lines(["*SLA missed: qp100*", "*slower than the baseline: l.i0*"])


def test_the_database_comes_from_the_option_or_the_environment(
    pytester: pytest.Pytester, monkeypatch: pytest.MonkeyPatch
) -> None:
    pytester.makepyfile(
        """
        def test_db(ibench_db):
            assert ibench_db == "null:"
        """
    )
    pytester.runpytest_subprocess("-q", "--ibench-db", "null:").assert_outcomes(passed=1)
    monkeypatch.setenv("IBENCH_DB", "null:")
    pytester.runpytest_subprocess("-q").assert_outcomes(passed=1)


# --- assert_throughput against a baseline, with intervals ----------------------------


@pytest.fixture(scope="module")
def three(tmp_path_factory: pytest.TempPathFactory) -> dict[str, ibench.Results]:
    """qp100 at 300 µs per query (the baseline), the same with its queries
    stalled 700 ms of 2 s (slower, but one transient stall), and at 600 µs
    (half the rate, steadily): 10 intervals of 0.2 s each."""
    out = tmp_path_factory.mktemp("three")
    small = {**SMALL, "query_seconds": 2.0, "interval_seconds": 0.2, "progress": False, "out": out}
    dsns = {"base": "null:?latency=fixed:300us", "stalled": "null:?latency=fixed:300us&stall=700ms@500ms",
            "slower": "null:?latency=fixed:600us"}
    return {name: ibench.run(db=db, steps=["l.i0", "qp100"], label=name, **small) for name, db in dsns.items()}


def qp100_baseline(results: ibench.Results, path: Path) -> Path:
    """A baseline recorded by assert_throughput, kept to qp100 (l.i0 takes a few ms: its figure is noise)."""
    assert_throughput(results, path, update=True)
    path.write_text(json.dumps({"qp100": json.loads(path.read_text())["qp100"]}))
    return path


def test_the_baseline_holds_each_steps_figure_and_its_series_summary(
    three: dict[str, ibench.Results], tmp_path: Path
) -> None:
    path = tmp_path / "b.json"
    assert_throughput(three["base"], path)  # none yet: records it
    stored = json.loads(path.read_text())
    summary = stats.summarize_series(tables.throughput_series(three["base"], "qp100"))
    assert stored["qp100"] == pytest.approx(
        {"value": tables.throughput(three["base"]).frame.loc["base", "qp100"], "mean": summary.mean, "sd": summary.sd,
         "n": summary.n, "n_eff": summary.n_eff}
    )
    assert summary.n >= 9
    assert set(stored["l.i0"]) == {"value"}  # one interval: no series to summarize


def test_a_slowdown_within_the_noise_passes_with_a_warning(three: dict[str, ibench.Results], tmp_path: Path) -> None:
    path = qp100_baseline(three["base"], tmp_path / "b.json")
    ratio = tables.relative([three["base"], three["stalled"]], ci=None).frame.loc["stalled", "qp100"]
    assert ratio < 0.8  # beyond the tolerance, on its figure alone
    warned = r"qp100: 0\.\d\d× the baseline \(95% CI .*\), beyond the 20% tolerance.*not significant"
    with pytest.warns(UserWarning, match=warned):
        assert_throughput(three["stalled"], path)


def test_a_significant_regression_fails_saying_by_how_much_with_its_interval(
    three: dict[str, ibench.Results], tmp_path: Path
) -> None:
    path = qp100_baseline(three["base"], tmp_path / "b.json")
    assert_throughput(three["base"], path)  # itself: no regression
    with pytest.raises(AssertionError) as failed:
        assert_throughput(three["slower"], path)
    message = str(failed.value).splitlines()[0]
    found = re.match(
        r"slower than the baseline: qp100: (0\.\d\d)× the baseline \(95% CI ([\d.]+)–([\d.]+)\), "
        r"beyond the 20% tolerance \([\d,]+ vs [\d,]+\)$",
        message,
    )
    assert found, message
    ratio, low, high = (float(g) for g in found.groups())
    # 600 µs against 300 µs per query: 0.5 plus what each query costs beyond
    # its sleep (wake-up latency, more of it on a loaded host), below 0.8.
    # The message rounds the ratio to 2 decimals and the bounds to 4, so a
    # narrow interval can hold the ratio and not its rounding (0.50 < 0.5007).
    assert 0.4 < low <= high < 0.75
    assert low - 0.005 <= ratio <= high + 0.005


def test_an_old_baseline_of_figures_alone_is_read_with_the_old_rule(
    three: dict[str, ibench.Results], tmp_path: Path
) -> None:
    path = tmp_path / "old.json"
    path.write_text(json.dumps({"qp100": float(tables.throughput(three["base"]).frame.loc["base", "qp100"])}))
    assert_throughput(three["base"], path)
    # No series in the baseline, so no interval: beyond the tolerance fails, stall or not.
    with pytest.raises(AssertionError, match=r"qp100: 0\.\d\d× the baseline \(no interval: .*old format\)"):
        assert_throughput(three["stalled"], path)
    # A step the run lacks fails, as before (the old rule counted it as 0).
    path.write_text(json.dumps({"l.i0": 1.0, "l.i1": 1.0}))
    with pytest.raises(AssertionError, match=r"^slower than the baseline: l\.i1: not in this run"):
        assert_throughput(three["base"], path)
