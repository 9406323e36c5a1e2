"""What `profile = "perf"` costs the benchmark: the same workload with and
without it, alternating, round after round, and the throughput ratio (perf
over none) with its 95% interval from the paired rounds
(`ibench.stats.ratio_of_pairs`), with perf's own CPU as a share of the
server's (`profiled.parquet`'s `perf_share`).

Each round loads a fresh table on the local PostgreSQL (l.i0), then runs
l.i1 with one row per commit and qr100, once without a profile and once
with `profile = "perf"` (which first of the two alternates per round, so
neither always runs on the warmer cache). A 2% effect needs about 100
rounds on this 2-core host; a few rounds bound a larger one. The figure
claims no more than its interval resolves.

    python3 benches/profile_overhead.py [ROUNDS] [ROWS]

$IBENCH_POSTGRES is the DSN (default postgres://postgres@127.0.0.1:5432/test).
"""

from __future__ import annotations

import os
import sys
import tempfile

import ibench
from ibench import stats

DSN = os.environ.get("IBENCH_POSTGRES", "postgres://postgres@127.0.0.1:5432/test")
STEPS = {"l.i1": "ips", "qr100": "qps"}


def once(profile: str, rows: int, out: str) -> tuple[dict[str, float], list[float]]:
    """One run: each step's rate, and perf's share of the server CPU per step."""
    r = ibench.run(
        db=DSN, steps=["l.i0", *STEPS], rows_l_i0=rows, rows_l_i1=rows // 4, rows_per_commit_l_i1=1,
        query_seconds=10.0, profile=profile, progress=False, out=out,
    )
    rates = {step: float(r.steps.loc[r.steps["step"] == step, column].iloc[0]) for step, column in STEPS.items()}
    return rates, [float(s) for s in r.profiled["perf_share"].dropna()]


def main(argv: list[str]) -> int:
    try:
        rounds = int(argv[1]) if len(argv) > 1 else 5
        rows = int(argv[2]) if len(argv) > 2 else 20_000
    except ValueError as e:
        print(f"invalid argument: {e}; usage: profile_overhead.py [ROUNDS] [ROWS]", file=sys.stderr)
        return 2
    if rounds < 2 or rows < 100:
        print(f"invalid argument: ROUNDS must be 2 or more ({rounds}), ROWS 100 or more ({rows})", file=sys.stderr)
        return 2
    unavailable = ibench._native.perf_unavailable()
    if unavailable is not None:
        print(f"perf cannot sample here: {unavailable}", file=sys.stderr)
        return 2
    none: dict[str, list[float]] = {s: [] for s in STEPS}
    perf: dict[str, list[float]] = {s: [] for s in STEPS}
    shares: list[float] = []
    with tempfile.TemporaryDirectory() as out:
        for i in range(rounds):
            order = ["off", "perf"] if i % 2 == 0 else ["perf", "off"]
            for profile in order:
                rates, share = once(profile, rows, out)
                for step, rate in rates.items():
                    (perf if profile == "perf" else none)[step].append(rate)
                shares += share
            print(f"round {i + 1}/{rounds} done", file=sys.stderr)
    print(f"{rounds} paired rounds, {rows} rows; profile = perf over profile = off, 95% interval:")
    for step in STEPS:
        r = stats.ratio_of_pairs(none[step], perf[step])
        print(f"  {step}: {r.estimate:.3f} [{r.low:.3f}, {r.high:.3f}]")
    if shares:
        print(f"perf's own CPU while sampling: {100 * max(shares):.3f}% of the server's at most "
              f"({100 * sum(shares) / len(shares):.3f}% on average over {len(shares)} profiles)")
    return 0


if __name__ == "__main__":
    sys.exit(main(sys.argv))
