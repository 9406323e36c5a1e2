"""The pytest plugin, exercised with pytester: its fixtures run a workload
and its assertions pass and fail as they should."""

from __future__ import annotations

import pytest

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
