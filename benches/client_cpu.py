"""ibench's own CPU per operation on the query and load paths, per server and
transport, with the null connector's cost for the same steps beside it.

For each server (PostgreSQL and MariaDB InnoDB on this host) and transport
(TCP to 127.0.0.1, the Unix socket, TLS over TCP) it loads a table, then
runs l.i1, l.i2, qr100 and qp100 one after another, `ROUNDS` times, and
prints ibench's client CPU µs per query (q steps) or per row (load steps)
from steps.parquet (the process's own utime + stime over the step), split
into the kernel's part (stime: system calls, the network stack, sleeping
and waking for each reply) and ibench's own (utime), with the server's CPU
per operation and the rate. The null connector runs the same steps with no
database: what the harness itself costs. `cargo bench --bench roundtrip`
gives the kernel's floor under any synchronous client's CPU per round trip
on the same host (a bare socket ping-pong, no protocol).

    python3 benches/client_cpu.py [ROUNDS] [QUERY_SECONDS]

The binary is $IBENCH_BIN, or `ibench` on PATH. To compare builds side by
side in one run (this machine is noisy), name them in $IBENCH_BINS:
`before=/tmp/ibench-old,after=/var/cache/ibench-target/release/ibench`;
every round then runs each target with each binary in turn, and the table
has a column per binary and the ratio of the last to the first.
$IBENCH_TARGETS (comma-separated words, e.g. `null,MariaDB`) keeps only the
targets whose label holds one of them. $ROUNDTRIP_BIN (the binary `cargo
bench --bench roundtrip --no-run` prints) measures the kernel's floor in
every round too, so the floor and ibench see the same machine.
$IBENCH_HALT_POLL_NS (`0,200000`) runs every target under each value of a
KVM guest's /sys/module/haltpoll/parameters/guest_halt_poll_ns in turn, a
column each, and puts the value found back at the end: with 0 an idle vCPU
halts at once, and each round trip that finds one idle pays a VM exit and a
wake-up (docs/connectors.md). Setting it needs root.
$IBENCH_STEPS (default `l.i1,l.i2,qr100,qp100`) picks the steps, and
$IBENCH_ROWS (`l.i2=200000`) the rows of a load step: CPU time comes in
the kernel's 10 ms ticks, so a load step's per-row figure is good to about
10 ms / rows (0.5 µs at the default 20,000 rows of l.i2).
The tables live in a database `ib_client_cpu` on each server a target uses,
made afresh at the start and dropped at the end (and on SIGTERM).
"""

from __future__ import annotations

import os
import re
import signal
import statistics
import subprocess
import sys
import tempfile
from pathlib import Path

import pyarrow.parquet as pq

BINS = [
    tuple(b.split("=", 1)) for b in os.environ.get("IBENCH_BINS", "").split(",") if b
] or [("ibench", os.environ.get("IBENCH_BIN", "ibench"))]
STEPS = [s for s in os.environ.get("IBENCH_STEPS", "l.i1,l.i2,qr100,qp100").split(",") if s]
HALT_POLL = Path("/sys/module/haltpoll/parameters/guest_halt_poll_ns")
POLLS = [v for v in os.environ.get("IBENCH_HALT_POLL_NS", "").split(",") if v]
if any(not v.isdigit() for v in POLLS):
    sys.exit(f"IBENCH_HALT_POLL_NS: {os.environ['IBENCH_HALT_POLL_NS']!r}: expected nanoseconds, e.g. 0,200000")
# The columns: each binary, under each halt-polling value when there are several.
VARIANTS = [
    (f"{name} poll={v}" if POLLS else name, binary, v or None)
    for name, binary in BINS for v in (POLLS or [""])
]
TARGETS = [
    ("null", "null:"),
    ("PostgreSQL tcp", "postgres://postgres@127.0.0.1:5432/{db}"),
    ("PostgreSQL socket", "host=/var/run/postgresql port=5432 user=postgres dbname={db}"),
    ("PostgreSQL tls", "postgres://postgres@127.0.0.1:5432/{db}?sslmode=require"),
    ("MariaDB tcp", "mysql://root@127.0.0.1:3306/{db}"),
    ("MariaDB socket", "mysql://root@127.0.0.1:3306/{db}?socket=/run/mysqld/mysqld.sock"),
    # Needs a MariaDB with TLS on (ssl_cert/ssl_key): run only when $IBENCH_TARGETS names it.
    ("MariaDB tls", "mysql://root@127.0.0.1:3306/{db}?ssl-mode=REQUIRED"),
]
ON_REQUEST = {"MariaDB tls"}

WANTED = [w for w in os.environ.get("IBENCH_TARGETS", "").split(",") if w]
TARGETS = [
    t for t in TARGETS
    if any(w in t[0] for w in WANTED) or (not WANTED and t[0] not in ON_REQUEST)
]


SCRATCH = "ib_client_cpu"


def on_server(server: str, sql: str, check: bool = True) -> None:
    """Runs `sql` as the admin on the local `server` (a target label's first word;
    `null` has no server, so nothing runs)."""
    if server == "PostgreSQL":
        subprocess.run(["psql", "-h", "127.0.0.1", "-U", "postgres", "-qc", sql], check=check)
    elif server == "MariaDB":
        subprocess.run(["mariadb", "-h", "127.0.0.1", "-u", "root", "-e", sql], check=check)


def database(label: str) -> str:
    """A fresh scratch database for `label`'s tables (on the server the label names)."""
    server = label.split()[0]
    on_server(server, f"DROP DATABASE IF EXISTS {SCRATCH}")
    on_server(server, f"CREATE DATABASE {SCRATCH}")
    return SCRATCH


# Rows per load step. The kernel charges CPU time in ticks (10 ms here), so a
# load step's per-row figure is good to about 10 ms / rows: $IBENCH_ROWS
# (`l.i2=200000,...`) buys resolution with time.
ROWS = {"l.i0": 200_000, "l.i1": 50_000, "l.i2": 20_000}
for item in filter(None, os.environ.get("IBENCH_ROWS", "").split(",")):
    step, _, n = item.partition("=")
    if step not in ROWS or not n.isdigit():
        sys.exit(f"IBENCH_ROWS: {item!r}: expected l.i0=N, l.i1=N or l.i2=N")
    ROWS[step] = int(n)


def run(binary: str, db: str, steps: list[str], out: str, query_seconds: float) -> list[dict[str, object]]:
    rows_flags = [a for step, n in ROWS.items() for a in (f"--rows-{step.replace('.', '-')}", str(n))]
    args = [binary, "run", "--db", db, "--steps", ",".join(steps), *rows_flags,
            "--query-seconds", str(query_seconds), "--verify", "off", "--out", out, "-q"]
    before = set(Path(out).iterdir())
    subprocess.run(args, check=True, stdout=subprocess.DEVNULL)
    # This run's directory (ids sorted by the second once let a quick null
    # run started in the same second pass for the PostgreSQL run after it).
    (latest,) = set(Path(out).iterdir()) - before
    rows: list[dict[str, object]] = pq.read_table(latest / "steps.parquet").to_pylist()
    # A step that did not finish its rows would read as a cheap client.
    broken = [f"{r['step']}: {r['status']} {r.get('error') or ''}" for r in rows if r["status"] != "ok"]
    if broken:
        sys.exit(f"{binary} on {db}: " + "; ".join(broken))
    return rows


def halt_poll(ns: str | None) -> None:
    """Sets the guest's halt polling (None: leaves it)."""
    if ns is not None:
        HALT_POLL.write_text(ns)


def floor(into: dict[str, list[tuple[float, float]]]) -> None:
    """One measurement of the bare round trip's client CPU (µs: total, kernel)
    per transport, under each halt-polling value when there are several."""
    binary = os.environ.get("ROUNDTRIP_BIN")
    if not binary:
        return
    polls: list[str | None] = [*POLLS] or [None]
    for poll in polls:
        halt_poll(poll)
        done = subprocess.run([binary, "20000", "0"], check=True, capture_output=True, text=True)
        for line in done.stdout.splitlines():
            m = re.match(r"(\w+) .*client CPU +([\d.]+) .*sys +([\d.]+)\)", line)
            if m:
                key = m.group(1) + (f" (poll={poll})" if poll is not None else "")
                into.setdefault(key, []).append((float(m.group(2)), float(m.group(3))))


def main() -> None:
    original = HALT_POLL.read_text().strip() if POLLS and HALT_POLL.exists() else None
    if POLLS and original is None:
        sys.exit(f"IBENCH_HALT_POLL_NS: no {HALT_POLL} (not a KVM guest with the haltpoll module)")
    signal.signal(signal.SIGTERM, lambda *_: sys.exit(143))  # so that `finally` puts it back
    try:
        measure()
    finally:
        halt_poll(original)
        drop_databases()


def drop_databases() -> None:
    """Drops the scratch database on each server a target used, so the servers are left as found."""
    for server in {label.split()[0] for label, _ in TARGETS}:
        on_server(server, f"DROP DATABASE IF EXISTS {SCRATCH}", check=False)


def measure() -> None:
    rounds = int(sys.argv[1]) if len(sys.argv) > 1 else 3
    query_seconds = float(sys.argv[2]) if len(sys.argv) > 2 else 10.0
    floors: dict[str, list[tuple[float, float]]] = {}
    figures: dict[tuple[str, str, str], list[tuple[float, float, float, float]]] = {}
    with tempfile.TemporaryDirectory() as out:
        for label, template in TARGETS:
            db = template.format(db=database(label))
            run(BINS[0][1], db, ["l.i0", "l.x"], out, query_seconds)
        # Rounds alternate the targets and binaries, so drift in the machine hits them alike.
        for _ in range(rounds):
            floor(floors)
            for label, template in TARGETS:
                db = template.format(db=SCRATCH)
                for name, binary, poll in VARIANTS:
                    halt_poll(poll)
                    for row in run(binary, db, STEPS, out, query_seconds):
                        rate = float(row["qps"] if str(row["step"]).startswith("q") else row["ips"])  # type: ignore[arg-type]
                        client = row["client_cpu_us_per_op"]
                        server = row["server_cpu_us_per_op"]
                        ops, sys_s = row.get("cost_ops"), row.get("client_sys_s")
                        kernel = float(sys_s) * 1e6 / float(ops) if ops and sys_s is not None else float("nan")  # type: ignore[arg-type]
                        figures.setdefault((label, str(row["step"]), name), []).append(
                            (float(client or "nan"), kernel, float(server or "nan"), rate)  # type: ignore[arg-type]
                        )
    names = [n for n, _, _ in VARIANTS]
    head = " | ".join(
        f"{n}: client µs/op (median, min–max) | {n}: of which kernel | {n}: of which ibench | {n}: server µs/op "
        f"| {n}: ops/s" for n in names
    )
    ratio = f" | client {names[-1]} / {names[0]} |" if len(names) > 1 else " |"
    print(f"| target | step | {head}{ratio}")
    print("|---|---|" + "---|---|---|---|---|" * len(names) + ("---|" if len(names) > 1 else ""))
    for label, _ in TARGETS:
        for step in STEPS:
            cells, medians = [], []
            for n in names:
                values = figures.get((label, step, n), [])
                if not values:
                    continue
                client = [v[0] for v in values]
                medians.append(statistics.median(client))
                kernel = statistics.median(v[1] for v in values)
                own = statistics.median(v[0] - v[1] for v in values)
                cells.append(
                    f"{medians[-1]:.2f} ({min(client):.2f}–{max(client):.2f}) | {kernel:.2f} | {own:.2f} "
                    f"| {statistics.median(v[2] for v in values):.2f} | {statistics.median(v[3] for v in values):,.0f}"
                )
            if not cells:
                continue
            tail = f" | {medians[-1] / medians[0]:.2f} |" if len(medians) > 1 else " |"
            print(f"| {label} | {step} | " + " | ".join(cells) + tail)
    print("(per op: per query in q steps, per row inserted in load steps)")
    for transport, samples in floors.items():
        total = [v[0] for v in samples]
        print(
            f"the kernel's floor, a bare {transport} round trip: client CPU {statistics.median(total):.2f} µs "
            f"({min(total):.2f}–{max(total):.2f}), of which kernel {statistics.median(v[1] for v in samples):.2f}"
        )


if __name__ == "__main__":
    main()
