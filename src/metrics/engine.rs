//! Storage-engine statistics: cumulative counters a connector reads (RocksDB
//! statistics and properties), and what a step did between two readings.

/// A reading of the engine's counters and gauges.
#[derive(Clone, Debug, Default, PartialEq, Eq)]
pub struct EngineCounters {
    /// Bytes of keys and values the user wrote (`rocksdb.bytes.written`).
    pub user_bytes: u64,
    /// Bytes written to the WAL (`rocksdb.wal.bytes`).
    pub wal_bytes: u64,
    /// Bytes written by memtable flushes (`rocksdb.flush.write.bytes`).
    pub flush_bytes: u64,
    /// Bytes compaction read (`rocksdb.compact.read.bytes`).
    pub compaction_read_bytes: u64,
    /// Bytes compaction wrote (`rocksdb.compact.write.bytes`).
    pub compaction_write_bytes: u64,
    /// Time writers waited on write stalls (`rocksdb.stall.micros`).
    pub stall_us: u64,
    /// Wall time of compaction jobs (`rocksdb.compaction.times.micros`, sum).
    pub compaction_us: u64,
    /// CPU time of compaction jobs (`rocksdb.compaction.times.cpu_micros`, sum).
    pub compaction_cpu_us: u64,
    /// Size of the SST files of the current version (`rocksdb.live-sst-files-size`).
    pub live_sst_bytes: u64,
    /// Size of all SST files, obsolete ones not yet deleted included (`rocksdb.total-sst-files-size`).
    pub total_sst_bytes: u64,
    /// Files per level, L0 first (`rocksdb.num-files-at-level<N>`).
    pub files_per_level: Vec<u64>,
    /// Bytes of the largest sorted run: the largest L0 file or the largest
    /// non-empty level (the seeds' size for steps after fillseq, where
    /// universal compaction's total size varies too much to compare).
    pub largest_run_bytes: u64,
}

impl EngineCounters {
    /// Sorted runs: every L0 file is one, every other non-empty level one more.
    pub fn sorted_runs(&self) -> u64 {
        let l0 = self.files_per_level.first().copied().unwrap_or(0);
        l0 + self.files_per_level.iter().skip(1).filter(|&&n| n > 0).count() as u64
    }
}

/// What the engine did during a step (counter differences) and its state at
/// the step's end (gauges).
#[derive(Clone, Debug, Default, PartialEq)]
pub struct EngineDelta {
    /// User bytes written.
    pub user_bytes: u64,
    /// WAL bytes written.
    pub wal_bytes: u64,
    /// Flush bytes written.
    pub flush_bytes: u64,
    /// Compaction bytes read.
    pub compaction_read_bytes: u64,
    /// Compaction bytes written.
    pub compaction_write_bytes: u64,
    /// Write stall seconds.
    pub stall_s: f64,
    /// Compaction wall seconds (summed over compaction jobs).
    pub compaction_s: f64,
    /// Compaction CPU seconds.
    pub compaction_cpu_s: f64,
    /// Live SST bytes at the end.
    pub live_sst_bytes: u64,
    /// All SST bytes at the end.
    pub total_sst_bytes: u64,
    /// Bytes of the largest sorted run at the end.
    pub largest_run_bytes: u64,
    /// Sorted runs at the end.
    pub sorted_runs: u64,
    /// Files per level at the end, L0 first.
    pub files_per_level: Vec<u64>,
}

impl EngineDelta {
    /// The step between readings `before` and `after`.
    pub fn between(before: &EngineCounters, after: &EngineCounters) -> EngineDelta {
        let d = |a: u64, b: u64| a.saturating_sub(b);
        EngineDelta {
            user_bytes: d(after.user_bytes, before.user_bytes),
            wal_bytes: d(after.wal_bytes, before.wal_bytes),
            flush_bytes: d(after.flush_bytes, before.flush_bytes),
            compaction_read_bytes: d(after.compaction_read_bytes, before.compaction_read_bytes),
            compaction_write_bytes: d(after.compaction_write_bytes, before.compaction_write_bytes),
            stall_s: d(after.stall_us, before.stall_us) as f64 / 1e6,
            compaction_s: d(after.compaction_us, before.compaction_us) as f64 / 1e6,
            compaction_cpu_s: d(after.compaction_cpu_us, before.compaction_cpu_us) as f64 / 1e6,
            live_sst_bytes: after.live_sst_bytes,
            total_sst_bytes: after.total_sst_bytes,
            largest_run_bytes: after.largest_run_bytes,
            sorted_runs: after.sorted_runs(),
            files_per_level: after.files_per_level.clone(),
        }
    }

    /// Write amplification: bytes written by flushes and compactions per user
    /// byte (the seeds' `w_amp`; about 2 for an uncompressed fillseq with
    /// universal compaction, one flush and one merge). None when the user
    /// wrote nothing.
    pub fn w_amp(&self) -> Option<f64> {
        (self.user_bytes > 0).then(|| (self.flush_bytes + self.compaction_write_bytes) as f64 / self.user_bytes as f64)
    }

    /// Percentage of `elapsed_s` writers spent stalled.
    pub fn stall_pct(&self, elapsed_s: f64) -> Option<f64> {
        (elapsed_s > 0.0).then(|| 100.0 * self.stall_s / elapsed_s)
    }

    /// Files per level as text, L0 first: `"4,0,0,0,0,0,2"`.
    pub fn files_per_level_text(&self) -> String {
        let parts: Vec<String> = self.files_per_level.iter().map(u64::to_string).collect();
        parts.join(",")
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_delta_subtracts_counters_and_keeps_end_gauges() {
        let before = EngineCounters {
            user_bytes: 100,
            flush_bytes: 50,
            stall_us: 1_000_000,
            live_sst_bytes: 10,
            files_per_level: vec![1, 0, 0],
            ..EngineCounters::default()
        };
        let after = EngineCounters {
            user_bytes: 1100,
            flush_bytes: 1050,
            compaction_write_bytes: 1000,
            stall_us: 3_000_000,
            live_sst_bytes: 2000,
            files_per_level: vec![3, 0, 4],
            ..EngineCounters::default()
        };
        let d = EngineDelta::between(&before, &after);
        assert_eq!(d.user_bytes, 1000);
        assert_eq!(d.w_amp(), Some(2.0));
        assert_eq!(d.stall_s, 2.0);
        assert_eq!(d.stall_pct(4.0), Some(50.0));
        assert_eq!(d.sorted_runs, 4);
        assert_eq!(d.files_per_level_text(), "3,0,4");
        assert_eq!(d.live_sst_bytes, 2000);
        assert_eq!(d.largest_run_bytes, 0);
        assert_eq!(EngineDelta::between(&after, &after).w_amp(), None);
    }
}
