"""Each run carries what changes its results; comparing runs shows exactly
the settings that differ."""

from __future__ import annotations

import json
import os
from pathlib import Path

import pytest

import ibench
from conftest import server_or_skip
from ibench import tables

MARIADB = "mysql://root@127.0.0.1:3306/test?engine=innodb"


def set_global(name: str, value: str) -> None:
    import subprocess

    subprocess.run(["mariadb", "-h", "127.0.0.1", "-u", "root", "-e", f"SET GLOBAL {name} = {value}"], check=True)


def test_a_run_records_host_facts_and_server_settings(tmp_path: Path) -> None:
    r = ibench.run(steps=["l.i0"], rows_l_i0=100, out=tmp_path, progress=False)
    cfg = r.config
    assert set(cfg.columns) == {"run_id", "scope", "name", "value", "source"}
    host = cfg[cfg["scope"] == "host"].set_index("name")
    assert int(host.loc["cpu_threads", "value"]) == os.cpu_count()
    governor = host.loc["cpufreq_governor"]
    assert governor["value"] or governor["source"].startswith("unknown: ")
    assert (cfg[cfg["scope"] == "server"].set_index("name").loc["journal_mode", "value"]) == "wal"
    assert isinstance(r.warnings, list)


def test_two_runs_with_one_server_setting_changed_show_exactly_that_setting(tmp_path: Path) -> None:
    server_or_skip(MARIADB, "MariaDB")
    small = dict(steps=["l.i0"], rows_l_i0=200, out=tmp_path, progress=False)
    name = "innodb_max_dirty_pages_pct_lwm"
    set_global(name, "10")
    try:
        before = ibench.run(db=MARIADB, label="lwm 10", **small)
        set_global(name, "20")
        after = ibench.run(db=MARIADB, label="lwm 20", **small)
    finally:
        set_global(name, "0")
    differs = tables.what_differs([before, after]).frame
    assert list(differs.index) == [("server", name)], differs
    assert list(differs.loc[("server", name)]) == ["10.000000", "20.000000"]
    from ibench import report

    readable = tables.differences([before, after])
    assert [t.title for t in readable.by_scope] == ["server (1)"] and readable.by_nature is None
    html = report.render([before, after])
    # After the results, collapsed.
    assert html.index("<details><summary>What differs between the runs (1 facts and settings)") > html.index("Throughput (ips")


def test_identical_setups_differ_in_nothing(tmp_path: Path) -> None:
    small = dict(steps=["l.i0"], rows_l_i0=100, out=tmp_path, progress=False)
    a, b = ibench.run(label="a", **small), ibench.run(label="b", **small)
    assert tables.what_differs([a, b]).frame.empty


def test_every_parameter_is_listed_documented_and_accepted_as_a_keyword() -> None:
    params = ibench.parameters()
    assert "rows_per_commit_l_i2" in params and "flush_seconds" in params
    assert all(doc.strip() for doc in params.values())
    # Each listed name is a keyword the configuration resolves (a layer of its
    # recorded value round-trips), and the recorded configuration holds each.
    recorded = json.loads(ibench._native.resolve_config(json.dumps([{}])))
    assert sorted(recorded) == sorted(params)
    for name, value in recorded.items():
        again = json.loads(ibench._native.resolve_config(json.dumps([{name: value}])))
        assert again[name] == value, name
