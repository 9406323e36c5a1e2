"""Export the steps' rates and latencies for tools that track benchmarks over time.

    python -m ibench.export RUN_DIR... --format bencher|otava|github-action-benchmark
        [--measure throughput|latency] [-o FILE]

(`ibench export` runs this.) A RUN_DIR is a run directory (a folder holding
``runs.parquet``) or a folder of run directories. The output goes to FILE, or
to standard output.

What is exported, per step that finished with status ``ok`` (other steps are
skipped, with a note on standard error; ``wait``, ``flush`` and
``waitforcompaction`` have no rate and are left out):

* **throughput**: ``ips`` for l.i0, l.i1, l.i2, the key/value write steps
  and sysbench's load (rows or pairs written per second),
  ``indexed_rows_per_s`` for l.x and sysbench's create-index, ``qps`` for
  qrN/qpN, the key/value read steps (queries or reads per second) and the
  sysbench microbenchmarks (statements per second, BEGIN and COMMIT
  included, as sysbench counts its QPS); the postwrite pauses have none.
* **latency**: the p99 response time of the operation the throughput counts
  (``insert_resp_p99_us`` for write steps, ``query_resp_p99_us`` for query
  steps, ``statement_resp_p99_us`` for sysbench's microbenchmarks; l.x has
  none). Other percentiles and the background writes of q steps are in
  ``steps.parquet``.

A benchmark's name is ``<label or dbms>/<step>`` (the run's ``--label``, else
its DBMS). Runs are taken in start order.

Formats:

``bencher``
    Bencher Metric Format (BMF) JSON, for ``bencher run --adapter json
    --file FILE``: ``{name: {"throughput": {"value": ...}, "latency":
    {"value": ...}}}``, using Bencher's built-in measures, whose units are
    operations/s and nanoseconds (latencies are converted from µs to ns).
    Several runs with one name are repeats: the value is their mean, and
    ``lower_value``/``upper_value`` the 95% Student t interval of that mean.

``otava``
    CSV for Apache Otava (formerly Hunter), one row per run, oldest first:
    a ``time`` column (the run's start, ``YYYY-MM-DD HH:MM:SS +0000``), the
    attribute columns ``run_id, dbms, version, label, host``, then per step
    ``<step>.throughput`` and ``<step>.p99_us``. Otava reads every metric
    value as a number, so a column missing from some run is left out (with a
    note). Otava analyses all rows of a file as one series: export each
    configuration (label) to its own file. A matching Otava test::

        tests:
          ibench.sqlite:
            type: csv
            file: ibench.csv
            time_column: time
            attributes: [run_id, dbms, version, label, host]
            metrics:
              l.i0.throughput: {direction: 1}
              l.i0.p99_us: {direction: -1}

``github-action-benchmark``
    The JSON list ``[{name, unit, value, range?, extra}]`` of
    github-action-benchmark's custom tools. The action tells bigger-is-better
    from smaller-is-better per file (``tool: customBiggerIsBetter`` or
    ``customSmallerIsBetter``), so this format needs ``--measure``: export
    ``--measure throughput`` for customBiggerIsBetter and ``--measure latency``
    (unit ``us``) for customSmallerIsBetter, to two files. Several runs with one
    name are averaged; ``range`` is then ``± <half-width of the 95% interval>``.
"""

from __future__ import annotations

import argparse
import csv
import io
import json
import math
import sys
from dataclasses import dataclass, field
from datetime import datetime, timezone
from pathlib import Path
from typing import Any, Callable, Optional, Sequence, Union

import pyarrow.parquet as pq

from ibench import _native, stats
from ibench._cli import exit_code

FORMATS = ("bencher", "otava", "github-action-benchmark")
MEASURES = ("throughput", "latency")

LOAD_STEPS = ("l.i0", "l.i1", "l.i2")

RUN_COLUMNS = ("run_id", "started_at", "dbms", "dbms_version", "label", "host", "status")
STEP_COLUMNS = ("step", "status", "ips", "qps", "indexed_rows_per_s", "insert_resp_p99_us", "query_resp_p99_us")
OPTIONAL_STEP_COLUMNS = ("dps", "statement_resp_p99_us")
"""Columns read when a run's files have them (runs of older ibench lack them,
and with them the steps that need them)."""

Warn = Callable[[str], None]
PathLike = Union[str, Path]


class ExportError(Exception):
    """Bad input: a path without runs, an unreadable file, nothing to export. The message is one line."""


@dataclass(frozen=True)
class Figures:
    """One step of one run: its throughput (and unit) and its p99 latency in µs (None when it has none)."""

    step: str
    throughput: Optional[float]
    unit: str
    latency_us: Optional[float]


@dataclass
class Run:
    """One run: its attributes (from runs.parquet) and the figures of its ok steps."""

    run_id: str
    started_at: datetime
    dbms: str
    version: str
    label: Optional[str]
    host: str
    steps: list[Figures] = field(default_factory=list)

    @property
    def name(self) -> str:
        """The run's name in benchmark names: its label, else its DBMS."""
        return self.label if self.label else self.dbms


def _stderr(message: str) -> None:
    print(message, file=sys.stderr)


def run_dirs(paths: Sequence[PathLike]) -> list[Path]:
    """The run directories at ``paths`` (each a run directory or a folder of them), each once."""
    found: list[Path] = []
    for item in paths:
        p = Path(item)
        if not p.exists():
            raise ExportError(f"{p}: no such file or directory")
        if (p / "runs.parquet").is_file():
            found.append(p)
            continue
        children = sorted(d for d in p.iterdir() if (d / "runs.parquet").is_file()) if p.is_dir() else []
        if not children:
            raise ExportError(f"{p}: no run directory (runs.parquet) there or one level below")
        found.extend(children)
    unique: dict[Path, Path] = {}
    for d in found:
        unique.setdefault(d.resolve(), d)
    return list(unique.values())


def _read(path: Path, columns: Sequence[str], optional: Sequence[str] = ()) -> list[dict[str, Any]]:
    """The rows of a Parquet file as dicts of the given columns (and of the
    ``optional`` ones it has, None where it has not); ExportError naming the file otherwise."""
    if not path.is_file():
        raise ExportError(f"{path}: no such file")
    try:
        names = pq.read_schema(path).names
        missing = [c for c in columns if c not in names]
        if missing:
            raise ExportError(f"{path}: missing column{'s' if len(missing) > 1 else ''} {', '.join(missing)}")
        present = [c for c in optional if c in names]
        rows: list[dict[str, Any]] = pq.read_table(path, columns=[*columns, *present]).to_pylist()
        for row in rows:
            for c in optional:
                row.setdefault(c, None)
    except ExportError:
        raise
    except Exception as e:  # noqa: BLE001 - pyarrow raises several kinds; one line naming the file
        raise ExportError(f"{path}: cannot read: {str(e).splitlines()[0] if str(e) else type(e).__name__}")
    return rows


def _kind(step: str) -> Optional[tuple[str, str, Optional[str]]]:
    """(throughput column, unit, operation of the latency) of a step; None for steps without a rate."""
    if step in LOAD_STEPS:
        return "ips", "rows/s", "insert"
    if step == "l.x":
        return "indexed_rows_per_s", "rows/s", None
    if step[:2] in ("qr", "qp") and step[2:].isdigit():
        return "qps", "queries/s", "query"
    if step in _native.KV_WRITE_STEPS:
        return "ips", "pairs/s", "insert"
    if step in _native.KV_READ_STEPS:
        return "qps", "reads/s", "query"
    if step in _native.KV_DELETE_STEPS:
        return "dps", "deletes/s", "delete"
    return _sysbench_kind(step)


def _sysbench_kind(step: str) -> Optional[tuple[str, str, Optional[str]]]:
    """A sysbench step's: its microbenchmarks' QPS (statements, BEGIN and
    COMMIT included) and the statements' p99, the load's rows/s, the
    index's rows/s; None for the pauses and other families' steps."""
    facts = _native.sysbench_step(step)
    if facts is None:
        return None
    kind = facts["kind"]
    if kind == "microbenchmark":
        return "qps", "statements/s", "statement"
    if kind == "load":
        return "ips", "rows/s", "insert"
    if kind == "create-index":
        return "indexed_rows_per_s", "rows/s", None
    return None


def throughput_of(step: str, row: dict[str, Any]) -> Optional[tuple[float, str]]:
    """The step's throughput and its unit, or None for steps without a rate (wait, flush, ...)."""
    kind = _kind(step)
    value = _number(row[kind[0]]) if kind else None
    return (value, kind[1]) if kind and value is not None else None


def latency_of(step: str, row: dict[str, Any]) -> Optional[float]:
    """The p99 response time in µs of the operation the step's throughput counts (None for l.x)."""
    kind = _kind(step)
    if kind is None or kind[2] is None:
        return None
    return _number(row[f"{kind[2]}_resp_p99_us"])


def _number(value: Any) -> Optional[float]:
    """``value`` as a float; None for null, NaN and infinities (no tool reads them)."""
    if value is None:
        return None
    x = float(value)
    return x if math.isfinite(x) else None


def _figures(run_id: str, rows: list[dict[str, Any]], warn: Warn) -> list[Figures]:
    """The figures of a run's ok steps; a step run twice gets ``#2`` appended to its name."""
    out: list[Figures] = []
    seen: dict[str, int] = {}
    for row in rows:
        step = str(row["step"])
        seen[step] = seen.get(step, 0) + 1
        if row["status"] != "ok":
            warn(f"note: {run_id}: skipped step {step} (status {row['status']})")
            continue
        found = throughput_of(step, row)
        if found is None:
            continue
        name = step if seen[step] == 1 else f"{step}#{seen[step]}"
        out.append(Figures(name, found[0], found[1], latency_of(step, row)))
    return out


def load_runs(paths: Sequence[PathLike], warn: Warn = _stderr) -> list[Run]:
    """The runs at ``paths`` (run directories or folders of them), oldest first."""
    runs: list[Run] = []
    for d in run_dirs(paths):
        infos = _read(d / "runs.parquet", RUN_COLUMNS)
        if not infos:
            raise ExportError(f"{d / 'runs.parquet'}: holds no run")
        steps = _read(d / "steps.parquet", ("run_id", *STEP_COLUMNS), OPTIONAL_STEP_COLUMNS)
        for info in infos:
            run_id = str(info["run_id"])
            if info["status"] != "ok":
                warn(f"note: {run_id}: the run's status is {info['status']}; exporting its finished steps")
            started = info["started_at"]
            if started.tzinfo is None:
                started = started.replace(tzinfo=timezone.utc)
            mine = [s for s in steps if s["run_id"] == run_id]
            runs.append(
                Run(
                    run_id=run_id,
                    started_at=started,
                    dbms=str(info["dbms"]),
                    version=str(info["dbms_version"]),
                    label=str(info["label"]) if info["label"] else None,
                    host=str(info["host"]),
                    steps=_figures(run_id, mine, warn),
                )
            )
    runs.sort(key=lambda r: (r.started_at, r.run_id))
    if not any(r.steps for r in runs):
        raise ExportError(f"nothing to export: no step with a rate finished ok in {len(runs)} run(s)")
    return runs


@dataclass
class _Series:
    """One benchmark (name, step, measure) across the runs that have it."""

    values: list[float] = field(default_factory=list)
    runs: list[Run] = field(default_factory=list)
    unit: str = ""


def _value(f: Figures, measure: str) -> Optional[float]:
    return f.throughput if measure == "throughput" else f.latency_us


def _grouped(runs: Sequence[Run], measures: Sequence[str]) -> dict[tuple[str, str], dict[str, _Series]]:
    """``{(name, step): {measure: series}}`` in the order the benchmarks first appear."""
    groups: dict[tuple[str, str], dict[str, _Series]] = {}
    for run in runs:
        for f in run.steps:
            for measure in measures:
                value = _value(f, measure)
                if value is None:
                    continue
                series = groups.setdefault((run.name, f.step), {}).setdefault(measure, _Series())
                series.values.append(value)
                series.runs.append(run)
                series.unit = f.unit if measure == "throughput" else "us"
    return groups


def _summary(values: Sequence[float]) -> tuple[float, Optional[float], Optional[float]]:
    """Mean, and the 95% t interval of the mean when there are 2 or more values."""
    if len(values) < 2:
        return values[0], None, None
    return stats.mean_interval(values, 0.95)


def to_bencher(runs: Sequence[Run], measures: Sequence[str] = MEASURES) -> dict[str, dict[str, dict[str, float]]]:
    """Bencher Metric Format: ``{"<name>/<step>": {"throughput"|"latency": {"value", "lower_value"?, "upper_value"?}}}``.

    Throughput in operations/s, latency in ns (Bencher's built-in measures).
    Repeats (runs with one name) give their mean and its 95% interval; a
    lower bound is at least 0 (neither a rate nor a time is negative: with 2
    repeats the t interval's half-width is 12.7 standard errors).
    """
    out: dict[str, dict[str, dict[str, float]]] = {}
    for (name, step), by_measure in _grouped(runs, measures).items():
        bench = out.setdefault(f"{name}/{step}", {})
        for measure, series in by_measure.items():
            scale = 1000.0 if measure == "latency" else 1.0  # µs -> ns
            mean, low, high = _summary(series.values)
            metric = {"value": mean * scale}
            if low is not None and high is not None:
                metric["lower_value"] = max(0.0, low * scale)
                metric["upper_value"] = high * scale
            bench[measure] = metric
    return out


def _otava_time(t: datetime) -> str:
    return t.astimezone(timezone.utc).strftime("%Y-%m-%d %H:%M:%S +0000")


def to_otava(runs: Sequence[Run], measures: Sequence[str] = MEASURES, warn: Warn = _stderr) -> str:
    """Otava's CSV: ``time``, the attributes ``run_id, dbms, version, label, host``, then
    ``<step>.throughput`` and ``<step>.p99_us`` per step; one row per run, oldest first.

    Columns that some run lacks are left out (Otava cannot read empty values).
    """
    suffix = {"throughput": "throughput", "latency": "p99_us"}
    rows: list[dict[str, float]] = []
    columns: list[str] = []
    for run in runs:
        row: dict[str, float] = {}
        for f in run.steps:
            for measure in measures:
                value = _value(f, measure)
                if value is not None:
                    row[f"{f.step}.{suffix[measure]}"] = value
        columns.extend(c for c in row if c not in columns)
        rows.append(row)
    partial = [c for c in columns if any(c not in row for row in rows)]
    if partial:
        warn(f"note: otava: left out {', '.join(partial)}: not in every run (Otava cannot read empty values)")
    names = list(dict.fromkeys(r.name for r in runs))
    if len(names) > 1:
        warn(
            f"note: otava: {len(names)} configurations in one file ({', '.join(names)}); Otava analyses all rows "
            "as one series: export each configuration separately"
        )
    metrics = [c for c in columns if c not in partial]
    buf = io.StringIO()
    writer = csv.writer(buf, lineterminator="\n")
    writer.writerow(["time", "run_id", "dbms", "version", "label", "host", *metrics])
    for run, row in zip(runs, rows):
        attributes = [_otava_time(run.started_at), run.run_id, run.dbms, run.version, run.label or "", run.host]
        writer.writerow([*attributes, *(repr(row[c]) for c in metrics)])
    return buf.getvalue()


def to_github_action_benchmark(runs: Sequence[Run], measure: str) -> list[dict[str, Union[str, float]]]:
    """github-action-benchmark's custom format: ``[{name, unit, value, range?, extra}]`` for one measure.

    ``throughput`` is for ``tool: customBiggerIsBetter``, ``latency`` (µs, p99
    response time) for ``customSmallerIsBetter``. Repeats (runs with one name)
    give their mean, and ``range`` the half-width of its 95% interval.
    """
    if measure not in MEASURES:
        raise ExportError(f"unknown measure {measure!r}: choose throughput or latency")
    out: list[dict[str, Union[str, float]]] = []
    for (name, step), by_measure in _grouped(runs, [measure]).items():
        series = by_measure[measure]
        mean, low, high = _summary(series.values)
        versions = ", ".join(dict.fromkeys(f"{r.dbms} {r.version}" for r in series.runs))
        what = "p99 response time; " if measure == "latency" else ""
        entry: dict[str, Union[str, float]] = {"name": f"{name}/{step}", "unit": series.unit, "value": mean}
        if low is not None and high is not None:
            entry["range"] = f"± {(high - low) / 2:.6g}"
        entry["extra"] = f"{what}{versions}; runs: {', '.join(r.run_id for r in series.runs)}"
        out.append(entry)
    return out


def render(runs: Sequence[Run], fmt: str, measure: Optional[str] = None, warn: Warn = _stderr) -> str:
    """The export of ``runs`` in format ``fmt`` (one of FORMATS) as text."""
    measures = [measure] if measure else list(MEASURES)
    if fmt == "bencher":
        return json.dumps(to_bencher(runs, measures), indent=2, allow_nan=False) + "\n"
    if fmt == "otava":
        return to_otava(runs, measures, warn)
    if fmt == "github-action-benchmark":
        if measure is None:
            raise ExportError("--format github-action-benchmark needs --measure throughput or --measure latency")
        return json.dumps(to_github_action_benchmark(runs, measure), indent=2, allow_nan=False) + "\n"
    raise ExportError(f"unknown format {fmt!r}: choose one of {', '.join(FORMATS)}")


def main(argv: Optional[Sequence[str]] = None) -> int:
    """The ``ibench export`` command line; returns the exit code (1 for bad input, with one line on stderr)."""
    parser = argparse.ArgumentParser(prog="ibench export", description=(__doc__ or "").splitlines()[0])
    parser.add_argument("runs", nargs="+", help="run directories or folders of runs")
    parser.add_argument("--format", required=True, choices=FORMATS, help="the tool to write for")
    parser.add_argument(
        "--measure",
        choices=MEASURES,
        help="export only this measure (default: both; github-action-benchmark needs one: "
        "throughput for customBiggerIsBetter, latency for customSmallerIsBetter)",
    )
    parser.add_argument("-o", "--output", help="the file to write (default: standard output)")
    args = parser.parse_args(argv)
    if args.format == "github-action-benchmark" and args.measure is None:
        parser.error(
            "--format github-action-benchmark needs --measure throughput (tool: customBiggerIsBetter) "
            "or --measure latency (tool: customSmallerIsBetter)"
        )

    def export() -> Optional[str]:
        text = render(load_runs(args.runs), args.format, args.measure)
        if args.output is None:
            sys.stdout.write(text)
            return None
        try:
            Path(args.output).write_text(text)
        except OSError as e:
            raise ExportError(f"{args.output}: cannot write: {e.strerror or e}")
        return f"wrote {args.output}"

    return exit_code(export, ExportError)


if __name__ == "__main__":
    sys.exit(main())
