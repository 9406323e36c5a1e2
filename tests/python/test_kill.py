"""A hard kill loses nothing but the seconds after the last write: a real
``ibench run`` process is sent SIGKILL in the middle of a q step, and
``ibench.load`` then reads every step before it, the q step's intervals up to
its last write with a provisional row saying ``killed``, and a run that says
``killed`` (no live process holds it), never ``running``."""

from __future__ import annotations

import os
import signal
import subprocess
import sys
import time
from pathlib import Path

import pytest

import ibench
from ibench.results import PARTIAL, is_live

from conftest import server_or_skip

SERVERS = {
    "sqlite": None,
    "postgres": "postgres://postgres@127.0.0.1:5432/test",
    "mariadb": "mysql://root@127.0.0.1:3306/test",
}


def start(out: Path, db: str | None) -> subprocess.Popen[bytes]:
    """``ibench run`` of l.i0 then a 120-second qr100, written every second."""
    args = ["--steps", "l.i0,qr100", "--rows-l-i0", "2000", "--query-seconds", "120", "--flush-seconds", "1"]
    if db:
        args += ["--db", db]
    return subprocess.Popen(
        [sys.executable, "-m", "ibench", "run", *args, "--out", str(out), "--quiet"],
        stdout=subprocess.DEVNULL,
        stderr=subprocess.DEVNULL,
    )


def wait_for_writes(out: Path, step: str, writes: int, timeout: float = 60.0) -> Path:
    """The run directory, once ``step`` has written ``writes`` times."""
    deadline = time.monotonic() + timeout
    while time.monotonic() < deadline:
        for run in out.glob("*/"):
            if len(list((run / PARTIAL / step).glob("intervals-*.parquet"))) >= writes:
                return run
        time.sleep(0.2)
    raise AssertionError(f"{step} did not write {writes} times in {timeout} s")


@pytest.mark.parametrize("server", SERVERS)
def test_a_run_killed_mid_step_keeps_its_steps_and_the_running_steps_intervals(server: str, tmp_path: Path) -> None:
    db = SERVERS[server]
    if db:
        server_or_skip(db, server)
    proc = start(tmp_path, db)
    try:
        run = wait_for_writes(tmp_path, "qr100", 5)
        assert is_live(run), "the run's lock is held while it runs"
        os.kill(proc.pid, signal.SIGKILL)
        proc.wait(timeout=30)
    finally:
        proc.kill()
    assert not is_live(run), "no live process holds a killed run"
    r = ibench.load(run)
    assert r.status == "killed"
    steps = r.steps.set_index("step")
    assert steps.loc["l.i0", "status"] == "ok"
    q = steps.loc["qr100"]
    assert q["status"] == "killed"
    assert q["elapsed_s"] >= 4.0 and q["inserts"] > 0 and q["queries"] > 0
    assert q["insert_resp_p99_us"] > 0, "its percentiles so far"
    intervals = r.intervals[(r.intervals["step"] == "qr100") & (r.intervals["op"] == "insert")]
    everyone = intervals[intervals["client"].isna()]
    assert everyone["t_s"].max() >= 3.0, "the all-clients series up to the last write"
    assert intervals["count"].sum() > 0
    hist = r.histograms[(r.histograms["step"] == "qr100") & r.histograms["t_s"].notna()]
    assert len(hist) > 0
    # The report reads it too.
    report = tmp_path / "report.html"
    subprocess.run([sys.executable, "-m", "ibench", "report", str(run), "-o", str(report)], check=True)
    assert "killed" in report.read_text()


def test_a_finished_run_has_no_partial_files_and_no_lock(tmp_path: Path) -> None:
    r = ibench.run(db="null:", steps=["l.i0"], rows_l_i0=1000, out=tmp_path, progress=False, flush_seconds=0.01)
    assert r.status == "ok"
    assert not (r.path / PARTIAL).exists()
    assert not (r.path / ".lock").exists()
    assert not is_live(r.path)


PAUSES = {
    # The Insert Benchmark's wait step and the sysbench suite's postwrite pause.
    "wait": (["--steps", "l.i0,wait", "--rows-l-i0", "1000", "--wait-seconds", "60"], "l.i0"),
    "postwrite": (["--steps", "load,postwrite", "--table-size", "1000", "--postwrite-seconds", "60"], "load"),
}


@pytest.mark.parametrize("pause", PAUSES)
def test_a_run_killed_in_a_pause_keeps_a_row_for_the_pause_saying_it_did_not_finish(pause: str, tmp_path: Path) -> None:
    args, before = PAUSES[pause]
    # The default flush interval (10 s): the kill comes 2 s into the pause.
    proc = subprocess.Popen(
        [sys.executable, "-m", "ibench", "run", *args, "--out", str(tmp_path), "--quiet"],
        stdout=subprocess.DEVNULL,
        stderr=subprocess.DEVNULL,
    )
    try:
        deadline = time.monotonic() + 60
        while not any(ibench.load(run).steps["step"].eq(before).any() for run in tmp_path.glob("*/") if (run / "steps.parquet").exists()):
            assert time.monotonic() < deadline, f"{before} did not finish"
            time.sleep(0.1)
        time.sleep(2)
        os.kill(proc.pid, signal.SIGKILL)
        proc.wait(timeout=30)
    finally:
        proc.kill()
    (run,) = tmp_path.glob("*/")
    r = ibench.load(run)
    assert r.status == "killed"
    steps = r.steps.set_index("step")
    assert steps.loc[before, "status"] == "ok"
    assert pause in steps.index, f"the killed {pause} has a row"
    assert steps.loc[pause, "status"] == "killed"
