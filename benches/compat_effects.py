"""The measured effect of each difference between ibench's default workload and
the reference client's (`compat = "iibench"`), on one server.

For each variant below it runs `ibench run` over the same steps, on fresh
tables (l.i0 recreates them), variants interleaved for `--repeats` rounds, and
prints per step the median rate and server CPU per operation of each variant,
and the ratio default / variant. A variant switches one choice of the bundle
(or all of them: `compat`), so each row of docs/compat.md's table is one
column here.

    python3 benches/compat_effects.py --db postgres://postgres@127.0.0.1:5432/ib_ref \\
        --rows-l-i0 300000 --rows-l-i1 100000 --query-seconds 15 --repeats 2

The server's CPU is ibench's own `server_cpu_us_per_op` (a local server only).
Needs pyarrow.
"""

from __future__ import annotations

import argparse
import os
import statistics
import subprocess
import sys
import tempfile
from pathlib import Path

import pyarrow.parquet as pq

VARIANTS: dict[str, list[str]] = {
    "default": [],
    "server_keys": ["--server-keys"],
    "literal": ["--statements", "literal"],
    "data": ["--data", "iibench"],
    "lx_rows": ["--lx-rows", "100"],
    "compat": ["--compat", "iibench"],
}
"""Variant name → the `ibench run` flags it adds to the default."""


def run_variant(ibench: str, args: argparse.Namespace, flags: list[str], out: Path) -> dict[str, tuple[float, float]]:
    """Runs the steps once; step → (rate, server CPU µs per operation)."""
    argv = [
        ibench, "run", "--db", args.db, "--steps", args.steps, "--out", str(out), "--quiet",
        "--rows-l-i0", str(args.rows_l_i0), "--rows-l-i1", str(args.rows_l_i1),
        "--query-seconds", str(args.query_seconds), "--verify", "off", *flags,
    ]
    subprocess.run(argv, check=True, stdout=subprocess.DEVNULL)
    run_dir = next(d for d in out.iterdir() if (d / "steps.parquet").is_file())
    steps = pq.read_table(run_dir / "steps.parquet").to_pylist()
    measured = {}
    for s in steps:
        rate = s["qps"] if s["step"].startswith("q") else s["ips"]
        if s["step"] == "l.x":
            rate = 1.0 / s["elapsed_s"]  # indexes built per second: only the ratio is read
        measured[s["step"]] = (rate, s["server_cpu_us_per_op"] or float("nan"))
    return measured


def main(argv: list[str]) -> None:
    p = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    p.add_argument("--db", required=True)
    p.add_argument("--steps", default="l.i0,l.x,l.i1,qr100,qp100")
    p.add_argument("--rows-l-i0", type=int, default=300_000)
    p.add_argument("--rows-l-i1", type=int, default=100_000)
    p.add_argument("--query-seconds", type=float, default=15)
    p.add_argument("--repeats", type=int, default=2)
    p.add_argument("--variants", default=",".join(VARIANTS), help="comma-separated, of " + ", ".join(VARIANTS))
    p.add_argument("--ibench-bin", default=os.environ.get("IBENCH_BIN", "ibench"))
    args = p.parse_args(argv)
    variants = args.variants.split(",")
    if "default" not in variants:
        variants.insert(0, "default")
    unknown = [v for v in variants if v not in VARIANTS]
    if unknown:
        p.error(f"--variants: unknown {unknown}; known: {list(VARIANTS)}")
    figures: dict[str, dict[str, list[tuple[float, float]]]] = {v: {} for v in variants}
    with tempfile.TemporaryDirectory() as work:
        for r in range(args.repeats):
            for v in variants:
                out = Path(work) / f"{v}-{r}"
                for step, m in run_variant(args.ibench_bin, args, VARIANTS[v], out).items():
                    figures[v].setdefault(step, []).append(m)
                print(f"round {r + 1}: {v} done", file=sys.stderr)
    steps = args.steps.split(",")
    median = lambda xs: statistics.median(xs) if xs else float("nan")  # noqa: E731
    print(f"{args.db}: l.i0 {args.rows_l_i0} rows, l.i1 {args.rows_l_i1}, q steps {args.query_seconds} s, "
          f"medians of {args.repeats}; rates: rows/s (l.x: 1/seconds), queries/s\n")
    print("| step | figure | " + " | ".join(variants) + " | " + " | ".join(f"default/{v}" for v in variants[1:]) + " |")
    print("|---" * (2 + 2 * len(variants) - 1) + "|")
    for step in steps:
        for i, name in ((0, "rate"), (1, "server µs/op")):
            vals = [median([m[i] for m in figures[v].get(step, [])]) for v in variants]
            if step == "l.x" and i == 1:
                continue
            cells = [f"{x:,.0f}" if i == 0 and step != "l.x" else f"{x:.3g}" for x in vals]
            ratios = [f"{vals[0] / x:.2f}" if x else "-" for x in vals[1:]]
            print(f"| {step} | {name} | " + " | ".join(cells) + " | " + " | ".join(ratios) + " |")


if __name__ == "__main__":
    main(sys.argv[1:])
