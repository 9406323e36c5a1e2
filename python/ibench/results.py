"""Run results: the Parquet files of one run directory (or many), as pandas.

The files are the interface (docs/results.md): polars and duckdb read them too.
"""

from __future__ import annotations

import json
from pathlib import Path
from typing import Iterable, Optional, Union

import pandas as pd
import pyarrow as pa
import pyarrow.parquet as pq

from ibench import _native

TABLES = ("runs", "steps", "intervals", "histograms")
"""The tables of a run, one Parquet file each."""

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
    (one row per step), ``intervals`` (per-interval series) and
    ``histograms`` (serialized HdrHistograms); ``path`` is the run directory
    (the first one when several runs are loaded).
    """

    def __init__(self, dirs: list[Path]):
        self.paths = dirs
        self.path = dirs[0]
        self._arrow = {
            name: pa.concat_tables([pq.read_table(d / f"{name}.parquet") for d in dirs], promote_options="default")
            for name in TABLES
        }
        self.runs: pd.DataFrame = self._arrow["runs"].to_pandas()
        self.steps: pd.DataFrame = self._arrow["steps"].to_pandas()
        # Host rows and all-clients rows leave client (and host rows count)
        # null: pandas' nullable integers keep them integers.
        nullable = {pa.uint32(): pd.UInt32Dtype(), pa.uint64(): pd.UInt64Dtype()}
        self.intervals: pd.DataFrame = self._arrow["intervals"].to_pandas(types_mapper=nullable.get)
        self.histograms: pd.DataFrame = self._arrow["histograms"].to_pandas()
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
        """The four tables as pyarrow Tables."""
        return dict(self._arrow)

    @property
    def status(self) -> str:
        """The status of the (first) run: ok, error, interrupted or running."""
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


def load(path: PathLike | Iterable[PathLike]) -> Results:
    """Loads one run directory, a folder of run directories, or a list of either."""
    return Results(_run_dirs(path))
