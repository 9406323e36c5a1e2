"""Client and server CPU per million rows for l.i0 and l.i1, with throughput.

Runs `ibench run` (the binary in $IBENCH_BIN, or `ibench` on PATH) against
PostgreSQL and MariaDB (InnoDB) on this host, one step per invocation, and
reads the client's CPU from its rusage and the server's from /proc (all
`postgres` processes; `mariadbd`).

    python3 benches/server_cpu.py [ROWS_L_I0] [ROWS_L_I1]
"""

from __future__ import annotations

import os
import resource
import subprocess
import sys
import tempfile
from pathlib import Path

import pyarrow.parquet as pq

TICK = os.sysconf("SC_CLK_TCK")
BIN = os.environ.get("IBENCH_BIN", "ibench")
SERVERS = [
    ("PostgreSQL", "postgres://postgres@127.0.0.1:5432/postgres", "postgres"),
    ("MariaDB InnoDB", "mysql://root@127.0.0.1:3306/test?engine=innodb", "mariadbd"),
]


def server_cpu(comm: str) -> float:
    """CPU seconds (user + system) of every process named `comm`, children included."""
    total = 0
    for stat in Path("/proc").glob("[0-9]*/stat"):
        try:
            text = stat.read_text()
        except OSError:
            continue
        name = text[text.index("(") + 1 : text.rindex(")")]
        if name == comm:
            fields = text[text.rindex(")") + 2 :].split()
            total += sum(int(f) for f in fields[11:15])  # utime stime cutime cstime
    return total / TICK


def step(db: str, comm: str, name: str, rows_i0: int, rows_i1: int, out: str) -> tuple[float, float, float]:
    before = resource.getrusage(resource.RUSAGE_CHILDREN)
    server = server_cpu(comm)
    args = [BIN, "run", "--db", db, "--steps", name, "--rows-l-i0", str(rows_i0), "--rows-l-i1", str(rows_i1)]
    existing = set(Path(out).iterdir())
    subprocess.run(args + ["--out", out, "-q"], check=True, stdout=subprocess.DEVNULL)
    after = resource.getrusage(resource.RUSAGE_CHILDREN)
    client = (after.ru_utime - before.ru_utime) + (after.ru_stime - before.ru_stime)
    (run_dir,) = set(Path(out).iterdir()) - existing  # this run's own directory
    steps = pq.read_table(run_dir / "steps.parquet").to_pandas()
    return float(steps["ips"].iloc[0]), client, server_cpu(comm) - server


def main() -> None:
    rows_i0 = int(sys.argv[1]) if len(sys.argv) > 1 else 1_000_000
    rows_i1 = int(sys.argv[2]) if len(sys.argv) > 2 else 200_000
    print("| server | step | rows | inserts/s | client CPU s per 10^6 rows | server CPU s per 10^6 rows | client/server |")
    print("|---|---|---|---|---|---|---|")
    for label, db, comm in SERVERS:
        with tempfile.TemporaryDirectory() as out:
            for name, rows in (("l.i0", rows_i0), ("l.i1", rows_i1)):
                ips, client, server = step(db, comm, name, rows_i0, rows_i1, out)
                per = 1e6 / rows
                print(
                    f"| {label} | {name} | {rows} | {ips:,.0f} | {client * per:.2f} | {server * per:.2f} "
                    f"| {client / server:.2f} |"
                )


if __name__ == "__main__":
    main()
