"""A self-contained HTML report: the report tables and the plots, embedded.

    python -m ibench.report RUN_DIR... [--base LABEL] -o report.html

(`ibench report` runs this.) The page follows the published reports: the
summary tables and hardware efficiency first, then per step one chart with
the runs side by side per operation, the server's gauges, the response-time
buckets and the query latency percentiles; what differs between the runs
comes last, collapsed.

Runs sharing a label are repeats: the throughput table shows their mean,
the relative table each ratio with its 95% confidence interval (±; not
significant in grey italics), and, when some label has repeats, the
run-to-run spread (coefficient of variation) follows it, with a warning
line for each step where a spread exceeds the difference reported. The
relative bars carry the intervals as error bars.

Beside each significant ratio of the relative table (its interval excludes
1; a ratio without an interval gets none) comes a collapsed "why" section
(:func:`ibench.explain`): the functions, waits and server counters per
operation that changed most against the base, and a differential flame
graph. Each step with CPU profiles (``profile = "perf"``) has a flame graph
per run, collapsed too. The flame graphs are interactive SVG, embedded.

Runs of the sysbench suite get a section as its published reports: per
group of microbenchmarks (point queries, range queries without and with
aggregation, writes) the relative QPS table, its horizontal bars and a
"why" per significant ratio; the absolute QPS and events/s; the hardware
efficiency per statement, the load's first. When every step is
sysbench's, that section opens the page, and the generic tables and each
step's charts follow collapsed.
"""

from __future__ import annotations

import argparse
import base64
import html
import io
import json
import multiprocessing as mp
import os
import sys
from pathlib import Path
from typing import Callable, Collection, Optional, Sequence

from matplotlib.figure import Figure

import pandas as pd

from ibench import _native, plots, tables
from ibench._explain import Explanation, explain
from ibench._cli import exit_code
from ibench.results import Results, _run_dirs, load

DPI = 72
"""Figures are 8 in wide: 576 px, the page's width, and the cheapest to draw
and to embed (a dozen runs' report draws a few dozen figures)."""


def _png(fig: Figure) -> str:
    buf = io.BytesIO()
    fig.savefig(buf, format="png", dpi=DPI)
    return '<img alt="plot" src="data:image/png;base64,' + base64.b64encode(buf.getvalue()).decode() + '">'


def _ops(runs: Sequence[Results], step: str) -> list[str]:
    """Which of insert, query and statement (sysbench's microbenchmarks)
    ran in ``step`` in any of the runs."""
    present = set()
    for r in runs:
        present |= set(r.intervals.loc[r.intervals["step"] == step, "op"])
    return [op for op in ("insert", "query", "statement") if op in present]


def _bucket_ops(runs: Sequence[Results], step: str) -> list[str]:
    """The operations whose response-time buckets the step shows: each of
    insert, delete, query and statement that any run measured in it (a q
    step's queries and its background inserts and deletes; a load step's
    inserts and deletes; a sysbench microbenchmark's statements; none for
    l.x and wait)."""
    present = set()
    for r in runs:
        h = r.histograms
        present |= set(h.loc[(h["step"] == step) & (h["time"] == "response"), "op"])
    return [op for op in ("query", "insert", "delete", "statement") if op in present]


WHY_ROWS = 15
"""Rows of each "why" table: the largest changes."""


def _svg(svg: str) -> str:
    """An SVG embedded in the page as an object of its own: its script (zoom,
    search) runs, and its element ids do not meet another graph's."""
    data = base64.b64encode(svg.encode()).decode()
    return f'<object type="image/svg+xml" style="width:100%" data="data:image/svg+xml;base64,{data}"></object>'


def _profiled_role(runs: Sequence[Results], step: str) -> Optional[str]:
    """``server`` when some run profiled the server in ``step``, else
    ``client`` when some profiled ibench's own process, else None."""
    roles: set[str] = set()
    for r in runs:
        p = r.profiles
        roles |= set(p.loc[p["step"] == step, "role"])
    return next((role for role in ("server", "client") if role in roles), None)


def _flamegraphs(runs: Sequence[Results], step: str) -> str:
    """Each run's CPU profiles of ``step``, a collapsed flame graph each."""
    names = tables.labels(list(runs))
    parts = []
    for r in runs:
        p = r.profiles
        for run_id, role in dict.fromkeys(zip(p.loc[p["step"] == step, "run_id"], p.loc[p["step"] == step, "role"])):
            svg = plots.flamegraph(r, step, role, run=str(run_id))
            summary = f"CPU profile: {names.get(str(run_id), run_id)} ({role})"
            parts.append(f"<details><summary>{html.escape(summary)}</summary>{_svg(svg)}</details>")
    return "".join(parts)


def _step_section(runs: Sequence[Results], step: str) -> str:
    """One step: the runs side by side per operation, its gauges, its
    response-time buckets and, for q steps, the query percentiles; empty
    when the step has none of them."""
    parts = [f"<h3>{html.escape(step)}</h3>"]
    for op in _ops(runs, step):
        parts.append(_png(plots.compare_over_time(runs, step, op)))
    gauges = plots.gauges_over_time(runs, step)
    if gauges is not None:
        parts.append(_png(gauges))
    for op in _bucket_ops(runs, step):
        parts.append(f"<section>{tables.buckets(runs, step, op).to_html()}</section>")
    if step.startswith("q") and "query" in _ops(runs, step):
        parts.append(_png(plots.latency_distribution(list(runs), step, "query")))
    parts.append(_flamegraphs(runs, step))
    if len(parts) == 1:
        return ""  # wait, with nothing to chart: no section
    if tables._sysbench_kind(step) is not None:
        # The suite has 42 steps: their charts open would make a page of
        # some 150 figures around the sysbench section's summary. Each
        # step's stays a click away, its name the summary.
        return f"<details><summary>{html.escape(step)}</summary>{''.join(parts[1:])}</details>"
    return "".join(parts)


def _why_table(frame: pd.DataFrame, title: str) -> str:
    """One "why" table, numbers rounded to what a reader compares."""
    if frame.empty:
        return ""
    shown = frame.copy()
    for c in shown.columns:
        if c.endswith("ratio"):
            shown[c] = shown[c].map(lambda v: "" if pd.isna(v) else f"{v:.2f}")
        else:
            shown[c] = shown[c].map(lambda v: "" if pd.isna(v) else f"{v:,.3g}")
    return f"<section><p><b>{html.escape(title)}</b></p>{shown.to_html(escape=True)}</section>"


def _why_body(e: Explanation, roles: Optional[pd.DataFrame] = None) -> str:
    """The explain tables of one cell (the CPU by thread role first: which
    side changed; ``roles`` when ``e`` is narrowed to one of them), and its
    differential flame graph."""
    by_role = e.roles if roles is None else roles
    parts = [
        _why_table(by_role.head(WHY_ROWS), "CPU µs per operation by thread role (foreground: serving the "
                   "connections; background: working behind them), largest changes first"),
        _why_table(e.paths.head(WHY_ROWS), f"CPU µs per operation by call path ({e.whose}): functions by their "
                   "inclusive change, largest first"),
        _why_table(e.functions.head(WHY_ROWS), f"CPU µs per operation by function ({e.whose}): their own "
                   "(exclusive) change, largest first"),
        _why_table(e.waits.head(WHY_ROWS), "µs waited per operation by wait event, largest changes first"),
        _why_table(e.counters.head(WHY_ROWS), "Server counters per operation, largest relative changes first"),
    ]
    diff = e.flamegraph()
    if diff:
        parts.append(f"<p><b>Differential flame graph</b>: {html.escape(e.other)}'s stacks; red: more CPU per "
                     f"operation than {html.escape(e.base)}, blue: less.</p>{_svg(diff)}")
    if not any(parts):
        return '<p>Nothing recorded to explain it: run with profile = "perf" (or "waits").</p>'
    return "".join(parts)


def _explained(runs: list[Results], step: str, base: str, other: str, side: str) -> str:
    """A why section's body: the CPU per operation by thread role, then the
    call paths, functions and flame graph within the kind of thread
    (foreground or background) whose CPU per operation changed most, when
    the profiles know their threads; else the whole side's."""
    whole = explain(runs, step, base=base, other=other, role=side, top=WHY_ROWS)
    roles = whole.roles
    if roles.empty:
        return _why_body(whole)
    mine = roles[(roles.index.get_level_values("side") == side)
                 & roles.index.get_level_values("kind").isin(["foreground", "background"])]
    if mine.empty:
        return _why_body(whole)
    changes = mine["change"].groupby(level="kind").sum()
    kind = str(changes.abs().idxmax())
    try:
        narrowed = explain(runs, step, base=base, other=other, role=kind, side=side, top=WHY_ROWS)
    except _native.ConfigError:  # profiles without their threads (an older ibench's)
        return _why_body(whole)
    return _why_body(narrowed, roles)


def _by_label(frame: pd.DataFrame) -> pd.DataFrame:
    """A relative table's frame with a row per label and a column per step,
    as :func:`tables.relative` has it, whichever the table's orientation
    (:func:`tables.sysbench_relative`: a row per (group, step))."""
    if "step" not in frame.index.names:
        return frame
    return frame.set_axis(frame.index.get_level_values("step")).T


def _why(
    runs: list[Results], relative: tables.Table, base: Optional[str], skip: Collection[str] = (),
    heading: str = "<h2>Why</h2>",
) -> str:
    """A collapsed "why" section for each significant ratio of ``relative``
    (its interval excludes 1) but those of the steps in ``skip``, after
    ``heading``; ratios without an interval get none."""
    significant = relative.significant
    if significant is None or relative.low is None or relative.high is None:
        return ""
    frame, low, high, significant = (_by_label(f) for f in (relative.frame, relative.low, relative.high, significant))
    # The tables' default base: the first label (not a row of a sysbench table).
    named_base = base if base is not None else str(tables._steps(runs)["group"].iloc[0])
    parts = []
    for step in frame.columns:
        if step in skip:
            continue
        role = _profiled_role(runs, step) or "server"
        for group in frame.index:
            flag = significant.at[group, step]
            if pd.isna(flag) or not bool(flag):
                continue
            ratio, lo, hi = (float(t.at[group, step]) for t in (frame, low, high))
            summary = f"why: {step}, {group} at {ratio:.2f} [{lo:.2f}, {hi:.2f}] of {named_base}"
            body = _explained(runs, step, named_base, str(group), role)
            parts.append(f"<details><summary>{html.escape(summary)}</summary>{body}</details>")
    return heading + "".join(parts) if parts else ""


def _differences(runs: Sequence[Results]) -> str:
    """What differs between the runs, collapsed: a sentence saying what was
    compared, a table per scope, and the settings different by nature."""
    d = tables.differences(list(runs))
    parts = [f"<p>{html.escape(d.summary)}</p>"]
    if not d.count:
        parts.append("<p>Nothing differs.</p>")
    parts += [f"<section>{t.to_html()}</section>" for t in d.by_scope]
    if d.by_nature is not None:
        parts.append(f"<section>{d.by_nature.to_html()}</section>")
    summary = f"What differs between the runs ({d.count} facts and settings)"
    return f"<h2>Setup</h2><details><summary>{summary}</summary>{''.join(parts)}</details>"


_FORKED_RUNS: list[Results] = []
"""The runs a forked worker draws sections of (inherited, never pickled)."""


def _forked_section(step: str) -> str:
    return _step_section(_FORKED_RUNS, step)


def _start_sections(
    runs: list[Results], steps: list[str], jobs: int
) -> Callable[[], list[str]]:
    """Starts drawing the steps' sections and returns what waits for them.
    With ``jobs`` > 1 and fork available, the sections are drawn by that many
    forked processes, one step at a time each (the charts are most of the
    report's time; the page's tables are made meanwhile); else here, when
    waited for."""
    global _FORKED_RUNS
    if jobs <= 1 or len(steps) <= 1 or "fork" not in mp.get_all_start_methods():
        return lambda: [_step_section(runs, step) for step in steps]
    _FORKED_RUNS = runs
    pool = mp.get_context("fork").Pool(min(jobs, len(steps)))
    pending = pool.map_async(_forked_section, steps, chunksize=1)

    def wait() -> list[str]:
        global _FORKED_RUNS
        try:
            return list(pending.get())
        finally:
            pool.close()
            pool.join()
            _FORKED_RUNS = []

    return wait


WORKLOADS = {
    "iibench": "compat = iibench: the reference client's statements and data",
    "ibench": "compat = ibench: ibench's own statements and data",
}
"""How the report names each workload (docs/compat.md)."""


SYSBENCH = "the sysbench microbenchmark suite"
"""How the report names the sysbench family's workload."""


def _workload(config: str) -> str:
    """The workload a run's recorded configuration (JSON) runs."""
    c = json.loads(config)
    steps = c.get("steps", [])
    if steps and all(tables._sysbench_kind(step) is not None for step in steps):
        return SYSBENCH
    if all(step in _native.KV_STEPS for step in steps):
        return "db_bench's key/value steps"
    return WORKLOADS.get(str(c.get("compat", "ibench")), f"compat = {c.get('compat')}")


def _workloads(runs: Sequence[Results]) -> str:
    """A line saying which workload the runs run, per label when they differ."""
    labels = tables.labels(list(runs))
    by_label: dict[str, set[str]] = {}
    for r in runs:
        for row in r.runs.itertuples():
            by_label.setdefault(labels[str(row.run_id)], set()).add(_workload(str(row.config)))
    kinds = {w for ws in by_label.values() for w in ws}
    if len(kinds) == 1:
        return f"<p>Workload: {html.escape(kinds.pop())}.</p>"
    items = "".join(f"<li>{html.escape(label)}: {html.escape(', '.join(sorted(ws)))}</li>" for label, ws in by_label.items())
    return f"<p>Workloads (they differ between the runs):</p><ul>{items}</ul>"


def _section(t: tables.Table) -> str:
    return f"<section>{t.to_html()}</section>"


def _sysbench_group(runs: list[Results], base: Optional[str], group: str) -> str:
    """One group of the sysbench section: its relative QPS table, its
    chart, and a "why" for each significant ratio."""
    relative = tables.sysbench_relative(runs, base, group)
    return (
        f"<h3>{html.escape(tables.SB_GROUPS[group].capitalize())}</h3>{_section(relative)}"
        f"{_png(plots.sysbench_relative_bars(runs, base, group))}{_why(runs, relative, base, heading='')}"
    )


def _sysbench(runs: list[Results], base: Optional[str]) -> str:
    """The sysbench section, as the published reports summarize the suite:
    per group the relative QPS (a table, a chart, the whys) when two labels
    or more ran microbenchmarks, the absolute QPS and events/s, and the
    hardware efficiency per statement, the load's first, then per group.
    Empty without microbenchmarks."""
    groups = tables.sysbench_groups(runs)
    if not groups:
        return ""
    steps = tables._steps(runs)
    # Repeats of one label, or one label of sysbench beside other families' runs: nothing to compare.
    reported = {step for names in groups.values() for step in names}
    several = steps.loc[steps["step"].isin(reported), "group"].nunique() > 1
    parts = [
        "<h2>sysbench</h2><p>The microbenchmarks the suite reports, in the groups of the published charts and in "
        "run order within each: QPS counts statements, BEGIN and COMMIT included (sysbench's "
        "&quot;queries:&quot;). The warm-ups (.warm, .warmpre) ran but are not reported; the .pre microbenchmarks "
        "ran before the writes.</p>"
    ]
    if several:
        parts += [_sysbench_group(runs, base, group) for group in groups]
    parts.append("<h3>Absolute QPS</h3>" + _section(tables.sysbench_throughput(runs)))
    parts.append("<h3>Hardware efficiency</h3>")
    has_load = steps["step"].map(tables._sysbench_kind).isin(["load", "create-index"]).any()
    for group in [tables.LOAD_GROUP] * bool(has_load) + list(groups):
        parts.append(_section(tables.sysbench_efficiency(runs, base, group)))
    return "".join(parts)


def render(
    runs: Sequence[Results], base: Optional[str] = None, title: str = "ibench report", jobs: int = 1
) -> str:
    """The report as one HTML page. ``jobs`` > 1 draws the steps' charts in
    that many forked processes (``ibench report`` uses one per CPU).

    Runs with sysbench microbenchmarks get the sysbench section
    (:func:`_sysbench`). When every step is sysbench's, it comes first and
    the generic tables (a column per step, warm-ups included) follow it
    collapsed: they repeat its figures over some 40 columns."""
    runs = list(runs)
    steps = tables._steps(runs)
    sections = _start_sections(runs, tables._run_order(steps), jobs)
    parts = [f"<h1>{html.escape(title)}</h1>", _workloads(runs)]
    several = len(tables.labels(runs)) > 1
    # all_tables ends with what_differs: the page shows its readable form last.
    shown = tables.all_tables(runs, base)[:-1]
    generic = "".join(_section(t) for t in shown)
    sysbench = _sysbench(runs, base)
    if sysbench and steps["step"].map(tables._sysbench_kind).notna().all():
        summary = f"The generic tables: every step, warm-ups, load and postwrite included ({len(shown)} tables)"
        parts += [sysbench, f"<h2>All steps</h2><details><summary>{summary}</summary>{generic}</details>"]
    else:
        parts += [generic, sysbench]
    # Repeats of one label are several runs but nothing to compare: no relative chart (it would have no bar).
    if steps["group"].nunique() > 1:
        relative = next(t for t in shown if t.title.startswith("Throughput relative"))
        # The microbenchmarks have their charts and whys in the sysbench
        # section; their warm-ups, reported by none, get neither.
        skip = {s for s in relative.frame.columns if tables._sysbench_kind(s) == "microbenchmark"}
        others = [s for s in relative.frame.columns if s not in skip]
        if others:
            parts.append("<h2>Relative throughput</h2>" + _png(plots.relative_bars(runs, base, others)))
        parts.append(_why(runs, relative, base, skip))
    parts.append("<h2>Steps</h2>")
    parts += sections()
    if several:
        parts.append(_differences(runs))
    # Wide tables (efficiency: 15 columns) scroll rather than overflow; charts sit side by side, tops aligned.
    style = "body{font-family:sans-serif;margin:2em} section{overflow-x:auto} " \
        "table{border-collapse:collapse;margin:1em 0;font-size:90%} " \
        "td,th{border:1px solid #ccc;padding:2px 6px;text-align:right;white-space:nowrap} " \
        "caption{font-weight:bold;text-align:left;white-space:nowrap} img{vertical-align:top} " \
        "summary{cursor:pointer;font-weight:bold}"
    return f"<!doctype html><html><head><meta charset='utf-8'><title>{html.escape(title)}</title>" \
        f"<style>{style}</style></head><body>{''.join(parts)}</body></html>"


def write(paths: Sequence[str | Path], out: str | Path, base: Optional[str] = None, jobs: int = 1) -> Path:
    """Loads the runs at ``paths`` (run directories or folders of runs) and
    writes the report to ``out``, its charts drawn by ``jobs`` processes."""
    runs = [load(d) for d in _run_dirs(list(paths))]
    target = Path(out)
    target.write_text(render(runs, base, jobs=jobs))
    return target


def main(argv: Optional[Sequence[str]] = None) -> int:
    parser = argparse.ArgumentParser(prog="ibench report", description=__doc__.splitlines()[0])
    parser.add_argument("runs", nargs="+", help="run directories or folders of runs")
    parser.add_argument("--base", help="label of the run others are compared with (default: the first)")
    parser.add_argument("-o", "--output", default="report.html", help="the HTML file to write")
    args = parser.parse_args(argv)

    def written() -> str:
        return f"wrote {write(args.runs, args.output, args.base, jobs=os.cpu_count() or 1)}"

    # Any exception: one clear line for the command line.
    return exit_code(written, Exception)


if __name__ == "__main__":
    sys.exit(main())
