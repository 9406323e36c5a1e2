"""pytest plugin: fixtures that run a small workload, and assertions on results.

Loaded automatically once ibench is installed (entry point ``pytest11``).

* ``--ibench-db DSN`` (or ``IBENCH_DB``): the database the fixtures use;
  default, a SQLite file in the test's temporary directory.
* ``ibench_db``: that DSN (None for the default).
* ``ibench_run``: a function ``ibench_run(steps=None, **params) -> Results``
  running a small Insert Benchmark (the quick preset, scaled down) into the
  test's temporary directory.

Assertions: :func:`assert_verified`, :func:`assert_sla_met`,
:func:`assert_throughput` (against a stored baseline).
"""

from __future__ import annotations

import json
import os
from pathlib import Path
from typing import Any, Callable, Optional, Sequence

import pytest

import ibench
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


def assert_throughput(results: Results, baseline: str | Path, tolerance: float = 0.2, update: bool = False) -> None:
    """Throughput per step is at least (1 − tolerance) × the stored baseline
    (a JSON file of step → ips/qps). A missing baseline, or ``update=True``,
    records the current figures instead."""
    path = Path(baseline)
    current = _throughput(results)
    if update or not path.exists():
        path.write_text(json.dumps(current, indent=2, sort_keys=True))
        return
    stored: dict[str, float] = json.loads(path.read_text())
    slower = {
        step: (current.get(step, 0.0), base)
        for step, base in stored.items()
        if current.get(step, 0.0) < (1 - tolerance) * base
    }
    assert not slower, "slower than the baseline: " + ", ".join(
        f"{s} {now:,.0f} < {(1 - tolerance):.0%} of {base:,.0f}" for s, (now, base) in slower.items()
    )
