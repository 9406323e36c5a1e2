"""Type stubs for the native module (checked by mypy's stubtest)."""

from typing import Literal, TypedDict, final

import pyarrow as pa

__all__ = [
    "COST_COLUMNS",
    "ConfigError",
    "LAG_STATS",
    "PARAMETERS",
    "PERCENTILES",
    "RunHandle",
    "SB_LONG_SUITE",
    "SB_SUITE",
    "ServerProbe",
    "DatabaseError",
    "Error",
    "FormatError",
    "IoError",
    "KV_DELETE_STEPS",
    "KV_READ_STEPS",
    "KV_STEPS",
    "KV_WRITE_STEPS",
    "__version__",
    "build_profile",
    "cli_main",
    "flamegraph",
    "flamegraph_diff",
    "histogram_counts_at_most",
    "histogram_percentiles",
    "keys",
    "merge_histograms",
    "perf_unavailable",
    "resolve_config",
    "rows",
    "run",
    "step_costs",
    "sysbench_step",
    "values",
]
__version__: str
build_profile: Literal["debug", "release"]
COST_COLUMNS: list[str]
PERCENTILES: list[tuple[float, str]]
LAG_STATS: list[tuple[float, str]]
PARAMETERS: list[tuple[str, str]]
KV_STEPS: list[str]
KV_WRITE_STEPS: list[str]
KV_READ_STEPS: list[str]
KV_DELETE_STEPS: list[str]
SB_SUITE: list[str]
SB_LONG_SUITE: list[str]

class _SysbenchStep(TypedDict, total=False):
    """What the core says of a sysbench step; a microbenchmark has every key."""

    kind: Literal["load", "create-index", "postwrite", "microbenchmark"]
    test: str
    group: Literal["point", "range", "range-aggregate", "write"]
    variant: Literal["", "pre", "warm", "warmpre"]
    range: int
    statements_per_event: int
    trx: bool

class Error(Exception):
    """Base class of every error ibench raises."""

class ConfigError(Error):
    """A parameter is out of range or inconsistent."""

class IoError(Error):
    """Reading or writing a file failed."""

class FormatError(Error):
    """Arrow or Parquet rejected data or a file."""

class DatabaseError(Error):
    """The database refused or failed an operation."""

_KeyKind = Literal["sequential", "uniform", "unique", "zipfian", "latest"]

def cli_main(argv: list[str]) -> int: ...
def keys(
    kind: _KeyKind | str,
    count: int,
    *,
    space: int | None = None,
    seed: int = 0,
    offset: int = 0,
    key_size: int | None = None,
    theta: float = 0.99,
    table: int = 0,
    threads: int | None = None,
) -> pa.UInt64Array | pa.FixedSizeBinaryArray: ...
def values(
    count: int,
    *,
    length: int | tuple[int, int] = 100,
    ratio: float = 0.5,
    seed: int = 0,
    offset: int = 0,
    text: bool = False,
    table: int = 0,
    threads: int | None = None,
) -> pa.BinaryArray | pa.StringArray: ...
def rows(
    count: int,
    *,
    table: int = 0,
    start: int = 0,
    seed: int = 0,
    data_length: int | tuple[int, int] = (10, 20),
    ratio: float = 0.5,
    rows_per_second: int = 1000,
    data_random_pct: int | None = None,
    threads: int | None = None,
) -> pa.RecordBatch: ...
def run(layers: str, out: str, config_file: str | None = None, progress: bool = True) -> tuple[str, str, str | None]: ...
def histogram_percentiles(blob: bytes, qs: list[float]) -> list[float]: ...
def merge_histograms(blobs: list[bytes]) -> bytes: ...
def histogram_counts_at_most(blob: bytes, limits_us: list[float]) -> list[int]: ...
def resolve_config(layers: str, config_file: str | None = None) -> str: ...
def step_costs(
    host_cpu_s: float | None,
    client_cpu_s: float | None,
    server_cpu_s: float | None,
    context_switches: int | None,
    disk: tuple[int, int, int, int] | None,
    ops: int | None,
    elapsed_s: float,
) -> list[float | None]: ...
def flamegraph(stacks: list[tuple[str, int]], title: str = ...) -> str: ...
def flamegraph_diff(
    before: list[tuple[str, int]], after: list[tuple[str, int]], title: str = ..., normalize: bool = False
) -> str: ...
def perf_unavailable() -> str | None: ...
def sysbench_step(name: str) -> _SysbenchStep | None: ...

@final
class RunHandle:
    """A run whose steps are started one by one, each at a given instant."""

    def __new__(cls, layers: str, out: str, config_file: str | None = None) -> RunHandle: ...
    @property
    def dir(self) -> str: ...
    @property
    def steps(self) -> list[str]: ...
    def step(self, ordinal: int, start_at_us: int | None = None) -> tuple[str, str | None]: ...
    def stop(self) -> None: ...
    def finish(self) -> tuple[str, str | None]: ...

@final
class ServerProbe:
    """Samples the server's processes and data disks on the server's host."""

    def __new__(
        cls,
        dsn: str,
        out: str,
        interval_seconds: float = 1.0,
        password_file: str | None = None,
        profile_frequency: int | None = None,
    ) -> ServerProbe: ...
    @property
    def dir(self) -> str: ...
    def begin(self, step: str, start_at_us: int | None = None) -> None: ...
    def end(self) -> None: ...
    def finish(self) -> str: ...
