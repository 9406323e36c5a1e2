"""Why a step differs between two configurations: where the CPU went, what
the server waited on and which of its counters moved, each per operation of
the step, so runs at different rates compare fairly (:func:`explain`).

Everything here reads the result files: ``threads.parquet`` (each step's
CPU by thread role), ``profiles.parquet`` (runs with ``profile = "perf"``),
``waits.parquet`` (``profile`` ``waits`` or ``perf``) and
``counters.parquet``. Runs sharing a label are repeats: their samples,
waits, counter deltas and operations are summed before dividing, so a label
is one pooled figure per operation.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Optional

import numpy as np
import pandas as pd

from ibench import _native, tables
from ibench.results import Results

TOP = 20
"""Rows kept per table by default: the largest changes."""


@dataclass
class Explanation:
    """What differs in ``step`` between the ``base`` label and ``other``,
    per operation. Each table has the base's figure, the other's, their
    ratio (other ÷ base) and change (other − base), largest changes first;
    a table is empty when the runs lack its file."""

    step: str
    base: str
    other: str
    role: str
    roles: pd.DataFrame
    """CPU µs per operation by thread role (``threads.parquet``), indexed by
    (side, kind, role): which side of the server changed, foreground or
    background, and which of its threads; largest changes first."""
    functions: pd.DataFrame
    """CPU µs per operation by function of the ``role``'s profile:
    ``inclusive`` (samples with the function anywhere on the stack) and
    ``exclusive`` (samples in the function itself), each ``base_``,
    ``other_``, ``_ratio`` and ``_change``; ordered by the exclusive change's
    size, then the inclusive one's."""
    paths: pd.DataFrame
    """The same columns, ordered by the inclusive change's size: the call
    paths that changed (frames on nearly every stack but the deepest of
    them, and unresolved ones, left out)."""
    waits: pd.DataFrame
    """µs waited per operation by wait event (all sessions together)."""
    counters: pd.DataFrame
    """The server's counters per operation (their step deltas ÷ operations),
    ordered by relative change (|change| ÷ the larger side)."""
    base_stacks: list[tuple[str, int]]
    """The base's folded stacks, scaled to the other's operations (so a
    differential flame graph of the two compares per operation)."""
    other_stacks: list[tuple[str, int]]
    """The other's folded stacks."""
    side: str = "server"
    """The side whose threads a kind or named ``role`` is of."""

    @property
    def whose(self) -> str:
        """Whose CPU the profile tables hold: ``server``, ``client``, or a
        kind or role with its side (``server foreground``)."""
        return self.role if self.role in SIDES else f"{self.side} {self.role}"

    def flamegraph(self) -> str:
        """A differential flame graph (SVG): the other's stacks, each frame
        red where its CPU per operation grew against the base, blue where it
        shrank. Empty when either side has no profile."""
        if not self.base_stacks or not self.other_stacks:
            return ""
        title = f"{self.step}: {self.other} against {self.base}, CPU per operation ({self.whose})"
        return _native.flamegraph_diff(self.base_stacks, self.other_stacks, title, False)


def _run_ids(steps: pd.DataFrame, group: str, step: str) -> list[str]:
    """The runs of label ``group`` (its repeats) that ran ``step``."""
    rows = steps[(steps["group"] == group) & (steps["step"] == step)]
    return list(dict.fromkeys(rows["run_id"]))


def _ops(steps: pd.DataFrame, run_ids: list[str], step: str) -> float:
    """The step's operations (``cost_ops``) summed over ``run_ids``; NaN when none."""
    rows = steps[steps["run_id"].isin(run_ids) & (steps["step"] == step)]
    total = pd.to_numeric(rows["cost_ops"], errors="coerce").sum(min_count=1)
    return float(total) if pd.notna(total) and total > 0 else float("nan")


def _compare(base: pd.Series, other: pd.Series, name: str, prefix: str = "") -> pd.DataFrame:
    """``base`` and ``other`` (indexed alike by ``name``) side by side, with
    their ratio and change."""
    frame = pd.concat([base.rename(f"{prefix}base"), other.rename(f"{prefix}other")], axis=1).fillna(0.0)
    with np.errstate(divide="ignore", invalid="ignore"):
        frame[f"{prefix}ratio"] = frame[f"{prefix}other"] / frame[f"{prefix}base"].replace(0.0, np.nan)
    frame[f"{prefix}change"] = frame[f"{prefix}other"] - frame[f"{prefix}base"]
    frame.index.name = name
    return frame


SIDES = ("server", "client")
"""The profiles' sides: the server's processes, ibench's own."""

KINDS = ("foreground", "background", "monitor", "ended")
"""The thread kinds (``threads.parquet``)."""


def _of_role(profiles: pd.DataFrame, role: str, side: str) -> pd.DataFrame:
    """The profile rows of ``role``: a side (``server``, ``client``: every
    thread), or a thread kind or named role of ``side``'s threads."""
    if role in SIDES:
        return profiles[profiles["role"] == role]
    p = profiles[profiles["role"] == side]
    column = "thread_kind" if role in KINDS else "thread_role"
    return p[p[column] == role]


def _check_role(profiles: pd.DataFrame, threads: pd.DataFrame, role: str, side: str) -> None:
    """A ConfigError naming ``role`` unless it is a side, a kind or a role
    the runs' threads have; or when a thread role is asked of profiles
    recorded before stacks kept their threads."""
    if role in SIDES:
        return
    if side not in SIDES:
        raise _native.ConfigError(f"invalid side: {side!r}; expected one of {', '.join(SIDES)}")
    named = sorted(set(threads.loc[threads["side"] == side, "role"]) | set(
        profiles.loc[profiles["role"] == side, "thread_role"].dropna()))
    if role not in KINDS and role not in named:
        raise _native.ConfigError(
            f"invalid role: {role!r}; expected {', '.join(SIDES)}, a kind ({', '.join(KINDS)}) or a role of the "
            f"runs' {side} threads: {', '.join(named) or '(none recorded)'}")
    mine = profiles[profiles["role"] == side]
    if len(mine) and mine["thread_kind"].isna().any():
        runs = sorted(set(mine.loc[mine["thread_kind"].isna(), "run_id"]))
        raise _native.ConfigError(
            f"invalid role: {role!r} needs each stack's threads, which the profiles of {', '.join(runs)} do not "
            "have (recorded by an older ibench): explain them with role='server' or role='client'")


def _seconds(p: pd.DataFrame) -> pd.Series:
    """Each profile row's CPU seconds: ``cpu_s`` (its threads' measured CPU
    shared out over their samples), or, in profiles recorded without it,
    samples ÷ frequency."""
    nominal = p["samples"].astype(float) / p["frequency_hz"].astype(float)
    if "cpu_s" not in p.columns:
        return nominal
    return p["cpu_s"].astype(float).where(p["cpu_s"].notna(), nominal)


def _cpu_by_stack(profiles: pd.DataFrame, run_ids: list[str], step: str, role: str, side: str = "server") -> pd.Series:
    """CPU seconds by stack of ``role``'s profiles of ``step`` in ``run_ids``."""
    p = _of_role(profiles[profiles["run_id"].isin(run_ids) & (profiles["step"] == step)], role, side)
    return _seconds(p).groupby(p["stack"]).sum()


def _roles(r: list[Results], ids: tuple[list[str], list[str]], ops: tuple[float, float], step: str) -> pd.DataFrame:
    """CPU µs per operation by (side, kind, role), both sides, largest changes first."""
    threads = pd.concat([x.threads for x in r], ignore_index=True)
    threads = threads[threads["step"] == step]

    def per_op(run_ids: list[str], n: float) -> pd.Series:
        t = threads[threads["run_id"].isin(run_ids)]
        return t.groupby(["side", "kind", "role"])["cpu_s"].sum() * 1e6 / n

    frame = _compare(per_op(ids[0], ops[0]), per_op(ids[1], ops[1]), "role")
    if frame.empty:
        return frame
    frame.index.names = ["side", "kind", "role"]
    return frame.reindex(frame["change"].abs().sort_values(ascending=False, kind="stable").index)


def _entry_frames(profiles: pd.DataFrame, run_ids: list[str], step: str, role: str, side: str) -> set[str]:
    """Frames on nearly every stack (:data:`ROOTLIKE`) of each thread role
    they appear in, on both sides' runs (``run_ids``): a process's entry
    frames (main, PostgresMain), which every one of its threads' stacks has
    whatever changed. Empty for profiles without their threads."""
    p = _of_role(profiles[profiles["run_id"].isin(run_ids) & (profiles["step"] == step)], role, side)
    if p.empty or p["thread_role"].isna().any():
        return set()
    seconds = _seconds(p)
    totals = seconds.groupby(p["thread_role"]).sum()
    on: dict[tuple[str, str], float] = {}
    for stack, thread, s in zip(p["stack"], p["thread_role"], seconds):
        for f in set(str(stack).split(";")[1:]):
            on[(f, thread)] = on.get((f, thread), 0.0) + s
    shares: dict[str, list[float]] = {}
    for (f, thread), s in on.items():
        shares.setdefault(f, []).append(s / totals[thread] if totals[thread] > 0 else 0.0)
    return {f for f, xs in shares.items() if all(x >= ROOTLIKE for x in xs)}


def _by_function(cpu: pd.Series, ops: float) -> tuple[pd.Series, pd.Series]:
    """Inclusive and exclusive CPU µs per operation by function. A stack's
    first frame is its thread's name, not a function; a function recursing
    counts once per stack."""
    inclusive: dict[str, float] = {}
    exclusive: dict[str, float] = {}
    for stack, seconds in cpu.items():
        frames = str(stack).split(";")[1:]
        if not frames:
            continue
        for f in set(frames):
            inclusive[f] = inclusive.get(f, 0.0) + seconds
        exclusive[frames[-1]] = exclusive.get(frames[-1], 0.0) + seconds
    per_op = 1e6 / ops
    return pd.Series(inclusive, dtype=float) * per_op, pd.Series(exclusive, dtype=float) * per_op


def _function_table(base: tuple[pd.Series, float], other: tuple[pd.Series, float]) -> pd.DataFrame:
    """Every function's inclusive and exclusive CPU µs per operation, both sides."""
    (b_cpu, b_ops), (o_cpu, o_ops) = base, other
    b_incl, b_excl = _by_function(b_cpu, b_ops)
    o_incl, o_excl = _by_function(o_cpu, o_ops)
    frame = pd.concat(
        [_compare(b_incl, o_incl, "function", "inclusive_"), _compare(b_excl, o_excl, "function", "exclusive_")],
        axis=1,
    )
    for c in ("exclusive_base", "exclusive_other", "exclusive_change"):
        frame[c] = frame[c].fillna(0.0)
    return frame


def _functions(frame: pd.DataFrame, top: int) -> pd.DataFrame:
    """The functions whose own (exclusive) CPU per operation changed most."""
    key = pd.DataFrame({"e": frame["exclusive_change"].abs(), "i": frame["inclusive_change"].abs()})
    order = key.sort_values(["e", "i"], ascending=False).index
    return frame.loc[order].head(top)


ROOTLIKE = 0.9
"""A frame on at least this share of both sides' CPU (main, the server's
loop) says nothing by its inclusive change: :func:`_paths` leaves it out,
unless it is the deepest such frame (where nearly all the CPU goes)."""


def _depths(cpus: tuple[pd.Series, pd.Series]) -> pd.Series:
    """Each function's mean position in its stacks (0: the outermost
    function), weighted by CPU, over both sides."""
    weight: dict[str, float] = {}
    position: dict[str, float] = {}
    for cpu in cpus:
        for stack, seconds in cpu.items():
            for i, f in enumerate(str(stack).split(";")[1:]):
                weight[f] = weight.get(f, 0.0) + seconds
                position[f] = position.get(f, 0.0) + i * seconds
    return pd.Series({f: position[f] / w for f, w in weight.items() if w > 0}, dtype=float)


def _paths(frame: pd.DataFrame, depths: pd.Series, top: int, entry: set[str] = set()) -> pd.DataFrame:
    """The functions whose inclusive CPU per operation changed most: the
    call paths (XLogFlush above fdatasync) that the exclusive ranking puts
    below the kernel's leaves. Left out: frames on nearly every stack of
    both sides (:data:`ROOTLIKE`), or of every thread role they appear in
    (``entry``: main, PostgresMain, which every backend's stack has), but
    the deepest of them, and unresolved ones (``[postgres]``)."""
    totals = (frame["exclusive_base"].sum(), frame["exclusive_other"].sum())
    rootlike = (frame["inclusive_base"] >= ROOTLIKE * totals[0]) & (frame["inclusive_other"] >= ROOTLIKE * totals[1])
    rootlike |= pd.Series(frame.index.isin(list(entry)), index=frame.index)
    if rootlike.any():
        # The deepest frame on nearly every stack is where the CPU goes
        # (a server's statement loop, the function that burns): kept.
        rootlike[depths.reindex(frame.index[rootlike]).idxmax()] = False
    unresolved = pd.Series(frame.index.astype(str), index=frame.index).str.startswith("[")
    kept = frame[~(rootlike | unresolved)]
    order = kept["inclusive_change"].abs().sort_values(ascending=False, kind="stable").index
    return kept.loc[order].head(top)


def _waits(r: list[Results], ids: tuple[list[str], list[str]], ops: tuple[float, float], step: str, top: int) -> pd.DataFrame:
    waits = pd.concat([x.waits for x in r], ignore_index=True)
    waits = waits[waits["step"] == step]

    def per_op(run_ids: list[str], n: float) -> pd.Series:
        w = waits[waits["run_id"].isin(run_ids)]
        return w.groupby("event")["wait_s"].sum() * 1e6 / n

    frame = _compare(per_op(ids[0], ops[0]), per_op(ids[1], ops[1]), "event")
    return frame.reindex(frame["change"].abs().sort_values(ascending=False).index).head(top)


def _counters(r: list[Results], ids: tuple[list[str], list[str]], ops: tuple[float, float], step: str, top: int) -> pd.DataFrame:
    counters = pd.concat([x.counters for x in r], ignore_index=True)
    counters = counters[(counters["step"] == step) & counters["delta"].notna()]
    counters = counters.assign(counter=counters["source"] + ":" + counters["name"])

    def per_op(run_ids: list[str], n: float) -> pd.Series:
        c = counters[counters["run_id"].isin(run_ids)]
        return c.groupby("counter")["delta"].sum() / n

    frame = _compare(per_op(ids[0], ops[0]), per_op(ids[1], ops[1]), "counter")
    larger = np.maximum(frame["base"].abs(), frame["other"].abs())
    frame = frame[larger > 0]
    relative = (frame["change"].abs() / larger[larger > 0]).rename("r")
    key = pd.concat([relative, frame["change"].abs().rename("a")], axis=1)
    return frame.loc[key.sort_values(["r", "a"], ascending=False).index].head(top)


def _scaled(cpu: pd.Series, ops: float, to_ops: float, hz: float) -> list[tuple[str, int]]:
    """Stacks as samples at ``hz``, scaled from ``ops`` operations to
    ``to_ops`` (rounded; stacks that round to nothing dropped)."""
    counts = (cpu * hz * to_ops / ops).round()
    return [(str(s), int(n)) for s, n in counts.items() if n > 0]


def explain(
    runs: tables.RunsLike, step: str, base: Optional[str] = None, other: Optional[str] = None,
    role: str = "server", top: int = TOP, side: str = "server",
) -> Explanation:
    """Why ``step`` differs between label ``base`` (default: the first) and
    ``other`` (default: the only other label), per operation of the step:
    the CPU µs per operation of each thread role (which side of the server
    changed), the functions whose CPU µs per operation changed most, the
    wait events whose µs per operation changed most, and the server
    counters per operation that changed most; ``top`` rows each.

    The functions are ``role``'s: ``server`` (every thread of the server's
    processes), ``client`` (ibench's own process), a thread kind of
    ``side``'s threads (``foreground``: those serving the benchmark's
    connections; ``background``: those working behind them; ``monitor``),
    or one named role of them (``checkpointer``, ``walwriter``,
    ``rocksdb:low``: :attr:`Results.threads` names them).

    A function's CPU µs per operation is the CPU its samples stand for ÷
    the step's operations × 10⁶: each thread's measured CPU shared out over
    its samples (older profiles: 1 ÷ frequency s a sample)."""
    loaded = tables._loaded(runs)
    steps = tables._steps(loaded)
    groups = list(dict.fromkeys(steps["group"]))
    base = base if base is not None else groups[0]
    if base not in groups:
        raise _native.ConfigError(f"invalid base: no run labelled {base!r}; labels are {groups}")
    if other is None:
        others = [g for g in groups if g != base]
        if len(others) != 1:
            raise _native.ConfigError(f"invalid other: say which label to explain against {base!r}, one of {others}")
        other = others[0]
    if other not in groups:
        raise _native.ConfigError(f"invalid other: no run labelled {other!r}; labels are {groups}")
    ids = (_run_ids(steps, base, step), _run_ids(steps, other, step))
    if not ids[0] or not ids[1]:
        raise _native.ConfigError(f"invalid step: {step!r} did not run under both {base!r} and {other!r}")
    ops = (_ops(steps, ids[0], step), _ops(steps, ids[1], step))
    profiles = pd.concat([x.profiles for x in loaded], ignore_index=True)
    threads = pd.concat([x.threads for x in loaded], ignore_index=True)
    _check_role(profiles, threads, role, side)
    cpu = (_cpu_by_stack(profiles, ids[0], step, role, side), _cpu_by_stack(profiles, ids[1], step, role, side))
    hz = profiles["frequency_hz"].astype(float).max() if len(profiles) else 99.0
    table = _function_table((cpu[0], ops[0]), (cpu[1], ops[1]))
    entry = _entry_frames(profiles, ids[0] + ids[1], step, role, side)
    return Explanation(
        step=step,
        base=base,
        other=other,
        role=role,
        roles=_roles(loaded, ids, ops, step),
        functions=_functions(table, top),
        paths=_paths(table, _depths(cpu), top, entry),
        waits=_waits(loaded, ids, ops, step, top),
        counters=_counters(loaded, ids, ops, step, top),
        base_stacks=_scaled(cpu[0], ops[0], ops[1], hz),
        other_stacks=_scaled(cpu[1], ops[1], ops[1], hz),
        side=side,
    )
