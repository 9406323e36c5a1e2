"""Sharded runs on a Dask LocalCluster of worker processes, against the real
servers: the same data as one process, histograms and intervals merged
exactly, the SLA over the summed rates, a killed worker named in the step's
error, the server's costs measured by a worker on its host, and the results
read across runs by DuckDB."""

from __future__ import annotations

import json
import os
import shutil
import signal
import subprocess
import sys
import tempfile
import threading
import time
from pathlib import Path
from typing import Any, Iterator

import dask
import duckdb
import pyarrow.parquet as pq
import pytest
from distributed import Client, LocalCluster

import ibench
from ibench import _native
from ibench import gen
from ibench.distributed import _Coordinator, worker_addresses

from conftest import server_or_skip
from test_run import doc_schema

POSTGRES = "postgres://postgres@127.0.0.1:5432/test"
MARIADB = "mysql://root@127.0.0.1:3306/test?engine=innodb"
TABLES = ("pi1", "pi2", "pi3", "pi4")

# A quick run of 4 clients, its load steps shortened so CI stays short.
QUICK: dict[str, Any] = dict(
    preset="quick",
    clients=4,
    rows_l_i0=20_000,
    rows_l_i1=4_000,
    rows_l_i2=1_000,
    steps=["l.i0", "l.x", "l.i1", "l.i2", "wait", "qr100", "qp100", "qr500", "qp500"],
    query_seconds=3.0,
    seed=7,
    progress=False,
)


def new_cluster(workers: int = 2) -> tuple[LocalCluster, Client]:
    cluster = LocalCluster(n_workers=workers, threads_per_worker=2, processes=True, dashboard_address=":0")
    return cluster, Client(cluster)


@pytest.fixture(scope="module")
def client() -> Iterator[Client]:
    cluster, c = new_cluster()
    try:
        yield c
    finally:
        c.close()
        cluster.close()


def workers(client: Client) -> list[str]:
    return worker_addresses(client)


def checksums(dsn: str) -> dict[str, str]:
    """Every table's content, hashed by the server, in key order."""
    out = {}
    for t in TABLES:
        if dsn.startswith("postgres"):
            sql = f"SELECT md5(string_agg(x::text, '|' ORDER BY transactionid)) FROM {t} x"
            cmd = ["psql", "-h", "127.0.0.1", "-U", "postgres", "-d", "test", "-Atc", sql]
        else:
            cols = "transactionid, dateandtime, cashregisterid, customerid, productid, price, data"
            sql = (
                "SET SESSION group_concat_max_len = 1 << 30; "
                f"SELECT md5(group_concat(concat_ws(',', {cols}) ORDER BY transactionid SEPARATOR '|')) FROM {t}"
            )
            cmd = ["mariadb", "-h", "127.0.0.1", "-uroot", "test", "-N", "-B", "-e", sql]
        out[t] = subprocess.run(cmd, check=True, capture_output=True, text=True).stdout.strip()
    return out


def middle_row(dsn: str, table: str) -> tuple[int, list[Any]]:
    """The key in the middle of the table's window, and the row's generated
    columns (all but dateandtime, which the server stores at its own
    resolution): cashregisterid, customerid, productid, price, data."""
    sql = (
        f"SELECT transactionid, cashregisterid, customerid, productid, price, data FROM {table} "
        f"WHERE transactionid = (SELECT (min(transactionid) + max(transactionid)) DIV 2 FROM {table})"
    )
    if dsn.startswith("postgres"):
        sql = sql.replace(" DIV ", " / ")
        cmd = ["psql", "-h", "127.0.0.1", "-U", "postgres", "-d", "test", "-At", "-F", "\t", "-c", sql]
    else:
        cmd = ["mariadb", "-h", "127.0.0.1", "-uroot", "test", "-N", "-B", "-e", sql]
    key, register, customer, product, price, data = (
        subprocess.run(cmd, check=True, capture_output=True, text=True).stdout.rstrip("\n").split("\t")
    )
    return int(key), [int(register), int(customer), int(product), float(price), data]


def wait_for_merged_step(out: Path, step: str, timeout: float = 120.0) -> None:
    """Until the coordinator has merged `step` into the run under `out`."""
    deadline = time.time() + timeout
    while time.time() < deadline:
        done = list(out.glob("*/steps.parquet"))
        if done:
            # One open file: the coordinator replaces the file after every
            # step, and a reader that opens it twice (footer, then pages)
            # can straddle the swap.
            with open(done[0], "rb") as f:
                if step in pq.read_table(f).column("step").to_pylist():
                    return
        time.sleep(0.1)
    raise AssertionError(f"{step} was not merged within {timeout:.0f} s")


def shard_tables(run: Path, name: str) -> list[Any]:
    return [pq.read_table(d / f"{name}.parquet") for d in sorted((run / "shards").iterdir())]


@pytest.mark.parametrize("dsn", [POSTGRES, MARIADB], ids=["postgres", "mariadb"])
def test_two_shards_insert_what_one_process_inserts_and_merge_exactly(client: Client, dsn: str, tmp_path: Path) -> None:
    server_or_skip(dsn, dsn.split(":")[0])
    one = ibench.run(db=dsn, out=tmp_path / "one", cluster=client, shards=1, **QUICK)
    expected = checksums(dsn)
    two = ibench.run(db=dsn, out=tmp_path / "two", cluster=client, shards=2, **QUICK)
    assert checksums(dsn) == expected, "2 shards wrote other bytes than 1"
    assert len(set(expected.values())) == 4, "each table holds its own rows"

    run = two.path
    shards = pq.read_table(run / "shards.parquet").to_pylist()
    assert [s["shard"] for s in shards] == [0, 1]
    assert {s["worker"] for s in shards} == set(workers(client)), "one shard per worker"
    assert [(s["first_client"], s["clients"]) for s in shards] == [(0, 2), (2, 2)]
    assert all(abs(s["clock_offset_s"]) < 0.05 for s in shards), shards

    # Verify passed on every table after every write step and at the end.
    steps = two.steps.set_index("step")
    writes = ["l.i0", "l.i1", "l.i2", "qr100", "qp100", "qr500", "qp500"]
    assert steps.loc[writes, "verified"].tolist() == [True] * len(writes), steps["verify_error"].tolist()
    assert bool(two.runs["verified"].iloc[0]) and two.runs["status"].iloc[0] == "ok"
    assert steps["clients"].eq(4).all()
    assert steps.loc["l.i0", "inserts"] == 4 * 20_000
    assert (steps["inserts"] == one.steps.set_index("step")["inserts"]).all()

    # A sampled row regenerates identically from (seed, table, key).
    key, stored = middle_row(dsn, "pi3")
    expected_row = gen.rows(1, table=2, start=key, seed=7).to_pylist()[0]
    columns = ("cashregisterid", "customerid", "productid", "price", "data")
    assert stored == pytest.approx([expected_row[c] for c in columns], abs=0.005), (stored, expected_row)

    # Histograms: the merged counts are the sums of the shards'.
    merged = pq.read_table(run / "histograms.parquet").to_pandas()
    parts = [t.to_pandas() for t in shard_tables(run, "histograms")]
    keys = ["step", "op", "time", "t_s"]
    summed = (
        parts[0][keys + ["count"]]
        .merge(parts[1][keys + ["count"]], on=keys, how="outer", suffixes=("_a", "_b"))
        .fillna({"count_a": 0, "count_b": 0})
    )
    summed["count"] = summed["count_a"] + summed["count_b"]
    joined = merged.merge(summed, on=keys, how="outer", suffixes=("", "_sum"), indicator=True)
    assert (joined["_merge"] == "both").all()
    assert (joined["count"] == joined["count_sum"]).all()
    # ... and the step's percentiles come from the merged histogram.
    p99 = two.percentile("l.i1", "insert", 99.0)
    assert p99 == pytest.approx(float(steps.loc["l.i1", "insert_resp_p99_us"]))

    # The merged all-clients intervals cover each step without gaps.
    iv = two.intervals
    for step in writes:
        rows = iv[(iv["step"] == step) & (iv["op"] == "insert") & iv["client"].isna()].sort_values("t_s")
        t = rows["t_s"].tolist()
        assert t == [float(i) for i in range(len(t))], (step, t)
        end = t[-1] + float(rows["length_s"].iloc[-1])
        assert end == pytest.approx(float(steps.loc[step, "elapsed_s"]), abs=0.05), (step, end)
        per_client = iv[(iv["step"] == step) & (iv["op"] == "insert") & iv["client"].notna()]
        assert sorted(per_client["client"].unique().tolist()) == [0, 1, 2, 3]
        assert int(rows["count"].sum()) == int(per_client["count"].sum())

    # The q steps' SLA is judged on the rates summed across shards, and the
    # 400 inserts/s of qr100 and qp100 are met. qr500 and qp500 get their
    # verdict: 4 paced writers and 4 unpaced query threads, 2 Dask workers and
    # the server on this host's 2 cores fell to 94% of 2,000 inserts/s in
    # qp500 in one CI run.
    for q, rate in (("qr100", 100), ("qp100", 100), ("qr500", 500), ("qp500", 500)):
        row = steps.loc[q]
        assert row["target_ips"] == 4 * rate
        assert bool(row["sla_ok"]) == (float(row["ips"]) >= 0.95 * 4 * rate), (q, row["ips"])
        if rate == 100:
            assert bool(row["sla_ok"]), (q, row["ips"])
        assert float(row["ips"]) > 0.8 * 4 * rate, (q, row["ips"])  # both shards' writers ran
        shard_ips = sum(
            float(t.to_pandas().set_index("step").loc[q, "inserts"]) for t in shard_tables(run, "steps")
        ) / float(row["elapsed_s"])
        assert float(row["ips"]) == pytest.approx(shard_ips)

    # Without a worker on the server's host, the server's costs stay null.
    assert steps["server_cpu_us_per_op"].isna().all()
    assert steps.drop(index="wait")["client_cpu_us_per_op"].notna().all(), "wait has no operations to divide by"


def test_the_server_hosts_worker_fills_the_server_columns(client: Client, tmp_path: Path) -> None:
    server_or_skip(POSTGRES, "PostgreSQL")
    shard_worker, server_worker = workers(client)
    r = ibench.run(
        db=POSTGRES,
        out=tmp_path,
        cluster=client,
        shards=1,
        server_worker=server_worker,
        preset="quick",
        clients=2,
        rows_l_i0=20_000,
        steps=["l.i0", "l.x", "qp100"],
        query_seconds=3.0,
        profile="perf",
        progress=False,
    )
    shards = pq.read_table(r.path / "shards.parquet").to_pylist()
    assert [s["worker"] for s in shards] == [shard_worker]
    # The server's CPU by thread role comes from its host's worker, per
    # operation of the merged step; profiles and waits are merged too.
    t = r.threads
    server = t[t["side"] == "server"]
    assert {"l.i0", "qp100"} <= set(server["step"]), t
    fg = server[server["kind"] == "foreground"].groupby("step")["cpu_s"].sum()
    assert fg["qp100"] > 0 and fg["l.i0"] > 0, server
    merged_steps = r.steps.set_index("step")
    assert (merged_steps.loc[["l.i0", "qp100"], "fg_cpu_us_per_op"] > 0).all(), merged_steps["fg_cpu_us_per_op"]
    ops = merged_steps["cost_ops"]
    assert (server["ops"].to_numpy() == ops.reindex(server["step"]).to_numpy()).all()
    if _native.perf_unavailable() is None:
        p = r.profiles
        assert set(p["role"]) == {"server"} and (p["run_id"] == r.runs["run_id"].iloc[0]).all()
        assert (p["ops"].to_numpy() == ops.reindex(p["step"]).to_numpy()).all()
        assert set(p["thread_kind"]) >= {"foreground"}
    waits = r.waits
    assert waits.empty or (waits["ops"].to_numpy() == ops.reindex(waits["step"]).to_numpy()).all()
    steps = r.steps.set_index("step")
    assert (steps.loc[["l.i0", "qp100"], "server_cpu_us_per_op"] > 0).all(), steps["server_cpu_us_per_op"]
    assert (steps["server_max_rss_bytes"] > 0).all()
    host = r.intervals[(r.intervals["op"] == "host") & (r.intervals["step"] == "l.i0")]
    assert host["server_cpu_pct"].notna().all() and (host["server_cpu_pct"] > 0).any()
    assert len(r.disks) > 0 and set(r.disks["step"]) == {"l.i0", "l.x", "qp100"}


def test_the_coordinator_sees_every_live_worker_while_the_client_refreshes_its_cache(client: Client, tmp_path: Path) -> None:
    # CI once saw both workers "die" at once: Client.scheduler_info() returns a
    # cache that the client's periodic refresh (which asks for no workers) can
    # overwrite mid-call. A refresh every millisecond makes that race likely.
    with dask.config.set({"distributed.client.scheduler-info-interval": "1ms"}):
        fast = Client(client.scheduler.address)
    try:
        c = _Coordinator(fast, [dict(db=POSTGRES, clients=2)], tmp_path, None, 2, None, None, False, lambda line: None)
        expected = set(workers(client))
        seen = [c.live_workers() for _ in range(300)]
        assert all(s == expected for s in seen), f"{sum(s != expected for s in seen)} of 300 looks missed a worker"
        # With every shard gone, the final count gathers nothing rather than failing.
        for s in c.shards:
            s.alive = False
        assert c.gather([], "the final count", []) == []
    finally:
        fast.close()


@pytest.mark.parametrize("dsn", [POSTGRES, MARIADB], ids=["postgres", "mariadb"])
def test_a_killed_worker_ends_the_step_with_an_error_naming_it(dsn: str, tmp_path: Path) -> None:
    server_or_skip(dsn, dsn.split(":")[0])
    shard_dirs = set(Path(tempfile.gettempdir()).glob("ibench-shard-*"))
    cluster, c = new_cluster()
    try:
        victim = workers(c)[1]
        pid = c.run(os.getpid, workers=[victim])[victim]
        killed_at: list[float] = []

        def kill() -> None:
            # Once l.x is merged, qr100 (30 s long) starts within a second: kill 3 s into it.
            wait_for_merged_step(tmp_path, "l.x")
            time.sleep(4.0)
            killed_at.append(time.time())
            os.kill(pid, signal.SIGKILL)

        threading.Thread(target=kill, daemon=True).start()
        with pytest.raises(ibench.Error, match="status error") as raised:
            ibench.run(
                db=dsn,
                out=tmp_path,
                cluster=c,
                shards=2,
                preset="quick",
                clients=2,
                rows_l_i0=2_000,
                steps=["l.i0", "l.x", "qr100"],
                query_seconds=30.0,
                progress=False,
            )
        assert time.time() - killed_at[0] < 20.0, "the coordinator noticed and stopped the other shard in time"
        assert victim in str(raised.value)
    finally:
        c.close()
        cluster.close()
        # The surviving shard removed its directory; the killed worker could not (nobody can on its host).
        left = set(Path(tempfile.gettempdir()).glob("ibench-shard-*")) - shard_dirs
        for d in left:
            shutil.rmtree(d, ignore_errors=True)
    assert len(left) <= 1, left
    run = next(p for p in tmp_path.iterdir() if p.is_dir())
    r = ibench.load(run)
    steps = r.steps.set_index("step")
    assert steps.loc["l.i0", "status"] == "ok"
    assert steps.loc["qr100", "status"] == "error"
    assert f"shard 1 on worker {victim}" in steps.loc["qr100", "error"] and "died" in steps.loc["qr100", "error"]
    assert r.runs["status"].iloc[0] == "error"
    survivor = pq.read_table(run / "shards" / "shard-0" / "steps.parquet").to_pandas().set_index("step")
    assert survivor.loc["qr100", "status"] == "interrupted", "the other shard was stopped"
    assert float(survivor.loc["qr100", "elapsed_s"]) < 25.0


def ibench_cli(*args: str) -> subprocess.CompletedProcess[str]:
    return subprocess.run([sys.executable, "-m", "ibench", *args], capture_output=True, text=True)


def test_shards_started_by_hand_merge_into_one_run_and_mismatches_are_refused(tmp_path: Path) -> None:
    server_or_skip(POSTGRES, "PostgreSQL")
    start = f"{time.time() + 3.0:.3f}"
    common = ["run", "--db", POSTGRES, "--clients", "4", "--rows-l-i0", "5000", "--steps", "l.i0,l.x,qp100",
              "--query-seconds", "2", "--quiet", "--start-at", start]
    procs = [
        subprocess.Popen([sys.executable, "-m", "ibench", *common, "--shard", f"{i}/2", "--out", str(tmp_path / f"s{i}")],
                         stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True)
        for i in range(2)
    ]
    for p in procs:
        out, err = p.communicate(timeout=300)
        assert p.returncode == 0, err
    dirs = [next((tmp_path / f"s{i}").iterdir()) for i in range(2)]
    starts = [pq.read_table(d / "steps.parquet").to_pylist()[0]["started_at"].timestamp() for d in dirs]
    assert starts == [pytest.approx(float(start), abs=1e-3)] * 2, "both shards' first step counts from --start-at"
    merged = tmp_path / "merged"
    done = ibench_cli("merge", *map(str, dirs), "-o", str(merged))
    assert done.returncode == 0, done.stderr
    r = ibench.load(merged)
    assert r.runs["run_id"].iloc[0] == "merged" and bool(r.runs["verified"].iloc[0])
    assert r.steps.set_index("step").loc["l.i0", "inserts"] == 20_000
    assert json.loads(r.runs["config"].iloc[0])["shard"] is None
    # shards.parquet holds exactly the columns docs/results.md documents.
    schema = pq.read_schema(merged / "shards.parquet")
    assert [(f.name, f.type, f.nullable) for f in schema] == doc_schema("shards")
    assert r.shards["first_client"].tolist() == [0, 2] and r.shards["worker"].isna().all()

    # The same shard twice, a non-shard, and another seed are refused by name.
    twice = ibench_cli("merge", str(dirs[0]), str(dirs[0]), "-o", str(tmp_path / "x"))
    assert twice.returncode == 1 and "shards 0..1 once each" in twice.stderr
    whole = next(p for p in Path(r.path).parent.iterdir() if p.name == "merged")
    refused = ibench_cli("merge", str(dirs[0]), str(whole), "-o", str(tmp_path / "y"))
    assert refused.returncode == 1 and "is not a shard" in refused.stderr
    other = subprocess.run(
        [sys.executable, "-m", "ibench", "run", "--db", POSTGRES, "--clients", "4", "--rows-l-i0", "100",
         "--steps", "l.i0", "--quiet", "--seed", "99", "--shard", "1/2", "--out", str(tmp_path / "seed")],
        capture_output=True, text=True,
    )
    assert other.returncode == 0, other.stderr
    seeded = ibench_cli("merge", str(dirs[0]), str(next((tmp_path / "seed").iterdir())), "-o", str(tmp_path / "z"))
    assert seeded.returncode == 1 and "seed 99" in seeded.stderr
    # The same seed, another workload: refused naming the parameter that differs.
    rows = subprocess.run(
        [sys.executable, "-m", "ibench", *common[:-2], "--rows-per-commit-l-i0", "10", "--shard", "1/2",
         "--out", str(tmp_path / "rows")],
        capture_output=True, text=True,
    )
    assert rows.returncode == 0, rows.stderr
    other_rows = ibench_cli("merge", str(dirs[0]), str(next((tmp_path / "rows").iterdir())), "-o", str(tmp_path / "w"))
    assert other_rows.returncode == 1 and "differ in rows_per_commit_l_i0" in other_rows.stderr, other_rows.stderr


def test_bad_shard_requests_are_refused_before_any_work(client: Client, tmp_path: Path) -> None:
    with pytest.raises(ibench.ConfigError, match="3 shards need 3 workers"):
        ibench.run(db=POSTGRES, out=tmp_path, cluster=client, shards=3, progress=False)
    with pytest.raises(ibench.ConfigError, match="shards cannot split 1 clients"):
        ibench.run(db=POSTGRES, out=tmp_path, cluster=client, shards=2, clients=1, progress=False)
    with pytest.raises(ibench.ConfigError, match="key/value step"):
        ibench.run(db=POSTGRES, out=tmp_path, cluster=client, shards=2, clients=2, steps=["fillseq"], progress=False)
    with pytest.raises(ibench.ConfigError, match="need a cluster"):
        ibench.run(db=POSTGRES, out=tmp_path, shards=2, progress=False)
    with pytest.raises(ibench.ConfigError, match="not a worker"):
        ibench.run(db=POSTGRES, out=tmp_path, cluster=client, server_worker="tcp://127.0.0.1:1", progress=False)
    # A login a shard's server refuses: the worker's own error class and words, naming the shard.
    with pytest.raises(ibench.DatabaseError, match=r"shard \d on worker .*role \"nobody\" does not exist"):
        ibench.run(db="postgres://nobody@127.0.0.1:5432/test", out=tmp_path, cluster=client, shards=2, clients=2,
                   steps=["l.i0"], progress=False)
    assert not any(tmp_path.iterdir()), "nothing was written"


def test_duckdb_reads_the_steps_of_many_runs_as_one_dataset(tmp_path: Path) -> None:
    for seed in (1, 2, 3):
        ibench.run(db="null:", steps=["l.i0", "l.x", "qp100"], rows_l_i0=2_000, query_seconds=1.0,
                   seed=seed, out=tmp_path, progress=False)
    con = duckdb.connect()
    rows = con.execute(
        f"SELECT count(DISTINCT run_id), count(*), sum(inserts) FROM read_parquet('{tmp_path}/*/steps.parquet') "
        "WHERE step = 'l.i0'"
    ).fetchone()
    assert rows == (3, 3, 3 * 2_000)
    per_run = con.execute(
        f"SELECT r.seed, s.ips FROM read_parquet('{tmp_path}/*/steps.parquet') s "
        f"JOIN read_parquet('{tmp_path}/*/runs.parquet') r USING (run_id) WHERE s.step = 'qp100' ORDER BY r.seed"
    ).fetchall()
    assert [seed for seed, _ in per_run] == [1, 2, 3] and all(ips > 0 for _, ips in per_run)


def test_sigterm_on_the_coordinator_stops_every_shard_and_writes_what_finished(client: Client, tmp_path: Path) -> None:
    server_or_skip(POSTGRES, "PostgreSQL")
    address = client.scheduler.address
    cmd = [sys.executable, "-m", "ibench", "run", "--db", POSTGRES, "--clients", "2", "--rows-l-i0", "2000",
           "--steps", "l.i0,l.x,qr100", "--query-seconds", "60", "--cluster", address, "--shards", "2",
           "--out", str(tmp_path)]
    proc = subprocess.Popen(cmd, stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True)
    wait_for_merged_step(tmp_path, "l.x")
    time.sleep(3.0)
    sent = time.time()
    proc.send_signal(signal.SIGTERM)
    out, err = proc.communicate(timeout=90)
    assert proc.returncode == 128 + signal.SIGTERM, err
    assert time.time() - sent < 30, "the shards stopped between operations, not after their 60 s"
    r = ibench.load(next(p for p in tmp_path.iterdir() if p.is_dir()))
    steps = r.steps.set_index("step")
    assert steps.loc["l.x", "status"] == "ok" and steps.loc["qr100", "status"] == "interrupted"
    assert float(steps.loc["qr100", "elapsed_s"]) < 30
    assert r.runs["status"].iloc[0] == "interrupted"
    for shard in ("shard-0", "shard-1"):
        rows = pq.read_table(r.path / "shards" / shard / "steps.parquet").to_pandas().set_index("step")
        assert rows.loc["qr100", "status"] == "interrupted", shard
    # The workers are free again: the next run on them works.
    again = ibench.run(db=POSTGRES, out=tmp_path / "again", cluster=client, shards=2, clients=2,
                       rows_l_i0=500, steps=["l.i0"], progress=False)
    assert again.steps["status"].tolist() == ["ok"]


def test_two_shards_run_the_sysbench_suites_clients_and_merge_their_events(client: Client, tmp_path: Path) -> None:
    server_or_skip(POSTGRES, "postgres")
    steps = ["load", "create-index", "postwrite", "point-query", "read-only_range=10", "update-index", "range-covered-si"]
    r = ibench.run(
        db=POSTGRES, out=tmp_path, cluster=client, shards=2, steps=steps, clients=4, tables=2, table_size=5000,
        read_seconds=1.0, write_seconds=1.0, postwrite_seconds=0.5, progress=False,
    )
    assert r.status == "ok", r.runs["error"].iloc[0]
    merged = r.steps.set_index("step")
    assert (merged["status"] == "ok").all(), merged["error"]
    assert merged.loc["load", "inserts"] == 10_000, "one shard loaded both tables"
    parts = [t.to_pandas().set_index("step") for t in shard_tables(r.path, "steps")]
    for step in ("point-query", "read-only_range=10", "update-index", "range-covered-si"):
        events = [int(p.loc[step, "events"]) for p in parts]
        assert all(e > 0 for e in events), f"{step}: each shard's clients ran events: {events}"
        assert merged.loc[step, "events"] == sum(events)
        assert merged.loc[step, "queries"] == sum(int(p.loc[step, "queries"]) for p in parts)
        assert merged.loc[step, "event_resp_p99_us"] > 0
    assert merged.loc["read-only_range=10", "queries"] == 16 * merged.loc["read-only_range=10", "events"]
    assert merged.loc["read-only_range=10", "eps"] == pytest.approx(
        merged.loc["read-only_range=10", "events"] / merged.loc["read-only_range=10", "elapsed_s"]
    )
