//! The engine's own counters and gauges on embedded RocksDB: every ticker
//! and histogram of its statistics, the per-level compaction table of the
//! `kv` column family (from `rocksdb.stats`, kept whole as text at a step's
//! end), and gauges from its properties (L0 files, pending compaction
//! bytes, immutable memtables, write stalls) and, per interval, the stall
//! time and the bytes written by users, flushes and compactions.

use super::Db;
use crate::connect::{ServerCounters, KV_TABLE};
use crate::error::Result;
use crate::metrics::{number, Counter, EngineCounters, Gauge, WaitReading};
use rocksdb::statistics::{Histogram, Ticker};
use rocksdb::Options;
use std::sync::Arc;

/// Reads the shared database's statistics and properties.
pub(super) struct RocksdbStats {
    pub(super) db: Arc<Db>,
    /// Holds the statistics object the database writes to.
    pub(super) opts: Options,
}

/// The gauges: (property, gauge name).
pub(super) const GAUGES: [(&str, &str); 8] = [
    ("rocksdb.num-files-at-level0", "l0_files"),
    ("rocksdb.estimate-pending-compaction-bytes", "pending_compaction_bytes"),
    ("rocksdb.num-immutable-mem-table", "immutable_memtables"),
    ("rocksdb.cur-size-all-mem-tables", "memtable_bytes"),
    ("rocksdb.is-write-stopped", "write_stopped"),
    ("rocksdb.actual-delayed-write-rate", "delayed_write_rate"),
    ("rocksdb.num-running-compactions", "running_compactions"),
    ("rocksdb.num-running-flushes", "running_flushes"),
];

/// The histograms of waits: (event, histogram of µs).
pub(super) const WAITS: [(&str, Histogram); 5] = [
    ("wal sync", Histogram::WalFileSyncMicros),
    ("write stall", Histogram::WriteStall),
    ("sst read", Histogram::SstReadMicros),
    ("table sync", Histogram::TableSyncMicros),
    ("manifest sync", Histogram::ManifestFileSyncMicros),
];

/// The tickers sampled per interval as rates: (ticker, gauge name; `_per_s` is added).
pub(super) const RATES: [(Ticker, &str); 5] = [
    (Ticker::StallMicros, "stall_micros"),
    (Ticker::BytesWritten, "user_bytes"),
    (Ticker::FlushWriteBytes, "flush_bytes"),
    (Ticker::CompactReadBytes, "compaction_read_bytes"),
    (Ticker::CompactWriteBytes, "compaction_write_bytes"),
];

/// The engine's counters of the `kv` column family now (None before it
/// exists): bytes written by users, the WAL, flushes and compactions,
/// stalls, compaction time, SST sizes, files per level, the largest run.
pub(super) fn engine_counters(db: &Db, o: &Options) -> Option<EngineCounters> {
    let t = |ticker| o.get_ticker_count(ticker);
    let cf = db.cf_handle(KV_TABLE)?;
    let prop = |name: &str| db.property_int_value_cf(&cf, name).ok().flatten().unwrap_or(0);
    let levels = db
        .property_value_cf(&cf, "rocksdb.num-levels")
        .ok()
        .flatten()
        .and_then(|v| v.trim().parse::<usize>().ok())
        .unwrap_or(7);
    Some(EngineCounters {
        user_bytes: t(Ticker::BytesWritten),
        wal_bytes: t(Ticker::WalFileBytes),
        flush_bytes: t(Ticker::FlushWriteBytes),
        compaction_read_bytes: t(Ticker::CompactReadBytes),
        compaction_write_bytes: t(Ticker::CompactWriteBytes),
        stall_us: t(Ticker::StallMicros),
        compaction_us: o.get_histogram_data(Histogram::CompactionTime).sum(),
        compaction_cpu_us: o.get_histogram_data(Histogram::CompactionCpuTime).sum(),
        live_sst_bytes: prop("rocksdb.live-sst-files-size"),
        total_sst_bytes: prop("rocksdb.total-sst-files-size"),
        files_per_level: (0..levels)
            .map(|l| prop(&format!("rocksdb.num-files-at-level{l}")))
            .collect(),
        largest_run_bytes: largest_run(
            db.live_files()
                .unwrap_or_default()
                .into_iter()
                .filter(|f| f.column_family_name == KV_TABLE)
                .map(|f| (f.level, f.size as u64)),
        ),
    })
}

/// The largest sorted run of a column family whose live files are
/// (level, bytes): every L0 file is a run, every other level one.
pub(super) fn largest_run(files: impl Iterator<Item = (i32, u64)>) -> u64 {
    let mut per_level: Vec<u64> = Vec::new();
    let mut largest_l0 = 0;
    for (level, size) in files {
        if level == 0 {
            largest_l0 = largest_l0.max(size);
        } else {
            let l = level as usize;
            if per_level.len() <= l {
                per_level.resize(l + 1, 0);
            }
            per_level[l] += size;
        }
    }
    per_level.into_iter().chain([largest_l0]).max().unwrap_or(0)
}

/// The statistics' text (`rocksdb.block.cache.miss COUNT : 12`, and for
/// histograms `... P50 : 1.0 ... COUNT : 3 SUM : 7`) as counters: a ticker
/// by its name, a histogram's count and sum as `<name>.count`, `<name>.sum`.
pub(crate) fn statistics(text: &str) -> Vec<Counter> {
    let mut out = Vec::new();
    for line in text.lines() {
        let mut words = line.split_whitespace();
        let Some(name) = words.next() else { continue };
        let rest: Vec<&str> = words.collect();
        let field = |key: &str| {
            rest.windows(3)
                .find(|w| w[0] == key && w[1] == ":")
                .and_then(|w| number(w[2]))
        };
        let histogram = rest.first() == Some(&"P50");
        match (field("COUNT"), histogram) {
            (Some(count), false) => out.push(Counter::number("rocksdb", name, count)),
            (Some(count), true) => {
                out.push(Counter::number("rocksdb", format!("{name}.count"), count));
                if let Some(sum) = field("SUM") {
                    out.push(Counter::number("rocksdb", format!("{name}.sum"), sum));
                }
            }
            _ => {}
        }
    }
    out
}

/// RocksDB's human sizes (`1.03 KB`) and counts (`12K`) as numbers.
fn human(value: &str, unit: Option<&str>) -> Option<f64> {
    let scale = |u: &str| match u {
        "B" | "" => Some(1.0),
        "KB" | "K" => Some(1024.0_f64),
        "MB" | "M" => Some(1024.0_f64.powi(2)),
        "GB" | "G" => Some(1024.0_f64.powi(3)),
        "TB" | "T" => Some(1024.0_f64.powi(4)),
        _ => None,
    };
    match unit {
        Some(u) => Some(number(value)? * scale(u)?),
        None => {
            let digits = value.trim_end_matches(|c: char| c.is_ascii_alphabetic());
            let suffix = &value[digits.len()..];
            // NumberToHumanString counts in thousands, not KiB.
            let s = match suffix {
                "" => 1.0,
                "K" => 1e3,
                "M" => 1e6,
                "G" => 1e9,
                "T" => 1e12,
                _ => return None,
            };
            Some(number(digits)? * s)
        }
    }
}

/// The per-level compaction table of `cf` in a `rocksdb.stats` text:
/// counters `L0.Files`, `L0.CompactingFiles`, `L0.SizeBytes`, then each
/// column by its header (`L0.Score`, `L0.W-Amp`, `L0.Comp(sec)`, ...), and
/// the `Sum` row likewise.
pub(crate) fn level_table(text: &str, cf: &str) -> Vec<Counter> {
    let mut out = Vec::new();
    let title = format!("** Compaction Stats [{cf}] **");
    let Some(at) = text.find(&title) else {
        return out;
    };
    let mut lines = text[at + title.len()..].lines().skip_while(|l| l.trim().is_empty());
    let Some(header) = lines.next() else { return out };
    let header: Vec<&str> = header.split_whitespace().collect();
    if header.first() != Some(&"Level") || header.get(2) != Some(&"Size") {
        return out;
    }
    for line in lines.skip_while(|l| l.starts_with('-')) {
        let t: Vec<&str> = line.split_whitespace().collect();
        let Some(&level) = t.first() else { break };
        let is_level = level.strip_prefix('L').is_some_and(|n| n.parse::<u32>().is_ok());
        if !(is_level || level == "Sum") {
            break;
        }
        let mut push = |name: &str, v: Option<f64>| {
            if let Some(v) = v {
                out.push(Counter::number("rocksdb_levels", format!("{level}.{name}"), v));
            }
        };
        if let Some((files, compacting)) = t.get(1).and_then(|f| f.split_once('/')) {
            push("Files", number(files));
            push("CompactingFiles", number(compacting));
        }
        push("SizeBytes", t.get(2).and_then(|v| human(v, t.get(3).copied())));
        for (name, value) in header.iter().skip(3).zip(t.iter().skip(4)) {
            push(name, human(value, None));
        }
    }
    out
}

impl ServerCounters for RocksdbStats {
    fn wait_source(&mut self) -> Option<std::result::Result<&'static str, String>> {
        Some(Ok("rocksdb"))
    }

    /// The statistics that time a wait: syncs of the WAL, tables and
    /// manifest, write stalls, SST reads (µs and counts from their
    /// histograms), and DB mutex waits (a ticker, counted at the
    /// statistics level that times mutexes).
    fn waits(&mut self) -> Result<WaitReading> {
        let o = &self.opts;
        let mut out: Vec<(String, f64, u64)> = WAITS
            .iter()
            .map(|&(name, h)| {
                let d = o.get_histogram_data(h);
                (name.to_string(), d.sum() as f64, d.count())
            })
            .collect();
        out.push((
            "db mutex wait".into(),
            o.get_ticker_count(Ticker::DbMutexWaitMicros) as f64,
            0,
        ));
        Ok(WaitReading::Cumulative(out))
    }

    fn counters(&mut self, at_end: bool) -> Result<Vec<Counter>> {
        let mut out = statistics(&self.opts.get_statistics().unwrap_or_default());
        if let Some(cf) = self.db.cf_handle(KV_TABLE) {
            let text = self
                .db
                .property_value_cf(&cf, "rocksdb.stats")
                .ok()
                .flatten()
                .unwrap_or_default();
            out.extend(level_table(&text, KV_TABLE));
            if at_end && !text.is_empty() {
                out.push(Counter::text("rocksdb_stats", "stats", text));
            }
        }
        Ok(out)
    }

    fn gauges(&mut self) -> Result<Vec<Gauge>> {
        let Some(cf) = self.db.cf_handle(KV_TABLE) else {
            return Ok(Vec::new());
        };
        let mut out: Vec<Gauge> = GAUGES
            .iter()
            .filter_map(|&(property, name)| {
                let v = self.db.property_int_value_cf(&cf, property).ok().flatten()?;
                Some(Gauge::level("rocksdb", name, v as f64))
            })
            .collect();
        // What the engine did in each interval (the rows are per second):
        // stall µs per s (÷ 10⁴: the interval's stall %), and the bytes users,
        // flushes and compactions wrote and compactions read.
        for (ticker, name) in RATES {
            out.push(Gauge::rate("rocksdb", name, self.opts.get_ticker_count(ticker) as f64));
        }
        Ok(out)
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn statistics_text_becomes_tickers_and_histogram_sums() {
        let text = "rocksdb.block.cache.miss COUNT : 12\n\
                    rocksdb.db.get.micros P50 : 1.5 P95 : 3.0 P99 : 4.0 P100 : 9.0 COUNT : 3 SUM : 7\n";
        let c = statistics(text);
        let named: Vec<(&str, f64)> = c
            .iter()
            .map(|c| match c.value {
                crate::metrics::Reading::Number(v) => (c.name.as_str(), v),
                _ => unreachable!(),
            })
            .collect();
        assert_eq!(
            named,
            [
                ("rocksdb.block.cache.miss", 12.0),
                ("rocksdb.db.get.micros.count", 3.0),
                ("rocksdb.db.get.micros.sum", 7.0)
            ]
        );
    }

    #[test]
    fn the_level_table_is_read_column_by_column() {
        let text = "\n** Compaction Stats [kv] **\n\
Level    Files   Size     Score Read(GB)  Rn(GB) Rnp1(GB) Write(GB) Wnew(GB) Moved(GB) W-Amp Rd(MB/s) Wr(MB/s) Comp(sec) CompMergeCPU(sec) Comp(cnt) Avg(sec) KeyIn KeyDrop\n\
-------------------------------------------------------------------------\n\
  L0      3/1    1.50 MB   0.8      0.0     0.0      0.0       0.0      0.0       0.0   1.0      0.0     10.5      0.12              0.10         3    0.040       0      0\n\
  L6      1/0    2.00 GB   0.0      1.2     0.0      1.2       1.1      1.1       0.0   0.9     50.0     49.0     20.00             19.00         1   20.000    12K     1M\n\
 Sum      4/1    2.00 GB   0.0      1.2     0.0      1.2       1.1      1.1       0.0   1.0     50.0     49.0     20.12             19.10         4    5.030    12K     1M\n\
\n** Compaction Stats [kv] **\nPriority    Files   Size\n";
        let c = level_table(text, "kv");
        let get = |name: &str| {
            c.iter().find(|c| c.name == name).map(|c| match c.value {
                crate::metrics::Reading::Number(v) => v,
                _ => unreachable!(),
            })
        };
        assert_eq!(get("L0.Files"), Some(3.0));
        assert_eq!(get("L0.CompactingFiles"), Some(1.0));
        assert_eq!(get("L0.SizeBytes"), Some(1.5 * 1024.0 * 1024.0));
        assert_eq!(get("L6.SizeBytes"), Some(2.0 * 1024.0f64.powi(3)));
        assert_eq!(get("L6.W-Amp"), Some(0.9));
        assert_eq!(get("L6.Comp(cnt)"), Some(1.0));
        assert_eq!(get("L6.KeyIn"), Some(12e3));
        assert_eq!(get("Sum.KeyDrop"), Some(1e6));
        assert_eq!(get("L1.Files"), None);
        assert!(level_table(text, "default").is_empty());
    }
}
