//! What a server's sessions waited on over a step, from the database
//! itself: PostgreSQL's sessions sampled (`pg_stat_activity`), MySQL's and
//! MariaDB's wait summaries (`performance_schema`), RocksDB's wait-like
//! statistics, each read through its connector ([`crate::connect::ServerCounters::waits`]).

use std::collections::BTreeMap;

/// One reading of a server's waits.
#[derive(Clone, Debug, PartialEq)]
pub enum WaitReading {
    /// Where the run's sessions are now (PostgreSQL): each busy session's
    /// wait event (`IO:WALSync`, `LWLock:WALWrite`; `CPU` when it runs and
    /// waits on nothing), once per session.
    Sampled(Vec<String>),
    /// Each event's total wait since the server started (MySQL, MariaDB,
    /// RocksDB): its name, microseconds, and how many waits.
    Cumulative(Vec<(String, f64, u64)>),
}

/// One event's waits over one step, as `waits.parquet` holds them.
#[derive(Clone, Debug, PartialEq)]
pub struct WaitRow {
    /// The step.
    pub step: String,
    /// Where the figures come from (`pg_stat_activity`, `performance_schema`, `rocksdb`).
    pub source: &'static str,
    /// The wait event.
    pub event: String,
    /// Sampled sources: the samples that found a session in it.
    pub samples: Option<u64>,
    /// Seconds spent in it: measured (cumulative sources), or estimated as
    /// samples ÷ sampling rate (sampled sources).
    pub wait_s: f64,
    /// Cumulative sources: how many waits.
    pub count: Option<u64>,
}

/// Accumulates a step's wait readings into rows.
#[derive(Debug)]
pub struct WaitSeries {
    source: &'static str,
    sampling_hz: f64,
    /// Sampled: samples per event.
    samples: BTreeMap<String, u64>,
    /// Cumulative: the first and the last reading.
    first: Option<Vec<(String, f64, u64)>>,
    last: Option<Vec<(String, f64, u64)>>,
}

impl WaitSeries {
    /// Readings of `source`, sampled at `sampling_hz` where sampled.
    pub fn new(source: &'static str, sampling_hz: f64) -> Self {
        WaitSeries {
            source,
            sampling_hz,
            samples: BTreeMap::new(),
            first: None,
            last: None,
        }
    }

    /// Adds a reading.
    pub fn add(&mut self, reading: WaitReading) {
        match reading {
            WaitReading::Sampled(events) => {
                for e in events {
                    *self.samples.entry(e).or_default() += 1;
                }
            }
            WaitReading::Cumulative(totals) => {
                if self.first.is_none() {
                    self.first = Some(totals);
                } else {
                    self.last = Some(totals);
                }
            }
        }
    }

    /// The step's rows, most waited first: sampled events with their
    /// samples, cumulative ones with what they added between the first and
    /// the last reading (events that did not wait in the step left out).
    pub fn rows(self, step: &str) -> Vec<WaitRow> {
        let mut rows: Vec<WaitRow> = self
            .samples
            .into_iter()
            .map(|(event, n)| WaitRow {
                step: step.to_string(),
                source: self.source,
                event,
                samples: Some(n),
                wait_s: n as f64 / self.sampling_hz,
                count: None,
            })
            .collect();
        if let (Some(first), Some(last)) = (self.first, self.last) {
            let before: BTreeMap<&str, (f64, u64)> = first.iter().map(|(e, us, n)| (e.as_str(), (*us, *n))).collect();
            for (event, us, n) in &last {
                let (us0, n0) = before.get(event.as_str()).copied().unwrap_or((0.0, 0));
                if n.saturating_sub(n0) > 0 || us - us0 > 0.0 {
                    rows.push(WaitRow {
                        step: step.to_string(),
                        source: self.source,
                        event: event.clone(),
                        samples: None,
                        wait_s: (us - us0).max(0.0) / 1e6,
                        count: Some(n.saturating_sub(n0)),
                    });
                }
            }
        }
        rows.sort_by(|a, b| b.wait_s.total_cmp(&a.wait_s).then_with(|| a.event.cmp(&b.event)));
        rows
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn sampled_waits_count_samples_and_cumulative_ones_take_the_difference() {
        let mut s = WaitSeries::new("pg_stat_activity", 10.0);
        for _ in 0..3 {
            s.add(WaitReading::Sampled(vec!["IO:WALSync".into(), "CPU".into()]));
        }
        s.add(WaitReading::Sampled(vec!["IO:WALSync".into()]));
        let rows = s.rows("l.i2");
        // Seconds are samples over the rate: compared to the microsecond, as
        // the division's last bit differs between builds.
        assert_eq!(
            rows.iter()
                .map(|r| (r.event.as_str(), r.samples, (r.wait_s * 1e6).round()))
                .collect::<Vec<_>>(),
            [("IO:WALSync", Some(4), 400_000.0), ("CPU", Some(3), 300_000.0)]
        );
        let mut c = WaitSeries::new("performance_schema", 0.0);
        c.add(WaitReading::Cumulative(vec![(
            "wait/io/file/innodb/innodb_log_file".into(),
            1e6,
            10,
        )]));
        c.add(WaitReading::Cumulative(vec![
            ("wait/io/file/innodb/innodb_log_file".into(), 3.5e6, 30),
            ("wait/synch/mutex/idle".into(), 0.0, 0),
        ]));
        let rows = c.rows("l.i2");
        assert_eq!(rows.len(), 1, "{rows:?}");
        assert_eq!((rows[0].wait_s, rows[0].count), (2.5, Some(20)));
    }
}
