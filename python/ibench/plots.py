"""Plots over the results schema (matplotlib). Each function takes results
(or run directories) and returns a Figure; nothing here reads internal objects.
"""

from __future__ import annotations

from pathlib import Path
from typing import Optional

# No backend is forced (without a display matplotlib falls back to Agg).
# Figures are made by pyplot, so Jupyter's inline backend can show them, and
# closed at once, so a returned figure shows exactly once and nothing leaks.
import matplotlib.pyplot as plt
import pandas as pd
from matplotlib.figure import Figure

from ibench import _native, tables
from ibench.results import Results, load


def _one(results: Results | str | Path) -> Results:
    return results if isinstance(results, Results) else load(results)


def _intervals(r: Results, step: str, op: str) -> tuple[pd.DataFrame, pd.DataFrame]:
    """The per-client rows and the all-clients rows (client null) of ``op`` in ``step``."""
    iv = r.intervals[(r.intervals["step"] == step) & (r.intervals["op"] == op)]
    if iv.empty:
        raise _native.ConfigError(f"invalid step: no {op} intervals in step {step!r}")
    return iv[iv["client"].notna()], iv[iv["client"].isna()]


def throughput_over_time(results: Results | str | Path, step: str, op: str = "insert") -> Figure:
    """Operations per second of ``op`` in each interval of ``step``: one line
    per client and their total (rows/s for inserts and deletes: commits/s ×
    rows per commit). Each interval's rate is over its real length, so the
    last, partial one is no drop."""
    r = _one(results)
    per_client, total = _intervals(r, step, op)
    rpc = r.steps.set_index("step").loc[step, "rows_per_commit"]
    scale = float(rpc) if op in ("insert", "delete") and rpc == rpc else 1.0
    unit = "rows/s" if scale != 1.0 or op in ("insert", "delete") else "ops/s"
    fig, ax = plt.subplots(figsize=(8, 4))
    plt.close(fig)
    for client, part in per_client.groupby("client"):
        ax.plot(part["t_s"], part["rate"].astype(float) * scale, label=f"client {client}", linewidth=1)
    ax.plot(total["t_s"], total["rate"].astype(float) * scale, label="total", linewidth=2, color="black")
    ax.set(xlabel="seconds into the step", ylabel=f"{op} {unit}", title=f"{step}: {op} throughput per interval")
    ax.legend(loc="best", fontsize="small")
    fig.tight_layout()
    return fig


def latency_over_time(results: Results | str | Path, step: str, op: str = "insert") -> Figure:
    """Response-time p50, p99 and maximum of ``op`` per interval of ``step``,
    over all clients' operations together (each interval's histograms merged)."""
    r = _one(results)
    _, merged = _intervals(r, step, op)
    fig, ax = plt.subplots(figsize=(8, 4))
    plt.close(fig)
    for col, name in [("p50_us", "p50"), ("p99_us", "p99"), ("max_us", "max")]:
        ax.plot(merged["t_s"], merged[col].astype(float) / 1000.0, label=name)
    ax.set(xlabel="seconds into the step", ylabel="response time (ms)", yscale="log")
    ax.set_title(f"{step}: {op} response time per interval")
    ax.legend(loc="best", fontsize="small")
    fig.tight_layout()
    return fig


QUANTILES = [50.0, 75.0, 90.0, 95.0, 99.0, 99.5, 99.9, 99.95, 99.99, 100.0]


def latency_distribution(
    runs: tables.RunsLike, step: str, op: str = "insert", time: str = "response"
) -> Figure:
    """Percentile curves of ``op`` in ``step`` for each run, recomputed from
    the stored HdrHistograms (so the tail is exact, not sampled)."""
    items = [runs] if isinstance(runs, (Results, str, Path)) else list(runs)
    fig, ax = plt.subplots(figsize=(8, 4))
    plt.close(fig)
    positions = list(range(len(QUANTILES)))
    labels = tables._steps([_one(r) for r in items])
    for r in items:
        res = _one(r)
        hs = res.histograms
        h = hs[(hs["step"] == step) & (hs["op"] == op) & (hs["time"] == time) & hs["t_s"].isna()]
        if h.empty:
            continue
        blob = _native.merge_histograms([bytes(b) for b in h["histogram"]])
        values = _native.histogram_percentiles(blob, QUANTILES)
        label = labels.loc[labels["run_id"] == res.runs["run_id"].iloc[0], "label"].iloc[0]
        ax.plot(positions, [v / 1000.0 for v in values], marker="o", label=str(label))
    ax.set_xticks(positions, [f"p{q:g}" if q < 100 else "max" for q in QUANTILES])
    ax.set(ylabel=f"{time} time (ms)", yscale="log", title=f"{step}: {op} {time} time percentiles")
    ax.legend(loc="best", fontsize="small")
    fig.tight_layout()
    return fig


def relative_bars(runs: tables.RunsLike, base: Optional[str] = None) -> Figure:
    """Throughput of each run relative to ``base`` per step, as grouped bars."""
    t = tables.relative(runs, base)
    frame = t.frame.drop(index=t.frame.index[0] if base is None else base)
    fig, ax = plt.subplots(figsize=(max(6, len(frame.columns)), 4))
    plt.close(fig)
    width = 0.8 / max(1, len(frame.index))
    for i, (label, row) in enumerate(frame.iterrows()):
        ax.bar([x + i * width for x in range(len(row))], row.values, width=width, label=str(label))
    ax.axhline(1.0, color="black", linewidth=1)
    ax.set_xticks([x + width * (len(frame.index) - 1) / 2 for x in range(len(frame.columns))], list(frame.columns))
    ax.set(ylabel="throughput / base", title=t.title)
    ax.legend(loc="best", fontsize="small")
    fig.tight_layout()
    return fig
