"""The seeds' RocksDB compression study at a scale this machine can run.

    python3 benches/compression_study.py [--num 2000000] [--duration 60] [--repeats 1]
                                         [--dir /dev/shm] [--profile] [--out docs/compression-study.md]

Runs the `universal-compression` preset (fillseq -> overwritesome ->
waitforcompaction -> overwriteandwait, 400-byte values compressible to 0.5,
each step as benchmark.sh runs it) on embedded RocksDB with universal
compaction, `--repeats` times per configuration, interleaved, and prints
(or writes) the tables the published report shows: ips, stall%, w_amp,
compaction wall and CPU seconds, size, for fillseq and overwriteandwait, as
means with their run-to-run spread, and whether fillseq shows the seed's
shape. With `--profile`, every step is profiled with perf (ibench's own
process: the writer and RocksDB's pools run there) and the Markdown gains
where each step's CPU per operation went by thread role (the writer, the
flush and compaction pools), how busy the writer and the pools were, what
compression cost and on which threads, and differential flame graphs
(SVG files beside --out). Needs the package installed from this checkout
(`pip install .`, which includes RocksDB).
"""

from __future__ import annotations

import argparse
import json
import re
import os
import platform
import tempfile
import time
from pathlib import Path

import ibench
import ibench.stats
from ibench import _native

from db_bench_defaults import DB_BENCH_DEFAULTS

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
# benchmark.sh's options for universal compaction (RocksDB's tools/benchmark.sh:
# const_params_base, univ_const_params, l0_config and params_w, at their
# defaults), as ibench DSN options. The db_bench flag each one stands for:
BENCHMARK_SH_UNIVERSAL: list[tuple[str, str]] = [
    ("compaction_style=universal", "--compaction_style=1"),
    ("num_levels=40", "--num_levels=40"),
    ("max_write_buffer_number=8", "--max_write_buffer_number=8"),
    ("level0_file_num_compaction_trigger=8", "--level0_file_num_compaction_trigger=8"),
    ("level0_slowdown_writes_trigger=20", "--level0_slowdown_writes_trigger=20"),
    ("level0_stop_writes_trigger=30", "--level0_stop_writes_trigger=30"),
    ("compaction_options_universal={min_merge_width=2;max_merge_width=20;size_ratio=1;"
     "max_size_amplification_percent=200;allow_trivial_move=false}",
     "--universal_min_merge_width=2 --universal_max_merge_width=20 --universal_size_ratio=1 "
     "--universal_max_size_amplification_percent=200 --universal_allow_trivial_move=0"),
    ("bytes_per_sync=1048576", "--bytes_per_sync=$((1 * M))"),
    ("max_open_files=-1", "--open_files=-1"),
    ("delete_obsolete_files_period_micros=60000000", "--delete_obsolete_files_period_micros=$((60 * M))"),
    ("table.block_size=8192", "--block_size=8192"),
    ("table.filter_policy=bloomfilter:10:false", "--bloom_bits=10"),
    ("table.pin_l0_filter_and_index_blocks_in_cache=true", "--pin_l0_filter_and_index_blocks_in_cache=1"),
    # benchmark.sh's 16 GB is more than this machine's memory allows beside a
    # tmpfs of databases; fillseq and overwrite do not read through the cache.
    ("block_cache=1G", "--cache_size=$((16 * G)), here 1 GB"),
]
# The seed's own change to benchmark.sh's defaults: two threads per compaction job.
SEED_CHANGES = [("subcompactions=2", "--subcompactions=2")]
SEED_KEYS = 100_000_000  # the seed's fillseq


def scaled(num: int) -> list[tuple[str, str]]:
    """benchmark.sh's 128 MB write buffer and SST target, scaled by num / the
    seed's 100M keys: the LSM then sees as many flushes, sorted runs and
    compactions per key as at the seed's scale (at 4M keys, 128 MB
    memtables, 8 of them, would hold most of the load and fillseq would
    compact nothing)."""
    size = max(1 << 20, (128 << 20) * num // SEED_KEYS)
    return [(f"write_buffer_size={size}", f"--write_buffer_size=$((128 * M)) x {num:,} / {SEED_KEYS:,}"),
            (f"target_file_size_base={size}", f"--target_file_size_base=$((128 * M)) x {num:,} / {SEED_KEYS:,}")]

# benchmark.sh's fillseq options, as the universal-compression preset's step_options set them (docs/kv.md).
FILLSEQ = json.loads(_native.resolve_config(json.dumps([{"preset": "universal-compression"}])))["step_options"]["fillseq"]

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


def per_run(loaded: list["ibench.Results"], step: str) -> "pd.DataFrame":
    """The engine table's columns for ``step``, one row per run, indexed by configuration."""
    frame = ibench.tables.engine(loaded, step).frame
    # Repeats share a label, which the tables tell apart by name: back to the label.
    names = ibench.tables.labels(loaded)
    label = {names[r.runs["run_id"].iloc[0]]: r.runs["label"].iloc[0] for r in loaded}
    frame.index = frame.index.map(label)
    return frame


def per_config(runs: "pd.DataFrame") -> tuple["pd.DataFrame", "pd.DataFrame"]:
    """Each configuration's mean over its repeats, and their coefficient of variation (NaN with one run)."""
    groups = runs.groupby(runs.index, sort=False)
    mean = groups.mean()
    return mean, groups.std(ddof=1) / mean


def table(mean: "pd.DataFrame", cv: "pd.DataFrame", repeats: int, size: str) -> str:
    """A Markdown table of the means, with the run-to-run spread of ips and compaction CPU."""
    spread = repeats > 1
    head = ["config", "ips"] + (["ips CV"] if spread else []) + ["stall%", "w_amp", "c_wsecs", "c_csecs"]
    head += (["c_csecs CV"] if spread else []) + [size, "sorted_runs"]
    rows = ["| " + " | ".join(head) + " |", "|---|" + "---:|" * (len(head) - 1)]
    for name in mean.index:
        m, c = mean.loc[name], cv.loc[name]
        cells = [name, f"{m['ips']:,.0f}"] + ([f"{100 * c['ips']:.1f}%"] if spread else [])
        cells += [f"{m['stall%']:.1f}", f"{m['w_amp']:.2f}", f"{m['c_wsecs']:.1f}", f"{m['c_csecs']:.1f}"]
        cells += ([f"{100 * c['c_csecs']:.1f}%"] if spread else []) + [f"{m[size]:.3f}", f"{m['sorted_runs']:.1f}"]
        rows.append("| " + " | ".join(cells) + " |")
    return "\n".join(rows)


def ratio(runs: "pd.DataFrame", base: str, other: str, column: str) -> str:
    """``other``'s mean over ``base``'s, with its 95% interval when both have repeats."""
    a, b = runs.loc[[base], column], runs.loc[[other], column]
    if len(a) < 2 or len(b) < 2:
        return f"{b.mean() / a.mean():.2f}x"
    r = ibench.stats.ratio_of_means(a, b)
    return f"{r.estimate:.2f}x, 95% interval {r.low:.2f}-{r.high:.2f}x"


def shape(runs: "pd.DataFrame") -> list[str]:
    """Whether fillseq shows the seed's shape, criterion by criterion, from the
    means of the repeats; each ratio with its interval over the repeats."""
    fill, _ = per_config(runs)
    none, lz4, zstd = (fill.loc[f"m1.{c}"] for c in ("none", "lz4", "zstd"))
    # Compressed throughout (compression_size_percent -1): the 80/90 configurations
    # leave their newest runs uncompressed, so their size depends on how much
    # of the data is old when fillseq ends.
    compressed = [n for n in ("m1.lz4", "m1.zstd", "m1.lz") if n in fill.index]
    sizes = [fill.loc[n, "sizeGB"] / none["sizeGB"] for n in compressed]
    checks = [
        ("ips ordered m1.none > m1.lz4 > m1.zstd", none["ips"] > lz4["ips"] > zstd["ips"],
         f"{none['ips']:,.0f} / {lz4['ips']:,.0f} / {zstd['ips']:,.0f}; m1.lz4/m1.none "
         f"{ratio(runs, 'm1.none', 'm1.lz4', 'ips')}, m1.zstd/m1.lz4 {ratio(runs, 'm1.lz4', 'm1.zstd', 'ips')}"),
        ("stall% ordered the other way", none["stall%"] < lz4["stall%"] < zstd["stall%"],
         f"{none['stall%']:.1f} / {lz4['stall%']:.1f} / {zstd['stall%']:.1f}"),
        ("compaction CPU of m1.zstd >= 2x m1.none's", bool(zstd["c_csecs"] >= 2 * none["c_csecs"] > 0),
         ratio(runs, "m1.none", "m1.zstd", "c_csecs")),
        ("sizes of m1.lz4, m1.zstd and m1.lz 0.4-0.6x of m1.none's", all(0.4 <= r <= 0.6 for r in sizes),
         f"{min(sizes):.2f}-{max(sizes):.2f}x"),
    ]
    return [f"- {'yes' if ok else '**no**'}: {what} ({figures})" for what, ok, figures in checks]


# Frames of the compressors RocksDB links (lz4, zstd, snappy, zlib): their CPU is what compression costs.
COMPRESS = re.compile(r"^(LZ4_compress|ZSTD_compress|ZSTD_compressBlock|ZSTD_compressStream|snappy::Compress|deflate)")
DECOMPRESS = re.compile(r"^(LZ4_decompress|ZSTD_decompress|snappy::RawUncompress|inflate)")
# The client side's roles: the writer (ibench's worker thread) and RocksDB's pools.
ROLES = [("ibench workers", "writer"), ("rocksdb:high", "flush (high)"), ("rocksdb:low", "compaction (low)")]


def _frame_cpu(profiles: "pd.DataFrame", pattern: "re.Pattern[str]") -> "pd.Series":
    """CPU seconds of the stacks with a frame matching ``pattern``, by thread role."""
    if profiles.empty:
        return profiles.groupby("thread_role")["cpu_s"].sum()
    hit = profiles["stack"].map(lambda st: any(pattern.match(f) for f in st.split(";")))
    return profiles[hit].groupby("thread_role")["cpu_s"].sum()


def by_role(loaded: list["ibench.Results"], step: str) -> "pd.DataFrame":
    """Per run of ``step``: ips, stall%, each role's CPU µs per operation and
    its busy share of the step's wall time, and compression's CPU µs per
    operation on each role (from the profile), indexed by configuration."""
    import pandas as pd

    rows = []
    for r in loaded:
        s = r.steps[r.steps["step"] == step].iloc[0]
        ops = float(s["cost_ops"]) if s["cost_ops"] == s["cost_ops"] and s["cost_ops"] else float(s["inserts"])
        wall = float(s["elapsed_s"])
        t = r.threads
        t = t[(t["step"] == step) & (t["side"] == "client")].groupby("role")["cpu_s"].sum()
        p = r.profiles
        p = p[(p["step"] == step) & (p["role"] == "client")]
        comp, decomp = _frame_cpu(p, COMPRESS), _frame_cpu(p, DECOMPRESS)
        row = {"config": r.runs["label"].iloc[0], "ips": float(s["ips"] or 0),
               "stall%": float(s["stall_pct"] or 0)}
        for role, name in ROLES:
            row[f"{name} us/op"] = float(t.get(role, 0.0)) / ops * 1e6 if ops else float("nan")
            row[f"{name} busy"] = float(t.get(role, 0.0)) / wall if wall else float("nan")
            row[f"{name} compress us/op"] = float(comp.get(role, 0.0)) / ops * 1e6 if ops else float("nan")
            row[f"{name} decompress us/op"] = float(decomp.get(role, 0.0)) / ops * 1e6 if ops else float("nan")
        row["coverage"] = float(r.profiled.loc[r.profiled["step"] == step, "sample_coverage"].mean()) \
            if "sample_coverage" in r.profiled else float("nan")
        rows.append(row)
    return pd.DataFrame(rows).set_index("config")


def roles_table(frame: "pd.DataFrame") -> str:
    """The means of :func:`by_role` per configuration, as Markdown."""
    mean = frame.groupby(frame.index, sort=False).mean()
    head = ["config", "ips", "stall%"] + [f"{n} µs/op (busy)" for _, n in ROLES] + \
        [f"compress µs/op on {n.split()[0]}" for _, n in ROLES[1:]] + ["decompress µs/op (compaction)"]
    rows = ["| " + " | ".join(head) + " |", "|---|" + "---:|" * (len(head) - 1)]
    for name, m in mean.iterrows():
        cells = [str(name), f"{m['ips']:,.0f}", f"{m['stall%']:.1f}"]
        cells += [f"{m[f'{n} us/op']:.2f} ({100 * m[f'{n} busy']:.0f}%)" for _, n in ROLES]
        cells += [f"{m[f'{n} compress us/op']:.2f}" for _, n in ROLES[1:]]
        cells += [f"{m['compaction (low) decompress us/op']:.2f}"]
        rows.append("| " + " | ".join(cells) + " |")
    return "\n".join(rows)


def writer_paths(loaded: list["ibench.Results"], step: str, base: str, other: str, out: Path, top: int = 8) -> str:
    """The writer's and the pools' call paths that changed most from ``base``
    to ``other`` in ``step``, and their differential flame graphs written
    beside ``out``; Markdown."""
    lines = []
    for role, name in [("foreground", "the writer"), ("background", "the flush and compaction pools")]:
        e = ibench.explain(loaded, step, base=base, other=other, role=role, side="client", top=top)
        svg = out.parent / f"{out.stem}-{step}-{other}-{role}.svg"
        svg.write_text(e.flamegraph())
        paths = e.paths[["inclusive_base", "inclusive_other", "inclusive_change"]].head(top)
        lines += [f"{step}, {name} ({role} threads): CPU µs per operation of the call paths that changed most, "
                  f"{base} → {other}; differential flame graph: [{svg.name}]({svg.name}).", "",
                  "| path | " + base + " | " + other + " | change |", "|---|---:|---:|---:|"]
        lines += [f"| `{f[:90]}` | {b:.2f} | {o:.2f} | {c:+.2f} |" for f, (b, o, c) in paths.iterrows()]
        lines.append("")
    return "\n".join(lines)


def roles_section(loaded: list["ibench.Results"], out: Path) -> list[str]:
    """The Markdown lines of "Where the time goes, thread by thread": per step,
    the roles' CPU per key and the changed call paths, m1.none to m1.zstd."""
    lines = ["## Where the time goes, thread by thread", ""]
    for step in ("fillseq", "overwriteandwait"):
        lines += [f"{step}: CPU µs per operation of each thread role (in brackets its busy share of the "
                  "step's wall time: 100% is one core all the time), and what compression cost on each.", "",
                  roles_table(by_role(loaded, step)), "",
                  writer_paths(loaded, step, "m1.none", "m1.zstd", out)]
    return lines


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--num", type=int, default=2_000_000, help="keys (default 2,000,000)")
    parser.add_argument("--duration", type=float, default=60.0, help="seconds of overwriteandwait (default 60)")
    parser.add_argument("--repeats", type=int, default=1, help="runs per configuration, interleaved (default 1)")
    parser.add_argument("--dir", type=Path, help="where the databases live (default: the system's temporary "
                        "directory; a tmpfs such as /dev/shm takes the disk out of the comparison)")
    parser.add_argument("--options", default="", help="more RocksDB options for every configuration (a=1&b=2)")
    parser.add_argument("--configs", default=",".join(CONFIGS), help="comma-separated (default: the ten); "
                        "m1.none, m1.lz4 and m1.zstd are needed for the shape")
    parser.add_argument("--out", type=Path, help="write the Markdown here instead of printing it")
    parser.add_argument("--results", type=Path, default=Path("ibench-results/compression-study"))
    parser.add_argument("--profile", action="store_true", help="profile every step with perf (ibench's own process) "
                        "and add where the CPU went by thread role, with differential flame graphs beside --out")
    parser.add_argument("--load", action="store_true", help="make the tables from the runs already under --results "
                        "(made by this script with the same arguments) instead of running")
    args = parser.parse_args()
    chosen = args.configs.split(",")
    unknown = [c for c in chosen if c not in CONFIGS]
    if unknown:
        parser.error(f"unknown configurations {unknown}: choose from {', '.join(CONFIGS)}")
    if args.dir is not None and not args.dir.is_dir():
        parser.error(f"--dir: {args.dir} is not a directory")
    if args.num < 1 or args.repeats < 1 or args.duration <= 0:
        parser.error("--num and --repeats must be at least 1 and --duration positive, "
                     f"got {args.num}, {args.repeats} and {args.duration:g}")

    engine = BENCHMARK_SH_UNIVERSAL + DB_BENCH_DEFAULTS + scaled(args.num) + SEED_CHANGES
    common = "&".join(option for option, _ in engine) + (f"&{args.options}" if args.options else "")
    paths: list[Path] = sorted(p.parent for p in args.results.glob("*/runs.parquet")) if args.load else []
    # Interleaved (A B C ... A B C ...): drift in the machine lands on every configuration alike.
    for repeat in range(0 if args.load else args.repeats):
        for name in chosen:
            options = CONFIGS[name]
            with tempfile.TemporaryDirectory(dir=args.dir) as tmp:
                started = time.time()
                # The preset runs each step as benchmark.sh does (fillseq with the
                # WAL off into a vector memtable): its step_options reopen the database.
                r = ibench.run(
                    db=f"rocksdb:{tmp}/db?{common}&{options}",
                    preset="universal-compression",
                    num=args.num,
                    overwritesome_writes=args.num // 10,  # benchmark.sh's 10M of 100M
                    duration=args.duration,
                    label=name,
                    out=args.results,
                    progress=False,
                    **({"profile": "perf", "profile_client": True, "profile_frequency": 499} if args.profile else {}),
                )
                paths.append(r.path)
                print(f"{name} #{repeat + 1}: {time.time() - started:.0f} s", flush=True)
    loaded = [ibench.load(p) for p in paths]
    fill_runs = per_run(loaded, "fillseq")
    fill, fill_cv = per_config(fill_runs)
    last, last_cv = per_config(per_run(loaded, "overwriteandwait"))
    where = "a tmpfs (" + str(args.dir) + ")" if args.dir and str(args.dir).startswith("/dev/shm") else (
        str(args.dir) if args.dir else "the system's temporary directory")

    command = "python3 benches/compression_study.py" + (f" --num {args.num}" if args.num != 2_000_000 else "")
    command += (f" --duration {args.duration:g}" if args.duration != 60 else "")
    command += (f" --repeats {args.repeats}" if args.repeats != 1 else "") + (f" --dir {args.dir}" if args.dir else "")
    command += f" --configs {args.configs}" if chosen != list(CONFIGS) else ""
    command += f" --options '{args.options}'" if args.options else ""
    command += " --profile" if args.profile else ""
    roles = roles_section(loaded, args.out or Path("compression-study.md")) \
        if args.profile and {"m1.none", "m1.zstd"} <= set(chosen) else []
    lines = [
        "# Compression with universal compaction: a small-scale reproduction",
        "",
        f"Produced by `{command}` on {platform.node()} ({_cpu()}, {_cores()} cores),"
        f" databases on {where}; {args.repeats} run(s) per configuration, interleaved.",
        "",
        "Does fillseq show the seed's shape (computed from the means below)?",
        "",
        *shape(fill_runs),
        "",
        "Each configuration: benchmark.sh's options for universal compaction (the",
        "table below; the write buffer and SST target scaled to this run's keys), the seed's `subcompactions=2`"
        + (f", this run's `{args.options}`" if args.options else "") + ", plus its compression options (the seed's",
        "ten: `compression_size_percent` -1/80/90, then `compression` and",
        "`bottommost_compression`), then the `universal-compression` preset's steps",
        "as benchmark.sh runs them: fillseq of",
        f"{args.num:,} keys (16-byte keys, 400-byte values compressible to 0.5, one",
        f"pair per write), for which the preset's `step_options` reopen the database with `{FILLSEQ}`",
        "(db_bench `--disable_wal=1 --memtablerep=vector --allow_concurrent_memtable_write=false`),",
        "then, reopened with the DSN's own options (the WAL on, no sync: `--disable_wal=0 --sync=0`), overwritesome",
        "(10% of the keys), waitforcompaction, overwriteandwait",
        f"({args.duration:g} s of overwrites, then wait for compaction).",
        "",
        "Columns as in the seeds' report: ips (inserts/s), stall% (time writers",
        "waited on write stalls), w_amp ((flush + compaction bytes written) / user",
        "bytes written; the WAL apart), c_wsecs / c_csecs (compaction wall / CPU",
        "seconds, of compactions that finished in the step), sizeGB (live SST files",
        "after the step, 10^9 bytes), runGB (the largest sorted run: the seeds' size",
        "for overwriteandwait, where universal compaction's total size varies too much),",
        "sorted_runs (L0 files plus non-empty levels). Each figure is the mean over the",
        "repeats; CV is their coefficient of variation (run-to-run spread).",
        "",
        "| ibench DSN option | benchmark.sh's db_bench flag (or db_bench's default it leaves) |",
        "|---|---|",
        *[f"| `{option}` | `{flag}` |" for option, flag in engine],
        "",
        "## fillseq",
        "",
        table(fill, fill_cv, args.repeats, "sizeGB"),
        "",
        "The seed's fillseq beside ours, each relative to its own m1.none (stall% as is):",
        "",
        side_by_side(fill, "fillseq"),
        "",
        "## overwriteandwait",
        "",
        table(last, last_cv, args.repeats, "runGB"),
        "",
        "The seed's overwriteandwait beside ours, each relative to its own m1.none (stall% as is;",
        "our size is the largest run, runGB):",
        "",
        side_by_side(last, "overwriteandwait"),
        "",
        *roles,
        "## Every step of every run",
        "",
        ibench.tables.engine(loaded).to_markdown(),
        "",
    ]
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
