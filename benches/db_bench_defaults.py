"""db_bench's own defaults where they are not RocksDB's, as ibench options.

benchmark.sh leaves these flags at db_bench's defaults, so every published
db_bench result ran with them; an ibench run comparable with one needs them
as RocksDB options. Each entry: the ibench option, then the db_bench flag
(at its default) it stands for.
"""

from __future__ import annotations

DB_BENCH_DEFAULTS: list[tuple[str, str]] = [
    # A writer group's memtable inserts overlap the next group's WAL write
    # (RocksDB's default: off).
    ("enable_pipelined_write=true", "--enable_pipelined_write=true"),
    # The rate writes slow to when compaction falls behind: the slowdowns
    # that make up most of a stall% (RocksDB's default: 16 MB/s).
    ("delayed_write_rate=8388608", "--delayed_write_rate=8388608"),
]
