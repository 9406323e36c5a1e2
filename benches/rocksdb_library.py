"""The cost of loading RocksDB as a library: the embedded engine against the
same release loaded at run time, in paired, alternating rounds.

    python3 benches/rocksdb_library.py --lib /opt/rocksdb/11.8.1/librocksdb.so
        [--rounds 10] [--num 1000000] [--dir /dev/shm] [--ibench-bin PATH] [--out FILE.md]

Each round runs fillseq, readrandom, overwrite and multireadrandom once on
embedded RocksDB (`rocksdb:DIR`) and once through `--lib` (`rocksdb:DIR?lib=...`),
each run a fresh ibench process on a fresh directory with the same seed and
options, the order alternating (AB, BA, ...). It prints, per step, the
ratio library/embedded of the rate (ips or qps) and of the CPU µs of the
ibench process per operation, as the geometric mean of the rounds' ratios
with its 95% interval. The library must hold the embedded release (the
script checks the versions the runs record): build it with
`scripts/rocksdb-build 11.8.1`. Target (issue 47): within 2%, or the interval
includes 1.0 and is narrower than 4%.
"""

from __future__ import annotations

import argparse
import shutil
import subprocess
import sys
import tempfile
from pathlib import Path
from typing import Any

import ibench
import ibench.stats

STEPS = ["fillseq", "readrandom", "overwrite", "multireadrandom"]
READS = {"readrandom", "multireadrandom"}


def one_run(binary: str, db: str, args: argparse.Namespace, seed: int, out: Path) -> dict[str, Any]:
    """One ibench process running STEPS on `db`; per step its rate and CPU per op."""
    run_dir = Path(tempfile.mkdtemp(dir=out, prefix="run-"))
    flags = {
        "db": db, "steps": ",".join(STEPS), "num": args.num, "reads": args.num // 2,
        "writes": args.num // 2, "threads": 1, "batch_size": 1, "seed": seed, "verify": "off",
        "value_size": 100, "key_size": 16,
    }
    argv = [binary, "run", *(f"--{k.replace('_', '-')}={v}" for k, v in flags.items()),
            f"--out={run_dir}", "--quiet"]
    subprocess.run(argv, check=True, capture_output=True, text=True)
    r = ibench.load(run_dir)
    steps = r.steps.set_index("step")
    result: dict[str, Any] = {"version": str(r.runs["dbms_version"].iloc[0])}
    for step in STEPS:
        s = steps.loc[step]
        result[step] = (float(s["qps" if step in READS else "ips"]), float(s["client_cpu_us_per_op"]))
    shutil.rmtree(run_dir, ignore_errors=True)
    return result


def mean(xs: list[float]) -> float:
    return sum(xs) / len(xs)


def main() -> int:
    p = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    p.add_argument("--lib", required=True, help="the shared library of the embedded release")
    p.add_argument("--rounds", type=int, default=10)
    p.add_argument("--num", type=int, default=1_000_000)
    p.add_argument("--dir", default="/dev/shm", help="where the databases go")
    p.add_argument("--ibench-bin", default=shutil.which("ibench") or "ibench")
    p.add_argument("--out", help="also write the table to this Markdown file")
    args = p.parse_args()
    work = Path(tempfile.mkdtemp(dir=args.dir, prefix="ibench-lib-"))
    runs: dict[str, list[dict[str, Any]]] = {"embedded": [], "library": []}
    try:
        for i in range(args.rounds):
            order = ["embedded", "library"] if i % 2 == 0 else ["library", "embedded"]
            for way in order:
                db = work / f"db-{way}"
                shutil.rmtree(db, ignore_errors=True)
                dsn = f"rocksdb:{db}" + (f"?lib={args.lib}" if way == "library" else "")
                runs[way].append(one_run(args.ibench_bin, dsn, args, seed=1000 + i, out=work))
            print(f"round {i + 1}/{args.rounds}: " + ", ".join(
                f"{s} {runs['library'][-1][s][0] / runs['embedded'][-1][s][0]:.3f}" for s in STEPS),
                file=sys.stderr)
    finally:
        shutil.rmtree(work, ignore_errors=True)
    versions = {way: {r["version"] for r in rs} for way, rs in runs.items()}
    lines = [
        f"Embedded RocksDB {', '.join(sorted(versions['embedded']))} against `{args.lib}` "
        f"(RocksDB {', '.join(sorted(versions['library']))}), {args.rounds} paired rounds, "
        f"{args.num:,} keys, 1 thread, batch 1:",
        "",
        "| step | rate embedded | rate library | rate library/embedded (95%) | CPU µs/op embedded "
        "| CPU µs/op library | CPU library/embedded (95%) | target |",
        "|---|---|---|---|---|---|---|---|",
    ]
    for step in STEPS:
        e = [r[step] for r in runs["embedded"]]
        lib = [r[step] for r in runs["library"]]
        rate = ibench.stats.ratio_of_pairs([x[0] for x in e], [x[0] for x in lib])  # library / embedded
        cpu = ibench.stats.ratio_of_pairs([x[1] for x in e], [x[1] for x in lib])
        met = all(abs(r.estimate - 1) <= 0.02 or (r.low <= 1 <= r.high and r.high - r.low < 0.04)
                  for r in (rate, cpu))
        lines.append(
            f"| {step} | {mean([x[0] for x in e]):,.0f} | {mean([x[0] for x in lib]):,.0f} | "
            f"{ibench.stats.format_interval(rate.estimate, rate.low, rate.high)} | "
            f"{mean([x[1] for x in e]):.2f} | {mean([x[1] for x in lib]):.2f} | "
            f"{ibench.stats.format_interval(cpu.estimate, cpu.low, cpu.high)} | {'✓' if met else '✗'} |")
    text = "\n".join(lines)
    print(text)
    if args.out:
        Path(args.out).write_text(text + "\n")
    return 0 if versions["embedded"] == versions["library"] else 1


if __name__ == "__main__":
    sys.exit(main())
