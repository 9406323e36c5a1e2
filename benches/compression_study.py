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

if False:  # typing only
    import pandas as pd

CONFIGS = {
    # The seeds' ten configurations: m1/80/90 is universal_compression_size_percent
    # (-1: every sorted run compressed alike; 80/90: the oldest 80%/90% of
    # the data compressed); then compression of the newer runs and of the
    # largest (bottommost) run.
    "m1.none": "compression_size_percent=-1&compression=none",
    "m1.lz4": "compression_size_percent=-1&compression=lz4",
    "m1.zstd": "compression_size_percent=-1&compression=zstd",
    "m1.lz": "compression_size_percent=-1&compression=lz4&bottommost_compression=zstd",
    "80.none": "compression_size_percent=80&compression=none",
    "80.lz4": "compression_size_percent=80&compression=lz4",
    "80.zstd": "compression_size_percent=80&compression=zstd",
    "90.nnl": "compression_size_percent=90&compression=none&bottommost_compression=lz4",
    "90.nnz": "compression_size_percent=90&compression=none&bottommost_compression=zstd",
    "90.nlz": "compression_size_percent=90&compression=lz4&bottommost_compression=zstd",
}
COMMON = "compaction_style=universal&subcompactions=2"

# benchmark.sh's step definitions: each step opens the database with the
# options the helper script gives it (db_bench flags in docs/kv.md).
FILLSEQ = "wal=off&memtable_factory=vector&allow_concurrent_memtable_write=false"  # --disable_wal=1 --memtablerep=vector --allow_concurrent_memtable_write=false
OVERWRITE = "wal=on&sync=off"  # --disable_wal=0 --sync=0
LATER_STEPS = ["overwritesome", "waitforcompaction", "overwriteandwait"]

# The seed's tables (m1/80/90 configurations, its server): fillseq and overwriteandwait.
SEED = {
    "fillseq": {
        "m1.none": (1124117, 44.0, 2.0, 71, 39.9), "m1.lz4": (834739, 57.8, 1.1, 105, 21.9),
        "m1.zstd": (401282, 78.2, 0.9, 236, 18.0), "m1.lz": (818534, 57.8, 1.1, 108, 21.9),
        "80.none": (995011, 50.2, 2.0, 70, 39.9), "80.lz4": (820899, 57.8, 1.1, 103, 21.9),
        "80.zstd": (399171, 78.2, 0.9, 236, 18.0), "90.nnl": (1010723, 49.3, 2.0, 77, 39.9),
        "90.nnz": (1010318, 49.1, 2.0, 77, 39.9), "90.nlz": (808058, 58.5, 1.1, 109, 21.9),
    },
    "overwriteandwait": {
        "m1.none": (307477, 0.6, 6.9, 1232, 40.0), "m1.lz4": (312220, 0.1, 3.7, 1915, 21.6),
        "m1.zstd": (300634, 2.2, 3.1, 5307, 17.8), "m1.lz": (312476, 0.1, 3.8, 3549, 17.8),
        "80.none": (307114, 0.5, 6.9, 1219, 40.0), "80.lz4": (308854, 0.1, 5.9, 1620, 21.6),
        "80.zstd": (310717, 0.1, 5.6, 2656, 17.8), "90.nnl": (307881, 0.4, 6.9, 1900, 21.6),
        "90.nnz": (310731, 0.2, 6.2, 2793, 17.8), "90.nlz": (308793, 0.2, 5.7, 2996, 17.8),
    },
}
SEED_COLUMNS = ("ips", "stall%", "w_amp", "c_csecs", "sizeGB")


def side_by_side(ours: "pd.DataFrame", step: str) -> str:
    """The seed's figures and ours, each as a ratio to its own m1.none."""
    seed = SEED[step]
    rows = ["| config | " + " | ".join(f"seed {c} | ours {c}" for c in SEED_COLUMNS) + " |",
            "|---|" + "---:|---:|" * len(SEED_COLUMNS)]
    ours_size = "runGB" if step == "overwriteandwait" else "sizeGB"
    for name in seed:
        if name not in ours.index:
            continue
        cells = [name]
        for i, column in enumerate(SEED_COLUMNS):
            mine = ours_size if column == "sizeGB" else column
            if column == "stall%":  # a share already: side by side, not as a ratio
                cells += [f"{seed[name][i]:.1f}", f"{ours.loc[name, mine]:.1f}"]
                continue
            s = seed[name][i] / seed["m1.none"][i]
            o = ours.loc[name, mine] / ours.loc["m1.none", mine] if ours.loc["m1.none", mine] else float("nan")
            cells += [f"{s:.2f}", f"{o:.2f}"]
        rows.append("| " + " | ".join(cells) + " |")
    return "\n".join(rows)


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--num", type=int, default=2_000_000, help="keys (default 2,000,000)")
    parser.add_argument("--duration", type=float, default=60.0, help="seconds of overwriteandwait (default 60)")
    parser.add_argument("--out", type=Path, help="write the Markdown here instead of printing it")
    parser.add_argument("--results", type=Path, default=Path("ibench-results/compression-study"))
    args = parser.parse_args()

    dirs: dict[str, list[Path]] = {"fillseq": [], "later": []}
    for name, options in CONFIGS.items():
        with tempfile.TemporaryDirectory() as tmp:
            started = time.time()
            # fillseq as benchmark.sh runs it, then the later steps with the WAL on.
            for phase, steps, step_options in (("fillseq", ["fillseq"], FILLSEQ), ("later", LATER_STEPS, OVERWRITE)):
                r = ibench.run(
                    db=f"rocksdb:{tmp}/db?{COMMON}&{options}&{step_options}",
                    preset="universal-compression",
                    steps=steps,
                    num=args.num,
                    duration=args.duration,
                    label=name,
                    out=args.results,
                    progress=False,
                )
                dirs[phase].append(r.path)
            print(f"{name}: {time.time() - started:.0f} s", flush=True)
    # One label per run of each phase, so the tables name configurations alone.
    phases = {phase: ibench.load(d) for phase, d in dirs.items()}
    by_step = {"fillseq": phases["fillseq"], "overwriteandwait": phases["later"]}

    lines = [
        "# Compression with universal compaction: a small-scale reproduction",
        "",
        "Produced by `python3 benches/compression_study.py"
        + (f" --num {args.num}" if args.num != 2_000_000 else "")
        + (f" --duration {args.duration:g}" if args.duration != 60 else "")
        + "` on "
        + f"{platform.node()} ({_cpu()}, {_cores()} cores).",
        "",
        f"Each configuration: `{COMMON}` plus its compression options (the seed's",
        "ten: `compression_size_percent` -1/80/90, then `compression` and",
        "`bottommost_compression`), then the `universal-compression` preset's steps",
        "as benchmark.sh defines them: fillseq of",
        f"{args.num:,} keys (16-byte keys, 400-byte values compressible to 0.5, one",
        f"pair per write) with `{FILLSEQ}`",
        "(db_bench `--disable_wal=1 --memtablerep=vector --allow_concurrent_memtable_write=false`),",
        f"then, reopened with `{OVERWRITE}` (`--disable_wal=0 --sync=0`), overwritesome",
        "(10% of the keys), waitforcompaction, overwriteandwait",
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
    fill = ibench.tables.engine(by_step["fillseq"], "fillseq").frame
    last = ibench.tables.engine(by_step["overwriteandwait"], "overwriteandwait").frame
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
        lines += [ibench.tables.engine(by_step[step], step).to_markdown(), ""]
        lines += [
            f"The seed's {step} beside ours, each relative to its own m1.none (stall% as is;",
            "our size for overwriteandwait is the largest run, runGB):",
            "",
            side_by_side(ibench.tables.engine(by_step[step], step).frame, step),
            "",
        ]
    lines += ["Every step, every configuration:", ""]
    lines += [ibench.tables.engine(phases[p]).to_markdown() + "\n" for p in ("fillseq", "later")]
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
