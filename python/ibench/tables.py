"""Report tables like the published Insert Benchmark reports.

Each function takes one or more :class:`ibench.Results` (or run directories)
and returns a :class:`Table`: a pandas DataFrame of numbers with a styled
view for Jupyter (``.styler``), HTML (``.to_html()``) and Markdown
(``.to_markdown()``). Rows are runs, named by their label (``--label``, else
"DBMS version"), columns are steps, in the order the runs ran them; the
hardware-efficiency table has rows (step, run) and a column per figure, the
response-time buckets a column per bucket. Steps that did not run their
course are struck through in every table.

Runs that share a ``--label`` are repeats of one configuration (``ibench
campaign`` runs each server several times under its label): the throughput
table shows their mean, :func:`relative` compares the means with a
confidence interval, and :func:`noise` states their run-to-run spread. The
other tables keep one row per run (a repeat's row is named ``label (run id)``).
"""

from __future__ import annotations

import re
from dataclasses import dataclass, field
from html import escape
from pathlib import Path
from typing import Callable, Optional, Sequence, Union

import numpy as np
import numpy.typing as npt
import pandas as pd
from pandas.io.formats.style import Styler

from ibench import _native, stats
from ibench.results import Results, load

RunsLike = Union[Results, str, Path, Sequence[Union[Results, str, Path]]]

LOAD_STEPS = ("l.i0", "l.i1", "l.i2")

# The key/value steps by what their rate counts, as the core defines them.
KV_WRITE_STEPS = tuple(_native.KV_WRITE_STEPS)
KV_READ_STEPS = tuple(_native.KV_READ_STEPS)
KV_DELETE_STEPS = tuple(_native.KV_DELETE_STEPS)
KV_STEPS = tuple(_native.KV_STEPS)

RED, GREEN, GREY = "background-color: #f4cccc", "background-color: #d9ead3", "color: #999999"
NOT_OK = "color: #999999; text-decoration: line-through; font-style: italic"
"""A cell of a step that did not run its course."""
NOT_SIGNIFICANT = "color: #999999; font-style: italic"
"""A ratio whose confidence interval contains 1.0 (Markdown: in italics)."""
WARNING = "color: #b45f06; margin: 0.3em 0"
"""A warning line under a table (e.g. noise larger than a difference reported)."""


@dataclass
class Table:
    """A report table: numbers in ``frame``, presentation in ``styler``.

    A cell of a step that did not run its course (status ``timeout``,
    ``error`` or ``interrupted``) is NaN in ``frame``, never a valid number;
    ``notes`` holds its status and partial figure (e.g. ``timeout: 812``),
    which the HTML and Markdown show, struck through.
    """

    title: str
    frame: pd.DataFrame
    styler: Styler
    notes: Optional[pd.DataFrame] = None
    ratios: Optional[pd.DataFrame] = None
    """Per cell, ``frame`` divided by the base run's value (tables that
    compare each value with a base run, e.g. :func:`efficiency`)."""
    low: Optional[pd.DataFrame] = None
    """Tables of ratios with confidence intervals (:func:`relative`): per
    cell, the interval's lower bound on the ratio in ``frame``; NaN where the
    cell has no interval (the base's row, too few runs or intervals)."""
    high: Optional[pd.DataFrame] = None
    """The intervals' upper bounds, as ``low``."""
    method: Optional[pd.DataFrame] = None
    """How each interval was computed: ``repeats`` (ratio of the means of the
    runs' figures, :func:`ibench.stats.ratio_of_means`) or ``series`` (one run
    per side: :func:`ibench.stats.ratio_of_series` over the step's
    per-interval throughput); None where the cell has no interval."""
    warnings: list[str] = field(default_factory=list)
    """Lines shown under the table, in HTML and Markdown (e.g. :func:`noise`:
    where the run-to-run spread exceeds a difference being reported)."""
    fmt: Optional[Callable[[object], str]] = None
    """How Markdown shows a number of ``frame`` (default: thousands
    separators from 100 up, 2 decimals below; :func:`noise`: percents)."""

    @property
    def significant(self) -> Optional[pd.DataFrame]:
        """Per cell with an interval, True when the interval excludes 1.0
        (the difference is significant), False when it contains 1.0; NA where
        there is no interval. None for tables without intervals."""
        if self.low is None or self.high is None:
            return None
        excludes = ~((self.low <= 1.0) & (self.high >= 1.0))
        return excludes.astype("boolean").where(self.low.notna() & self.high.notna())

    def to_html(self) -> str:
        """A self-contained HTML table (inline styles), with its title as a caption
        and its warnings below."""
        html: str = self.styler.set_caption(self.title).to_html()
        lines = [f'<p class="warning" style="{WARNING}">⚠ {escape(w)}</p>' for w in self.warnings]
        return html + "".join(lines)

    def to_markdown(self) -> str:
        """A Markdown table with the same numbers (rounded), its title above,
        its warnings below; a ratio that is not significant in italics."""
        if self.low is not None and self.high is not None:
            shown = _interval_texts(self.frame, self.low, self.high, markdown=True)
        else:
            fmt = self.fmt or _fmt
            shown = self.frame.apply(lambda col: col.map(fmt))
        if self.ratios is not None:
            ratios = self.ratios.reindex_like(shown)
            shown = shown.where(ratios.isna(), shown + ratios.map(lambda r: f" ({r:.2f})"))
        if self.notes is not None:
            marked = self.notes.reindex_like(shown)
            shown = shown.where(marked.isna(), marked.map(lambda n: f"~~{n}~~" if isinstance(n, str) else n))
        if isinstance(shown.index, pd.MultiIndex):
            shown.index = pd.Index([" ".join(map(str, key)) for key in shown.index])
        # The cells are text already: tabulate re-reading them as numbers would drop their decimals.
        align = ["right" if pd.api.types.is_numeric_dtype(self.frame[c]) else "left" for c in self.frame.columns]
        table: str = shown.to_markdown(disable_numparse=True, colalign=("left", *align))
        warnings = "".join(f"\n\n⚠ {w}" for w in self.warnings)
        return f"**{self.title}**\n\n{table}{warnings}"

    def _repr_html_(self) -> str:
        return self.to_html()


def _fmt(v: object) -> str:
    if v is None or (isinstance(v, float) and pd.isna(v)):
        return ""
    if isinstance(v, float):
        return f"{v:,.0f}" if abs(v) >= 100 else f"{v:.2f}"
    return str(v)


def _loaded(runs: RunsLike) -> list[Results]:
    """``runs`` as a list of Results, run directories loaded."""
    items: list[Union[Results, str, Path]] = [runs] if isinstance(runs, (Results, str, Path)) else list(runs)
    return [r if isinstance(r, Results) else load(r) for r in items]


def _steps(runs: RunsLike) -> pd.DataFrame:
    """The steps of every run with a `label` column naming its run uniquely
    and a `group` column naming its repeats together: runs with one
    ``--label`` share a group; a run without a label is a group of its own."""
    loaded = _loaded(runs)
    steps = pd.concat([r.steps for r in loaded], ignore_index=True)
    info = pd.concat([r.runs for r in loaded], ignore_index=True).drop_duplicates("run_id")
    names: dict[str, str] = {}
    labelled: set[str] = set()
    for row in info.itertuples():
        has_label = isinstance(row.label, str) and bool(row.label)
        names[row.run_id] = row.label if has_label else f"{row.dbms} {row.dbms_version}"
        if has_label:
            labelled.add(row.run_id)
    groups = {run_id: name for run_id, name in names.items() if run_id in labelled}
    # Two runs with one label stay apart: the later gets its run id appended.
    seen: dict[str, int] = {}
    for run_id in info["run_id"]:
        label = names[run_id]
        seen[label] = seen.get(label, 0) + 1
        if seen[label] > 1:
            names[run_id] = f"{label} ({run_id})"
    steps = steps.copy()
    steps["label"] = steps["run_id"].map(names)
    steps["group"] = steps["run_id"].map(lambda run_id: groups.get(run_id, names[run_id]))
    return steps


def step_order(step: str) -> tuple[int, int, int]:
    """Sort key putting steps in the benchmark's order: loads, l.x, wait, then
    q steps by rate, range before point."""
    fixed = {"l.i0": 0, "l.x": 1, "l.i1": 2, "l.i2": 3, "wait": 4}
    if step in fixed:
        return (fixed[step], 0, 0)
    if step[:2] in ("qr", "qp") and step[2:].isdigit():
        return (5, int(step[2:]), 0 if step[1] == "r" else 1)
    return (6, 0, 0)


def _run_order(steps: pd.DataFrame) -> list[str]:
    """Steps in the benchmark's order; key/value steps in the order they ran."""
    names = list(dict.fromkeys(steps["step"]))
    return sorted(names, key=lambda s: step_order(s) + (names.index(s),))


def labels(runs: RunsLike) -> dict[str, str]:
    """Each run's name in the tables: its label, else "DBMS version"; by run id."""
    steps = _steps(runs)
    return dict(zip(steps["run_id"], steps["label"]))


def _pivot(steps: pd.DataFrame, values: pd.Series) -> pd.DataFrame:
    frame = steps.assign(value=values).pivot_table(
        index="label", columns="step", values="value", sort=False, aggfunc="first", dropna=False
    )
    order = _run_order(steps)
    labels = list(dict.fromkeys(steps["label"]))
    return frame.reindex(index=labels, columns=[s for s in order if s in frame.columns])


def _not_ok(steps: pd.DataFrame) -> pd.Series:
    """True for steps that did not run their course."""
    return steps["status"] != "ok"


def _notes(
    steps: pd.DataFrame, values: pd.Series, fmt: Callable[[object], str], with_values_only: bool = False
) -> pd.DataFrame:
    """Per (run, step): ``status: partial value`` for steps whose status is
    not ok (just the status when there is no value, or nothing when
    ``with_values_only``), else NaN."""

    def note(status: str, v: object) -> object:
        has_value = v is not None and not (isinstance(v, float) and pd.isna(v))
        if has_value:
            return f"{status}: {fmt(v)}"
        return None if with_values_only else status

    text = pd.Series([note(st, v) for st, v in zip(steps["status"], values)], index=steps.index, dtype=object)
    frame = steps.assign(note=text.where(_not_ok(steps))).pivot_table(
        index="label", columns="step", values="note", sort=False, aggfunc="first", dropna=False
    )
    return frame


def _valid(steps: pd.DataFrame, values: pd.Series) -> pd.Series:
    """``values`` with steps that did not run their course set to NaN."""
    return values.where(~_not_ok(steps))


def _blank_rows(frame: pd.DataFrame, rows: np.ndarray) -> pd.DataFrame:
    """``frame`` with the ``rows`` (a boolean per row) set to NaN."""
    return frame.where(~np.broadcast_to(rows[:, None], frame.shape))


def _marked(frame: pd.DataFrame, notes: pd.DataFrame, fmt: Callable[[object], str]) -> tuple[Styler, pd.DataFrame]:
    """A styler of ``frame`` whose not-ok cells show their note, struck through."""
    notes = notes.reindex(index=frame.index, columns=frame.columns)
    shown = frame.astype(object).where(notes.isna(), notes)
    styler = shown.style.format(lambda v: v if isinstance(v, str) else fmt(v))
    styler = styler.apply(lambda _: notes.map(lambda n: NOT_OK if isinstance(n, str) else ""), axis=None)
    return styler, notes


def _throughput(steps: pd.DataFrame) -> pd.Series:
    """ips for load steps, indexed rows/s for l.x, qps for q steps, NaN otherwise."""
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
    return out


def _sla_missed(steps: pd.DataFrame) -> pd.DataFrame:
    return _pivot(steps, steps["sla_ok"].map(lambda v: 1.0 if v is False else 0.0)) == 1.0


@dataclass(frozen=True)
class _Repeats:
    """One step of one group (the runs sharing a label): per run, in the
    order the runs are given, its id, its figure and the step's status."""

    run_ids: tuple[str, ...]
    values: tuple[float, ...]
    statuses: tuple[str, ...]

    @property
    def ok(self) -> bool:
        """True when the step ran its course in every run."""
        return all(st == "ok" for st in self.statuses)

    @property
    def mean(self) -> float:
        """The mean figure over the runs; NaN unless every run's step ran its
        course (a mean over the survivors would be a number from other runs)."""
        return float(np.mean(self.values)) if self.ok else float("nan")

    def note(self, fmt: Callable[[object], str]) -> Optional[str]:
        """For a step that did not run its course: ``status: partial figure``
        (one run), ``status in k of n runs`` (repeats); None when it did."""
        bad = [(st, v) for st, v in zip(self.statuses, self.values) if st != "ok"]
        if not bad:
            return None
        status, value = bad[0]
        if len(self.statuses) > 1:
            return f"{status} in {len(bad)} of {len(self.statuses)} runs"
        return f"{status}: {fmt(value)}" if not pd.isna(value) else status


def _repeats(steps: pd.DataFrame, values: pd.Series) -> dict[tuple[str, str], _Repeats]:
    """Per (group, step): the figures ``values`` of the group's runs (a step
    run twice in one run counts once: its first time, as in the tables)."""
    rows = steps.assign(value=values).drop_duplicates(["run_id", "step"])
    out: dict[tuple[str, str], _Repeats] = {}
    for (group, step), part in rows.groupby(["group", "step"], sort=False):
        out[(str(group), str(step))] = _Repeats(
            tuple(part["run_id"]), tuple(float(v) for v in part["value"]), tuple(part["status"])
        )
    return out


def _run_counts(steps: pd.DataFrame) -> dict[str, int]:
    """Runs per group, groups in the order the runs are given."""
    counts = steps.drop_duplicates("run_id").groupby("group", sort=False).size()
    return {str(k): int(v) for k, v in counts.items()}


def _by_group(
    steps: pd.DataFrame, cells: dict[tuple[str, str], _Repeats], of: Callable[[_Repeats], object]
) -> pd.DataFrame:
    """A frame with a row per group, a column per step (benchmark order):
    ``of(cell)``, None where a group did not run a step."""
    groups, order = list(_run_counts(steps)), _run_order(steps)
    data = [[of(cells[(g, st)]) if (g, st) in cells else None for st in order] for g in groups]
    return pd.DataFrame(data, index=pd.Index(groups, name="label"), columns=order, dtype=object)


def _repeats_said(counts: dict[str, int]) -> str:
    """What the throughput title adds when some label has several runs:
    ``; mean of the repeats: pg15 ×3, pg16 ×3`` (nothing otherwise)."""
    several = [f"{g} ×{n}" for g, n in counts.items() if n > 1]
    return f"; mean of the repeats: {', '.join(several)}" if several else ""


def throughput(runs: RunsLike) -> Table:
    """Absolute throughput per step: inserts/s (l.i0, l.i1, l.i2 and the
    key/value write steps), indexed rows/s (l.x), queries/s (q steps and the
    key/value read steps). Runs sharing a label are repeats: their row is the
    mean over the repeats (the title says how many; :func:`noise` their
    spread). A q step whose background insert rate missed its SLA (in any
    repeat) is greyed; a step that did not run its course (in any repeat)
    shows its status, not a number."""
    steps = _steps(runs)
    cells = _repeats(steps, _throughput(steps))
    frame = _by_group(steps, cells, lambda c: c.mean).astype(float)
    notes = _by_group(steps, cells, lambda c: c.note(_fmt))
    keep = [c for c in frame.columns if frame[c].notna().any() or notes[c].notna().any()]
    frame, notes = frame[keep], notes[keep]
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
}
"""The operation whose per-interval rate is a step's throughput series
(:func:`throughput_series`); q steps and the key/value read steps: query."""


def _series_op(step: str) -> Optional[str]:
    """The operation counted by the step's figure in :func:`_throughput`:
    insert, create_index (l.x), query; None for steps without a rate."""
    if step in SERIES_OPS:
        return SERIES_OPS[step]
    if re.match(r"q[rp]\d+$", step) or step in KV_READ_STEPS:
        return "query"
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
    steps, in rows or pairs per second; query for q and key/value read
    steps; create_index for l.x, in indexes built per second), in time
    order. The last, partial interval is left out (its rate over the
    step's last milliseconds is noise). Empty for steps without a rate
    (wait) or without intervals."""
    loaded = _loaded(results)
    first = loaded[0]
    return _series(_all_clients([first]), run_id or str(first.runs["run_id"].iloc[0]), step)


def _interval(
    a: _Repeats, b: _Repeats, ratio: float, ci: float, series: Callable[[str], npt.NDArray[np.float64]]
) -> Optional[tuple[float, float, str]]:
    """The ``ci`` interval of ``ratio`` (b's figure over a's) and its method:
    ``repeats`` with 2 or more runs per side (ratio of means; its estimate is
    ``ratio``), ``series`` with one run per side (the ratio of the runs'
    per-interval series, its interval's relative width put around
    ``ratio``: the figures' ratio stays the cell's value). None with one
    run on one side only (neither method applies), or when the values
    allow no estimate (a series under 4 intervals, a zero mean)."""
    try:
        if len(a.values) >= 2 and len(b.values) >= 2:
            r = stats.ratio_of_means(a.values, b.values, ci)
            return r.low, r.high, "repeats"
        if len(a.values) == 1 and len(b.values) == 1:
            r = stats.ratio_of_series(series(a.run_ids[0]), series(b.run_ids[0]), ci)
            return ratio * r.low / r.estimate, ratio * r.high / r.estimate, "series"
    except ValueError:
        return None
    return None


def _intervals(
    frame: pd.DataFrame,
    notes: pd.DataFrame,
    cells: dict[tuple[str, str], _Repeats],
    base: str,
    ci: float,
    series: Callable[[str, str], npt.NDArray[np.float64]],
) -> tuple[pd.DataFrame, pd.DataFrame, pd.DataFrame]:
    """``low``, ``high`` and ``method`` of every ratio in ``frame`` (but the
    base's own row, and cells with a note)."""
    low = pd.DataFrame(float("nan"), index=frame.index, columns=frame.columns)
    high, method = low.copy(), pd.DataFrame(None, index=frame.index, columns=frame.columns, dtype=object)
    for step in frame.columns:
        for group in frame.index:
            ratio = frame.at[group, step]
            if group == base or pd.isna(ratio) or isinstance(notes.at[group, step], str):
                continue
            found = _interval(cells[(base, step)], cells[(group, step)], float(ratio), ci, lambda r: series(r, step))
            if found is not None:
                low.at[group, step], high.at[group, step], method.at[group, step] = found
    return low, high, method


def _interval_texts(
    frame: pd.DataFrame, low: pd.DataFrame, high: pd.DataFrame, markdown: bool = False
) -> pd.DataFrame:
    """Each ratio as text: ``0.52 ±0.03`` (or ``0.52 [0.41, 0.60]``, an
    asymmetric interval) where it has an interval, ``0.52`` where not; in
    Markdown a ratio whose interval contains 1.0 is in italics."""

    def text(v: object, lo: object, hi: object) -> str:
        if not isinstance(v, float) or pd.isna(v):
            return ""
        if not isinstance(lo, float) or not isinstance(hi, float) or pd.isna(lo) or pd.isna(hi):
            return f"{v:.2f}"
        shown = stats.format_interval(v, lo, hi)
        return f"*{shown}*" if markdown and lo <= 1.0 <= hi else shown

    low, high = low.reindex_like(frame), high.reindex_like(frame)
    data = [[text(*cell) for cell in zip(*row)] for row in zip(frame.to_numpy(), low.to_numpy(), high.to_numpy())]
    return pd.DataFrame(data, index=frame.index, columns=frame.columns)


def _relative_styler(frame: pd.DataFrame, low: pd.DataFrame, high: pd.DataFrame, notes: pd.DataFrame) -> Styler:
    """Ratios with their intervals: not significant (the interval contains
    1.0) grey italics; else red at or below 0.95, green at or above 1.05,
    grey between; a noted cell shows its note, struck through."""
    texts = _interval_texts(frame, low, high)

    def style(v: float, lo: float, hi: float, note: object) -> str:
        if isinstance(note, str):
            return NOT_OK
        if pd.isna(v):
            return ""
        if not pd.isna(lo) and not pd.isna(hi) and lo <= 1.0 <= hi:
            return NOT_SIGNIFICANT
        return RED if v <= 0.95 else GREEN if v >= 1.05 else GREY

    rows = zip(frame.to_numpy(), low.to_numpy(), high.to_numpy(), notes.to_numpy())
    styles = pd.DataFrame(
        [[style(*cell) for cell in zip(*row)] for row in rows], index=frame.index, columns=frame.columns
    )
    shown = texts.where(notes.isna(), notes)
    return shown.style.apply(lambda _: styles, axis=None)


def relative(runs: RunsLike, base: Optional[str] = None, ci: Optional[float] = 0.95) -> Table:
    """Throughput relative to the ``base`` label (default the first), with
    its ``ci`` confidence interval.

    Runs sharing a label are repeats. With 2 or more runs per label on both
    sides, a cell is the ratio of the means of the runs' figures (those of
    :func:`throughput`) and its interval that of
    :func:`ibench.stats.ratio_of_means`; with one run per side, the cell is
    the ratio of the two figures and its interval comes from the step's
    per-interval throughput series (:func:`throughput_series`), corrected
    for autocorrelation (:func:`ibench.stats.ratio_of_series`; its relative
    width, put around the figures' ratio). A cell with one run on one side
    and repeats on the other, or a series too short (under 4 full
    intervals), keeps its ratio without an interval.

    The intervals are ``low`` and ``high`` on the Table (and ``method``:
    repeats or series); the HTML and Markdown show ``ratio ±half-width`` (or
    ``ratio [low, high]`` when the interval is asymmetric beyond 10%). A
    ratio whose interval contains 1.0 is not significant: grey italics (in
    Markdown, italics); significant ratios, and those without an interval,
    are red at or below 0.95, green at or above 1.05, grey between.
    ``ci=None`` computes no intervals (the colours alone, as before
    intervals existed).

    A step that did not run its course (in either side, in any repeat) has
    no ratio: it shows its status."""
    if ci is not None and not 0 < ci < 1:
        raise _native.ConfigError(f"invalid ci: {ci!r}; expected a level between 0 and 1 (e.g. 0.95), or None")
    loaded = _loaded(runs)
    steps = _steps(loaded)
    cells = _repeats(steps, _throughput(steps))
    absolute = _by_group(steps, cells, lambda c: c.mean).astype(float)
    notes = _by_group(steps, cells, lambda c: c.note(_fmt))
    keep = [c for c in absolute.columns if absolute[c].notna().any() or notes[c].notna().any()]
    absolute, notes = absolute[keep], notes[keep]
    base = base if base is not None else str(absolute.index[0])
    if base not in absolute.index:
        raise _native.ConfigError(f"invalid base: no run labelled {base!r}; labels are {list(absolute.index)}")
    frame = absolute.div(absolute.loc[base], axis=1)
    # Where the base itself did not run its course, every ratio of that step is void.
    for step in frame.columns:
        if isinstance(notes.loc[base, step], str):
            notes[step] = notes[step].where(notes[step].notna(), f"base {notes.loc[base, step].split(':')[0]}")
    notes = notes.map(lambda n: n.split(":")[0] if isinstance(n, str) else n)
    if ci is None:
        nothing = pd.DataFrame(float("nan"), index=frame.index, columns=frame.columns)
        return Table(f"Throughput relative to {base}", frame, _relative_styler(frame, nothing, nothing, notes), notes)
    rows: list[pd.DataFrame] = []

    def series(run_id: str, step: str) -> npt.NDArray[np.float64]:
        if not rows:
            rows.append(_all_clients(loaded))  # read once, and only when a cell needs a series
        return _series(rows[0], run_id, step)

    low, high, method = _intervals(frame, notes, cells, base, ci, series)
    title = (
        f"Throughput relative to {base}, ± the {ci * 100:g}% confidence interval"
        "; in italics (grey): not significant, the interval contains 1.0"
    )
    return Table(title, frame, _relative_styler(frame, low, high, notes), notes, low=low, high=high, method=method)


def _cv(cell: _Repeats) -> float:
    """The coefficient of variation of a group's figures in a step; NaN
    for a single run, a step that did not run its course, a zero mean."""
    if len(cell.values) < 2 or not cell.ok:
        return float("nan")
    try:
        return stats.coefficient_of_variation(cell.values)
    except ValueError:
        return float("nan")


def _pct(v: object) -> str:
    """A fraction as a percent: 0.0123 -> 1.2%, 0.0004 -> 0.04%."""
    if not isinstance(v, float) or pd.isna(v):
        return ""
    return f"{100 * v:.1f}%" if abs(v) >= 0.01 else f"{100 * v:.2f}%"


def _noise_warnings(ratios: pd.DataFrame, cv: pd.DataFrame, base: str) -> list[str]:
    """A line per step where a label's or the base's run-to-run spread (CV)
    exceeds that label's difference from the base, |ratio − 1|."""
    lines = []
    for step in cv.columns:
        said = []
        for group in ratios.index:
            ratio = ratios.at[group, step] if step in ratios.columns else float("nan")
            if group == base or pd.isna(ratio):
                continue
            diff = abs(float(ratio) - 1.0)
            over = [
                f"{name} ({_pct(cv.at[name, step])})"
                for name in (group, base)
                if name in cv.index and not pd.isna(cv.at[name, step]) and cv.at[name, step] > diff
            ]
            if over:
                said.append(f"{group} differs from {base} by {_pct(diff)}, less than the CV of {' and '.join(over)}")
        if said:
            lines.append(f"{step}: the run-to-run spread exceeds the difference reported: {'; '.join(said)}")
    return lines


def noise(runs: RunsLike, base: Optional[str] = None) -> Table:
    """Run-to-run spread: per label with 2 or more runs (repeats) and step,
    the coefficient of variation of the runs' throughput figures (those of
    :func:`throughput`; :func:`ibench.stats.coefficient_of_variation`: sample
    standard deviation over the mean), a fraction in ``frame``, a percent in
    HTML and Markdown. ``warnings`` names each step where a label's CV, or
    the ``base``'s (default the first label, as in :func:`relative`), exceeds
    the difference :func:`relative` reports between them (|ratio − 1|): there
    the difference is within the noise. A step that did not run its course
    in some repeat shows its status. Raises ConfigError when no label has
    repeats."""
    loaded = _loaded(runs)
    steps = _steps(loaded)
    counts = _run_counts(steps)
    repeated = [g for g, n in counts.items() if n >= 2]
    if not repeated:
        raise _native.ConfigError(
            "invalid runs: no label has 2 or more runs; the run-to-run spread needs repeats (runs sharing a --label)"
        )
    cells = _repeats(steps, _throughput(steps))
    frame = _by_group(steps, cells, _cv).astype(float).loc[repeated]
    notes = _by_group(steps, cells, lambda c: c.note(_fmt)).loc[repeated]
    keep = [c for c in frame.columns if frame[c].notna().any() or notes[c].notna().any()]
    frame, notes = frame[keep], notes[keep]
    ratios = relative(loaded, base, ci=None).frame
    base = base if base is not None else str(ratios.index[0])
    styler, notes = _marked(frame, notes, _pct)
    said = ", ".join(f"{g}: {counts[g]} runs" for g in repeated)
    title = f"Run-to-run spread: coefficient of variation of the throughput over repeats ({said})"
    return Table(title, frame, styler, notes, warnings=_noise_warnings(ratios, frame, base), fmt=_pct)


def background_inserts(runs: RunsLike) -> Table:
    """The background insert rate achieved in each q step, SLA misses (below
    95% of the target, and every q step that did not run its course) in red."""
    steps = _steps(runs)
    q = steps[steps["step"].str.match(r"q[rp]\d+$")]
    frame = _pivot(q, _valid(q, q["ips"]))
    notes = _notes(q, q["ips"], _fmt)
    target = _pivot(q, q["target_ips"])
    missed = _sla_missed(q).reindex_like(frame).fillna(False)
    styler, notes = _marked(frame, notes, _fmt)
    styler = styler.apply(lambda _: missed.map(lambda m: RED if m else ""), axis=None)
    title = "Background inserts/s in q steps (target " + ", ".join(
        f"{s}: {t:,.0f}" for s, t in target.max().items()
    ) + "); red: SLA missed"
    return Table(title, frame, styler, notes)


def latency(runs: RunsLike, op: str = "insert", time: str = "resp") -> Table:
    """Latency percentiles (µs) of ``op`` (insert, delete, query) per step,
    response (``resp``) or service (``svc``) time; rows are (run, percentile)."""
    if op not in ("insert", "delete", "query") or time not in ("resp", "svc"):
        raise _native.ConfigError(f"invalid op/time: {op!r}/{time!r}; expected insert|delete|query and resp|svc")
    steps = _steps(runs)
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
    keep = [c for c in frame.columns if frame[c].notna().any() or all_notes[c].notna().any()]
    frame, all_notes = frame[keep], all_notes[keep]
    styler, all_notes = _marked(frame, all_notes, _fmt)
    kind = "response" if time == "resp" else "service"
    return Table(f"{op} {kind} time (µs)", frame, styler, all_notes)


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
}
"""The efficiency table's columns: (steps column, scale). Costs are per
operation of the step (docs/results.md), sizes in GB (10^9 bytes), the
largest response time in ms."""


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
    values = pd.DataFrame(
        {name: steps[column].astype(float) * scale for name, (column, scale) in EFFICIENCY_COLUMNS.items()},
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
    utilisation %. Rows are (step, run), columns the figures; columns no run
    has are left out.

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
    not_ok = _not_ok(steps).to_numpy()
    frame = _blank_rows(raw.set_axis(index), not_ok)
    notes = pd.DataFrame(
        [
            [f"{status}: {_fmt_small(v)}" if bad and not pd.isna(v) else None for v in row]
            for status, bad, row in zip(steps["status"], not_ok, raw.to_numpy())
        ],
        index=index,
        columns=raw.columns,
        dtype=object,
    )
    keep = [c for c in frame.columns if frame[c].notna().any() or notes[c].notna().any()]
    frame, notes = frame[keep], notes[keep]
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


def _differing(loaded: list[Results]) -> pd.DataFrame:
    """Rows (scope, name) of the facts and settings whose values differ
    between the runs (sampled values left out, a missing one "(absent)");
    columns the runs' labels."""
    names = labels(loaded)
    config = pd.concat([r.config for r in loaded], ignore_index=True)
    config = config[config["source"] != "sampled"]
    wide = config.assign(label=config["run_id"].map(names)).pivot_table(
        index=["scope", "name"], columns="label", values="value", aggfunc="first", sort=False
    )
    wide = wide.reindex(columns=[n for n in dict.fromkeys(names.values()) if n in wide.columns])
    differs = wide.apply(lambda row: row.fillna("(absent)").nunique() > 1, axis=1)
    frame: pd.DataFrame = wide[differs].fillna("(absent)")
    return frame


def what_differs(runs: RunsLike) -> Table:
    """Host facts and server settings whose values differ between the runs
    (facts sampled at a moment, such as swap in use, left out). Rows are
    (scope, name), columns the runs. :func:`differences` is the readable
    form the report shows."""
    frame = _differing(_loaded(runs))
    return Table(f"What differs between the runs ({len(frame)} settings)", frame, frame.style)


BY_NATURE_TOKENS = frozenset({"port", "pid", "socket", "datadir", "hostname", "host", "uuid"})
"""Name parts (split at ``_`` and ``.``) of settings that differ between
any two servers: ports, pids, sockets, data directories, host names, ids."""


def _by_nature(scope: str, name: str, values: pd.Series) -> bool:
    """True for a setting whose values differ by nature rather than by
    choice: its name says port, pid, socket, ... (:data:`BY_NATURE_TOKENS`),
    or, among server settings, every run's value is an absolute path (data
    directories, log, pid and socket files)."""
    if BY_NATURE_TOKENS & set(re.split(r"[_.]", name.lower())):
        return True
    known = [v for v in values if v not in ("", "(absent)")]
    return scope == "server" and bool(known) and all(str(v).startswith("/") for v in known)


@dataclass
class Differences:
    """What differs between runs, as the report shows it: ``summary`` says
    what was compared (naming the DBMSs), ``by_scope`` holds one table per
    scope (``host``, ``ibench``, ``server``), ``by_nature`` the settings that
    differ between any two servers (ports, paths, pids, host names)."""

    summary: str
    by_scope: list[Table]
    by_nature: Optional[Table]

    @property
    def count(self) -> int:
        """How many facts and settings differ, those by nature included."""
        tables = [*self.by_scope, *([self.by_nature] if self.by_nature is not None else [])]
        return sum(len(t.frame) for t in tables)


def differences(runs: RunsLike) -> Differences:
    """What differs between the runs, readable: runs of different DBMSs
    compare only the host's and ibench's facts (their server settings have
    different names and meanings), and ``summary`` names the DBMSs; runs of
    one DBMS also compare the server settings, with those different by
    nature (:func:`_by_nature`) apart. Each table's rows are names, its
    columns the runs."""
    loaded = _loaded(runs)
    names = labels(loaded)
    info = pd.concat([r.runs for r in loaded], ignore_index=True).drop_duplicates("run_id")
    by_dbms: dict[str, list[str]] = {}
    for row in info.itertuples():
        by_dbms.setdefault(f"{row.dbms} {row.dbms_version}", []).append(names[str(row.run_id)])
    wide = _differing(loaded)
    if len(set(info["dbms"])) > 1:
        wide = wide[wide.index.get_level_values("scope") != "server"]
        which = "; ".join(f"{dbms} ({', '.join(runs_of)})" for dbms, runs_of in by_dbms.items())
        summary = (
            f"The runs use different DBMSs: {which}. Their server settings are not comparable, "
            "so only the host's and ibench's facts are compared."
        )
    else:
        summary = f"All runs use {next(iter(by_dbms))}: the host facts, ibench's build and the server settings that differ."
    nature = pd.Series(
        [_by_nature(scope, name, row) for (scope, name), row in wide.iterrows()], index=wide.index, dtype=bool
    )
    by_scope = []
    chosen = wide[~nature]
    for scope in dict.fromkeys(chosen.index.get_level_values("scope")):
        part = chosen.xs(scope, level="scope")
        by_scope.append(Table(f"{scope} ({len(part)})", part, part.style))
    apart = wide[nature].droplevel("scope") if nature.any() else None
    by_nature = (
        Table(f"Different by nature: ports, paths, pids, host names ({len(apart)})", apart, apart.style)
        if apart is not None
        else None
    )
    return Differences(summary, by_scope, by_nature)


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
    notes = pd.DataFrame(
        [
            [f"{status}: {fmt(v)}" if bad and not pd.isna(v) else None for v in row]
            for status, bad, row in zip(steps["status"], not_ok, frame.to_numpy(dtype=object))
        ],
        index=frame.index,
        columns=frame.columns,
        dtype=object,
    )
    if not_ok.any():
        frame = _blank_rows(frame.astype(float), not_ok)
    styler, notes = _marked(frame, notes, fmt)
    return Table(title, frame, styler, notes)


ALL: dict[str, Callable[[RunsLike], Table]] = {
    "throughput": throughput,
    "relative": relative,
    "noise": noise,
    "background_inserts": background_inserts,
    "latency": latency,
    "what_differs": what_differs,
    "engine": engine,
    "efficiency": efficiency,
}
"""Every table, by name."""


def all_tables(runs: RunsLike, base: Optional[str] = None) -> list[Table]:
    """The report's tables, in the published reports' order: the three
    summary tables (with the run-to-run spread after the relative
    throughput when some label has repeats), hardware efficiency, engine
    statistics when any, the latency percentiles, and last what differs
    between the runs."""
    runs = _loaded(runs)
    steps = _steps(runs)
    tables = [throughput(runs), relative(runs, base)]
    if any(n >= 2 for n in _run_counts(steps).values()):
        tables.append(noise(runs, base))
    if steps["step"].str.match(r"q[rp]\d+$").any():
        tables.append(background_inserts(runs))
    tables.append(efficiency(runs, base))
    if "user_bytes_written" in steps.columns and steps["user_bytes_written"].notna().any():
        tables.append(engine(runs))
    tables += [latency(runs), latency(runs, "query"), what_differs(runs)]
    return tables

