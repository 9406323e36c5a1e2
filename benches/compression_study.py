"""The seeds' RocksDB compression study at a scale this machine can run.

    python3 benches/compression_study.py [--num 2000000] [--duration 60] [--out docs/compression-study.md]

Runs the `universal-compression` preset (fillseq -> overwritesome ->
waitforcompaction -> overwriteandwait, 400-byte values compressible to 0.5)
on embedded RocksDB with universal compaction, once per configuration, and
prints (or writes) the tables the published report shows: ips, stall%,
w_amp, compaction wall and CPU seconds, size, for fillseq and
overwriteandwait. Needs the package installed from this checkout
(`pip install .`, which includes RocksDB).
"""

from __future__ import annotations

import argparse
import os
import platform
import tempfile
import time
from pathlib import Path

import ibench

CONFIGS = {
    # name: DSN options (the seeds' names: m1.* compress every sorted run).
    "m1.none": "compression=none",
    "m1.lz4": "compression=lz4",
    "m1.zstd": "compression=zstd",
    "m1.lz": "compression=lz4&bottommost_compression=zstd",
    "nnz": "compression=none&bottommost_compression=zstd",
}
COMMON = "compaction_style=universal&subcompactions=2"


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--num", type=int, default=2_000_000, help="keys (default 2,000,000)")
    parser.add_argument("--duration", type=float, default=60.0, help="seconds of overwriteandwait (default 60)")
    parser.add_argument("--out", type=Path, help="write the Markdown here instead of printing it")
    parser.add_argument("--results", type=Path, default=Path("ibench-results/compression-study"))
    args = parser.parse_args()

    runs = []
    for name, options in CONFIGS.items():
        with tempfile.TemporaryDirectory() as tmp:
            started = time.time()
            runs.append(
                ibench.run(
                    db=f"rocksdb:{tmp}/db?{COMMON}&{options}",
                    preset="universal-compression",
                    num=args.num,
                    duration=args.duration,
                    label=name,
                    out=args.results,
                    progress=False,
                )
            )
            print(f"{name}: {time.time() - started:.0f} s", flush=True)

    lines = [
        "# Compression with universal compaction: a small-scale reproduction",
        "",
        "Produced by `python3 benches/compression_study.py"
        + (f" --num {args.num}" if args.num != 2_000_000 else "")
        + (f" --duration {args.duration:g}" if args.duration != 60 else "")
        + "` on "
        + f"{platform.node()} ({_cpu()}, {_cores()} cores).",
        "",
        f"Each configuration: `{COMMON}` plus its compression options, then the",
        f"`universal-compression` preset: fillseq of {args.num:,} keys (16-byte keys,",
        "400-byte values compressible to 0.5, one pair per write, WAL on, no fsync),",
        "overwritesome (10% of the keys), waitforcompaction, overwriteandwait",
        f"({args.duration:g} s of overwrites, then wait for compaction).",
        "",
        "Columns as in the seeds' report: ips (inserts/s), stall% (time writers",
        "waited on write stalls), w_amp ((flush + compaction bytes written) / user",
        "bytes written; the WAL apart), c_wsecs / c_csecs (compaction wall / CPU",
        "seconds, of compactions that finished in the step), sizeGB (live SST files",
        "after the step, 10^9 bytes), runGB (the largest sorted run: the seeds' size",
        "for overwriteandwait, where universal compaction's total size varies too much),",
        "sorted_runs (L0 files plus non-empty levels).",
        "",
    ]
    fill = ibench.tables.engine(runs, "fillseq").frame
    last = ibench.tables.engine(runs, "overwriteandwait").frame
    base = fill.index[0]
    lines += ["Relative to " + base + ":", ""]
    for name in fill.index[1:]:
        lines.append(
            f"- {name}: fillseq size {fill.loc[name, 'sizeGB'] / fill.loc[base, 'sizeGB']:.2f}x, "
            f"compaction CPU {fill.loc[name, 'c_csecs'] / fill.loc[base, 'c_csecs']:.2f}x, "
            f"ips {fill.loc[name, 'ips'] / fill.loc[base, 'ips']:.2f}x; "
            f"overwriteandwait largest run {last.loc[name, 'runGB'] / last.loc[base, 'runGB']:.2f}x, "
            f"compaction CPU {last.loc[name, 'c_csecs'] / last.loc[base, 'c_csecs']:.2f}x, "
            f"w_amp {last.loc[name, 'w_amp']:.2f} vs {last.loc[base, 'w_amp']:.2f}"
        )
    lines.append("")
    for step in ("fillseq", "overwriteandwait"):
        lines += [ibench.tables.engine(runs, step).to_markdown(), ""]
    lines += ["Every step, every configuration:", "", ibench.tables.engine(runs).to_markdown(), ""]
    text = "\n".join(lines)
    if args.out:
        args.out.write_text(text)
        print(f"wrote {args.out}")
    else:
        print(text)


def _cpu() -> str:
    for line in Path("/proc/cpuinfo").read_text().splitlines():
        if line.startswith("model name"):
            return line.split(":", 1)[1].strip()
    return platform.processor() or "unknown CPU"


def _cores() -> int:
    return os.cpu_count() or 1


if __name__ == "__main__":
    main()
