"""ibench export: the steps' rates and latencies in Bencher's, Otava's and
github-action-benchmark's input formats, from small fake run directories."""

from __future__ import annotations

import csv
import io
import json
import subprocess
import sys
from datetime import datetime, timezone
from pathlib import Path
from typing import Any, Optional

import pyarrow as pa
import pyarrow.parquet as pq
import pytest
from scipy import stats as scipy_stats

from ibench import export

RUN_SCHEMA = pa.schema(
    [
        ("run_id", pa.string()),
        ("started_at", pa.timestamp("us", "UTC")),
        ("dbms", pa.string()),
        ("dbms_version", pa.string()),
        ("label", pa.string()),
        ("host", pa.string()),
        ("status", pa.string()),
        ("seed", pa.uint64()),
    ]
)
STEP_SCHEMA = pa.schema(
    [
        ("run_id", pa.string()),
        ("step", pa.string()),
        ("status", pa.string()),
        ("elapsed_s", pa.float64()),
        ("ips", pa.float64()),
        ("qps", pa.float64()),
        ("indexed_rows_per_s", pa.float64()),
        ("insert_resp_p99_us", pa.float64()),
        ("query_resp_p99_us", pa.float64()),
    ]
)


def step(name: str, status: str = "ok", ips: float = 0.0, qps: float = 0.0, **more: Optional[float]) -> dict[str, Any]:
    row: dict[str, Any] = dict(step=name, status=status, elapsed_s=10.0, ips=ips, qps=qps)
    row.update(indexed_rows_per_s=None, insert_resp_p99_us=None, query_resp_p99_us=None)
    row.update(more)
    return row


STEPS = [
    step("l.i0", ips=50000.0, insert_resp_p99_us=120.5),
    step("l.x", indexed_rows_per_s=80000.0),
    step("wait"),
    step("qr100", ips=100.0, qps=2500.0, insert_resp_p99_us=900.0, query_resp_p99_us=640.25),
]


def write_run(
    root: Path,
    run_id: str,
    started: datetime,
    steps: list[dict[str, Any]],
    label: Optional[str] = None,
    dbms: str = "sqlite",
    version: str = "3.45.1",
    status: str = "ok",
) -> Path:
    d = root / run_id
    d.mkdir(parents=True)
    run = dict(run_id=run_id, started_at=started, dbms=dbms, dbms_version=version, label=label, host="box")
    run.update(status=status, seed=1)
    pq.write_table(pa.Table.from_pylist([run], RUN_SCHEMA), d / "runs.parquet")
    rows = [dict(s, run_id=run_id) for s in steps]
    pq.write_table(pa.Table.from_pylist(rows, STEP_SCHEMA), d / "steps.parquet")
    return d


def t(hour: int) -> datetime:
    return datetime(2026, 11, 29, hour, 30, 0, tzinfo=timezone.utc)


def export_text(capsys: pytest.CaptureFixture[str], *argv: str) -> str:
    assert export.main(list(argv)) == 0
    out: str = capsys.readouterr().out
    return out


# Bencher Metric Format


def test_bencher_holds_each_steps_throughput_and_p99_latency_in_nanoseconds(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    d = write_run(tmp_path, "r1", t(1), STEPS, label="fast")
    bmf = json.loads(export_text(capsys, str(d), "--format", "bencher"))
    assert bmf == {
        "fast/l.i0": {"throughput": {"value": 50000.0}, "latency": {"value": 120500.0}},
        "fast/l.x": {"throughput": {"value": 80000.0}},
        "fast/qr100": {"throughput": {"value": 2500.0}, "latency": {"value": 640250.0}},
    }


def test_bencher_names_a_run_without_a_label_by_its_dbms(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    d = write_run(tmp_path, "r1", t(1), STEPS[:1], dbms="postgres", version="17.2")
    assert list(json.loads(export_text(capsys, str(d), "--format", "bencher"))) == ["postgres/l.i0"]


def test_bencher_gives_repeats_their_mean_and_its_95_percent_interval(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    for i, rate in enumerate([1000.0, 1100.0, 1200.0]):
        write_run(tmp_path, f"r{i}", t(i), [step("l.i0", ips=rate, insert_resp_p99_us=100.0 + i)], label="x")
    metric = json.loads(export_text(capsys, str(tmp_path), "--format", "bencher"))["x/l.i0"]
    low, high = scipy_stats.t.interval(0.95, 2, loc=1100.0, scale=scipy_stats.sem([1000.0, 1100.0, 1200.0]))
    assert metric["throughput"] == pytest.approx({"value": 1100.0, "lower_value": low, "upper_value": high})
    assert metric["latency"]["value"] == pytest.approx(101000.0)
    assert metric["latency"]["lower_value"] >= 0


def test_bencher_measure_option_exports_one_measure(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    d = write_run(tmp_path, "r1", t(1), STEPS[:1], label="fast")
    bmf = json.loads(export_text(capsys, str(d), "--format", "bencher", "--measure", "latency"))
    assert bmf == {"fast/l.i0": {"latency": {"value": 120500.0}}}


def test_key_value_steps_export_write_and_read_rates(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    steps = [
        step("fillrandom", ips=300000.0, insert_resp_p99_us=20.0),
        step("readrandom", qps=150000.0, query_resp_p99_us=8.0),
        step("waitforcompaction"),
    ]
    d = write_run(tmp_path, "r1", t(1), steps, label="rocks")
    assert json.loads(export_text(capsys, str(d), "--format", "bencher")) == {
        "rocks/fillrandom": {"throughput": {"value": 300000.0}, "latency": {"value": 20000.0}},
        "rocks/readrandom": {"throughput": {"value": 150000.0}, "latency": {"value": 8000.0}},
    }


def test_steps_that_did_not_finish_ok_are_skipped_with_a_note(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    steps = [step("l.i0", ips=500.0), step("l.i1", status="timeout", ips=10.0)]
    d = write_run(tmp_path, "r1", t(1), steps, label="x")
    assert export.main([str(d), "--format", "bencher"]) == 0
    captured = capsys.readouterr()
    assert list(json.loads(captured.out)) == ["x/l.i0"]
    assert "note: r1: skipped step l.i1 (status timeout)" in captured.err


def test_a_run_that_did_not_end_ok_is_exported_with_a_note(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    d = write_run(tmp_path, "r1", t(1), STEPS[:1], label="x", status="interrupted")
    assert export.main([str(d), "--format", "bencher"]) == 0
    assert "note: r1: the run's status is interrupted" in capsys.readouterr().err


def test_a_step_run_twice_gets_a_numbered_name(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    d = write_run(tmp_path, "r1", t(1), [step("qr100", qps=1.0), step("qr100", qps=2.0)], label="x")
    bmf = json.loads(export_text(capsys, str(d), "--format", "bencher"))
    assert {k: v["throughput"]["value"] for k, v in bmf.items()} == {"x/qr100": 1.0, "x/qr100#2": 2.0}


# Otava CSV


def test_otava_writes_one_row_per_run_oldest_first_with_time_attributes_and_metrics(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    write_run(tmp_path, "r2", t(2), STEPS, label="fast", version="3.46.0")
    write_run(tmp_path, "r1", t(1), STEPS, label="fast")
    text = export_text(capsys, str(tmp_path), "--format", "otava")
    assert text == (
        "time,run_id,dbms,version,label,host,l.i0.throughput,l.i0.p99_us,l.x.throughput,qr100.throughput,qr100.p99_us\n"
        "2026-11-29 01:30:00 +0000,r1,sqlite,3.45.1,fast,box,50000.0,120.5,80000.0,2500.0,640.25\n"
        "2026-11-29 02:30:00 +0000,r2,sqlite,3.46.0,fast,box,50000.0,120.5,80000.0,2500.0,640.25\n"
    )


def test_otava_leaves_out_a_column_that_some_run_lacks_with_a_note(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    write_run(tmp_path, "r1", t(1), STEPS[:1], label="x")
    write_run(tmp_path, "r2", t(2), STEPS, label="x")
    assert export.main([str(tmp_path), "--format", "otava"]) == 0
    captured = capsys.readouterr()
    rows = list(csv.reader(io.StringIO(captured.out)))
    assert rows[0] == ["time", "run_id", "dbms", "version", "label", "host", "l.i0.throughput", "l.i0.p99_us"]
    assert len(rows) == 3
    assert "left out l.x.throughput, qr100.throughput, qr100.p99_us: not in every run" in captured.err


def test_otava_notes_that_several_configurations_make_one_series(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    write_run(tmp_path, "r1", t(1), STEPS, label="a")
    write_run(tmp_path, "r2", t(2), STEPS, label=None, dbms="postgres")
    assert export.main([str(tmp_path), "--format", "otava"]) == 0
    captured = capsys.readouterr()
    assert [row[4] for row in csv.reader(io.StringIO(captured.out))] == ["label", "a", ""]
    assert "2 configurations in one file (a, postgres)" in captured.err


# github-action-benchmark


def test_github_action_benchmark_throughput_is_a_list_for_custom_bigger_is_better(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    d = write_run(tmp_path, "r1", t(1), STEPS, label="fast")
    entries = json.loads(export_text(capsys, str(d), "--format", "github-action-benchmark", "--measure", "throughput"))
    assert entries == [
        {"name": "fast/l.i0", "unit": "rows/s", "value": 50000.0, "extra": "sqlite 3.45.1; runs: r1"},
        {"name": "fast/l.x", "unit": "rows/s", "value": 80000.0, "extra": "sqlite 3.45.1; runs: r1"},
        {"name": "fast/qr100", "unit": "queries/s", "value": 2500.0, "extra": "sqlite 3.45.1; runs: r1"},
    ]


def test_github_action_benchmark_latency_is_a_list_in_microseconds_for_custom_smaller_is_better(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    d = write_run(tmp_path, "r1", t(1), STEPS, label="fast")
    entries = json.loads(export_text(capsys, str(d), "--format", "github-action-benchmark", "--measure", "latency"))
    extra = "p99 response time; sqlite 3.45.1; runs: r1"
    assert entries == [
        {"name": "fast/l.i0", "unit": "us", "value": 120.5, "extra": extra},
        {"name": "fast/qr100", "unit": "us", "value": 640.25, "extra": extra},
    ]


def test_github_action_benchmark_gives_repeats_a_range(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    write_run(tmp_path, "r1", t(1), [step("l.i0", ips=1000.0)], label="x")
    write_run(tmp_path, "r2", t(2), [step("l.i0", ips=1200.0)], label="x")
    [entry] = json.loads(export_text(capsys, str(tmp_path), "--format", "github-action-benchmark", "--measure", "throughput"))
    half = scipy_stats.t.ppf(0.975, 1) * scipy_stats.sem([1000.0, 1200.0])
    assert entry["value"] == 1100.0
    assert entry["range"] == f"± {half:.6g}"
    assert entry["extra"] == "sqlite 3.45.1; runs: r1, r2"


def test_github_action_benchmark_needs_a_measure(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    d = write_run(tmp_path, "r1", t(1), STEPS, label="fast")
    with pytest.raises(SystemExit) as exit:
        export.main([str(d), "--format", "github-action-benchmark"])
    assert exit.value.code == 2
    assert "needs --measure throughput (tool: customBiggerIsBetter)" in capsys.readouterr().err


# Inputs, output and errors


def test_a_folder_of_run_directories_and_several_arguments_are_accepted(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    write_run(tmp_path / "many", "r1", t(1), STEPS[:1], label="a")
    write_run(tmp_path / "many", "r2", t(2), STEPS[:1], label="b")
    one = write_run(tmp_path, "r3", t(3), STEPS[:1], label="c")
    bmf = json.loads(export_text(capsys, str(tmp_path / "many"), str(one), "--format", "bencher"))
    assert list(bmf) == ["a/l.i0", "b/l.i0", "c/l.i0"]


def test_a_run_given_twice_is_exported_once(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    d = write_run(tmp_path, "r1", t(1), STEPS[:1], label="x")
    write_run(tmp_path, "r2", t(2), STEPS[:1], label="y")
    text = export_text(capsys, str(d), str(tmp_path), "--format", "otava")
    assert [row[1] for row in csv.reader(io.StringIO(text))] == ["run_id", "r1", "r2"]


def test_output_file_is_written_and_named(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    d = write_run(tmp_path, "r1", t(1), STEPS[:1], label="x")
    out = tmp_path / "bmf.json"
    assert export.main([str(d), "--format", "bencher", "-o", str(out)]) == 0
    assert capsys.readouterr().out == f"wrote {out}\n"
    assert json.loads(out.read_text()) == {"x/l.i0": {"throughput": {"value": 50000.0}, "latency": {"value": 120500.0}}}


def test_a_folder_without_runs_exits_1_with_a_one_line_message(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    (tmp_path / "empty").mkdir()
    assert export.main([str(tmp_path / "empty"), "--format", "bencher"]) == 1
    err = capsys.readouterr().err
    assert err == f"error: {tmp_path / 'empty'}: no run directory (runs.parquet) there or one level below\n"


def test_a_missing_path_exits_1_naming_it(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    assert export.main([str(tmp_path / "nope"), "--format", "otava"]) == 1
    assert capsys.readouterr().err == f"error: {tmp_path / 'nope'}: no such file or directory\n"


def test_a_steps_file_without_a_needed_column_exits_1_naming_file_and_column(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    d = write_run(tmp_path, "r1", t(1), STEPS, label="x")
    pq.write_table(pq.read_table(d / "steps.parquet").drop_columns(["qps"]), d / "steps.parquet")
    assert export.main([str(d), "--format", "bencher"]) == 1
    assert capsys.readouterr().err == f"error: {d / 'steps.parquet'}: missing column qps\n"


def test_an_unreadable_runs_file_exits_1_naming_it(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    d = write_run(tmp_path, "r1", t(1), STEPS, label="x")
    (d / "runs.parquet").write_bytes(b"not parquet")
    assert export.main([str(d), "--format", "bencher"]) == 1
    err = capsys.readouterr().err
    assert err.startswith(f"error: {d / 'runs.parquet'}: cannot read: ")
    assert err.count("\n") == 1


def test_runs_without_a_finished_step_exit_1(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    d = write_run(tmp_path, "r1", t(1), [step("l.i0", status="error"), step("wait")], label="x")
    assert export.main([str(d), "--format", "bencher"]) == 1
    assert capsys.readouterr().err.endswith("error: nothing to export: no step with a rate finished ok in 1 run(s)\n")


def test_the_export_module_runs_as_a_script(tmp_path: Path) -> None:
    """`python -m ibench.export` is the entry point `ibench export` calls (as `ibench report` calls ibench.report)."""
    help = subprocess.run([sys.executable, "-m", "ibench.export", "--help"], capture_output=True, text=True,
                          timeout=120)
    assert help.returncode == 0, help.stderr
    assert "bencher,otava,github-action-benchmark" in help.stdout and "--measure" in help.stdout
    d = write_run(tmp_path, "r1", t(1), STEPS[:1], label="x")
    done = subprocess.run([sys.executable, "-m", "ibench.export", str(d), "--format", "bencher"],
                          capture_output=True, text=True, timeout=120)
    assert done.returncode == 0, done.stderr
    assert json.loads(done.stdout) == {"x/l.i0": {"throughput": {"value": 50000.0}, "latency": {"value": 120500.0}}}
