"""Run results: the Parquet files of one run directory (or many), as pandas.

The files are the interface (docs/results.md): polars and duckdb read them too.
"""

from __future__ import annotations

import fcntl
import json
import os
from pathlib import Path
from typing import Iterable, Optional, Union

import pandas as pd
import pyarrow as pa
import pyarrow.parquet as pq

from ibench import _native

TABLES = ("runs", "steps", "intervals", "histograms")
"""The tables of a run, one Parquet file each."""

LOCK = ".lock"
"""The file a live run holds locked (flock) while it runs."""

PARTIAL = ".partial"
"""The folder of a running step's results, written as it goes (a folder per step)."""


def is_live(run_dir: PathLike) -> bool:
    """True while a live process holds the run's lock: a run that says
    ``running`` and is not live was killed (SIGKILL, an OOM kill, a power loss)."""
    try:
        fd = os.open(Path(run_dir) / LOCK, os.O_RDONLY)
    except FileNotFoundError:
        return False
    try:
        fcntl.flock(fd, fcntl.LOCK_SH | fcntl.LOCK_NB)
    except BlockingIOError:
        return True
    else:
        fcntl.flock(fd, fcntl.LOCK_UN)
        return False
    finally:
        os.close(fd)


def _read_run(d: Path, name: str) -> pa.Table:
    """Table ``name`` of run directory ``d``, with what a step that did not
    end wrote while it ran (docs/results.md): its intervals and histograms so
    far, and its provisional row; a run or step that says ``running`` and
    that no live process holds says ``killed``."""
    table = pq.read_table(d / f"{name}.parquet")
    partial = d / PARTIAL
    live = is_live(d)
    if name == "runs":
        return table if live else _killed(table)
    if not partial.is_dir():
        return table
    finished = set(pq.read_table(d / "steps.parquet", columns=["step"]).column("step").to_pylist())
    parts = [table]
    for step_dir in sorted(p for p in partial.iterdir() if p.is_dir() and p.name not in finished):
        files = [step_dir / "steps.parquet"] if name == "steps" else sorted(step_dir.glob(f"{name}-*.parquet"))
        found = [pq.read_table(f) for f in files if f.is_file()]
        parts.extend(found if live or name != "steps" else [_killed(t) for t in found])
    return pa.concat_tables(parts, promote_options="default")


def _killed(table: pa.Table) -> pa.Table:
    """``table`` with each ``running`` status as ``killed``."""
    i = table.schema.get_field_index("status")
    statuses = ["killed" if s == "running" else s for s in table.column(i).to_pylist()]
    return table.set_column(i, table.schema.field(i), pa.array(statuses, pa.string()))

def _schema(keys: Iterable[tuple[str, pa.DataType]], values: Iterable[tuple[str, pa.DataType]]) -> pa.Schema:
    """Non-null ``keys`` then nullable ``values``, as the Rust side writes them."""
    return pa.schema(
        [pa.field(name, kind, nullable=False) for name, kind in keys]
        + [pa.field(name, kind, nullable=True) for name, kind in values]
    )


_TEXT, _FLOAT = pa.string(), pa.float64()
SERVER_TABLES: dict[str, pa.Schema] = {
    "counters": _schema(
        [("run_id", _TEXT), ("step", _TEXT), ("source", _TEXT), ("name", _TEXT)],
        [("start", _FLOAT), ("end", _FLOAT), ("delta", _FLOAT), ("text", _TEXT)],
    ),
    "gauges": _schema(
        [("run_id", _TEXT), ("step", _TEXT), ("t_s", _FLOAT), ("length_s", _FLOAT), ("source", _TEXT), ("name", _TEXT)],
        [("value", _FLOAT)],
    ),
    "waits": _schema(
        [("run_id", _TEXT), ("step", _TEXT), ("source", _TEXT), ("event", _TEXT)],
        [("samples", pa.uint64()), ("wait_s", _FLOAT), ("count", pa.uint64()), ("ops", pa.uint64())],
    ),
    "profiles": _schema(
        [
            ("run_id", _TEXT),
            ("step", _TEXT),
            ("role", _TEXT),
            ("stack", _TEXT),
            ("samples", pa.uint64()),
            ("frequency_hz", pa.uint32()),
        ],
        # Null in runs recorded before stacks kept their threads.
        [("ops", pa.uint64()), ("thread_kind", _TEXT), ("thread_role", _TEXT), ("cpu_s", _FLOAT)],
    ),
    "threads": _schema(
        [
            ("run_id", _TEXT),
            ("step", _TEXT),
            ("side", _TEXT),
            ("kind", _TEXT),
            ("role", _TEXT),
            ("threads", pa.uint32()),
            ("cpu_s", _FLOAT),
            ("user_s", _FLOAT),
            ("sys_s", _FLOAT),
        ],
        [("ops", pa.uint64()), ("cpu_us_per_op", _FLOAT)],
    ),
    "profiled": _schema(
        [
            ("run_id", _TEXT),
            ("step", _TEXT),
            ("role", _TEXT),
            ("pids", _TEXT),
            ("executables", _TEXT),
            ("event", _TEXT),
            ("frequency_hz", pa.uint32()),
            ("call_graph", _TEXT),
            ("samples", pa.uint64()),
            ("unresolved_frames_share", _FLOAT),
            ("duration_s", _FLOAT),
            ("perf_cpu_s", _FLOAT),
            ("perf_total_cpu_s", _FLOAT),
            ("script_cpu_s", _FLOAT),
        ],
        [("profiled_cpu_s", _FLOAT), ("perf_share", _FLOAT), ("warnings", _TEXT), ("ops", pa.uint64()),
         ("sample_coverage", _FLOAT)],
    ),
    # t_s is null on the whole step's row, so it sits among the nullable columns.
    "disks": pa.schema(
        [
            pa.field("run_id", _TEXT, nullable=False),
            pa.field("step", _TEXT, nullable=False),
            pa.field("device", _TEXT, nullable=False),
            pa.field("t_s", _FLOAT, nullable=True),
            pa.field("length_s", _FLOAT, nullable=False),
            *[
                pa.field(name, _FLOAT, nullable=True)
                for name in (
                    "reads_per_s",
                    "writes_per_s",
                    "read_kb_s",
                    "write_kb_s",
                    "r_await_ms",
                    "w_await_ms",
                    "await_ms",
                    "util_pct",
                )
            ],
        ]
    ),
}
"""The server's counters, gauges and per-device disk figures, one Parquet file
each. Runs written before ibench recorded them lack the files: they read as
empty tables with these columns, so code over them needs no special case."""

COST_COLUMNS = (
    *_native.COST_COLUMNS,
    "db_size_before_bytes",
    "db_size_bytes",
    "tables_size_bytes",
    "datadir_size_bytes",
    "server_max_rss_bytes",
)
"""Per-operation hardware costs in the steps table (docs/results.md)."""

PathLike = Union[str, Path]


def _run_dirs(path: PathLike | Iterable[PathLike]) -> list[Path]:
    if isinstance(path, (str, Path)):
        p = Path(path)
        if (p / "runs.parquet").is_file():
            return [p]
        if p.is_dir():
            found = sorted(d for d in p.iterdir() if (d / "runs.parquet").is_file())
            if found:
                return found
        raise _native.IoError(f"cannot load {p}: no run directory (runs.parquet) there or below")
    dirs: list[Path] = []
    for item in path:
        dirs.extend(_run_dirs(item))
    return dirs


class Results:
    """The results of one or more runs.

    Attributes are pandas DataFrames: ``runs`` (one row per run), ``steps``
    (one row per step), ``intervals`` (per-interval series),
    ``histograms`` (serialized HdrHistograms) and ``config`` (host facts and
    settings); the properties ``counters``, ``gauges`` and ``disks`` hold the
    server's own figures. ``path`` is the run directory (the first one when
    several runs are loaded).
    """

    def __init__(self, dirs: list[Path]):
        self.paths = dirs
        self.path = dirs[0]
        self._frames: dict[str, pd.DataFrame] = {}
        self._arrow = {
            name: pa.concat_tables([_read_run(d, name) for d in dirs], promote_options="default") for name in TABLES
        }
        self.runs: pd.DataFrame = self._arrow["runs"].to_pandas()
        self.steps: pd.DataFrame = self._arrow["steps"].to_pandas()
        # Host rows and all-clients rows leave client (and host rows count)
        # null: pandas' nullable integers keep them integers.
        nullable = {pa.uint32(): pd.UInt32Dtype(), pa.uint64(): pd.UInt64Dtype()}
        self.intervals: pd.DataFrame = self._arrow["intervals"].to_pandas(types_mapper=nullable.get)
        self.histograms: pd.DataFrame = self._arrow["histograms"].to_pandas()
        for name, schema in SERVER_TABLES.items():
            self._arrow[name] = _optional_table(dirs, name, schema)
        configs = [pq.read_table(d / "config.parquet") for d in dirs if (d / "config.parquet").is_file()]
        self.config: pd.DataFrame = (
            pa.concat_tables(configs).to_pandas()
            if configs
            else pd.DataFrame(columns=["run_id", "scope", "name", "value", "source"])
        )
        """Host facts and the server's settings of every run: run_id, scope, name, value, source."""

    @property
    def costs(self) -> pd.DataFrame:
        """Hardware cost per operation of every step: host, client and server
        CPU µs, context switches, disk KB and operations per insert or query,
        disk MB/s, database size before and after, server memory."""
        cols = ["run_id", "step", *COST_COLUMNS]
        return self.steps[cols]

    @property
    def shards(self) -> pd.DataFrame:
        """Runs merged from shards (docs/distributed.md): which shard ran
        where (``shards.parquet``: shard, worker, host, clients, clock
        offset, status); empty for runs of one process."""
        from ibench.merge import SHARDS_SCHEMA

        return _optional_table(self.paths, "shards", SHARDS_SCHEMA).to_pandas()

    @property
    def counters(self) -> pd.DataFrame:
        """The server's own counters, read at each step's start and end
        (``counters.parquet``): run_id, step, source (``global_status``,
        ``innodb_metrics``, ``pg_stat_database``, ``rocksdb``, ``sqlite``, ...),
        name, start, end, delta (end − start), and text for the status dumps
        (``SHOW ENGINE ... STATUS``, ``rocksdb.stats``; their numbers are
        null). Empty, with these columns, for runs recorded without it."""
        return self._frame("counters")

    @property
    def gauges(self) -> pd.DataFrame:
        """Server gauges on the steps' interval grid (``gauges.parquet``):
        run_id, step, t_s (the interval's start, as in ``intervals``),
        length_s, source, name (``history_list_length``, ``dead_tuples``,
        ``l0_files``, ...; names ending in ``_per_s`` are rates over the
        interval) and value, read at the interval's end. Empty, with these
        columns, for runs recorded without it."""
        return self._frame("gauges")

    @property
    def waits(self) -> pd.DataFrame:
        """What the server's sessions waited on in each step (``waits.parquet``,
        runs with ``profile``): run_id, step, source, event, samples (sampled
        sources), wait_s, count (cumulative sources) and ops, the step's
        operations. Empty, with these columns, for runs recorded without it."""
        return self._frame("waits")

    @property
    def profiles(self) -> pd.DataFrame:
        """Each step's CPU profiles (``profiles.parquet``, runs with
        ``profile = "perf"``): run_id, step, role (``server``, or ``client``
        for ibench's own process), stack (folded: the thread's name, then the
        frames outermost first, ``;``-separated), samples, frequency_hz and
        ops, the step's operations: ``cpu_s / ops * 1e6`` is a stack's CPU
        µs per operation (``samples / frequency_hz`` its nominal seconds); thread_kind and thread_role, the
        threads the stack's samples came from (as in :attr:`threads`), and
        cpu_s, the CPU seconds they stand for (each thread's measured CPU
        shared out over its samples: perf's timer misses a few percent of a
        thread that syncs to disk, docs/profiling.md); all three null in runs
        recorded before stacks kept their threads. Empty, with these
        columns, for runs recorded without it."""
        return self._frame("profiles")

    @property
    def threads(self) -> pd.DataFrame:
        """Each step's CPU by thread role (``threads.parquet``): run_id,
        step, side (``server``, or ``client`` for ibench's own process),
        kind (``foreground``: serving the benchmark's connections or, in
        ibench's process, running them; ``background``: working behind
        them; ``monitor``: ibench's own reading and sampling; ``ended``: what
        threads that ended between looks ran, so each side adds up to its
        measured CPU), role (``client backend``, ``checkpointer``,
        ``innodb/page_flush_coordinator_thread``, ``rocksdb:low``, ...),
        threads, cpu_s, user_s, sys_s, ops (the step's operations) and
        cpu_us_per_op. Empty, with these columns, for runs recorded without it."""
        return self._frame("threads")

    @property
    def profiled(self) -> pd.DataFrame:
        """What each profile sampled and what it cost (``profiled.parquet``):
        run_id, step, role, pids, executables, event, frequency_hz,
        call_graph, samples, unresolved_frames_share, duration_s, perf_cpu_s,
        perf_total_cpu_s, script_cpu_s, profiled_cpu_s, perf_share, warnings,
        ops and sample_coverage (the samples' nominal seconds ÷ their threads'
        measured CPU: under 1 where perf's timer missed some). Empty, with these columns, for runs recorded without it."""
        return self._frame("profiled")

    @property
    def disks(self) -> pd.DataFrame:
        """iostat's figures per device (``disks.parquet``): run_id, step,
        device, t_s (null for the whole step's row), length_s, reads_per_s,
        writes_per_s, read_kb_s, write_kb_s, r_await_ms, w_await_ms,
        await_ms, util_pct. Empty, with these columns, for runs recorded
        without it."""
        return self._frame("disks")

    def _frame(self, name: str) -> pd.DataFrame:
        """One of the server tables as pandas, converted once: the report
        reads them per step."""
        if name not in self._frames:
            self._frames[name] = self._arrow[name].to_pandas()
        return self._frames[name]

    @property
    def host(self) -> pd.DataFrame:
        """The per-interval host and process counters (the ``host`` rows of ``intervals``)."""
        host = self.intervals[self.intervals["op"] == "host"]
        keep = [c for c in host.columns if c not in ("client", "count", "rate", "p50_us", "p99_us", "max_us")]
        return host[keep].reset_index(drop=True)

    @property
    def warnings(self) -> list[str]:
        """Warnings recorded at the start of the (first) run: settings known to add noise."""
        return list(json.loads(str(self.runs["warnings"].iloc[0])))

    def to_arrow(self) -> dict[str, pa.Table]:
        """The four tables and the server tables (``counters``, ``gauges``,
        ``disks``; empty for runs without them) as pyarrow Tables."""
        return dict(self._arrow)

    @property
    def status(self) -> str:
        """The status of the (first) run: ok, error, interrupted, running, or
        killed (it says running, but no live process holds it)."""
        return str(self.runs["status"].iloc[0])

    def run_ids(self, run: Optional[str] = None) -> list[str]:
        """The run ids loaded; with ``run`` (a run id or a label), the one it names."""
        if run is None:
            return list(self.runs["run_id"])
        by_label = self.runs[self.runs["label"] == run]["run_id"]
        found = [run] if run in set(self.runs["run_id"]) else list(by_label)
        if not found:
            raise _native.ConfigError(
                f"invalid run: {run!r} is neither a run id nor a label of the loaded runs "
                f"({', '.join(map(str, self.runs['run_id']))})"
            )
        return found

    def percentile(
        self, step: str, op: str, q: float, time: str = "response", run: Optional[str] = None
    ) -> float:
        """Percentile ``q`` (0..100) in µs of ``op`` in ``step`` of one run,
        recomputed from its histogram. With several runs loaded, ``run`` (a
        run id or a label) says which: percentiles of different runs are
        never blended."""
        ids = self.run_ids(run)
        if len(ids) > 1:
            raise _native.ConfigError(
                f"invalid run: {len(ids)} runs are loaded ({', '.join(ids)}); "
                "say which with run=RUN_ID or run=LABEL"
            )
        h = self.histograms
        whole = h["t_s"].isna() if "t_s" in h.columns else True
        rows = h[(h["run_id"] == ids[0]) & (h["step"] == step) & (h["op"] == op) & (h["time"] == time) & whole]
        if rows.empty:
            raise _native.ConfigError(f"invalid step: no {time} histogram for {op} in step {step!r}")
        blob = _native.merge_histograms([bytes(b) for b in rows["histogram"]])
        value: float = _native.histogram_percentiles(blob, [q])[0]
        return value

    def __repr__(self) -> str:
        runs = ", ".join(f"{r.run_id} ({r.dbms}, {r.status})" for r in self.runs.itertuples())
        return f"<ibench.Results {runs}: {len(self.steps)} steps>"

    def _repr_html_(self) -> str:
        cols = ["run_id", "step", "status", "elapsed_s", "ips", "dps", "qps", "sla_ok", "verified"]
        table: str = self.steps[cols].to_html(index=False)
        return f"<p>{self!r}</p>" + table


def _optional_table(dirs: list[Path], name: str, schema: pa.Schema) -> pa.Table:
    """``name``.parquet of every run directory that has one, concatenated,
    with ``schema``'s columns they lack as nulls; an empty table of
    ``schema`` when none has."""
    found = [pq.read_table(d / f"{name}.parquet") for d in dirs if (d / f"{name}.parquet").is_file()]
    if not found:
        return schema.empty_table()
    table = pa.concat_tables(found, promote_options="default")
    # Columns a newer ibench added: null in folders recorded before them.
    for field in schema:
        if field.name not in table.column_names:
            table = table.append_column(field, pa.nulls(len(table), field.type))
    return table


def load(path: PathLike | Iterable[PathLike]) -> Results:
    """Loads one run directory, a folder of run directories, or a list of either."""
    return Results(_run_dirs(path))
