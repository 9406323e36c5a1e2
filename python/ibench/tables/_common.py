"""What every table family shares: the :class:`Table` and its styling,
the runs' steps with their labels (:func:`_steps`), the benchmark's step
order, and the pivots and notes that strike through the cells of steps that
did not run their course."""

from __future__ import annotations

from dataclasses import dataclass, field
from functools import lru_cache
from html import escape
from pathlib import Path
from typing import Callable, Mapping, Optional, Sequence, Union

import numpy as np
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


@lru_cache(maxsize=None)
def _sysbench_step(step: str) -> Optional[Mapping[str, object]]:
    """The core's facts about a sysbench step (:func:`ibench._native.sysbench_step`:
    its kind, and for a microbenchmark its test, group, variant, ...); None
    for a step of another family. Cached: the tables ask once per cell."""
    return _native.sysbench_step(step)


def _sysbench_kind(step: str) -> Optional[str]:
    """``load``, ``create-index``, ``postwrite`` or ``microbenchmark`` for a
    sysbench step; None for a step of another family."""
    facts = _sysbench_step(step)
    return None if facts is None else str(facts["kind"])

RED, GREEN, GREY = "background-color: #f4cccc", "background-color: #d9ead3", "color: #999999"

NOT_OK = "color: #999999; text-decoration: line-through; font-style: italic"
"""A cell of a step that did not run its course."""

NOT_SIGNIFICANT = "color: #999999; font-style: italic"
"""A ratio whose confidence interval contains 1.0 (Markdown: in italics)."""

WARNING = "color: #b45f06; margin: 0.3em 0"
"""A warning line under a table (e.g. noise larger than a difference reported)."""

FOOTNOTE = "color: #555555; font-size: 90%; margin: 0.3em 0"
"""A footnote under a table (what a figure means)."""


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
    why: Optional[pd.DataFrame] = None
    """Per ratio that has no interval (but the base's own row and noted
    cells), why it has none: such a ratio is not shown to be significant,
    whatever its size. None where it has one."""
    warnings: list[str] = field(default_factory=list)
    """Lines shown under the table, in HTML and Markdown (e.g. :func:`noise`:
    where the run-to-run spread exceeds a difference being reported)."""
    footnotes: list[str] = field(default_factory=list)
    """Plain lines under the table, after the warnings: what a figure means
    where it differs from what a reader may expect (e.g. sysbench's scan)."""
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
        lines += [f'<p class="footnote" style="{FOOTNOTE}">{escape(n)}</p>' for n in self.footnotes]
        return html + "".join(lines)

    def to_markdown(self) -> str:
        """A Markdown table with the same numbers (rounded), its title above,
        its warnings below; a ratio that is not significant in italics."""
        if self.low is not None and self.high is not None:
            shown = _interval_texts(self.frame, self.low, self.high, markdown=True)
            if self.why is not None:
                without = self.why.reindex_like(shown).notna()
                shown = shown.where(~without, "*" + shown + "†*")
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
        if isinstance(shown.columns, pd.MultiIndex):
            shown.columns = pd.Index([" ".join(map(str, key)) for key in shown.columns])
        # The cells are text already: tabulate re-reading them as numbers would drop their decimals.
        align = ["right" if pd.api.types.is_numeric_dtype(self.frame[c]) else "left" for c in self.frame.columns]
        table: str = shown.to_markdown(disable_numparse=True, colalign=("left", *align))
        warnings = "".join(f"\n\n⚠ {w}" for w in self.warnings)
        footnotes = "".join(f"\n\n{n}" for n in self.footnotes)
        return f"**{self.title}**\n\n{table}{warnings}{footnotes}"

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
    """Steps in the benchmark's order; key/value and sysbench steps in the order they ran."""
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


def _partial_notes(steps: pd.DataFrame, frame: pd.DataFrame, fmt: Callable[[object], str]) -> pd.DataFrame:
    """Per cell of ``frame``, whose rows are those of ``steps``: ``status:
    figure`` where the row's step did not run its course and the cell holds
    a figure, else None."""
    rows = zip(steps["status"], _not_ok(steps).to_numpy(), frame.to_numpy(dtype=object))
    return pd.DataFrame(
        [[f"{status}: {fmt(v)}" if bad and not pd.isna(v) else None for v in row] for status, bad, row in rows],
        index=frame.index,
        columns=frame.columns,
        dtype=object,
    )


def _blank_rows(frame: pd.DataFrame, rows: np.ndarray) -> pd.DataFrame:
    """``frame`` with the ``rows`` (a boolean per row) set to NaN."""
    return frame.where(~np.broadcast_to(rows[:, None], frame.shape))


def _drop_empty(frame: pd.DataFrame, notes: pd.DataFrame) -> tuple[pd.DataFrame, pd.DataFrame]:
    """``frame`` and its ``notes`` without the columns where neither holds
    anything (steps that no row has a figure or a note for)."""
    keep = [c for c in frame.columns if frame[c].notna().any() or notes[c].notna().any()]
    return frame[keep], notes[keep]


def _marked(frame: pd.DataFrame, notes: pd.DataFrame, fmt: Callable[[object], str]) -> tuple[Styler, pd.DataFrame]:
    """A styler of ``frame`` whose not-ok cells show their note, struck through."""
    notes = notes.reindex(index=frame.index, columns=frame.columns)
    shown = frame.astype(object).where(notes.isna(), notes)
    styler = shown.style.format(lambda v: v if isinstance(v, str) else fmt(v))
    styler = styler.apply(lambda _: notes.map(lambda n: NOT_OK if isinstance(n, str) else ""), axis=None)
    return styler, notes


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
