"""ibench's own instructions per operation, per server and step, counted by
callgrind: unlike CPU time (benches/client_cpu.py), an instruction count
does not move with the host's load, the vCPU's wake-ups or the kernel's
tick-sampled split of user and system time, so two builds or two servers
compare on a noisy machine. The null connector runs the same steps with no
database beside them: what the harness itself costs per operation.

Counts are the inclusive instructions of the step's worker threads
(`Worker::run`: generating rows and queries, the driver's encoding and
decoding, recording latencies) divided by the step's operations (queries,
or rows in load steps). System calls are not counted (their kernel side
is the kernel's). Callgrind runs the client about 50x slower, so the
figures are for a client that keeps the server waiting: per-step set-up
(the recorder's histograms) is spread over fewer operations than in a run
at full speed, which makes load steps read a few hundred instructions high.

    python3 benches/client_instructions.py [QUERY_SECONDS] [TOP]

Needs valgrind (installed when missing). The binary is $IBENCH_BIN, or
`ibench` on PATH; $IBENCH_BINS (`before=PATH,after=PATH`) compares builds
side by side. $IBENCH_TARGETS (comma-separated words) keeps the targets
whose label holds one of them; $IBENCH_STEPS the steps. TOP > 0 also prints each run's TOP
functions by their own (exclusive) instructions: the profile.
"""

from __future__ import annotations

import os
import re
import shutil
import subprocess
import sys
import tempfile
from pathlib import Path

import pyarrow.parquet as pq

# The binaries ($IBENCH_BINS) and the fresh databases are client_cpu.py's.
from client_cpu import BINS, SCRATCH, WANTED, database, on_server

# $IBENCH_STEPS (as client_cpu.py's) keeps some of the steps.
STEPS = [s for s in os.environ.get("IBENCH_STEPS", "l.i1,l.i2,qr100,qp100").split(",") if s]
TARGETS = [
    ("null", "null:"),
    ("PostgreSQL", "postgres://postgres@127.0.0.1:5432/{db}"),
    ("MariaDB", "mysql://root@127.0.0.1:3306/{db}"),
]
TARGETS = [t for t in TARGETS if not WANTED or any(w in t[0] for w in WANTED)]


def valgrind() -> None:
    if shutil.which("valgrind"):
        return
    sudo = [] if os.geteuid() == 0 else ["sudo"]
    subprocess.run(sudo + ["apt-get", "install", "-y", "-qq", "valgrind"], check=True,
                   env={**os.environ, "DEBIAN_FRONTEND": "noninteractive"})


def annotate(out: Path, inclusive: bool) -> list[tuple[int, str]]:
    """callgrind_annotate's function lines: (instructions, function)."""
    args = ["callgrind_annotate", f"--inclusive={'yes' if inclusive else 'no'}", str(out)]
    text = subprocess.run(args, check=True, capture_output=True, text=True).stdout
    lines = []
    for line in text.splitlines():
        m = re.match(r"\s*([\d,]+) \([\s\d.]+%\)\s+(.*)", line)
        if m and "PROGRAM TOTALS" not in line:
            function = re.sub(r" \[[^\]]*\]$", "", m.group(2)).removeprefix("???:")
            lines.append((int(m.group(1).replace(",", "")), function))
    return lines


def measure(binary: str, dsn: str, step: str, query_seconds: float, work: Path, top: int) -> tuple[float, list[str]]:
    """Instructions per operation of `step`, and the profile's top entries."""
    out, results = work / "callgrind.out", work / "results"
    shutil.rmtree(results, ignore_errors=True)
    # Only the step's worker threads are counted (and profiled): not start-up, nor writing the results.
    subprocess.run(["valgrind", "--tool=callgrind", "--toggle-collect=*Worker*>::run", f"--callgrind-out-file={out}",
                    binary, "run", "--db", dsn,
                    "--steps", step, "--rows-l-i1", "10000", "--rows-l-i2", "5000", "--query-seconds",
                    str(query_seconds), "--verify", "off", "--out", str(results), "-q"],
                   check=True, stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL)
    run = sorted(results.iterdir())[-1]
    row = next(r for r in pq.read_table(run / "steps.parquet").to_pylist() if r["step"] == step)
    ops = float(row["cost_ops"])
    # `Worker<SystemClock>::run` since the clock seam (`Worker::run` before it).
    worker = next(n for n, f in annotate(out, True) if re.search(r"Worker(<[^>]*>)?>::run$", f))
    profile = [f"{n / ops:8,.0f}  {f[:110]}" for n, f in annotate(out, False)[:top]]
    return worker / ops, profile


def run_targets(work: Path, query_seconds: float, top: int) -> tuple[list[tuple[str, str, list[float]]], list[str]]:
    """Each target's steps with each binary: (label, step, instructions per op per binary), and the profiles."""
    rows, profiles = [], []
    for label, template in TARGETS:
        dsn = template.format(db=database(label))
        subprocess.run([BINS[0][1], "run", "--db", dsn, "--steps", "l.i0,l.x", "--rows-l-i0", "200000",
                        "--verify", "off", "--out", str(work / "load"), "-q"],
                       check=True, stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL)
        for step in STEPS:
            cells = []
            for name, binary in BINS:
                per_op, profile = measure(binary, dsn, step, query_seconds, work, top)
                cells.append(per_op)
                if profile:
                    profiles.append(f"{label} {step} ({name}), top functions by their own instructions per op:\n" + "\n".join(profile))
            rows.append((label, step, cells))
    return rows, profiles


def main() -> None:
    query_seconds = float(sys.argv[1]) if len(sys.argv) > 1 else 5.0
    top = int(sys.argv[2]) if len(sys.argv) > 2 else 0
    valgrind()
    names = [n for n, _ in BINS]
    with tempfile.TemporaryDirectory() as tmp:
        try:
            rows, profiles = run_targets(Path(tmp), query_seconds, top)
        finally:
            for server in {label.split()[0] for label, _ in TARGETS}:
                on_server(server, f"DROP DATABASE IF EXISTS {SCRATCH}", check=False)
    ratio = f" | {names[-1]} / {names[0]}" if len(names) > 1 else ""
    print("| target | step | " + " | ".join(f"{n}: instructions per op" for n in names) + ratio + " |")
    print("|---|---|" + "---:|" * (len(names) + (len(names) > 1)))
    for label, step, cells in rows:
        tail = f" | {cells[-1] / cells[0]:.2f}" if len(cells) > 1 else ""
        print(f"| {label} | {step} | " + " | ".join(f"{c:,.0f}" for c in cells) + tail + " |")
    print("(per op: per query in q steps, per row inserted in load steps)")
    for p in profiles:
        print("\n" + p)


if __name__ == "__main__":
    main()
