"""Type stubs for the native module (checked by mypy's stubtest)."""

from typing import Literal

import pyarrow as pa

__all__ = [
    "COST_COLUMNS",
    "ConfigError",
    "DatabaseError",
    "Error",
    "FormatError",
    "IoError",
    "__version__",
    "build_profile",
    "cli_main",
    "histogram_percentiles",
    "keys",
    "merge_histograms",
    "rows",
    "run",
    "values",
]
__version__: str
build_profile: Literal["debug", "release"]
COST_COLUMNS: list[str]

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
