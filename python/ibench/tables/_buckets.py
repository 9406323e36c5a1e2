"""The reference reports' response-time buckets (:func:`buckets`)."""

from __future__ import annotations

from typing import Optional

import pandas as pd

from ibench import _native
from ibench.tables._common import RunsLike, Table, _blank_rows, _loaded, _marked, _not_ok, _steps


BUCKETS: list[tuple[str, Optional[float]]] = [
    ("≤256µs", 256.0),
    ("≤1ms", 1e3),
    ("≤4ms", 4e3),
    ("≤16ms", 16e3),
    ("≤64ms", 64e3),
    ("≤256ms", 256e3),
    ("≤1s", 1e6),
    ("≤4s", 4e6),
    ("≤16s", 16e6),
    (">16s", None),
]
"""The reference Insert Benchmark reports' response-time buckets: (column,
upper bound in µs; None: unbounded)."""


def _bucket_shares(rows: pd.DataFrame) -> list[float]:
    """% of the operations in each of :data:`BUCKETS`, from the histogram
    rows of one run, step and operation (merged when several)."""
    total = int(rows["count"].sum())
    if total == 0:
        return [float("nan")] * len(BUCKETS)
    blobs = [bytes(b) for b in rows["histogram"]]
    blob = blobs[0] if len(blobs) == 1 else _native.merge_histograms(blobs)
    limits = [limit for _, limit in BUCKETS if limit is not None]
    at_most = [*_native.histogram_counts_at_most(blob, limits), total]
    return [100.0 * (n - prev) / total for prev, n in zip([0, *at_most[:-1]], at_most)]


def buckets(runs: RunsLike, step: str, op: str = "query") -> Table:
    """The reference Insert Benchmark's response-time buckets of ``op`` in
    ``step``: % of operations at or below 256 µs, 1 ms, 4 ms, 16 ms, 64 ms,
    256 ms, 1 s, 4 s, 16 s, and above 16 s, counted in each run's whole-step
    response histogram (exact up to its 3 significant digits: a value within
    0.1% of a bound may count on either side).
    Rows are the runs that ran ``op`` in ``step``; a step that did not run
    its course shows its status with its partial shares, struck through."""
    loaded = _loaded(runs)
    steps = _steps(loaded)
    hist = pd.concat([r.histograms for r in loaded], ignore_index=True)
    whole = hist["t_s"].isna() if "t_s" in hist.columns else True  # schema 1 kept whole steps only
    hist = hist[(hist["step"] == step) & (hist["op"] == op) & (hist["time"] == "response") & whole]
    if hist.empty:
        raise _native.ConfigError(f"invalid step/op: no {op} response histogram in step {step!r} of these runs")
    these = steps[steps["step"] == step].drop_duplicates("run_id")
    these = these[these["run_id"].isin(set(hist["run_id"]))]
    shares = pd.DataFrame(
        [_bucket_shares(hist[hist["run_id"] == run_id]) for run_id in these["run_id"]],
        index=pd.Index(these["label"], name="label"),
        columns=[name for name, _ in BUCKETS],
    )
    not_ok = _not_ok(these).to_numpy()
    frame = _blank_rows(shares, not_ok)

    def pct(v: object) -> str:
        return "" if not isinstance(v, float) or pd.isna(v) else f"{v:.2f}"

    notes = pd.DataFrame(
        [[f"{st}: {pct(v)}" if bad else None for v in row] for st, bad, row in zip(these["status"], not_ok, shares.to_numpy())],
        index=shares.index,
        columns=shares.columns,
        dtype=object,
    )
    styler, notes = _marked(frame, notes, pct)
    return Table(f"{step}: {op} response time, % of operations per bucket", frame, styler, notes)
