"""Storage-engine statistics per run (:func:`engine`)."""

from __future__ import annotations

from typing import Optional

import pandas as pd

from ibench import _native
from ibench.tables._common import (
    RunsLike,
    Table,
    _blank_rows,
    _fmt,
    _marked,
    _not_ok,
    _partial_notes,
    _run_order,
    _steps,
)


ENGINE_COLUMNS = {
    "ips": "ips",
    "stall%": "stall_pct",
    "w_amp": "w_amp",
    "c_wsecs": "compaction_s",
    "c_csecs": "compaction_cpu_s",
    "sizeGB": "live_sst_bytes",
    "runGB": "largest_run_bytes",
}


def engine(runs: RunsLike, step: Optional[str] = None) -> Table:
    """Storage-engine statistics per run, as the published RocksDB reports
    show them: inserts/s, write-stall %, write amplification ((flush +
    compaction bytes) / user bytes), compaction wall and CPU seconds, the
    live SST size and the largest sorted run's size in GB (10^9 bytes; the
    reports compare the latter after fillseq), and the number of sorted runs.
    Rows are runs for one ``step`` (default:
    (run, step) for every step with engine statistics). A step that did not
    run its course shows its status with its partial figures, struck
    through."""
    steps = _steps(runs)
    if "w_amp" not in steps.columns:
        raise _native.ConfigError("invalid runs: no engine statistics (results older than ibench 0.1 key/value steps)")
    steps = steps[steps["user_bytes_written"].notna()]
    if step is not None:
        if step not in set(steps["step"]):
            raise _native.ConfigError(f"invalid step: {step!r} has no engine statistics in these runs")
        steps = steps[steps["step"] == step]
    if step is None:
        runs_order = {label: i for i, label in enumerate(dict.fromkeys(steps["label"]))}
        steps_order = {name: i for i, name in enumerate(_run_order(steps))}
        steps = steps.iloc[
            sorted(
                range(len(steps)),
                key=lambda i: (runs_order[steps["label"].iloc[i]], steps_order[steps["step"].iloc[i]]),
            )
        ]
    frame = pd.DataFrame({name: steps[column].to_numpy() for name, column in ENGINE_COLUMNS.items()})
    frame["sizeGB"] = frame["sizeGB"] / 1e9
    frame["runGB"] = frame["runGB"] / 1e9
    frame["sorted_runs"] = steps["sorted_runs"].to_numpy()
    if step is not None:
        frame.index = pd.Index(steps["label"], name="label")
        title = f"Engine statistics, {step}"
    else:
        frame.index = pd.MultiIndex.from_arrays([steps["label"], steps["step"]], names=["label", "step"])
        title = "Engine statistics per step"

    def fmt(v: object) -> str:
        if isinstance(v, float) and not pd.isna(v) and abs(v) < 100:
            return f"{v:.1f}"
        return _fmt(v)

    # A step that did not run its course: its partial figures, struck through, never numbers.
    not_ok = _not_ok(steps).to_numpy()
    notes = _partial_notes(steps, frame, fmt)
    if not_ok.any():
        frame = _blank_rows(frame.astype(float), not_ok)
    styler, notes = _marked(frame, notes, fmt)
    return Table(title, frame, styler, notes)
