"""Report tables over real runs: values come from the steps table, relative
throughput is the ratio computed by hand, colors follow the reports' rules."""

from __future__ import annotations

from pathlib import Path

import pandas as pd
import pytest

import ibench
from conftest import server_or_skip
from ibench import tables

STEPS = ["l.i0", "l.x", "l.i1", "qr100", "qp100"]
SMALL = dict(rows_l_i0=2000, rows_l_i1=500, query_seconds=1.0, progress=False)


@pytest.fixture(scope="module")
def runs(tmp_path_factory: pytest.TempPathFactory) -> list[ibench.Results]:
    out = tmp_path_factory.mktemp("runs")
    fast = ibench.run(db="null:", steps=STEPS, label="fast", out=out, **SMALL)
    slow = ibench.run(db="null:?latency=fixed:200us", steps=STEPS, label="slow", out=out, **SMALL)
    # 20 ms per one-row commit cannot keep 100 rows/s: the q steps miss their SLA.
    missing = ibench.run(
        db="null:?latency=fixed:20ms", steps=STEPS, label="missing", out=out, rows_per_commit_q=1, **SMALL
    )
    return [fast, slow, missing]


def steps_of(results: ibench.Results) -> pd.DataFrame:
    return results.steps.set_index("step")


def test_throughput_holds_ips_indexed_rows_and_qps_per_step(runs: list[ibench.Results]) -> None:
    t = tables.throughput(runs)
    assert list(t.frame.index) == ["fast", "slow", "missing"]
    assert list(t.frame.columns) == STEPS
    for r, label in zip(runs, ["fast", "slow", "missing"]):
        s = steps_of(r)
        assert t.frame.loc[label, "l.i0"] == pytest.approx(s.loc["l.i0", "ips"])
        assert t.frame.loc[label, "l.x"] == pytest.approx(s.loc["l.x", "indexed_rows_per_s"])
        assert t.frame.loc[label, "qp100"] == pytest.approx(s.loc["qp100", "qps"])


def test_relative_throughput_is_the_ratio_computed_by_hand(runs: list[ibench.Results]) -> None:
    t = tables.relative(runs, base="fast")
    base = steps_of(runs[0])
    for r, label in zip(runs, ["fast", "slow", "missing"]):
        s = steps_of(r)
        for step, column in [("l.i0", "ips"), ("l.i1", "ips"), ("qr100", "qps"), ("qp100", "qps")]:
            assert t.frame.loc[label, step] == pytest.approx(s.loc[step, column] / base.loc[step, column])
    assert (t.frame.loc["fast"] == 1.0).all()


def test_relative_colors_red_at_or_below_095_and_green_at_or_above_105(runs: list[ibench.Results]) -> None:
    t = tables.relative(runs, base="slow")
    html = t.to_html()
    frame = t.frame
    assert (frame.loc["fast", "l.i0"] >= 1.05) and (frame.loc["missing", "l.i0"] <= 0.95)
    assert tables.GREEN.split(": ")[1] in html and tables.RED.split(": ")[1] in html
    assert "Throughput relative to slow" in html


def test_an_unknown_base_is_a_config_error_listing_the_labels(runs: list[ibench.Results]) -> None:
    with pytest.raises(ibench.ConfigError, match="no run labelled 'nope'.*fast"):
        tables.relative(runs, base="nope")


def test_sla_misses_are_red_in_background_inserts_and_grey_in_throughput(runs: list[ibench.Results]) -> None:
    bg = tables.background_inserts(runs)
    assert list(bg.frame.columns) == ["qr100", "qp100"]
    assert bg.frame.loc["missing"].max() < 95 and bg.frame.loc["fast"].min() >= 95
    assert tables.RED.split(": ")[1] in bg.to_html()
    assert tables.GREY.split(": ")[1] in tables.throughput(runs).to_html()


def test_latency_has_each_percentile_per_run_and_step(runs: list[ibench.Results]) -> None:
    t = tables.latency(runs, "insert", "svc")
    assert t.frame.loc[("slow", "p50"), "l.i0"] >= 200.0  # every commit waits the injected 200 µs
    assert set(t.frame.index.get_level_values("percentile")) == {"p50", "p90", "p99", "p999", "max"}
    with pytest.raises(ibench.ConfigError):
        tables.latency(runs, "upsert")


def test_tables_render_as_markdown_and_html(runs: list[ibench.Results], tmp_path: Path) -> None:
    for t in tables.all_tables(runs):
        md = t.to_markdown()
        assert md.startswith(f"**{t.title}**")
        assert all(f"| {label}" in md for label in ("fast", "slow", "missing")), md
        assert "<table" in t.to_html()


def test_tables_accept_run_directories(runs: list[ibench.Results]) -> None:
    t = tables.throughput([r.path for r in runs])
    assert list(t.frame.index) == ["fast", "slow", "missing"]


def test_tables_and_report_cover_runs_on_the_servers(runs: list[ibench.Results], tmp_path: Path) -> None:
    pg = server_or_skip("postgres://postgres@127.0.0.1:5432/test", "PostgreSQL")
    my = server_or_skip("mysql://root@127.0.0.1:3306/test?engine=innodb", "MariaDB")
    small = dict(steps=["l.i0", "l.x", "l.i1", "qp100"], out=tmp_path, **{**SMALL, "query_seconds": 1.0})
    server_runs = [ibench.run(db=pg, label="postgres", **small), ibench.run(db=my, label="innodb", **small)]
    t = tables.relative(server_runs, base="postgres")
    assert list(t.frame.index) == ["postgres", "innodb"]
    pg_steps, my_steps = steps_of(server_runs[0]), steps_of(server_runs[1])
    assert t.frame.loc["innodb", "l.i0"] == pytest.approx(my_steps.loc["l.i0", "ips"] / pg_steps.loc["l.i0", "ips"])
    for table in tables.all_tables(server_runs, base="postgres"):
        assert "<table" in table.to_html()
    from ibench import report

    html = report.render(server_runs, base="postgres")
    assert html.count("<table") >= 5 and "data:image/png;base64" in html


@pytest.fixture(scope="module")
def cut_short(tmp_path_factory: pytest.TempPathFactory) -> list[ibench.Results]:
    """A run whose q step ran its course and one whose q step timed out (max_seconds)."""
    out = tmp_path_factory.mktemp("cut")
    steps = ["l.i0", "qp100"]
    whole = ibench.run(db="null:", steps=steps, label="whole", out=out, **SMALL)
    cut = ibench.run(
        db="null:?latency=fixed:20ms", steps=steps, label="cut", out=out, max_seconds=0.5, rows_per_commit_q=1, **SMALL
    )
    return [whole, cut]


def test_a_step_that_did_not_run_its_course_is_never_a_number_in_any_table(cut_short: list[ibench.Results]) -> None:
    assert steps_of(cut_short[1]).loc["qp100", "status"] == "timeout"
    for t in (
        tables.throughput(cut_short),
        tables.relative(cut_short, base="whole"),
        tables.background_inserts(cut_short),
        tables.latency(cut_short, "query"),
    ):
        frame = t.frame
        cell = frame.loc[("cut", "p50"), "qp100"] if isinstance(frame.index, pd.MultiIndex) else frame.loc["cut", "qp100"]
        assert pd.isna(cell), t.title
        assert t.notes is not None
        assert "timeout" in t.to_html(), t.title
        assert "~~timeout" in t.to_markdown(), t.title
    # The step that ran its course is a number as before.
    assert tables.throughput(cut_short).frame.loc["whole", "qp100"] > 0


def test_a_q_step_that_timed_out_counts_as_an_sla_miss(cut_short: list[ibench.Results]) -> None:
    assert not bool(steps_of(cut_short[1]).loc["qp100", "sla_ok"])
    assert tables.RED.split(": ")[1] in tables.background_inserts(cut_short).to_html()
