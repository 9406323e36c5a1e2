"""ibench's sysbench family beside sysbench 1.0.20 itself: the load, then each shared microbenchmark, paired.

    python3 benches/sysbench_side_by_side.py [--servers postgres,mariadb] [--rows 1000000] [--threads 1]
        [--seconds 10] [--rounds 5] [--load-rounds 3] [--microbenchmarks oltp_point_select,...]
        [--ibench-bin PATH] [--out DIR] [--markdown FILE] [--json FILE]

For each server (PostgreSQL: a private server this script starts, or a DSN;
MariaDB/MySQL: a DSN) it runs, one child process per run:

1. The load: `sysbench oltp_common prepare` (1 table of --rows rows, one
   connection, the k index included) against `ibench run --steps
   load,create-index` (the same table, one connection), alternating which goes
   first, --load-rounds rounds, each on a dropped table: rows per wall-clock
   second of each process and the ratio ibench/sysbench with its 95% interval.
2. The microbenchmarks both tools have (MICROBENCHMARKS below), on the one
   table the last load left (ibench's and sysbench's tables are the same
   schema; VACUUM ANALYZE and CHECKPOINT, or ANALYZE TABLE, first), reads
   before writes, delete and insert last: --rounds paired rounds in ABBA order
   (sysbench, ibench | ibench, sysbench | ...), each run --seconds long with
   --threads connections and its own seed. Per microbenchmark: statements per
   event of each as the server counted them; each tool's QPS (its own figure:
   statements, BEGIN and COMMIT included, per second) and the ratio
   ibench/sysbench over the paired rounds; client CPU per statement, user and
   system apart; server CPU per statement.
3. Right after each microbenchmark's unlimited rounds, --rate-rounds paired
   rounds of both at one rate, R = 70% of the lower of the two tools' mean
   event rates (sysbench --rate=R, ibench --events-per-second R): each one's
   server CPU per statement and their ratio.
4. A Markdown table per server (stdout, and --markdown FILE) with the targets'
   verdicts: statements per event equal; QPS ratio >= 1.0; ibench's client user
   CPU per statement at most half of sysbench's; server CPU per statement at
   the same rate within 5%; the load at least as fast.

How each figure is measured, the same way for both tools:

* Client CPU: getrusage(RUSAGE_CHILDREN) before and after the child (the
  `ibench` executable or `sysbench`), user and system apart. It covers the
  whole process: start-up, connecting, preparing statements, and for ibench
  its monitoring and result files. Such fixed costs per run weigh more the
  fewer statements a run makes: short runs of slow microbenchmarks (the
  writes) inflate both CPU figures of the tool that has more of them. Give
  --ibench-bin the built executable (cargo's target/release/ibench): the
  `ibench` Python entry point adds its interpreter's start-up (~1 s of CPU).
* Server CPU: utime+stime+cutime+cstime from /proc/<pid>/stat of the server's
  processes (the postmaster and its children, or mariadbd), so a local server
  only; the tools' housekeeping queries included. On a shared server it
  includes the other tenants' work.
* Statements per event: MariaDB/MySQL the deltas of SHOW GLOBAL STATUS
  Com_select, Com_update, Com_insert, Com_delete, Com_begin and Com_commit
  over the tool's own event count: around sysbench's process (it sends no
  statements of its own), and over ibench's measured step as ibench read them
  (its counters.parquet: its start-up's facts and checks are not its events').
  PostgreSQL: pg_stat_statements' calls of the statements naming a sbtest
  table, plus BEGIN and COMMIT. pg_stat_statements counts a prepared BEGIN or
  COMMIT once per session, so when any was seen the transactions come from
  pg_stat_database's xact_commit of the database, less the calls of its other
  statements (the tools' housekeeping, each its own transaction), per event
  to the nearest whole number (each session also commits a few on its own:
  every statement it prepares outside a transaction); the harness reads its
  counters from another database. Without pg_stat_statements loaded (the
  shared server's case) the count is '-': by default the script starts a
  private PostgreSQL (--postgres private: initdb in a temporary directory, a
  free port, shared_preload_libraries=pg_stat_statements, autovacuum off as on
  the shared server; --pg-setting adds settings) and removes it at the end.
* QPS and events: each tool's own count over its own measured span (sysbench's
  `queries:` line and `total number of events`; ibench's steps.parquet).

Parameters both get: --rand-type=uniform for sysbench (1.0.20's default is
skewed) and --id-distribution/--k-distribution uniform for ibench, one table,
--range-size=100, prepared statements (sysbench --db-ps-mode=auto, ibench
--statements prepared; --statements literal gives both text), no warm-up
(1.0.20 has none: ibench --warmup-seconds 0), ibench --verify off (sysbench
verifies nothing). The delete and insert microbenchmarks change the table for
the runs after them; ABBA order cancels a linear drift.

The tables are dropped at the end (and on SIGTERM). Needs pandas and pyarrow
(steps.parquet), the `psql` or `mariadb` command-line clients (the harness's
queries) and, for a private PostgreSQL, its server binaries (--pg-bin) and
root or the postgres user.
"""

from __future__ import annotations

import argparse
import dataclasses
import json
import math
import os
import re
import resource
import shutil
import signal
import socket
import statistics
import subprocess
import sys
import tempfile
import time
from pathlib import Path
from typing import Callable, Iterator, Optional, Sequence
from urllib.parse import parse_qs, unquote, urlsplit

import pandas as pd

import ibench.stats

TICK = os.sysconf("SC_CLK_TCK")
TABLE = "sbtest1"

# sysbench's stock script → ibench's step of the same statements per event.
# In the order they run: reads before writes (so the reads see the loaded
# table), delete and insert last (they change its size).
MICROBENCHMARKS = {
    "oltp_point_select": "point-query",
    "oltp_read_only": "read-only_range=100",
    "select_random_points": "select-random-points",
    "select_random_ranges": "select-random-ranges",
    "oltp_update_index": "update-index",
    "oltp_update_non_index": "update-nonindex",
    "oltp_write_only": "write-only",
    "oltp_read_write": "read-write_range=100",
    "oltp_delete": "delete",
    "oltp_insert": "insert",
}
MYSQL_COUNTERS = ("Com_select", "Com_update", "Com_insert", "Com_delete", "Com_begin", "Com_commit")
RATE_SHARE = 0.7  # the rate pass runs at this share of the slower tool's unlimited event rate


@dataclasses.dataclass(frozen=True)
class Counts:
    """A server's statement counters at one moment, or their change over a run.

    MySQL/MariaDB: `statements` is the sum of MYSQL_COUNTERS (every client's). PostgreSQL:
    `statements` is pg_stat_statements' calls of the statements naming a sbtest table;
    `trx` its calls of BEGIN and COMMIT (a prepared one is counted once per session, so this
    only says whether there were any); `commits` pg_stat_database.xact_commit and `other`
    the calls of every other statement in the database (the tools' housekeeping)."""

    statements: float
    trx: float = 0.0
    commits: float = 0.0
    other: float = 0.0

    def __sub__(self, before: "Counts") -> "Counts":
        return Counts(*(a - b for a, b in zip(dataclasses.astuple(self), dataclasses.astuple(before))))

    def per_event(self, events: float) -> float:
        """Statements per event, BEGIN and COMMIT included. PostgreSQL: when BEGIN or COMMIT
        ran, the transactions per event are xact_commit less the housekeeping statements (each
        its own transaction), over the events, to the nearest whole number: the rest is each
        session's own (every Parse of a statement prepared outside a transaction commits one),
        a fixed few per run, not per event."""
        if self.trx <= 0:
            return self.statements / events
        return self.statements / events + 2 * round((self.commits - self.other) / events)


# --------------------------------------------------------------------------- servers


@dataclasses.dataclass
class Server:
    """One database server both tools use: how to reach it, count its statements, find its processes."""

    label: str  # "PostgreSQL" or "MariaDB"
    dbms: str  # "postgres" or "mysql"
    host: str
    port: int
    user: str
    password: str
    database: str
    engine: str = "innodb"  # MySQL's storage engine
    stats_db: str = ""  # PostgreSQL: where the harness reads its counters (not the benchmark's database)
    root_pid: Optional[int] = None  # the postmaster or mariadbd, found by locate()
    names: tuple[str, ...] = ()  # process names to sum when no pid was found
    version: str = ""
    counts_statements: bool = False  # PostgreSQL: pg_stat_statements is loaded
    note: str = ""

    @property
    def dsn(self) -> str:
        """The DSN ibench is given."""
        auth = self.user + (f":{self.password}" if self.password else "")
        if self.dbms == "postgres":
            return f"postgres://{auth}@{self.host}:{self.port}/{self.database}"
        return f"mysql://{auth}@{self.host}:{self.port}/{self.database}?engine={self.engine}"

    def sysbench_flags(self) -> list[str]:
        """sysbench's driver and connection options for the same server, over TCP as ibench connects."""
        if self.dbms == "postgres":
            flags = ["--db-driver=pgsql", f"--pgsql-host={self.host}", f"--pgsql-port={self.port}",
                     f"--pgsql-user={self.user}", f"--pgsql-db={self.database}"]
            return flags + ([f"--pgsql-password={self.password}"] if self.password else [])
        flags = ["--db-driver=mysql", f"--mysql-host={self.host}", f"--mysql-port={self.port}",
                 f"--mysql-user={self.user}", f"--mysql-db={self.database}",
                 f"--mysql-storage-engine={self.engine}"]
        return flags + ([f"--mysql-password={self.password}"] if self.password else [])

    def sql(self, query: str, database: Optional[str] = None) -> list[list[str]]:
        """Rows of `query` (tab-separated text) through the command-line client, autocommit."""
        db = database or self.database
        if self.dbms == "postgres":
            argv = ["psql", "-X", "-q", "-h", self.host, "-p", str(self.port), "-U", self.user, "-d", db,
                    "-At", "-F", "\t", "-v", "ON_ERROR_STOP=1", "-c", query]
            env = {**os.environ, "PGPASSWORD": self.password} if self.password else None
        else:
            argv = ["mariadb", "-h", self.host, "-P", str(self.port), "-u", self.user, "-D", db, "-N", "-B",
                    "-e", query]
            env = {**os.environ, "MYSQL_PWD": self.password} if self.password else None
        done = subprocess.run(argv, capture_output=True, text=True, env=env, timeout=600)
        if done.returncode != 0:
            raise RuntimeError(f"{self.label}: {query!r} failed: {done.stderr.strip()}")
        return [line.split("\t") for line in done.stdout.splitlines()]

    def drop_table(self) -> None:
        """Drop the benchmark's table (sysbench's prepare refuses an existing one)."""
        self.sql(f"DROP TABLE IF EXISTS {TABLE}")

    def settle(self) -> None:
        """After a load: statistics, PostgreSQL's hint bits and visibility map set and a checkpoint
        taken, so that the first run of the first microbenchmark does not pay for them."""
        if self.dbms == "postgres":
            self.sql(f"VACUUM ANALYZE {TABLE}")
            self.sql("CHECKPOINT")
        else:
            self.sql(f"ANALYZE TABLE {TABLE}")

    def counts(self) -> Optional[Counts]:
        """The server's statement counters now (see Counts); None when it does not count them."""
        if self.dbms == "mysql":
            names = ",".join(f"'{n}'" for n in MYSQL_COUNTERS)
            rows = self.sql(f"SHOW GLOBAL STATUS WHERE Variable_name IN ({names})")
            return Counts(sum(float(v) for _, v in rows))
        if not self.counts_statements:
            return None
        # pg_stat_statements' calls in the benchmark's database: the statements naming a sbtest
        # table, BEGIN and COMMIT, and the others (the tools' own housekeeping queries).
        kind = ("CASE WHEN query ~* '\\msbtest\\d+\\M' THEN 'sb' "
                "WHEN upper(trim(query)) IN ('BEGIN', 'COMMIT') THEN 'trx' ELSE 'other' END")
        db = f"(SELECT oid FROM pg_database WHERE datname = '{self.database}')"
        rows = self.sql(
            f"SELECT {kind}, sum(calls) FROM pg_stat_statements WHERE dbid = {db} GROUP BY 1"
            f" UNION ALL SELECT 'commits', xact_commit FROM pg_stat_database WHERE datname = '{self.database}'",
            self.stats_db)
        got = {k: float(v) for k, v in rows}
        return Counts(got.get("sb", 0.0), got.get("trx", 0.0), got.get("commits", 0.0), got.get("other", 0.0))

    def cpu_seconds(self) -> Optional[float]:
        """CPU seconds of the server's processes so far, exited children included; None: not local."""
        if self.root_pid is None and not self.names:
            return None
        total = 0
        for pid in all_pids():
            st = proc_stat(pid)
            if st is None:
                continue
            comm, ppid, ticks = st
            ours = self.root_pid in (pid, ppid) if self.root_pid else comm in self.names
            total += ticks if ours else 0
        return total / TICK

    def wait_idle(self, timeout: float = 5.0) -> None:
        """Wait until the benchmark database has no client backend left (PostgreSQL): a backend
        writes its transaction counts when it exits, after its client has gone. Read from /proc
        (the postmaster's children's titles), so that the wait runs no query on the server."""
        if self.dbms != "postgres" or self.root_pid is None:
            return
        marker = f" {self.database} "
        deadline = time.monotonic() + timeout
        while time.monotonic() < deadline:
            busy = False
            for pid in all_pids():
                st = proc_stat(pid)
                if st is None or st[1] != self.root_pid:
                    continue
                try:
                    title = Path(f"/proc/{pid}/cmdline").read_bytes().replace(b"\0", b" ").decode(errors="replace")
                except OSError:
                    continue
                if marker in title and "(" in title:  # "postgres: user db 127.0.0.1(port) state"
                    busy = True
                    break
            if not busy:
                time.sleep(0.1)  # the exit's last counters
                return
            time.sleep(0.05)


def parse_dsn(text: str, label: str) -> Server:
    """A Server from postgres://user[:pw]@host[:port]/db or mysql://user[:pw]@host[:port]/db[?engine=E]."""
    url = urlsplit(text)
    if url.scheme in ("postgres", "postgresql"):
        dbms, port, user = "postgres", 5432, "postgres"
    elif url.scheme in ("mysql", "mariadb"):
        dbms, port, user = "mysql", 3306, "root"
    else:
        raise ValueError(f"{text}: use postgres:// or mysql://")
    database = url.path.lstrip("/")
    if not database:
        raise ValueError(f"{text}: the DSN must name a database")
    engine = parse_qs(url.query).get("engine", ["innodb"])[0].lower()
    return Server(label=label, dbms=dbms, host=url.hostname or "127.0.0.1", port=url.port or port,
                  user=unquote(url.username) if url.username else user,
                  password=unquote(url.password) if url.password else "", database=database, engine=engine,
                  stats_db=database)


def locate(server: Server) -> None:
    """Fill in the server's version, its processes and whether it counts statements."""
    local = server.host in ("127.0.0.1", "localhost", "::1")
    if server.dbms == "postgres":
        server.version = server.sql("SHOW server_version", server.stats_db)[0][0]
        server.names = ("postgres",) if local else ()
        if local and server.root_pid is None:
            backend = proc_stat(int(server.sql("SELECT pg_backend_pid()", server.stats_db)[0][0]))
            server.root_pid = backend[1] if backend and backend[0] == "postgres" else None
        preload = server.sql("SHOW shared_preload_libraries", server.stats_db)[0][0]
        ext = server.sql("SELECT count(*) FROM pg_extension WHERE extname = 'pg_stat_statements'", server.stats_db)
        server.counts_statements = "pg_stat_statements" in preload and ext[0][0] == "1"
        if not server.counts_statements:
            server.note = "pg_stat_statements is not loaded on this server: statements per event not counted"
        return
    server.version = server.sql("SELECT version()")[0][0]
    server.names = ("mariadbd", "mysqld") if local else ()
    if local:
        try:
            pid = int(Path(server.sql("SELECT @@pid_file")[0][0]).read_text().split()[0])
            st = proc_stat(pid)
            server.root_pid = pid if st and st[0] in server.names else None
        except (OSError, ValueError, IndexError):
            pass


class PrivatePostgres:
    """A PostgreSQL of the script's own: initdb in a temporary directory, a free loopback port,
    pg_stat_statements loaded; stopped and removed by close()."""

    def __init__(self, bin_dir: Path, settings: Sequence[str], database: str) -> None:
        self.bin = bin_dir
        self.dir = Path(tempfile.mkdtemp(prefix="sysbench-sbs-pg-"))
        self.data = self.dir / "data"
        self.port = free_port()
        self.started = False
        self.settings = ["listen_addresses=127.0.0.1", f"port={self.port}", f"unix_socket_directories={self.dir}",
                         "shared_preload_libraries=pg_stat_statements",
                         # As the shared server runs: a vacuum that starts in one tool's run and not in
                         # the other's would be noise in both figures.
                         "autovacuum=off", *settings]
        self.database = database

    def pg(self, program: str, *args: str) -> subprocess.CompletedProcess[str]:
        """Run one of the server's programs; initdb and pg_ctl refuse root, so as postgres then."""
        argv = [str(self.bin / program), *args]
        if os.geteuid() == 0:
            argv = ["runuser", "-u", "postgres", "--", *argv]
        return subprocess.run(argv, capture_output=True, text=True)

    def start(self) -> Server:
        """initdb, start, create the benchmark database and the extension; the Server."""
        if os.geteuid() == 0:
            shutil.chown(self.dir, user="postgres")
        done = self.pg("initdb", "-D", str(self.data), "-U", "postgres", "-A", "trust", "-E", "UTF8",
                       "--locale=C.UTF-8", "--no-sync", "--no-instructions")
        if done.returncode != 0:
            raise RuntimeError(f"initdb failed ({self.bin}): {done.stderr.strip()}")
        self.started = True  # from here on close() stops it, whatever start says
        done = self.pg("pg_ctl", "-D", str(self.data), "-l", str(self.dir / "log"), "-w", "-t", "60",
                       "-o", " ".join(f"-c {s}" for s in self.settings), "start")
        if done.returncode != 0:
            log = (self.dir / "log").read_text() if (self.dir / "log").exists() else done.stderr
            raise RuntimeError(f"the private PostgreSQL did not start: {log[-2000:]}")
        server = Server(label="PostgreSQL", dbms="postgres", host="127.0.0.1", port=self.port, user="postgres",
                        password="", database=self.database, stats_db="postgres")
        server.sql(f"CREATE DATABASE {self.database}", "postgres")
        server.sql("CREATE EXTENSION pg_stat_statements", "postgres")
        server.root_pid = int((self.data / "postmaster.pid").read_text().split()[0])
        server.note = f"a private server (port {self.port}; {', '.join(self.settings[3:])})"
        return server

    def close(self) -> None:
        """Stop the server (fast shutdown) and remove its directory."""
        if self.started:
            self.pg("pg_ctl", "-D", str(self.data), "-m", "fast", "-w", "stop")
        shutil.rmtree(self.dir, ignore_errors=True)


def free_port() -> int:
    """A TCP port on 127.0.0.1 that nothing listens on now."""
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return int(s.getsockname()[1])


def default_pg_bin() -> Path:
    """PostgreSQL 15's binaries where Debian puts them, else the newest installed."""
    base = Path("/usr/lib/postgresql")
    versions = sorted((int(p.name) for p in base.glob("*") if p.name.isdigit() and (p / "bin/initdb").exists()),
                      key=lambda v: (v != 15, -v))
    return base / f"{versions[0] if versions else 15}/bin"


# ------------------------------------------------------------------------------ /proc


def proc_stat(pid: int) -> Optional[tuple[str, int, int]]:
    """(comm, ppid, utime+stime+cutime+cstime in ticks) of a process, None once it is gone."""
    try:
        text = Path(f"/proc/{pid}/stat").read_text()
    except OSError:
        return None
    comm = text[text.index("(") + 1 : text.rindex(")")]
    fields = text[text.rindex(")") + 2 :].split()
    return comm, int(fields[1]), sum(int(f) for f in fields[11:15])


def all_pids() -> Iterator[int]:
    """Every process id in /proc."""
    for entry in os.scandir("/proc"):
        if entry.name.isdigit():
            yield int(entry.name)


# ------------------------------------------------------------------------ measuring


@dataclasses.dataclass
class Run:
    """One run of one tool: what it reported and what it cost."""

    server: str
    tool: str  # "sysbench" or "ibench"
    what: str  # "load" or the sysbench script's name
    phase: str  # "load", "max" (as fast as it goes) or "rate"
    round: int
    seed: int
    ok: bool = False
    wall_s: float = 0.0  # the child process, start to exit
    user_s: float = 0.0  # its CPU
    sys_s: float = 0.0
    server_s: Optional[float] = None  # the server's CPU meanwhile
    events: float = 0.0  # the tool's own counts over its own measured span
    queries: float = 0.0
    span_s: float = 0.0
    counted: Optional[Counts] = None  # the server's statement counters' change
    rate: Optional[int] = None  # events/s asked for
    own_s: Optional[float] = None  # ibench's load: its own steps' seconds (the rest is start-up and exit)
    window: Optional["Window"] = None  # what the steady middle of the run cost (see Window)
    note: str = ""

    @property
    def qps(self) -> Optional[float]:
        return self.queries / self.span_s if self.ok and self.span_s > 0 else None

    @property
    def eps(self) -> Optional[float]:
        return self.events / self.span_s if self.ok and self.span_s > 0 else None

    def per_statement_us(self, seconds: Optional[float]) -> Optional[float]:
        """CPU µs per statement the tool ran (its own count)."""
        return seconds / self.queries * 1e6 if self.ok and seconds is not None and self.queries > 0 else None

    def steady_us(self, what: str) -> Optional[float]:
        """CPU µs per statement in the run's steady middle (Window): `user`, `sys` (the tool's
        process) or `server`; None when the window was not measured."""
        w = self.window
        statements = w.statements(self) if w is not None and self.ok else None
        if w is None or not statements:
            return None
        seconds = {"user": w.user_s, "sys": w.sys_s, "server": w.server_s}[what]
        return None if seconds is None else seconds / statements * 1e6

    @property
    def statements_per_event(self) -> Optional[float]:
        if not self.ok or self.counted is None or self.events <= 0:
            return None
        return self.counted.per_event(self.events)


@dataclasses.dataclass
class Window:
    """What a run's steady middle cost, the same way for both tools: between two instants well
    inside its events (its start-up, connecting and preparing before the first; the end, its
    report and result files after the second) the tool's process's CPU from /proc/<pid>/stat,
    the server's CPU and the server's statement counters. Whole-process figures weigh each
    tool's fixed costs per run (ibench's: a tenth of a second of client CPU, its checks and
    result files; sysbench's a hundredth) against however few statements a short run makes."""

    start_s: float  # seconds after the child started
    end_s: float
    user_s: float = 0.0
    sys_s: float = 0.0
    server_s: Optional[float] = None
    counted: Optional[Counts] = None

    def statements(self, run: Run) -> Optional[float]:
        """Statements in the window, BEGIN and COMMIT included, from the server's count:
        MySQL/MariaDB counts them all; PostgreSQL's are the calls naming the table, scaled by
        the run's own statements over its statements that name it (BEGIN and COMMIT aside)."""
        if self.counted is None or run.events <= 0:
            return None
        if not self.counted.trx and self.counted.commits == 0 and self.counted.other == 0:
            return self.counted.statements  # MySQL/MariaDB: every kind counted
        inner = run.queries - 2 * run.events * (run.what in TRANSACTIONS)
        return self.counted.statements * run.queries / inner if inner > 0 else None


# The stock scripts whose events are transactions (BEGIN ... COMMIT).
TRANSACTIONS = ("oltp_read_only", "oltp_read_write", "oltp_write_only")


def process_cpu(pid: int) -> Optional[tuple[float, float]]:
    """User and system CPU seconds of process `pid` (every thread) so far."""
    try:
        fields = Path(f"/proc/{pid}/stat").read_text().rsplit(")", 1)[1].split()
    except OSError:
        return None
    return int(fields[11]) / TICK, int(fields[12]) / TICK


def sample_window(proc: "subprocess.Popen[bytes]", server: Server, window: Window) -> None:
    """Waits for the window's start, samples, waits for its end, samples again: the
    window's deltas into `window` (left at zero when the child ended before)."""
    def at(t: float) -> Optional[tuple[tuple[float, float], Optional[float], Optional[Counts]]]:
        while time.perf_counter() - started < t:
            if proc.poll() is not None:
                return None
            time.sleep(0.01)
        cpu = process_cpu(proc.pid)
        return None if cpu is None else (cpu, server.cpu_seconds(), server.counts())

    started = time.perf_counter()
    first = at(window.start_s)
    second = at(window.end_s) if first else None
    if first is None or second is None:
        window.counted = None
        return
    (u0, s0), srv0, c0 = first
    (u1, s1), srv1, c1 = second
    window.user_s, window.sys_s = u1 - u0, s1 - s0
    window.server_s = None if srv0 is None or srv1 is None else srv1 - srv0
    window.counted = None if c0 is None or c1 is None else c1 - c0


def run_child(argv: Sequence[str], log: Path, timeout: float,
              watch: Optional[Callable[["subprocess.Popen[bytes]"], None]] = None) -> int:
    """Run a tool to completion with its output in `log`; its exit status (-9: killed after
    `timeout` s). `watch` is called with the running child (it returns before the child ends)."""
    with log.open("w") as out:
        out.write(" ".join(argv) + "\n")
        out.flush()
        proc = subprocess.Popen(list(argv), stdout=out, stderr=subprocess.STDOUT, start_new_session=True)
        try:
            if watch is not None:
                watch(proc)
            return proc.wait(timeout=timeout)
        except subprocess.TimeoutExpired:
            os.killpg(proc.pid, signal.SIGKILL)
            proc.wait()
            return -9
        except BaseException:  # SIGTERM or ^C: the child goes too
            os.killpg(proc.pid, signal.SIGKILL)
            proc.wait()
            raise


def measure(server: Server, run: Run, argv: Sequence[str], log: Path, timeout: float,
            read: Callable[[Run, str], None], window: Optional[Window] = None) -> Run:
    """Run one tool's child process and fill in `run`: wall time and client CPU around the child
    alone, the server's CPU and statement counters around it (read outside the client's window,
    as the harness's own queries are children too), what `window` of its middle cost, then the
    tool's own figures by `read`."""
    server.wait_idle()  # the harness's last statements (a DROP, a VACUUM) counted before, not during
    counted_before = server.counts()
    server_before = server.cpu_seconds()
    usage_before = resource.getrusage(resource.RUSAGE_CHILDREN)
    t0 = time.perf_counter()
    watch = None if window is None else (lambda proc: sample_window(proc, server, window))
    status = run_child(argv, log, timeout, watch)
    run.window = window if window is not None and window.counted is not None else None
    run.wall_s = time.perf_counter() - t0
    usage_after = resource.getrusage(resource.RUSAGE_CHILDREN)
    server.wait_idle()
    server_after = server.cpu_seconds()
    run.user_s = usage_after.ru_utime - usage_before.ru_utime
    run.sys_s = usage_after.ru_stime - usage_before.ru_stime
    if server_before is not None and server_after is not None:
        run.server_s = server_after - server_before
    counted_after = server.counts()
    if counted_before is not None and counted_after is not None:
        run.counted = counted_after - counted_before
    output = log.read_text(errors="replace")
    if status != 0:
        run.note = f"exit status {status}: {tail(output)} (log {log})"
        return run
    try:
        read(run, output)
        run.ok = True
    except (ValueError, KeyError, OSError, IndexError) as e:
        run.note = f"{e} (log {log})"
    return run


def tail(text: str, lines: int = 3) -> str:
    """The last lines of a tool's output, on one line."""
    return " | ".join(line.strip() for line in text.strip().splitlines()[-lines:])


# ------------------------------------------------------------------------- the tools


@dataclasses.dataclass
class Settings:
    """What every run is given."""

    sysbench: str
    ibench: str
    rows: int
    threads: int
    seconds: int
    statements: str  # "prepared" or "literal"
    ibench_extra: list[str]
    work: Path

    @property
    def timeout(self) -> float:
        """How long a run may take before it is killed: its span, start-up and a load's time."""
        return self.seconds * 3 + 600 + self.rows / 1000


def sysbench_argv(s: Settings, server: Server, script: str, command: str, seed: int, threads: int,
                  rate: Optional[int] = None) -> list[str]:
    """sysbench's command line: the script, the server, the shared parameters."""
    argv = [s.sysbench, script, *server.sysbench_flags(), "--tables=1", f"--table-size={s.rows}",
            f"--threads={threads}", "--rand-type=uniform", f"--rand-seed={seed}",
            f"--db-ps-mode={'auto' if s.statements == 'prepared' else 'disable'}"]
    if command == "run":
        argv += [f"--time={s.seconds}", "--events=0", "--range-size=100", "--report-interval=0"]
        if rate:
            argv.append(f"--rate={rate}")
    return argv + [command]


def ibench_argv(s: Settings, server: Server, steps: str, out: Path, seed: int, threads: int,
                rate: Optional[int] = None) -> list[str]:
    """`ibench run` for the same: one table, the same size, clients, seconds and distributions."""
    secs = str(s.seconds)
    argv = [s.ibench, "run", "--steps", steps, "--db", server.dsn, "--tables", "1", "--table-size", str(s.rows),
            "--clients", str(threads), "--load-connections", "1", "--read-seconds", secs, "--write-seconds", secs,
            "--insert-seconds", secs, "--warmup-seconds", "0", "--statements", s.statements,
            "--id-distribution", "uniform", "--k-distribution", "uniform", "--seed", str(seed), "--verify", "off",
            "--out", str(out), "--quiet", *s.ibench_extra]
    if rate:
        # Sleeping till each event's start, as sysbench's threads wait for theirs: ibench's
        # default pacer spins the last stretch, CPU the server shares on a small host.
        argv += ["--events-per-second", str(rate), "--pacing", "sleep"]
    return argv


def read_sysbench(run: Run, output: str) -> None:
    """sysbench's own figures: queries, events and the measured time of its final report."""
    def number(pattern: str) -> float:
        m = re.search(pattern, output, re.M)
        if m is None:
            raise ValueError(f"sysbench printed no {pattern!r}: {tail(output)}")
        return float(m.group(1))

    run.queries = number(r"^\s*queries:\s+(\d+)")
    run.events = number(r"^\s*total number of events:\s+(\d+)")
    run.span_s = number(r"^\s*total time:\s+([\d.]+)s")
    errors = number(r"^\s*ignored errors:\s+(\d+)")
    if errors:
        run.note = f"{errors:.0f} ignored errors"


def ibench_reader(out: Path, steps: Sequence[str], load: bool) -> Callable[[Run, str], None]:
    """Reads ibench's figures from steps.parquet of the one run directory under `out`. A load's
    are its rows over the process's wall time, as sysbench's (its own steps' seconds kept apart:
    the rest is its start-up, its checks and its result files)."""
    def read(run: Run, output: str) -> None:
        dirs = [d for d in out.iterdir() if (d / "steps.parquet").exists()]
        if len(dirs) != 1:
            raise ValueError(f"expected one run directory with steps.parquet in {out}, found {len(dirs)}")
        table = pd.read_parquet(dirs[0] / "steps.parquet")
        rows = table[table["step"].isin(steps)]
        bad = rows[rows["status"] != "ok"]
        if len(rows) != len(steps) or len(bad):
            raise ValueError(f"ibench's steps {list(rows['step'])}: {list(bad['status'])} {list(bad['error'])}")
        run.span_s = float(rows["elapsed_s"].sum())
        if load:
            run.events = run.queries = float(rows["inserts"].sum())
            run.own_s, run.span_s = run.span_s, run.wall_s
        else:
            run.queries = float(rows["queries"].sum())
            run.events = float(rows["events"].fillna(0).sum())
            run.counted = step_counts(dirs[0], steps) or run.counted
        if rows["errors"].fillna(0).sum() or rows["retries"].fillna(0).sum():
            run.note = f"ibench: {rows['errors'].sum():.0f} errors, {rows['retries'].sum():.0f} retries"
    return read


def step_counts(run_dir: Path, steps: Sequence[str]) -> Optional[Counts]:
    """The server's statement counters over ibench's measured steps alone, as ibench read them
    (counters.parquet): its start-up's and result files' own statements (the facts, the sizes,
    the checks before a step) are not the events'. sysbench sends none of its own, so its
    whole-process count is its events'. MySQL/MariaDB: the Com_* counters; PostgreSQL: the
    statements' calls (ibench leaves out its readers' queries, which name pg_ views),
    BEGIN and COMMIT, and xact_commit."""
    path = run_dir / "counters.parquet"
    if not path.exists():
        return None
    c = pd.read_parquet(path)
    c = c[c["step"].isin(steps)]
    delta = lambda source, names: float(c[(c["source"] == source) & c["name"].isin(names)]["delta"].fillna(0).sum())
    if (c["source"] == "global_status").any():
        return Counts(delta("global_status", MYSQL_COUNTERS))
    if (c["source"] == "pg_stat_statements").any():
        kinds = [f"{k}.calls" for k in ("select", "update", "insert", "delete")]
        return Counts(delta("pg_stat_statements", kinds),
                      delta("pg_stat_statements", ["begin.calls", "commit.calls"]),
                      delta("pg_stat_database", ["xact_commit"]))
    return None


def ibench_knows(s: Settings, server: Server, step: str) -> bool:
    """Whether this ibench build has `step` (an unknown step name is refused before anything
    runs; --print-config connects to nothing)."""
    probe = subprocess.run([s.ibench, "run", "--steps", step, "--db", server.dsn, "--print-config"],
                           capture_output=True, text=True)
    return probe.returncode == 0


# --------------------------------------------------------------------------- the passes


class Bench:
    """The runs against one server, in order, and where their logs and results go."""

    def __init__(self, s: Settings, server: Server, seed: int) -> None:
        self.s = s
        self.server = server
        self.seed = seed
        self.runs: list[Run] = []
        self.dir = s.work / server.label.lower()
        self.dir.mkdir(parents=True, exist_ok=True)

    def next_seed(self) -> int:
        """A new seed for every run: each draws new ids (a delete run never retries the last one's)."""
        self.seed += 1
        return self.seed - 1

    def one(self, tool: str, what: str, phase: str, round_: int, rate: Optional[int] = None) -> Run:
        """One run of `tool`: the load (`what` == "load", on a dropped table) or a microbenchmark."""
        run = Run(self.server.label, tool, what, phase, round_, self.next_seed(), rate=rate)
        name = f"{what}-{phase}-r{round_}-{tool}"
        argv, reader = self.command(run, name)
        if what == "load":
            self.server.drop_table()
        # The middle of a microbenchmark's run: from 1.5 s (ibench's start-up, both connecting)
        # to 0.5 s before its end, when it has that much.
        window = None if what == "load" or self.s.seconds < 4 else Window(1.5, self.s.seconds - 0.5)
        run = measure(self.server, run, argv, self.dir / f"{name}.log", self.s.timeout, reader, window)
        self.runs.append(run)
        print(progress(run), file=sys.stderr, flush=True)
        return run

    def command(self, run: Run, name: str) -> tuple[list[str], Callable[[Run, str], None]]:
        """The child's command line for `run`, and what reads its figures afterwards."""
        load = run.what == "load"
        threads = 1 if load else self.s.threads  # both load on one connection, as sysbench's prepare
        if run.tool == "sysbench":
            if load:
                return sysbench_argv(self.s, self.server, "oltp_common", "prepare", run.seed, 1), read_load
            return sysbench_argv(self.s, self.server, run.what, "run", run.seed, threads, run.rate), read_sysbench
        out = self.dir / name  # a directory per run: its one run directory is the one to read
        shutil.rmtree(out, ignore_errors=True)
        out.mkdir()
        steps = ["load", "create-index"] if load else [MICROBENCHMARKS[run.what]]
        argv = ibench_argv(self.s, self.server, ",".join(steps), out, run.seed, threads, run.rate)
        return argv, ibench_reader(out, steps, load)

    def paired(self, what: str, phase: str, rounds: int, rate: Optional[int] = None) -> None:
        """`rounds` rounds of both tools in ABBA order: sysbench first in even rounds, ibench in odd."""
        for r in range(rounds):
            order = ("sysbench", "ibench") if r % 2 == 0 else ("ibench", "sysbench")
            for tool in order:
                self.one(tool, what, phase, r, rate)

    def load_pass(self, rounds: int) -> None:
        """The load of each tool, alternating; the last leaves the table the microbenchmarks use.
        With no rounds, ibench loads it once (its table is sysbench's schema)."""
        if rounds:
            self.paired("load", "load", rounds)
        if not rounds or not self.runs[-1].ok:
            self.one("ibench", "load", "setup", 0)
        self.server.settle()

    def microbenchmark(self, name: str, rounds: int, rate_rounds: int) -> None:
        """Unlimited paired rounds, then paired rounds at RATE_SHARE of the slower tool's event rate."""
        self.paired(name, "max", rounds)
        if not rate_rounds:
            return
        rates = [mean([r.eps for r in self.select(name, "max", tool)]) for tool in ("sysbench", "ibench")]
        if any(r is None for r in rates):
            return
        rate = max(1, int(RATE_SHARE * min(r for r in rates if r is not None)))
        self.paired(name, "rate", rate_rounds, rate)

    def select(self, what: str, phase: str, tool: str) -> list[Run]:
        """This server's runs of one tool, phase and thing, in round order."""
        return [r for r in self.runs if r.what == what and r.phase == phase and r.tool == tool]


def read_load(run: Run, output: str) -> None:
    """sysbench's prepare reports no figures: the load's are rows over the process's wall time."""
    if "Creating a secondary index" not in output:
        raise ValueError(f"sysbench prepare did not reach the index: {tail(output)}")
    m = re.search(r"Inserting (\d+) records", output)
    if m is None:
        raise ValueError(f"sysbench prepare printed no 'Inserting N records': {tail(output)}")
    run.events = run.queries = float(m.group(1))
    run.span_s = run.wall_s


def progress(run: Run) -> str:
    """One stderr line per run."""
    spe = None if run.what == "load" else run.statements_per_event
    return (f"{run.server:10} {run.what:22} {run.phase:5} r{run.round} {run.tool:8} ok={run.ok!s:5} "
            f"qps={fmt(run.qps)} eps={fmt(run.eps)} stmt/ev={fmt(spe, 3)} wall={run.wall_s:.1f}s "
            f"user={run.user_s:.2f}s sys={run.sys_s:.2f}s server={fmt(run.server_s, 2)}s {run.note}")


# --------------------------------------------------------------------------- figures


@dataclasses.dataclass(frozen=True)
class Ratio:
    """ibench over sysbench from paired rounds: the estimate, and its 95% interval with 2+ rounds."""

    estimate: float
    low: Optional[float] = None
    high: Optional[float] = None

    def __str__(self) -> str:
        if self.low is None or self.high is None:
            return f"{self.estimate:.2f} (1 pair)"
        return ibench.stats.format_interval(self.estimate, self.low, self.high)


def paired_ratio(sysbench: Sequence[Optional[float]], ibench_: Sequence[Optional[float]]) -> Optional[Ratio]:
    """ibench / sysbench over the rounds where both have a positive figure (ibench.stats.ratio_of_pairs)."""
    pairs = [(a, b) for a, b in zip(sysbench, ibench_) if a and b and a > 0 and b > 0]
    if not pairs:
        return None
    if len(pairs) == 1:
        return Ratio(pairs[0][1] / pairs[0][0])
    r = ibench.stats.ratio_of_pairs([a for a, _ in pairs], [b for _, b in pairs])
    return Ratio(r.estimate, r.low, r.high)


def verdict(r: Optional[Ratio], low: float, high: float) -> str:
    """Whether a ratio meets its target, the range [low, high]: ✓ the estimate is in it; ✗ the whole
    interval (with one pair, the estimate) is outside it; ≈ the estimate is outside but the interval
    reaches it; ? no ratio."""
    if r is None:
        return "?"
    if low <= r.estimate <= high:
        return "✓"
    if r.low is None or r.high is None:
        return "✗"
    return "≈" if r.low <= high and r.high >= low else "✗"


# The targets, as ranges of the ratio ibench/sysbench.
AT_LEAST_AS_FAST = (1.0, math.inf)
HALF_THE_CPU = (0.0, 0.5)
WITHIN_5_PCT = (0.95, 1.05)


def mean(values: Sequence[Optional[float]]) -> Optional[float]:
    """Mean of the values present."""
    present = [v for v in values if v is not None]
    return statistics.fmean(present) if present else None


def fmt(v: Optional[float], digits: int = 1) -> str:
    """A number for a cell: '-' when missing, thousands grouped when large."""
    if v is None or (isinstance(v, float) and math.isnan(v)):
        return "-"
    if abs(v) >= 1000:
        return f"{v:,.0f}"
    return f"{v:.{digits}f}"


def per_event(runs: Sequence[Run]) -> Optional[float]:
    """Statements per event over all of a tool's runs: the server's count over the tool's events."""
    counted = [r for r in runs if r.ok and r.counted is not None and r.events > 0]
    if not counted:
        return None
    total = Counts(*(sum(x) for x in zip(*(dataclasses.astuple(r.counted) for r in counted if r.counted))))
    return total.per_event(sum(r.events for r in counted))


# ---------------------------------------------------------------------------- report


def load_table(bench: Bench) -> str:
    """The load's rows/s of each, the ratio, wall, client and server CPU."""
    sb, ib = bench.select("load", "load", "sysbench"), bench.select("load", "load", "ibench")
    if not sb and not ib:
        return "(no load rounds)"
    r = paired_ratio([x.eps for x in sb], [x.eps for x in ib])
    head = ["tool", "rows/s", "wall s", "client user s", "client sys s", "server CPU s"]
    lines = ["| " + " | ".join(head) + " |", "|" + "---|" * len(head)]
    for tool, runs in (("sysbench", sb), ("ibench", ib)):
        ok = [x for x in runs if x.ok]
        lines.append(f"| {tool} | {fmt(mean([x.eps for x in ok]))} | {fmt(mean([x.wall_s for x in ok]), 2)} | "
                     f"{fmt(mean([x.user_s for x in ok]), 2)} | {fmt(mean([x.sys_s for x in ok]), 2)} | "
                     f"{fmt(mean([x.server_s for x in ok]), 2)} |")
    own = mean([x.own_s for x in ib if x.ok])
    lines += ["", f"rows/s ratio ibench/sysbench: {r if r else '-'}, target ≥ 1.0: {verdict(r, *AT_LEAST_AS_FAST)}"
              + (f" (ibench's own load and create-index steps: {own:.2f} s of its wall time)" if own else "")]
    return "\n".join(lines)


MICRO_HEAD = [
    "microbenchmark", "stmt/event sb", "stmt/event ib", "=",
    "QPS sb", "QPS ib", "QPS ib/sb (95%)", "≥1",
    "client user µs/stmt sb", "ib", "ib/sb (95%)", "≤½",
    "client sys µs/stmt sb", "ib",
    "server µs/stmt sb", "ib",
    "rate ev/s", "server µs/stmt @rate sb", "ib", "ib/sb (95%)", "±5%",
]


def micro_row(bench: Bench, name: str) -> list[str]:
    """One microbenchmark's cells (MICRO_HEAD)."""
    sb, ib = bench.select(name, "max", "sysbench"), bench.select(name, "max", "ibench")
    spe_sb, spe_ib = per_event(sb), per_event(ib)
    same = "?" if spe_sb is None or spe_ib is None else ("✓" if round(spe_sb, 2) == round(spe_ib, 2) else "✗")
    qps = paired_ratio([x.qps for x in sb], [x.qps for x in ib])
    # CPU per statement in the runs' steady middles (Window); whole-process figures when unmeasured.
    def cpu(x: Run, what: str) -> Optional[float]:
        whole = {"user": x.user_s, "sys": x.sys_s, "server": x.server_s}[what]
        return x.steady_us(what) if x.window is not None else x.per_statement_us(whole)

    user = [[cpu(x, "user") for x in runs] for runs in (sb, ib)]
    user_ratio = paired_ratio(*user)
    sys_us = [mean([cpu(x, "sys") for x in runs]) for runs in (sb, ib)]
    srv = [mean([cpu(x, "server") for x in runs]) for runs in (sb, ib)]
    rsb, rib = bench.select(name, "rate", "sysbench"), bench.select(name, "rate", "ibench")
    at_rate = [[cpu(x, "server") for x in runs] for runs in (rsb, rib)]
    rate_ratio = paired_ratio(*at_rate)
    rate = next((x.rate for x in rsb + rib), None)
    return [
        f"{name} → {MICROBENCHMARKS[name]}", fmt(spe_sb, 2), fmt(spe_ib, 2), same,
        fmt(mean([x.qps for x in sb])), fmt(mean([x.qps for x in ib])), str(qps or "-"),
        verdict(qps, *AT_LEAST_AS_FAST),
        fmt(mean(user[0]), 2), fmt(mean(user[1]), 2), str(user_ratio or "-"), verdict(user_ratio, *HALF_THE_CPU),
        fmt(sys_us[0], 2), fmt(sys_us[1], 2),
        fmt(srv[0], 2), fmt(srv[1], 2),
        fmt(rate, 0) if rate else "-", fmt(mean(at_rate[0]), 2), fmt(mean(at_rate[1]), 2), str(rate_ratio or "-"),
        verdict(rate_ratio, *WITHIN_5_PCT),
    ]


def report(bench: Bench, names: Sequence[str], skipped: dict[str, str], args: argparse.Namespace,
           versions: dict[str, str]) -> str:
    """The Markdown section of one server."""
    srv = bench.server
    parts = [
        f"## sysbench vs ibench on {srv.label} {srv.version}",
        "",
        f"{versions['sysbench']}; {versions['ibench']}; server {srv.host}:{srv.port}/{srv.database}"
        + (f" engine={srv.engine}" if srv.dbms == "mysql" else "") + (f"; {srv.note}" if srv.note else ""),
        f"1 table × {args.rows:,} rows; {args.threads} thread(s); {args.seconds:g} s per run; "
        f"{args.rounds} paired rounds (ABBA), {args.rate_rounds} at the rate; load {args.load_rounds} rounds; "
        f"statements {args.statements}; 1-minute load average before: {versions['loadavg']}"
        + (" (other work on this host: the figures include contention)" if float(versions["loadavg"]) > 0.5 else ""),
        "",
        "### Load (sysbench oltp_common prepare vs ibench load,create-index; one connection, k index included)",
        "",
        load_table(bench),
        "",
        "### Microbenchmarks",
        "",
        "| " + " | ".join(MICRO_HEAD) + " |",
        "|" + "---|" * len(MICRO_HEAD),
    ]
    parts += ["| " + " | ".join(micro_row(bench, n)) + " |" for n in names]
    parts += [
        "",
        "sb: sysbench, ib: ibench. stmt/event: the server's own count (BEGIN and COMMIT included) over the "
        "tool's events; QPS: the tool's own; µs/stmt: CPU per statement in each run's steady middle (from 1.5 s "
        "after the tool started to 0.5 s before its end: the tool's process and the server's processes from /proc, "
        "the statements from the server's counters), so neither tool's start-up, connecting, preparing, report or "
        "result files weigh in. At the rate ibench sleeps till each event's start (--pacing sleep), as sysbench's "
        "threads wait for theirs. Ratios are geometric means of the rounds' ibench/sysbench "
        "with their 95% interval (ibench.stats.ratio_of_pairs). Targets: stmt/event equal (=), QPS ratio ≥ 1 (≥1), "
        "ibench's client user CPU per statement at most half of sysbench's (≤½), server CPU per statement at the "
        f"same rate ({RATE_SHARE:.0%} of the slower tool's events/s) within 5% (±5%). ✓ the estimate meets the "
        "target, ✗ the whole interval misses it, ≈ the estimate misses but the interval reaches it, ? not measured.",
    ]
    if skipped:
        parts += ["", "Not run:"] + [f"- {name}: {why}" for name, why in skipped.items()]
    failed = [r for r in bench.runs if not r.ok or r.note]
    if failed:
        parts += ["", "Notes:"] + [f"- {r.what} {r.phase} round {r.round} {r.tool}: "
                                   f"{'failed: ' if not r.ok else ''}{r.note}" for r in failed]
    parts += ["", f"logs and ibench's runs: {bench.dir}"]
    return "\n".join(parts)


# ------------------------------------------------------------------------------- main


def parse_args(argv: Optional[Sequence[str]] = None) -> argparse.Namespace:
    """The command line, checked."""
    p = argparse.ArgumentParser(description=__doc__.split("\n\n")[0],
                                formatter_class=argparse.RawDescriptionHelpFormatter, epilog=__doc__)
    p.add_argument("--servers", default="postgres,mariadb", help="which servers: postgres, mariadb or both")
    p.add_argument("--postgres", default="private",
                   help="'private' (default: a PostgreSQL of the script's own with pg_stat_statements, removed at "
                        "the end) or a DSN, e.g. postgres://postgres@127.0.0.1:5432/test")
    p.add_argument("--mariadb", default="mysql://root@127.0.0.1:3306/test?engine=innodb",
                   help="the MariaDB/MySQL DSN (default %(default)s)")
    p.add_argument("--pg-bin", type=Path, default=default_pg_bin(),
                   help="the private PostgreSQL's binaries (default %(default)s)")
    p.add_argument("--pg-setting", action="append", default=[], metavar="NAME=VALUE",
                   help="a setting of the private PostgreSQL, repeatable")
    p.add_argument("--rows", type=int, default=1_000_000, help="rows of the one table (default %(default)s)")
    p.add_argument("--threads", type=int, default=1, help="sysbench --threads, ibench --clients (default 1)")
    p.add_argument("--seconds", type=int, default=10, help="seconds per microbenchmark run (default 10)")
    p.add_argument("--rounds", type=int, default=5, help="paired rounds per microbenchmark (default 5)")
    p.add_argument("--rate-rounds", type=int, help="paired rounds at the same rate (default --rounds; 0: none)")
    p.add_argument("--load-rounds", type=int, default=3, help="paired rounds of the load (default 3; 0: none)")
    p.add_argument("--microbenchmarks", default=",".join(MICROBENCHMARKS),
                   help="sysbench script names (or ibench step names), comma-separated; they run in the order "
                        "of the default list (reads, writes, delete, insert)")
    p.add_argument("--statements", choices=("prepared", "literal"), default="prepared",
                   help="prepared (sysbench --db-ps-mode=auto) or literal (=disable) for both")
    p.add_argument("--sysbench", default=shutil.which("sysbench") or "/usr/bin/sysbench", help="sysbench 1.0.20")
    p.add_argument("--ibench-bin", default=os.environ.get("IBENCH_BIN", shutil.which("ibench") or "ibench"),
                   help="the ibench executable (default $IBENCH_BIN, else ibench on PATH)")
    p.add_argument("--ibench-arg", dest="ibench_extra", action="append", default=[],
                   help="one more argument for every `ibench run`, repeatable; write --ibench-arg=--pacing=sleep")
    p.add_argument("--seed", type=int, default=1, help="the first run's seed; each run takes the next (default 1)")
    p.add_argument("--out", type=Path, help="where logs and ibench's runs go (default: a new temporary directory)")
    p.add_argument("--markdown", type=Path, help="also write the report to this file")
    p.add_argument("--json", type=Path, help="also write every run's figures to this JSON file")
    args = p.parse_args(argv)
    if args.rate_rounds is None:
        args.rate_rounds = args.rounds
    if args.rows < 1 or args.threads < 1 or args.seconds < 1 or args.rounds < 1:
        p.error(f"--rows, --threads, --seconds and --rounds must be at least 1, got "
                f"{args.rows}, {args.threads}, {args.seconds} and {args.rounds}")
    if args.rate_rounds < 0 or args.load_rounds < 0:
        p.error(f"--rate-rounds and --load-rounds must be 0 or more, got {args.rate_rounds} and {args.load_rounds}")
    if args.seed < 1:
        p.error(f"--seed: {args.seed}: must be at least 1 (sysbench seeds from the clock on 0)")
    args.servers = [s.strip() for s in args.servers.split(",") if s.strip()]
    if not args.servers or any(s not in ("postgres", "mariadb") for s in args.servers):
        p.error(f"--servers: {','.join(args.servers)}: expected postgres, mariadb or both")
    by_step = {step: name for name, step in MICROBENCHMARKS.items()}
    chosen = set()
    for item in (s.strip() for s in args.microbenchmarks.split(",") if s.strip()):
        name = item if item in MICROBENCHMARKS else by_step.get(item)
        if name is None:
            p.error(f"--microbenchmarks: {item}: not one of {', '.join(MICROBENCHMARKS)}")
        chosen.add(name)
    if not chosen:
        p.error("--microbenchmarks: none given")
    args.microbenchmarks = [n for n in MICROBENCHMARKS if n in chosen]
    for what, path in (("--sysbench", args.sysbench), ("--ibench-bin", args.ibench_bin)):
        found = shutil.which(path)
        if found is None:
            p.error(f"{what}: {path} is not an executable file")
    if args.out is not None and args.out.exists() and not args.out.is_dir():
        p.error(f"--out: {args.out} is not a directory")
    return args


def versions_of(s: Settings) -> dict[str, str]:
    """The tools' versions and the host's load, for the report's header; a warning when `ibench`
    is not the executable itself (the Python entry point pays the interpreter's start-up, ~1 s of
    client CPU per run)."""
    sb = subprocess.run([s.sysbench, "--version"], capture_output=True, text=True).stdout.strip()
    ib = subprocess.run([s.ibench, "--version"], capture_output=True, text=True).stdout.strip()
    path = Path(shutil.which(s.ibench) or s.ibench).resolve()
    with path.open("rb") as f:
        native = f.read(4) == b"\x7fELF"
    if not native:
        ib += (f" ({path} is a script, not the ibench executable: its client CPU includes its interpreter's "
               "start-up; give --ibench-bin the built binary)")
        print(f"warning: {ib}", file=sys.stderr)
    return {"sysbench": sb or "sysbench ?", "ibench": ib or "ibench ?", "loadavg": f"{os.getloadavg()[0]:.2f}"}


def bench_server(kind: str, args: argparse.Namespace, s: Settings, versions: dict[str, str]) -> tuple[str, bool]:
    """Every pass on one server: its Markdown section, and whether every run succeeded. A private
    PostgreSQL is stopped and removed, and the table dropped, on every path out."""
    private: Optional[PrivatePostgres] = None
    server: Optional[Server] = None
    try:
        if kind == "postgres" and args.postgres == "private":
            private = PrivatePostgres(args.pg_bin, args.pg_setting, "test")
            server = private.start()
        else:
            server = parse_dsn(args.postgres if kind == "postgres" else args.mariadb,
                               "PostgreSQL" if kind == "postgres" else "MariaDB")
        locate(server)
        bench = Bench(s, server, args.seed)
        skipped = {}
        names = []
        for name in args.microbenchmarks:
            if ibench_knows(s, server, MICROBENCHMARKS[name]):
                names.append(name)
            else:
                skipped[name] = f"this ibench does not know the step {MICROBENCHMARKS[name]!r} (refused by name)"
        bench.load_pass(args.load_rounds)
        for name in names:
            bench.microbenchmark(name, args.rounds, args.rate_rounds)
        if args.json:
            with args.json.open("a") as f:
                for r in bench.runs:
                    f.write(json.dumps(dataclasses.asdict(r)) + "\n")
        return report(bench, names, skipped, args, versions), all(r.ok for r in bench.runs)
    finally:
        if server is not None and private is None:
            try:
                server.drop_table()
            except (RuntimeError, OSError, subprocess.SubprocessError) as e:
                print(f"could not drop {TABLE} on {server.label}: {e}", file=sys.stderr)
        if private is not None:
            private.close()


def main(argv: Optional[Sequence[str]] = None) -> int:
    """Run every pass on each server and print the report, a server's section as soon as it is done;
    exit status 1 when a server or a run failed."""
    args = parse_args(argv)
    # SIGTERM ends the script as ^C does, through the finally blocks that drop the table and stop
    # the private server.
    signal.signal(signal.SIGTERM, lambda *_: sys.exit(143))
    work = args.out or Path(tempfile.mkdtemp(prefix="sysbench-sbs-"))
    work.mkdir(parents=True, exist_ok=True)
    s = Settings(args.sysbench, args.ibench_bin, args.rows, args.threads, args.seconds, args.statements,
                 list(args.ibench_extra), work)
    if args.json:
        args.json.write_text("")  # one JSON object per run, appended server by server
    versions = versions_of(s)
    sections: list[str] = []
    failed = False
    for kind in args.servers:
        try:
            section, ok = bench_server(kind, args, s, versions)
        except (RuntimeError, ValueError, OSError, subprocess.SubprocessError) as e:
            section, ok = f"## sysbench vs ibench on {kind}: failed\n\n{e}", False
        failed |= not ok
        sections.append(section)
        if len(sections) > 1:
            print()  # as the Markdown file joins them
        print(section, flush=True)
        if args.markdown:
            args.markdown.write_text("\n\n".join(sections) + "\n")
    return 1 if failed else 0


if __name__ == "__main__":
    sys.exit(main())
