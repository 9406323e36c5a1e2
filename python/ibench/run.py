"""Running the Insert Benchmark from Python."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any, Optional, Sequence, Union

from ibench import _native
from ibench.results import Results, load


def parameters() -> dict[str, str]:
    """Every run parameter, by name, with its documentation: the keywords
    :func:`run` takes, the keys of a TOML file or a campaign's ``[run]``,
    and, with ``-`` for ``_``, ``ibench run``'s flags (all declared once, in
    Rust). The resolved configuration a run records holds each of them."""
    return dict(_native.PARAMETERS)


def run(
    db: Optional[str] = None,
    preset: Optional[str] = None,
    steps: Optional[Sequence[str]] = None,
    out: Union[str, Path, None] = None,
    label: Optional[str] = None,
    seed: Optional[int] = None,
    *,
    config: Union[str, Path, None] = None,
    progress: bool = True,
    cluster: Any = None,
    shards: Optional[int] = None,
    server_worker: Optional[str] = None,
    server_dsn: Optional[str] = None,
    **params: Any,
) -> Results:
    """Runs the Insert Benchmark or the key/value steps and returns the results.

    ``db`` is a DSN — ``sqlite:PATH``, ``postgres://user:pass@host:port/db``,
    ``mysql://user:pass@host:port/db?engine=innodb|rocksdb``,
    ``rocksdb:PATH?compaction_style=universal&compression=lz4``, ``null:`` —
    (default: a SQLite file in the run directory, or RocksDB for key/value
    steps alone); ``preset`` one of quick (the default), small-1, small-4,
    large-12-cpu, large-12-io (the Insert Benchmark), kv-quick,
    universal-compression, rocksdb-releases (key/value steps); ``steps`` a list such as
    ``["l.i0", "l.x", "qr100"]`` or ``["fillseq", "overwrite", "readrandom"]``;
    ``out`` the directory under which the run directory is created (default
    ``ibench-results``); ``seed`` the seed (default 0); ``config`` a TOML file
    of parameters, which the arguments given here override (arguments left
    out keep the file's values); ``params`` any other run parameter
    (``clients=4``, ``rows_l_i0=10**6``, ``num=10**6``, ``value_size=400``,
    ...: :func:`ibench.parameters` lists them all with their documentation).
    ``compat="iibench"`` runs the reference client's workload (server keys,
    literal statements, its data, l.x's 100 rows, its wait step); each
    choice is a parameter of its own too (``server_keys``, ``statements``,
    ``data``, ``lx_rows``, ``maintenance``), which overrides the bundle's.

    ``cluster`` (a ``distributed.Client`` or a Dask scheduler's address)
    runs the clients in ``shards`` shards on its workers (default one per
    worker) and merges them into one run directory; ``server_worker`` names
    a worker on the database's host that measures the server's CPU, memory
    and disks (``server_dsn``: the DSN as that host sees it). See
    docs/distributed.md.

    The GIL is released while the run executes; Ctrl-C stops it between
    operations, writes the results so far, and raises KeyboardInterrupt.
    A run that ends with an error raises :class:`ibench.Error` naming its
    results directory (load it with :func:`ibench.load`).
    """
    layer: dict[str, Any] = dict(params)
    if preset is not None:
        layer["preset"] = preset
    if seed is not None:
        layer["seed"] = seed
    if db is not None:
        layer["db"] = db
    if steps is not None:
        layer["steps"] = [steps] if isinstance(steps, str) else list(steps)
    if label is not None:
        layer["label"] = label
    out_dir = Path(out) if out is not None else Path("ibench-results")
    path: Union[str, Path]
    if cluster is not None:
        from ibench import distributed

        path, status, error = distributed.run(
            [layer],
            out_dir,
            cluster,
            shards=shards,
            server_worker=server_worker,
            server_dsn=server_dsn,
            config=config,
            progress=progress,
        )
    elif shards is not None or server_worker is not None:
        raise _native.ConfigError("invalid shards: shards and server_worker need a cluster (cluster=...)")
    else:
        path, status, error = _native.run(
            json.dumps([layer]), str(out_dir), None if config is None else str(config), progress
        )
    if status != "ok":
        raise _native.Error(f"run ended with status {status}: {error}; results in {path}")
    return load(path)
