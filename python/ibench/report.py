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

from ibench import _native, plots, tables
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
    return "".join(parts) if len(parts) > 1 else ""  # wait, with nothing to chart: no section


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
    for t in tables.all_tables(runs, base)[:-1]:
        parts.append(f"<section>{t.to_html()}</section>")
    several = len(tables.labels(runs)) > 1
    if several:
        parts.append("<h2>Relative throughput</h2>" + _png(plots.relative_bars(runs, base)))
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
