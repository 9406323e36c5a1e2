"""Plots and the HTML report over real runs: every plot is a non-empty PNG
with the expected series; the report opens in headless Chromium with its
tables and images, the runs side by side in each chart, and what differs
last, collapsed."""

from __future__ import annotations

import re
import shutil
import subprocess
import sys
from pathlib import Path

import pandas as pd
import pytest
from matplotlib.axes import Axes
from matplotlib.figure import Figure

import ibench
from conftest import server_or_skip, with_server_tables
from ibench import plots, report, tables

STEPS = ["l.i0", "l.x", "l.i1", "qr100", "qp100"]


@pytest.fixture(scope="module")
def runs(tmp_path_factory: pytest.TempPathFactory) -> list[ibench.Results]:
    out = tmp_path_factory.mktemp("runs")
    small = dict(rows_l_i0=3000, rows_l_i1=600, query_seconds=2.0, progress=False, out=out)
    return [
        ibench.run(steps=STEPS, clients=2, label="sqlite", **small),
        ibench.run(db="null:?latency=fixed:300us", steps=STEPS, clients=2, label="null", **small),
    ]


@pytest.fixture(scope="module")
def cut(tmp_path_factory: pytest.TempPathFactory) -> ibench.Results:
    """A run whose qp100 timed out (20 ms per one-row commit cannot keep 100 rows/s in 0.5 s)."""
    out = tmp_path_factory.mktemp("cut")
    return ibench.run(
        db="null:?latency=fixed:20ms", steps=["l.i0", "qp100"], label="cut", rows_l_i0=300, query_seconds=2.0,
        max_seconds=0.5, rows_per_commit_q=1, progress=False, out=out,
    )


@pytest.fixture(scope="module")
def with_gauges(runs: list[ibench.Results], tmp_path_factory: pytest.TempPathFactory) -> list[ibench.Results]:
    """The runs with counters, gauges and disks (synthetic where the run has none)."""
    out = tmp_path_factory.mktemp("gauges")
    return [ibench.load(with_server_tables(r, out / r.path.name)) for r in runs]


def png(fig: Figure, path: Path) -> int:
    fig.savefig(path)
    return path.stat().st_size


def line_labels(fig: Figure, ax: int = 0) -> list[str]:
    return [str(line.get_label()) for line in fig.axes[ax].get_lines() if not str(line.get_label()).startswith("_")]


def all_clients(r: ibench.Results, step: str, op: str) -> pd.DataFrame:
    iv = r.intervals
    return iv[(iv["step"] == step) & (iv["op"] == op) & iv["client"].isna()].sort_values("t_s")


def test_throughput_over_time_has_a_line_per_client_and_the_total(runs: list[ibench.Results], tmp_path: Path) -> None:
    fig = plots.throughput_over_time(runs[0], "qp100", "insert")
    assert line_labels(fig) == ["client 0", "client 1", "total"]
    total = fig.axes[0].get_lines()[-1].get_ydata()
    assert max(total) == pytest.approx(200, rel=0.3)  # 2 clients × 100 rows/s
    assert png(fig, tmp_path / "t.png") > 5000


def test_latency_over_time_has_p50_p99_and_max(runs: list[ibench.Results], tmp_path: Path) -> None:
    fig = plots.latency_over_time(runs[1], "l.i0", "insert")
    assert line_labels(fig) == ["p50", "p99", "max"]
    assert min(fig.axes[0].get_lines()[0].get_ydata()) >= 0.3  # ms: the injected 300 µs
    assert png(fig, tmp_path / "l.png") > 5000


def test_latency_distribution_compares_runs_from_their_histograms(runs: list[ibench.Results], tmp_path: Path) -> None:
    fig = plots.latency_distribution(runs, "l.i0", "insert", "service")
    assert line_labels(fig) == ["sqlite", "null"]
    null_curve = fig.axes[0].get_lines()[1].get_ydata()
    assert null_curve[0] == pytest.approx(0.3, rel=0.05)  # p50 of 300 µs, in ms
    assert png(fig, tmp_path / "d.png") > 5000


def test_relative_bars_draw_the_non_base_runs(runs: list[ibench.Results], tmp_path: Path) -> None:
    fig = plots.relative_bars(runs, base="sqlite")
    bars = fig.axes[0].patches
    assert len(bars) == len(ibench.tables.relative(runs, "sqlite").frame.columns)
    assert png(fig, tmp_path / "r.png") > 5000


def test_a_step_without_the_operation_is_a_config_error(runs: list[ibench.Results]) -> None:
    with pytest.raises(ibench.ConfigError, match="no query intervals"):
        plots.throughput_over_time(runs[0], "l.i0", "query")


def chromium() -> str | None:
    return shutil.which("chromium") or shutil.which("chromium-browser") or shutil.which("google-chrome")


# --- the runs side by side ---------------------------------------------------------


def test_compare_over_time_has_one_throughput_line_per_run(runs: list[ibench.Results], tmp_path: Path) -> None:
    fig = plots.compare_over_time(runs, "qp100", "insert")
    assert line_labels(fig, 0) == ["sqlite", "null"]
    for line, r in zip(fig.axes[0].get_lines(), runs):
        rows = all_clients(r, "qp100", "insert")
        rpc = float(r.steps.set_index("step").loc["qp100", "rows_per_commit"])
        assert list(line.get_xdata()) == list(rows["t_s"])
        assert list(line.get_ydata()) == pytest.approx(list(rows["rate"].astype(float) * rpc))
    assert png(fig, tmp_path / "c.png") > 5000


def test_compare_over_time_has_max_solid_and_p99_dashed_in_each_runs_colour(runs: list[ibench.Results]) -> None:
    fig = plots.compare_over_time(runs, "qp100", "query")
    top, bottom = fig.axes[0].get_lines(), fig.axes[1].get_lines()
    assert len(bottom) == 2 * len(runs)
    for i, r in enumerate(runs):
        worst, p99 = bottom[2 * i], bottom[2 * i + 1]
        assert worst.get_color() == p99.get_color() == top[i].get_color()
        assert (worst.get_linestyle(), p99.get_linestyle()) == ("-", "--")
        rows = all_clients(r, "qp100", "query")
        assert list(worst.get_ydata()) == pytest.approx(list(rows["max_us"].astype(float) / 1000))
        assert list(p99.get_ydata()) == pytest.approx(list(rows["p99_us"].astype(float) / 1000))
    assert len({line.get_color() for line in top}) == len(runs)
    assert fig.axes[1].get_yscale() == "log"


def test_compare_over_time_draws_a_marker_for_a_step_of_one_interval(runs: list[ibench.Results]) -> None:
    assert all(len(all_clients(r, "l.i0", "insert")) == 1 for r in runs)  # a few thousand rows: under a second
    fig = plots.compare_over_time(runs, "l.i0", "insert")
    for ax in fig.axes[:2]:
        lines = [line for line in ax.get_lines() if len(line.get_xdata())]
        assert lines and all(line.get_marker() == "o" for line in lines)
    several = plots.compare_over_time(runs, "qp100", "insert")
    assert all(line.get_marker() in ("None", None, "") for line in several.axes[0].get_lines())


def test_compare_over_time_marks_a_step_that_did_not_run_its_course(runs: list[ibench.Results], cut: ibench.Results) -> None:
    assert cut.steps.set_index("step").loc["qp100", "status"] == "timeout"
    fig = plots.compare_over_time([runs[1], cut], "qp100", "insert")
    assert line_labels(fig) == ["null", "cut (timeout)"]
    ok, timed_out = fig.axes[0].get_lines()
    assert ok.get_linestyle() == "-" and timed_out.get_linestyle() == "--"
    assert (timed_out.get_alpha() or 1.0) < (ok.get_alpha() or 1.0)


def test_compare_over_time_of_an_operation_no_run_ran_is_a_config_error(runs: list[ibench.Results]) -> None:
    with pytest.raises(ibench.ConfigError, match="no query intervals in step 'l.i0'"):
        plots.compare_over_time(runs, "l.i0", "query")


def test_every_chart_names_the_status_of_a_step_that_did_not_run_its_course(cut: ibench.Results) -> None:
    assert plots.throughput_over_time(cut, "qp100").axes[0].get_title().endswith("(timeout)")
    assert plots.latency_over_time(cut, "qp100").axes[0].get_title().endswith("(timeout)")
    assert line_labels(plots.latency_distribution([cut], "qp100", "query")) == ["cut (timeout)"]


def visible(fig: Figure) -> list[Axes]:
    return [ax for ax in fig.axes if ax.get_visible()]


def test_the_bucket_table_puts_a_fixed_300us_latency_at_or_below_1ms(runs: list[ibench.Results]) -> None:
    shares = tables.buckets(runs, "l.i0", "insert").frame.loc["null"]
    # 60 commits of 300 µs and a few more, never less; a client's first ones can pay for a cold start.
    assert shares["≤256µs"] == 0.0 and shares["≤1ms"] >= 90.0
    assert shares.sum() == pytest.approx(100.0)


def test_gauges_over_time_has_one_chart_per_gauge_and_a_line_per_run(with_gauges: list[ibench.Results]) -> None:
    step = "l.i1"
    gauges = pd.concat([r.gauges for r in with_gauges])
    gauges = gauges[gauges["step"] == step]
    names = list(dict.fromkeys(zip(gauges["source"], gauges["name"])))
    fig = plots.gauges_over_time(with_gauges, step)
    assert fig is not None
    axes = visible(fig)
    assert [ax.get_title() for ax in axes] == [f"{source}: {name}" for source, name in names]
    for ax, (source, name) in zip(axes, names):
        per_run = [str(line.get_label()) for line in ax.get_lines()]
        with_it = [label for label, r in zip(["sqlite", "null"], with_gauges)
                   if ((r.gauges["step"] == step) & (r.gauges["name"] == name) & (r.gauges["source"] == source)).any()]
        assert per_run == with_it
        for line, r in zip(ax.get_lines(), [r for label, r in zip(["sqlite", "null"], with_gauges) if label in with_it]):
            g = r.gauges
            part = g[(g["step"] == step) & (g["source"] == source) & (g["name"] == name)].sort_values("t_s")
            assert list(line.get_ydata()) == pytest.approx(list(part["value"]))


def test_gauges_over_time_is_none_for_runs_without_gauges(runs: list[ibench.Results], tmp_path: Path) -> None:
    old = tmp_path / "old"
    shutil.copytree(runs[1].path, old)
    (old / "gauges.parquet").unlink(missing_ok=True)
    assert plots.gauges_over_time(ibench.load(old), "l.i1") is None


def test_relative_bars_name_a_step_that_did_not_run_its_course(runs: list[ibench.Results], cut: ibench.Results) -> None:
    fig = plots.relative_bars([runs[1], cut], base="null")
    assert "timeout" in [t.get_text() for t in fig.axes[0].texts]


# --- the report ----------------------------------------------------------------------


FLAGS = ["--headless", "--no-sandbox", "--disable-gpu", "--disable-background-networking",
         "--disable-component-update", "--disable-sync", "--no-first-run"]


def open_in_chromium(page: Path, tmp_path: Path) -> tuple[str, str]:
    """The page's DOM as Chromium rendered it and what Chromium logged (console messages included)."""
    browser = chromium()
    if browser is None:
        assert not __import__("os").environ.get("CI"), "CI needs chromium (.ci/run installs it)"
        pytest.skip("no chromium on this machine")
    flags = [*FLAGS, f"--user-data-dir={tmp_path / 'profile'}", "--enable-logging=stderr", "--v=0"]
    dom = subprocess.run([browser, *flags, "--dump-dom", page.as_uri()], capture_output=True, text=True, timeout=120)
    return dom.stdout, dom.stderr


def test_the_html_report_opens_in_chromium_with_its_tables_and_charts(runs: list[ibench.Results], tmp_path: Path) -> None:
    out = tmp_path / "report.html"
    done = subprocess.run(
        ["ibench", "report", *[str(r.path) for r in runs], "--base", "sqlite", "-o", str(out)],
        capture_output=True,
        text=True,
        timeout=300,
    )
    assert done.returncode == 0, done.stderr
    html, log = open_in_chromium(out, tmp_path)
    assert not [line for line in log.splitlines() if "CONSOLE" in line or "Uncaught" in line], log
    assert not re.findall(r'(?:src|href)="(?!data:)', html)  # self-contained: every image embedded
    assert len(re.findall(r"<table", html)) >= 5, html[:500]
    for title in ("Throughput (ips, indexed rows/s, qps)", "Throughput relative to sqlite", "Background inserts/s",
                  "Hardware efficiency per step", "l.i0: insert response time, % of operations per bucket",
                  "qp100: query response time, % of operations per bucket"):
        assert title in html
    # Per step and operation one chart of the runs side by side (l.x and l.i1's deletes have none),
    # then q steps' query percentiles, and the relative bars.
    images = re.findall(r'<img[^>]+src="data:image/png;base64,', html)
    overlays = {"l.i0": 1, "l.i1": 1, "qr100": 2, "qp100": 2}
    gauges = {step for r in runs for step in r.gauges["step"]}  # one chart per step with any
    assert len(images) == 1 + sum(overlays.values()) + 2 + len(gauges), len(images)
    assert html.index("<h3>l.i0</h3>") < html.index("<h3>l.i1</h3>") < html.index("<h3>qp100</h3>")
    assert ("<h3>l.x</h3>" in html) == ("l.x" in gauges)  # else nothing to chart
    shot = tmp_path / "report.png"
    subprocess.run([chromium() or "", *FLAGS, f"--user-data-dir={tmp_path / 'profile'}", f"--screenshot={shot}",
                    "--window-size=1200,1600", out.as_uri()], capture_output=True, timeout=120)
    assert shot.stat().st_size > 20000


def test_the_report_puts_what_differs_last_collapsed_and_grouped_by_scope(runs: list[ibench.Results]) -> None:
    html = report.render(runs)
    details = html.index("<details>")
    assert details > html.rindex("<img") and details > html.index("Hardware efficiency")
    assert "<summary>What differs between the runs (" in html[details:]
    collapsed = html[details:html.index("</details>")]
    d = tables.differences(runs)
    assert "different DBMSs" in d.summary and html.count(d.summary.split(":")[0]) == 1
    for t in d.by_scope:
        assert t.title in collapsed
    # sqlite and null are different DBMSs: their settings are not compared.
    assert not any(t.title.startswith("server") for t in d.by_scope)


def test_the_report_marks_steps_that_did_not_run_their_course(runs: list[ibench.Results], cut: ibench.Results) -> None:
    html = report.render([runs[1], cut])
    for title in ("Hardware efficiency", "qp100: query response time, % of operations"):
        at = html.index(title)
        table = html[html.rindex("<style", 0, at):html.index("</table>", at)]  # its cells' styles, then the cells
        assert "timeout: " in table and "line-through" in table, title


def test_the_report_shows_the_gauges_of_each_step(with_gauges: list[ibench.Results], tmp_path: Path) -> None:
    without = []
    for r in with_gauges:
        shutil.copytree(r.path, tmp_path / r.path.name)
        (tmp_path / r.path.name / "gauges.parquet").unlink()
        without.append(ibench.load(tmp_path / r.path.name))
    steps_with_gauges = set(pd.concat([r.gauges for r in with_gauges])["step"])
    assert steps_with_gauges
    html = report.render(with_gauges)
    assert html.count("<img") == report.render(without).count("<img") + len(steps_with_gauges)
    assert "server gauges" not in html  # the title is in the image; the page has no text of its own for it


def test_the_report_cli_refuses_a_path_without_runs(tmp_path: Path) -> None:
    done = subprocess.run(["ibench", "report", str(tmp_path), "-o", str(tmp_path / "r.html")],
                          capture_output=True, text=True, timeout=120)
    assert done.returncode != 0
    assert "no run directory" in done.stderr
    assert not (tmp_path / "r.html").exists()


def test_the_report_module_runs_as_a_script(runs: list[ibench.Results], tmp_path: Path) -> None:
    done = subprocess.run([sys.executable, "-m", "ibench.report", str(runs[0].path), "-o", str(tmp_path / "x.html")],
                          capture_output=True, text=True, timeout=300)
    assert done.returncode == 0, done.stderr
    assert (tmp_path / "x.html").read_text().startswith("<!doctype html>")


# --- repeats: intervals and noise ----------------------------------------------------


@pytest.fixture(scope="module")
def repeated(tmp_path_factory: pytest.TempPathFactory) -> list[ibench.Results]:
    """Two repeats each, interleaved, of p (300 µs), q (300 µs, one repeat's
    queries stalled 300 ms of 1 s: noisy) and r (600 µs)."""
    out = tmp_path_factory.mktemp("repeated")
    small = dict(rows_l_i0=2000, query_seconds=1.0, progress=False, out=out, steps=["l.i0", "qp100"])
    done = []
    for stall in (None, "&stall=300ms@400ms"):
        for label, db in [("p", "null:?latency=fixed:300us"), ("q", "null:?latency=fixed:300us" + (stall or "")),
                          ("r", "null:?latency=fixed:600us")]:
            done.append(ibench.run(db=db, label=label, **small))
    return done


def test_the_report_shows_intervals_and_the_noise_of_repeats(repeated: list[ibench.Results]) -> None:
    html = report.render(repeated, base="p")
    relative = html.index("Throughput relative to p, ± the 95% confidence interval")
    spread = html.index("Run-to-run spread: coefficient of variation")
    assert relative < spread < html.index("Background inserts/s")
    t = tables.relative(repeated, base="p")
    assert t.low is not None and t.high is not None
    shown = ibench.stats.format_interval(t.frame.loc["r", "qp100"], t.low.loc["r", "qp100"], t.high.loc["r", "qp100"])
    assert f">{shown}</td>" in html[relative:spread] and "±" in html[relative:spread]
    cv = tables.noise(repeated, base="p").frame.loc["q", "qp100"]
    assert f">{100 * cv:.1f}%</td>" in html[spread:html.index("Background inserts/s")]
    # q's stalled repeat makes its spread larger than its difference from p; r's difference is real.
    warnings = re.findall(r'<p class="warning"[^>]*>⚠ ([^<]*)</p>', html)
    assert any(w.startswith("qp100:") and "q differs from p" in w for w in warnings), warnings
    assert not any(w.startswith("qp100:") and "r differs" in w for w in warnings)  # (l.i0, a few ms, may warn)


def test_the_relative_bars_carry_the_intervals(repeated: list[ibench.Results]) -> None:
    fig = plots.relative_bars(repeated, base="p")
    bars = [c for c in fig.axes[0].containers if hasattr(c, "errorbar")]
    assert len(bars) == 2 and all(c.errorbar is not None for c in bars)  # q and r, each with error bars
    assert "error bars" in fig.axes[0].get_title()


# --- the report over the real servers ---------------------------------------------


@pytest.fixture(scope="module")
def server_runs(tmp_path_factory: pytest.TempPathFactory) -> list[ibench.Results]:
    """PostgreSQL, MariaDB InnoDB and MyRocks: a small load, then a q step of each kind."""
    dsns = {
        "postgres": server_or_skip("postgres://postgres@127.0.0.1:5432/test", "PostgreSQL"),
        "innodb": server_or_skip("mysql://root@127.0.0.1:3306/test?engine=innodb", "MariaDB"),
        "myrocks": server_or_skip("mysql://root@127.0.0.1:3306/test?engine=rocksdb", "MyRocks"),
    }
    out = tmp_path_factory.mktemp("servers")
    small = dict(steps=["l.i0", "l.x", "l.i1", "qr100", "qp100"], rows_l_i0=20000, rows_l_i1=4000,
                 query_seconds=3.0, progress=False, out=out)
    return [ibench.run(db=dsn, label=label, **small) for label, dsn in dsns.items()]


def test_the_report_over_postgres_innodb_and_myrocks_opens_in_chromium(
    server_runs: list[ibench.Results], tmp_path: Path
) -> None:
    out = tmp_path / "report.html"
    done = subprocess.run(
        ["ibench", "report", *[str(r.path) for r in server_runs], "--base", "postgres", "-o", str(out)],
        capture_output=True, text=True, timeout=300,
    )
    assert done.returncode == 0, done.stderr
    html, log = open_in_chromium(out, tmp_path)
    assert not [line for line in log.splitlines() if "CONSOLE" in line or "Uncaught" in line], log
    assert not re.findall(r'(?:src|href)="(?!data:)', html)
    labels = ["postgres", "innodb", "myrocks"]
    # The hardware-efficiency table, after the summary tables, with the server's CPU per operation of every run.
    eff = tables.efficiency(server_runs, base="postgres")
    assert html.index("Throughput relative to postgres") < html.index("Hardware efficiency per step")
    for step in ("l.i0", "l.i1", "qr100", "qp100"):
        for label in labels:
            assert eff.frame.loc[(step, label), "server_us"] > 0, (step, label)
            assert eff.ratios.loc[(step, "postgres"), "server_us"] == pytest.approx(1.0)
    # One chart per step and operation with a line per run.
    for step, op in (("l.i0", "insert"), ("l.i1", "insert"), ("qr100", "query"), ("qp100", "insert")):
        assert line_labels(plots.compare_over_time(server_runs, step, op)) == labels, (step, op)
    # The reference's buckets per step and operation: the background inserts of a q step too.
    for step, op in (("l.i0", "insert"), ("l.i1", "delete"), ("qr100", "query"), ("qr100", "insert")):
        title = f"{step}: {op} response time, % of operations per bucket"
        assert title in html, title
        shares = tables.buckets(server_runs, step, op).frame.loc[labels]
        assert shares.sum(axis=1).tolist() == pytest.approx([100.0] * 3, abs=0.01)
    # What differs: after every result, collapsed, naming the DBMSs rather than listing their settings.
    details = html.index("<details>")
    assert details > html.rindex("<img") and details > html.rindex("per bucket")
    summary = html[details:html.index("</details>")]
    assert "different DBMSs" in summary and "postgres " in summary and "MariaDB" in summary, summary[:400]
    assert "innodb_buffer_pool_size" not in summary and "shared_buffers" not in summary
    shot = tmp_path / "report.png"
    subprocess.run([chromium() or "", *FLAGS, f"--user-data-dir={tmp_path / 'profile'}", f"--screenshot={shot}",
                    "--window-size=1200,3000", out.as_uri()], capture_output=True, timeout=120)
    assert shot.stat().st_size > 20000


def test_the_report_says_which_workload_each_run_runs(tmp_path: Path) -> None:
    mine = ibench.run(db="null:", steps=["l.i0"], rows_l_i0=100, label="mine", out=tmp_path, progress=False)
    theirs = ibench.run(
        db="null:", steps=["l.i0"], rows_l_i0=100, label="theirs", compat="iibench", out=tmp_path, progress=False
    )
    page = report.render([mine, theirs])
    assert "mine: compat = ibench: ibench&#x27;s own statements and data" in page
    assert "theirs: compat = iibench: the reference client&#x27;s statements and data" in page
    assert "Workload: compat = ibench" in report.render([mine])
