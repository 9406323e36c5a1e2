"""Sharded runs on a Dask cluster: the clients of one run split among workers.

The coordinator (this module, in the calling process) runs the steps in
order. For each step it starts every shard on its own worker (pinned: one
shard per worker unless ``shared_workers=True``) with a common intended start
a little in the future, corrected for each worker's clock offset, waits for
all of them, and goes on only when every shard finished the step. A shard that
fails, or whose worker dies, ends the step with status ``error`` naming the
shard and the worker; the other shards are stopped; nothing waits forever.
After every step the shards' files are fetched and merged
(:func:`ibench.merge.merge`) into one run directory, so a failure later loses
nothing.

A worker on the database's host (``server_worker``) samples the server's
processes and data disks on each step's interval grid (``ServerProbe``), so a
remote server gets the cost columns a local one has. Without it they are null.

Workers need ibench installed (the same version as the coordinator) and the
``distributed`` package. See docs/distributed.md.
"""

from __future__ import annotations

import argparse
import json
import os
import shutil
import signal
import sys
import tempfile
import threading
import time
from dataclasses import dataclass
from pathlib import Path
from typing import Any, Callable, Mapping, Optional, Sequence, TypeVar, Union

from ibench import _native
from ibench.merge import ShardInfo, merge, new_run_id

START_LEAD_SECONDS = 1.0
"""How far in the future a step's common start is set: time for every shard
to receive the call and be connected before it."""

POLL_SECONDS = 0.2
"""How often the coordinator looks at the shards and the workers."""

STOP_GRACE_SECONDS = 60.0
"""How long stopped shards get to end their step before they are abandoned."""

# Worker-side state: the shards and probes this worker process holds, by key.
_HANDLES: dict[str, Any] = {}
_LOCK = threading.Lock()
_Held = TypeVar("_Held")


# -- what runs on the workers ------------------------------------------------


def _hold(key: str, prefix: str, make: Callable[[str], _Held]) -> _Held:
    """``make(out)`` (a shard or a probe) over a new temporary directory
    ``out``, held under ``key`` until :func:`_close` removes the directory;
    removed at once when ``make`` fails."""
    out = tempfile.mkdtemp(prefix=prefix)
    try:
        handle = make(out)
    except BaseException:
        shutil.rmtree(out, ignore_errors=True)
        raise
    with _LOCK:
        _HANDLES[key] = (handle, out)
    return handle


def _open_shard(key: str, layers: str, config_file: Optional[str]) -> dict[str, Any]:
    import socket

    handle = _hold(key, "ibench-shard-", lambda out: _native.RunHandle(layers, out, config_file))
    return {"dir": handle.dir, "steps": handle.steps, "host": socket.gethostname(), "pid": os.getpid()}


def _step(key: str, ordinal: int, start_at_us: int) -> tuple[str, Optional[str]]:
    handle, _ = _HANDLES[key]
    status: tuple[str, Optional[str]] = handle.step(ordinal, start_at_us)
    return status


def _stop(key: str) -> bool:
    entry = _HANDLES.get(key)
    if entry is None:
        return False
    entry[0].stop()
    return True


def _finish(key: str) -> tuple[str, Optional[str]]:
    handle, _ = _HANDLES[key]
    status: tuple[str, Optional[str]] = handle.finish()
    return status


def _files(key: str) -> dict[str, bytes]:
    """The shard's (or probe's) run directory: its Parquet files' bytes."""
    handle, _ = _HANDLES[key]
    d = Path(handle.dir)
    return {p.name: p.read_bytes() for p in d.iterdir() if p.suffix == ".parquet" and not p.name.startswith(".")}


def _close(key: str) -> None:
    with _LOCK:
        entry = _HANDLES.pop(key, None)
    if entry is not None:
        shutil.rmtree(entry[1], ignore_errors=True)


def _clock() -> float:
    return time.time()


def _open_probe(
    key: str, dsn: str, interval_seconds: float, password_file: Optional[str], profile_frequency: Optional[int] = None
) -> dict[str, Any]:
    import socket

    probe = _hold(
        key, "ibench-server-",
        lambda out: _native.ServerProbe(dsn, out, interval_seconds, password_file, profile_frequency))
    return {"dir": probe.dir, "host": socket.gethostname()}


def _probe_begin(key: str, step: str, start_at_us: int) -> None:
    _HANDLES[key][0].begin(step, start_at_us)


def _probe_end(key: str) -> None:
    _HANDLES[key][0].end()


# -- the coordinator -----------------------------------------------------------


@dataclass
class _Shard:
    index: int
    worker: str
    key: str
    dir: Optional[Path] = None
    host: str = ""
    offset_s: float = 0.0
    rtt_s: Optional[float] = None
    alive: bool = True


def _wait(futures: list[Any]) -> None:
    """Until one of ``futures`` is done, or POLL_SECONDS passed."""
    from distributed import wait

    try:
        wait(futures, timeout=POLL_SECONDS, return_when="FIRST_COMPLETED")  # type: ignore[no-untyped-call]
    except TimeoutError:
        pass


def worker_addresses(client: Any) -> list[str]:
    """The addresses of the cluster's workers, asked of the scheduler now.

    Not ``Client.scheduler_info()``: that returns the client's cached copy,
    which the client's own periodic refresh (asking for no workers, since
    distributed 2025) can overwrite between the fetch and the return, so a
    live cluster would read as one without workers."""
    import inspect

    from distributed import Client

    if "n_workers" in inspect.signature(Client.scheduler_info).parameters:
        info = client.sync(client.scheduler.identity, n_workers=-1)
    else:  # older releases' identity lists every worker
        info = client.sync(client.scheduler.identity)
    return sorted(info["workers"])


class ShardError(_native.Error):
    """A shard failed or its worker died."""


def _clock_offset(client: Any, worker: str, rounds: int = 5) -> tuple[float, float]:
    """The worker's clock minus the coordinator's (s), from the round trip
    with the shortest time (NTP's estimate), and that round trip."""
    best: Optional[tuple[float, float]] = None
    for _ in range(rounds):
        sent = time.time()
        theirs = client.run(_clock, workers=[worker])[worker]
        back = time.time()
        rtt = back - sent
        offset = theirs - (sent + back) / 2
        if best is None or rtt < best[1]:
            best = (offset, rtt)
    assert best is not None
    return best


class _Coordinator:
    def __init__(
        self,
        client: Any,
        layers: list[dict[str, Any]],
        out: Path,
        config_file: Optional[str],
        shards: Optional[int],
        server_worker: Optional[str],
        server_dsn: Optional[str],
        shared_workers: bool,
        say: Callable[[str], None],
    ):
        self.client = client
        self.config_file = config_file
        self.say = say
        self.run_id = new_run_id()
        self.dir = out / self.run_id
        workers = worker_addresses(client)
        if server_worker is not None and server_worker not in workers:
            raise _native.ConfigError(
                f"invalid server_worker: {server_worker} is not a worker of the cluster ({', '.join(workers) or 'none'})"
            )
        candidates = [w for w in workers if w != server_worker] or workers
        count = shards if shards is not None else len(candidates)
        if count < 1:
            raise _native.ConfigError(f"invalid shards: must be at least 1, got {count}")
        if not candidates:
            raise _native.ConfigError("the cluster has no worker")
        if count > len(candidates) and not shared_workers:
            raise _native.ConfigError(
                f"invalid shards: {count} shards need {count} workers, the cluster has {len(candidates)} "
                f"(besides the server's); pass shared_workers=True to put several on one worker"
            )
        # Bad input is refused here, before any worker is asked (shard 0 of
        # `count` checks what every shard's configuration must satisfy).
        self.config = json.loads(_native.resolve_config(json.dumps([*layers, {"shard": f"0/{count}"}]), config_file))
        if not self.config["db"]:
            raise _native.ConfigError("invalid db: a sharded run needs a database server, not a file in each shard's directory")
        self.config["shard"] = None
        self.steps = list(self.config["steps"])
        self.shards = [
            _Shard(i, candidates[i % len(candidates)], f"{self.run_id}/shard-{i}") for i in range(count)
        ]
        self.server_worker = server_worker
        self.server_dsn = server_dsn
        self.probe_key = f"{self.run_id}/server"
        self.probe_dir: Optional[Path] = None
        self.errors: dict[str, str] = {}

    def layers_for(self, shard: _Shard) -> str:
        return json.dumps([{**self.config, "shard": f"{shard.index}/{len(self.shards)}"}])

    def live_workers(self) -> set[str]:
        return set(worker_addresses(self.client))

    def open(self) -> None:
        futures = []
        for s in self.shards:
            s.offset_s, s.rtt_s = _clock_offset(self.client, s.worker)
            futures.append(
                self.client.submit(
                    _open_shard,
                    s.key,
                    self.layers_for(s),
                    None,
                    workers=[s.worker],
                    allow_other_workers=False,
                    pure=False,
                    key=f"ibench-open-{s.key}",
                )
            )
        opened = self.gather(futures, "open")
        # The run directory once every shard is open: a run refused there leaves none.
        self.dir.mkdir(parents=True)
        for s, info in zip(self.shards, opened):
            s.host = info["host"]
        if self.server_worker is not None:
            dsn = self.server_dsn or self.config["db"]
            interval = float(self.config["interval_seconds"])
            password = self.config.get("password_file")
            # profile = "perf": the server's host profiles its processes.
            frequency = int(self.config["profile_frequency"]) if self.config.get("profile") == "perf" else None
            info = self.client.submit(
                _open_probe,
                self.probe_key,
                dsn,
                interval,
                password,
                frequency,
                workers=[self.server_worker],
                allow_other_workers=False,
                pure=False,
                key=f"ibench-open-{self.probe_key}",
            ).result()
            self.probe_dir = self.dir / "server" / Path(info["dir"]).name


    def gather(self, futures: list[Any], what: str, shards: Optional[list[_Shard]] = None) -> list[Any]:
        """Waits for one future per shard, watching the workers: a failure or
        a dead worker is a ShardError naming the shard and worker."""
        shards = self.shards if shards is None else shards
        pending = dict(zip(futures, shards))
        results: dict[int, Any] = {}
        while pending:
            _wait(list(pending))
            for f, s in list(pending.items()):
                if f.status == "finished":
                    results[s.index] = f.result()
                    del pending[f]
                elif f.status in ("error", "cancelled"):
                    del pending[f]
                    e = f.exception()
                    message = f"shard {s.index} on worker {s.worker} failed in {what}: {e}"
                    # The worker's own error class when it is ibench's (a refused login, a bad DSN).
                    raise (type(e)(message) if isinstance(e, _native.Error) else ShardError(message))
            if pending:
                live = self.live_workers()
                for f, s in pending.items():
                    if s.worker not in live:
                        s.alive = False
                        f.cancel()
                        raise ShardError(f"shard {s.index} on worker {s.worker} ({s.host or 'host unknown'}) died during {what}")
        return [results[s.index] for s in shards]

    def run_step(self, ordinal: int) -> bool:
        """Runs one step on every shard; False when it failed (or was stopped)."""
        step = self.steps[ordinal]
        start = time.time() + START_LEAD_SECONDS
        if self.probe_dir is not None:
            self.client.run(_probe_begin, self.probe_key, step, int(start * 1e6), workers=[self.server_worker])
        futures = {
            self.client.submit(
                _step,
                s.key,
                ordinal,
                int((start + s.offset_s) * 1e6),
                workers=[s.worker],
                allow_other_workers=False,
                pure=False,
                key=f"ibench-step-{ordinal}-{s.key}",
            ): s
            for s in self.shards
        }
        failed: Optional[str] = None
        try:
            pending = dict(futures)
            while pending:
                _wait(list(pending))
                live = self.live_workers()
                for f, s in list(pending.items()):
                    if f.status == "finished":
                        status, error = f.result()
                        del pending[f]
                        if status not in ("ok", "timeout") and failed is None:
                            failed = f"shard {s.index} on worker {s.worker} ({s.host}): {status}: {error}"
                    elif f.status in ("error", "cancelled"):
                        del pending[f]
                        failed = failed or f"shard {s.index} on worker {s.worker} ({s.host}) failed: {f.exception()}"
                    elif s.worker not in live:
                        del pending[f]
                        s.alive = False
                        f.cancel()
                        failed = failed or f"shard {s.index} on worker {s.worker} ({s.host}) died during {step}"
                if failed is not None and pending:
                    self.stop_shards(list(pending.values()))
                    self.wait_stopped(pending)
                    pending = {}
        except KeyboardInterrupt:
            self.stop_shards([s for s in self.shards if s.alive])
            self.wait_stopped({f: s for f, s in futures.items() if not f.done()})
            self.end_probe()
            raise
        self.end_probe()
        if failed is not None:
            self.errors[step] = failed
        self.collect()
        return failed is None

    def end_probe(self) -> None:
        if self.probe_dir is not None:
            try:
                self.client.run(_probe_end, self.probe_key, workers=[self.server_worker])
            except Exception as e:  # the probe's loss is not the run's
                self.say(f"warning: the server host's probe stopped: {e}")
                self.probe_dir = None

    def stop_shards(self, shards: list[_Shard]) -> None:
        for s in shards:
            if s.alive:
                try:
                    self.client.run(_stop, s.key, workers=[s.worker])
                except Exception:
                    s.alive = False

    def wait_stopped(self, pending: Mapping[Any, _Shard]) -> None:
        """Gives stopped shards a bounded time to end their step."""
        deadline = time.time() + STOP_GRACE_SECONDS
        left = dict(pending)
        while left and time.time() < deadline:
            _wait(list(left))
            live = self.live_workers()
            for f, s in list(left.items()):
                if f.done() or s.worker not in live:
                    if s.worker not in live:
                        s.alive = False
                    del left[f]
        for f, s in left.items():
            self.say(f"warning: shard {s.index} on worker {s.worker} did not stop within {STOP_GRACE_SECONDS:.0f} s")
            f.cancel()

    def collect(self) -> None:
        """Fetches every live shard's files (and the probe's) and merges them."""
        for s in self.shards:
            if not s.alive:
                continue
            try:
                files = self.client.run(_files, s.key, workers=[s.worker])[s.worker]
            except Exception:
                s.alive = False
                continue
            target = self.dir / "shards" / f"shard-{s.index}"
            target.mkdir(parents=True, exist_ok=True)
            for fname, data in files.items():
                tmp = target / f".{fname}.tmp"
                tmp.write_bytes(data)
                os.replace(tmp, target / fname)
            s.dir = target
        if self.probe_dir is not None:
            try:
                files = self.client.run(_files, self.probe_key, workers=[self.server_worker])[self.server_worker]
                self.probe_dir.mkdir(parents=True, exist_ok=True)
                for fname, data in files.items():
                    (self.probe_dir / fname).write_bytes(data)
            except Exception as e:
                self.say(f"warning: the server host's probe is gone: {e}")
                self.probe_dir = None
        self.merge()

    def merge(self) -> None:
        dirs = [s.dir for s in self.shards if s.dir is not None]
        if len(dirs) != len(self.shards):
            # A shard that never wrote files: merge what there is, marked.
            missing = [s for s in self.shards if s.dir is None]
            for s in missing:
                self.errors.setdefault("open", f"shard {s.index} on worker {s.worker} wrote no results")
            return
        infos = {s.index: ShardInfo(s.worker, s.offset_s, s.rtt_s) for s in self.shards}
        server = self.probe_dir if self.probe_dir is not None and (self.probe_dir / "runs.parquet").is_file() else None
        merge(dirs, self.dir, server=server, infos=infos, errors=self.errors, run_id=self.run_id)

    def finish(self) -> None:
        live = [s for s in self.shards if s.alive]
        futures = [
            self.client.submit(_finish, s.key, workers=[s.worker], allow_other_workers=False, pure=False, key=f"ibench-finish-{s.key}")
            for s in live
        ]
        try:
            self.gather(futures, "the final count", live)
        except ShardError as e:
            self.errors.setdefault("finish", str(e))
        self.collect()

    def close(self) -> None:
        for s in self.shards:
            if s.alive:
                try:
                    self.client.run(_close, s.key, workers=[s.worker])
                except Exception:
                    pass
        if self.server_worker is not None:
            try:
                self.client.run(_close, self.probe_key, workers=[self.server_worker])
            except Exception:
                pass


def _step_line(run: Path, step: str) -> str:
    """The merged step in one line: status, clients, time, rates, SLA."""
    import pyarrow.parquet as pq

    rows = [r for r in pq.read_table(run / "steps.parquet").to_pylist() if r["step"] == step]
    if not rows:
        return f"{step}: no results"
    r = rows[0]
    parts = [f"{step}: {r['status']}", f"{r['clients']} clients", f"{r['elapsed_s']:.1f} s"]
    for name, what in (("ips", "inserts/s"), ("dps", "deletes/s"), ("qps", "queries/s")):
        if r[name]:
            parts.append(f"{r[name]:,.0f} {what}")
    if r["sla_ok"] is not None:
        parts.append("SLA met" if r["sla_ok"] else f"SLA missed ({r['target_ips']:,.0f} inserts/s wanted)")
    if r["verified"] is False:
        parts.append(f"verify FAILED: {r['verify_error']}")
    return ", ".join(parts)


ClusterLike = Union[str, Any]


def run(
    layers: Sequence[Mapping[str, Any]],
    out: Union[str, Path],
    cluster: ClusterLike,
    *,
    shards: Optional[int] = None,
    server_worker: Optional[str] = None,
    server_dsn: Optional[str] = None,
    config: Union[str, Path, None] = None,
    shared_workers: bool = False,
    progress: bool = True,
) -> tuple[Path, str, Optional[str]]:
    """Runs the configuration ``layers`` (parameter dicts, later ones
    overriding) in ``shards`` shards (default: one per worker) on the Dask
    cluster ``cluster`` (a ``distributed.Client``, or its scheduler's
    address); returns the merged run directory under ``out``, its status and
    error. ``server_worker`` is the address of a worker on the database's
    host, which measures the server's costs (``server_dsn``: the DSN as that
    host sees the server, default the run's). Ctrl-C stops every shard and
    writes what finished."""
    from distributed import Client

    def say(line: str) -> None:
        if progress:
            print(line, file=sys.stderr)

    own = not hasattr(cluster, "submit")
    client: Any = Client(cluster) if own else cluster  # type: ignore[no-untyped-call]
    try:
        c = _Coordinator(
            client,
            [dict(layer) for layer in layers],
            Path(out),
            None if config is None else str(config),
            shards,
            server_worker,
            server_dsn,
            shared_workers,
            say,
        )
        try:
            c.open()
            say(
                f"ibench: {len(c.shards)} shards on "
                + ", ".join(f"{s.worker} ({s.host}, clock {s.offset_s * 1e3:+.1f} ms)" for s in c.shards)
                + f" -> {c.dir}"
            )
            for ordinal, step in enumerate(c.steps):
                ok = c.run_step(ordinal)
                say(_step_line(c.dir, step) if ok else f"{step}: error: {c.errors.get(step, '')}")
                if not ok:
                    break
            c.finish()
        except KeyboardInterrupt:
            c.finish()
            raise
        finally:
            c.close()
    finally:
        if own:
            client.close()
    import pyarrow.parquet as pq

    runs = pq.read_table(c.dir / "runs.parquet").to_pylist()[0]
    return c.dir, str(runs["status"]), runs["error"]


def main(argv: Optional[list[str]] = None) -> int:
    """``ibench run --cluster ADDRESS ...``: the Rust CLI resolves the
    configuration and hands it over in IBENCH_RUN_CONFIG."""
    parser = argparse.ArgumentParser(prog="ibench run --cluster")
    parser.add_argument("--out", default="ibench-results")
    parser.add_argument("--cluster", required=True)
    parser.add_argument("--shards", type=int)
    parser.add_argument("--server-worker")
    parser.add_argument("--server-dsn")
    parser.add_argument("--quiet", action="store_true")
    args = parser.parse_args(argv)
    layer = json.loads(os.environ.get("IBENCH_RUN_CONFIG", "{}"))
    received: list[int] = []

    def stopping(signum: int, _frame: Any) -> None:
        # SIGTERM and SIGHUP stop the shards as Ctrl-C does; the results so
        # far are written, and a second signal does not cut that short.
        received.append(signum)
        if len(received) == 1:
            raise KeyboardInterrupt
        print("still stopping: the shards end their step and their results are merged first", file=sys.stderr)

    for signum in (signal.SIGINT, signal.SIGTERM, signal.SIGHUP):
        signal.signal(signum, stopping)
    try:
        path, status, error = run(
            [layer],
            args.out,
            args.cluster,
            shards=args.shards,
            server_worker=args.server_worker,
            server_dsn=args.server_dsn,
            progress=not args.quiet,
        )
    except KeyboardInterrupt:
        first = received[0] if received else int(signal.SIGINT)
        print(f"error: run interrupted by signal {first}; the results so far are written", file=sys.stderr)
        return 128 + first
    except _native.Error as e:
        print(f"error: {e}", file=sys.stderr)
        return 1
    print(f"results: {path}")
    if status != "ok":
        print(f"error: run {status}: {error}", file=sys.stderr)
        return 1
    return 0


if __name__ == "__main__":
    # Run as `python -m`, this file is `__main__`: the tasks must be the
    # importable module's functions, which workers find by name.
    from ibench.distributed import main as _main

    sys.exit(_main())
