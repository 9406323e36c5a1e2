"""Specification of ``ibench.run`` and ``ibench.load``: running the Insert Benchmark from Python.

Each test states one behaviour as a sentence:

* a run on the default SQLite database executes every step of the quick preset
  and returns :class:`ibench.Results` read from its run directory,
* the Parquet files hold exactly the columns and types docs/results.md documents,
* ``ibench.load`` reads one run, a folder of runs or a list, as the runs concatenated,
* percentiles recomputed from the histograms equal the steps table's,
* the ``null:`` connector's injected latency is what the harness measures,
* bad arguments are refused before any work; a run that fails or is
  interrupted says so, and its files record how far it got,
* the GIL is released while a run executes, and progress goes to ``sys.stderr``.

Runs are small (a few thousand rows, half-second query steps); the SQLite run
that several tests inspect is made once per module.
"""

from __future__ import annotations

import itertools
import json
import re
import shutil
import signal
import subprocess
import sys
import threading
import time
from pathlib import Path
from typing import Any

import pandas as pd
import pyarrow as pa
import pyarrow.parquet as pq
import pytest

import ibench
from conftest import with_server_tables
from ibench.results import SERVER_TABLES

DOC = Path(__file__).resolve().parents[2] / "docs" / "results.md"
"""The documented layout of the result files."""

SMALL: dict[str, Any] = dict(rows_l_i0=2000, rows_l_i1=500, rows_l_i2=100, query_seconds=0.5, wait_seconds=0)
"""Sizes that keep a whole quick-preset run to a few seconds."""

QUICK_STEPS = ["l.i0", "l.x", "l.i1", "l.i2", "wait", "qr100", "qp100", "qr500", "qp500", "qr1000", "qp1000"]
"""The quick preset's steps, in order."""

WRITE_STEPS = {"l.i0", "l.i1", "l.i2", "qr100", "qp100", "qr500", "qp500", "qr1000", "qp1000"}
"""Steps after which the tables are verified."""

TABLES = ("runs", "steps", "intervals", "histograms")

OPS = ("insert", "delete", "query", "event", "statement")
"""Ops with latency columns in ``steps``, in column order."""

PERCENTILES = ("p50", "p90", "p99", "p999", "max")

LATENCY_COLUMNS = [f"{op}_{time}_{p}_us" for op, time, p in itertools.product(OPS, ("resp", "svc"), PERCENTILES)]
LAG_COLUMNS = [f"{op}_lag_{p}_us" for op, p in itertools.product(("insert", "delete", "event"), ("p50", "p99", "max"))]

DOC_TYPES = {
    "Utf8": pa.string(),
    "Timestamp(µs, UTC)": pa.timestamp("us", tz="UTC"),
    "UInt32": pa.uint32(),
    "UInt64": pa.uint64(),
    "Float64": pa.float64(),
    "Boolean": pa.bool_(),
    "Binary": pa.binary(),
}
"""Arrow types as docs/results.md spells them."""


# --- helpers -------------------------------------------------------------------


def run_dirs(out: Path) -> list[Path]:
    """The run directories under ``out`` (none when ``out`` does not exist)."""
    return sorted(d for d in out.iterdir() if d.is_dir()) if out.exists() else []


def only_run_dir(out: Path) -> Path:
    dirs = run_dirs(out)
    assert len(dirs) == 1, dirs
    return dirs[0]


def step_row(results: ibench.Results, step: str) -> pd.Series:
    rows = results.steps[results.steps["step"] == step]
    assert len(rows) == 1, f"{len(rows)} rows for step {step}"
    return rows.iloc[0]


def doc_schema(table: str) -> list[tuple[str, pa.DataType, bool]]:
    """(column, Arrow type, nullable) of ``table`` as docs/results.md's Markdown table lists them,
    the 50 ``{op}_{resp|svc}_{p...}_us`` and 9 lag columns expanded."""
    section = DOC.read_text().split(f"## {table}.parquet", 1)[1].split("\n## ", 1)[0]
    columns = []
    for line in section.splitlines():
        cells = [c.strip() for c in re.split(r"(?<!\\)\|", line)[1:-1]]
        if len(cells) != 4 or cells[0] in ("column", "---") or set(cells[0]) == {"-"}:
            continue
        name, typ, null = cells[0].strip("`"), DOC_TYPES[cells[1]], cells[2] == "yes"
        if name == r"{insert\|delete\|event}_lag_{p50\|p99\|max}_us":
            columns += [(c, typ, null) for c in LAG_COLUMNS]
        elif "{" in name:
            assert name == r"{op}_{resp\|svc}_{p50\|p90\|p99\|p999\|max}_us", name
            columns += [(c, typ, null) for c in LATENCY_COLUMNS]
        else:
            columns.append((name, typ, null))
    assert columns, f"no table for {table} in {DOC}"
    return columns


def window_count(buckets: dict[int, int], start: float, end: float) -> int:
    """Iterations counted in the 10 ms buckets lying entirely inside ``[start, end]`` (Unix seconds)."""
    return sum(n for b, n in buckets.items() if b / 100 >= start and (b + 1) / 100 <= end)


# --- fixtures ------------------------------------------------------------------


@pytest.fixture(scope="module")
def quick(tmp_path_factory: pytest.TempPathFactory) -> ibench.Results:
    """The quick preset's whole step list, small, on the default SQLite database."""
    out = tmp_path_factory.mktemp("quick")
    return ibench.run(out=out, seed=7, label="quick test", progress=False, **SMALL)


@pytest.fixture(scope="module")
def two_runs(tmp_path_factory: pytest.TempPathFactory) -> tuple[Path, list[Path]]:
    """A folder holding two small runs on the null connector, and their directories (sorted)."""
    out = tmp_path_factory.mktemp("two")
    for seed in (1, 2):
        ibench.run(db="null:", steps=["l.i0", "l.i1"], out=out, seed=seed, progress=False, **SMALL)
    return out, run_dirs(out)


# --- a whole run on SQLite -----------------------------------------------------


def test_a_quick_run_on_default_sqlite_returns_results_with_one_row_per_step_in_order(quick: ibench.Results) -> None:
    assert isinstance(quick, ibench.Results)
    assert list(quick.steps["step"]) == QUICK_STEPS


def test_every_step_of_a_quick_run_ends_ok(quick: ibench.Results) -> None:
    assert list(quick.steps["status"]) == ["ok"] * len(QUICK_STEPS)


def test_write_steps_are_verified_and_other_steps_have_null_verified(quick: ibench.Results) -> None:
    for row in quick.steps.itertuples():
        if row.step in WRITE_STEPS:
            assert row.verified is True, (row.step, row.verified, row.verify_error)
        else:
            assert pd.isna(row.verified), (row.step, row.verified)


def test_the_run_directory_holds_the_four_parquet_files_and_the_default_sqlite_database(
    quick: ibench.Results,
) -> None:
    files = {p.name for p in quick.path.iterdir()}
    assert {f"{t}.parquet" for t in TABLES} | {"ibench.sqlite"} <= files


def test_the_runs_row_records_status_dbms_schema_version_build_profile_and_seed(quick: ibench.Results) -> None:
    assert len(quick.runs) == 1
    run = quick.runs.iloc[0]
    assert (run.run_id, run.status, run.dbms, run.schema_version, run.seed) == (quick.path.name, "ok", "sqlite", 2, 7)
    assert run.build_profile == ibench.build_profile
    assert pd.isna(run.error)
    assert quick.status == "ok"


def test_the_recorded_config_holds_the_values_passed_to_run(quick: ibench.Results) -> None:
    config = json.loads(quick.runs["config"].iloc[0])
    assert {k: config[k] for k in SMALL} == SMALL
    assert config["preset"] == "quick"
    assert config["steps"] == QUICK_STEPS
    assert config["seed"] == 7
    assert config["label"] == "quick test"
    assert config["db"] == f"sqlite:{quick.path / 'ibench.sqlite'}"


# --- the documented layout -------------------------------------------------------


@pytest.mark.parametrize("table", TABLES + ("threads",))
def test_each_parquet_file_has_exactly_the_documented_columns_in_order(quick: ibench.Results, table: str) -> None:
    documented = [name for name, _, _ in doc_schema(table)]
    assert pq.read_schema(quick.path / f"{table}.parquet").names == documented
    assert list(getattr(quick, table).columns) == documented


@pytest.mark.parametrize("table", TABLES + ("threads",))
def test_each_documented_column_has_the_documented_arrow_type_and_nullability(
    quick: ibench.Results, table: str
) -> None:
    schema = pq.read_schema(quick.path / f"{table}.parquet")
    for name, typ, nullable in doc_schema(table):
        assert name in schema.names, f"{table}.{name} missing"
        field = schema.field(name)
        assert (field.type, field.nullable) == (typ, nullable), f"{table}.{name}"


def test_steps_has_the_50_latency_columns() -> None:
    names = [name for name, _, _ in doc_schema("steps")]
    assert [n for n in names if n.endswith("_us") and "_lag_" not in n] == LATENCY_COLUMNS
    assert len(LATENCY_COLUMNS) == 50
    assert [n for n in names if "_lag_" in n] == LAG_COLUMNS


def test_timestamps_read_into_pandas_as_timezone_aware_utc_datetimes(quick: ibench.Results) -> None:
    for df in (quick.runs, quick.steps):
        dtype = df["started_at"].dtype
        assert isinstance(dtype, pd.DatetimeTZDtype) and str(dtype.tz) == "UTC", dtype
    started = quick.runs["started_at"].iloc[0]
    assert abs(pd.Timestamp.now(tz="UTC") - started) < pd.Timedelta(minutes=10)
    assert (quick.steps["started_at"] >= started).all()


def test_counts_read_into_pandas_as_unsigned_integers(quick: ibench.Results) -> None:
    for df, columns in [
        (quick.runs, {"schema_version": "uint32", "seed": "uint64", "cpus": "uint32"}),
        (quick.steps, {"clients": "uint32", "inserts": "uint64", "deletes": "uint64", "errors": "uint64"}),
        # Host rows have no client or count: nullable integers, not floats.
        (quick.intervals, {"client": "UInt32", "count": "UInt64"}),
        (quick.histograms, {"count": "uint64"}),
    ]:
        assert {c: str(df[c].dtype) for c in columns} == columns


def test_nullable_booleans_hold_true_false_or_null(quick: ibench.Results) -> None:
    for column in ("sla_ok", "verified"):
        values = quick.steps[column]
        assert values.map(lambda v: v is None or isinstance(v, bool)).all(), values
        assert values.isna().any() and values.notna().any()
    q_steps = quick.steps["step"].str.startswith("q")
    assert quick.steps.loc[q_steps, "sla_ok"].notna().all()
    assert quick.steps.loc[~q_steps, "sla_ok"].isna().all()


def test_histograms_hold_bytes_in_nanoseconds_for_each_step_op_and_time_kind(quick: ibench.Results) -> None:
    h = quick.histograms
    assert set(h["unit"]) == {"ns"} and set(h["time"]) == {"response", "service", "lag"}
    assert h.loc[h["time"] == "lag", "t_s"].isna().all()
    assert all(isinstance(b, bytes) and b for b in h["histogram"])
    whole = h[h["t_s"].isna()]
    assert not whole.duplicated(["run_id", "step", "op", "time"]).any()
    assert set(whole.loc[whole["step"] == "l.x", "op"]) == {"create_index"}


def test_per_interval_histograms_hold_every_clients_response_times_of_each_interval(quick: ibench.Results) -> None:
    h = quick.histograms
    per_interval = h[h["t_s"].notna()]
    assert set(per_interval["time"]) == {"response"}
    assert not per_interval.duplicated(["run_id", "step", "op", "t_s"]).any()
    iv = quick.intervals
    merged = iv[iv["client"].isna() & (iv["op"] != "host")]
    for row in per_interval.itertuples():
        match = merged[(merged["step"] == row.step) & (merged["op"] == row.op) & (merged["t_s"] == row.t_s)]
        assert len(match) == 1 and int(match["count"].iloc[0]) == row.count, (row.step, row.op, row.t_s)
    # The counts of a step's intervals add up to the whole step's.
    for (step, op), part in per_interval.groupby(["step", "op"]):
        total = h[(h["step"] == step) & (h["op"] == op) & (h["time"] == "response") & h["t_s"].isna()]["count"]
        assert part["count"].sum() == int(total.iloc[0]), (step, op)


def test_all_clients_interval_rows_merge_the_clients_and_partial_intervals_have_their_length(
    quick: ibench.Results,
) -> None:
    iv = quick.intervals
    ops = iv[iv["op"] != "host"]
    for (step, op), part in ops.groupby(["step", "op"]):
        clients = part[part["client"].notna()]
        merged = part[part["client"].isna()]
        by_t = clients.groupby("t_s")["count"].sum()
        assert list(merged["count"].astype(int)) == [int(by_t.get(t, 0)) for t in merged["t_s"]], (step, op)
        assert (part["length_s"] <= 1.0 + 1e-9).all() and (part["length_s"] > 0).all(), (step, op)
        rate = part["count"].astype(float) / part["length_s"]
        assert (abs(part["rate"] - rate) < 1e-6).all(), (step, op)


# --- ibench.load ---------------------------------------------------------------


def test_load_of_a_run_directory_reads_its_parquet_files(two_runs: tuple[Path, list[Path]]) -> None:
    _, dirs = two_runs
    loaded = ibench.load(dirs[0])
    assert loaded.path == dirs[0]
    for table in TABLES:
        # Same values; `load` reads the nullable integers of intervals as pandas' nullable dtypes.
        pd.testing.assert_frame_equal(
            getattr(loaded, table), pd.read_parquet(dirs[0] / f"{table}.parquet"), check_dtype=False
        )


def test_load_of_a_folder_of_runs_gives_the_runs_concatenated(two_runs: tuple[Path, list[Path]]) -> None:
    parent, dirs = two_runs
    assert len(dirs) == 2
    loaded, singles = ibench.load(parent), [ibench.load(d) for d in dirs]
    assert len(loaded.runs) == 2
    for table in TABLES:
        expected = pd.concat([getattr(s, table) for s in singles], ignore_index=True)
        pd.testing.assert_frame_equal(getattr(loaded, table), expected)


def test_a_folders_runs_load_in_start_order_even_within_one_second(tmp_path: Path) -> None:
    # Run ids sort by start time to the millisecond: quick runs started in
    # the same second came back in a random order when ids sorted by second.
    out = tmp_path / "out"
    for seed in range(1, 7):
        ibench.run(db="null:", steps=["l.i0"], rows_l_i0=100, out=out, seed=seed, progress=False)
    runs = ibench.load(out).runs
    assert list(runs["seed"]) == list(range(1, 7))
    assert list(runs["run_id"]) == sorted(runs["run_id"])
    assert list(runs["started_at"]) == sorted(runs["started_at"])


def test_load_of_a_list_of_run_directories_gives_them_concatenated_in_that_order(
    two_runs: tuple[Path, list[Path]],
) -> None:
    _, dirs = two_runs
    order = [dirs[1], dirs[0]]
    loaded, singles = ibench.load(order), [ibench.load(d) for d in order]
    assert list(loaded.runs["run_id"]) == [d.name for d in order]
    for table in TABLES:
        expected = pd.concat([getattr(s, table) for s in singles], ignore_index=True)
        pd.testing.assert_frame_equal(getattr(loaded, table), expected)


def test_to_arrow_returns_the_four_tables_and_the_server_tables_as_pyarrow_tables(
    two_runs: tuple[Path, list[Path]],
) -> None:
    parent, _ = two_runs
    loaded = ibench.load(parent)
    tables = loaded.to_arrow()
    assert set(tables) == set(TABLES) | set(SERVER_TABLES)
    for name, table in tables.items():
        assert isinstance(table, pa.Table)
        assert table.num_rows == len(getattr(loaded, name))


# --- the server's counters, gauges and disks -------------------------------------


def test_a_run_without_server_table_files_reads_them_as_empty_frames_with_their_columns(
    quick: ibench.Results, tmp_path: Path
) -> None:
    """Runs recorded before ibench wrote counters, gauges and disks load as if they had none."""
    old = tmp_path / "old"
    shutil.copytree(quick.path, old)
    for name in SERVER_TABLES:
        (old / f"{name}.parquet").unlink(missing_ok=True)
    loaded = ibench.load(old)
    for name, schema in SERVER_TABLES.items():
        frame = getattr(loaded, name)
        assert frame.empty and list(frame.columns) == schema.names, name
        assert loaded.to_arrow()[name].schema.equals(schema), name


def test_counters_gauges_and_disks_read_their_files_and_concatenate_runs(
    two_runs: tuple[Path, list[Path]], tmp_path: Path
) -> None:
    _, dirs = two_runs
    copies = [with_server_tables(ibench.load(d), tmp_path / d.name) for d in dirs]
    loaded = ibench.load(copies)
    for name in SERVER_TABLES:
        expected = pd.concat([pd.read_parquet(c / f"{name}.parquet") for c in copies], ignore_index=True)
        pd.testing.assert_frame_equal(getattr(loaded, name), expected, check_dtype=False)
        assert set(getattr(loaded, name)["run_id"]) == {c.name for c in copies}, name
        assert set(getattr(loaded, name)["step"]) <= set(loaded.steps["step"]), name
    counters = loaded.counters
    numeric = counters[counters["text"].isna()]
    assert (numeric["delta"] == numeric["end"] - numeric["start"]).all()


def test_the_server_tables_of_a_run_directory_on_disk_are_read_where_only_some_runs_have_them(
    two_runs: tuple[Path, list[Path]], tmp_path: Path
) -> None:
    _, dirs = two_runs
    newer = with_server_tables(ibench.load(dirs[0]), tmp_path / "newer")
    older = tmp_path / "older"
    shutil.copytree(dirs[1], older)
    for name in SERVER_TABLES:
        (older / f"{name}.parquet").unlink(missing_ok=True)
    loaded = ibench.load([newer, older])
    for name in SERVER_TABLES:
        assert set(getattr(loaded, name)["run_id"]) == {dirs[0].name}, name


def test_loading_a_folder_without_runs_raises_io_error(tmp_path: Path) -> None:
    (tmp_path / "empty").mkdir()
    with pytest.raises(ibench.IoError, match="no run directory"):
        ibench.load(tmp_path / "empty")
    assert issubclass(ibench.IoError, ibench.Error)


# --- percentiles ---------------------------------------------------------------


@pytest.mark.parametrize("time_kind, column", [("response", "resp"), ("service", "svc")])
def test_percentile_recomputed_from_histograms_equals_the_steps_p99_column(
    quick: ibench.Results, time_kind: str, column: str
) -> None:
    checked = 0
    for row in quick.steps.itertuples():
        for op in OPS:
            expected = getattr(row, f"{op}_{column}_p99_us")
            if pd.isna(expected):
                continue
            assert quick.percentile(row.step, op, 99, time=time_kind) == expected, (row.step, op)
            checked += 1
    assert checked >= 20


# --- the null connector ----------------------------------------------------------


def test_null_fixed_latency_is_the_measured_insert_service_median(tmp_path: Path) -> None:
    r = ibench.run(
        db="null:?latency=fixed:1ms",
        steps=["l.i0"],
        rows_l_i0=200,
        rows_per_commit_l_i0=1,
        out=tmp_path,
        progress=False,
    )
    row = step_row(r, "l.i0")
    assert row.inserts == 200
    assert 1000 <= row.insert_svc_p50_us <= 1001 + 5
    assert pd.isna(row.verified)  # the null connector keeps no rows


# --- bad input -----------------------------------------------------------------

BAD_ARGUMENTS = {
    "steps": dict(steps=["l.i0", "bogus"]),
    "preset": dict(preset="huge"),
    "rows_l_i0": dict(rows_l_i0=0),
    "rows_l_i1": dict(rows_l_i1=-5),
    "db": dict(db="nodsn"),
    "clientz": dict(clientz=2),
}
"""Arguments ibench must refuse, by the parameter its error must name."""


@pytest.mark.parametrize("name, kwargs", BAD_ARGUMENTS.items(), ids=list(BAD_ARGUMENTS))
def test_a_bad_argument_raises_config_error_naming_the_parameter(
    tmp_path: Path, name: str, kwargs: dict[str, Any]
) -> None:
    with pytest.raises(ibench.ConfigError, match=rf"^invalid {name}:"):
        ibench.run(out=tmp_path / "out", progress=False, **kwargs)


@pytest.mark.parametrize("name, kwargs", BAD_ARGUMENTS.items(), ids=list(BAD_ARGUMENTS))
def test_a_bad_argument_creates_no_run_directory(tmp_path: Path, name: str, kwargs: dict[str, Any]) -> None:
    out = tmp_path / "out"
    with pytest.raises(ibench.ConfigError):
        ibench.run(out=out, progress=False, **kwargs)
    assert run_dirs(out) == []


@pytest.mark.parametrize("db", [None, "null:"])
def test_an_out_under_a_regular_file_raises_io_error(tmp_path: Path, db: str | None) -> None:
    blocker = tmp_path / "file"
    blocker.write_text("not a directory")
    with pytest.raises(ibench.IoError):
        ibench.run(db=db, steps=["l.i0"], out=blocker / "out", progress=False, **SMALL)


# --- failures and Ctrl-C -----------------------------------------------------------


def test_a_run_failing_mid_step_raises_an_error_naming_its_results_directory(tmp_path: Path) -> None:
    with pytest.raises(ibench.Error) as caught:
        ibench.run(db="null:?fail=delete@3", steps=["l.i0", "l.i1", "l.i2"], out=tmp_path, progress=False, **SMALL)
    message = str(caught.value)
    assert str(only_run_dir(tmp_path)) in message
    assert "error" in message


def test_a_failed_run_records_its_error_and_the_steps_up_to_the_failing_one(tmp_path: Path) -> None:
    with pytest.raises(ibench.Error):
        ibench.run(db="null:?fail=delete@3", steps=["l.i0", "l.i1", "l.i2"], out=tmp_path, progress=False, **SMALL)
    r = ibench.load(only_run_dir(tmp_path))
    assert r.status == "error"
    assert "injected failure of delete number 3" in r.runs["error"].iloc[0]
    assert list(zip(r.steps["step"], r.steps["status"])) == [("l.i0", "ok"), ("l.i1", "error")]
    assert "injected failure" in step_row(r, "l.i1").error


CTRL_C_SCRIPT = """
import sys, ibench
ibench.run(db="null:", steps=["l.i0", "qr100"], query_seconds=60, rows_l_i0=2000, out=sys.argv[1], progress=False)
"""


def wait_for_step(out: Path, step: str, timeout: float) -> None:
    """Waits until a run under ``out`` has written a row for ``step``."""
    deadline = time.monotonic() + timeout
    while time.monotonic() < deadline:
        for d in run_dirs(out):
            try:
                if step in pq.read_table(d / "steps.parquet", columns=["step"]).column("step").to_pylist():
                    return
            except (OSError, pa.ArrowException):
                pass  # not written yet
        time.sleep(0.05)
    raise AssertionError(f"no {step} row under {out} after {timeout} s")


def test_ctrl_c_stops_a_run_with_keyboard_interrupt_and_records_it_as_interrupted(tmp_path: Path) -> None:
    out = tmp_path / "out"
    proc = subprocess.Popen(
        [sys.executable, "-c", CTRL_C_SCRIPT, str(out)], stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True
    )
    try:
        wait_for_step(out, "l.i0", timeout=30)
        time.sleep(1.5)  # qr100 is under way
        proc.send_signal(signal.SIGINT)
        sent = time.monotonic()
        _, stderr = proc.communicate(timeout=10)
    finally:
        if proc.poll() is None:
            proc.kill()
            proc.wait()
    assert time.monotonic() - sent < 10
    assert proc.returncode != 0
    assert "KeyboardInterrupt" in stderr
    r = ibench.load(only_run_dir(out))
    assert r.status == "interrupted"
    assert step_row(r, "l.i0").status == "ok"
    assert step_row(r, "qr100").status == "interrupted"


# --- threads and progress ---------------------------------------------------------


def test_a_run_releases_the_gil_so_python_threads_keep_running(tmp_path: Path) -> None:
    buckets: dict[int, int] = {}
    done = threading.Event()

    def count() -> None:
        while not done.is_set():
            b = int(time.time() * 100)
            buckets[b] = buckets.get(b, 0) + 1

    counter = threading.Thread(target=count)
    counter.start()
    try:
        r = ibench.run(
            db="null:?latency=fixed:1ms",
            steps=["l.i0"],
            rows_l_i0=300,
            rows_per_commit_l_i0=1,
            out=tmp_path,
            progress=False,
        )
    finally:
        done.set()
        counter.join()
    row = step_row(r, "l.i0")
    start = row.started_at.timestamp()
    assert row.elapsed_s >= 0.3
    assert window_count(buckets, start, start + row.elapsed_s) > 1000


def test_progress_writes_a_line_per_step_to_sys_stderr(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    steps = ["l.i0", "l.x", "l.i1", "wait"]
    r = ibench.run(db="null:", steps=steps, out=tmp_path, progress=True, **SMALL)
    captured = capsys.readouterr()
    lines = captured.err.splitlines()
    assert captured.out == ""
    assert any(r.path.name in line for line in lines), lines
    for step in steps:
        assert any(line.split()[:2] == [step, "ok"] for line in lines), (step, lines)


def test_progress_false_writes_nothing(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    ibench.run(db="null:", steps=["l.i0", "l.x", "l.i1", "wait"], out=tmp_path, progress=False, **SMALL)
    assert capsys.readouterr() == ("", "")


# --- display -----------------------------------------------------------------------


def test_repr_names_the_run_id_and_status(quick: ibench.Results) -> None:
    text = repr(quick)
    assert quick.path.name in text and "ok" in text


def test_repr_html_is_an_html_table_of_the_steps(quick: ibench.Results) -> None:
    html = quick._repr_html_()
    assert "<table" in html and "</table>" in html
    assert quick.path.name in html
    assert all(f"<td>{step}</td>" in html for step in QUICK_STEPS)


def test_costs_give_client_and_host_cpu_per_operation_for_every_step(tmp_path: Path) -> None:
    results = ibench.run(
        db="null:?cpu=1ms", steps=["l.i0"], rows_l_i0=300, rows_per_commit_l_i0=1, out=tmp_path, progress=False
    )
    costs = results.costs
    assert list(costs["step"]) == ["l.i0"]
    client = float(costs["client_cpu_us_per_op"].iloc[0])
    # The null connector burns 1 ms of its thread's CPU per insert (a spin
    # on the wall clock lost CPU time to a busy machine's preemption).
    assert 1000 <= client <= 1200, client
    assert float(costs["cpupq"].iloc[0]) >= 0.8 * client
    assert costs["server_cpu_us_per_op"].isna().all()


def test_host_rows_hold_the_per_interval_counters(tmp_path: Path) -> None:
    results = ibench.run(db="null:", steps=["qr100"], query_seconds=2.5, out=tmp_path, progress=False)
    host = results.host
    assert len(host) >= 2
    assert (host["host_cpu_pct"] > 0).all()
    assert {"client_cpu_pct", "write_mb_s", "cs_per_s"} <= set(host.columns)
    assert "p50_us" not in host.columns


def test_a_config_file_keeps_its_own_preset_and_seed_unless_run_says_otherwise(tmp_path: Path) -> None:
    toml = tmp_path / "run.toml"
    toml.write_text('preset = "quick"\nseed = 42\nsteps = ["l.i0"]\nrows_l_i0 = 500\nlabel = "from the file"\n')
    r = ibench.run(db="null:", config=toml, out=tmp_path / "out", progress=False)
    recorded = json.loads(r.runs["config"].iloc[0])
    assert (recorded["seed"], recorded["label"], recorded["rows_l_i0"]) == (42, "from the file", 500)
    r = ibench.run(db="null:", config=toml, seed=3, out=tmp_path / "out", progress=False)
    assert json.loads(r.runs["config"].iloc[0])["seed"] == 3


def test_percentile_of_several_runs_needs_to_be_told_which(two_runs: tuple[Path, list[Path]]) -> None:
    out, dirs = two_runs
    both = ibench.load(out)
    with pytest.raises(ibench.ConfigError, match="2 runs are loaded"):
        both.percentile("l.i0", "insert", 99)
    one = ibench.load(dirs[1])
    run_id = str(one.runs["run_id"].iloc[0])
    assert both.percentile("l.i0", "insert", 99, run=run_id) == one.percentile("l.i0", "insert", 99)
    with pytest.raises(ibench.ConfigError, match="neither a run id nor a label"):
        both.percentile("l.i0", "insert", 99, run="nope")


def test_latency_over_time_plots_the_merged_percentiles_of_all_clients(tmp_path: Path) -> None:
    r = ibench.run(db="null:?latency=exp:100us", steps=["l.i0"], clients=2, out=tmp_path, progress=False, **SMALL)
    fig = ibench.plots.latency_over_time(r, "l.i0", "insert")
    iv = r.intervals
    merged = iv[(iv["step"] == "l.i0") & (iv["op"] == "insert") & iv["client"].isna()]
    p50 = fig.axes[0].lines[0]
    assert p50.get_label() == "p50"
    assert list(p50.get_ydata()) == pytest.approx(list(merged["p50_us"].astype(float) / 1000.0))


# --- compat = "iibench" ------------------------------------------------------------


def test_compat_iibench_runs_the_reference_workload_and_an_explicit_choice_overrides_it(tmp_path: Path) -> None:
    db = f"sqlite:{tmp_path / 'compat.db'}"
    r = ibench.run(
        db=db, steps=["l.i0", "l.x", "l.i1"], compat="iibench", statements="prepared",
        rows_l_i0=2000, rows_l_i1=500, out=tmp_path / "out", progress=False,
    )
    config = json.loads(r.runs["config"].iloc[0])
    assert {k: config[k] for k in ("compat", "server_keys", "statements", "data", "lx_rows", "maintenance")} == {
        "compat": "iibench", "server_keys": True, "statements": "prepared",
        "data": "iibench", "lx_rows": 100, "maintenance": "iibench",
    }
    assert step_row(r, "l.x").live_rows == 2100, "l.x inserts the reference's 100 rows first"
    assert step_row(r, "l.i1").live_rows == 2100, "l.i1's deletes keep the size"
    assert step_row(r, "l.i1").verified and r.runs["verified"].iloc[0]


def test_the_command_does_not_import_the_plotting_and_statistics_libraries() -> None:
    """`ibench` (the package's console script) starts without matplotlib and
    scipy: together over a second of CPU per process, which a benchmark run
    one step per process (as the reference's scripts do) paid per step.
    `ibench.plots` and `ibench.tables` still load on first use."""
    probe = (
        "import sys, ibench.__main__\n"
        "print(sorted(m for m in ('matplotlib', 'scipy') if m in sys.modules))\n"
        "import ibench\n"
        "from ibench import tables\n"
        "print(ibench.plots.__name__, tables.__name__, 'scipy' in sys.modules)\n"
    )
    done = subprocess.run([sys.executable, "-c", probe], capture_output=True, text=True, timeout=120)
    assert done.returncode == 0, done.stderr
    assert done.stdout.splitlines() == ["[]", "ibench.plots ibench.tables True"]


def test_an_embedded_databases_cpu_is_split_by_ibench_s_own_threads(quick: ibench.Results) -> None:
    """SQLite runs in ibench's workers: they are its foreground, and the
    client side's roles add up to ibench's measured CPU (threads.parquet)."""
    t = quick.threads
    assert set(t["side"]) == {"client"}, t
    l_i0 = t[t["step"] == "l.i0"]
    assert "ibench workers" in set(l_i0.loc[l_i0["kind"] == "foreground", "role"]), l_i0
    row = step_row(quick, "l.i0")
    assert abs(l_i0["cpu_s"].sum() - row.client_cpu_s) < 1e-6, (l_i0, row.client_cpu_s)
    fg = l_i0.loc[l_i0["kind"] == "foreground", "cpu_s"].sum()
    assert row.fg_cpu_us_per_op == pytest.approx(fg / row.cost_ops * 1e6)
    assert row.bg_cpu_us_per_op == 0
