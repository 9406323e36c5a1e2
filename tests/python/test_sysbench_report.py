"""The sysbench family's report: each step's figure in the generic tables,
the relative QPS per microbenchmark in the published reports' four groups,
the absolute QPS and events/s, the hardware efficiency per statement, the
horizontal bar charts, and the report's sysbench section with a "why" per
significant ratio. Runs are made here on the null connector (and SQLite),
small and short: the figures are checked against the result files, not
against a database's speed."""

from __future__ import annotations

import re
import subprocess
import sys
from pathlib import Path
from typing import Any

import numpy as np
import pandas as pd
import pytest
from matplotlib.container import BarContainer, ErrorbarContainer

import ibench
from conftest import with_server_tables
from ibench import _native, plots, report, tables

# A step of each kind and each group: a warm-up, a .pre, a transaction of 16
# statements (read-only), one of 20 (read-write), and the scan.
STEPS = [
    "load", "create-index", "point-query.warm", "postwrite", "point-query.pre", "update-index",
    "read-write_range=10", "postwrite.2", "scan", "read-only_range=10", "read-only-sum", "point-query",
    "random-points_range=10", "range-covered-pk", "delete", "insert",
]
REPORTED = {
    "point": ["point-query.pre", "point-query", "random-points_range=10"],
    "range": ["scan", "range-covered-pk"],
    "range-aggregate": ["read-only_range=10", "read-only-sum"],
    "write": ["update-index", "read-write_range=10", "delete", "insert"],
}
"""The microbenchmarks of STEPS the suite reports, by group, in run order."""

# Steps of 0.6 s in intervals of 0.1 s: 5 full intervals each, enough for a series interval.
SHORT: dict[str, Any] = dict(
    tables=1, table_size=500, read_seconds=0.6, write_seconds=0.6, insert_seconds=0.6, scan_warm_seconds=0.2,
    warmup_seconds=0, postwrite_seconds=0.05, interval_seconds=0.1, progress=False,
)


@pytest.fixture(scope="module")
def runs(tmp_path_factory: pytest.TempPathFactory) -> list[ibench.Results]:
    """One run each of fast (100 µs a statement) and slow (400 µs)."""
    out = tmp_path_factory.mktemp("sysbench")
    return [
        ibench.run(db="null:?latency=fixed:100us", steps=STEPS, label="fast", out=out, **SHORT),
        ibench.run(db="null:?latency=fixed:400us", steps=STEPS, label="slow", out=out, **SHORT),
    ]


@pytest.fixture(scope="module")
def profiled(runs: list[ibench.Results], tmp_path_factory: pytest.TempPathFactory) -> list[ibench.Results]:
    """The runs with server profiles, waits and counters (synthetic: the null connector has no server)."""
    out = tmp_path_factory.mktemp("profiled")
    return [ibench.load(with_server_tables(r, out / r.path.name)) for r in runs]


@pytest.fixture(scope="module")
def repeats(tmp_path_factory: pytest.TempPathFactory) -> list[ibench.Results]:
    """Two repeats each of fast and slow, interleaved, over a few steps."""
    out = tmp_path_factory.mktemp("repeats")
    few = ["load", "point-query", "scan", "read-only_range=10", "update-index"]
    small = {**SHORT, "read_seconds": 0.3, "write_seconds": 0.3}
    return [
        ibench.run(db=f"null:?latency=fixed:{latency}", steps=few, label=label, out=out, **small)
        for _ in range(2)
        for label, latency in (("fast", "100us"), ("slow", "400us"))
    ]


def steps_of(runs: list[ibench.Results]) -> pd.DataFrame:
    return tables._steps(runs)


def figure(runs: list[ibench.Results], label: str, step: str, column: str) -> float:
    s = steps_of(runs)
    return float(s.loc[(s["label"] == label) & (s["step"] == step), column].iloc[0])


# --- the generic tables --------------------------------------------------------------


def test_the_core_names_every_suite_step_and_no_other_familys() -> None:
    for step in [*_native.SB_SUITE, *_native.SB_LONG_SUITE]:
        assert tables._sysbench_kind(step) in ("load", "create-index", "postwrite", "microbenchmark"), step
    for step in ["l.i0", "qr100", "fillseq", "readrandom", "wait"]:
        assert tables._sysbench_kind(step) is None, step
    assert len(_native.SB_SUITE) == 42 and _native.SB_SUITE[:2] == ["load", "create-index"]


def test_throughput_gives_each_sysbench_step_its_figure(runs: list[ibench.Results]) -> None:
    t = tables.throughput(runs)
    for label in ("fast", "slow"):
        assert t.frame.loc[label, "load"] == pytest.approx(figure(runs, label, "load", "ips"))
        assert t.frame.loc[label, "create-index"] == pytest.approx(figure(runs, label, "create-index", "indexed_rows_per_s"))
        # Every microbenchmark, its warm-up too (it ran), by its statements per second.
        for step in ["point-query.warm", *sum(REPORTED.values(), [])]:
            assert t.frame.loc[label, step] == pytest.approx(figure(runs, label, step, "qps")), step
    assert "postwrite" not in t.frame.columns and "postwrite.2" not in t.frame.columns  # no rate
    assert list(t.frame.columns) == [s for s in STEPS if not s.startswith("postwrite")]  # run order


def test_qps_counts_begin_and_commit_as_sysbench_does(runs: list[ibench.Results]) -> None:
    for step, per_event in (("read-only_range=10", 16), ("read-write_range=10", 20), ("point-query", 1)):
        queries, events = figure(runs, "fast", step, "queries"), figure(runs, "fast", step, "events")
        assert queries == per_event * events, step
        assert figure(runs, "fast", step, "qps") == pytest.approx(per_event * figure(runs, "fast", step, "eps"))


def test_the_series_of_a_microbenchmark_is_its_statements_per_interval(runs: list[ibench.Results]) -> None:
    assert tables.SERIES_OPS["load"] == "insert" and tables.SERIES_OPS["create-index"] == "create_index"
    iv = runs[0].intervals
    for step in ("point-query", "read-only_range=10", "insert"):
        rows = iv[(iv["step"] == step) & (iv["op"] == "statement") & iv["client"].isna()].sort_values("t_s")
        series = tables.throughput_series(runs[0], step)
        assert len(series) >= 4, step
        # The last, partial interval is left out.
        assert list(series) == pytest.approx(list(rows["rate"].astype(float))[: len(series)]), step
        assert np.mean(series) == pytest.approx(figure(runs, "fast", step, "qps"), rel=0.25), step
    load = iv[(iv["step"] == "load") & (iv["op"] == "insert") & iv["client"].isna()]
    assert not load.empty and len(tables.throughput_series(runs[0], "load")) <= len(load)


def test_relative_gives_sysbench_steps_series_intervals(runs: list[ibench.Results]) -> None:
    t = tables.relative(runs)
    assert t.method is not None and t.low is not None and t.high is not None
    for step in sum(REPORTED.values(), []):
        assert t.method.loc["slow", step] == "series", step
        assert t.high.loc["slow", step] < 1.0, step  # 400 µs against 100: significantly slower


def test_the_statement_latency_table_holds_the_microbenchmarks_percentiles(runs: list[ibench.Results]) -> None:
    t = tables.latency(runs, "statement")
    assert t.frame.loc[("fast", "p50"), "point-query"] == figure(runs, "fast", "point-query", "statement_resp_p50_us")
    assert t.frame.loc[("slow", "p50"), "point-query"] >= 400  # µs: the injected latency
    assert any(t.title == "statement response time (µs)" for t in tables.all_tables(runs))
    with pytest.raises(ibench.ConfigError, match="statement"):
        tables.latency(runs, "commit")


# --- sysbench_relative ---------------------------------------------------------------


def test_sysbench_relative_has_a_row_per_reported_microbenchmark_grouped_in_run_order(
    runs: list[ibench.Results],
) -> None:
    t = tables.sysbench_relative(runs)
    assert t.frame.index.names == ["group", "step"]
    assert list(t.frame.index) == [(g, s) for g, steps in REPORTED.items() for s in steps]  # no warm-up, .pre in
    assert list(t.frame.columns) == ["slow"]  # the base is the 1.0 every ratio is against
    assert tables.sysbench_groups(runs) == REPORTED
    # Each cell is relative's, turned: a row per microbenchmark, a column per label.
    generic = tables.relative(runs)
    assert generic.low is not None and generic.high is not None and t.low is not None and t.high is not None
    for group, step in t.frame.index:
        for mine, theirs in ((t.frame, generic.frame), (t.low, generic.low), (t.high, generic.high)):
            assert mine.loc[(group, step), "slow"] == pytest.approx(theirs.loc["slow", step]), step
        assert t.frame.loc[(group, step), "slow"] == pytest.approx(
            figure(runs, "slow", step, "qps") / figure(runs, "fast", step, "qps"))
    significant = t.significant
    assert significant is not None and bool(significant.all().all())


def test_sysbench_relative_of_one_group_holds_that_groups_rows(runs: list[ibench.Results]) -> None:
    for group, steps in REPORTED.items():
        t = tables.sysbench_relative(runs, group=group)
        assert list(t.frame.index.get_level_values("step")) == steps
        assert set(t.frame.index.get_level_values("group")) == {group}
        assert tables.SB_GROUPS[group] in t.title
        assert 'class="row_heading level0' not in t.to_html()  # one group: its column hidden, the title names it
    everything = tables.sysbench_relative(runs)
    assert everything.frame.loc["write"].equals(tables.sysbench_relative(runs, group="write").frame.loc["write"])


def test_sysbench_relative_against_another_base(runs: list[ibench.Results]) -> None:
    t = tables.sysbench_relative(runs, base="slow")
    assert list(t.frame.columns) == ["fast"] and "relative to slow" in t.title
    assert (t.frame["fast"] > 1.5).all()


def test_sysbench_relative_with_repeats_is_the_ratio_of_means(repeats: list[ibench.Results]) -> None:
    t = tables.sysbench_relative(repeats)
    assert t.method is not None and t.low is not None and t.high is not None
    steps = steps_of(repeats)
    for group, step in t.frame.index:
        means = [steps.loc[(steps["group"] == g) & (steps["step"] == step), "qps"].mean() for g in ("fast", "slow")]
        assert t.frame.loc[(group, step), "slow"] == pytest.approx(means[1] / means[0])
        assert t.method.loc[(group, step), "slow"] == "repeats"
        assert t.low.loc[(group, step), "slow"] < t.frame.loc[(group, step), "slow"] < t.high.loc[(group, step), "slow"]
    assert list(t.frame.index.get_level_values("step")) == ["point-query", "scan", "read-only_range=10", "update-index"]


def test_sysbench_relative_refuses_what_it_cannot_compare(runs: list[ibench.Results], tmp_path: Path) -> None:
    with pytest.raises(ibench.ConfigError, match="second label"):
        tables.sysbench_relative(runs[:1])
    with pytest.raises(ibench.ConfigError, match="invalid group"):
        tables.sysbench_relative(runs, group="reads")
    with pytest.raises(ibench.ConfigError, match="invalid base"):
        tables.sysbench_relative(runs, base="nobody")
    ib = [ibench.run(db="null:", steps=["l.i0"], rows_l_i0=100, label=label, out=tmp_path, progress=False)
          for label in ("a", "b")]
    with pytest.raises(ibench.ConfigError, match="no sysbench microbenchmarks"):
        tables.sysbench_relative(ib)
    with pytest.raises(ibench.ConfigError, match="no sysbench microbenchmarks"):
        tables.sysbench_throughput(ib)


# --- sysbench_throughput and sysbench_efficiency -------------------------------------


def test_sysbench_throughput_is_the_mean_qps_and_events_per_second_of_the_repeats(
    repeats: list[ibench.Results],
) -> None:
    t = tables.sysbench_throughput(repeats)
    assert list(t.frame.columns) == [("QPS", "fast"), ("QPS", "slow"), ("events/s", "fast"), ("events/s", "slow")]
    steps = steps_of(repeats)
    for group, step in t.frame.index:
        for name, column in (("QPS", "qps"), ("events/s", "eps")):
            for label in ("fast", "slow"):
                expected = steps.loc[(steps["group"] == label) & (steps["step"] == step), column].mean()
                assert t.frame.loc[(group, step), (name, label)] == pytest.approx(expected), (step, name, label)
    # read-only: 16 statements an event.
    ro = t.frame.loc[("range-aggregate", "read-only_range=10")]
    assert ro[("QPS", "fast")] == pytest.approx(16 * ro[("events/s", "fast")])
    assert "mean of the repeats: fast ×2, slow ×2" in t.title


def test_sysbench_throughput_says_what_scans_figure_is(runs: list[ibench.Results]) -> None:
    t = tables.sysbench_throughput(runs)
    assert t.footnotes == [tables._sysbench.SCAN_NOTE] and "thousands of rows per second per thread" in t.footnotes[0]
    assert t.footnotes[0] in t.to_html() and t.footnotes[0] in t.to_markdown()
    assert tables.sysbench_throughput(runs, group="point").footnotes == []  # no scan there
    # Markdown names each column by figure and label.
    header = t.to_markdown().splitlines()[2]
    assert "QPS fast" in header and "events/s slow" in header


def test_sysbench_efficiency_has_the_load_then_each_group_with_per_statement_costs(runs: list[ibench.Results]) -> None:
    t = tables.sysbench_efficiency(runs, base="fast")
    assert t.ratios is not None
    assert t.frame.index.names == ["group", "step", "label"]
    expected = [("load", s) for s in ("load", "create-index")] + [(g, s) for g, steps in REPORTED.items() for s in steps]
    assert list(dict.fromkeys((g, s) for g, s, _ in t.frame.index)) == expected
    steps = steps_of(runs)
    for group, step, label in t.frame.index:
        row = steps[(steps["step"] == step) & (steps["label"] == label)].iloc[0]
        assert t.frame.loc[(group, step, label), "client_us"] == pytest.approx(row["client_cpu_us_per_op"])
        assert t.frame.loc[(group, step, label), "cpupq"] == pytest.approx(row["cpupq"])
        if tables._sysbench_kind(step) == "microbenchmark":
            # Per statement: the step's costs divide by its statements.
            assert row["cost_ops"] == row["queries"], step
            assert t.frame.loc[(group, step, label), "event_max_ms"] == pytest.approx(row["event_resp_max_us"] / 1e3)
        assert t.ratios.loc[(group, step, "fast"), "client_us"] == pytest.approx(1.0)
    assert figure(runs, "fast", "load", "cost_ops") == 500  # the load's costs: per row
    assert "server_us" not in t.frame.columns  # the null connector has no server
    point = tables.sysbench_efficiency(runs, group="point")
    assert list(dict.fromkeys(point.frame.index.get_level_values("step"))) == REPORTED["point"]
    load = tables.sysbench_efficiency(runs, group="load")
    assert "per row" in load.title and "insert_max_ms" in load.frame.columns
    with pytest.raises(ibench.ConfigError, match="invalid group"):
        tables.sysbench_efficiency(runs, group="reads")


def test_sysbench_efficiency_on_sqlite_has_the_database_sizes(tmp_path: Path) -> None:
    r = ibench.run(steps=["load", "create-index", "point-query", "update-index"], label="sqlite", out=tmp_path,
                   **{**SHORT, "read_seconds": 0.3, "write_seconds": 0.3})
    t = tables.sysbench_efficiency(r)
    assert t.frame.loc[("point", "point-query", "sqlite"), "db_GB"] > 0
    assert t.frame.loc[("write", "update-index", "sqlite"), "client_us"] > 0


def test_the_sysbench_tables_are_in_all(runs: list[ibench.Results]) -> None:
    for name in ("sysbench_relative", "sysbench_throughput", "sysbench_efficiency"):
        assert tables.ALL[name](runs).frame.size > 0


# --- the charts ------------------------------------------------------------------------


def test_sysbench_relative_bars_draw_a_bar_per_microbenchmark_and_label(runs: list[ibench.Results], tmp_path: Path) -> None:
    for group, steps in REPORTED.items():
        fig = plots.sysbench_relative_bars(runs, group=group)
        ax = fig.axes[0]
        bars = [c for c in ax.containers if isinstance(c, BarContainer)]
        assert len(bars) == 1 and len(bars[0]) == len(steps)  # slow's: the base is the 1.0 line
        t = tables.sysbench_relative(runs, group=group)
        assert [b.get_width() for b in bars[0]] == pytest.approx(list(t.frame["slow"]))
        assert [tick.get_text() for tick in ax.get_yticklabels()] == steps
        assert ax.yaxis_inverted()  # run order, top down
        assert any(isinstance(c, ErrorbarContainer) for c in ax.containers)
        assert any(list(line.get_xdata()) == [1.0, 1.0] for line in ax.get_lines())
        assert tables.SB_GROUPS[group] in ax.get_title() and "error bars" in ax.get_title()
        # Significant: full colour.
        assert all(b.get_alpha() in (None, 1.0) for b in bars[0])
        fig.savefig(tmp_path / f"{group}.png")
        assert (tmp_path / f"{group}.png").stat().st_size > 5000


def test_sysbench_relative_bars_pale_a_ratio_that_is_not_significant(repeats: list[ibench.Results]) -> None:
    fig = plots.sysbench_relative_bars(repeats, group="point")
    t = tables.sysbench_relative(repeats, group="point")
    significant = t.significant
    assert significant is not None
    bars = [c for c in fig.axes[0].containers if isinstance(c, BarContainer)][0]
    for bar, sig in zip(bars, significant["slow"]):
        assert (bar.get_alpha() == 0.4) == (pd.isna(sig) or not sig)


def test_sysbench_relative_bars_of_several_labels_have_a_bar_each(runs: list[ibench.Results], tmp_path: Path) -> None:
    third = ibench.run(db="null:?latency=fixed:200us", steps=STEPS, label="middle", out=tmp_path, **SHORT)
    fig = plots.sysbench_relative_bars([*runs, third], base="fast", group="range")
    bars = [c for c in fig.axes[0].containers if isinstance(c, BarContainer)]
    assert [c.get_label() for c in bars] == ["slow", "middle"]
    assert all(len(c) == len(REPORTED["range"]) for c in bars)


# --- the report ------------------------------------------------------------------------


def test_the_report_of_sysbench_runs_shows_the_groups_then_the_absolute_qps_and_efficiency(
    profiled: list[ibench.Results],
) -> None:
    page = report.render(profiled)
    assert "Workload: the sysbench microbenchmark suite." in page
    headings = re.findall(r"<h([23])>([^<]*)</h\1>", page)
    sysbench = [text for _, text in headings[headings.index(("2", "sysbench")):]]
    assert sysbench[:8] == ["sysbench", "Point queries", "Range queries without aggregation",
                            "Range queries with aggregation", "Writes", "Absolute QPS", "Hardware efficiency",
                            "All steps"]
    for group in REPORTED:
        title = tables.sysbench_relative(profiled, group=group).title
        assert page.index(title) < page.index("Absolute QPS")
    assert page.index("sysbench microbenchmarks: QPS and events/s") < page.index("sysbench load: hardware efficiency")
    order = [page.index(f"sysbench {tables.SB_GROUPS[g]}: hardware efficiency") for g in REPORTED]
    assert order == sorted(order)
    # One chart per group, the relative bars of the steps the groups leave out (load, create-index).
    sysbench_part = page[page.index("<h2>sysbench</h2>"):page.index("<h2>All steps</h2>")]
    assert sysbench_part.count("<img") == len(REPORTED)


def test_the_report_has_a_why_for_each_significant_ratio_of_a_microbenchmark(profiled: list[ibench.Results]) -> None:
    page = report.render(profiled)
    t = tables.sysbench_relative(profiled)
    assert t.low is not None and t.high is not None
    for group, step in t.frame.index:
        ratio, lo, hi = (float(f.loc[(group, step), "slow"]) for f in (t.frame, t.low, t.high))
        summary = f"<summary>why: {step}, slow at {ratio:.2f} [{lo:.2f}, {hi:.2f}] of fast</summary>"
        assert summary in page, summary
        # In its group's part, after the group's chart.
        start = page.index(f"<h3>{tables.SB_GROUPS[group].capitalize()}</h3>")
        assert start < page.index(summary) < page.index("<h3>Absolute QPS</h3>")
    # The synthetic profile explains each: the CPU per statement by function.
    assert "XLogFlush" in page[page.index("<h2>sysbench</h2>"):page.index("<h3>Absolute QPS</h3>")]
    # No why for a warm-up: the suite reports none of them.
    assert "why: point-query.warm" not in page


def test_the_report_collapses_the_generic_tables_and_each_sysbench_steps_charts(runs: list[ibench.Results]) -> None:
    page = report.render(runs)
    generic = page.index("<h2>All steps</h2><details><summary>The generic tables")
    assert page.index("Throughput (ips, indexed rows/s, qps)") > generic
    for step in ("load", "point-query.warm", "insert"):
        assert f"<details><summary>{step}</summary>" in page, step
    assert "<h3>point-query</h3>" not in page
    section = page[page.index("<details><summary>point-query</summary>"):]
    section = section[:section.index("</details>")]
    assert "<img" in section and "point-query: statement response time, % of operations per bucket" in section
    # The generic relative chart is the steps outside the groups': load and create-index.
    assert "<h2>Relative throughput</h2>" in page


def test_a_report_of_one_label_has_the_absolute_tables_but_no_relative_ones(runs: list[ibench.Results]) -> None:
    page = report.render(runs[:1])
    assert "<h3>Absolute QPS</h3>" in page and "<h3>Hardware efficiency</h3>" in page
    assert "<h3>Point queries</h3>" not in page and "why:" not in page


def test_a_report_of_one_labels_repeats_has_no_relative_tables(repeats: list[ibench.Results]) -> None:
    fast = [repeats[0], repeats[2]]
    with pytest.raises(ibench.ConfigError, match="second label"):
        tables.sysbench_relative(fast)
    page = report.render(fast)
    assert "<h3>Absolute QPS</h3>" in page and "<h3>Point queries</h3>" not in page
    assert "mean of the repeats: fast ×2" in page


def test_the_report_of_insert_benchmark_runs_has_no_sysbench_section(tmp_path: Path) -> None:
    ib = ibench.run(db="null:", steps=["l.i0", "qr100"], rows_l_i0=200, query_seconds=0.5, label="ib", out=tmp_path,
                    progress=False)
    page = report.render([ib])
    assert "<h2>sysbench</h2>" not in page and "<h2>All steps</h2>" not in page
    assert page.index("Throughput (ips, indexed rows/s, qps)") < page.index("<h2>Steps</h2>")
    assert "<h3>qr100</h3>" in page  # the Insert Benchmark's step sections stay open


def test_mixed_runs_say_which_workload_each_label_runs(runs: list[ibench.Results], tmp_path: Path) -> None:
    ib = ibench.run(db="null:", steps=["l.i0"], rows_l_i0=100, label="ib", out=tmp_path, progress=False)
    page = report.render([runs[0], ib])
    assert "fast: the sysbench microbenchmark suite" in page
    assert "ib: compat = ibench" in page
    # Not every step is sysbench's: the generic tables stay open, first.
    assert "<h2>All steps</h2>" not in page
    assert page.index("Throughput (ips, indexed rows/s, qps)") < page.index("<h2>sysbench</h2>")
    # One label ran the suite: nothing to compare it with.
    assert "<h3>Point queries</h3>" not in page and "<h3>Absolute QPS</h3>" in page
    assert "<h3>l.i0</h3>" in page and "<details><summary>point-query</summary>" in page  # IB open, sysbench collapsed


def test_the_sysbench_report_opens_in_chromium(profiled: list[ibench.Results], tmp_path: Path) -> None:
    from test_report import open_in_chromium

    page = tmp_path / "report.html"
    done = subprocess.run([sys.executable, "-m", "ibench.report", *[str(r.path) for r in profiled], "-o", str(page)],
                          capture_output=True, text=True, timeout=600)
    assert done.returncode == 0, done.stderr
    dom, log = open_in_chromium(page, tmp_path)
    assert not [line for line in log.splitlines() if "Uncaught" in line], log
    assert "<h2>sysbench</h2>" in dom and not re.findall(r'(?:src|href)="(?!data:)', dom)
