"""A campaign on servers ibench starts itself: PostgreSQL with synchronous
commit on and off, MariaDB with innodb_flush_log_at_trx_commit 1 and 2, two
repeats each, interleaved. Every run is verified, the commit-bound step (l.i2)
goes the expected way, what differs between the two PostgreSQL runs is the
setting changed, and no server or data directory is left behind."""

from __future__ import annotations

import json
import os
import subprocess
from pathlib import Path

import pytest

import ibench
from ibench import stats, tables

RUN = {
    "steps": ["l.i0", "l.x", "l.i1", "l.i2"],
    "rows_l_i0": 20000,
    "rows_l_i1": 4000,
    "rows_l_i2": 2000,
    "repeats": 2,
    "base": "pg-sync",
}


def server_processes(out: Path) -> list[str]:
    """Command lines of processes under a campaign server's directory (they are ibench-<kind>-<pid>-<n>)."""
    found = []
    for proc in Path("/proc").iterdir():
        try:
            cmdline = (proc / "cmdline").read_bytes().replace(b"\0", b" ").decode(errors="replace")
        except OSError:
            continue
        if "ibench-postgres-" in cmdline or "ibench-mariadb-" in cmdline:
            found.append(cmdline)
    return found


@pytest.fixture(scope="module")
def campaign(tmp_path_factory: pytest.TempPathFactory) -> tuple[ibench.Results, Path]:
    out = tmp_path_factory.mktemp("campaign") / "out"
    conf = out.parent
    (conf / "sync.conf").write_text("synchronous_commit = on\n")
    (conf / "async.conf").write_text("synchronous_commit = off\n")
    (conf / "flush1.cnf").write_text("innodb_flush_log_at_trx_commit = 1\n")
    (conf / "flush2.cnf").write_text("innodb_flush_log_at_trx_commit = 2\n")
    before = set(server_processes(out))
    results = ibench.campaign(
        {
            "out": str(out),
            "run": RUN,
            "server": [
                {"label": "pg-sync", "kind": "postgres", "config": str(conf / "sync.conf")},
                {"label": "pg-async", "kind": "postgres", "config": str(conf / "async.conf")},
                {"label": "maria-1", "kind": "mariadb", "config": str(conf / "flush1.cnf")},
                {"label": "maria-2", "kind": "mariadb", "config": str(conf / "flush2.cnf")},
            ],
        }
    )
    assert set(server_processes(out)) <= before, "a server ibench started still runs"
    return results, out


def test_every_run_ran_interleaved_and_verified(campaign: tuple[ibench.Results, Path]) -> None:
    results, out = campaign
    record = json.loads((out / "campaign.json").read_text())
    assert [r["label"] for r in record["runs"]] == ["pg-sync", "pg-async", "maria-1", "maria-2"] * 2
    assert all(r["status"] == "ok" for r in record["runs"])
    assert results.runs["verified"].tolist() == [True] * 8
    assert (out / "report.html").stat().st_size > 10_000
    # Each server's directory is gone; its log stayed with its run.
    for r in record["runs"]:
        assert "ready" in (out / r["run_id"] / "server.log").read_text()
    leftovers = [p for p in Path(os.environ.get("TMPDIR", "/tmp")).glob(f"ibench-*-{os.getpid()}-*")]
    assert leftovers == []


def test_the_commit_bound_step_goes_the_expected_way(campaign: tuple[ibench.Results, Path]) -> None:
    results, out = campaign
    steps = results.steps.merge(results.runs[["run_id", "label"]], on="run_id")
    ips = steps[steps["step"] == "l.i2"].groupby("label")["ips"].mean()
    assert ips["pg-async"] > 1.2 * ips["pg-sync"], ips
    assert ips["maria-2"] > 1.2 * ips["maria-1"], ips
    relative = tables.relative(results, base="pg-sync")
    assert relative.frame.loc["pg-async", "l.i2"] > 1.0
    # With its interval: the ratio of the two repeats' means, and where it may lie.
    assert relative.method is not None and relative.method.loc["pg-async", "l.i2"] == "repeats"
    low, high = relative.low.loc["pg-async", "l.i2"], relative.high.loc["pg-async", "l.i2"]
    assert low < relative.frame.loc["pg-async", "l.i2"] < high, (low, high)
    # MariaDB's pair, against its own base: the same direction, with its interval.
    maria = ibench.load([p for p, label in zip(results.paths, results.runs["label"]) if label.startswith("maria")])
    rel = tables.relative(maria, base="maria-1")
    assert rel.frame.loc["maria-2", "l.i2"] > 1.0
    assert rel.method is not None and rel.method.loc["maria-2", "l.i2"] == "repeats"
    assert rel.low.loc["maria-2", "l.i2"] < rel.frame.loc["maria-2", "l.i2"] < rel.high.loc["maria-2", "l.i2"]
    # The report shows the cell with its interval, as the table's text has it.
    cell = stats.format_interval(relative.frame.loc["pg-async", "l.i2"], low, high)
    assert cell in (out / "report.html").read_text(), cell


def test_what_differs_between_the_postgres_runs_is_the_setting_changed(campaign: tuple[ibench.Results, Path]) -> None:
    results, _ = campaign
    ids = results.runs[results.runs["label"].isin(["pg-sync", "pg-async"])]["run_id"].tolist()[:2]
    pg = ibench.load([results.paths[results.runs["run_id"].tolist().index(i)] for i in ids])
    differs = tables.differences(pg)
    settings = {(t.title, name) for t in differs.by_scope for name in t.frame.index}
    # The one setting changed, and nothing else but what differs by nature (ports, paths, pids).
    assert [name for _, name in settings] == ["synchronous_commit"], settings
    assert differs.by_nature is not None and "port" in set(differs.by_nature.frame.index)


def test_ibench_export_writes_the_campaigns_runs_for_bencher(campaign: tuple[ibench.Results, Path]) -> None:
    _, out = campaign
    done = subprocess.run(["ibench", "export", str(out), "--format", "bencher"], capture_output=True, text=True)
    assert done.returncode == 0, done.stderr
    bmf = json.loads(done.stdout)
    assert {"pg-sync/l.i2", "maria-2/l.i2"} <= set(bmf), sorted(bmf)
    assert bmf["pg-async/l.i2"]["throughput"]["value"] > 0


def test_a_base_server_that_refuses_its_my_cnf_costs_only_its_own_runs(tmp_path: Path) -> None:
    """The base (here the first server) cannot start: its my.cnf has a line
    MariaDB refuses. The campaign records why with its log's tail, runs the
    other server, exits 1, and still writes the report, compared with the
    first server that ran; no server is left behind."""
    (tmp_path / "bad.cnf").write_text("no_such_option = 1\n")
    out = tmp_path / "out"
    (tmp_path / "campaign.toml").write_text(
        f'out = "{out}"\n[run]\nsteps = ["l.i0"]\nrows_l_i0 = 2000\n'
        '[[server]]\nlabel = "maria-bad"\nkind = "mariadb"\nconfig = "bad.cnf"\n'
        '[[server]]\nlabel = "pg"\nkind = "postgres"\n'
    )
    before = set(server_processes(out))
    done = subprocess.run(
        ["ibench", "campaign", str(tmp_path / "campaign.toml"), "--quiet"], capture_output=True, text=True, timeout=600
    )
    assert done.returncode == 1, (done.stdout, done.stderr)
    runs = json.loads((out / "campaign.json").read_text())["runs"]
    assert [(r["label"], r["status"]) for r in runs] == [("maria-bad", "server error"), ("pg", "ok")], runs
    assert "no_such_option" in runs[0]["error"], "the log's tail says why"
    assert "the report compares with \"pg\"" in done.stderr, done.stderr
    assert (out / "report.html").stat().st_size > 10_000
    assert set(server_processes(out)) <= before, "a server ibench started still runs"


def test_an_invalid_campaign_is_a_config_error_naming_it(tmp_path: Path) -> None:
    with pytest.raises(ibench.ConfigError):
        ibench.campaign({"out": str(tmp_path / "out"), "run": {"steps": ["l.i0"]}, "server": [{"label": "x"}]})
    assert not (tmp_path / "out").exists()
