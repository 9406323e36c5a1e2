"""Plots over the results schema (matplotlib). Each function takes results
(or run directories) and returns a Figure (``gauges_over_time``: None when
there is nothing to draw; ``flamegraph``: an SVG, drawn by inferno in the
native module); nothing here reads internal objects. Charts over
several runs give each run one colour, by its position in the list, and
fade and dash the lines of a step that did not run its course, its status
after the run's label.
"""

from __future__ import annotations

import math
from pathlib import Path
from typing import Any, Optional, Sequence

# No backend is forced (without a display matplotlib falls back to Agg).
# Figures are made by pyplot, so Jupyter's inline backend can show them, and
# closed at once, so a returned figure shows exactly once and nothing leaks.
import matplotlib
import matplotlib.pyplot as plt
import numpy as np
import numpy.typing as npt
import pandas as pd
from matplotlib.axes import Axes
from matplotlib.figure import Figure
from matplotlib.lines import Line2D
from matplotlib.ticker import EngFormatter, FuncFormatter, LogLocator, NullLocator

from ibench import _native, tables
from ibench.results import Results, load


def _one(results: Results | str | Path) -> Results:
    return results if isinstance(results, Results) else load(results)


def _status(r: Results, step: str, run_id: Optional[str] = None) -> str:
    """The status of ``step`` in run ``run_id`` (default: the first run of ``r``); ok when absent."""
    run_id = run_id if run_id is not None else str(r.runs["run_id"].iloc[0])
    status = r.steps.loc[(r.steps["run_id"] == run_id) & (r.steps["step"] == step), "status"]
    return str(status.iloc[0]) if len(status) else "ok"


def _marked_title(title: str, status: str) -> str:
    """``title``, with the step's status when it did not run its course."""
    return title if status == "ok" else f"{title} ({status})"


def _runs(runs: tables.RunsLike) -> list[tuple[str, str, Results]]:
    """Every run in ``runs`` (a Results may hold several) as (run id, label,
    the Results holding it), in order: the order gives each run its colour."""
    loaded = tables._loaded(runs)
    names = tables.labels(loaded)
    return [(str(run_id), names[str(run_id)], r) for r in loaded for run_id in dict.fromkeys(r.runs["run_id"])]


RUN_COLOURS = [matplotlib.colormaps["tab20"](i) for i in [*range(0, 20, 2), *range(1, 20, 2)]]
"""One colour per run for 20 runs: tab20's ten strong colours (matplotlib's
default cycle), then their lighter shades."""


def _run_style(i: int, status: str) -> dict[str, Any]:
    """Line properties of run ``i``: its own colour; faded and dashed (by the
    caller) when the step did not run its course."""
    return {"color": RUN_COLOURS[i % len(RUN_COLOURS)], "alpha": 1.0 if status == "ok" else 0.6}


def _one_point(n: int) -> dict[str, Any]:
    """A marker for a series of one point, which a line alone would not draw."""
    return {"marker": "o"} if n == 1 else {}


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
    title = _marked_title(f"{step}: {op} throughput per interval", _status(r, step))
    ax.set(xlabel="seconds into the step", ylabel=f"{op} {unit}", title=title)
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
    ax.set_title(_marked_title(f"{step}: {op} response time per interval", _status(r, step)))
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
        status = _status(res, step)
        ax.plot(
            positions,
            [v / 1000.0 for v in values],
            marker="o",
            label=_marked_title(str(label), status),
            linestyle="-" if status == "ok" else "--",
        )
    ax.set_xticks(positions, [f"p{q:g}" if q < 100 else "max" for q in QUANTILES])
    ax.set(ylabel=f"{time} time (ms)", yscale="log", title=f"{step}: {op} {time} time percentiles")
    ax.legend(loc="best", fontsize="small")
    fig.tight_layout()
    return fig


def _error_bars(t: tables.Table, frame: pd.DataFrame, label: object) -> Optional[npt.NDArray[np.float64]]:
    """The (2, steps) distances from each ratio of ``label`` down and up to
    its interval's bounds (NaN: no interval); None for a table without intervals."""
    if t.low is None or t.high is None:
        return None
    row = frame.loc[label].to_numpy(dtype=float)
    low = t.low.reindex_like(frame).loc[label].to_numpy(dtype=float)
    high = t.high.reindex_like(frame).loc[label].to_numpy(dtype=float)
    return np.vstack([row - low, high - row])


def relative_bars(
    runs: tables.RunsLike, base: Optional[str] = None, steps: Optional[Sequence[str]] = None
) -> Figure:
    """Throughput of each label relative to ``base`` per step (only
    ``steps`` when given), as grouped bars, each with its confidence
    interval (:func:`ibench.tables.relative`) as an error bar; a ratio that
    is not significant (its interval contains 1.0) is a pale bar."""
    t = tables.relative(runs, base)
    frame = t.frame.drop(index=t.frame.index[0] if base is None else base)
    if steps is not None:
        frame = frame[[s for s in frame.columns if s in steps]]
    fig, ax = plt.subplots(figsize=(max(6, len(frame.columns)), 4))
    plt.close(fig)
    width = 0.8 / max(1, len(frame.index))
    notes = t.notes.reindex_like(frame) if t.notes is not None else pd.DataFrame(index=frame.index, columns=frame.columns)
    significant = t.significant.reindex_like(frame) if t.significant is not None else None
    for i, (label, row) in enumerate(frame.iterrows()):
        bars = ax.bar(
            [x + i * width for x in range(len(row))], row.values, width=width, label=str(label),
            yerr=_error_bars(t, frame, label), capsize=3, error_kw={"elinewidth": 1},
        )
        for bar, sig in zip(bars, significant.loc[label] if significant is not None else []):
            if not pd.isna(sig) and not sig:
                bar.set_alpha(0.4)
        # A step that did not run its course has no bar: its status stands in its place.
        for x, note in enumerate(notes.loc[label]):
            if isinstance(note, str):
                ax.text(x + i * width, 0.02, note, rotation=90, fontsize="x-small", color="grey", va="bottom", ha="center")
    ax.axhline(1.0, color="black", linewidth=1)
    ax.set_xticks([x + width * (len(frame.index) - 1) / 2 for x in range(len(frame.columns))], list(frame.columns))
    named = base if base is not None else str(t.frame.index[0])
    intervals = "" if t.low is None else "\nerror bars: 95% interval; pale: not significant"
    title = f"Throughput relative to {named}{intervals}"
    ax.set(ylabel="throughput / base", title=title)
    ax.legend(loc="best", fontsize="small")
    fig.tight_layout()
    return fig


def sysbench_relative_bars(runs: tables.RunsLike, base: Optional[str] = None, group: str = "point") -> Figure:
    """The QPS of each sysbench microbenchmark of ``group`` (one of
    :data:`ibench.tables.SB_GROUPS`) relative to ``base``, as the published
    posts chart it: horizontal bars, a row per microbenchmark in run order
    (top to bottom), a bar per label other than the base, the base at the
    1.0 line; each bar with its confidence interval
    (:func:`ibench.tables.sysbench_relative`) as an error bar and its ratio
    written beside it; a ratio that is not significant (its interval
    contains 1.0, or it has none) is a pale bar; a microbenchmark that did
    not run its course has no bar, its status written in its place. The
    ratios set the scale: an interval wider than the chart is cut at its
    edge."""
    loaded = tables._loaded(runs)
    t = tables.sysbench_relative(loaded, base, group)
    frame = t.frame.droplevel("group")
    labels, steps = list(frame.columns), list(frame.index)
    # Rows a third of an inch per bar: the names stay readable and a dozen microbenchmarks fit a screen.
    fig, ax = plt.subplots(figsize=(8, 1.3 + 0.3 * len(steps) * max(1, len(labels)) + 0.15 * len(steps)))
    plt.close(fig)
    height = 0.8 / len(labels)
    notes = t.notes.droplevel("group") if t.notes is not None else frame.map(lambda _: None)
    significant = t.significant.droplevel("group") if t.significant is not None else None
    low = t.low.droplevel("group") if t.low is not None else frame * float("nan")
    high = t.high.droplevel("group") if t.high is not None else frame * float("nan")
    ratios = frame.to_numpy(dtype=float)
    right = 1.15 * max(1.0, float(np.nanmax(ratios)) if np.isfinite(ratios).any() else 1.0)
    for i, label in enumerate(labels):
        y = [row + i * height for row in range(len(steps))]
        values = frame[label].to_numpy(dtype=float)
        errors = np.vstack([values - low[label].to_numpy(dtype=float), high[label].to_numpy(dtype=float) - values])
        bars = ax.barh(y, values, height=height, label=str(label), xerr=errors, capsize=2, error_kw={"elinewidth": 1})
        for bar, step, value, top in zip(bars, steps, values, high[label].to_numpy(dtype=float)):
            sig = significant.at[step, label] if significant is not None else pd.NA
            if pd.isna(sig) or not sig:
                bar.set_alpha(0.4)
            note = notes.at[step, label]
            if isinstance(note, str):
                ax.text(0.02, bar.get_y() + height / 2, note, fontsize="x-small", color="grey", va="center")
            elif not np.isnan(value):
                # At the bar's end, over its error bar: a cut interval has no end to write it after.
                ax.text(value, bar.get_y() + height / 2, f"{value:.2f}", fontsize="x-small", va="center",
                        ha="left", bbox={"boxstyle": "square,pad=0.1", "facecolor": "white", "edgecolor": "none"})
    ax.axvline(1.0, color="black", linewidth=1)
    ax.set_yticks([row + height * (len(labels) - 1) / 2 for row in range(len(steps))], steps)
    ax.invert_yaxis()  # run order, top down
    # The ratios set the scale, not the intervals: two repeats a side can give
    # an interval 20 times the ratio, which would flatten every bar; such an
    # interval is cut at the chart's edge.
    ax.set_xlim(0, right * 1.12)  # room for the ratio written after the longest bar
    named = base if base is not None else str(tables._steps(loaded)["group"].iloc[0])  # the tables' default
    intervals = "" if t.low is None else "\nerror bars: 95% interval; pale: not significant"
    ax.set_title(f"sysbench {tables.SB_GROUPS[group]}: QPS relative to {named}{intervals}", fontsize="medium")
    ax.set_xlabel("QPS / base")
    # Beside the axes: the bars reach either edge, a legend inside would cover some.
    ax.legend(loc="upper left", bbox_to_anchor=(1.01, 1.0), fontsize="small", frameon=False)
    fig.tight_layout()
    return fig


def _all_clients(r: Results, run_id: str, step: str, op: str) -> pd.DataFrame:
    """The all-clients rows (client null) of ``op`` in ``step`` of one run, by time."""
    iv = r.intervals
    rows = iv[(iv["run_id"] == run_id) & (iv["step"] == step) & (iv["op"] == op) & iv["client"].isna()]
    return rows.sort_values("t_s")


def _rows_per_commit(r: Results, run_id: str, step: str, op: str) -> float:
    """The factor from commits/s to rows/s: rows per commit for inserts and deletes, else 1."""
    rpc = r.steps.loc[(r.steps["run_id"] == run_id) & (r.steps["step"] == step), "rows_per_commit"]
    if op not in ("insert", "delete") or rpc.empty or pd.isna(rpc.iloc[0]):
        return 1.0
    return float(rpc.iloc[0])


def compare_over_time(runs: tables.RunsLike, step: str, op: str = "insert") -> Figure:
    """The runs side by side over ``step``: above, the throughput of ``op``
    per interval, one line per run (rows/s for inserts and deletes, else
    operations/s; each interval's rate over its real length); below, the
    maximum (solid) and p99 (dashed) response time per interval, one colour
    per run, log scale. A run whose step did not run its course is faded,
    dashed (dotted below), and its status follows its label; a step of one
    interval draws a marker."""
    fig, (top, bottom) = plt.subplots(2, 1, figsize=(9, 5.5), sharex=True)
    plt.close(fig)
    drawn = 0
    unit = "rows/s" if op in ("insert", "delete") else "ops/s"
    for i, (run_id, label, r) in enumerate(_runs(runs)):
        rows = _all_clients(r, run_id, step, op)
        if rows.empty:
            continue
        drawn += 1
        status = _status(r, step, run_id)
        style = {**_run_style(i, status), **_one_point(len(rows))}
        ok = status == "ok"
        t = rows["t_s"].astype(float)
        rate = rows["rate"].astype(float) * _rows_per_commit(r, run_id, step, op)
        top.plot(t, rate, label=_marked_title(label, status), linestyle="-" if ok else "--", **style)
        bottom.plot(t, rows["max_us"].astype(float) / 1000.0, linestyle="-" if ok else ":", **style)
        bottom.plot(t, rows["p99_us"].astype(float) / 1000.0, linestyle="--" if ok else ":", linewidth=1, **style)
    if not drawn:
        raise _native.ConfigError(f"invalid step: no {op} intervals in step {step!r} of these runs")
    top.set(ylabel=f"{op} {unit}", title=f"{step}: {op} throughput and response time per interval")
    top.set_ylim(bottom=0)
    # Legends beside the axes: a dozen runs' names would cover the lines (and placing them "best" is slow).
    beside = {"loc": "upper left", "bbox_to_anchor": (1.01, 1.0), "fontsize": "small", "frameon": False}
    top.legend(**beside)
    bottom.set(xlabel="seconds into the step", ylabel="response time (ms)", yscale="log")
    _plain_log_ticks(bottom)
    keys = [Line2D([], [], color="black", linestyle="-"), Line2D([], [], color="black", linestyle="--", linewidth=1)]
    bottom.legend(keys, ["max", "p99"], **beside)
    fig.subplots_adjust(left=0.1, right=0.8, top=0.94, bottom=0.09, hspace=0.08)
    return fig


def _plain_log_ticks(ax: Axes) -> None:
    """Log-scale y ticks at 1, 2 and 5 × 10^k, written plainly (0.5, 20),
    and no minor ticks: the default 10^k labels leave a short range with one
    label or none, and its minor ticks cost more to draw than the lines."""
    ax.yaxis.set_major_locator(LogLocator(subs=(1.0, 2.0, 5.0)))
    ax.yaxis.set_major_formatter(FuncFormatter(lambda v, _: f"{v:g}"))
    ax.yaxis.set_minor_locator(NullLocator())


def gauges_over_time(runs: tables.RunsLike, step: str) -> Optional[Figure]:
    """The server's gauges over ``step`` (gauges.parquet): one small chart
    per gauge (source and name), one line per run, coloured as in
    :func:`compare_over_time` and drawn against the interval's start like
    the throughput beside it. None when no run recorded a gauge in the step.
    A run whose step did not run its course is faded and dashed, its status
    after its label."""
    series = []
    for i, (run_id, label, r) in enumerate(_runs(runs)):
        g = r.gauges
        rows = g[(g["run_id"] == run_id) & (g["step"] == step)]
        if not rows.empty:
            series.append((i, label, _status(r, step, run_id), rows))
    names = list(dict.fromkeys((src, name) for *_, rows in series for src, name in zip(rows["source"], rows["name"])))
    if not names:
        return None
    cols, rows_of_axes = min(3, len(names)), math.ceil(len(names) / 3)
    fig, axes = plt.subplots(rows_of_axes, cols, figsize=(8, 0.6 + 2.0 * rows_of_axes), squeeze=False)
    plt.close(fig)
    for ax, (source, name) in zip(axes.flat, names):
        _gauge(ax, series, source, name)
    for ax in list(axes.flat)[len(names) :]:
        ax.set_visible(False)
    keys = [
        Line2D([], [], linestyle="-" if status == "ok" else "--", **_run_style(i, status))
        for i, _, status, _ in series
    ]
    fig.legend(keys, [_marked_title(label, status) for _, label, status, _ in series],
               loc="upper right", ncol=min(4, len(series)), fontsize="small", frameon=False)
    fig.suptitle(f"{step}: server gauges per interval", x=0.01, ha="left", fontsize="medium")
    height = fig.get_figheight()
    fig.subplots_adjust(left=0.08, right=0.98, top=1 - 0.6 / height, bottom=0.35 / height, hspace=0.7, wspace=0.35)
    return fig


class FlameGraph(str):
    """An interactive SVG flame graph (click to zoom, Ctrl-F to search): the
    SVG's text, which Jupyter shows as the graph."""

    def _repr_svg_(self) -> str:
        return str(self)


def flamegraph(
    results: Results | str | Path, step: str, role: str = "server", run: Optional[str] = None, side: str = "server"
) -> FlameGraph:
    """The CPU profile of ``step`` (``profiles.parquet``: runs with
    ``profile = "perf"``) as a flame graph: ``role`` ``server`` or
    ``client`` (ibench's own process), or a thread kind (``foreground``,
    ``background``, ``monitor``) or named role (``checkpointer``) of
    ``side``'s threads, as :func:`ibench.explain` takes them; with several
    runs loaded, ``run`` (a run id or label) says which."""
    from ibench._explain import _check_role, _of_role

    r = _one(results)
    ids = r.run_ids(run)
    if len(ids) > 1:
        raise _native.ConfigError(
            f"invalid run: {len(ids)} runs are loaded ({', '.join(ids)}); say which with run=RUN_ID or run=LABEL"
        )
    p = r.profiles
    _check_role(p, r.threads, role, side)
    rows = _of_role(p[(p["run_id"] == ids[0]) & (p["step"] == step)], role, side)
    if rows.empty:
        raise _native.ConfigError(f"invalid step: no {role} CPU profile of step {step!r} in run {ids[0]}")
    # A stack can come from threads of several roles: one line each.
    merged = rows.groupby("stack")["samples"].sum()
    stacks = [(str(s), int(n)) for s, n in merged.items()]
    title = _marked_title(f"{step}: {role} CPU ({ids[0]})", _status(r, step, ids[0]))
    return FlameGraph(_native.flamegraph(stacks, title))


def _gauge(ax: Axes, series: list[tuple[int, str, str, pd.DataFrame]], source: str, name: str) -> None:
    """One gauge's chart: a line per run that recorded it."""
    for i, label, status, rows in series:
        part = rows[(rows["source"] == source) & (rows["name"] == name)].sort_values("t_s")
        if part.empty:
            continue
        style = {**_run_style(i, status), **_one_point(len(part))}
        ax.plot(
            part["t_s"].astype(float),
            part["value"].astype(float),
            label=_marked_title(label, status),
            linestyle="-" if status == "ok" else "--",
            **style,
        )
    ax.set_title(f"{source}: {name}", fontsize="small")
    ax.tick_params(labelsize="x-small")
    ax.yaxis.set_major_formatter(EngFormatter(sep=""))  # 35M, not a 1e7 offset over the title
    # Gauges are counts, sizes and rates: from 0, and a gauge that stayed 0
    # reads 0 to 1, not ±40m around it.
    values = pd.concat(
        [rows.loc[(rows["source"] == source) & (rows["name"] == name), "value"] for *_, rows in series]
    ).dropna()
    if len(values) and (values >= 0).all():
        if values.max() > 0:
            ax.set_ylim(bottom=0)
        else:
            ax.set_ylim(0, 1)
            ax.set_yticks([0, 1])
