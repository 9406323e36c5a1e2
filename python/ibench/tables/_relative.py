"""Throughput relative to a base label, each ratio with its confidence
interval (:func:`relative`)."""

from __future__ import annotations

from typing import Callable, Optional

import numpy as np
import numpy.typing as npt
import pandas as pd
from pandas.io.formats.style import Styler

from ibench import _native, stats
from ibench.tables._common import (
    GREEN,
    GREY,
    NOT_OK,
    NOT_SIGNIFICANT,
    RED,
    RunsLike,
    Table,
    _interval_texts,
    _loaded,
    _steps,
)
from ibench.tables._repeats import _per_group, _Repeats, _repeats
from ibench.tables._throughput import _all_clients, _series, _throughput


def _interval(
    a: _Repeats, b: _Repeats, ratio: float, ci: float, series: Callable[[str], npt.NDArray[np.float64]]
) -> tuple[float, float, str] | str:
    """The ``ci`` interval of ``ratio`` (b's figure over a's) and its method:
    ``repeats`` with 2 or more runs per side (ratio of means; its estimate is
    ``ratio``), ``series`` with one run per side (the ratio of the runs'
    per-interval series, its interval's relative width put around
    ``ratio``: the figures' ratio stays the cell's value). Where there is
    none, why: one run on one side only (neither method applies), or values
    that allow no estimate (a series under 4 intervals, a zero mean)."""
    if len(a.values) >= 2 and len(b.values) >= 2:
        method = "repeats"
    elif len(a.values) == 1 and len(b.values) == 1:
        method = "series"
    else:
        return "one run on one side and repeats on the other: neither interval applies"
    try:
        if method == "repeats":
            r = stats.ratio_of_means(a.values, b.values, ci)
            return r.low, r.high, method
        r = stats.ratio_of_series(series(a.run_ids[0]), series(b.run_ids[0]), ci)
        return ratio * r.low / r.estimate, ratio * r.high / r.estimate, method
    except ValueError as e:
        if method == "series":
            return f"one run per side and a step too short for a series interval ({e})"
        return f"no interval from the repeats ({e})"


def _intervals(
    frame: pd.DataFrame,
    notes: pd.DataFrame,
    cells: dict[tuple[str, str], _Repeats],
    base: str,
    ci: float,
    series: Callable[[str, str], npt.NDArray[np.float64]],
) -> tuple[pd.DataFrame, pd.DataFrame, pd.DataFrame, pd.DataFrame]:
    """``low``, ``high`` and ``method`` of every ratio in ``frame`` (but the
    base's own row, and cells with a note), and ``why`` a ratio has none."""
    low = pd.DataFrame(float("nan"), index=frame.index, columns=frame.columns)
    high = low.copy()
    method = pd.DataFrame(None, index=frame.index, columns=frame.columns, dtype=object)
    why = method.copy()
    for step in frame.columns:
        for group in frame.index:
            ratio = frame.at[group, step]
            if group == base or pd.isna(ratio) or isinstance(notes.at[group, step], str):
                continue
            found = _interval(cells[(base, step)], cells[(group, step)], float(ratio), ci, lambda r: series(r, step))
            if isinstance(found, str):
                why.at[group, step] = found
            else:
                low.at[group, step], high.at[group, step], method.at[group, step] = found
    return low, high, method, why


NO_INTERVAL = "†"
"""Marks a ratio without an interval: not shown to be significant."""


def _title(what: str, base: str, ci: Optional[float], reading: bool = True) -> str:
    """A relative table's title: ``what`` relative to ``base``, and (with
    ``reading``) how to read its intervals (:data:`READING`)."""
    if ci is None:
        return f"{what} relative to {base}"
    title = f"{what} relative to {base}, ± the {ci * 100:g}% confidence interval"
    return f"{title}; {READING}" if reading else title


READING = f"in italics (grey): not significant, the interval contains 1.0 or, marked {NO_INTERVAL}, there is none"
"""How to read a relative table's cells."""


def _relative_styler(
    frame: pd.DataFrame, low: pd.DataFrame, high: pd.DataFrame, notes: pd.DataFrame, why: Optional[pd.DataFrame]
) -> Styler:
    """Ratios with their intervals: not significant (the interval contains
    1.0) grey italics; else red at or below 0.95, green at or above 1.05,
    grey between; a noted cell shows its note, struck through. A ratio with
    a reason in ``why`` has no interval: it is marked † and styled as not
    shown to be significant, its reason a tooltip."""
    texts = _interval_texts(frame, low, high)
    without = why.notna() if why is not None else pd.DataFrame(False, index=frame.index, columns=frame.columns)

    def style(v: float, lo: float, hi: float, note: object, unmeasured: bool) -> str:
        if isinstance(note, str):
            return NOT_OK
        if pd.isna(v):
            return ""
        if unmeasured or (not pd.isna(lo) and not pd.isna(hi) and lo <= 1.0 <= hi):
            return NOT_SIGNIFICANT
        return RED if v <= 0.95 else GREEN if v >= 1.05 else GREY

    rows = zip(frame.to_numpy(), low.to_numpy(), high.to_numpy(), notes.to_numpy(), without.to_numpy())
    styles = pd.DataFrame(
        [[style(*cell) for cell in zip(*row)] for row in rows], index=frame.index, columns=frame.columns
    )
    texts = texts.where(~without, texts + NO_INTERVAL)
    shown = texts.where(notes.isna(), notes)
    styler = shown.style.apply(lambda _: styles, axis=None)
    if why is not None and without.to_numpy().any():
        styler = styler.set_tooltips(why.map(lambda w: f"no interval: {w}" if isinstance(w, str) else ""))
    return styler


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
    Markdown, italics); significant ratios are red at or below 0.95, green
    at or above 1.05, grey between. A ratio that has no interval is never
    coloured as if it were significant: it is marked † and styled as not
    significant, and ``why`` on the Table says why it has none (one run on
    one side only, a step too short for a series interval, ...).
    ``ci=None`` computes no intervals (the colours alone, as before
    intervals existed).

    A step that did not run its course (in either side, in any repeat) has
    no ratio: it shows its status."""
    if ci is not None and not 0 < ci < 1:
        raise _native.ConfigError(f"invalid ci: {ci!r}; expected a level between 0 and 1 (e.g. 0.95), or None")
    loaded = _loaded(runs)
    steps = _steps(loaded)
    cells = _repeats(steps, _throughput(steps))
    absolute, notes = _per_group(steps, cells, lambda c: c.mean)
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
        styler = _relative_styler(frame, nothing, nothing, notes, None)
        return Table(_title("Throughput", base, ci), frame, styler, notes)
    rows: list[pd.DataFrame] = []

    def series(run_id: str, step: str) -> npt.NDArray[np.float64]:
        if not rows:
            rows.append(_all_clients(loaded))  # read once, and only when a cell needs a series
        return _series(rows[0], run_id, step)

    low, high, method, why = _intervals(frame, notes, cells, base, ci, series)
    title = _title("Throughput", base, ci)
    styler = _relative_styler(frame, low, high, notes, why)
    return Table(title, frame, styler, notes, low=low, high=high, method=method, why=why)
