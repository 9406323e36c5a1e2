"""Latency percentiles per step (:func:`latency`)."""

from __future__ import annotations

import pandas as pd

from ibench import _native
from ibench.tables._common import RunsLike, Table, _drop_empty, _fmt, _marked, _notes, _pivot, _steps, _valid


OPS = ("insert", "delete", "query", "statement", "event")
"""The operations whose percentiles steps.parquet holds."""


def latency(runs: RunsLike, op: str = "insert", time: str = "resp") -> Table:
    """Latency percentiles (µs) of ``op`` (insert, delete, query; statement
    or event for sysbench's microbenchmarks) per step, response (``resp``)
    or service (``svc``) time; rows are (run, percentile)."""
    if op not in OPS or time not in ("resp", "svc"):
        raise _native.ConfigError(f"invalid op/time: {op!r}/{time!r}; expected {'|'.join(OPS)} and resp|svc")
    steps = _steps(runs)
    if f"{op}_{time}_p50_us" not in steps.columns:
        raise _native.ConfigError(f"invalid op: the runs' files have no {op} latency (written before ibench had it)")
    parts, note_parts = [], []
    for p in ("p50", "p90", "p99", "p999", "max"):
        column = steps[f"{op}_{time}_{p}_us"]
        part = _pivot(steps, _valid(steps, column))
        notes = _notes(steps, column, _fmt, with_values_only=True).reindex(index=part.index, columns=part.columns)
        for frame_part in (part, notes):
            frame_part.index = pd.MultiIndex.from_product([frame_part.index, [p]], names=["label", "percentile"])
        parts.append(part)
        note_parts.append(notes)
    frame = pd.concat(parts).sort_index(level=0, sort_remaining=False)
    all_notes = pd.concat(note_parts).reindex(index=frame.index)
    frame, all_notes = _drop_empty(frame, all_notes)
    styler, all_notes = _marked(frame, all_notes, _fmt)
    kind = "response" if time == "resp" else "service"
    return Table(f"{op} {kind} time (µs)", frame, styler, all_notes)
