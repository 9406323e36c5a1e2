"""Shared helpers for the Python tests."""

from __future__ import annotations

import os
import shutil
from pathlib import Path

import pyarrow as pa
import pyarrow.parquet as pq
import pytest

import ibench
from ibench.results import SERVER_TABLES


def server_or_skip(dsn: str, what: str) -> str:
    """`dsn` when its server answers; outside CI a skip, in CI (CI=true) a failure."""
    try:
        ibench.run(db=dsn, steps=["l.i0"], rows_l_i0=10, out="/dev/null/never", progress=False)
    except ibench.IoError:
        return dsn  # the server answered; only the output directory was refused
    except ibench.Error as e:
        if os.environ.get("CI") == "true":
            raise AssertionError(f"{what} is not reachable and CI=true: {e}")
        pytest.skip(f"{what} is not reachable: {e}")
    return dsn


def with_server_tables(results: ibench.Results, dst: Path) -> Path:
    """A copy of ``results``' run directory at ``dst`` holding counters.parquet,
    gauges.parquet and disks.parquet: the run's own where it wrote rows,
    else synthetic ones on the run's real steps and interval grid (written by
    hand, for runs made before ibench recorded them and for the null
    connector, which has no server to read). Synthetic figures:
    per step, counter ``sqlite``/``pages`` from 10 to 10 + rows inserted and
    a text row; gauges ``sqlite``/``wal_frames`` (interval number) and
    ``postgres``/``dead_tuples`` (100 − interval number) per interval of the
    host grid; device ``vda`` at 10 + step number % utilisation for the whole
    step, per interval the interval number; waits ``pg_stat_activity``/
    ``IO:WALSync``, 10 + step number samples; a server profile of one stack
    ``postgres;main;XLogFlush``, 10 + step number samples at 99 Hz, and its
    profiled row."""
    shutil.copytree(results.path, dst)
    run_id = str(results.runs["run_id"].iloc[0])
    host = results.intervals[results.intervals["op"] == "host"]
    steps = list(results.steps["step"])
    if _missing(dst / "counters.parquet"):
        rows = []
        for step, inserts in zip(results.steps["step"], results.steps["inserts"]):
            rows.append(dict(step=step, source="sqlite", name="pages", start=10.0, end=10.0 + inserts,
                             delta=float(inserts), text=None))
            rows.append(dict(step=step, source="innodb_status", name="status", start=None, end=None, delta=None,
                             text=f"status at the end of {step}"))
        _write(dst / "counters.parquet", run_id, rows, "counters")
    if _missing(dst / "gauges.parquet"):
        rows = []
        for step in steps:
            grid = host[host["step"] == step].sort_values("t_s")
            times = list(zip(grid["t_s"], grid["length_s"]))
            if not times:
                # A step shorter than a twentieth of an interval has no host row: one gauge row at its end.
                elapsed = float(results.steps.loc[results.steps["step"] == step, "elapsed_s"].iloc[0])
                times = [(0.0, elapsed)]
            for n, (t_s, length_s) in enumerate(times):
                at = dict(step=step, t_s=t_s, length_s=length_s)
                rows.append(dict(at, source="sqlite", name="wal_frames", value=float(n)))
                rows.append(dict(at, source="postgres", name="dead_tuples", value=100.0 - n))
        _write(dst / "gauges.parquet", run_id, rows, "gauges")
    if _missing(dst / "disks.parquet"):
        rows = []
        for i, step in enumerate(steps):
            rows.append(dict(step=step, device="vda", t_s=None, length_s=1.0, util_pct=10.0 + i))
            for t_s in host.loc[host["step"] == step, "t_s"]:
                rows.append(dict(step=step, device="vda", t_s=t_s, length_s=1.0, util_pct=float(t_s)))
        _write(dst / "disks.parquet", run_id, rows, "disks")
    if _missing(dst / "waits.parquet"):
        rows = [dict(step=step, source="pg_stat_activity", event="IO:WALSync", samples=10 + i, wait_s=(10 + i) / 10.0,
                     count=None, ops=1000) for i, step in enumerate(steps)]
        _write(dst / "waits.parquet", run_id, rows, "waits")
    if _missing(dst / "profiles.parquet"):
        rows = [dict(step=step, role="server", stack="postgres;main;XLogFlush", samples=10 + i, frequency_hz=99,
                     ops=1000) for i, step in enumerate(steps)]
        _write(dst / "profiles.parquet", run_id, rows, "profiles")
    if _missing(dst / "profiled.parquet"):
        rows = [dict(step=step, role="server", pids="1", executables="/usr/lib/postgresql/15/bin/postgres",
                     event="cpu-clock", frequency_hz=99, call_graph="fp", samples=10 + i,
                     unresolved_frames_share=0.0, duration_s=1.0, perf_cpu_s=0.0, perf_total_cpu_s=0.1,
                     script_cpu_s=0.1, ops=1000) for i, step in enumerate(steps)]
        _write(dst / "profiled.parquet", run_id, rows, "profiled")
    return dst


def _missing(path: Path) -> bool:
    return not path.exists() or pq.read_metadata(path).num_rows == 0


def _write(path: Path, run_id: str, rows: list[dict[str, object]], table: str) -> None:
    schema = SERVER_TABLES[table]
    columns = {name: [row.get(name) for row in rows] for name in schema.names}
    columns["run_id"] = [run_id] * len(rows)
    pq.write_table(pa.table(columns, schema=schema), path)
