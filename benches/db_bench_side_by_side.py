"""ibench beside RocksDB's db_bench: the same steps, the same options, alternating.

    python3 benches/db_bench_side_by_side.py /usr/bin/db_bench [--num 1000000] [--rounds 2] [--ibench-bin target/release/ibench]

Each round runs, on fresh databases, the steps below through db_bench (one
process per step, as benchmark.sh runs them) and through ibench (one run per
step on the same directory, so each step opens the database with its own
options, as db_bench does: in this Python process, or with `--ibench-bin` an
ibench executable's process per step, as db_bench's), alternating which goes
first, in this order
(fillseq; reads of the database it fills; then writes):

- fillseq: WAL off, vector memtable, no concurrent memtable writes
  (db_bench `--disable_wal=1 --memtablerep=vector --allow_concurrent_memtable_write=false`;
  ibench `wal=off&memtable_factory=vector&allow_concurrent_memtable_write=false`);
- readrandom, readseq, readreverse, multireadrandom (`--batch_size=10`),
  fwdrange and revrange (db_bench `seekrandom --seek_nexts=10`, revrange with
  `--reverse_iterator=true`): `num` reads of the filled keys. Before a
  read that follows writes, each tool flushes and waits for compaction
  (db_bench `flush,waitforcompaction`), so both read the same LSM shape.
- overwrite, updaterandom, mergerandom (`--merge_operator=put`),
  deleterandom: WAL on, no sync, on the filled database (`--use_existing_db=1`).

Both use 16-byte keys, `--value_size` values compressible to 0.5 (random
printable characters repeated: ibench's `value_alphabet="printable"`), sliced
from a 1 MiB pool as db_bench's are (ibench's `value_source="pool"`; `--value-source
per-key` for ibench's default, each value generated from its key), one
thread, batch size 1, and the same engine options (`--compression`,
`--write_buffer_size`, `--max_background_jobs`, db_bench's own defaults
where they are not RocksDB's (`db_bench_defaults.py`: pipelined writes, the
delayed write rate, the hard pending compaction limit, the table cache's
shards; ibench gets them as options), benchmark.sh's dynamic level sizes
(`--level_compaction_dynamic_level_bytes=true`, db_bench gets the flag), the block cache
`--cache-size` and its kind `--cache-type` (db_bench's default
HyperClockCache unless `--cache-type lru`), universal compaction with `--universal`). It prints per step the rate (ops/s), stall %, write
amplification and compaction CPU seconds of each, the ratio ibench/db_bench
of each (medians of the rounds), the rate ratio's 95% interval from the
rounds' pairs, and which RocksDB version each links (db_bench reports its own;
ibench the version in its OPTIONS file). Needs the package installed from this
checkout (`pip install .`) and a db_bench: `bash benches/build_db_bench.sh`
builds one from the very RocksDB ibench embeds (same version, sources and
object code), so the two clients differ in nothing else; Debian's
rocksdb-tools or a RocksDB build of your own also work.

To compare ibench builds as well (a change against the build before it),
give `--ibench-bin NAME=PATH` once per build: each round runs db_bench and
every build, each tool taking each place in turn, and the report adds each
pair of builds' paired rate ratio. On a noisy host that pairs the builds
round by round instead of run by run.

Each round gives both tools its own seed, `--seed` + the round's index
(db_bench `--seed`, ibench `seed`), so both draw new keys every round and a
rerun draws the same ones. Left to itself db_bench seeds from the clock and
ibench from its fixed default: db_bench's rounds then sampled many key
sequences (and the LSM shapes they make) against one of ibench's.
"""

from __future__ import annotations

import argparse
import os
import re
import statistics
import subprocess
import tempfile
from pathlib import Path
from typing import Any, Optional

import ibench
from db_bench_defaults import DB_BENCH_DEFAULTS, DB_BENCH_FLAGS

# The reads come straight after fillseq: key-ordered, its files do not
# overlap, so both tools read the same LSM shape. After overwrite the shape
# depends on how many L0 files each tool's last process left (db_bench 3,
# under the compaction trigger; ibench's one run fewer), and a point read
# without a Bloom filter probes every overlapping file: db_bench then read
# 3.6 blocks per get where ibench read 1.0, a 3x difference in readrandom
# that is the LSM's, not the clients'.
STEPS = ("fillseq", "readrandom", "readseq", "readreverse", "fwdrange", "revrange", "multireadrandom", "overwrite",
         "updaterandom", "mergerandom", "deleterandom")
FIELDS = ("rate", "stall_pct", "w_amp", "compaction_cpu_s")


def db_bench_flags(args: argparse.Namespace, seed: int) -> list[str]:
    flags = [
        f"--seed={seed}",
        f"--num={args.num}",
        f"--value_size={args.value_size}",
        "--key_size=16",
        "--compression_ratio=0.5",
        f"--compression_type={args.compression}",
        f"--write_buffer_size={args.write_buffer_size}",
        f"--max_background_jobs={args.max_background_jobs}",
        f"--cache_size={args.cache_size}",
        f"--cache_type={args.cache_type}_cache",
        "--threads=1",
        "--batch_size=1",
        "--statistics=1",
        "--stats_per_interval=0",
        # ibench sets a put merge operator on every database; without one a
        # db_bench step after mergerandom aborts when it meets merge operands.
        "--merge_operator=put",
        "--histogram=1",  # per-operation latency, as benchmark.sh measures it (ibench always does)
        *(flag for flag, _ in DB_BENCH_FLAGS),
    ]
    if args.universal:
        flags.append("--compaction_style=1")
    return flags


def ibench_options(args: argparse.Namespace) -> str:
    options = [
        *(option for option, _ in DB_BENCH_DEFAULTS),
        f"compression={args.compression}",
        f"write_buffer_size={args.write_buffer_size}",
        f"max_background_jobs={args.max_background_jobs}",
        f"block_cache={args.cache_size}",
        f"block_cache_type={args.cache_type}",
    ]
    if args.universal:
        options.append("compaction_style=universal")
    return "&".join(options)


# Per step: db_bench's benchmark name and flags as benchmark.sh gives them,
# and ibench's DSN options and parameters for the same.
EXISTING = ["--use_existing_db=1"]
STEP_FLAGS = {
    "fillseq": ["--use_existing_db=0", "--disable_wal=1", "--memtablerep=vector", "--allow_concurrent_memtable_write=false", "--sync=0"],
    "overwrite": [*EXISTING, "--disable_wal=0", "--sync=0"],
    "readrandom": EXISTING,
    "readseq": EXISTING,
    "readreverse": EXISTING,
    "fwdrange": [*EXISTING, "--seek_nexts=10"],
    "revrange": [*EXISTING, "--seek_nexts=10", "--reverse_iterator=true"],
    "multireadrandom": [*EXISTING, "--batch_size=10"],
    "updaterandom": [*EXISTING, "--disable_wal=0", "--sync=0"],
    "mergerandom": [*EXISTING, "--disable_wal=0", "--sync=0"],
    "deleterandom": [*EXISTING, "--disable_wal=0", "--sync=0"],
}
DB_BENCH_NAME = {"fwdrange": "seekrandom", "revrange": "seekrandom"}
STEP_OPTIONS = {"fillseq": "wal=off&memtable_factory=vector&allow_concurrent_memtable_write=false"}
STEP_PARAMS: dict[str, dict[str, Any]] = {"fwdrange": {"seek_nexts": 10}, "revrange": {"seek_nexts": 10},
                                          "multireadrandom": {"batch_size": 10}}


def ticker(text: str, name: str) -> Optional[float]:
    m = re.search(rf"^{re.escape(name)} COUNT : (\d+)", text, re.M)
    return float(m.group(1)) if m else None


def histogram_sum(text: str, name: str) -> Optional[float]:
    m = re.search(rf"^{re.escape(name)} .*SUM : (\d+)", text, re.M)
    return float(m.group(1)) if m else None


def run_db_bench(binary: str, db: Path, step: str, args: argparse.Namespace, seed: int) -> dict[str, Any]:
    name = DB_BENCH_NAME.get(step, step)
    cmd = [binary, f"--benchmarks={name}", f"--db={db}", *db_bench_flags(args, seed), *STEP_FLAGS[step]]
    done = subprocess.run(cmd, check=True, capture_output=True, text=True)
    out = done.stdout + done.stderr  # the version line goes to stderr
    m = re.search(rf"^{name}\s*:\s*([\d.]+) micros/op (\d+) ops/sec ([\d.]+) seconds", out, re.M)
    if m is None:
        raise RuntimeError(f"no {step} line in db_bench's output:\n{out[-2000:]}")
    seconds = float(m.group(3))
    user = ticker(out, "rocksdb.bytes.written") or 0.0
    written = (ticker(out, "rocksdb.flush.write.bytes") or 0.0) + (ticker(out, "rocksdb.compact.write.bytes") or 0.0)
    version = re.search(r"^RocksDB:\s+version (\S+)", out, re.M)
    return {
        "rate": float(m.group(2)),
        "stall_pct": 100.0 * (ticker(out, "rocksdb.stall.micros") or 0.0) / 1e6 / seconds,
        "w_amp": written / user if user else None,
        "compaction_cpu_s": (histogram_sum(out, "rocksdb.compaction.times.cpu_micros") or 0.0) / 1e6,
        "version": version.group(1) if version else "?",
    }


def settle(tool: str, db: Path, args: argparse.Namespace, seed: int) -> None:
    """Flush, then wait for compaction: a read step after writes then starts
    from the same LSM shape whichever tool wrote (each tool's last writes leave
    a different number of L0 files, which a point read without a Bloom filter
    probes one by one)."""
    if tool == "db_bench":
        cmd = [args.db_bench, "--benchmarks=flush,waitforcompaction", f"--db={db}", *db_bench_flags(args, seed), *EXISTING]
        subprocess.run(cmd, check=True, capture_output=True, text=True)
    else:
        ibench.run(db=f"rocksdb:{db}?{ibench_options(args)}", steps=["flush", "waitforcompaction"], num=args.num,
                   value_size=args.value_size, key_size=16, ratio=0.5, seed=seed, out=args.results, progress=False)


def run_ibench(binary: Optional[Path], db: Path, step: str, args: argparse.Namespace, out: Path,
               seed: int) -> dict[str, Any]:
    extra = STEP_OPTIONS.get(step)
    params: dict[str, Any] = {
        "db": f"rocksdb:{db}?{ibench_options(args)}" + (f"&{extra}" if extra else ""),
        "steps": [step],
        "num": args.num,
        "reads": args.num,
        "writes": args.num,
        "value_size": args.value_size,
        "key_size": 16,
        "ratio": 0.5,
        "value_alphabet": "printable",  # db_bench's values: 95 printable characters,
        "value_source": args.value_source,  # pool: sliced from 1 MiB of compressible pieces, as db_bench's
        "threads": 1,
        "seed": seed,
        "verify": "off",
        "batch_size": 1,
        **STEP_PARAMS.get(step, {}),
    }
    if binary is None:
        r = ibench.run(out=out, progress=False, **params)
    else:
        # The executable, in its own process as db_bench is: the same
        # parameters as command-line flags, the run read back from its directory.
        out.mkdir(parents=True, exist_ok=True)
        run_dir = Path(tempfile.mkdtemp(dir=out, prefix="bin-"))
        flags = [f"--{k.replace('_', '-')}={','.join(v) if isinstance(v, list) else v}" for k, v in params.items()]
        subprocess.run([str(binary), "run", *flags, f"--out={run_dir}", "--quiet"], check=True,
                       capture_output=True, text=True)
        r = ibench.load(run_dir)
    s = r.steps.iloc[0]
    kind = "qps" if step in ibench.tables.KV_READ_STEPS else "dps" if step in ibench.tables.KV_DELETE_STEPS else "ips"
    return {
        "rate": float(s[kind]),
        "stall_pct": float(s["stall_pct"]),
        "w_amp": None if s["w_amp"] != s["w_amp"] else float(s["w_amp"]),
        "compaction_cpu_s": float(s["compaction_cpu_s"]),
        "version": str(r.runs["dbms_version"].iloc[0]),
    }


def median(values: list[Any]) -> Optional[float]:
    present = [v for v in values if v is not None]
    return statistics.median(present) if present else None


def fmt(v: Optional[float]) -> str:
    if v is None:
        return "-"
    return f"{v:,.0f}" if abs(v) >= 100 else f"{v:.2f}"


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("db_bench", help="the db_bench binary")
    parser.add_argument("--num", type=int, default=1_000_000)
    parser.add_argument("--value-size", type=int, default=400)
    parser.add_argument("--compression", default="none")
    parser.add_argument("--write-buffer-size", type=int, default=64 << 20)
    parser.add_argument("--max-background-jobs", type=int, default=2)
    parser.add_argument("--cache-size", type=int, default=64 << 20, help="block cache bytes (db_bench --cache_size)")
    parser.add_argument("--cache-type", choices=("hyper_clock", "lru"), default="hyper_clock",
                        help="the block cache's kind, for both (db_bench --cache_type, whose default is "
                        "hyper_clock_cache; ibench block_cache_type, whose default is lru)")
    parser.add_argument("--universal", action="store_true", help="universal compaction (default leveled)")
    parser.add_argument("--value-source", choices=("pool", "per-key"), default="pool",
                        help="ibench's values: sliced from a 1 MiB pool as db_bench's (default), or each "
                             "generated from its key (ibench's default: more client work per write)")
    parser.add_argument("--ibench-bin", action="append", default=[], metavar="[NAME=]PATH",
                        help="an ibench executable (cargo build --release: target/release/ibench) to run each "
                             "step in its own process, as db_bench runs; default: this Python package, in "
                             "process (its RocksDB is in a shared library, whose thread-locals cost more: "
                             "docs/kv.md). Give it again (NAME=PATH) to compare builds: every round runs "
                             "each, in rotation, and the builds' rates are paired with each other too")
    parser.add_argument("--rounds", type=int, default=2)
    parser.add_argument("--seed", type=int, default=1,
                        help="round r (from 0) seeds both tools with SEED + r (db_bench takes 0 as 'from the clock')")
    parser.add_argument("--steps", default=",".join(STEPS), help="comma-separated, in this order; fillseq first "
                        "(the others run on the database it fills)")
    parser.add_argument("--dir", type=Path, help="where the databases live (default: the system's temporary "
                        "directory; a tmpfs such as /dev/shm takes the disk out of the comparison)")
    parser.add_argument("--results", type=Path, default=Path("ibench-results/db-bench-side-by-side"))
    args = parser.parse_args()
    steps = args.steps.split(",")
    unknown = [s for s in steps if s not in STEPS]
    if unknown or steps[0] != "fillseq":
        parser.error(f"--steps: {unknown or steps[0]} is not one of {', '.join(STEPS)} (fillseq first)")
    if not os.access(args.db_bench, os.X_OK) or Path(args.db_bench).is_dir():
        parser.error(f"db_bench: {args.db_bench} is not an executable file "
                     "(bash benches/build_db_bench.sh builds one)")
    builds = ibench_builds(parser, args.ibench_bin)
    if args.dir is not None and not args.dir.is_dir():
        parser.error(f"--dir: {args.dir} is not a directory")
    if args.num < 1 or args.rounds < 1:
        parser.error(f"--num and --rounds must be at least 1, got {args.num} and {args.rounds}")
    if args.seed < 1:
        parser.error(f"--seed: {args.seed}: must be at least 1 (db_bench seeds from the clock on 0)")

    tools = ["db_bench", *builds]
    got: dict[str, dict[str, list[dict[str, Any]]]] = {tool: {s: [] for s in steps} for tool in tools}
    for round_ in range(args.rounds):
        # Each tool takes each place in turn (two tools alternate).
        order = tools[round_ % len(tools):] + tools[:round_ % len(tools)]
        seed = args.seed + round_
        for tool in order:
            with tempfile.TemporaryDirectory(dir=args.dir) as tmp:
                db = Path(tmp) / "db"
                previous = None
                for step in steps:
                    if step in ibench.tables.KV_READ_STEPS and previous not in (None, *ibench.tables.KV_READ_STEPS):
                        settle(tool, db, args, seed)
                    previous = step
                    if tool == "db_bench":
                        got[tool][step].append(run_db_bench(args.db_bench, db, step, args, seed))
                    else:
                        got[tool][step].append(run_ibench(builds[tool], db, step, args, args.results, seed))
                    print(f"round {round_ + 1} (seed {seed}) {tool} {step}: {got[tool][step][-1]}", flush=True)

    report(got, steps, args)


def ibench_builds(parser: argparse.ArgumentParser, given: list[str]) -> dict[str, Optional[Path]]:
    """The ibench builds by name: each `--ibench-bin [NAME=]PATH` (NAME defaults to
    `ibench` for one, to PATH's file name for several), or the Python package."""
    builds: dict[str, Optional[Path]] = {}
    for item in given:
        name, sep, path = item.partition("=")
        binary = Path(path if sep else item)
        name = name if sep else ("ibench" if len(given) == 1 else binary.name)
        if not os.access(binary, os.X_OK) or binary.is_dir():
            parser.error(f"--ibench-bin: {binary} is not an executable file")
        if not name or name == "db_bench" or name in builds:
            parser.error(f"--ibench-bin: {item}: name each build once (NAME=PATH), other than db_bench")
        builds[name] = binary
    return builds or {"ibench": None}


def report(got: dict[str, dict[str, list[dict[str, Any]]]], steps: list[str], args: argparse.Namespace) -> None:
    """Per ibench build, the table against db_bench; with several builds, their rates paired with each other."""
    builds = [tool for tool in got if tool != "db_bench"]
    versions = {tool: got[tool][steps[0]][0]["version"] for tool in got}
    print()
    print(f"db_bench links RocksDB {versions['db_bench']}; "
          + ", ".join(f"{tool} links RocksDB {versions[tool]}" for tool in builds) + ".")
    print(f"{args.num:,} keys of 16 bytes, {args.value_size}-byte values (ratio 0.5), compression {args.compression}, "
          f"{'universal' if args.universal else 'leveled'} compaction, medians of {args.rounds} rounds "
          f"(seeds {args.seed}–{args.seed + args.rounds - 1})")
    for build in builds:
        print()
        if len(builds) > 1:
            print(f"{build}:")
        header = ["step"] + [f"{tool} {f}" for f in FIELDS for tool in ("db_bench", build)]
        header += [f"ratio {f}" for f in FIELDS] + ["rate ratio, 95% paired interval"]
        print("| " + " | ".join(header) + " |")
        print("|" + "---|" * len(header))
        for step in steps:
            cells = [step]
            ratios = []
            for f in FIELDS:
                a = median([r[f] for r in got["db_bench"][step]])
                b = median([r[f] for r in got[build][step]])
                cells += [fmt(a), fmt(b)]
                ratios.append(fmt(b / a) if a and b is not None else "-")
            print("| " + " | ".join(cells + ratios + [paired_rate_ratio(got, step, "db_bench", build)]) + " |")
    if len(builds) > 1:
        print()
        print("| step | builds | rate ratio, 95% paired interval |")
        print("|---|---|---|")
        for step in steps:
            for i, first in enumerate(builds):
                for other in builds[i + 1:]:
                    print(f"| {step} | {other} / {first} | {paired_rate_ratio(got, step, first, other)} |")
    print()
    print("The paired interval pairs each round's two rates (the tools take turns, so a round's drift moves both; "
          "ibench.stats.ratio_of_pairs): where it holds 1.0 the two rates do not differ at that level.")


def paired_rate_ratio(got: dict[str, dict[str, list[dict[str, Any]]]], step: str, a: str, b: str) -> str:
    """b's rate over a's, round by round, with its interval; '-' with fewer than 2 rounds."""
    pairs = [(x["rate"], y["rate"]) for x, y in zip(got[a][step], got[b][step]) if x["rate"] and y["rate"]]
    if len(pairs) < 2:
        return "-"
    r = ibench.stats.ratio_of_pairs([x for x, _ in pairs], [y for _, y in pairs])
    return f"{r} ({'differ' if r.significant else 'no difference'})"


if __name__ == "__main__":
    main()
