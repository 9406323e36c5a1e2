"""Hardware efficiency per step, each figure with its ratio to a base run
(:func:`efficiency`)."""

from __future__ import annotations

from typing import Callable, Optional

import pandas as pd
from pandas.io.formats.style import Styler

from ibench import _native
from ibench.results import Results
from ibench.tables._common import (
    GREEN,
    GREY,
    NOT_OK,
    RED,
    RunsLike,
    Table,
    _blank_rows,
    _drop_empty,
    _fmt,
    _loaded,
    _not_ok,
    _partial_notes,
    _run_order,
    _steps,
)


EFFICIENCY_COLUMNS = {
    "cpupq": ("cpupq", 1.0),
    "client_us": ("client_cpu_us_per_op", 1.0),
    "server_us": ("server_cpu_us_per_op", 1.0),
    "cspq": ("cspq", 1.0),
    "rpq": ("rpq", 1.0),
    "rkbpq": ("rkbpq", 1.0),
    "wpi": ("wpi", 1.0),
    "wkbpi": ("wkbpi", 1.0),
    "tables_GB": ("tables_size_bytes", 1e-9),
    "datadir_GB": ("datadir_size_bytes", 1e-9),
    "db_GB": ("db_size_bytes", 1e-9),
    "rss_GB": ("server_max_rss_bytes", 1e-9),
    "insert_max_ms": ("insert_resp_max_us", 1e-3),
    "query_max_ms": ("query_resp_max_us", 1e-3),
    "event_max_ms": ("event_resp_max_us", 1e-3),
}
"""The efficiency table's columns: (steps column, scale). Costs are per
operation of the step (docs/results.md: per statement in sysbench's
microbenchmarks, per row in its load), sizes in GB (10^9 bytes), the largest
response time in ms (event: a sysbench event, as sysbench's own maximum)."""


def _fmt_small(v: object) -> str:
    """Three significant digits below 100 (0.0042 rkbpq stays readable)."""
    if isinstance(v, float) and not pd.isna(v) and v != 0 and abs(v) < 100:
        return f"{v:.3g}"
    return _fmt(v)


def _busiest_disk(loaded: list[Results]) -> pd.Series:
    """Per (run_id, step): the highest utilisation % of any device over the
    whole step (disks.parquet's rows with t_s null); empty without disks."""
    disks = pd.concat([r.disks for r in loaded], ignore_index=True)
    whole = disks[disks["t_s"].isna()]
    return whole.groupby(["run_id", "step"])["util_pct"].max()


def _efficiency_values(loaded: list[Results], steps: pd.DataFrame) -> pd.DataFrame:
    """The efficiency figures of every step (one row per row of ``steps``)."""
    # A column the runs' files lack (written before it existed) is no column.
    values = pd.DataFrame(
        {
            name: steps[column].astype(float) * scale
            for name, (column, scale) in EFFICIENCY_COLUMNS.items()
            if column in steps.columns
        },
        index=steps.index,
    )
    util = _busiest_disk(loaded)
    if not util.empty:
        keys = pd.MultiIndex.from_arrays([steps["run_id"], steps["step"]])
        values["util_pct"] = util.reindex(keys).to_numpy(dtype=float)
    return values


def efficiency(runs: RunsLike, base: Optional[str] = None) -> Table:
    """Hardware efficiency per step, as in the published reports: host CPU
    µs per operation (cpupq), the client's and the server's CPU µs per
    operation, context switches (cspq), disk reads and KB read per operation
    (rpq, rkbpq), disk writes and KB written per operation (wpi, wkbpi), the
    tables', data directory's and database's size in GB, the server's largest
    RSS in GB, the largest insert and query response time in ms, and, when
    the runs recorded iostat (disks.parquet), the busiest disk's
    utilisation %; for sysbench's steps the costs are per statement (per row
    in its load) and the largest response time is an event's. Rows are
    (step, run), columns the figures; columns no run has are left out.

    ``ratios`` holds each value divided by the ``base`` run's (a label;
    default the first) in the same step. These are costs, so lower is
    better: a ratio at or above 1.05 is red, at or below 0.95 green. A step
    that did not run its course shows its status with its partial figure,
    struck through, and has no ratio (nor do the other runs where the base's
    step did not run its course)."""
    loaded = _loaded(runs)
    steps = _steps(loaded)
    names = list(dict.fromkeys(steps["label"]))
    base = base if base is not None else names[0]
    if base not in names:
        raise _native.ConfigError(f"invalid base: no run labelled {base!r}; labels are {names}")
    raw = _efficiency_values(loaded, steps)
    order = {step: i for i, step in enumerate(_run_order(steps))}
    runs_order = {label: i for i, label in enumerate(names)}
    rows = sorted(steps.index, key=lambda i: (order[steps.at[i, "step"]], runs_order[steps.at[i, "label"]]))
    steps, raw = steps.loc[rows], raw.loc[rows]
    index = pd.MultiIndex.from_arrays([steps["step"], steps["label"]], names=["step", "label"])
    raw = raw.set_axis(index)
    frame = _blank_rows(raw, _not_ok(steps).to_numpy())
    notes = _partial_notes(steps, raw, _fmt_small)
    frame, notes = _drop_empty(frame, notes)
    # A step without a single figure (wait: no costs, and no sizes on SQLite) is no row.
    has_any = (frame.notna().any(axis=1) | notes.notna().any(axis=1)).to_numpy()
    frame, notes = frame[has_any], notes[has_any]
    base_rows = frame[frame.index.get_level_values("label") == base].droplevel("label")
    base_rows = base_rows[~base_rows.index.duplicated()].reindex(frame.index.get_level_values("step"))
    ratios = frame / base_rows.replace(0.0, float("nan")).to_numpy()
    styler = _ratio_styler(frame, ratios, notes, _fmt_small)
    title = f"Hardware efficiency per step, each value with its ratio to {base} (costs: red ≥ 1.05, green ≤ 0.95)"
    return Table(title, frame, styler, notes, ratios)


def _ratio_styler(
    frame: pd.DataFrame, ratios: pd.DataFrame, notes: pd.DataFrame, fmt: Callable[[object], str]
) -> Styler:
    """Cells "value (ratio)", coloured by the ratio where lower is better;
    noted cells (steps that did not run their course) show the note, struck
    through."""

    def cell(v: object, r: object, n: object) -> str:
        if isinstance(n, str):
            return n
        text = fmt(v)
        return f"{text} ({r:.2f})" if text and isinstance(r, float) and not pd.isna(r) else text

    def color(r: object, n: object) -> str:
        if isinstance(n, str):
            return NOT_OK
        if not isinstance(r, float) or pd.isna(r):
            return ""
        return RED if r >= 1.05 else GREEN if r <= 0.95 else GREY

    shown = pd.DataFrame(
        [[cell(v, r, n) for v, r, n in zip(*row)] for row in zip(frame.to_numpy(), ratios.to_numpy(), notes.to_numpy())],
        index=frame.index,
        columns=frame.columns,
    )
    styles = pd.DataFrame(
        [[color(r, n) for r, n in zip(*row)] for row in zip(ratios.to_numpy(), notes.to_numpy())],
        index=frame.index,
        columns=frame.columns,
    )
    return shown.style.apply(lambda _: styles, axis=None)
