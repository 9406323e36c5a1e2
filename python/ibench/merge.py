"""Merging the shards of one run into one run directory (``ibench merge``).

A sharded run's shards each write an ordinary run directory for their
clients (``ibench run --shard I/N``, or the workers of
:func:`ibench.distributed.run`). The merge gives the run directory a
one-process run would have written, with the same schema:

- counts, rows and clients are summed, rates recomputed over the step's
  elapsed time (the longest shard's, from the common start);
- latency percentiles come from the shards' histograms merged (never from
  averaged percentiles), per step and per interval;
- per-client interval rows are kept as they are (clients are disjoint); the
  all-clients rows of each interval are summed and their percentiles merged;
- client CPU is summed over the shards; host CPU and context switches over the
  distinct hosts (shards on one host share its counters: counted once);
- the server's CPU, memory and disks come from the server host's probe
  (``ServerProbe``) when there is one, else they stay null, as for any remote
  server; its counters, gauges and waits come from shard 0, which reads
  them; its CPU profiles from the probe (``profile = "perf"``: it samples
  the server's processes on their host), else from shard 0; ibench's own
  (``profile_client``) from every shard;
- the CPU by thread role (``threads``): the server's threads from the
  server host's probe (else none: shards on the server's host would each
  count them), ibench's own summed over the shards, role by role; the
  profiles, waits and threads' per-operation figures divide by the merged
  step's operations;
- a ``shards`` table says which shard ran where: shard, worker, host,
  clients, clock offset against the coordinator, status.

Runs whose configurations (other than the shard, the start instant, the DSN
and the label) or seeds differ are refused, as are missing or repeated shards.
"""

from __future__ import annotations

import argparse
import json
import os
import secrets
import sys
import time
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any, Iterable, Mapping, Optional, Sequence

import pyarrow as pa
import pyarrow.compute  # noqa: F401  (pa.compute)
import pyarrow.parquet as pq

from ibench import _native
from ibench._cli import exit_code

TABLES = (
    "runs", "steps", "intervals", "histograms", "config", "counters", "gauges", "disks",
    "waits", "profiles", "profiled", "threads",
)
"""The tables of a run directory, each one Parquet file."""

# What may differ between the shards of one run.
_SHARD_KEYS = ("shard", "start_at", "db", "label", "password_file")

# Worst first: the merged step or run takes the worst of its shards'.
_STATUS_ORDER = ("error", "interrupted", "timeout", "running", "ok")

SHARDS_SCHEMA = pa.schema(
    [
        pa.field("run_id", pa.string(), nullable=False),
        pa.field("shard", pa.uint32(), nullable=False),
        pa.field("shards", pa.uint32(), nullable=False),
        pa.field("shard_run_id", pa.string(), nullable=False),
        pa.field("worker", pa.string(), nullable=True),
        pa.field("host", pa.string(), nullable=False),
        pa.field("first_client", pa.uint32(), nullable=False),
        pa.field("clients", pa.uint32(), nullable=False),
        pa.field("target", pa.string(), nullable=False),
        pa.field("clock_offset_s", pa.float64(), nullable=True),
        pa.field("clock_rtt_s", pa.float64(), nullable=True),
        pa.field("status", pa.string(), nullable=False),
        pa.field("error", pa.string(), nullable=True),
    ]
)
"""``shards.parquet`` of a merged run (docs/results.md)."""


@dataclass
class ShardInfo:
    """What the coordinator knows of a shard beyond its files."""

    worker: Optional[str] = None
    clock_offset_s: Optional[float] = None
    clock_rtt_s: Optional[float] = None


@dataclass
class _Shard:
    dir: Path
    index: int
    count: int
    tables: dict[str, pa.Table]
    run: dict[str, Any]
    config: dict[str, Any]
    info: ShardInfo = field(default_factory=ShardInfo)

    def rows(self, name: str) -> list[dict[str, Any]]:
        rows: list[dict[str, Any]] = self.tables[name].to_pylist()
        return rows

    @property
    def host(self) -> str:
        return str(self.run["host"])


def _read(dir: Path) -> dict[str, pa.Table]:
    if not (dir / "runs.parquet").is_file():
        raise _native.IoError(f"cannot merge {dir}: not a run directory (no runs.parquet)")
    return {name: pq.read_table(dir / f"{name}.parquet") for name in TABLES if (dir / f"{name}.parquet").is_file()}


def _shard_of(dir: Path, info: Optional[ShardInfo]) -> _Shard:
    tables = _read(dir)
    run = tables["runs"].to_pylist()[0]
    config = json.loads(run["config"])
    text = config.get("shard")
    if not text:
        raise _native.ConfigError(f"cannot merge {dir}: run {run['run_id']} is not a shard (it ran with no --shard)")
    index, count = (int(x) for x in str(text).split("/"))
    return _Shard(dir, index, count, tables, run, config, info or ShardInfo())


def _check(shards: Sequence[_Shard]) -> None:
    """Refuses shards that are not the N shards of one configuration."""
    first = shards[0]
    counts = {s.count for s in shards}
    if len(counts) != 1:
        raise _native.ConfigError(f"cannot merge: the runs are shards of different splits ({sorted(counts)} shards)")
    seen = sorted(s.index for s in shards)
    if seen != list(range(first.count)):
        raise _native.ConfigError(
            f"cannot merge: a run of {first.count} shards needs shards 0..{first.count - 1} once each, got {seen}"
        )
    same = {k: v for k, v in first.config.items() if k not in _SHARD_KEYS}
    for s in shards[1:]:
        if s.run["seed"] != first.run["seed"]:
            raise _native.ConfigError(
                f"cannot merge: {s.dir} has seed {s.run['seed']}, {first.dir} seed {first.run['seed']}"
            )
        if s.run["dbms"] != first.run["dbms"]:
            raise _native.ConfigError(f"cannot merge: {s.dir} ran on {s.run['dbms']}, {first.dir} on {first.run['dbms']}")
        other = {k: v for k, v in s.config.items() if k not in _SHARD_KEYS}
        differ = sorted(k for k in set(same) | set(other) if same.get(k) != other.get(k))
        if differ:
            k = differ[0]
            raise _native.ConfigError(
                f"cannot merge: the configurations differ in {', '.join(differ)} "
                f"({k} = {same.get(k)!r} in {first.dir}, {other.get(k)!r} in {s.dir})"
            )


def _worst(statuses: Iterable[str]) -> str:
    found = list(statuses)
    for status in _STATUS_ORDER:
        if status in found:
            return status
    return found[0] if found else "ok"


def _sum(values: Iterable[Any]) -> Any:
    present = [v for v in values if v is not None]
    return sum(present) if present else None


def _per_host(shards: Sequence[_Shard], value: Any) -> Any:
    """A host-wide counter summed over distinct hosts: shards on one host
    read the same counters, so each host counts once (its largest reading)."""
    by_host: dict[str, Any] = {}
    for s in shards:
        v = value(s)
        if v is not None:
            by_host[s.host] = max(v, by_host.get(s.host, v))
    return sum(by_host.values()) if by_host else None


def _merged_histogram(blobs: list[bytes]) -> Optional[bytes]:
    return _native.merge_histograms(blobs) if blobs else None


def _percentiles(blob: Optional[bytes], quantiles: Sequence[float]) -> list[Optional[float]]:
    if blob is None:
        return [None] * len(quantiles)
    return list(_native.histogram_percentiles(blob, list(quantiles)))


class _Merge:
    def __init__(self, shards: Sequence[_Shard], server: Optional[Path], run_id: str, errors: Mapping[str, str]):
        self.shards = sorted(shards, key=lambda s: s.index)
        self.first = self.shards[0]
        self.server = _read(server) if server is not None else None
        self.run_id = run_id
        self.errors = dict(errors)
        self.histograms: dict[tuple[str, str, str, Optional[float]], list[bytes]] = {}
        for s in self.shards:
            if "histograms" not in s.tables:
                continue
            for h in s.rows("histograms"):
                self.histograms.setdefault((h["step"], h["op"], h["time"], h["t_s"]), []).append(h["histogram"])

    # -- steps -------------------------------------------------------------

    def step_names(self) -> list[str]:
        names: list[str] = []
        for s in self.shards:
            for r in s.rows("steps"):
                if r["step"] not in names:
                    names.append(r["step"])
        # A step the coordinator reports failed before any shard wrote it.
        for step in self.errors:
            if step not in names:
                names.append(step)
        order = self.first.config.get("steps", [])
        return sorted(names, key=lambda n: order.index(n) if n in order else len(order))

    def server_step(self, step: str) -> Optional[dict[str, Any]]:
        if self.server is None:
            return None
        rows: list[dict[str, Any]] = self.server["steps"].to_pylist()
        return next((r for r in rows if r["step"] == step), None)

    def step_row(self, step: str) -> Optional[dict[str, Any]]:
        parts = [(s, r) for s in self.shards for r in s.rows("steps") if r["step"] == step]
        if not parts:
            return None
        rows = [r for _, r in parts]
        missing = [s for s in self.shards if s not in [p for p, _ in parts]]
        out = dict(rows[0])
        out["run_id"] = self.run_id
        errors = [f"shard {s.index} ({s.host}): {r['error']}" for s, r in parts if r["error"]]
        errors += [f"shard {s.index} ({s.host}) did not finish the step" for s in missing]
        if step in self.errors:
            errors.insert(0, self.errors[step])
        statuses = [r["status"] for r in rows] + ["error"] * (len(missing) + (step in self.errors))
        out["status"] = _worst(statuses)
        out["error"] = "; ".join(errors) or None
        out["started_at"] = min(r["started_at"] for r in rows)
        elapsed = max(r["elapsed_s"] for r in rows)
        out["elapsed_s"] = elapsed
        for name in ("clients", "inserts", "deletes", "queries", "errors", "retries", "live_rows", "live_rows_max"):
            out[name] = sum(r[name] for r in rows)
        for name in ("found", "target_ips", "cost_ops", "client_cpu_s", "client_sys_s", "events", "statement_rows"):
            out[name] = _sum(r.get(name) for r in rows)
        rate = (lambda n: n / elapsed) if elapsed > 0 else (lambda n: 0.0)
        out["ips"], out["dps"], out["qps"] = rate(out["inserts"]), rate(out["deletes"]), rate(out["queries"])
        if "eps" in out:
            out["eps"] = None if out["events"] is None else rate(out["events"])
        indexed = _sum(
            None if r["indexed_rows_per_s"] is None else round(r["indexed_rows_per_s"] * r["elapsed_s"]) for r in rows
        )
        out["indexed_rows_per_s"] = None if indexed is None else rate(indexed)
        if out["target_ips"] is None:
            out["sla_ok"] = None
        elif out["status"] == "ok":
            out["sla_ok"] = bool(out["ips"] >= 0.95 * out["target_ips"])
        else:
            out["sla_ok"] = None if out["status"] == "interrupted" else False
        verdicts = [r["verified"] for r in rows]
        out["verified"] = False if False in verdicts else (True if verdicts and all(verdicts) else None)
        out["verify_error"] = "; ".join(f"shard {s.index}: {r['verify_error']}" for s, r in parts if r["verify_error"]) or None
        out["verify_s"] = max((r["verify_s"] for r in rows if r["verify_s"] is not None), default=None)
        # The server's sizes: before from the first shard, after from the shard that ended last.
        last = max(rows, key=lambda r: r["started_at"].timestamp() + r["elapsed_s"])
        for name in ("db_size_bytes", "tables_size_bytes", "datadir_size_bytes"):
            out[name] = last[name]
        # The server's threads by kind: the probe's, as its CPU (else unknown).
        server = self.server_step(step)
        for name in ("fg_cpu_s", "bg_cpu_s"):
            if name in out:
                out[name] = None if server is None else server.get(name)
        self.costs(step, out, [s for s, _ in parts], rows)
        self.latencies(step, out)
        return out

    def costs(self, step: str, out: dict[str, Any], shards: list[_Shard], rows: list[dict[str, Any]]) -> None:
        by_shard = {s.index: r for s, r in zip(shards, rows)}
        server = self.server_step(step)
        hosts = {s.host for s in shards}
        host_cpu = _per_host(shards, lambda s: by_shard[s.index].get("host_cpu_s"))
        switches = _per_host(shards, lambda s: by_shard[s.index].get("context_switches"))
        if server is not None and self.server is not None:
            server_host = self.server["runs"].to_pylist()[0]["host"]
            if server_host not in hosts:
                host_cpu = _sum([host_cpu, server["host_cpu_s"]])
                switches = _sum([switches, server["context_switches"]])
        out["host_cpu_s"], out["context_switches"] = host_cpu, switches
        for name in ("server_cpu_s", "disk_reads", "disk_writes", "disk_read_bytes", "disk_write_bytes"):
            out[name] = None if server is None else server[name]
        out["server_max_rss_bytes"] = None if server is None else server["server_max_rss_bytes"]
        disk = None
        if out["disk_reads"] is not None:
            disk = (out["disk_reads"], out["disk_writes"], out["disk_read_bytes"], out["disk_write_bytes"])
        costs = _native.step_costs(
            out["host_cpu_s"],
            out["client_cpu_s"],
            out["server_cpu_s"],
            out["context_switches"],
            disk,
            out["cost_ops"],
            out["elapsed_s"],
        )
        out.update(zip(_native.COST_COLUMNS, costs))
        for kind in ("fg", "bg"):
            if f"{kind}_cpu_us_per_op" in out:
                cpu, n = out.get(f"{kind}_cpu_s"), out["cost_ops"]
                out[f"{kind}_cpu_us_per_op"] = cpu / n * 1e6 if cpu is not None and n else None

    def latencies(self, step: str, out: dict[str, Any]) -> None:
        quantiles = [q for q, _ in _native.PERCENTILES]
        for op in ("insert", "delete", "query", "event", "statement"):
            for time_kind, short in (("response", "resp"), ("service", "svc")):
                blob = _merged_histogram(self.histograms.get((step, op, time_kind, None), []))
                for (_, name), value in zip(_native.PERCENTILES, _percentiles(blob, quantiles)):
                    column = f"{op}_{short}_{name}_us"
                    if column in out:
                        out[column] = value
        lag_quantiles = [q for q, _ in _native.LAG_STATS]
        for op in ("insert", "delete", "event"):
            blob = _merged_histogram(self.histograms.get((step, op, "lag", None), []))
            for (_, name), value in zip(_native.LAG_STATS, _percentiles(blob, lag_quantiles)):
                column = f"{op}_lag_{name}_us"
                if column in out:
                    out[column] = value

    # -- tables ------------------------------------------------------------

    def steps(self) -> list[dict[str, Any]]:
        rows = [self.step_row(step) for step in self.step_names()]
        return [r for r in rows if r is not None]

    def intervals(self) -> list[dict[str, Any]]:
        out: list[dict[str, Any]] = []
        together: dict[tuple[str, str, float], list[dict[str, Any]]] = {}
        hosts: dict[tuple[str, float], list[tuple[_Shard, dict[str, Any]]]] = {}
        for s in self.shards:
            for r in s.rows("intervals"):
                if r["op"] == "host":
                    hosts.setdefault((r["step"], r["t_s"]), []).append((s, r))
                elif r["client"] is not None:
                    out.append({**r, "run_id": self.run_id})
                else:
                    together.setdefault((r["step"], r["op"], r["t_s"]), []).append(r)
        for (step, op, t_s), rows in together.items():
            row = dict(rows[0])
            row["run_id"] = self.run_id
            row["count"] = sum(r["count"] for r in rows)
            row["length_s"] = max(r["length_s"] for r in rows)
            row["rate"] = row["count"] / row["length_s"] if row["length_s"] > 0 else 0.0
            blob = _merged_histogram(self.histograms.get((step, op, "response", t_s), []))
            if blob is not None and row["count"] > 0:
                row["p50_us"], row["p99_us"], row["max_us"] = _percentiles(blob, [50.0, 99.0, 100.0])
            # Lag per interval is kept per client only: the all-clients
            # median and p99 cannot be merged from percentiles (null), the max can.
            lag_max = [r["lag_max_us"] for r in rows if r["lag_max_us"] is not None]
            row["lag_p50_us"] = row["lag_p99_us"] = None
            row["lag_max_us"] = max(lag_max) if lag_max else None
            out.append(row)
        server_rows: dict[tuple[str, float], dict[str, Any]] = {}
        if self.server is not None:
            for r in self.server["intervals"].to_pylist():
                if r["op"] == "host":
                    server_rows[(r["step"], r["t_s"])] = r
        for (step, t_s), parts in hosts.items():
            row = dict(parts[0][1])
            row["run_id"] = self.run_id
            row["length_s"] = max(r["length_s"] for _, r in parts)
            row["client_cpu_pct"] = _sum(r["client_cpu_pct"] for _, r in parts)
            by_shard = {s.index: r for s, r in parts}
            for name in ("host_cpu_pct", "cs_per_s"):
                row[name] = _per_host([s for s, _ in parts], lambda s, n=name: by_shard[s.index][n])
            server = server_rows.get((step, t_s))
            for name in ("server_cpu_pct", "server_rss_mb", "reads_per_s", "writes_per_s", "read_mb_s", "write_mb_s"):
                row[name] = None if server is None else server[name]
            out.append(row)
        return out

    def histograms_rows(self) -> list[dict[str, Any]]:
        out = []
        counts: dict[tuple[str, str, str, Optional[float]], int] = {}
        template: dict[tuple[str, str, str, Optional[float]], dict[str, Any]] = {}
        for s in self.shards:
            for h in s.rows("histograms") if "histograms" in s.tables else []:
                key = (h["step"], h["op"], h["time"], h["t_s"])
                counts[key] = counts.get(key, 0) + h["count"]
                template.setdefault(key, h)
        for key, h in template.items():
            out.append({**h, "run_id": self.run_id, "count": counts[key], "histogram": _native.merge_histograms(self.histograms[key])})
        return out

    def run_row(self, steps: list[dict[str, Any]]) -> dict[str, Any]:
        runs = [s.run for s in self.shards]
        row = dict(self.first.run)
        row["run_id"] = self.run_id
        config = dict(self.first.config)
        config["shard"] = None
        row["config"] = json.dumps(config)
        row["started_at"] = min(r["started_at"] for r in runs)
        step_statuses = [s["status"] for s in steps if s["status"] not in ("ok", "timeout")]
        row["status"] = _worst([r["status"] for r in runs] + step_statuses)
        errors = [f"shard {s.index} ({s.host}): {s.run['error']}" for s in self.shards if s.run["error"]]
        errors = list(self.errors.values()) + errors
        row["error"] = "; ".join(errors) or None
        warnings: list[str] = []
        for s in self.shards:
            warnings += [f"shard {s.index} ({s.host}): {w}" for w in json.loads(s.run["warnings"])]
        row["warnings"] = json.dumps(warnings)
        verdicts = [r["verified"] for r in runs]
        row["verified"] = False if False in verdicts else (True if all(v is True for v in verdicts) else None)
        row["verify_error"] = "; ".join(f"shard {s.index}: {s.run['verify_error']}" for s in self.shards if s.run["verify_error"]) or None
        return row

    def shards_rows(self) -> list[dict[str, Any]]:
        out = []
        for s in self.shards:
            clients = int(s.config["clients"])
            first = s.index * clients // s.count
            out.append(
                {
                    "run_id": self.run_id,
                    "shard": s.index,
                    "shards": s.count,
                    "shard_run_id": s.run["run_id"],
                    "worker": s.info.worker,
                    "host": s.host,
                    "first_client": first,
                    "clients": (s.index + 1) * clients // s.count - first,
                    "target": s.run["target"],
                    "clock_offset_s": s.info.clock_offset_s,
                    "clock_rtt_s": s.info.clock_rtt_s,
                    "status": s.run["status"],
                    "error": s.run["error"],
                }
            )
        return out

    def by_role_tables(self, ops: Mapping[str, Any]) -> dict[str, pa.Table]:
        """The waits (shard 0's), profiles and what they sampled (the
        server's from the server host's worker, else from shard 0; ibench's
        own from every shard) and the CPU by
        thread role (the server's from the server probe, ibench's own
        summed over the shards), each row's ``ops`` the merged step's."""
        out: dict[str, pa.Table] = {}
        if "waits" in self.first.tables:
            out["waits"] = self._with_ops(self.first.tables["waits"], ops)
        for name in ("profiles", "profiled"):
            # The server's profile: the server host's worker's, else shard 0's.
            probed = self.server_table(name)
            parts = [probed.filter(pa.compute.equal(probed.column("role"), "server"))] if probed is not None else []
            parts += [
                t.filter(pa.compute.equal(t.column("role"), "client")) if s.index > 0 or probed is not None else t
                for s in self.shards
                if (t := s.tables.get(name)) is not None
            ]
            if parts:
                out[name] = self._with_ops(pa.concat_tables(parts, promote_options="default"), ops)
        threads = self.threads(ops)
        if threads is not None:
            out["threads"] = threads
        return out

    def threads(self, ops: Mapping[str, Any]) -> Optional[pa.Table]:
        """``threads``: the server's rows from the probe, ibench's own summed
        over the shards by (step, kind, role)."""
        found = [s.tables["threads"] for s in self.shards if "threads" in s.tables]
        if not found:
            return None
        schema = found[0].schema
        summed: dict[tuple[str, str, str], dict[str, Any]] = {}
        for t in found:
            for r in t.to_pylist():
                if r["side"] != "client":
                    continue
                key = (r["step"], r["kind"], r["role"])
                if key not in summed:
                    summed[key] = dict(r)
                    continue
                for c in ("threads", "cpu_s", "user_s", "sys_s"):
                    summed[key][c] += r[c]
        rows = list(summed.values())
        server = self.server_table("threads")
        if server is not None:
            rows += [r for r in server.to_pylist() if r["side"] == "server"]
        for r in rows:
            n = ops.get(r["step"])
            r["ops"] = n
            r["cpu_us_per_op"] = r["cpu_s"] / n * 1e6 if n else None
        return self._with_ops(pa.Table.from_pylist(rows, schema=schema), ops)

    def _with_ops(self, table: pa.Table, ops: Mapping[str, Any]) -> pa.Table:
        """``table`` with the merged run's id and each row's ``ops`` its step's merged operations."""
        table = _with_run_id(table, self.run_id)
        i = table.schema.get_field_index("ops")
        if i < 0:
            return table
        steps = table.column("step").to_pylist()
        return table.set_column(i, table.schema.field(i), pa.array([ops.get(s) for s in steps], pa.uint64()))

    def server_table(self, name: str) -> Optional[pa.Table]:
        if self.server is None or name not in self.server:
            return None
        return self.server[name]


def new_run_id() -> str:
    """A run id that sorts by start time to the millisecond, as the Rust side
    makes them: the UTC second, the millisecond in 3 hex digits, 3 random ones."""
    now = time.time_ns() // 1_000_000
    second, ms = divmod(now, 1000)
    return time.strftime("%Y%m%dT%H%M%SZ", time.gmtime(second)) + f"-{ms:03x}" + secrets.token_hex(2)[:3]


def _write(dir: Path, name: str, table: pa.Table) -> None:
    # Replaced atomically, as the Rust side writes: a reader never sees half a file.
    tmp = dir / f".{name}.parquet.tmp"
    pq.write_table(table, tmp)
    os.replace(tmp, dir / f"{name}.parquet")


def _with_run_id(table: pa.Table, run_id: str) -> pa.Table:
    i = table.schema.get_field_index("run_id")
    return table.set_column(i, table.schema.field(i), pa.array([run_id] * table.num_rows, pa.string()))


def merge(
    shard_dirs: Sequence[str | Path],
    out: str | Path,
    *,
    server: str | Path | None = None,
    infos: Optional[Mapping[int, ShardInfo]] = None,
    errors: Optional[Mapping[str, str]] = None,
    run_id: Optional[str] = None,
) -> Path:
    """Merges the shard run directories ``shard_dirs`` into the run directory
    ``out`` (created; its name is the run id unless ``run_id`` is given) and
    returns it. ``server`` is the server host probe's directory, ``infos``
    the coordinator's facts per shard index (worker, clock offset),
    ``errors`` step errors the shards could not record themselves (a worker
    that died mid-step)."""
    infos = infos or {}
    shards = [_shard_of(Path(d), None) for d in shard_dirs]
    if not shards:
        raise _native.ConfigError("cannot merge: no run directory given")
    for s in shards:
        s.info = infos.get(s.index, ShardInfo())
    _check(shards)
    out = Path(out)
    out.mkdir(parents=True, exist_ok=True)
    m = _Merge(shards, Path(server) if server is not None else None, run_id or out.name, errors or {})
    first = m.first.tables
    steps = m.steps()
    tables: dict[str, pa.Table] = {
        "steps": pa.Table.from_pylist(steps, schema=first["steps"].schema),
        "intervals": pa.Table.from_pylist(m.intervals(), schema=first["intervals"].schema),
        "histograms": pa.Table.from_pylist(m.histograms_rows(), schema=first["histograms"].schema),
        "runs": pa.Table.from_pylist([m.run_row(steps)], schema=first["runs"].schema),
        "shards": pa.Table.from_pylist(m.shards_rows(), schema=SHARDS_SCHEMA),
    }
    for name in ("config", "counters", "gauges"):
        if name in first:
            tables[name] = _with_run_id(first[name], m.run_id)
    ops = {str(s["step"]): s.get("cost_ops") for s in steps}
    for name, table in m.by_role_tables(ops).items():
        tables[name] = table
    if "disks" in first:
        disks = m.server_table("disks")
        tables["disks"] = _with_run_id(disks if disks is not None else first["disks"].slice(0, 0), m.run_id).cast(
            first["disks"].schema
        )
    # The runs table last: a reader that sees it sees a complete run.
    for name, table in tables.items():
        if name != "runs":
            _write(out, name, table)
    _write(out, "runs", tables["runs"])
    return out


def main(argv: Optional[list[str]] = None) -> int:
    """``ibench merge RUN_DIR... -o OUT [--server DIR]``."""
    parser = argparse.ArgumentParser(
        prog="ibench merge",
        description="Merge the shards of one run (ibench run --shard I/N on several hosts) into one run directory.",
    )
    parser.add_argument("runs", nargs="+", help="the shards' run directories")
    parser.add_argument("-o", "--output", required=True, help="the merged run directory to create")
    parser.add_argument("--server", help="the server host probe's run directory (server-…), for the server's costs")
    args = parser.parse_args(argv)

    def merged() -> str:
        out = merge(args.runs, args.output, server=args.server)
        return f"merged {len(args.runs)} shards into {out}"

    return exit_code(merged, _native.Error)


if __name__ == "__main__":
    sys.exit(main())
