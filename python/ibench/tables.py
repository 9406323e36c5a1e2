"""Report tables like the published Insert Benchmark reports.

Each function takes one or more :class:`ibench.Results` (or run directories)
and returns a :class:`Table`: a pandas DataFrame of numbers with a styled
view for Jupyter (``.styler``), HTML (``.to_html()``) and Markdown
(``.to_markdown()``). Rows are runs, named by their label (``--label``, else
"DBMS version"), columns are steps, in the order the runs ran them.
"""

from __future__ import annotations

from dataclasses import dataclass
from pathlib import Path
from typing import Callable, Optional, Sequence, Union

import pandas as pd
from pandas.io.formats.style import Styler

from ibench import _native
from ibench.results import Results, load

RunsLike = Union[Results, str, Path, Sequence[Union[Results, str, Path]]]

LOAD_STEPS = ("l.i0", "l.i1", "l.i2")

KV_WRITE_STEPS = (
    "fillseq",
    "fillrandom",
    "filluniquerandom",
    "overwrite",
    "overwritesome",
    "overwriteandwait",
)
KV_READ_STEPS = ("readrandom", "seekrandom", "readwhilewriting")
KV_STEPS = KV_WRITE_STEPS + KV_READ_STEPS + ("flush", "waitforcompaction")

RED, GREEN, GREY = "background-color: #f4cccc", "background-color: #d9ead3", "color: #999999"
NOT_OK = "color: #999999; text-decoration: line-through; font-style: italic"
"""A cell of a step that did not run its course."""


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

    def to_html(self) -> str:
        """A self-contained HTML table (inline styles), with its title as a caption."""
        html: str = self.styler.set_caption(self.title).to_html()
        return html

    def to_markdown(self) -> str:
        """A Markdown table with the same numbers (rounded), its title above."""
        shown = self.frame.apply(lambda col: col.map(_fmt))
        if self.notes is not None:
            marked = self.notes.reindex_like(shown)
            shown = shown.where(marked.isna(), marked.map(lambda n: f"~~{n}~~" if isinstance(n, str) else n))
        if isinstance(shown.index, pd.MultiIndex):
            shown.index = pd.Index([" ".join(map(str, key)) for key in shown.index])
        table: str = shown.to_markdown()
        return f"**{self.title}**\n\n{table}"

    def _repr_html_(self) -> str:
        return self.to_html()


def _fmt(v: object) -> str:
    if v is None or (isinstance(v, float) and pd.isna(v)):
        return ""
    if isinstance(v, float):
        return f"{v:,.0f}" if abs(v) >= 100 else f"{v:.2f}"
    return str(v)


def _steps(runs: RunsLike) -> pd.DataFrame:
    """The steps of every run with a `label` column naming its run uniquely."""
    items: list[Union[Results, str, Path]] = [runs] if isinstance(runs, (Results, str, Path)) else list(runs)
    loaded = [r if isinstance(r, Results) else load(r) for r in items]
    steps = pd.concat([r.steps for r in loaded], ignore_index=True)
    info = pd.concat([r.runs for r in loaded], ignore_index=True).drop_duplicates("run_id")
    names: dict[str, str] = {}
    for row in info.itertuples():
        label = row.label if isinstance(row.label, str) and row.label else f"{row.dbms} {row.dbms_version}"
        names[row.run_id] = label
    # Two runs with one label stay apart: the later gets its run id appended.
    seen: dict[str, int] = {}
    for run_id in info["run_id"]:
        label = names[run_id]
        seen[label] = seen.get(label, 0) + 1
        if seen[label] > 1:
            names[run_id] = f"{label} ({run_id})"
    steps = steps.copy()
    steps["label"] = steps["run_id"].map(names)
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
    out[kv_write] = steps.loc[kv_write, "ips"]
    out[kv_read] = steps.loc[kv_read, "qps"]
    return out


def _sla_missed(steps: pd.DataFrame) -> pd.DataFrame:
    return _pivot(steps, steps["sla_ok"].map(lambda v: 1.0 if v is False else 0.0)) == 1.0


def throughput(runs: RunsLike) -> Table:
    """Absolute throughput per step: inserts/s (l.i0, l.i1, l.i2 and the
    key/value write steps), indexed rows/s (l.x), queries/s (q steps and the
    key/value read steps). A q step whose background insert rate missed its
    SLA is greyed; a step that did not run its course shows its status, not
    a number."""
    steps = _steps(runs)
    values = _throughput(steps)
    frame = _pivot(steps, _valid(steps, values))
    notes = _notes(steps, values, _fmt)
    keep = [c for c in frame.columns if frame[c].notna().any() or notes.reindex(columns=frame.columns)[c].notna().any()]
    frame = frame[keep]
    missed = _sla_missed(steps).reindex_like(frame).fillna(False)
    styler, notes = _marked(frame, notes, _fmt)
    styler = styler.apply(lambda _: missed.map(lambda m: GREY if m else ""), axis=None)
    return Table("Throughput (ips, indexed rows/s, qps)", frame, styler, notes)


def relative(runs: RunsLike, base: Optional[str] = None) -> Table:
    """Throughput relative to the ``base`` run (a label; default the first):
    red at or below 0.95, green at or above 1.05, grey between. A step that
    did not run its course (in either run) has no ratio: it shows its status."""
    steps = _steps(runs)
    absolute = _pivot(steps, _valid(steps, _throughput(steps)))
    notes = _notes(steps, _throughput(steps), _fmt).reindex(index=absolute.index, columns=absolute.columns)
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

    def color(v: object) -> str:
        if not isinstance(v, float) or pd.isna(v):
            return ""
        return RED if v <= 0.95 else GREEN if v >= 1.05 else GREY

    ratio = lambda v: "" if v is None or pd.isna(v) else f"{v:.2f}"  # noqa: E731
    notes = notes.map(lambda n: n.split(":")[0] if isinstance(n, str) else n)
    styler, notes = _marked(frame, notes, ratio)
    styler = styler.map(color)
    return Table(f"Throughput relative to {base}", frame, styler, notes)


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


def what_differs(runs: RunsLike) -> Table:
    """Host facts and server settings whose values differ between the runs
    (facts sampled at a moment, such as swap in use, left out). Rows are
    (scope, name), columns the runs."""
    items: list[Union[Results, str, Path]] = [runs] if isinstance(runs, (Results, str, Path)) else list(runs)
    loaded = [r if isinstance(r, Results) else load(r) for r in items]
    names = labels(loaded)
    config = pd.concat([r.config for r in loaded], ignore_index=True)
    config = config[config["source"] != "sampled"]
    wide = config.assign(label=config["run_id"].map(names)).pivot_table(
        index=["scope", "name"], columns="label", values="value", aggfunc="first", sort=False
    )
    wide = wide.reindex(columns=[n for n in dict.fromkeys(names.values()) if n in wide.columns])
    differs = wide.apply(lambda row: row.fillna("(absent)").nunique() > 1, axis=1)
    frame = wide[differs].fillna("(absent)")
    styler = frame.style
    return Table(f"What differs between the runs ({len(frame)} settings)", frame, styler)


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
    (run, step) for every step with engine statistics)."""
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

    return Table(title, frame, frame.style.format(fmt))


ALL: dict[str, Callable[[RunsLike], Table]] = {
    "throughput": throughput,
    "relative": relative,
    "background_inserts": background_inserts,
    "latency": latency,
    "what_differs": what_differs,
    "engine": engine,
}
"""Every table, by name."""


def all_tables(runs: RunsLike, base: Optional[str] = None) -> list[Table]:
    """The report's tables, in the published reports' order."""
    steps = _steps(runs)
    tables = [what_differs(runs), throughput(runs), relative(runs, base)]
    if steps["step"].str.match(r"q[rp]\d+$").any():
        tables.append(background_inserts(runs))
    if "user_bytes_written" in steps.columns and steps["user_bytes_written"].notna().any():
        tables.append(engine(runs))
    tables += [latency(runs), latency(runs, "query")]
    return tables

