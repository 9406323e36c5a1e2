"""A self-contained HTML report: the report tables and the plots, embedded.

    python -m ibench.report RUN_DIR... [--base LABEL] -o report.html

(`ibench report` runs this.)
"""

from __future__ import annotations

import argparse
import base64
import html
import io
import sys
from pathlib import Path
from typing import Optional, Sequence

from matplotlib.figure import Figure

from ibench import plots, tables
from ibench.results import Results, load


def _png(fig: Figure) -> str:
    buf = io.BytesIO()
    fig.savefig(buf, format="png", dpi=90)
    return '<img alt="plot" src="data:image/png;base64,' + base64.b64encode(buf.getvalue()).decode() + '">'


def render(runs: Sequence[Results], base: Optional[str] = None, title: str = "ibench report") -> str:
    """The report as one HTML page."""
    parts = [f"<h1>{html.escape(title)}</h1>"]
    for t in tables.all_tables(list(runs), base):
        parts.append(f"<section>{t.to_html()}</section>")
    if len(runs) > 1:
        parts.append("<h2>Relative throughput</h2>" + _png(plots.relative_bars(list(runs), base)))
    names = tables.labels(list(runs))
    for r in runs:
        run_id = str(r.runs["run_id"].iloc[0])
        parts.append(f"<h2>{html.escape(names.get(run_id, run_id))} ({html.escape(run_id)})</h2>")
        for step in r.steps["step"]:
            ops = set(r.intervals.loc[r.intervals["step"] == step, "op"]) & {"insert", "query"}
            for op in sorted(ops):
                parts.append(_png(plots.throughput_over_time(r, step, op)))
                parts.append(_png(plots.latency_over_time(r, step, op)))
    steps_with_queries = [s for s in runs[0].steps["step"] if s.startswith("q")]
    for step in steps_with_queries:
        parts.append(_png(plots.latency_distribution(list(runs), step, "query")))
    style = "body{font-family:sans-serif;margin:2em} table{border-collapse:collapse;margin:1em 0} " \
        "td,th{border:1px solid #ccc;padding:2px 6px;text-align:right} caption{font-weight:bold;text-align:left}"
    return f"<!doctype html><html><head><meta charset='utf-8'><title>{html.escape(title)}</title>" \
        f"<style>{style}</style></head><body>{''.join(parts)}</body></html>"


def write(paths: Sequence[str | Path], out: str | Path, base: Optional[str] = None) -> Path:
    """Loads the runs at ``paths`` (run directories or folders of runs) and writes the report to ``out``."""
    runs: list[Results] = []
    for p in paths:
        loaded = load(p)
        runs.extend(load(d) for d in loaded.paths)
    target = Path(out)
    target.write_text(render(runs, base))
    return target


def main(argv: Optional[Sequence[str]] = None) -> int:
    parser = argparse.ArgumentParser(prog="ibench report", description=__doc__.splitlines()[0])
    parser.add_argument("runs", nargs="+", help="run directories or folders of runs")
    parser.add_argument("--base", help="label of the run others are compared with (default: the first)")
    parser.add_argument("-o", "--output", default="report.html", help="the HTML file to write")
    args = parser.parse_args(argv)
    try:
        path = write(args.runs, args.output, args.base)
    except Exception as e:  # noqa: BLE001 - one clear line for the command line
        print(f"error: {e}", file=sys.stderr)
        return 1
    print(f"wrote {path}")
    return 0


if __name__ == "__main__":
    sys.exit(main())
