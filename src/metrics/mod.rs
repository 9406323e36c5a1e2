//! Latency histograms and per-interval series.
//!
//! Each worker thread owns one [`Recorder`] per operation: nothing is shared
//! on the hot path. A recorder keeps the step's full HdrHistograms (response
//! and service time, in nanoseconds) and cuts a per-interval series as it
//! goes; the step merges the recorders when its threads end.
//!
//! A recorder's histograms are large (about 270 KB each) and the thread
//! that records into them has just waited on the server, which ran on the
//! same cores meanwhile: recording each operation as it ends would take a
//! few cache misses per operation. So times are kept in a small buffer and
//! recorded [`PENDING`] at a time, while the histograms stay in cache. Each
//! time goes into the current interval's histogram only (and its service
//! time into a second one, once a service time differs from its response
//! time: paced streams); an interval's histograms join the step's when the
//! interval closes.

mod costs;
mod engine;
mod environment;
mod processes;
mod server;
mod system;
mod threads;
mod waits;

pub use costs::{per_operation, COST_COLUMNS};
pub use engine::{EngineCounters, EngineDelta};
pub use environment::{host_facts, warnings, Setting};
pub use processes::{parent_named, runs_as, started_ago, ServerProcesses};
pub use server::{counter_rows, number, Counter, CounterRow, Gauge, GaugeRow, GaugeSeries, Reading};
pub use system::{DeviceCounters, DeviceDelta, DiskCounters, Disks, SystemDelta, SystemSample};
pub use threads::{NamedThread, Side, ThreadKind, ThreadLedger, ThreadOf, ThreadRoles, ThreadRow, WORKER_PREFIX};
pub use waits::{WaitReading, WaitRow, WaitSeries};

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
    /// A key/value flush or compaction wait; a pause's maintenance.
    Maintenance,
    /// A sysbench event: one transaction's statements, BEGIN to COMMIT (or
    /// one autocommit statement).
    Event,
    /// One statement of a sysbench event (BEGIN and COMMIT too).
    Statement,
}

impl Op {
    /// The name used in result tables.
    pub fn name(self) -> &'static str {
        match self {
            Op::Insert => "insert",
            Op::Delete => "delete",
            Op::Query => "query",
            Op::CreateIndex => "create_index",
            Op::Maintenance => "maintenance",
            Op::Event => "event",
            Op::Statement => "statement",
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
    /// Paced operations: from the intended start to the actual start, the
    /// client's own lateness (pgbench's "schedule lag"); None when unpaced.
    pub lag: Option<Histogram<u64>>,
}

impl Default for Latencies {
    fn default() -> Self {
        Latencies {
            response: histogram(),
            service: histogram(),
            lag: None,
        }
    }
}

impl Latencies {
    /// Adds one closed interval's times.
    pub fn add_sparse(&mut self, c: &ClosedInterval) {
        record_all(&mut self.response, &c.response);
        record_all(&mut self.service, c.service.as_ref().unwrap_or(&c.response));
        if let Some(lags) = &c.lag {
            record_all(self.lag.get_or_insert_with(histogram), lags);
        }
    }

    /// Adds another thread's histograms.
    pub fn merge(&mut self, other: &Latencies) {
        self.response.add(&other.response).expect("same bounds");
        self.service.add(&other.service).expect("same bounds");
        if let Some(theirs) = &other.lag {
            self.lag.get_or_insert_with(histogram).add(theirs).expect("same bounds");
        }
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
/// `[t_s, t_s + length_s)` seconds after the step started (`client` None:
/// all clients together).
#[derive(Clone, Debug, PartialEq)]
pub struct IntervalRow {
    /// The client; None for all clients together.
    pub client: Option<u32>,
    /// Start of the interval, seconds after the step started.
    pub t_s: f64,
    /// The interval's real length: the interval, or less for the last one
    /// (it ends when the thread or the step does).
    pub length_s: f64,
    /// The operation.
    pub op: Op,
    /// Operations that ended in the interval.
    pub count: u64,
    /// Response-time median, µs (NaN when count is 0).
    pub p50_us: f64,
    /// Response-time 99th percentile, µs.
    pub p99_us: f64,
    /// Response-time maximum, µs.
    pub max_us: f64,
    /// Schedule lag (actual − intended start) median, 99th percentile and
    /// maximum of paced operations, µs (NaN when unpaced or count is 0).
    pub lag_us: [f64; 3],
}

impl IntervalRow {
    /// Operations per second over the interval's real length.
    pub fn rate(&self) -> f64 {
        if self.length_s > 0.0 {
            self.count as f64 / self.length_s
        } else {
            0.0
        }
    }
}

/// One interval's times, sparse: (a value of each bucket, count).
type Sparse = Vec<(u64, u64)>;

/// The values recorded in `h`, sparse.
fn sparse(h: &Histogram<u64>) -> Sparse {
    h.iter_recorded()
        .map(|v| (v.value_iterated_to(), v.count_at_value()))
        .collect()
}

/// Adds a histogram's (value, count) list to `h`.
fn record_all(h: &mut Histogram<u64>, values: &[(u64, u64)]) {
    for &(value, count) in values {
        h.saturating_record_n(value, count);
    }
}

/// Operations whose times a recorder buffers before recording them.
const PENDING: usize = 256;

/// One interval a recorder closed, as it hands it over while its step still
/// runs (so the results can be written out before the step ends, and a
/// crash loses at most what came after the last write): the thread's row
/// and its times, for the step's histograms so far (the all-clients series
/// is the shared [`Series`]).
#[derive(Clone, Debug)]
pub struct ClosedInterval {
    /// The thread's row for it.
    pub row: IntervalRow,
    /// Its response, service and (paced) lag times, sparse.
    pub response: Vec<(u64, u64)>,
    /// None where they were the response times (unpaced operations).
    pub service: Option<Vec<(u64, u64)>>,
    pub lag: Option<Vec<(u64, u64)>>,
}

/// Where a thread's recorders hand over the intervals they close.
pub type Outbox = std::sync::Mutex<Vec<ClosedInterval>>;

/// The all-clients series of one operation, merged as each thread closes
/// an interval: one sparse list of times per interval whatever the number
/// of threads. Each thread keeping its own list per interval until the step
/// ended grew the client by ~100 KB/s with 12 clients at 1,000 operations/s
/// each (about 200 MB over an 1800-s step, benches/soak.py). Once every
/// thread has added an interval, [`Series::compact`] (the step's monitor,
/// off the threads' path) keeps it as what the results want of it: its
/// row's figures and its histograms serialized ([`Whole`]): as packed
/// lists of ~5,000 buckets an interval (12,000 operations/s), the series
/// grew ~15 KB/s; so kept, ~6 (benches/soak.py). A running step's flusher
/// writes the compacted intervals out ([`Series::compacted_since`]).
#[derive(Debug, Default)]
pub struct Series {
    /// The threads that add to it: an interval is whole once each has.
    threads: usize,
    /// Each interval's times while open (emptied once compacted).
    response: Vec<Sparse>,
    lag: Vec<Sparse>,
    /// How many threads added each interval.
    added: Vec<usize>,
    /// Each compacted interval.
    whole: Vec<Option<Whole>>,
    /// Intervals before this one are all compacted.
    compacted: usize,
}

/// A whole interval of a series, as its results want it: its row's figures
/// and its response times' (and paced lags') histograms, serialized.
#[derive(Debug)]
struct Whole {
    figures: Figures,
    response: Box<[u8]>,
    lag: Option<Box<[u8]>>,
}

/// A series the threads of one operation share (a recorder has one of its
/// own until given one: [`Recorder::share_series`]).
pub type SharedSeries = std::sync::Arc<std::sync::Mutex<Series>>;

impl Series {
    /// A series `threads` threads add to.
    pub fn for_threads(threads: usize) -> SharedSeries {
        std::sync::Arc::new(std::sync::Mutex::new(Series {
            threads,
            ..Series::default()
        }))
    }

    /// Adds one thread's interval `index`: its response times, and its lags
    /// when paced.
    fn add(&mut self, index: usize, response: &[(u64, u64)], lag: Option<&[(u64, u64)]>) {
        merge_into(slot(&mut self.response, index), response);
        if let Some(lag) = lag {
            merge_into(slot(&mut self.lag, index), lag);
        }
        if self.added.len() <= index {
            self.added.resize(index + 1, 0);
            self.whole.resize_with(index + 1, || None);
        }
        self.added[index] += 1;
    }

    /// Keeps each interval every thread has added as a [`Whole`], its
    /// lists freed. The step's monitor calls it every tick.
    pub fn compact(&mut self) {
        let whole = |s: &Series| s.compacted < s.added.len() && s.added[s.compacted] >= s.threads;
        if !whole(self) {
            return;
        }
        let (mut h, mut lag) = (histogram(), histogram());
        let paced = !self.lag.is_empty();
        while whole(self) {
            let i = self.compacted;
            fill(&mut h, [self.response[i].as_slice()]);
            let lags = self.lag.get(i).map(Vec::as_slice).unwrap_or_default();
            fill(&mut lag, [lags]);
            self.whole[i] = Some(Whole {
                figures: Figures::of(&h, paced.then_some(&lag)),
                response: serialize(&h).into_boxed_slice(),
                lag: paced.then(|| serialize(&lag).into_boxed_slice()),
            });
            self.response[i] = Sparse::new();
            if let Some(l) = self.lag.get_mut(i) {
                *l = Sparse::new();
            }
            self.compacted += 1;
        }
    }

    /// The all-clients rows (a full `interval` long) and serialized
    /// response times of the intervals of `op` compacted from index `from`
    /// on: what a running step writes out ([`Series::compacted`] tells
    /// where the next call starts).
    pub fn compacted_since(&self, op: Op, interval: Duration, from: usize) -> Vec<(IntervalRow, Vec<u8>)> {
        let interval_s = interval.as_secs_f64();
        (from..self.compacted)
            .filter_map(|i| {
                let w = self.whole[i].as_ref()?;
                let t_s = i as f64 * interval_s;
                Some((
                    w.figures.row(None, op, t_s, interval_s, t_s + interval_s),
                    w.response.to_vec(),
                ))
            })
            .collect()
    }

    /// How many intervals are compacted: all those before this index.
    pub fn compacted(&self) -> usize {
        self.compacted
    }

    /// Intervals so far.
    fn len(&self) -> usize {
        self.added.len()
    }

    /// Adds interval `index`'s response times and lags to `h` and `lag`.
    fn add_to(&self, index: usize, h: &mut Histogram<u64>, lag: &mut Histogram<u64>) {
        match self.whole.get(index) {
            Some(Some(w)) => {
                h.add(deserialize(&w.response).expect("serialized here"))
                    .expect("same bounds");
                if let Some(l) = &w.lag {
                    lag.add(deserialize(l).expect("serialized here")).expect("same bounds");
                }
            }
            _ => {
                record_all(h, self.response.get(index).map(Vec::as_slice).unwrap_or_default());
                record_all(lag, self.lag.get(index).map(Vec::as_slice).unwrap_or_default());
            }
        }
    }
}

/// Interval `index`'s list, made (empty, with any before it) when missing.
fn slot(lists: &mut Vec<Sparse>, index: usize) -> &mut Sparse {
    if lists.len() <= index {
        lists.resize_with(index + 1, Vec::new);
    }
    &mut lists[index]
}

/// Adds sorted (value, count) list `more` to sorted list `into`, counts of
/// equal values summed: the same histogram as recording both.
fn merge_into(into: &mut Sparse, more: &[(u64, u64)]) {
    if into.is_empty() {
        into.extend_from_slice(more);
        return;
    }
    let old = std::mem::take(into);
    into.reserve(old.len() + more.len());
    let (mut i, mut j) = (0, 0);
    while i < old.len() && j < more.len() {
        let (a, b) = (old[i], more[j]);
        if a.0 == b.0 {
            into.push((a.0, a.1 + b.1));
            (i, j) = (i + 1, j + 1);
        } else if a.0 < b.0 {
            into.push(a);
            i += 1;
        } else {
            into.push(b);
            j += 1;
        }
    }
    into.extend_from_slice(&old[i..]);
    into.extend_from_slice(&more[j..]);
}

/// One operation's times, in nanoseconds, until recorded.
#[derive(Clone, Copy)]
struct Times {
    response: u64,
    service: u64,
    /// Paced: how late it started.
    late: u64,
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
    /// When the current interval ends (None: past `Instant`'s range): an
    /// operation ending before it needs no division or subtraction to place.
    current_end: Option<Instant>,
    /// The current interval's response times.
    window: Histogram<u64>,
    /// The current interval's service times, once one differed from its
    /// response time (`service_split`; from the start of every interval
    /// when paced); until then they are `window`'s.
    service_window: Histogram<u64>,
    service_split: bool,
    paced: bool,
    /// The all-clients series the intervals' times join as they close.
    series: SharedSeries,
    /// The thread's row of each interval so far (lengths settled at the end).
    rows: Vec<IntervalRow>,
    /// Paced: the current interval's lags.
    lag_window: Option<Histogram<u64>>,
    /// Paced: how late the pacer itself woke (not a backlog), ns.
    overshoot: Option<Histogram<u64>>,
    /// The current interval's operations not yet in the histograms.
    pending: Vec<Times>,
    /// Where closed intervals are handed over while the step runs, if anywhere.
    outbox: Option<std::sync::Arc<Outbox>>,
}

/// What a recorder measured: the step's histograms, the thread's interval
/// rows, and each interval's response times (to merge across threads).
pub struct Recorded {
    /// The operation.
    pub op: Op,
    /// Over the whole step.
    pub latencies: Latencies,
    /// The thread's per-interval rows.
    pub rows: Vec<IntervalRow>,
    /// The all-clients series its intervals joined.
    series: SharedSeries,
    /// Paced: how late the pacer itself woke (not a backlog), ns.
    pub overshoot: Option<Histogram<u64>>,
}

/// When interval `index` of `interval_ns` from `start` ends (None: past
/// `Instant`'s range).
fn interval_end(start: Instant, interval_ns: u64, index: u64) -> Option<Instant> {
    start.checked_add(Duration::from_nanos(interval_ns.saturating_mul(index + 1)))
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
            current_end: interval_end(start, ns(interval), 0),
            window: histogram(),
            service_window: histogram(),
            service_split: false,
            paced: false,
            series: Series::for_threads(1),
            rows: Vec::new(),
            lag_window: None,
            overshoot: None,
            pending: Vec::with_capacity(PENDING),
            outbox: None,
        }
    }

    /// Hands each interval over to `outbox` as it closes.
    pub fn hand_over(&mut self, outbox: std::sync::Arc<Outbox>) {
        self.outbox = Some(outbox);
    }

    /// Merges each interval into `series` (shared with the other threads of
    /// the operation) as it closes, instead of a series of its own. Called
    /// before the first operation is recorded.
    pub fn share_series(&mut self, series: SharedSeries) {
        self.series = series;
    }

    /// Keeps how late the pacer itself woke (see `exec::Pacer::overshoot`).
    pub fn pacer_overshoot(&mut self, h: &Histogram<u64>) {
        self.overshoot = Some(h.clone());
    }

    /// A recorder of a paced stream: it also records each operation's
    /// schedule lag (actual − intended start).
    pub fn paced(client: u32, op: Op, start: Instant, interval: Duration) -> Self {
        let mut r = Recorder::new(client, op, start, interval);
        (r.paced, r.service_split) = (true, true);
        r.latencies.lag = Some(histogram());
        r.lag_window = Some(histogram());
        r
    }

    /// Records one operation intended to start at `intended`, started at
    /// `started`, ended at `ended`.
    #[inline]
    pub fn record(&mut self, intended: Instant, started: Instant, ended: Instant) {
        // One subtraction each, in u64 nanoseconds: this runs per operation.
        let response = ns(ended.saturating_duration_since(intended));
        let (service, late) = if started == intended {
            (response, 0)
        } else {
            (
                ns(ended.saturating_duration_since(started)),
                ns(started.saturating_duration_since(intended)),
            )
        };
        if self.current_end.is_some_and(|end| ended >= end) {
            self.roll(ns(ended.saturating_duration_since(self.start)) / self.interval_ns);
        }
        self.pending.push(Times {
            response,
            service,
            late,
        });
        if self.pending.len() == PENDING {
            self.flush();
        }
    }

    /// Records the buffered times into the current interval's histograms:
    /// they belong to it.
    fn flush(&mut self) {
        for t in &self.pending {
            if t.service != t.response && !self.service_split {
                // Service times so far this interval were the response times
                // (the service window is empty while not split).
                self.service_window
                    .add(&self.window)
                    .expect("histograms of one configuration");
                self.service_split = true;
            }
            self.window.saturating_record(t.response);
            if self.service_split {
                self.service_window.saturating_record(t.service);
            }
            if let Some(lag) = self.lag_window.as_mut() {
                lag.saturating_record(t.late);
            }
        }
        self.pending.clear();
    }

    /// Closes intervals up to `index`, keeping empty ones so a stall shows
    /// as zeros, not as a gap.
    fn roll(&mut self, index: u64) {
        while self.current < index {
            self.close();
            self.current += 1;
        }
        self.current_end = interval_end(self.start, self.interval_ns, self.current);
    }

    fn close(&mut self) {
        self.flush();
        // The interval's times join the step's, by its recorded values (the
        // interval's list, kept for the all-clients series): a few hundred
        // at most, where a whole histogram is 34,000 buckets.
        let l = &mut self.latencies;
        let window = sparse(&self.window);
        record_all(&mut l.response, &window);
        let service = if self.service_split {
            let service = sparse(&self.service_window);
            record_all(&mut l.service, &service);
            Some(service)
        } else {
            record_all(&mut l.service, &window);
            None
        };
        let lags = self.lag_window.as_ref().map(sparse);
        if let (Some(all), Some(lags)) = (l.lag.as_mut(), &lags) {
            record_all(all, lags);
        }
        let row = self.row();
        self.series
            .lock()
            .unwrap_or_else(|p| p.into_inner())
            .add(self.current as usize, &window, lags.as_deref());
        if let Some(outbox) = &self.outbox {
            let closed = ClosedInterval {
                row: row.clone(),
                service,
                response: window,
                lag: lags,
            };
            outbox.lock().unwrap_or_else(|p| p.into_inner()).push(closed);
        }
        self.rows.push(row);
        if self.service_split && !self.service_window.is_empty() {
            self.service_window.reset();
        }
        self.service_split = self.paced;
        if !self.window.is_empty() {
            self.window.reset();
        }
        if let Some(lag) = self.lag_window.as_mut().filter(|lag| !lag.is_empty()) {
            lag.reset();
        }
    }

    /// The thread's row of the interval being closed, from the window's
    /// histograms before they reset (a full interval long until `finish`).
    fn row(&self) -> IntervalRow {
        let interval_s = self.interval.as_secs_f64();
        let t_s = self.current as f64 * interval_s;
        summarise(
            Some(self.client),
            self.op,
            t_s,
            interval_s,
            t_s + interval_s,
            &self.window,
            self.lag_window.as_ref(),
        )
    }

    /// The step's histograms and interval rows, intervals covering
    /// `[0, end)` of the thread's life (the last one shorter when `end`
    /// falls inside it).
    pub fn finish(mut self, end: Instant) -> Recorded {
        let end_ns = ns(end.saturating_duration_since(self.start));
        // The interval holding the last instant before `end`, at least the first.
        let last = end_ns.saturating_sub(1) / self.interval_ns;
        self.roll(last.max(self.current));
        self.close();
        let interval_s = self.interval.as_secs_f64();
        let end_s = end_ns as f64 / 1e9;
        for row in &mut self.rows {
            row.length_s = (end_s - row.t_s).clamp(0.0, interval_s);
        }
        Recorded {
            op: self.op,
            latencies: self.latencies,
            rows: self.rows,
            series: self.series,
            overshoot: self.overshoot,
        }
    }
}

/// `h` holding exactly the values of `parts` (sparse histograms).
fn fill<'a>(h: &mut Histogram<u64>, parts: impl IntoIterator<Item = &'a [(u64, u64)]>) {
    h.reset();
    for part in parts {
        for &(v, n) in part {
            h.saturating_record_n(v, n);
        }
    }
}

/// The median, 99th percentile and maximum of `h` in µs; NaN when empty.
fn p50_p99_max(h: &Histogram<u64>) -> [f64; 3] {
    if h.is_empty() {
        return [f64::NAN; 3];
    }
    [h.value_at_quantile(0.5), h.value_at_quantile(0.99), h.max()].map(|v| v as f64 / 1000.0)
}

/// The row of interval `t_s` of `op` (of `client`; None: all clients) from
/// its response times `h` and (paced) lags `lag`.
fn summarise(
    client: Option<u32>,
    op: Op,
    t_s: f64,
    interval_s: f64,
    end_s: f64,
    h: &Histogram<u64>,
    lag: Option<&Histogram<u64>>,
) -> IntervalRow {
    Figures::of(h, lag).row(client, op, t_s, interval_s, end_s)
}

/// An interval's figures: its count, and its response times' and (paced)
/// lags' median, 99th percentile and maximum, µs.
#[derive(Clone, Copy, Debug)]
struct Figures {
    count: u64,
    response_us: [f64; 3],
    lag_us: [f64; 3],
}

impl Figures {
    /// The figures of response times `h` and lags `lag` (None: unpaced).
    fn of(h: &Histogram<u64>, lag: Option<&Histogram<u64>>) -> Figures {
        Figures {
            count: h.len(),
            response_us: p50_p99_max(h),
            lag_us: lag.map_or([f64::NAN; 3], p50_p99_max),
        }
    }

    /// The row of interval `t_s` of `op`: `interval_s` long, or less where
    /// the thread or step ended (`end_s`) inside it.
    fn row(self, client: Option<u32>, op: Op, t_s: f64, interval_s: f64, end_s: f64) -> IntervalRow {
        let [p50_us, p99_us, max_us] = self.response_us;
        IntervalRow {
            client,
            t_s,
            length_s: (end_s - t_s).clamp(0.0, interval_s),
            op,
            count: self.count,
            p50_us,
            p99_us,
            max_us,
            lag_us: self.lag_us,
        }
    }
}

/// The all-clients series of one operation: for each interval of `parts`
/// (threads' recordings of `op`), the merged response times, over intervals
/// of `interval` up to the step's end `end_s`. Returns the rows and each
/// interval's merged histogram, serialized (see [`serialize`]). Called once,
/// at the step's end: where the threads shared one series, its compacted
/// intervals move out of it rather than being copied (copying them all at
/// once was a fifth of an 1800-s step's memory, benches/soak.py).
pub fn merge_series(op: Op, parts: &[&Recorded], interval: Duration, end_s: f64) -> Vec<(IntervalRow, Vec<u8>)> {
    // Threads sharing a series merged into it already: each series once.
    let mut series: Vec<&SharedSeries> = Vec::new();
    for p in parts {
        if !series.iter().any(|s| std::sync::Arc::ptr_eq(s, &p.series)) {
            series.push(&p.series);
        }
    }
    let mut series: Vec<_> = series
        .iter()
        .map(|s| s.lock().unwrap_or_else(|p| p.into_inner()))
        .collect();
    let n = series.iter().map(|s| s.len()).max().unwrap_or(0);
    let paced = series.iter().any(|s| !s.lag.is_empty());
    let interval_s = interval.as_secs_f64();
    let (mut h, mut lag) = (histogram(), histogram());
    (0..n)
        .map(|i| {
            let t_s = i as f64 * interval_s;
            if let [one] = series.as_mut_slice() {
                if let Some(w) = one.whole.get_mut(i).and_then(Option::take) {
                    return (w.figures.row(None, op, t_s, interval_s, end_s), w.response.into_vec());
                }
            }
            h.reset();
            lag.reset();
            for s in &series {
                s.add_to(i, &mut h, &mut lag);
            }
            let row = summarise(None, op, t_s, interval_s, end_s, &h, paced.then_some(&lag));
            (row, serialize(&h))
        })
        .collect()
}

/// Microseconds since the Unix epoch, now (wall-clock stamps of runs and steps).
pub fn unix_micros() -> i64 {
    std::time::SystemTime::now()
        .duration_since(std::time::SystemTime::UNIX_EPOCH)
        .map(|d| d.as_micros() as i64)
        .unwrap_or(0)
}

/// Unix microseconds as a UTC date and time (the epoch when out of range).
pub fn utc(micros: i64) -> time::OffsetDateTime {
    time::OffsetDateTime::from_unix_timestamp_nanos(micros as i128 * 1000).unwrap_or(time::OffsetDateTime::UNIX_EPOCH)
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
        let out = r.finish(at(3.6));
        let counts: Vec<u64> = out.rows.iter().map(|r| r.count).collect();
        assert_eq!(counts, vec![1, 0, 0, 1]);
        assert_eq!(out.latencies.response.len(), 2);
        assert!((out.latencies.response.max() as f64 - 3.2e9).abs() < 3.2e9 * 1e-3);
        assert!((out.latencies.service.max() as f64 - 0.1e9).abs() < 0.1e9 * 1e-3);
    }

    #[test]
    fn buffered_times_land_in_the_interval_they_ended_in() {
        // More operations than the buffer holds in the first interval (a
        // flush mid-interval), then a few after a gap: every time is in the
        // step's histograms and in its own interval's, as if recorded at once.
        let t0 = Instant::now();
        let mut r = Recorder::paced(0, Op::Query, t0, Duration::from_secs(1));
        let at = |s: f64| t0 + Duration::from_secs_f64(s);
        let n = PENDING as u64 + 44;
        for i in 0..n {
            // Latencies 1..=n ms, each started 1 µs late.
            let intended = at(i as f64 * 1e-4);
            let started = intended + Duration::from_micros(1);
            r.record(intended, started, intended + Duration::from_millis(i + 1));
        }
        for i in 0..10 {
            let intended = at(2.5 + i as f64 * 1e-3);
            r.record(intended, intended, intended + Duration::from_micros(100));
        }
        let out = r.finish(at(3.0));
        let counts: Vec<u64> = out.rows.iter().map(|r| r.count).collect();
        assert_eq!(counts, vec![n, 0, 10]);
        assert_eq!(out.latencies.response.len(), n + 10);
        assert_eq!(out.latencies.service.len(), n + 10);
        assert_eq!(out.latencies.lag.as_ref().map(|h| h.len()), Some(n + 10));
        let max_ms = out.rows[0].max_us / 1e3;
        assert!((max_ms - n as f64).abs() < n as f64 * 1e-3, "{max_ms}");
        assert!((out.rows[2].max_us - 100.0).abs() < 0.1, "{}", out.rows[2].max_us);
        let lag_max = out.latencies.lag.as_ref().unwrap().max();
        assert!((lag_max as f64 - 1000.0).abs() < 1.0, "{lag_max}");
    }

    #[test]
    fn an_operation_ending_on_a_boundary_belongs_to_the_next_interval() {
        // Intervals are [k·i, (k+1)·i): placed by comparing with the current
        // interval's end, as by dividing the time since the start.
        let t0 = Instant::now();
        let interval = Duration::from_millis(250);
        let mut r = Recorder::new(0, Op::Insert, t0, interval);
        let ns = |n: u64| t0 + Duration::from_nanos(n);
        for end in [1, 249_999_999, 250_000_000, 499_999_999, 1_000_000_000, 1_000_000_001] {
            r.record(ns(end), ns(end), ns(end));
        }
        let out = r.finish(ns(1_100_000_000));
        let counts: Vec<u64> = out.rows.iter().map(|r| r.count).collect();
        assert_eq!(counts, vec![2, 2, 0, 0, 2]);
    }

    #[test]
    fn the_last_partial_interval_has_its_real_length_and_rate() {
        let t0 = Instant::now();
        let mut r = Recorder::new(3, Op::Query, t0, Duration::from_secs(1));
        let at = |s: f64| t0 + Duration::from_secs_f64(s);
        // 10 operations per second for 2.5 seconds.
        for i in 0..25 {
            let t = 0.05 + i as f64 * 0.1;
            r.record(at(t), at(t), at(t + 0.01));
        }
        let out = r.finish(at(2.5));
        let lengths: Vec<f64> = out.rows.iter().map(|r| r.length_s).collect();
        assert_eq!(lengths.len(), 3);
        assert!((lengths[2] - 0.5).abs() < 1e-9, "{lengths:?}");
        for row in &out.rows {
            assert!((row.rate() - 10.0).abs() < 1e-6, "{row:?}");
        }
        // A thread that ends on a boundary has no empty interval after it.
        let r = Recorder::new(0, Op::Insert, t0, Duration::from_secs(1));
        assert_eq!(r.finish(at(2.0)).rows.len(), 2);
    }

    #[test]
    fn the_all_clients_series_merges_the_threads_response_times() {
        let t0 = Instant::now();
        let at = |s: f64| t0 + Duration::from_secs_f64(s);
        let mut fast = Recorder::new(0, Op::Insert, t0, Duration::from_secs(1));
        let mut slow = Recorder::new(1, Op::Insert, t0, Duration::from_secs(1));
        for i in 0..100 {
            let t = i as f64 * 0.01;
            fast.record(at(t), at(t), at(t) + Duration::from_micros(100));
            if i % 10 == 0 {
                slow.record(at(t), at(t), at(t) + Duration::from_micros(10_000));
            }
        }
        let (a, b) = (fast.finish(at(1.0)), slow.finish(at(1.0)));
        let merged = merge_series(Op::Insert, &[&a, &b], Duration::from_secs(1), 1.0);
        assert_eq!(merged.len(), 1);
        let (row, h) = &merged[0];
        assert_eq!((row.client, row.count, deserialize(h).unwrap().len()), (None, 110, 110));
        // The median of all 110 is a fast one; the largest of the two medians is a slow one.
        assert!((row.p50_us - 100.0).abs() < 1.0, "{row:?}");
        assert!(b.rows[0].p50_us > 9_000.0);
        assert!((row.max_us - 10_000.0).abs() < 10.0);
    }

    #[test]
    fn threads_sharing_a_series_merge_to_the_same_bytes_as_separate_ones() {
        let t0 = Instant::now();
        let at = |s: f64| t0 + Duration::from_secs_f64(s);
        // Three threads over 3.5 s (a paced one too), with overlapping and distinct times.
        let record = |shared: Option<&SharedSeries>| -> Vec<Recorded> {
            (0..3u32)
                .map(|c| {
                    let mut r = if c == 2 {
                        Recorder::paced(c, Op::Insert, t0, Duration::from_secs(1))
                    } else {
                        Recorder::new(c, Op::Insert, t0, Duration::from_secs(1))
                    };
                    if let Some(s) = shared {
                        r.share_series(s.clone());
                    }
                    for i in 0..350u64 {
                        let t = i as f64 * 0.01;
                        let late = Duration::from_micros(i % 7 * 50);
                        r.record(
                            at(t),
                            at(t) + late,
                            at(t) + Duration::from_micros(100 + (i * (c as u64 + 3)) % 900),
                        );
                    }
                    r.finish(at(3.5))
                })
                .collect()
        };
        let (separate, shared) = (record(None), record(Some(&Series::for_threads(3))));
        let merged = |parts: &[Recorded]| {
            merge_series(
                Op::Insert,
                &parts.iter().collect::<Vec<_>>(),
                Duration::from_secs(1),
                3.5,
            )
        };
        let (a, b) = (merged(&separate), merged(&shared));
        // Compacted (whole intervals serialized), separate and shared alike.
        for p in separate.iter().chain(&shared) {
            p.series.lock().unwrap().compact();
        }
        assert!(shared[0].series.lock().unwrap().whole.iter().all(Option::is_some));
        let (c, d) = (merged(&separate), merged(&shared));
        assert_eq!(a.len(), 4);
        for other in [&b, &c, &d] {
            assert_eq!(other.len(), a.len());
            for ((ra, ha), (rb, hb)) in a.iter().zip(other.iter()) {
                assert_eq!(format!("{ra:?}"), format!("{rb:?}"));
                assert_eq!(ha, hb);
            }
        }
        assert_eq!(a[3].0.length_s, 0.5, "the last interval is as long as the step's rest");
        let rows = |parts: &[Recorded]| format!("{:?}", parts.iter().map(|p| &p.rows).collect::<Vec<_>>());
        assert_eq!(rows(&separate), rows(&shared));
    }

    #[test]
    fn sorted_lists_merge_summing_equal_values() {
        let mut into = vec![(1, 2), (5, 1), (9, 4)];
        merge_into(&mut into, &[(0, 1), (5, 2), (7, 1), (12, 3)]);
        assert_eq!(into, [(0, 1), (1, 2), (5, 3), (7, 1), (9, 4), (12, 3)]);
        let mut empty = Vec::new();
        merge_into(&mut empty, &[(3, 1)]);
        assert_eq!(empty, [(3, 1)]);
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
