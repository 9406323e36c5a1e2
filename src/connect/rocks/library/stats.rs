//! The engine's counters, gauges and waits on a loaded release: what the
//! embedded engine reads (`rocks/stats.rs`: the same tickers, histograms,
//! properties and level table, by RocksDB's names), read from the
//! release's statistics text, since the C API's ticker and histogram
//! getters are newer than some releases. A statistic the release does not
//! have is named at a step's end (`rocksdb_missing`), not read as 0 unsaid.

use super::db::LibDb;
use crate::connect::rocks::stats::{largest_run, level_table, statistics, GAUGES, RATES, WAITS};
use crate::connect::{ServerCounters, KV_TABLE};
use crate::error::Result;
use crate::metrics::{Counter, EngineCounters, Gauge, Reading, WaitReading};
use rocksdb::statistics::{Histogram, Ticker};
use std::collections::HashMap;
use std::sync::Arc;

/// The statistics' numbers by name: tickers, and histograms' `.count` and `.sum`.
struct Numbers(HashMap<String, f64>);

impl Numbers {
    fn read(db: &LibDb) -> Numbers {
        Numbers::parse(&db.statistics())
    }
    fn parse(text: &str) -> Numbers {
        Numbers(
            statistics(text)
                .into_iter()
                .filter_map(|c| match c.value {
                    Reading::Number(v) => Some((c.name, v)),
                    _ => None,
                })
                .collect(),
        )
    }
    fn ticker(&self, t: Ticker) -> u64 {
        self.0.get(t.name()).copied().unwrap_or(0.0) as u64
    }
    fn histogram(&self, h: Histogram, field: &str) -> f64 {
        self.0.get(&format!("{}.{field}", h.name())).copied().unwrap_or(0.0)
    }
    /// The statistics ibench reads that the release does not have.
    fn missing(&self) -> Vec<&'static str> {
        let tickers = RATES.iter().map(|(t, _)| *t).chain(ENGINE_TICKERS);
        let histograms = WAITS.iter().map(|(_, h)| *h).chain(ENGINE_HISTOGRAMS);
        tickers
            .map(|t| t.name())
            .filter(|n| !self.0.contains_key(*n))
            .chain(
                histograms
                    .map(|h| h.name())
                    .filter(|n| !self.0.contains_key(&format!("{n}.count"))),
            )
            .collect()
    }
}

/// The tickers and histograms [`engine_counters`] reads beside RATES and WAITS.
const ENGINE_TICKERS: [Ticker; 2] = [Ticker::WalFileBytes, Ticker::DbMutexWaitMicros];
const ENGINE_HISTOGRAMS: [Histogram; 2] = [Histogram::CompactionTime, Histogram::CompactionCpuTime];

/// The engine's counters of the `kv` family now (None before it exists).
pub(super) fn engine_counters(db: &LibDb) -> Option<EngineCounters> {
    let cf = db.family(KV_TABLE)?;
    let s = Numbers::read(db);
    let prop = |name: &str| db.property_int(cf, name).unwrap_or(0);
    let levels = db
        .property(cf, "rocksdb.num-levels")
        .and_then(|v| v.trim().parse::<usize>().ok())
        .unwrap_or(7);
    Some(EngineCounters {
        user_bytes: s.ticker(Ticker::BytesWritten),
        wal_bytes: s.ticker(Ticker::WalFileBytes),
        flush_bytes: s.ticker(Ticker::FlushWriteBytes),
        compaction_read_bytes: s.ticker(Ticker::CompactReadBytes),
        compaction_write_bytes: s.ticker(Ticker::CompactWriteBytes),
        stall_us: s.ticker(Ticker::StallMicros),
        compaction_us: s.histogram(Histogram::CompactionTime, "sum") as u64,
        compaction_cpu_us: s.histogram(Histogram::CompactionCpuTime, "sum") as u64,
        live_sst_bytes: prop("rocksdb.live-sst-files-size"),
        total_sst_bytes: prop("rocksdb.total-sst-files-size"),
        files_per_level: (0..levels)
            .map(|l| prop(&format!("rocksdb.num-files-at-level{l}")))
            .collect(),
        largest_run_bytes: largest_run(db.live_files(KV_TABLE).into_iter()),
    })
}

/// Reads a loaded release's statistics and properties.
pub(super) struct LibStats {
    pub(super) db: Arc<LibDb>,
}

impl ServerCounters for LibStats {
    fn wait_source(&mut self) -> Option<std::result::Result<&'static str, String>> {
        Some(Ok("rocksdb"))
    }

    fn waits(&mut self) -> Result<WaitReading> {
        let s = Numbers::read(&self.db);
        let mut out: Vec<(String, f64, u64)> = WAITS
            .iter()
            .map(|&(name, h)| (name.to_string(), s.histogram(h, "sum"), s.histogram(h, "count") as u64))
            .collect();
        out.push(("db mutex wait".into(), s.ticker(Ticker::DbMutexWaitMicros) as f64, 0));
        Ok(WaitReading::Cumulative(out))
    }

    fn counters(&mut self, at_end: bool) -> Result<Vec<Counter>> {
        let text = self.db.statistics();
        let mut out = statistics(&text);
        if let Some(cf) = self.db.family(KV_TABLE) {
            let stats = self.db.property(cf, "rocksdb.stats").unwrap_or_default();
            out.extend(level_table(&stats, KV_TABLE));
            if at_end && !stats.is_empty() {
                out.push(Counter::text("rocksdb_stats", "stats", stats));
            }
        }
        if at_end {
            let missing = Numbers::read(&self.db).missing();
            if !missing.is_empty() {
                out.push(Counter::text(
                    "rocksdb_missing",
                    format!("not in RocksDB {}", self.db.release.version),
                    missing.join(", "),
                ));
            }
        }
        Ok(out)
    }

    fn gauges(&mut self) -> Result<Vec<Gauge>> {
        let Some(cf) = self.db.family(KV_TABLE) else {
            return Ok(Vec::new());
        };
        let mut out: Vec<Gauge> = GAUGES
            .iter()
            .filter_map(|&(property, name)| {
                let v = self.db.property_int(cf, property)?;
                Some(Gauge::level("rocksdb", name, v as f64))
            })
            .collect();
        let s = Numbers::read(&self.db);
        for (ticker, name) in RATES {
            out.push(Gauge::rate("rocksdb", name, s.ticker(ticker) as f64));
        }
        Ok(out)
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_statistic_the_release_lacks_is_named_not_read_as_zero_unsaid() {
        let all: String = RATES
            .iter()
            .map(|(t, _)| *t)
            .chain(ENGINE_TICKERS)
            .map(|t| format!("{} COUNT : 5\n", t.name()))
            .chain(WAITS.iter().map(|(_, h)| *h).chain(ENGINE_HISTOGRAMS).map(|h| {
                format!(
                    "{} P50 : 1.0 P95 : 2.0 P99 : 3.0 P100 : 4.0 COUNT : 2 SUM : 9\n",
                    h.name()
                )
            }))
            .collect();
        let every = Numbers::parse(&all);
        assert!(every.missing().is_empty());
        assert_eq!(every.ticker(Ticker::StallMicros), 5);
        assert_eq!(every.histogram(Histogram::CompactionTime, "sum"), 9.0);
        // A release without the compaction CPU histogram and the stall ticker.
        let fewer: String = all
            .lines()
            .filter(|l| {
                !l.starts_with("rocksdb.compaction.times.cpu_micros ") && !l.starts_with("rocksdb.stall.micros ")
            })
            .map(|l| format!("{l}\n"))
            .collect();
        assert_eq!(
            Numbers::parse(&fewer).missing(),
            ["rocksdb.stall.micros", "rocksdb.compaction.times.cpu_micros"]
        );
    }
}
