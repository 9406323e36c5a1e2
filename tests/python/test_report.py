"""Plots and the HTML report over real runs: every plot is a non-empty PNG
with the expected series; the report opens in headless Chromium with its
tables and images."""

from __future__ import annotations

import re
import shutil
import subprocess
import sys
from pathlib import Path

import pytest
from matplotlib.figure import Figure

import ibench
from ibench import plots

STEPS = ["l.i0", "l.x", "l.i1", "qr100", "qp100"]


@pytest.fixture(scope="module")
def runs(tmp_path_factory: pytest.TempPathFactory) -> list[ibench.Results]:
    out = tmp_path_factory.mktemp("runs")
    small = dict(rows_l_i0=3000, rows_l_i1=600, query_seconds=2.0, progress=False, out=out)
    return [
        ibench.run(steps=STEPS, clients=2, label="sqlite", **small),
        ibench.run(db="null:?latency=fixed:300us", steps=STEPS, clients=2, label="null", **small),
    ]


def png(fig: Figure, path: Path) -> int:
    fig.savefig(path)
    return path.stat().st_size


def line_labels(fig: Figure) -> list[str]:
    return [str(line.get_label()) for line in fig.axes[0].get_lines() if not str(line.get_label()).startswith("_")]


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


def test_the_html_report_opens_in_chromium_with_its_tables_and_images(runs: list[ibench.Results], tmp_path: Path) -> None:
    out = tmp_path / "report.html"
    done = subprocess.run(
        ["ibench", "report", *[str(r.path) for r in runs], "--base", "sqlite", "-o", str(out)],
        capture_output=True,
        text=True,
        timeout=300,
    )
    assert done.returncode == 0, done.stderr
    browser = chromium()
    if browser is None:
        assert not __import__("os").environ.get("CI"), "CI needs chromium (.ci/run installs it)"
        pytest.skip("no chromium on this machine")
    flags = ["--headless", "--no-sandbox", "--disable-gpu", "--disable-background-networking",
             "--disable-component-update", "--disable-sync", "--no-first-run", f"--user-data-dir={tmp_path / 'profile'}"]
    dom = subprocess.run([browser, *flags, "--dump-dom", out.as_uri()], capture_output=True, text=True, timeout=120)
    html = dom.stdout
    assert len(re.findall(r"<table", html)) >= 5, html[:500]
    images = re.findall(r'<img[^>]+src="data:image/png;base64,', html)
    assert len(images) >= 1 + 2 * 2 * 3, len(images)  # relative bars + per run, step and op: 2 plots
    for title in ("Throughput (ips, indexed rows/s, qps)", "Throughput relative to sqlite", "Background inserts/s"):
        assert title in html
    shot = tmp_path / "report.png"
    subprocess.run([browser, *flags, f"--screenshot={shot}", "--window-size=1200,1600", out.as_uri()],
                   capture_output=True, timeout=120)
    assert shot.stat().st_size > 20000


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
