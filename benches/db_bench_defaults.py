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
# Not here, though db_bench's differ from RocksDB's too, read back from the
# OPTIONS files both write:
# - level_compaction_dynamic_level_bytes (db_bench false, RocksDB true):
#   benchmark.sh passes true, so published results ran RocksDB's; the side
#   by side gives db_bench the flag instead.
# - table options pin_top_level_index_and_filter (db_bench false) and
#   index_shortening (db_bench kShortenSeparatorsAndSuccessor): the first
#   matters only with partitioned indexes or filters, the second shortens a
#   file's last index key only; table options would also rule out the side
#   by side's HyperClockCache (block_cache_type=hyper_clock).
