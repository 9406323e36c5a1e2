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
    # Writes stop when this much compaction is pending (RocksDB's: 256 GB).
    ("hard_pending_compaction_bytes_limit=137438953472", "--hard_pending_compaction_bytes_limit=137438953472"),
    # The table cache's shards: 16 (RocksDB's: 64).
    ("table_cache_numshardbits=4", "--table_cache_numshardbits=4"),
]

# db_bench flags that give db_bench RocksDB's default where its own differs
# and benchmark.sh passes RocksDB's (so published results ran RocksDB's).
DB_BENCH_FLAGS: list[tuple[str, str]] = [
    # db_bench's own is false, which leaves its levels static (more compaction).
    ("--level_compaction_dynamic_level_bytes=true", "benchmark.sh's const_params_base"),
]

# Options whose db_bench default differs from RocksDB's (in the OPTIONS files
# both write) and that neither list above carries, with why.
NOT_MATCHED: dict[str, str] = {
    "pin_top_level_index_and_filter": "a table option that matters only with partitioned indexes or filters; "
    "table options would also rule out the side by side's HyperClockCache",
    "delete_obsolete_files_period_micros": "db_bench sets it only when its flag is above 0",
    "dump_malloc_stats": "what RocksDB's LOG shows, not what it does",
    "prepopulate_blob_cache": "db_bench's 0 is RocksDB's kDisable",
    "prepopulate_block_cache": "db_bench's 0 is RocksDB's kDisable",
}
# Also left: the table option index_shortening (db_bench --index_shortening_mode=2,
# kShortenSeparatorsAndSuccessor), which shortens a file's last index key only.
