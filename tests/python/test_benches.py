"""The benches in benches/ refuse bad input with an error naming it.

* db_bench_side_by_side.py refuses a db_bench path that is not an
  executable file before it runs anything (it used to end in a traceback
  from subprocess),
* both refuse a --dir that is not a directory and counts below one.
* db_bench_side_by_side.py seeds both tools with --seed + the round's index
  (db_bench seeded itself from the clock, ibench kept one seed).
* client_cpu.py drops its scratch database on the servers it used.
* profile_overhead.py refuses fewer than 2 rounds and a count that is not one.
* sysbench_side_by_side.py runs both tools on both servers (MariaDB and a
  private PostgreSQL), counts equal statements per event, drops its table and
  removes its server; it refuses bad counts and names before running anything.
"""

from __future__ import annotations

import os
import signal
import subprocess
import sys
import time
from pathlib import Path

import pytest

BENCHES = Path(__file__).resolve().parents[2] / "benches"


def _refused(script: str, *args: str) -> str:
    done = subprocess.run([sys.executable, str(BENCHES / script), *args], capture_output=True, text=True, timeout=60)
    assert done.returncode == 2, done.stderr
    assert "Traceback" not in done.stderr
    return done.stderr


@pytest.mark.parametrize("db_bench", ["/nonexistent/db_bench", "/tmp"])
def test_the_side_by_side_refuses_a_db_bench_that_is_not_an_executable_file(db_bench: str) -> None:
    stderr = _refused("db_bench_side_by_side.py", db_bench, "--rounds", "1")
    assert f"db_bench: {db_bench} is not an executable file" in stderr, stderr


def test_the_benches_refuse_a_databases_directory_that_does_not_exist(tmp_path: Path) -> None:
    missing = str(tmp_path / "missing")
    assert f"--dir: {missing} is not a directory" in _refused("compression_study.py", "--dir", missing)
    assert f"--dir: {missing} is not a directory" in _refused("db_bench_side_by_side.py", sys.executable, "--dir", missing)


def test_the_benches_refuse_counts_below_one() -> None:
    assert "got 0, 1 and 60" in _refused("compression_study.py", "--num", "0")
    assert "got 1000000 and 0" in _refused("db_bench_side_by_side.py", sys.executable, "--rounds", "0")


def test_the_profile_overhead_bench_refuses_too_few_rounds_and_words_for_counts() -> None:
    assert "ROUNDS must be 2 or more (1)" in _refused("profile_overhead.py", "1")
    assert "invalid argument: invalid literal for int()" in _refused("profile_overhead.py", "many")


def test_the_side_by_side_refuses_an_ibench_bin_that_is_not_an_executable_file(tmp_path: Path) -> None:
    stderr = _refused("db_bench_side_by_side.py", sys.executable, "--ibench-bin", str(tmp_path))
    assert f"--ibench-bin: {tmp_path} is not an executable file" in stderr, stderr


HALT_POLL = Path("/sys/module/haltpoll/parameters/guest_halt_poll_ns")


def test_client_cpu_runs_each_halt_polling_value_and_puts_the_hosts_back(tmp_path: Path) -> None:
    """benches/client_cpu.py with IBENCH_HALT_POLL_NS: a column per value, the
    value in effect while each runs, and the host's own value back after."""
    if not os.access(HALT_POLL, os.W_OK):
        pytest.skip(f"{HALT_POLL}: missing (not a KVM guest with the haltpoll module) or not writable (not root)")
    original = HALT_POLL.read_text().strip()
    seen = tmp_path / "seen"
    # A stand-in ibench: records the halt polling in effect, then runs the real one.
    fake = tmp_path / "ibench"
    fake.write_text(f"#!/bin/sh\ncat {HALT_POLL} >> {seen}\nexec ibench \"$@\"\n")
    fake.chmod(0o755)
    env = {**os.environ, "IBENCH_BIN": str(fake), "IBENCH_TARGETS": "null",
           "IBENCH_STEPS": "qr100", "IBENCH_HALT_POLL_NS": "0,123456"}
    done = subprocess.run([sys.executable, str(BENCHES / "client_cpu.py"), "1", "0.2"], env=env,
                          capture_output=True, text=True, timeout=300)
    assert done.returncode == 0, done.stderr
    assert "ibench poll=0: client µs/op" in done.stdout and "ibench poll=123456: client µs/op" in done.stdout
    assert "| null | qr100 |" in done.stdout
    # The load with the host's value, then one run under each value in turn.
    assert seen.read_text().split() == [original, "0", "123456"]
    assert HALT_POLL.read_text().strip() == original
    env["IBENCH_HALT_POLL_NS"] = "fast"
    refused = subprocess.run([sys.executable, str(BENCHES / "client_cpu.py"), "1", "0.2"], env=env,
                             capture_output=True, text=True, timeout=60)
    assert refused.returncode == 1 and "IBENCH_HALT_POLL_NS: 'fast': expected nanoseconds" in refused.stderr
    assert HALT_POLL.read_text().strip() == original


def test_client_cpu_puts_the_hosts_halt_polling_back_when_terminated(tmp_path: Path) -> None:
    """SIGTERM while a run under another value is under way: the host's own value is back."""
    if not os.access(HALT_POLL, os.W_OK):
        pytest.skip(f"{HALT_POLL}: missing (not a KVM guest with the haltpoll module) or not writable (not root)")
    original = HALT_POLL.read_text().strip()
    seen = tmp_path / "seen"
    # A stand-in ibench that hangs once the benchmark has set the other value.
    fake = tmp_path / "ibench"
    fake.write_text(f"#!/bin/sh\ncat {HALT_POLL} >> {seen}\n"
                    f"[ \"$(cat {HALT_POLL})\" = 123456 ] && exec sleep 60\nexec ibench \"$@\"\n")
    fake.chmod(0o755)
    env = {**os.environ, "IBENCH_BIN": str(fake), "IBENCH_TARGETS": "null",
           "IBENCH_STEPS": "qr100", "IBENCH_HALT_POLL_NS": "123456"}
    bench = subprocess.Popen([sys.executable, str(BENCHES / "client_cpu.py"), "1", "0.2"], env=env,
                             stdout=subprocess.DEVNULL, stderr=subprocess.PIPE, text=True)
    try:
        deadline = time.monotonic() + 120
        while not (seen.exists() and "123456" in seen.read_text().split()):
            assert bench.poll() is None and time.monotonic() < deadline, "the bench reached the run under 123456"
            time.sleep(0.05)
        assert HALT_POLL.read_text().strip() == "123456"
        bench.send_signal(signal.SIGTERM)
        bench.wait(timeout=30)
    finally:
        bench.kill()
        bench.communicate()  # closes its stderr pipe (unclosed, a ResourceWarning)
    assert bench.returncode == 143
    assert HALT_POLL.read_text().strip() == original


def _options_file(db: Path) -> dict[str, str]:
    """The first value of each name in the newest OPTIONS file RocksDB wrote in `db`."""
    written: dict[str, str] = {}
    newest = max(db.glob("OPTIONS-*"), key=lambda p: int(p.name.split("-")[1]))
    for line in newest.read_text().splitlines():
        name, sep, value = line.strip().partition("=")
        if sep:
            written.setdefault(name, value)
    return written


def _pg_has_scratch() -> bool:
    """True while benches/client_cpu.py's scratch database exists on the local PostgreSQL."""
    pg = subprocess.run(["psql", "-h", "127.0.0.1", "-U", "postgres", "-d", "postgres", "-Atc",
                         "SELECT count(*) FROM pg_database WHERE datname = 'ib_client_cpu'"],
                        capture_output=True, text=True, check=True)
    return pg.stdout.strip() == "1"


def test_client_cpu_drops_its_scratch_database_on_both_servers() -> None:
    """benches/client_cpu.py makes `ib_client_cpu` on each server a target
    uses; it used to leave it there after the run."""
    import shutil

    ibench_bin = shutil.which("ibench")
    assert ibench_bin, "the ibench command (pip install .)"
    env = {**os.environ, "IBENCH_BIN": ibench_bin, "IBENCH_TARGETS": "PostgreSQL tcp,MariaDB tcp",
           "IBENCH_STEPS": "l.i1", "IBENCH_ROWS": "l.i0=2000,l.i1=1000"}
    done = subprocess.run([sys.executable, str(BENCHES / "client_cpu.py"), "1", "1"], env=env,
                          capture_output=True, text=True, timeout=300)
    assert done.returncode == 0, done.stderr
    assert "| PostgreSQL tcp | l.i1 |" in done.stdout and "| MariaDB tcp | l.i1 |" in done.stdout, done.stdout
    assert not _pg_has_scratch(), "ib_client_cpu left on PostgreSQL"
    my = subprocess.run(["mariadb", "-h", "127.0.0.1", "-u", "root", "-N", "-e", "SHOW DATABASES LIKE 'ib_client_cpu'"],
                        capture_output=True, text=True, check=True)
    assert my.stdout.strip() == "", "ib_client_cpu left on MariaDB"


def test_client_cpu_drops_its_scratch_database_when_terminated(tmp_path: Path) -> None:
    """SIGTERM while a run on the scratch database is under way: the database
    is dropped before the script exits."""
    started = tmp_path / "started"
    # A stand-in ibench that says it started, then hangs in its first run.
    fake = tmp_path / "ibench"
    fake.write_text(f"#!/bin/sh\ntouch {started}\nexec sleep 60\n")
    fake.chmod(0o755)
    env = {**os.environ, "IBENCH_BIN": str(fake), "IBENCH_TARGETS": "PostgreSQL tcp", "IBENCH_STEPS": "l.i1"}
    bench = subprocess.Popen([sys.executable, str(BENCHES / "client_cpu.py"), "1", "1"], env=env,
                             stdout=subprocess.DEVNULL, stderr=subprocess.PIPE, text=True)
    try:
        deadline = time.monotonic() + 120
        while not started.exists():
            assert bench.poll() is None and time.monotonic() < deadline, "the bench reached its first run"
            time.sleep(0.05)
        assert _pg_has_scratch(), "the scratch database exists while the run is under way"
        bench.send_signal(signal.SIGTERM)
        bench.wait(timeout=60)
    finally:
        bench.kill()
        bench.communicate()  # closes its stderr pipe (unclosed, a ResourceWarning)
    assert bench.returncode == 143
    assert not _pg_has_scratch(), "ib_client_cpu left on PostgreSQL after SIGTERM"


def test_the_side_by_side_seeds_both_tools_anew_each_round(tmp_path: Path) -> None:
    """Round r seeds db_bench and ibench with --seed + r: left alone, db_bench
    seeded itself from the clock (new keys each round) and ibench kept its
    default seed (the same keys every round), so the rounds compared many
    LSM shapes against one. A stand-in db_bench records its flags and prints
    the lines the script reads; ibench runs for real."""
    calls = tmp_path / "calls"
    stand_in = tmp_path / "db_bench"
    stand_in.write_text(
        f"#!{sys.executable}\n"
        "import sys\n"
        f"open({str(calls)!r}, 'a').write(' '.join(sys.argv[1:]) + '\\n')\n"
        "print('RocksDB:    version 11.8.1')\n"
        "print('fillseq      :       1.000 micros/op 1000000 ops/sec 0.002 seconds 2000 operations;')\n"
    )
    stand_in.chmod(0o755)
    results = tmp_path / "results"
    done = subprocess.run(
        [sys.executable, str(BENCHES / "db_bench_side_by_side.py"), str(stand_in), "--num", "2000", "--rounds", "3",
         "--steps", "fillseq", "--dir", str(tmp_path), "--seed", "40", "--results", str(results)],
        capture_output=True, text=True, timeout=300,
    )
    assert done.returncode == 0, done.stderr
    seeds = [next(a for a in line.split() if a.startswith("--seed=")) for line in calls.read_text().splitlines()]
    assert seeds == ["--seed=40", "--seed=41", "--seed=42"], seeds
    import ibench

    runs = sorted(int(ibench.load(d).runs["seed"].iloc[0]) for d in results.glob("*") if (d / "runs.parquet").exists())
    assert runs == [40, 41, 42], runs
    assert "(seeds 40–42)" in done.stdout, done.stdout
    assert "--seed: 0: must be at least 1" in _refused("db_bench_side_by_side.py", str(stand_in), "--seed", "0")


def test_the_side_by_side_rotates_several_ibench_builds_with_db_bench(tmp_path: Path) -> None:
    """`--ibench-bin NAME=PATH` twice: every round runs db_bench and both
    builds, each tool in each place in turn, and the report pairs the builds'
    rates with each other as well as with db_bench's."""
    import shutil

    ibench_bin = shutil.which("ibench")
    assert ibench_bin, "the ibench command (pip install .)"
    stand_in = tmp_path / "db_bench"
    stand_in.write_text(
        f"#!{sys.executable}\n"
        "print('RocksDB:    version 11.8.1')\n"
        "print('fillseq      :       1.000 micros/op 1000000 ops/sec 0.002 seconds 2000 operations;')\n"
    )
    stand_in.chmod(0o755)
    done = subprocess.run(
        [sys.executable, str(BENCHES / "db_bench_side_by_side.py"), str(stand_in), "--num", "2000", "--rounds", "3",
         "--steps", "fillseq", "--dir", str(tmp_path), "--results", str(tmp_path / "results"),
         "--ibench-bin", f"old={ibench_bin}", "--ibench-bin", f"new={ibench_bin}"],
        capture_output=True, text=True, timeout=300,
    )
    assert done.returncode == 0, done.stderr
    order = [line.split()[4] for line in done.stdout.splitlines() if line.startswith("round ")]
    assert order == ["db_bench", "old", "new", "old", "new", "db_bench", "new", "db_bench", "old"], order
    assert "old:" in done.stdout and "new:" in done.stdout
    assert "| fillseq | new / old | " in done.stdout, done.stdout
    twice = _refused("db_bench_side_by_side.py", str(stand_in), "--ibench-bin", f"a={ibench_bin}",
                     "--ibench-bin", f"a={ibench_bin}")
    assert f"--ibench-bin: a={ibench_bin}: name each build once" in twice


def _db_bench_source() -> str:
    """db_bench_tool.cc of the RocksDB ibench builds (librocksdb-sys' sources, as benches/build_db_bench.sh finds them)."""
    import json

    meta = subprocess.run(["cargo", "metadata", "--format-version", "1", "--locked"], capture_output=True, text=True,
                          check=True, cwd=BENCHES.parent)
    package = next(p for p in json.loads(meta.stdout)["packages"] if p["name"] == "librocksdb-sys")
    return (Path(package["manifest_path"]).parent / "rocksdb/tools/db_bench_tool.cc").read_text()


def test_every_db_bench_default_that_is_not_rocksdb_s_is_matched_or_explained(tmp_path: Path) -> None:
    """db_bench's flag defaults (its DEFINE_ lines) against the options RocksDB
    writes by default: each option where they differ is given to ibench
    (DB_BENCH_DEFAULTS), given to db_bench (DB_BENCH_FLAGS), or explained
    (NOT_MATCHED). The lists missed two until read back this way."""
    import math
    import re
    import runpy

    import ibench

    lists = runpy.run_path(str(BENCHES / "db_bench_defaults.py"))
    db = tmp_path / "db"
    ibench.run(db=f"rocksdb:{db}", steps=["fillseq"], num=100, out=tmp_path / "out", progress=False)
    rocksdb = _options_file(db)

    def literal(kind: str, text: str) -> str | None:
        """A DEFINE's default when it is a literal or a product of literals, else None."""
        if kind == "bool":
            return text if text in ("true", "false") else None
        text = re.sub(r"(?<=\d)(ull|ULL|u|U)\b", "", text)
        if not re.fullmatch(r"[\d.]+(\s*\*\s*[\d.]+)*", text):
            return None  # an expression of names: RocksDB's own default, mostly
        number = math.prod(float(f) for f in text.split("*"))
        return str(number) if kind == "double" else str(int(number))

    differ = {}
    for kind, name, text in re.findall(r"DEFINE_(bool|int32|int64|uint64|double)\(\s*(\w+)\s*,\s*([^,]+?)\s*,",
                                       _db_bench_source()):
        ours = literal(kind, text)
        if name in rocksdb and ours is not None:
            theirs = str(float(rocksdb[name])) if kind == "double" else rocksdb[name]
            if ours != theirs:
                differ[name] = (ours, theirs)
    assert "enable_pipelined_write" in differ, differ  # the parse found what is known to differ
    matched = {option.split("=")[0] for option, _ in lists["DB_BENCH_DEFAULTS"]}
    matched |= {flag[2:].split("=")[0] for flag, _ in lists["DB_BENCH_FLAGS"]}
    unexplained = {k: v for k, v in differ.items() if k not in matched and k not in lists["NOT_MATCHED"]}
    assert not unexplained, f"db_bench's default, RocksDB's: {unexplained}"


def test_db_bench_s_defaults_reach_rocksdb_as_ibench_options(tmp_path: Path) -> None:
    """Each of DB_BENCH_DEFAULTS is an option RocksDB takes, with the value
    it then writes into its OPTIONS file (read back, as db_bench's would be)."""
    import runpy

    import ibench

    DB_BENCH_DEFAULTS = runpy.run_path(str(BENCHES / "db_bench_defaults.py"))["DB_BENCH_DEFAULTS"]

    options = [option for option, _ in DB_BENCH_DEFAULTS]
    db = tmp_path / "db"
    ibench.run(db=f"rocksdb:{db}?{'&'.join(options)}", steps=["fillseq"], num=1000, out=tmp_path / "out",
               progress=False)
    written = _options_file(db)
    for option, flag in DB_BENCH_DEFAULTS:
        name, value = option.split("=", 1)
        assert flag == f"--{name}={value}", (option, flag)
        assert written.get(name) == value, (option, written.get(name))


def _sysbench_or_skip() -> str:
    """sysbench's path; outside CI a skip when it is missing, in CI (CI=true) a failure."""
    import shutil

    found = shutil.which("sysbench")
    if found is None:
        if os.environ.get("CI") == "true":
            raise AssertionError("sysbench is missing and CI=true (.ci/services installs it)")
        pytest.skip("sysbench is not installed")
    return found


def _mariadb(sql: str) -> str:
    """`sql` through the mariadb client on the test server (root, no password)."""
    done = subprocess.run(["mariadb", "-h", "127.0.0.1", "-u", "root", "-N", "-B", "-e", sql],
                          capture_output=True, text=True, check=True)
    return done.stdout


def test_the_sysbench_side_by_side_runs_both_tools_on_both_servers(tmp_path: Path) -> None:
    """benches/sysbench_side_by_side.py as short as it goes (2000 rows, 1-s runs, 2 rounds of the
    load, of read-write and of read-write at the rate) on MariaDB and on a private PostgreSQL: each
    server's table has a row, both tools ran 20 statements per event as PostgreSQL's
    pg_stat_statements and xact_commit count them, and the script leaves no table and no server."""
    import re
    import shutil
    import tempfile

    from conftest import server_or_skip

    sysbench = _sysbench_or_skip()
    ibench_bin = shutil.which("ibench")
    assert ibench_bin, "the ibench command (pip install .)"
    server_or_skip("mysql://root@127.0.0.1:3306/test", "MariaDB")
    database = "ib_sysbench_sbs"  # its own: other tests use sbtest1 in test
    _mariadb(f"CREATE DATABASE IF NOT EXISTS {database}")
    before = set(Path(tempfile.gettempdir()).glob("sysbench-sbs-pg-*"))
    try:
        done = subprocess.run(
            [sys.executable, str(BENCHES / "sysbench_side_by_side.py"), "--sysbench", sysbench,
             "--ibench-bin", ibench_bin, "--mariadb", f"mysql://root@127.0.0.1:3306/{database}?engine=innodb",
             "--rows", "2000", "--seconds", "1", "--rounds", "2", "--load-rounds", "2",
             "--microbenchmarks", "oltp_read_write", "--out", str(tmp_path / "out"),
             "--markdown", str(tmp_path / "report.md")],
            capture_output=True, text=True, timeout=600,
        )
        assert done.returncode == 0, done.stderr
        assert "Traceback" not in done.stderr
        sections = done.stdout.split("## sysbench vs ibench on ")
        assert [s.split()[0] for s in sections[1:]] == ["PostgreSQL", "MariaDB"], done.stdout
        pg, my = sections[1], sections[2]
        assert "| oltp_read_write → read-write_range=100 | 20.00 | 20.00 | ✓ |" in pg, pg
        # MariaDB's counters are every client's: on a shared server only their presence is certain.
        assert re.search(r"\| oltp_read_write → read-write_range=100 \| \d+\.\d\d \| \d+\.\d\d \|", my), my
        assert "| sysbench |" in my and "| ibench |" in my, my  # the load's rows
        assert (tmp_path / "report.md").read_text().strip() == done.stdout.strip()
        assert _mariadb(f"SHOW TABLES FROM {database}").strip() == "", "sbtest1 left on MariaDB"
        assert set(Path(tempfile.gettempdir()).glob("sysbench-sbs-pg-*")) == before, "the private server left"
    finally:
        _mariadb(f"DROP DATABASE IF EXISTS {database}")


def test_the_sysbench_side_by_side_refuses_bad_counts_names_and_tools() -> None:
    assert "got 1000000, 1, 10 and 0" in _refused("sysbench_side_by_side.py", "--rounds", "0")
    assert "--microbenchmarks: oltp_nothing: not one of" in _refused(
        "sysbench_side_by_side.py", "--microbenchmarks", "oltp_point_select,oltp_nothing")
    assert "--servers: oracle: expected postgres, mariadb or both" in _refused(
        "sysbench_side_by_side.py", "--servers", "oracle")
    assert "--sysbench: /nonexistent/sysbench is not an executable file" in _refused(
        "sysbench_side_by_side.py", "--sysbench", "/nonexistent/sysbench")
