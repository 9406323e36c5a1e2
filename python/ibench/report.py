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
from typing import Callable, Optional, Sequence

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
    """Which of insert and query ran in ``step`` in any of the runs."""
    present = set()
    for r in runs:
        present |= set(r.intervals.loc[r.intervals["step"] == step, "op"])
    return [op for op in ("insert", "query") if op in present]


def _bucket_ops(runs: Sequence[Results], step: str) -> list[str]:
    """The operations whose response-time buckets the step shows: each of
    insert, delete and query that any run measured in it (a q step's
    queries and its background inserts and deletes; a load step's inserts
    and deletes; none for l.x and wait)."""
    present = set()
    for r in runs:
        h = r.histograms
        present |= set(h.loc[(h["step"] == step) & (h["time"] == "response"), "op"])
    return [op for op in ("query", "insert", "delete") if op in present]


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
    return "".join(parts) if len(parts) > 1 else ""  # wait, with nothing to chart: no section


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


def _why_body(e: Explanation) -> str:
    """The explain tables of one cell, and its differential flame graph."""
    parts = [
        _why_table(e.paths.head(WHY_ROWS), f"CPU µs per operation by call path ({e.role}): functions by their "
                   "inclusive change, largest first"),
        _why_table(e.functions.head(WHY_ROWS), f"CPU µs per operation by function ({e.role}): their own "
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


def _why(runs: list[Results], relative: tables.Table, base: Optional[str]) -> str:
    """A collapsed "why" section for each significant ratio of ``relative``
    (its interval excludes 1); ratios without an interval get none."""
    significant = relative.significant
    if significant is None or relative.low is None or relative.high is None:
        return ""
    named_base = base if base is not None else str(relative.frame.index[0])
    parts = []
    for step in relative.frame.columns:
        role = _profiled_role(runs, step) or "server"
        for group in relative.frame.index:
            flag = significant.at[group, step]
            if pd.isna(flag) or not bool(flag):
                continue
            ratio, lo, hi = (float(t.at[group, step]) for t in (relative.frame, relative.low, relative.high))
            summary = f"why: {step}, {group} at {ratio:.2f} [{lo:.2f}, {hi:.2f}] of {named_base}"
            body = _why_body(explain(runs, step, base=named_base, other=str(group), role=role, top=WHY_ROWS))
            parts.append(f"<details><summary>{html.escape(summary)}</summary>{body}</details>")
    return "<h2>Why</h2>" + "".join(parts) if parts else ""


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


def _workload(config: str) -> str:
    """The workload a run's recorded configuration (JSON) runs."""
    c = json.loads(config)
    if all(step in _native.KV_STEPS for step in c.get("steps", [])):
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


def render(
    runs: Sequence[Results], base: Optional[str] = None, title: str = "ibench report", jobs: int = 1
) -> str:
    """The report as one HTML page. ``jobs`` > 1 draws the steps' charts in
    that many forked processes (``ibench report`` uses one per CPU)."""
    runs = list(runs)
    sections = _start_sections(runs, tables._run_order(tables._steps(runs)), jobs)
    parts = [f"<h1>{html.escape(title)}</h1>", _workloads(runs)]
    # all_tables ends with what_differs: the page shows its readable form last.
    shown = tables.all_tables(runs, base)[:-1]
    for t in shown:
        parts.append(f"<section>{t.to_html()}</section>")
    several = len(tables.labels(runs)) > 1
    if several:
        parts.append("<h2>Relative throughput</h2>" + _png(plots.relative_bars(runs, base)))
        relative = next(t for t in shown if t.title.startswith("Throughput relative"))
        parts.append(_why(runs, relative, base))
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
