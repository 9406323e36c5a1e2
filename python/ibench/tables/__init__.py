"""Report tables like the published Insert Benchmark reports.

Each function takes one or more :class:`ibench.Results` (or run directories)
and returns a :class:`Table`: a pandas DataFrame of numbers with a styled
view for Jupyter (``.styler``), HTML (``.to_html()``) and Markdown
(``.to_markdown()``). Rows are runs, named by their label (``--label``, else
"DBMS version"), columns are steps, in the order the runs ran them; the
hardware-efficiency table has rows (step, run) and a column per figure, the
response-time buckets a column per bucket. The sysbench tables
(:func:`sysbench_relative`, :func:`sysbench_throughput`,
:func:`sysbench_efficiency`) have a row per microbenchmark, grouped as the
published sysbench reports group them. Steps that did not run their
course are struck through in every table.

Runs that share a ``--label`` are repeats of one configuration (``ibench
campaign`` runs each server several times under its label): the throughput
table shows their mean, :func:`relative` compares the means with a
confidence interval, and :func:`noise` states their run-to-run spread. The
other tables keep one row per run (a repeat's row is named ``label (run id)``).
"""

# One module per table family; _common holds what they share (the Table,
# its styling, the steps with their labels, the pivots and notes). The
# modules are private (underscored) so that no module is named like the
# function it defines: ``ibench.tables.relative`` is the function.

from __future__ import annotations

from typing import Callable, Optional

from ibench.tables._background import background_inserts
from ibench.tables._buckets import BUCKETS, buckets
from ibench.tables._common import (
    GREEN,
    GREY,
    KV_DELETE_STEPS,
    KV_READ_STEPS,
    KV_STEPS,
    KV_WRITE_STEPS,
    LOAD_STEPS,
    NOT_OK,
    NOT_SIGNIFICANT,
    RED,
    WARNING,
    RunsLike,
    Table,
    labels,
    step_order,
)
from ibench.tables._differences import BY_NATURE_TOKENS, Differences, differences, what_differs
from ibench.tables._efficiency import EFFICIENCY_COLUMNS, efficiency
from ibench.tables._engine import ENGINE_COLUMNS, engine
from ibench.tables._latency import latency
from ibench.tables._noise import noise
from ibench.tables._relative import relative
from ibench.tables._sysbench import (
    LOAD_GROUP,
    SB_GROUPS,
    sysbench_efficiency,
    sysbench_groups,
    sysbench_relative,
    sysbench_throughput,
)
from ibench.tables._repeats import _run_counts
from ibench.tables._throughput import SERIES_OPS, throughput, throughput_series

# Private helpers that ibench.plots, ibench.report and the tests reach as ibench.tables._name.
from ibench.tables._common import _loaded as _loaded
from ibench.tables._common import _run_order as _run_order
from ibench.tables._common import _steps as _steps
from ibench.tables._common import _sysbench_kind as _sysbench_kind
from ibench.tables._differences import _by_nature as _by_nature
from ibench.tables._efficiency import _fmt_small as _fmt_small


ALL: dict[str, Callable[[RunsLike], Table]] = {
    "throughput": throughput,
    "relative": relative,
    "noise": noise,
    "background_inserts": background_inserts,
    "latency": latency,
    "what_differs": what_differs,
    "engine": engine,
    "efficiency": efficiency,
    "sysbench_throughput": sysbench_throughput,
    "sysbench_relative": sysbench_relative,
    "sysbench_efficiency": sysbench_efficiency,
}
"""Every table, by name. Some need runs of a kind: :func:`noise` repeats,
the sysbench tables sysbench's microbenchmarks (and :func:`sysbench_relative`
two labels); they raise ConfigError otherwise."""


def all_tables(runs: RunsLike, base: Optional[str] = None) -> list[Table]:
    """The report's tables, in the published reports' order: the three
    summary tables (with the run-to-run spread after the relative
    throughput when some label has repeats), hardware efficiency, engine
    statistics when any, the latency percentiles (insert, query, and
    sysbench's statements when any ran), and last what differs between the
    runs."""
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
    tables += [latency(runs), latency(runs, "query")]
    if "statement_resp_p50_us" in steps.columns and steps["statement_resp_p50_us"].notna().any():
        tables.append(latency(runs, "statement"))
    tables.append(what_differs(runs))
    return tables


__all__ = [
    "ALL",
    "BUCKETS",
    "BY_NATURE_TOKENS",
    "Differences",
    "EFFICIENCY_COLUMNS",
    "ENGINE_COLUMNS",
    "GREEN",
    "GREY",
    "KV_DELETE_STEPS",
    "KV_READ_STEPS",
    "KV_STEPS",
    "KV_WRITE_STEPS",
    "LOAD_GROUP",
    "LOAD_STEPS",
    "NOT_OK",
    "NOT_SIGNIFICANT",
    "RED",
    "RunsLike",
    "SB_GROUPS",
    "SERIES_OPS",
    "Table",
    "WARNING",
    "all_tables",
    "background_inserts",
    "buckets",
    "differences",
    "efficiency",
    "engine",
    "labels",
    "latency",
    "noise",
    "relative",
    "step_order",
    "sysbench_efficiency",
    "sysbench_groups",
    "sysbench_relative",
    "sysbench_throughput",
    "throughput",
    "throughput_series",
    "what_differs",
]
