"""The sysbench microbenchmark suite as its published reports summarize it:
relative QPS per microbenchmark in four groups (:func:`sysbench_relative`),
absolute QPS and events/s (:func:`sysbench_throughput`) and the hardware
efficiency per statement (:func:`sysbench_efficiency`).

The rows are the microbenchmarks the suite reports: its warm-ups
(``.warm``, ``.warmpre``) ran, and the generic tables show them, but their
figures are not the suite's results. The ``.pre`` variants (run before the
writes) are reported. Rows come grouped as the published charts group them
(:data:`SB_GROUPS`), in the order the runs ran them within a group; the
group of each microbenchmark is the core's (:func:`ibench._native.sysbench_step`).
"""

from __future__ import annotations

from typing import Optional

import pandas as pd
from pandas.io.formats.style import Styler

from ibench import _native
from ibench.tables._common import (
    RunsLike,
    Table,
    _fmt,
    _loaded,
    _marked,
    _run_order,
    _steps,
    _sysbench_kind,
    _sysbench_step,
)
from ibench.tables._efficiency import _fmt_small, _ratio_styler, efficiency
from ibench.tables._relative import READING, _relative_styler, _title, relative
from ibench.tables._repeats import _per_group, _repeats, _run_counts
from ibench.tables._throughput import _repeats_said, _throughput


SB_GROUPS = {
    "point": "point queries",
    "range": "range queries without aggregation",
    "range-aggregate": "range queries with aggregation",
    "write": "writes",
}
"""The four groups the published posts chart, in their order, with what
each holds."""

LOAD_GROUP = "load"
"""The efficiency tables' group of the load and create-index steps (the
published HW summaries start with the load)."""

WARM_UPS = ("warm", "warmpre")
"""The variants that warm the server up: they run, the suite reports nothing of them."""

SCAN_NOTE = (
    "scan: ibench reports scans (statements) per second over all clients; the published figure is thousands "
    "of rows per second per thread ((rows per table ÷ 1000) ÷ the mean scan time). Between runs of the same "
    "table size and clients the ratios are the same."
)
"""What scan's figure is, under every table that shows it."""


def _reported_group(step: str) -> Optional[str]:
    """The group of a microbenchmark the suite reports; None for its
    warm-ups, its other steps (load, create-index, postwrite) and steps of
    other families."""
    facts = _sysbench_step(step)
    if facts is None or facts["kind"] != "microbenchmark" or facts["variant"] in WARM_UPS:
        return None
    return str(facts["group"])


def _test(step: str) -> Optional[str]:
    """A sysbench microbenchmark's test (its name without variant and range)."""
    facts = _sysbench_step(step)
    return None if facts is None else str(facts.get("test"))


def _check_group(group: Optional[str], extra: tuple[str, ...] = ()) -> None:
    """A ConfigError unless ``group`` is None or one of :data:`SB_GROUPS` (or ``extra``)."""
    if group is not None and group not in (*SB_GROUPS, *extra):
        raise _native.ConfigError(f"invalid group: {group!r}; expected one of {', '.join((*SB_GROUPS, *extra))}")


def _rows(steps: pd.DataFrame, group: Optional[str] = None) -> list[tuple[str, str]]:
    """(group, step) of the reported microbenchmarks among ``steps``: the
    groups in :data:`SB_GROUPS`' order, the steps in run order within each;
    only ``group``'s when given."""
    found = [(g, step) for step in _run_order(steps) if (g := _reported_group(step)) is not None]
    return [(g, step) for want in ([group] if group else SB_GROUPS) for g, step in found if g == want]


def sysbench_groups(runs: RunsLike) -> dict[str, list[str]]:
    """The microbenchmarks the suite reports among the runs' steps, by
    group (:data:`SB_GROUPS`' order; groups without one left out), in run
    order: what :func:`sysbench_relative` and the report chart."""
    out: dict[str, list[str]] = {}
    for group, step in _rows(_steps(runs)):
        out.setdefault(group, []).append(step)
    return out


def _what(group: Optional[str]) -> str:
    """How a title names its rows: ``sysbench point queries``, the load, or all."""
    if group == LOAD_GROUP:
        return "sysbench load"
    return f"sysbench {SB_GROUPS[group]}" if group else "sysbench microbenchmarks"


def _one_group(styler: Styler, group: Optional[str]) -> Styler:
    """``styler`` without its ``group`` column when the table holds one
    group: its title names it."""
    return styler.hide(axis="index", level="group") if group is not None else styler


def _index(rows: list[tuple[str, str]]) -> pd.MultiIndex:
    return pd.MultiIndex.from_tuples(rows, names=["group", "step"])


def _by_step(frame: pd.DataFrame, rows: list[tuple[str, str]], labels: list[str]) -> pd.DataFrame:
    """``frame`` (a row per label, a column per step) turned to a row per
    (group, step) of ``rows`` and a column per label of ``labels``."""
    out = frame.reindex(index=labels, columns=[step for _, step in rows]).T
    out.index = _index(rows)
    out.columns = pd.Index(labels, name="label")
    return out


def sysbench_relative(
    runs: RunsLike, base: Optional[str] = None, group: Optional[str] = None, ci: Optional[float] = 0.95
) -> Table:
    """QPS of each microbenchmark relative to the ``base`` label (default
    the first), as the published reports show it: rows are the reported
    microbenchmarks (index levels ``group`` and ``step``, the groups in
    :data:`SB_GROUPS`' order, the steps in run order; only ``group``'s when
    given), columns the labels other than the base.

    Each cell is :func:`relative`'s, with its ``ci`` interval (``low``,
    ``high``, ``method`` and ``why`` on the Table, in this orientation):
    the ratio of the means of the repeats' QPS, or with one run per side the
    interval of the ratio of the statements' per-interval series; a ratio
    without an interval is marked † and never coloured as significant. A
    microbenchmark that did not run its course shows its status. Raises
    ConfigError when the runs have no reported microbenchmark (of
    ``group``) or a single label."""
    _check_group(group)
    loaded = _loaded(runs)
    t = relative(loaded, base, ci)
    base = base if base is not None else str(t.frame.index[0])
    rows = [(g, step) for g, step in _rows(_steps(loaded), group) if step in t.frame.columns]
    if not rows:
        raise _native.ConfigError(f"invalid runs: no {_what(group)} among their steps")
    # A label that ran none of the rows (another family's runs) is no column.
    ran = t.frame[[step for _, step in rows]].notna().any(axis=1)
    if t.notes is not None:
        ran |= t.notes[[step for _, step in rows]].notna().any(axis=1)
    others = [str(label) for label in t.frame.index if label != base and ran[label]]
    if not others:
        raise _native.ConfigError(
            f"invalid runs: only {base!r} ran {_what(group)}; relative QPS needs a second label that ran them"
        )

    def turned(f: Optional[pd.DataFrame]) -> Optional[pd.DataFrame]:
        return None if f is None else _by_step(f, rows, others)

    frame = _by_step(t.frame, rows, others)
    notes = _by_step(t.notes, rows, others) if t.notes is not None else frame.map(lambda _: None)
    low, high, method, why = turned(t.low), turned(t.high), turned(t.method), turned(t.why)
    nothing = pd.DataFrame(float("nan"), index=frame.index, columns=frame.columns)
    styler = _relative_styler(frame, low if low is not None else nothing, high if high is not None else nothing, notes, why)
    # How to read the cells goes under the table: as part of the title it
    # would make a table of one column as wide as the page.
    title = _title(f"{_what(group)}: QPS", base, ci, reading=False)
    footnotes = [READING[0].upper() + READING[1:] + "."] if ci is not None else []
    return Table(title, frame, _one_group(styler, group), notes, low=low, high=high, method=method, why=why,
                 footnotes=footnotes)


def sysbench_throughput(runs: RunsLike, group: Optional[str] = None) -> Table:
    """QPS (statements/s, BEGIN and COMMIT included, as sysbench's
    "queries:" line and the published QPS) and events/s (sysbench's
    transactions/s) of each reported microbenchmark per label, the mean of
    a label's repeats: rows as :func:`sysbench_relative`'s, columns
    (``QPS`` or ``events/s``, label). A microbenchmark that did not run its
    course (in any repeat) shows its status. The scan's figure differs from
    the published one: a footnote says how."""
    _check_group(group)
    steps = _steps(runs)
    rows = _rows(steps, group)
    if not rows:
        raise _native.ConfigError(f"invalid runs: no {_what(group)} among their steps")
    # A label that ran none of the rows (another family's runs) is no column.
    ran = set(steps.loc[steps["step"].isin([step for _, step in rows]), "group"])
    labels = [label for label in _run_counts(steps) if label in ran]
    frames: list[pd.DataFrame] = []
    notes: list[pd.DataFrame] = []
    for name, values in (("QPS", _throughput(steps)), ("events/s", steps["eps"].astype(float))):
        figures, said = _per_group(steps, _repeats(steps, values), lambda c: c.mean)
        for part, parts in ((_by_step(figures, rows, labels), frames), (_by_step(said, rows, labels), notes)):
            part.columns = pd.MultiIndex.from_product([[name], labels], names=["figure", "label"])
            parts.append(part)
    frame, all_notes = pd.concat(frames, axis=1), pd.concat(notes, axis=1)
    styler, all_notes = _marked(frame, all_notes, _fmt)
    title = f"{_what(group)}: QPS and events/s" + _repeats_said(_run_counts(steps))
    scans = any(_test(step) == "scan" for _, step in rows)
    return Table(title, frame, _one_group(styler, group), all_notes, footnotes=[SCAN_NOTE] if scans else [])


def sysbench_efficiency(runs: RunsLike, base: Optional[str] = None, group: Optional[str] = None) -> Table:
    """:func:`efficiency` of the sysbench steps, as the published HW
    summaries list them: the load (``load`` and ``create-index``: costs per
    row) first, then each reported microbenchmark (costs per statement, the
    client's and the server's CPU apart), grouped as in
    :func:`sysbench_relative`; only ``group``'s rows when given (one of
    :data:`SB_GROUPS` or ``load``). Rows are (group, step, run), each value
    with its ratio to the ``base`` run's in the same step; columns no row
    has are left out."""
    _check_group(group, (LOAD_GROUP,))
    loaded = _loaded(runs)
    steps = _steps(loaded)
    load = [(LOAD_GROUP, s) for s in _run_order(steps) if _sysbench_kind(s) in ("load", "create-index")]
    rows = [r for r in [*load, *_rows(steps)] if group is None or r[0] == group]
    t = efficiency(loaded, base)
    assert t.notes is not None and t.ratios is not None  # efficiency always sets both
    position = {step: i for i, (_, step) in enumerate(rows)}
    of_group = dict((step, g) for g, step in rows)
    keys = [k for k in t.frame.index if k[0] in position]
    if not keys:
        raise _native.ConfigError(f"invalid runs: no {_what(group)} with hardware figures among their steps")
    # Stable: the runs keep efficiency's order within a step.
    keys = sorted(keys, key=lambda k: position[k[0]])
    index = pd.MultiIndex.from_tuples([(of_group[s], s, label) for s, label in keys], names=["group", "step", "label"])
    frame, ratios, notes = (f.loc[keys].set_axis(index) for f in (t.frame, t.ratios, t.notes))
    keep = [c for c in frame.columns if frame[c].notna().any() or notes[c].notna().any()]
    frame, ratios, notes = frame[keep], ratios[keep], notes[keep]
    named = base if base is not None else str(steps["label"].iloc[0])  # efficiency's default: the first run
    per = {LOAD_GROUP: "per row", None: "per statement (the load's: per row)"}.get(group, "per statement")
    title = f"{_what(group)}: hardware efficiency {per}, each value with its ratio to {named} (costs: red ≥ 1.05, green ≤ 0.95)"
    styler = _one_group(_ratio_styler(frame, ratios, notes, _fmt_small), group)
    return Table(title, frame, styler, notes, ratios)
