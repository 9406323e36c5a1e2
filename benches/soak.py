"""What a run at the published scale costs the client: memory over time,
result files, and the report. The null connector with injected latency
stands in for the server, so the figures are ibench's alone.

    python3 benches/soak.py [--clients 12] [--rows 10000000] [--seconds 1800] [--runs 8]
                            [--time real|simulated] [--others simulated|real]

One run of l.i0 (``--rows`` per client) then qr1000 for ``--seconds``,
``--clients`` clients, against ``null:?latency=exp:1ms`` (each commit and
query 1 ms on average): its process's resident memory is sampled every 5 s
and printed over time, and its run directory's size. Then ``--runs`` such
runs (the first is reused) go into one folder, and ``ibench report`` of all
of them is timed and its HTML measured; the report's chart of an 1800-s
step is written as a PNG beside it, to look at.

``--time simulated`` runs the null connector on simulated time
(``time=simulated``): the same operations, intervals and histograms in
minutes instead of half an hour per run (the host's own per-interval rows,
sampled on real time, are then fewer). The first run, whose memory is
watched, is on ``--time`` (real by default); the others, which give the
report its size, on ``--others`` (simulated by default).

Targets (issue 42): memory growth ≤ 50 MB over the 1800-s step, result
files ≤ 50 MB per run, the report of 8 runs in ≤ 60 s and ≤ 20 MB.
"""

from __future__ import annotations

import argparse
import subprocess
import sys
import tempfile
import time
from pathlib import Path


def rss_mb(pid: int) -> float | None:
    try:
        for line in Path(f"/proc/{pid}/status").read_text().splitlines():
            if line.startswith("VmRSS:"):
                return int(line.split()[1]) / 1024
    except OSError:
        return None
    return None


def dir_mb(path: Path) -> float:
    return sum(f.stat().st_size for f in path.rglob("*") if f.is_file()) / 1e6


def one_run(
    out: Path, args: argparse.Namespace, label: str, watch: bool, clock: str
) -> tuple[Path, list[tuple[float, str, float]]]:
    """One soak run under ``out`` on ``clock`` (real or simulated time);
    with ``watch``, its memory every 5 s as (seconds, step, MB)."""
    db = "null:?latency=exp:1ms" + ("&time=simulated" if clock == "simulated" else "")
    cmd = [
        sys.executable, "-m", "ibench", "run", "--db", db, "--clients", str(args.clients),
        "--steps", "l.i0,qr1000", "--rows-l-i0", str(args.rows), "--query-seconds", str(args.seconds),
        "--label", label, "--out", str(out), "--progress-seconds", "60",
    ]
    log = (out / f"{label}.log").open("w")
    proc = subprocess.Popen(cmd, stdout=log, stderr=subprocess.STDOUT)
    samples: list[tuple[float, str, float]] = []
    start = time.monotonic()
    while proc.poll() is None:
        if watch:
            mb = rss_mb(proc.pid)
            step = "qr1000" if any(out.glob("*/.partial/qr1000")) or _finished(out, "l.i0") else "l.i0"
            if mb is not None:
                samples.append((time.monotonic() - start, step, mb))
        time.sleep(5)
    if proc.returncode != 0:
        raise SystemExit(f"{label}: ibench run failed; see {out / (label + '.log')}")
    run = max(d for d in out.iterdir() if (d / "runs.parquet").is_file() and d.name not in _seen)
    _seen.add(run.name)
    return run, samples


_seen: set[str] = set()


def _finished(out: Path, step: str) -> bool:
    import pyarrow.parquet as pq

    for d in out.iterdir():
        f = d / "steps.parquet"
        if f.is_file() and d.name not in _seen and step in pq.read_table(f, columns=["step"]).column(0).to_pylist():
            return True
    return False


def main() -> None:
    p = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    p.add_argument("--clients", type=int, default=12)
    p.add_argument("--rows", type=int, default=10_000_000)
    p.add_argument("--seconds", type=float, default=1800)
    p.add_argument("--runs", type=int, default=8)
    p.add_argument("--time", choices=["real", "simulated"], default="real")
    p.add_argument("--others", choices=["real", "simulated"], default="simulated")
    p.add_argument("--out", type=Path, default=None, help="keep the runs here (default: a temporary folder)")
    args = p.parse_args()
    out = args.out or Path(tempfile.mkdtemp(prefix="ibench-soak-"))
    out.mkdir(parents=True, exist_ok=True)
    print(f"soak: {args.clients} clients, l.i0 {args.rows:,} rows each, qr1000 {args.seconds:.0f} s, {args.time} time -> {out}")
    first, samples = one_run(out, args, "soak-1", watch=True, clock=args.time)
    print("\nclient memory (VmRSS) over time:\n\n| s | step | MB |\n|---:|---|---:|")
    every = max(1, len(samples) // 40)
    for t, step, mb in samples[::every] + samples[-1:]:
        print(f"| {t:.0f} | {step} | {mb:.1f} |")
    q = [mb for _, step, mb in samples if step == "qr1000"]
    if q:
        print(f"\nqr1000: {q[0]:.1f} MB at its start, {max(q):.1f} MB at most, {q[-1]:.1f} MB at its end: growth {max(q) - q[0]:.1f} MB (target ≤ 50)")
    print(f"result files of the run: {dir_mb(first):.1f} MB (target ≤ 50)")
    for i in range(2, args.runs + 1):
        one_run(out, args, f"soak-{i}", watch=False, clock=args.others)
    runs = sorted(d for d in out.iterdir() if (d / "runs.parquet").is_file())
    report = out / "report.html"
    started = time.monotonic()
    subprocess.run([sys.executable, "-m", "ibench", "report", *map(str, runs), "-o", str(report)], check=True)
    took = time.monotonic() - started
    print(f"report of {len(runs)} runs: {took:.1f} s (target ≤ 60), {report.stat().st_size / 1e6:.1f} MB (target ≤ 20)")
    from ibench import load, plots

    fig = plots.compare_over_time([load(r) for r in runs[:2]], "qr1000", "insert")
    fig.savefig(out / "qr1000-insert.png", dpi=72)
    print(f"chart of qr1000 (2 runs): {out / 'qr1000-insert.png'}")
    if args.out is None:
        print(f"(the runs stay in {out} until removed)")


if __name__ == "__main__":
    main()
