#!/usr/bin/env python3
"""How much of a thread's CPU perf's timer-based samples see.

Runs three single-threaded workloads under ``perf record -e cpu-clock`` and
compares what the samples stand for (the sum of their periods) with the
thread's scheduler runtime over exactly the sampled span
(``/proc/<pid>/schedstat``, read by perf's own workload command, so both
cover the same interval):

- ``compute``: a loop that never leaves user space;
- ``bursty``: 300 µs bursts with 200 µs sleeps (many context switches, no I/O);
- ``fdatasync``: an 8 KiB ``pwrite`` and ``fdatasync`` per 200 µs burst, a
  database's commit in miniature.

It is the measurement behind docs/profiling.md's "Where a profile's samples
add up", and behind ibench's profiles sharing each thread's measured CPU out
over its samples (exec/profiling.rs). Usage::

    python3 benches/perf_clock_coverage.py [--rounds 3] [--frequency 999 ...]
"""

from __future__ import annotations

import argparse
import os
import statistics
import subprocess
import sys
import tempfile
import time
from pathlib import Path

WORKLOADS = {
    "compute": """
import time
end = time.time() + {seconds}
x = 0
while time.time() < end:
    x += 1
""",
    "bursty": """
import time
end = time.time() + {seconds}
while time.time() < end:
    t = time.perf_counter()
    while time.perf_counter() - t < 0.0003:
        pass
    time.sleep(0.0002)
""",
    "fdatasync": """
import os, time
fd = os.open({path!r}, os.O_WRONLY | os.O_CREAT)
end = time.time() + {seconds}
while time.time() < end:
    os.pwrite(fd, b"x" * 8192, 0)
    os.fdatasync(fd)
    t = time.perf_counter()
    while time.perf_counter() - t < 0.0002:
        pass
""",
}


def runtime_ns(pid: int) -> int:
    return int(Path(f"/proc/{pid}/schedstat").read_text().split()[0])


def measure(workload: str, frequency: int, span: float, work: Path) -> tuple[float, float]:
    """(seconds the samples stand for, scheduler seconds) over one span."""
    code = WORKLOADS[workload].format(seconds=span + 3, path=str(work / "sync.dat"))
    proc = subprocess.Popen([sys.executable, "-c", code])
    try:
        time.sleep(0.3)
        a, b, data = work / "a", work / "b", work / "perf.data"
        marks = f"cut -d' ' -f1 /proc/{proc.pid}/schedstat"
        subprocess.run(
            ["perf", "record", "-q", "-e", "cpu-clock", "-F", str(frequency), "-p", str(proc.pid), "-o", str(data),
             "--", "sh", "-c", f"{marks} > {a}; sleep {span}; {marks} > {b}"],
            check=True, stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL,
        )
        scheduled = (int(b.read_text()) - int(a.read_text())) / 1e9
        periods = subprocess.run(
            ["perf", "script", "-i", str(data), "-F", "period"], check=True, capture_output=True, text=True
        ).stdout.split()
        return sum(int(p) for p in periods) / 1e9, scheduled
    finally:
        proc.wait()


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("--rounds", type=int, default=3)
    ap.add_argument("--span", type=float, default=5.0, help="seconds sampled per measurement")
    ap.add_argument("--frequency", type=int, nargs="+", default=[999])
    args = ap.parse_args()
    if os.geteuid() != 0 and Path("/proc/sys/kernel/perf_event_paranoid").read_text().strip() not in ("-1", "0"):
        sys.exit("perf_clock_coverage: needs root or kernel.perf_event_paranoid <= 0")
    print("| workload | Hz | sampled s | scheduled s | sampled ÷ scheduled (each round) |")
    print("|---|---|---|---|---|")
    with tempfile.TemporaryDirectory() as tmp:
        for hz in args.frequency:
            for workload in WORKLOADS:
                runs = [measure(workload, hz, args.span, Path(tmp)) for _ in range(args.rounds)]
                ratios = ", ".join(f"{s / t:.3f}" for s, t in runs)
                sampled = statistics.mean(s for s, _ in runs)
                scheduled = statistics.mean(t for _, t in runs)
                print(f"| {workload} | {hz} | {sampled:.3f} | {scheduled:.3f} | {ratios} |", flush=True)


if __name__ == "__main__":
    main()
