"""Specification of the key/value steps from Python.

* the wheel built by ``pip install .`` includes RocksDB: the kv-quick preset
  runs on it by default and every step reports engine statistics,
* the engine table shows the published reports' columns, per step or per run,
* key/value parameters are keyword arguments, a single ``value_size`` meaning
  a fixed size, and bad ones are refused naming the parameter,
* the same steps run on SQLite through its (k, v) table, without engine columns.
"""

from __future__ import annotations

import json
from pathlib import Path

import pandas as pd
import pytest

import ibench


@pytest.fixture(scope="module")
def rocks(tmp_path_factory: pytest.TempPathFactory) -> ibench.Results:
    out = tmp_path_factory.mktemp("kv")
    return ibench.run(preset="kv-quick", num=20_000, reads=2_000, writes=5_000, value_size=200, out=out, progress=False)


def test_kv_quick_runs_on_embedded_rocksdb_with_engine_statistics(rocks: ibench.Results) -> None:
    assert rocks.runs["dbms"].iloc[0] == "rocksdb"
    assert (Path(rocks.path) / "rocksdb").is_dir()
    steps = rocks.steps.set_index("step")
    assert list(steps.index) == [
        "fillseq",
        "overwrite",
        "readrandom",
        "seekrandom",
        "readwhilewriting",
        "flush",
        "waitforcompaction",
    ]
    assert (steps["status"] == "ok").all()
    assert steps.loc["fillseq", "inserts"] == 20_000
    assert steps.loc["overwrite", "inserts"] == 5_000
    assert steps.loc["readrandom", "found"] == 2_000
    assert bool(steps.loc["fillseq", "verified"]) and bool(steps.loc["overwrite", "verified"])
    assert steps["user_bytes_written"].notna().all()
    # 20,000 × (16 + 200) bytes of keys and values, plus RocksDB's write-batch
    # framing (a 12-byte header per batch of one pair, type, column family and lengths).
    assert 4_320_000 <= steps.loc["fillseq", "user_bytes_written"] < 4_800_000
    assert steps.loc["flush", "live_sst_bytes"] > 0
    assert isinstance(steps.loc["flush", "files_per_level"], str)


def test_the_engine_table_has_the_reports_columns(rocks: ibench.Results) -> None:
    table = ibench.tables.engine(rocks, "fillseq")
    assert list(table.frame.columns) == [
        "ips",
        "stall%",
        "w_amp",
        "c_wsecs",
        "c_csecs",
        "sizeGB",
        "runGB",
        "sorted_runs",
    ]
    assert table.frame["ips"].iloc[0] > 0
    every = ibench.tables.engine(rocks)
    assert list(every.frame.index.get_level_values("step"))[:2] == ["fillseq", "overwrite"]
    assert "Engine statistics" in every.to_markdown()
    titles = [t.title for t in ibench.tables.all_tables(rocks)]
    assert "Engine statistics per step" in titles
    with pytest.raises(ibench.ConfigError, match="step"):
        ibench.tables.engine(rocks, "l.i0")


def test_the_engine_table_marks_a_step_that_did_not_run_its_course(tmp_path: Path) -> None:
    cut = ibench.run(steps=["fillseq"], num=2_000_000, value_size=200, max_seconds=0.3, out=tmp_path, progress=False)
    assert cut.steps["status"].iloc[0] == "timeout"
    t = ibench.tables.engine(cut, "fillseq")
    assert t.frame.iloc[0].isna().all()
    assert t.notes is not None and str(t.notes.iloc[0]["ips"]).startswith("timeout: ")
    assert "~~timeout: " in t.to_markdown() and "line-through" in t.to_html()
    assert ibench.tables.efficiency(cut).notes is not None


def test_bad_key_value_parameters_are_refused_by_name(tmp_path: Path) -> None:
    for params, name in [
        ({"key_size": 4}, "key_size"),
        ({"value_size": [9, 3]}, "value_size"),
        ({"batch_size": 0}, "batch_size"),
        ({"threads": 0}, "threads"),
    ]:
        with pytest.raises(ibench.ConfigError, match=f"invalid {name}"):
            ibench.run(preset="kv-quick", out=tmp_path, progress=False, **params)
    # RocksDB's own options parser refuses the misspelt name, naming it.
    with pytest.raises(ibench.ConfigError, match="rocksdb refused the option .*not recognized: compresion"):
        ibench.run(db=f"rocksdb:{tmp_path}/db?compresion=lz4", preset="kv-quick", out=tmp_path, progress=False)


def test_the_steps_run_on_sqlite_through_a_table(tmp_path: Path) -> None:
    r = ibench.run(
        db=f"sqlite:{tmp_path}/kv.db",
        steps=["fillrandom", "readrandom", "seekrandom"],
        num=3_000,
        reads=500,
        batch_size=10,
        threads=2,
        out=tmp_path,
        progress=False,
    )
    steps = r.steps.set_index("step")
    assert steps.loc["fillrandom", "inserts"] == 3_000
    assert bool(steps.loc["fillrandom", "verified"])
    # About 1 − 1/e of the keys are drawn at least once by 3,000 uniform draws over 3,000 keys.
    distinct = steps.loc["fillrandom", "live_rows"]
    assert 1_700 < distinct < 2_100
    assert 0.5 < steps.loc["readrandom", "found"] / 500 < 0.8
    assert pd.isna(steps.loc["fillrandom", "w_amp"])


def test_a_step_runs_with_its_own_options_and_the_tables_rate_its_deletes(tmp_path: Path) -> None:
    bulk = "wal=off&memtable_factory=vector&allow_concurrent_memtable_write=false"
    r = ibench.run(
        db=f"rocksdb:{tmp_path}/db",
        steps=["fillseq", "deleterandom", "readseq"],
        step_options={"fillseq": bulk},
        num=5_000,
        writes=1_000,
        out=tmp_path,
        progress=False,
    )
    steps = r.steps.set_index("step")
    assert steps.loc["fillseq", "wal_bytes"] == 0 and steps.loc["deleterandom", "wal_bytes"] > 0
    assert steps.loc["deleterandom", "deletes"] == 1_000 and bool(steps.loc["deleterandom", "verified"])
    assert steps.loc["readseq", "found"] == steps.loc["deleterandom", "live_rows"]
    step = r.config[r.config["scope"] == "step"].set_index("name")["value"]
    assert step["fillseq.disableWAL"] == "true"
    assert json.loads(r.runs["config"].iloc[0])["step_options"] == {"fillseq": bulk}
    # The delete step's rate is its deletes per second, and its series is the delete operation's.
    throughput = ibench.tables.throughput(r).frame
    assert throughput.loc[throughput.index[0], "deleterandom"] == pytest.approx(steps.loc["deleterandom", "dps"])
    with pytest.raises(ibench.ConfigError, match="step_options"):
        ibench.run(db=f"sqlite:{tmp_path}/kv.db", steps=["fillseq"], step_options={"fillseq": "wal=off"},
                   out=tmp_path, progress=False)
