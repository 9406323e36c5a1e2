//! Latency histograms and per-interval series.
//!
//! Each worker thread owns one [`Recorder`] per operation: nothing is shared
//! on the hot path. A recorder keeps the step's full HdrHistograms (response
//! and service time, in nanoseconds) and cuts a per-interval series as it
//! goes; the step merges the recorders when its threads end.

mod engine;
mod environment;
mod system;

pub use engine::{EngineCounters, EngineDelta};
pub use environment::{host_facts, warnings, Setting};
pub use system::{DiskCounters, SystemDelta, SystemSample};

use hdrhistogram::serialization::{Deserializer, Serializer, V2DeflateSerializer};
use hdrhistogram::Histogram;
use std::time::{Duration, Instant};

/// The largest latency kept exactly: one hour, in nanoseconds (larger ones saturate).
const MAX_NS: u64 = 3_600_000_000_000;

/// A new histogram of nanoseconds with 3 significant digits.
pub fn histogram() -> Histogram<u64> {
    Histogram::new_with_bounds(1, MAX_NS, 3).expect("valid bounds")
}

/// Operations the harness times.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash, PartialOrd, Ord)]
pub enum Op {
    /// A batch insert (one commit).
    Insert,
    /// A batch delete from the tail (one commit).
    Delete,
    /// One query (range or point, per the step).
    Query,
    /// Creating the secondary indexes of one table.
    CreateIndex,
    /// A key/value flush or compaction wait.
    Maintenance,
}

impl Op {
    /// Every op, in report order.
    pub const ALL: [Op; 5] = [Op::Insert, Op::Delete, Op::Query, Op::CreateIndex, Op::Maintenance];

    /// The name used in result tables.
    pub fn name(self) -> &'static str {
        match self {
            Op::Insert => "insert",
            Op::Delete => "delete",
            Op::Query => "query",
            Op::CreateIndex => "create_index",
            Op::Maintenance => "maintenance",
        }
    }
}

/// Response and service time of one operation type.
#[derive(Clone, Debug)]
pub struct Latencies {
    /// From the intended start to the end (includes any backlog).
    pub response: Histogram<u64>,
    /// From the actual start to the end.
    pub service: Histogram<u64>,
}

impl Default for Latencies {
    fn default() -> Self {
        Latencies {
            response: histogram(),
            service: histogram(),
        }
    }
}

impl Latencies {
    /// Adds another thread's histograms.
    pub fn merge(&mut self, other: &Latencies) {
        self.response.add(&other.response).expect("same bounds");
        self.service.add(&other.service).expect("same bounds");
    }
}

/// The host and process counters of one interval of a step.
#[derive(Clone, Debug, PartialEq)]
pub struct HostInterval {
    /// Start of the interval, seconds after the step started.
    pub t_s: f64,
    /// What the counters did in it.
    pub delta: SystemDelta,
}

/// One row of the per-interval series: what one client's operation did in
/// `[t_s, t_s + interval)` seconds after the step started.
#[derive(Clone, Debug, PartialEq)]
pub struct IntervalRow {
    /// The client.
    pub client: u32,
    /// Start of the interval, seconds after the step started.
    pub t_s: f64,
    /// The operation.
    pub op: Op,
    /// Operations that ended in the interval.
    pub count: u64,
    /// count / interval length.
    pub rate: f64,
    /// Response-time median, µs (NaN when count is 0).
    pub p50_us: f64,
    /// Response-time 99th percentile, µs.
    pub p99_us: f64,
    /// Response-time maximum, µs.
    pub max_us: f64,
}

/// Times one operation type on one thread.
pub struct Recorder {
    client: u32,
    op: Op,
    start: Instant,
    interval: Duration,
    interval_ns: u64,
    latencies: Latencies,
    current: u64,
    window: Histogram<u64>,
    rows: Vec<IntervalRow>,
}

/// Nanoseconds as a histogram value (at least 1, the histogram's floor).
#[inline]
fn ns(d: Duration) -> u64 {
    (d.as_nanos() as u64).max(1)
}

impl Recorder {
    /// A recorder for `op` of `client`, intervals counted from `start`.
    pub fn new(client: u32, op: Op, start: Instant, interval: Duration) -> Self {
        Recorder {
            client,
            op,
            start,
            interval,
            interval_ns: ns(interval),
            latencies: Latencies::default(),
            current: 0,
            window: histogram(),
            rows: Vec::new(),
        }
    }

    /// Records one operation intended to start at `intended`, started at
    /// `started`, ended at `ended`.
    #[inline]
    pub fn record(&mut self, intended: Instant, started: Instant, ended: Instant) {
        // One subtraction each, in u64 nanoseconds: this runs per operation.
        let response = ns(ended.saturating_duration_since(intended));
        let service = if started == intended {
            response
        } else {
            ns(ended.saturating_duration_since(started))
        };
        self.latencies.response.saturating_record(response);
        self.latencies.service.saturating_record(service);
        let index = ns(ended.saturating_duration_since(self.start)) / self.interval_ns;
        if index != self.current {
            self.roll(index);
        }
        self.window.saturating_record(response);
    }

    /// Closes intervals up to `index`, emitting empty rows for silent ones so
    /// a stall shows as zeros, not as a gap.
    fn roll(&mut self, index: u64) {
        while self.current < index {
            self.emit();
            self.current += 1;
        }
    }

    fn emit(&mut self) {
        let h = &self.window;
        let count = h.len();
        let us = |v: u64| if count == 0 { f64::NAN } else { v as f64 / 1000.0 };
        self.rows.push(IntervalRow {
            client: self.client,
            t_s: self.current as f64 * self.interval.as_secs_f64(),
            op: self.op,
            count,
            rate: count as f64 / self.interval.as_secs_f64(),
            p50_us: us(h.value_at_quantile(0.5)),
            p99_us: us(h.value_at_quantile(0.99)),
            max_us: us(h.max()),
        });
        self.window.reset();
    }

    /// The step's histograms and interval rows. The last interval is emitted
    /// when it holds operations, or when it is the only one.
    pub fn finish(mut self) -> (Op, Latencies, Vec<IntervalRow>) {
        if !self.window.is_empty() || self.rows.is_empty() {
            self.emit();
        }
        (self.op, self.latencies, self.rows)
    }
}

/// A histogram serialized in HdrHistogram's compressed V2 format (the format
/// the Java, Python and Go libraries read).
pub fn serialize(h: &Histogram<u64>) -> Vec<u8> {
    let mut out = Vec::new();
    V2DeflateSerializer::new()
        .serialize(h, &mut out)
        .expect("in-memory serialization");
    out
}

/// Reads a histogram written by [`serialize`].
pub fn deserialize(bytes: &[u8]) -> crate::Result<Histogram<u64>> {
    Deserializer::new()
        .deserialize(&mut std::io::Cursor::new(bytes))
        .map_err(|e| crate::Error::format("reading a histogram", format!("{e:?}")))
}

/// Percentile `q` (0..=100) of `h` in microseconds; NaN when empty.
pub fn percentile_us(h: &Histogram<u64>, q: f64) -> f64 {
    if h.is_empty() {
        return f64::NAN;
    }
    h.value_at_percentile(q) as f64 / 1000.0
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn intervals_include_empty_ones_during_a_gap() {
        let t0 = Instant::now();
        let mut r = Recorder::new(0, Op::Insert, t0, Duration::from_secs(1));
        let at = |s: f64| t0 + Duration::from_secs_f64(s);
        r.record(at(0.1), at(0.1), at(0.2));
        r.record(at(0.3), at(3.4), at(3.5)); // a 3 s stall
        let (_, lat, rows) = r.finish();
        let counts: Vec<u64> = rows.iter().map(|r| r.count).collect();
        assert_eq!(counts, vec![1, 0, 0, 1]);
        assert_eq!(lat.response.len(), 2);
        assert!((lat.response.max() as f64 - 3.2e9).abs() < 3.2e9 * 1e-3);
        assert!((lat.service.max() as f64 - 0.1e9).abs() < 0.1e9 * 1e-3);
    }

    #[test]
    fn histograms_round_trip_through_serialization() {
        let mut h = histogram();
        for v in 1..10_000u64 {
            h.record(v * 1000).unwrap();
        }
        let back = deserialize(&serialize(&h)).unwrap();
        assert_eq!(back.len(), h.len());
        assert_eq!(back.value_at_quantile(0.99), h.value_at_quantile(0.99));
    }
}
