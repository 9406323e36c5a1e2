"""The Insert Benchmark's reference client (iibench.py) and ibench, side by side.

For one server (a PostgreSQL or MySQL/MariaDB DSN) this runs the published step
sequence, one step per child process, with each client in turn: the reference
(mdcallag/mytools bench/ibench/iibench.py, with the per-step flags of its scripts
iq.sh/np.sh) and then the installed `ibench` command, alternating for
`--repeats` rounds, each round on freshly created tables (l.i0 recreates `pi1`).
Around every step it samples

* the client's CPU: getrusage(RUSAGE_CHILDREN) before and after the child (this
  covers every process iibench.py forks, since they are all reaped before it exits);
* the server's CPU: utime+stime+cutime+cstime from /proc/<pid>/stat of the
  server's processes (the postmaster and its children on PostgreSQL, mariadbd or
  mysqld on MySQL; every process of that name when the pid cannot be found), so a
  local server only;

* the server's CPU by thread role: every 0.1 s each server thread's (or
  PostgreSQL process's) CPU, foreground when it serves a client connection
  (a PostgreSQL client backend; a MySQL/MariaDB thread that
  information_schema.PROCESSLIST's TID names as a connection), background
  otherwise, named where PostgreSQL's process titles name it (checkpointer,
  walwriter, autovacuum worker, ...); what no look saw is `unseen`
  (background): the same sampler for both clients (`RoleSampler`);

and prints a Markdown table per step: rate, client µs/op, server µs/op and the
ratios ibench/reference (medians over the repeats), the server's foreground
and background µs/op of each, then a table of wall-clock figures.

    python3 benches/iibench_side_by_side.py --iibench /path/to/iibench.py \\
        --db postgres://postgres@127.0.0.1:5432/ib_ref \\
        --rows-l-i0 100000 --rows-l-i1 20000 --rows-l-i2 5000 --query-seconds 10

Needs psycopg2 (PostgreSQL) or mysqlclient (MySQL), which iibench.py imports too,
and pyarrow for ibench's steps.parquet. The database in the DSN must exist; the
table `pi1` in it is dropped and recreated by both clients.

Rates: the reference's own figure comes from its final `Totals:` line (rows per
second of that line; queries from its `Query thread: N queries` line over the same
seconds; l.x counts the rows indexed, rows-l-i0 + 100, as np.sh does). That time
starts at the processes' barrier and is rounded up to its 1-second report loop,
so short steps look slower than they are; the second table divides the same
operation counts by the child's wall-clock time, as the published scripts do.
ibench's own figure is read from steps.parquet of its run directory.

The reference's wait step is iq.sh's vac_pg / vac_my, run here as SQL for
X = min(1200, 60 + rows-l-i0/1e6) seconds in all (--wait-seconds overrides it,
for both clients): PostgreSQL VACUUM (VERBOSE, ANALYZE, INDEX_CLEANUP ON) pi1,
CHECKPOINT, sleep the rest; MySQL ANALYZE TABLE pi1 (in the background),
innodb_max_dirty_pages_pct_lwm=1, innodb_max_dirty_pages_pct=1,
innodb_idle_flush_pct=100 (where they exist), sleep the rest, restore them
(MyRocks: wait for compaction, flush the memtable, compact L0). RESET MASTER only
with --reset-master.

ibench runs one `ibench run --steps STEP ... --out DIR --quiet` per step, in
`--compat iibench` mode unless --ibench-mode default. Every per-step process pays
its start-up, printed at the end (the `ibench` Python entry point costs ~1 s of
CPU here, the Rust binary ~5 ms: pick one with --ibench-bin or $IBENCH_BIN;
--subtract-startup removes it). iibench.py always connects to MySQL by unix
socket; by default it is pointed at the DSN's host:port over TCP, like ibench,
through an option file (--ref-mysql-transport socket for the scripts' way).
"""

from __future__ import annotations

import argparse
import dataclasses
import importlib
import json
import math
import os
import re
import resource
import signal
import statistics
import subprocess
import sys
import tempfile
import threading
import time
from pathlib import Path
from types import ModuleType
from typing import Any, Callable, Iterator, Optional, Sequence
from urllib.parse import parse_qs, unquote, urlsplit

TICK = os.sysconf("SC_CLK_TCK")
TABLE = "pi1"
LOAD_STEPS = ("l.i0", "l.i1", "l.i2")
DEFAULT_STEPS = "l.i0,l.x,l.i1,l.i2,wait,qr100,qp100,qr500,qp500,qr1000,qp1000"
Q_STEP = re.compile(r"^q([rp])(\d+)$")


# --------------------------------------------------------------------------- the server


@dataclasses.dataclass(frozen=True)
class Dsn:
    """A parsed `postgres://` or `mysql://` DSN (the one both clients are given)."""

    text: str
    dbms: str  # "postgres" or "mysql"
    host: str
    port: int
    user: str
    password: str
    database: str
    engine: str  # MySQL storage engine (?engine=), "innodb" by default; "pg" on PostgreSQL

    @property
    def local(self) -> bool:
        """Whether the server runs on this host (so /proc shows its processes)."""
        return self.host in ("127.0.0.1", "localhost", "::1", "")


def parse_dsn(text: str) -> Dsn:
    """Parse a DSN of the form scheme://user[:password]@host[:port]/database[?engine=E]."""
    url = urlsplit(text)
    if url.scheme in ("postgres", "postgresql"):
        dbms, port, user = "postgres", 5432, "postgres"
    elif url.scheme in ("mysql", "mariadb"):
        dbms, port, user = "mysql", 3306, "root"
    else:
        raise SystemExit(f"unsupported DSN scheme {url.scheme!r}: use postgres:// or mysql://")
    database = url.path.lstrip("/")
    if not database:
        raise SystemExit("the DSN must name a database, e.g. postgres://postgres@127.0.0.1:5432/ib_ref")
    engine = parse_qs(url.query).get("engine", ["innodb" if dbms == "mysql" else "pg"])[0]
    return Dsn(
        text=text,
        dbms=dbms,
        host=url.hostname or "127.0.0.1",
        port=url.port or port,
        user=unquote(url.username) if url.username else user,
        password=unquote(url.password) if url.password else "",
        database=database,
        engine=engine.lower(),
    )


def driver(dsn: Dsn) -> ModuleType:
    """The DB-API module for the DSN: psycopg2 or MySQLdb (mysqlclient)."""
    return importlib.import_module("psycopg2" if dsn.dbms == "postgres" else "MySQLdb")


def connect(dsn: Dsn) -> Any:
    """An autocommit harness connection over TCP (not one of the clients')."""
    if dsn.dbms == "postgres":
        conn = driver(dsn).connect(
            dbname=dsn.database, host=dsn.host, port=dsn.port, user=dsn.user, password=dsn.password
        )
        conn.autocommit = True
        return conn
    return driver(dsn).connect(
        host=dsn.host, port=dsn.port, user=dsn.user, passwd=dsn.password, db=dsn.database, autocommit=True
    )


def query_one(conn: Any, sql: str) -> Any:
    """The first column of the first row of `sql`, or None when it returns no row."""
    cur = conn.cursor()
    try:
        cur.execute(sql)
        row = cur.fetchone()
        return None if row is None else row[0]
    finally:
        cur.close()


def execute(conn: Any, sql: str) -> None:
    """Run one statement and discard any result."""
    cur = conn.cursor()
    try:
        cur.execute(sql)
        if cur.description is not None:
            cur.fetchall()
    finally:
        cur.close()


def server_version(dsn: Dsn) -> str:
    """The server's version string, for the report."""
    conn = connect(dsn)
    try:
        return str(query_one(conn, "show server_version" if dsn.dbms == "postgres" else "select version()"))
    finally:
        conn.close()


def drop_table(dsn: Dsn) -> None:
    """Drop the benchmark table, so that each client's run starts from nothing."""
    conn = connect(dsn)
    try:
        execute(conn, f"drop table if exists {TABLE}")
    finally:
        conn.close()


# ------------------------------------------------------------------------ server CPU


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


@dataclasses.dataclass(frozen=True)
class ServerProcs:
    """How to find the server's processes: a root pid (with its children) or names."""

    root: Optional[int]
    names: tuple[str, ...]

    def cpu_seconds(self) -> Optional[float]:
        """CPU seconds of the server so far, exited children included (None: not local)."""
        if self.root is None and not self.names:
            return None
        total = 0
        for pid in all_pids():
            st = proc_stat(pid)
            if st is None:
                continue
            comm, ppid, ticks = st
            if self.root is not None:
                if pid == self.root or ppid == self.root:
                    total += ticks
            elif comm in self.names:
                total += ticks
        return total / TICK


def find_server(dsn: Dsn) -> ServerProcs:
    """Locate the server's processes: the postmaster of our backend on PostgreSQL,
    the pid in @@pid_file on MySQL, else every local process with the server's name."""
    names = ("postgres",) if dsn.dbms == "postgres" else ("mariadbd", "mysqld")
    if not dsn.local:
        return ServerProcs(None, ())
    conn = connect(dsn)
    try:
        if dsn.dbms == "postgres":
            backend = proc_stat(int(query_one(conn, "select pg_backend_pid()")))
            if backend is not None and backend[0] == "postgres":
                return ServerProcs(backend[1], names)
        else:
            pid_file = query_one(conn, "select @@pid_file")
            try:
                pid = int(Path(str(pid_file)).read_text().split()[0])
            except (OSError, ValueError, IndexError):
                pid = -1
            st = proc_stat(pid) if pid > 0 else None
            if st is not None and st[0] in names:
                return ServerProcs(pid, names)
    finally:
        conn.close()
    return ServerProcs(None, names)


# ------------------------------------------------------------- server CPU by role

# PostgreSQL's background processes as their titles name them (as ibench's metrics/threads.rs does).
PG_BACKGROUND = ("checkpointer", "background writer", "walwriter", "autovacuum launcher", "autovacuum worker",
                 "logical replication launcher", "logical replication worker", "archiver", "stats collector",
                 "walsender", "walreceiver", "walsummarizer", "startup", "io worker", "parallel worker")


def _boot_ticks() -> int:
    """Clock ticks since boot now."""
    return int(float(Path("/proc/uptime").read_text().split()[0]) * TICK)


class RoleSampler:
    """The server's CPU over a step split into foreground (the threads or
    processes serving client connections) and background (the rest, by
    role), measured the same way for both clients: every 0.1 s it reads each
    server thread's utime+stime (PostgreSQL: each child process of the
    postmaster, named by its title; MySQL/MariaDB: each thread of the
    server, foreground when information_schema.PROCESSLIST's TID names it as
    a connection other than this sampler's own and not a daemon), keeping
    each one's first and last look. What no look saw (processes that ran
    only between two looks) is `unseen`: the measured total less the sum."""

    def __init__(self, dsn: Dsn, server: ServerProcs) -> None:
        self.dsn, self.server = dsn, server
        self.seen: dict[tuple[int, int], list[Any]] = {}  # (tid, start) -> [first, last, role]
        self.since = _boot_ticks()
        self.connections: set[int] = set()
        self.stop = threading.Event()
        self.conn: Any = None
        self.thread = threading.Thread(target=self._loop, daemon=True)

    def __enter__(self) -> "RoleSampler":
        if self.server.root is not None:
            if self.dsn.dbms != "postgres":
                self.conn = connect(self.dsn)
                self.own_tid = int(query_one(self.conn, "select tid from information_schema.processlist "
                                                        "where id = connection_id()") or -1)
            self.look()
            self.thread.start()
        return self

    def __exit__(self, *exc: Any) -> None:
        if self.server.root is not None:
            self.stop.set()
            self.thread.join()
            self.look()
            if self.conn is not None:
                self.conn.close()

    def _loop(self) -> None:
        n = 0
        while not self.stop.wait(0.1):
            if self.conn is not None and n % 10 == 0:
                self._connections()
            self.look()
            n += 1

    def _connections(self) -> None:
        """The server threads serving client connections (MySQL/MariaDB)."""
        cur = self.conn.cursor()
        cur.execute("select tid from information_schema.processlist where command <> 'Daemon' and tid is not null")
        self.connections |= {int(r[0]) for r in cur.fetchall() if int(r[0]) != self.own_tid}
        cur.close()

    def _threads(self) -> Iterator[tuple[int, int, int, str]]:
        """(tid, start, utime+stime ticks, role) of each server thread now."""
        root = self.server.root
        assert root is not None
        if self.dsn.dbms == "postgres":
            pids = [pid for pid in all_pids() if pid == root or (proc_stat(pid) or ("", 0, 0))[1] == root]
            paths = [(pid, Path(f"/proc/{pid}")) for pid in pids]
        else:
            task = Path(f"/proc/{root}/task")
            paths = [(int(t.name), t) for t in task.iterdir()] if task.exists() else []
        for tid, path in paths:
            try:
                text = (path / "stat").read_text()
                title = (path / "cmdline").read_bytes().replace(b"\0", b" ").decode(errors="replace").strip()
            except OSError:
                continue
            fields = text[text.rindex(")") + 2:].split()
            yield tid, int(fields[19]), int(fields[11]) + int(fields[12]), self._role(tid, title)

    def _role(self, tid: int, title: str) -> str:
        if self.dsn.dbms == "postgres":
            rest = title.removeprefix("postgres: ")
            if rest == title:
                return "postmaster"
            return next((k for k in PG_BACKGROUND if k in rest), "foreground")
        return "foreground" if tid in self.connections else "background"

    def look(self) -> None:
        for tid, start, ticks, role in self._threads():
            entry = self.seen.setdefault((tid, start), [0 if start > self.since else ticks, ticks, role])
            entry[1] = ticks
            if role == "foreground":  # MySQL: a thread becomes a connection's once PROCESSLIST names it
                entry[2] = role

    def split(self, total_s: Optional[float]) -> dict[str, float]:
        """CPU seconds by role (`foreground`, each background role, `unseen`)."""
        roles: dict[str, float] = {}
        for first, last, role in self.seen.values():
            roles[role] = roles.get(role, 0.0) + (last - first) / TICK
        if total_s is not None and roles:
            roles["unseen"] = total_s - sum(roles.values())
        return roles


# ---------------------------------------------------------------------- measurements


@dataclasses.dataclass
class Result:
    """One step of one client: operations, its own rate and what it cost."""

    client: str
    step: str
    ok: bool
    ops: float  # rows (load steps), rows indexed (l.x), queries (q steps), 0 (wait)
    rate: Optional[float]  # the client's own figure, ops per second
    wall_s: float  # the child's wall-clock seconds
    client_cpu_s: float
    server_cpu_s: Optional[float]
    bg_ips: Optional[float] = None  # inserts/s achieved during a q step
    note: str = ""
    repeat: int = 0
    roles: dict[str, float] = dataclasses.field(default_factory=dict)  # server CPU s by role (RoleSampler)

    @property
    def fg_cpu_s(self) -> Optional[float]:
        """The server's CPU serving the client's connections."""
        return self.roles.get("foreground") if self.roles else None

    @property
    def bg_cpu_s(self) -> Optional[float]:
        """The server's CPU behind them (every other role, the unseen rest included)."""
        return sum(v for k, v in self.roles.items() if k != "foreground") if self.roles else None

    def per_op_us(self, seconds: Optional[float]) -> Optional[float]:
        """CPU µs per operation, None without operations or a sample."""
        if seconds is None or self.ops <= 0:
            return None
        return seconds / self.ops * 1e6

    @property
    def wall_rate(self) -> Optional[float]:
        """Operations per wall-clock second of the child process."""
        return self.ops / self.wall_s if self.ops > 0 and self.wall_s > 0 else None


@dataclasses.dataclass
class Sample:
    """The CPU counters read around a step."""

    t: float
    children_cpu_s: float
    self_cpu_s: float
    server_cpu_s: Optional[float]


def sample(server: ServerProcs) -> Sample:
    """Read the wall clock, this process's and its reaped children's CPU, and the server's."""
    ch = resource.getrusage(resource.RUSAGE_CHILDREN)
    me = resource.getrusage(resource.RUSAGE_SELF)
    return Sample(
        time.perf_counter(), ch.ru_utime + ch.ru_stime, me.ru_utime + me.ru_stime, server.cpu_seconds()
    )


def deltas(a: Sample, b: Sample, in_process: bool) -> tuple[float, float, Optional[float]]:
    """(wall s, client CPU s, server CPU s) between two samples; `in_process` counts
    this harness's own CPU as the client's (the reference's wait step runs here)."""
    client = (b.self_cpu_s - a.self_cpu_s) if in_process else (b.children_cpu_s - a.children_cpu_s)
    server = None if a.server_cpu_s is None or b.server_cpu_s is None else b.server_cpu_s - a.server_cpu_s
    return b.t - a.t, client, server


# iibench.py's dying words: a forked process's traceback, or the PG executor's message
# before its sys.exit(-1). The others then wait on their queues, the parent for them, forever.
REF_FATAL = ("Traceback (most recent call last)", "\nSQL error: ")


def run_child(argv: Sequence[str], log: Path, cwd: Path, env: Optional[dict[str, str]] = None,
              timeout: float = 3600.0, fatal: Sequence[str] = ()) -> int:
    """Run one client step to completion with its output in `log`; its exit status.

    The child gets its own process group, which is killed after `timeout` seconds or
    as soon as one of the `fatal` markers appears in its output (exit status -9)."""
    with log.open("w") as out:
        out.write(" ".join(argv) + "\n")
        out.flush()
        proc = subprocess.Popen(list(argv), cwd=cwd, env=env, stdout=out, stderr=subprocess.STDOUT,
                                start_new_session=True)
        deadline = time.monotonic() + timeout
        try:
            while True:
                try:
                    return proc.wait(timeout=1.0)
                except subprocess.TimeoutExpired:
                    pass
                if time.monotonic() > deadline or any(m in log.read_text() for m in fatal):
                    kill_group(proc)
                    out.write("\n[side-by-side: killed the process group]\n")
                    return -9
        except BaseException:
            kill_group(proc)
            raise


def kill_group(proc: "subprocess.Popen[bytes]") -> None:
    """SIGTERM the child's process group, SIGKILL it 5 s later if still there, reap the child."""
    for sig in (signal.SIGTERM, signal.SIGKILL):
        try:
            os.killpg(proc.pid, sig)
        except ProcessLookupError:
            break
        try:
            proc.wait(timeout=5.0)
            break
        except subprocess.TimeoutExpired:
            continue


# ------------------------------------------------------------------- the reference


@dataclasses.dataclass(frozen=True)
class Sizes:
    """Rows per load step, seconds per q step and the wait step's length."""

    rows_l_i0: int
    rows_l_i1: int
    rows_l_i2: int
    query_seconds: int
    wait_seconds: float
    delete_per_insert: bool


def wait_seconds_default(rows_l_i0: int) -> float:
    """iq.sh's X: 60 s plus 1 s per million rows loaded by l.i0, at most 1200 s."""
    return float(round(min(1200.0, 60.0 + rows_l_i0 / 1e6)))


def ref_step_flags(step: str, sizes: Sizes) -> list[str]:
    """The per-step iibench.py flags of iq.sh/np.sh (one client, table pi1)."""
    dpi = ["--delete_per_insert"] if sizes.delete_per_insert else []
    if step == "l.i0":
        return ["--setup", "--num_secondary_indexes=0", "--rows_per_commit=100",
                f"--max_rows={sizes.rows_l_i0}", "--inserts_per_second=0", "--query_threads=0"]
    if step == "l.x":
        return ["--secondary_at_end", "--num_secondary_indexes=3", "--rows_per_commit=100",
                "--max_rows=100", "--inserts_per_second=0", "--query_threads=0"]
    if step in ("l.i1", "l.i2"):
        rows, rpc = (sizes.rows_l_i1, 50) if step == "l.i1" else (sizes.rows_l_i2, 5)
        return ["--num_secondary_indexes=3", f"--rows_per_commit={rpc}", f"--max_rows={rows}",
                "--inserts_per_second=0", "--query_threads=0"] + dpi
    m = Q_STEP.match(step)
    if m is None:
        raise SystemExit(f"unknown step {step!r}")
    ips = int(m.group(2))
    pk = ["--query_pk_only"] if m.group(1) == "p" else []
    return ["--num_secondary_indexes=3", "--rows_per_commit=50", f"--max_rows={sizes.query_seconds * ips}",
            f"--inserts_per_second={ips}", "--query_threads=1"] + dpi + pk


def mysql_tcp_config(dsn: Dsn, directory: Path) -> Path:
    """An option file that makes iibench.py's socket-only connect() use TCP instead:
    libmariadb/libmysqlclient honour protocol=tcp from read_default_file."""
    path = directory / "iibench-tcp.cnf"
    path.write_text(f"[client]\nprotocol=tcp\nhost={dsn.host}\nport={dsn.port}\n")
    return path


def mysql_socket(dsn: Dsn) -> str:
    """The server's unix socket (np.sh asks the server the same way)."""
    conn = connect(dsn)
    try:
        return str(query_one(conn, "select @@socket"))
    finally:
        conn.close()


def ref_common_flags(dsn: Dsn, transport: str, socket: Optional[str], work: Path) -> list[str]:
    """The flags np.sh gives iibench.py for every step (seed from the wall clock, as there)."""
    flags = [f"--dbms={dsn.dbms}", f"--db_name={dsn.database}", "--secs_per_report=1",
             f"--db_host={dsn.host}", f"--db_user={dsn.user}", f"--db_password={dsn.password}",
             "--data_length_min=10", "--data_length_max=20", f"--table_name={TABLE}",
             "--dbopt=none", "--my_id=1", f"--seed={int(time.time()) + 1}"]
    if dsn.dbms == "postgres":
        return flags + ["--use_prepared_query"]
    flags += [f"--engine={dsn.engine}", "--unique_checks=1", "--bulk_load=0",
              f"--db_socket={socket or mysql_socket(dsn)}"]
    if transport == "tcp":
        flags.append(f"--db_config_file={mysql_tcp_config(dsn, work)}")
    return flags


@dataclasses.dataclass
class RefOutput:
    """What iibench.py printed at the end of a run."""

    secs: Optional[float] = None
    rows: Optional[int] = None
    queries: Optional[int] = None
    retries: tuple[int, int, int] = (0, 0, 0)
    index_secs: Optional[float] = None
    short_deletes: int = 0
    done: bool = False


def parse_ref_output(text: str) -> RefOutput:
    """Parse iibench.py's Totals, Query thread, index and short-delete lines."""
    out = RefOutput()
    for line in text.splitlines():
        if m := re.match(r"Totals: ([\d.]+) secs, [\d.]+ rows/sec, (\d+) rows, (\d+) (\d+) (\d+) ", line):
            out.secs, out.rows = float(m.group(1)), int(m.group(2))
            out.retries = (int(m.group(3)), int(m.group(4)), int(m.group(5)))
        elif m := re.match(r"Query thread: (\d+) queries", line):
            out.queries = int(m.group(1))
        elif m := re.match(r"Created secondary indexes in ([\d.]+) seconds", line):
            out.index_secs = float(m.group(1))
        elif line.startswith("delete: "):
            out.short_deletes += 1
        elif line.strip() == "Done":
            out.done = True
    return out


def ref_result(step: str, sizes: Sizes, out: RefOutput, rc: int,
               wall: float, client: float, server: Optional[float]) -> Result:
    """Turn a reference step's output and samples into a Result."""
    ok = rc == 0 and out.done and out.secs is not None
    notes = []
    if any(out.retries):
        notes.append(f"retries i/d/q={out.retries}")
    if out.short_deletes:
        notes.append(f"{out.short_deletes} short deletes")
    if not ok:
        notes.append(f"failed (exit {rc})")
    secs = out.secs or 0.0
    bg_ips = None
    if step == "l.x":
        ops = float(math.ceil(sizes.rows_l_i0 / 100) * 100 + 100)
        if out.index_secs is not None:
            notes.append(f"index {out.index_secs:.1f}s")
    elif Q_STEP.match(step):
        ops = float(out.queries or 0)
        bg_ips = (out.rows or 0) / secs if secs > 0 else None
    else:
        ops = float(out.rows or 0)
    rate = ops / secs if ok and secs > 0 else None
    return Result("ref", step, ok, ops, rate, wall, client, server, bg_ips, "; ".join(notes))


def run_ref_step(ctx: "Context", step: str) -> Result:
    """Run one step of the reference client in its own process and measure it."""
    argv = [ctx.python, str(ctx.iibench)] + ctx.ref_flags + ref_step_flags(step, ctx.sizes)
    log = ctx.logs / f"r{ctx.repeat}.ref.{step}.log"
    with RoleSampler(ctx.dsn, ctx.server) as roles:
        a = sample(ctx.server)
        rc = run_child(argv, log, ctx.ref_cwd, ctx.ref_env, ctx.step_timeout, fatal=REF_FATAL)
        b = sample(ctx.server)
    wall, client, server = deltas(a, b, in_process=False)
    r = ref_result(step, ctx.sizes, parse_ref_output(log.read_text()), rc, wall, client, server)
    r.roles = roles.split(server)
    return r


# ----------------------------------------------------------- the scripts' wait step


def vac_pg(dsn: Dsn, seconds: float, log: Callable[[str], None]) -> None:
    """iq.sh vac_pg: VACUUM (VERBOSE, ANALYZE[, INDEX_CLEANUP ON from PG 12]) the table,
    then CHECKPOINT, then sleep for what is left of `seconds`."""
    start = time.monotonic()
    conn = connect(dsn)
    try:
        version = int(query_one(conn, "show server_version_num"))
        args = "(verbose, analyze, index_cleanup ON)" if version >= 120000 else "(verbose, analyze)"
        execute(conn, f"vacuum {args} {TABLE}")
        log(f"vacuum {args} {TABLE}: {time.monotonic() - start:.1f}s")
        execute(conn, "checkpoint")
        log(f"checkpoint done at {time.monotonic() - start:.1f}s")
    finally:
        conn.close()
    time.sleep(max(0.0, seconds - (time.monotonic() - start)))


def global_var(conn: Any, name: str) -> Optional[str]:
    """A global variable's value, None when this server has no such variable."""
    cur = conn.cursor()
    try:
        cur.execute(f"show global variables like '{name}'")
        row = cur.fetchone()
        return None if row is None else str(row[1])
    finally:
        cur.close()


def vac_my_innodb(conn: Any, log: Callable[[str], None]) -> dict[str, str]:
    """Force InnoDB writeback as vac_my does; returns the settings to restore."""
    saved: dict[str, str] = {}
    for name, value in (("innodb_max_dirty_pages_pct_lwm", "1"), ("innodb_max_dirty_pages_pct", "1"),
                        ("innodb_idle_flush_pct", "100")):
        old = global_var(conn, name)
        if old is None:
            log(f"{name}: not on this server, skipped")
            continue
        saved[name] = old
        execute(conn, f"set global {name}={value}")
        log(f"set global {name}={value} (was {old})")
    return saved


def vac_my_rocksdb(conn: Any, log: Callable[[str], None]) -> None:
    """vac_my for MyRocks: wait for compaction to stop, flush the memtable, compact L0."""
    while True:
        try:
            cur = conn.cursor()
            cur.execute("select * from information_schema.rocksdb_active_compaction_stats")
            running = len(cur.fetchall())
            cur.close()
        except Exception as e:  # no such table on this server
            log(f"rocksdb_active_compaction_stats: {e}; sleep 30 s")
            time.sleep(30)
            break
        if not running:
            break
        log("compaction running, sleep 10 s")
        time.sleep(10)
    execute(conn, "set global rocksdb_force_flush_memtable_now=1")
    time.sleep(20)
    execute(conn, "set global rocksdb_compact_lzero_now=1")


def vac_my(dsn: Dsn, seconds: float, reset_master: bool, log: Callable[[str], None]) -> None:
    """iq.sh vac_my: [RESET MASTER], ANALYZE TABLE in the background, InnoDB dirty-page
    settings (or MyRocks flush and L0 compaction), sleep what is left of `seconds`,
    wait for the analyze, restore the settings."""
    start = time.monotonic()
    conn = connect(dsn)
    saved: dict[str, str] = {}
    try:
        if reset_master:
            execute(conn, "reset master")
        analyze = threading.Thread(target=analyze_table, args=(dsn, log))
        analyze.start()
        if dsn.engine == "innodb":
            saved = vac_my_innodb(conn, log)
        elif dsn.engine == "rocksdb":
            vac_my_rocksdb(conn, log)
        time.sleep(max(0.0, seconds - (time.monotonic() - start)))
        analyze.join()
    finally:
        for name in ("innodb_max_dirty_pages_pct", "innodb_max_dirty_pages_pct_lwm", "innodb_idle_flush_pct"):
            if name in saved:
                execute(conn, f"set global {name}={saved[name]}")
                log(f"restored {name}={saved[name]}")
        conn.close()


def analyze_table(dsn: Dsn, log: Callable[[str], None]) -> None:
    """ANALYZE TABLE on its own connection (vac_my runs it in the background)."""
    conn = connect(dsn)
    try:
        t = time.monotonic()
        execute(conn, f"analyze table {TABLE}")
        log(f"analyze table {TABLE}: {time.monotonic() - t:.1f}s")
    finally:
        conn.close()


def run_ref_wait(ctx: "Context") -> Result:
    """The scripts' wait step for the reference, run from this process as SQL."""
    path = ctx.logs / f"r{ctx.repeat}.ref.wait.log"
    with path.open("w") as f:
        def log(msg: str) -> None:
            f.write(msg + "\n")
            f.flush()

        a = sample(ctx.server)
        ok, note = True, ""
        try:
            if ctx.dsn.dbms == "postgres":
                vac_pg(ctx.dsn, ctx.sizes.wait_seconds, log)
            else:
                vac_my(ctx.dsn, ctx.sizes.wait_seconds, ctx.reset_master, log)
        except Exception as e:
            ok, note = False, f"failed: {e}"
            log(note)
        b = sample(ctx.server)
    wall, client, server = deltas(a, b, in_process=True)
    return Result("ref", "wait", ok, 0.0, None, wall, client, server, None, note)


# --------------------------------------------------------------------------- ibench


def ibench_argv(ctx: "Context", step: str, out: Path) -> list[str]:
    """`ibench run` for one step (it continues the tables of the previous run)."""
    s = ctx.sizes
    argv = [ctx.ibench_bin, "run", "--db", ctx.dsn.text, "--steps", step,
            "--rows-l-i0", str(s.rows_l_i0), "--rows-l-i1", str(s.rows_l_i1), "--rows-l-i2", str(s.rows_l_i2),
            "--query-seconds", str(s.query_seconds), "--wait-seconds", f"{s.wait_seconds:g}",
            "--clients", "1", "--out", str(out), "--quiet"]
    if not s.delete_per_insert:
        argv += ["--delete-per-insert", "false"]
    if ctx.ibench_verify != "default":
        argv += ["--verify", ctx.ibench_verify]
    if ctx.ibench_mode == "compat":
        argv += ["--compat", "iibench"]
    return argv + ctx.ibench_extra


def run_dirs(out: Path) -> set[Path]:
    """The run directories under an ibench --out directory."""
    return {p for p in out.iterdir() if p.is_dir()} if out.is_dir() else set()


@dataclasses.dataclass(frozen=True)
class IbenchStep:
    """One row of ibench's steps.parquet, reduced to what this comparison needs."""

    ops: float
    rate: Optional[float]
    elapsed_s: float
    bg_ips: Optional[float]


def finite(v: Any) -> Optional[float]:
    """A float, or None for a missing or NaN value."""
    if v is None:
        return None
    f = float(v)
    return None if math.isnan(f) else f


def read_ibench_step(run_dir: Path, step: str) -> IbenchStep:
    """Read step `step` from `run_dir`/steps.parquet (columns step, ips, qps,
    indexed_rows_per_s, elapsed_s): the rate that matches the step's kind and the
    operations it implies (rate × elapsed seconds)."""
    pq = importlib.import_module("pyarrow.parquet")
    rows: list[dict[str, Any]] = pq.read_table(run_dir / "steps.parquet").to_pylist()
    match = [r for r in rows if r["step"] == step] or [r for r in rows if str(r["step"]).startswith(step + ".")]
    if not match:
        raise ValueError(f"no step {step!r} in {run_dir / 'steps.parquet'}")
    r = match[0]
    elapsed = finite(r.get("elapsed_s")) or 0.0
    ips, qps = finite(r.get("ips")), finite(r.get("qps"))
    if step == "l.x":
        rate = finite(r.get("indexed_rows_per_s"))
    elif Q_STEP.match(step):
        rate = qps
    elif step in LOAD_STEPS:
        rate = ips
    else:
        rate = None
    ops = (rate or 0.0) * elapsed
    return IbenchStep(ops, rate, elapsed, ips if Q_STEP.match(step) else None)


def run_ibench_step(ctx: "Context", step: str, out: Path) -> Result:
    """Run one step of ibench in its own process, measure it and read its steps.parquet."""
    out.mkdir(parents=True, exist_ok=True)
    before = run_dirs(out)
    log = ctx.logs / f"r{ctx.repeat}.ibench.{step}.log"
    with RoleSampler(ctx.dsn, ctx.server) as roles:
        a = sample(ctx.server)
        rc = run_child(ibench_argv(ctx, step, out), log, out, timeout=ctx.step_timeout)
        b = sample(ctx.server)
    wall, client, server = deltas(a, b, in_process=False)
    new = sorted(run_dirs(out) - before, key=lambda p: p.stat().st_mtime)
    try:
        if rc != 0 or not new:
            raise ValueError(f"exit {rc}, {len(new)} new run directories; see {log}")
        st = read_ibench_step(new[-1], step)
    except (ValueError, OSError, KeyError) as e:
        return Result("ibench", step, False, 0.0, None, wall, client, server, None, f"failed: {e}")
    return Result("ibench", step, True, st.ops, st.rate, wall, client, server, st.bg_ips,
                  roles=roles.split(server))


def startup_cpu(argv: Sequence[str], cwd: Path, env: Optional[dict[str, str]] = None, runs: int = 3) -> float:
    """Median client CPU seconds of a command that only starts up (e.g. `--help`): the
    fixed cost every per-step invocation pays (interpreter, imports, a pyenv shim)."""
    costs = []
    for _ in range(runs):
        a = resource.getrusage(resource.RUSAGE_CHILDREN)
        subprocess.run(list(argv), cwd=cwd, env=env, stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL)
        b = resource.getrusage(resource.RUSAGE_CHILDREN)
        costs.append((b.ru_utime + b.ru_stime) - (a.ru_utime + a.ru_stime))
    return statistics.median(costs)


def calibrate(ctx: "Context", sides: Sequence[str]) -> dict[str, float]:
    """Startup client CPU per invocation of each client."""
    out: dict[str, float] = {}
    if "ref" in sides:
        out["ref"] = startup_cpu([ctx.python, str(ctx.iibench), "--help"], ctx.ref_cwd, ctx.ref_env)
    if "ibench" in sides:
        out["ibench"] = startup_cpu([ctx.ibench_bin, "run", "--help"], ctx.logs)
    return out


# ---------------------------------------------------------------------------- driver


@dataclasses.dataclass
class Context:
    """Everything a step needs: server, sizes, client settings, where logs go."""

    dsn: Dsn
    sizes: Sizes
    server: ServerProcs
    iibench: Path
    python: str
    ref_flags: list[str]
    ref_env: dict[str, str]
    ref_cwd: Path
    logs: Path
    ibench_bin: str
    ibench_mode: str
    ibench_verify: str
    ibench_extra: list[str]
    reset_master: bool
    step_timeout: float
    repeat: int = 0
    startup: dict[str, float] = dataclasses.field(default_factory=dict)
    subtract_startup: bool = False
    version: str = ""
    load_before: float = 0.0
    ref_transport: str = "tcp"


def run_client(ctx: Context, client: str, steps: Sequence[str], out: Path) -> list[Result]:
    """All steps of one client, one process per step, on freshly dropped tables."""
    if "l.i0" in steps:
        drop_table(ctx.dsn)
    results = []
    for step in steps:
        if client == "ref":
            r = run_ref_wait(ctx) if step == "wait" else run_ref_step(ctx, step)
        else:
            r = run_ibench_step(ctx, step, out)
        r.repeat = ctx.repeat
        if ctx.subtract_startup and not (client == "ref" and step == "wait"):  # that one runs in-process
            r.client_cpu_s = max(0.0, r.client_cpu_s - ctx.startup.get(client, 0.0))
        results.append(r)
        print(progress_line(ctx.repeat, r), file=sys.stderr, flush=True)
        if not r.ok:
            print(f"  {client} {step} failed, skipping its remaining steps", file=sys.stderr)
            break
    return results


def progress_line(repeat: int, r: Result) -> str:
    """One stderr line per finished step."""
    return (f"[{repeat}] {r.client:6} {r.step:7} ok={r.ok!s:5} ops={r.ops:9.0f} rate={fmt(r.rate)} "
            f"wall={r.wall_s:6.1f}s client={r.client_cpu_s:6.2f}s server={fmt(r.server_cpu_s)}s {r.note}")


def fmt(v: Optional[float], digits: int = 1) -> str:
    """A number for a table cell: '-' when missing, thousands grouped when large."""
    if v is None:
        return "-"
    if abs(v) >= 1000:
        return f"{v:,.0f}"
    return f"{v:.{digits}f}"


def ratio(a: Optional[float], b: Optional[float]) -> Optional[float]:
    """b / a (ibench over the reference), None when either is missing or a is 0."""
    return None if a is None or b is None or a == 0 else b / a


def median(values: Sequence[Optional[float]]) -> Optional[float]:
    """Median of the values that are present."""
    present = [v for v in values if v is not None]
    return statistics.median(present) if present else None


def pick(results: Sequence[Result], client: str, step: str, f: Callable[[Result], Optional[float]]) -> Optional[float]:
    """Median over repeats of one field for one client and step (successful steps only)."""
    return median([f(r) for r in results if r.client == client and r.step == step and r.ok])


def main_table(results: Sequence[Result], steps: Sequence[str]) -> str:
    """The per-step Markdown table: own rate, client and server µs/op, ratios ibench/ref."""
    head = ("| step | ref rate | ibench rate | ratio | ref client µs/op | ibench client µs/op | ratio "
            "| ref server µs/op | ibench server µs/op | ratio |")
    lines = [head, "|" + "---|" * 10]
    getters: list[Callable[[Result], Optional[float]]] = [
        lambda r: r.rate, lambda r: r.per_op_us(r.client_cpu_s), lambda r: r.per_op_us(r.server_cpu_s)]
    for step in steps:
        if step == "wait":
            continue
        cells = [step]
        for g in getters:
            a, b = pick(results, "ref", step, g), pick(results, "ibench", step, g)
            cells += [fmt(a), fmt(b), fmt(ratio(a, b), 2)]
        lines.append("| " + " | ".join(cells) + " |")
    return "\n".join(lines)


def roles_table(results: Sequence[Result], steps: Sequence[str]) -> str:
    """The server's CPU per operation, foreground and background apart, and
    the background roles that differ most (medians over the repeats)."""
    head = ("| step | ref fg µs/op | ibench fg µs/op | ratio | ref bg µs/op | ibench bg µs/op | ratio "
            "| bg roles, ref → ibench µs/op |")
    lines = [head, "|" + "---|" * 8]
    for step in steps:
        if step == "wait":
            continue
        fg = [pick(results, c, step, lambda r: r.per_op_us(r.fg_cpu_s)) for c in ("ref", "ibench")]
        bg = [pick(results, c, step, lambda r: r.per_op_us(r.bg_cpu_s)) for c in ("ref", "ibench")]
        names = sorted({k for r in results if r.step == step for k in r.roles if k != "foreground"})
        per_role = {k: [pick(results, c, step, lambda r, k=k: r.per_op_us(r.roles.get(k, 0.0)))
                        for c in ("ref", "ibench")] for k in names}
        top = sorted(per_role.items(), key=lambda kv: -max(abs(v or 0) for v in kv[1]))[:3]
        detail = ", ".join(f"{k} {fmt(a, 2)} → {fmt(b, 2)}" for k, (a, b) in top)
        lines.append("| " + " | ".join([step, fmt(fg[0]), fmt(fg[1]), fmt(ratio(*fg), 2), fmt(bg[0]), fmt(bg[1]),
                                         fmt(ratio(*bg), 2), detail]) + " |")
    return "\n".join(lines)


def wall_table(results: Sequence[Result], steps: Sequence[str]) -> str:
    """Wall-clock figures: operations, child seconds, ops per wall second, q-step insert rate."""
    head = ("| step | ref ops | ibench ops | ref wall s | ibench wall s | ref ops/wall s | ibench ops/wall s "
            "| ratio | ref bg ips | ibench bg ips | ref server CPU s | ibench server CPU s |")
    lines = [head, "|" + "---|" * 12]
    for step in steps:
        def both(g: Callable[[Result], Optional[float]]) -> tuple[Optional[float], Optional[float]]:
            return pick(results, "ref", step, g), pick(results, "ibench", step, g)

        ops, wall, rate = both(lambda r: r.ops or None), both(lambda r: r.wall_s), both(lambda r: r.wall_rate)
        bg, srv = both(lambda r: r.bg_ips), both(lambda r: r.server_cpu_s)
        cells = [step, fmt(ops[0]), fmt(ops[1]), fmt(wall[0]), fmt(wall[1]), fmt(rate[0]), fmt(rate[1]),
                 fmt(ratio(*rate), 2), fmt(bg[0]), fmt(bg[1]), fmt(srv[0], 2), fmt(srv[1], 2)]
        lines.append("| " + " | ".join(cells) + " |")
    return "\n".join(lines)


def notes(results: Sequence[Result]) -> list[str]:
    """Every non-empty per-step note, for the end of the report."""
    return [f"- repeat {r.repeat}: {r.client} {r.step}: {r.note}" for r in results if r.note]


def parse_args(argv: Optional[Sequence[str]] = None) -> argparse.Namespace:
    """The command line."""
    p = argparse.ArgumentParser(description=__doc__.split("\n\n")[0],
                                formatter_class=argparse.RawDescriptionHelpFormatter)
    p.add_argument("--iibench", type=Path, help="path of the reference iibench.py (needed unless --sides ibench)")
    p.add_argument("--db", required=True, help="postgres://user@host:port/db or mysql://user@host:port/db[?engine=E]")
    p.add_argument("--rows-l-i0", type=int, default=1_000_000)
    p.add_argument("--rows-l-i1", type=int, default=200_000)
    p.add_argument("--rows-l-i2", type=int, default=50_000)
    p.add_argument("--query-seconds", type=int, default=60)
    p.add_argument("--wait-seconds", type=float, help="the wait step's X (default min(1200, 60 + rows-l-i0/1e6))")
    p.add_argument("--steps", default=DEFAULT_STEPS, help=f"comma-separated (default {DEFAULT_STEPS})")
    p.add_argument("--repeats", type=int, default=1, help="rounds of reference then ibench")
    p.add_argument("--sides", default="ref,ibench", help="which clients to run: ref, ibench or both")
    p.add_argument("--no-delete-per-insert", dest="delete_per_insert", action="store_false",
                   help="run l.i1, l.i2 and the q steps without deletes (both clients)")
    p.add_argument("--ibench-bin", default=os.environ.get("IBENCH_BIN", "ibench"),
                   help="the ibench command (default $IBENCH_BIN, else ibench on PATH)")
    p.add_argument("--ibench-mode", choices=("compat", "default"), default="compat",
                   help="compat passes --compat iibench; default omits it")
    p.add_argument("--ibench-verify", choices=("off", "quick", "full", "default"), default="off",
                   help="ibench's --verify (default off: the reference verifies nothing, and "
                        "verification would count as client and server CPU)")
    p.add_argument("--ibench-arg", dest="ibench_extra", action="append", default=[],
                   help="one more argument for `ibench run`, repeatable; write --ibench-arg=--flag")
    p.add_argument("--ref-python", default=sys.executable, help="interpreter for iibench.py")
    p.add_argument("--ref-mysql-transport", choices=("tcp", "socket"), default="tcp",
                   help="iibench.py always connects by unix socket; tcp makes it use the DSN's "
                        "host:port through an option file, like ibench (default tcp)")
    p.add_argument("--mysql-socket", help="socket for --ref-mysql-transport socket (default: the server's @@socket)")
    p.add_argument("--reset-master", action="store_true",
                   help="MySQL wait step: run RESET MASTER first as vac_my does (deletes binary logs!)")
    p.add_argument("--work-dir", type=Path, help="where logs and ibench runs go (default: a new temp dir)")
    p.add_argument("--json", type=Path, help="also write every measurement to this JSON file")
    p.add_argument("--subtract-startup", action="store_true",
                   help="subtract each client's startup CPU (measured with --help) from every "
                        "step's client CPU; the startup cost is always printed")
    p.add_argument("--step-timeout", type=float, default=3600.0,
                   help="kill a client step after this many seconds (default 3600)")
    p.add_argument("--keep-table", action="store_true", help="leave pi1 in the database at the end")
    return p.parse_args(argv)


def make_context(args: argparse.Namespace, dsn: Dsn, sides: Sequence[str], work: Path) -> Context:
    """Resolve sizes, server processes and the reference's fixed flags."""
    sizes = Sizes(args.rows_l_i0, args.rows_l_i1, args.rows_l_i2, args.query_seconds,
                  args.wait_seconds if args.wait_seconds is not None else wait_seconds_default(args.rows_l_i0),
                  args.delete_per_insert)
    ref_cwd = work / "ref-cwd"  # iibench.py writes o.pgid.* files into its working directory
    ref_cwd.mkdir(parents=True, exist_ok=True)
    env = dict(os.environ)
    ref_flags: list[str] = []
    if "ref" in sides:
        if args.iibench is None or not args.iibench.is_file():
            raise SystemExit("--iibench PATH (the reference iibench.py) is required to run the reference")
        if dsn.dbms == "postgres":
            env["PGPORT"] = str(dsn.port)  # iibench.py has no port flag; libpq reads PGPORT
        ref_flags = ref_common_flags(dsn, args.ref_mysql_transport, args.mysql_socket, work)
    logs = work / "logs"
    logs.mkdir(parents=True, exist_ok=True)
    return Context(dsn, sizes, find_server(dsn), (args.iibench or Path("iibench.py")).resolve(), args.ref_python,
                   ref_flags, env, ref_cwd, logs, args.ibench_bin, args.ibench_mode, args.ibench_verify,
                   list(args.ibench_extra), args.reset_master, args.step_timeout)


def report(ctx: Context, steps: Sequence[str], results: Sequence[Result], repeats: int) -> str:
    """The whole Markdown report."""
    s = ctx.sizes
    waits = [f"{r.client} {r.wall_s:.1f}s (server CPU {fmt(r.server_cpu_s, 2)}s)"
             for r in results if r.step == "wait"]
    parts = [
        f"## iibench.py vs ibench ({ctx.ibench_mode} mode) on {ctx.dsn.dbms} {ctx.dsn.host}:{ctx.dsn.port}"
        f"/{ctx.dsn.database}" + (f" engine={ctx.dsn.engine}" if ctx.dsn.dbms == "mysql" else ""),
        "",
        f"server {ctx.version}; reference connects by {ctx.ref_transport}; 1-minute load average before the first step {ctx.load_before:.2f}"
        + (" (other work on this host: the figures include contention)" if ctx.load_before > 0.5 else ""),
        "",
        f"rows l.i0/l.i1/l.i2 = {s.rows_l_i0}/{s.rows_l_i1}/{s.rows_l_i2}, q steps {s.query_seconds} s, "
        f"wait {s.wait_seconds:g} s, delete_per_insert={s.delete_per_insert}, repeats={repeats} (medians); "
        f"server processes: {'pid ' + str(ctx.server.root) if ctx.server.root else ', '.join(ctx.server.names) or 'not local'}",
        "",
        "Rates: rows/s (l.i0, l.i1, l.i2), rows indexed/s (l.x), queries/s (q steps); each client's own figure. "
        "µs/op: CPU per row, row indexed or query. ratio = ibench / reference.",
        "",
        main_table(results, steps),
        "",
        "The server's CPU per operation by thread role: foreground (the processes or threads serving the "
        "client's connections) and background (everything else, what no 0.1-s look saw included), "
        "the same sampler for both clients:",
        "",
        roles_table(results, steps),
        "",
        "Wall clock (child process start to exit, as np.sh times a step):",
        "",
        wall_table(results, steps),
    ]
    if waits:
        parts += ["", "wait: " + "; ".join(waits)]
    if ctx.startup:
        parts += ["", "client CPU of one start-up (`--help`), paid by every per-step process: "
                  + ", ".join(f"{k} {v * 1e3:.0f} ms" for k, v in ctx.startup.items())
                  + (" (subtracted above)" if ctx.subtract_startup else " (included above)")]
    extra = notes(results)
    if extra:
        parts += ["", "Notes:"] + extra
    parts += ["", f"logs: {ctx.logs}"]
    return "\n".join(parts)


def main(argv: Optional[Sequence[str]] = None) -> int:
    """Run the rounds and print the report."""
    args = parse_args(argv)
    dsn = parse_dsn(args.db)
    sides = [s.strip() for s in args.sides.split(",") if s.strip()]
    if not sides or any(s not in ("ref", "ibench") for s in sides):
        raise SystemExit("--sides takes ref, ibench or ref,ibench")
    steps = [s.strip() for s in args.steps.split(",") if s.strip()]
    for s in steps:
        if s not in ("l.i0", "l.x", "l.i1", "l.i2", "wait") and not Q_STEP.match(s):
            raise SystemExit(f"unknown step {s!r}")
    work = args.work_dir or Path(tempfile.mkdtemp(prefix="iibench-sbs-"))
    ctx = make_context(args, dsn, sides, work)
    ctx.version, ctx.load_before = server_version(dsn), os.getloadavg()[0]
    ctx.startup = calibrate(ctx, sides)
    ctx.subtract_startup = args.subtract_startup
    ctx.ref_transport = args.ref_mysql_transport if dsn.dbms == "mysql" else "tcp"
    results: list[Result] = []
    try:
        for repeat in range(args.repeats):
            ctx.repeat = repeat
            for client in sides:
                results += run_client(ctx, client, steps, work / f"ibench-r{repeat}")
    finally:
        if not args.keep_table:
            drop_table(dsn)
        if args.json:
            args.json.write_text(json.dumps([dataclasses.asdict(r) for r in results], indent=1))
    print(report(ctx, steps, results, args.repeats))
    return 0 if all(r.ok for r in results) else 1


if __name__ == "__main__":
    sys.exit(main())
