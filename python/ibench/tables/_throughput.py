"""Absolute throughput per step (:func:`throughput`) and the per-interval
series behind each figure (:func:`throughput_series`)."""

from __future__ import annotations

import re
from pathlib import Path
from typing import Optional, Sequence, Union

import numpy as np
import numpy.typing as npt
import pandas as pd

from ibench.results import Results
from ibench.tables._common import (
    GREY,
    KV_DELETE_STEPS,
    KV_READ_STEPS,
    KV_WRITE_STEPS,
    LOAD_STEPS,
    RunsLike,
    Table,
    _fmt,
    _loaded,
    _marked,
    _steps,
    _sysbench_kind,
)
from ibench.tables._repeats import _by_group, _per_group, _repeats, _run_counts


def _throughput(steps: pd.DataFrame) -> pd.Series:
    """ips for load steps, indexed rows/s for l.x, qps for q steps; for the
    key/value steps ips, qps or dps by what they do; for sysbench steps qps
    (statements/s, BEGIN and COMMIT included, as sysbench's "queries:" line)
    for the microbenchmarks (their warm-ups too: they ran), ips for load,
    indexed rows/s for create-index; NaN otherwise (wait, postwrite)."""
    is_load = steps["step"].isin(LOAD_STEPS)
    is_query = steps["step"].str.match(r"q[rp]\d+$")
    out = pd.Series(float("nan"), index=steps.index)
    out[is_load] = steps.loc[is_load, "ips"]
    out[steps["step"] == "l.x"] = steps.loc[steps["step"] == "l.x", "indexed_rows_per_s"]
    out[is_query] = steps.loc[is_query, "qps"]
    kv_write = steps["step"].isin(KV_WRITE_STEPS)
    kv_read = steps["step"].isin(KV_READ_STEPS)
    kv_delete = steps["step"].isin(KV_DELETE_STEPS)
    out[kv_write] = steps.loc[kv_write, "ips"]
    out[kv_read] = steps.loc[kv_read, "qps"]
    out[kv_delete] = steps.loc[kv_delete, "dps"]
    sysbench = steps["step"].map(_sysbench_kind)
    for kind, column in (("microbenchmark", "qps"), ("load", "ips"), ("create-index", "indexed_rows_per_s")):
        out[sysbench == kind] = steps.loc[sysbench == kind, column]
    return out


def _repeats_said(counts: dict[str, int]) -> str:
    """What the throughput title adds when some label has several runs:
    ``; mean of the repeats: pg15 ×3, pg16 ×3`` (nothing otherwise)."""
    several = [f"{g} ×{n}" for g, n in counts.items() if n > 1]
    return f"; mean of the repeats: {', '.join(several)}" if several else ""


def throughput(runs: RunsLike) -> Table:
    """Absolute throughput per step: inserts/s (l.i0, l.i1, l.i2, the
    key/value write steps and sysbench's load), indexed rows/s (l.x,
    create-index), queries/s (q steps, the key/value read steps, sysbench's
    microbenchmarks: statements/s). Runs sharing a label are repeats: their row is the
    mean over the repeats (the title says how many; :func:`noise` their
    spread). A q step whose background insert rate missed its SLA (in any
    repeat) is greyed; a step that did not run its course (in any repeat)
    shows its status, not a number."""
    steps = _steps(runs)
    cells = _repeats(steps, _throughput(steps))
    frame, notes = _per_group(steps, cells, lambda c: c.mean)
    sla = _repeats(steps, steps["sla_ok"].map(lambda v: 1.0 if v is False else 0.0))
    missed = _by_group(steps, sla, lambda c: max(c.values) == 1.0).reindex_like(frame).fillna(False)
    styler, notes = _marked(frame, notes, _fmt)
    styler = styler.apply(lambda _: missed.map(lambda m: GREY if m else ""), axis=None)
    title = "Throughput (ips, indexed rows/s, qps)" + _repeats_said(_run_counts(steps))
    return Table(title, frame, styler, notes)


SERIES_OPS = {
    **{s: "insert" for s in LOAD_STEPS + KV_WRITE_STEPS},
    **{s: "delete" for s in KV_DELETE_STEPS},
    "l.x": "create_index",
    "load": "insert",
    "create-index": "create_index",
}
"""The operation whose per-interval rate is a step's throughput series
(:func:`throughput_series`); q steps and the key/value read steps: query;
sysbench's microbenchmarks (any range, any variant): statement."""


def _series_op(step: str) -> Optional[str]:
    """The operation counted by the step's figure in :func:`_throughput`:
    insert, create_index (l.x, create-index), query, statement (sysbench's
    microbenchmarks); None for steps without a rate."""
    if step in SERIES_OPS:
        return SERIES_OPS[step]
    if re.match(r"q[rp]\d+$", step) or step in KV_READ_STEPS:
        return "query"
    if _sysbench_kind(step) == "microbenchmark":
        return "statement"
    return None


def _all_clients(loaded: Sequence[Results]) -> pd.DataFrame:
    """The all-clients rows (client null) of every run's operations, with
    each step's rows per commit: the rows :func:`throughput_series` reads."""
    parts = []
    for r in loaded:
        iv = r.intervals
        if "length_s" not in iv.columns:
            continue  # schema 1: no all-clients rows, so no series
        rows = iv.loc[iv["client"].isna() & (iv["op"] != "host"), ["run_id", "step", "op", "t_s", "rate", "length_s"]]
        rpc = r.steps.drop_duplicates(["run_id", "step"]).set_index(["run_id", "step"])["rows_per_commit"]
        keys = pd.MultiIndex.from_arrays([rows["run_id"], rows["step"]])
        parts.append(rows.assign(rows_per_commit=rpc.reindex(keys).to_numpy(dtype=float)))
    if not parts:
        return pd.DataFrame(columns=["run_id", "step", "op", "t_s", "rate", "length_s", "rows_per_commit"])
    return pd.concat(parts, ignore_index=True)


def _series(rows: pd.DataFrame, run_id: str, step: str) -> npt.NDArray[np.float64]:
    """One run's per-interval throughput in ``step`` from :func:`_all_clients`' rows."""
    op = _series_op(step)
    part = rows[(rows["run_id"] == run_id) & (rows["step"] == step) & (rows["op"] == op)].sort_values("t_s")
    if part.empty:
        return np.empty(0)
    # The last interval ends with the step: a few ms' rate is noise, not a sample of the throughput.
    full = part[part["length_s"] >= 0.999 * part["length_s"].max()]
    rate = full["rate"].to_numpy(dtype=float)
    per_op = full["rows_per_commit"].to_numpy(dtype=float) if op == "insert" else np.ones(len(full))
    result: npt.NDArray[np.float64] = rate * np.where(np.isnan(per_op), 1.0, per_op)
    return result


def throughput_series(
    results: Union[Results, str, Path], step: str, run_id: Optional[str] = None
) -> npt.NDArray[np.float64]:
    """The per-interval throughput of ``step`` in one run (``run_id``;
    default the first loaded), the series behind the throughput table's
    figure: the all-clients rows (``client`` null) of intervals.parquet of
    the operation the figure counts (insert for load and key/value write
    steps and sysbench's load, in rows or pairs per second; query for q and
    key/value read steps; statement for sysbench's microbenchmarks;
    create_index for l.x and create-index, in indexes built per second), in
    time order. The last, partial interval is left out (its rate over the
    step's last milliseconds is noise). Empty for steps without a rate
    (wait) or without intervals."""
    loaded = _loaded(results)
    first = loaded[0]
    return _series(_all_clients([first]), run_id or str(first.runs["run_id"].iloc[0]), step)
