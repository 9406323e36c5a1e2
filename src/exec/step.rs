//! Running one step (docs/harness.md's table): a thread per connection role
//! per client, each connected before a start barrier; the paced streams
//! phased across one slot; a monitor that samples the host on the interval
//! grid, reports progress, and cancels running statements when the step
//! must stop; then the threads' measurements merged.

use super::monitor::HostSampler;
use super::plan::StepPlan;
use super::role::{paced, roles, Role};
use super::shared::{Shared, Worker};
use crate::connect::{KvSession, Session, KV_TABLE};
use crate::error::Result;
use crate::metrics::{
    merge_series, percentile_us, unix_micros, GaugeRow, HostInterval, IntervalRow, Latencies, Op, Recorded, SystemDelta,
};
use crate::workload::{KvOp, Step};
use std::sync::atomic::{AtomicBool, Ordering};
use std::sync::Barrier;
use std::time::{Duration, Instant};

/// How long threads get to stop between operations before the statements
/// they still run are cancelled (long ones are cancelled at once).
const GRACE: Duration = Duration::from_millis(500);

/// What a step did.
pub(crate) struct StepOutcome {
    pub status: &'static str,
    pub error: Option<String>,
    /// What maintenance skipped, and why.
    pub notes: Vec<String>,
    pub started_at_us: i64,
    pub elapsed_s: f64,
    pub inserts: u64,
    pub deletes: u64,
    pub queries: u64,
    pub indexed_rows: u64,
    /// Reads that found their key (key/value read steps).
    pub found: u64,
    pub errors: u64,
    pub retries: u64,
    pub latencies: Vec<(Op, Latencies)>,
    /// Per client, then all clients together (client None).
    pub intervals: Vec<IntervalRow>,
    /// Per paced op: how late the pacer itself woke: p99 and max (µs), and
    /// how many of its waits ended later than `LAG_WARNING_US`, of how many.
    pub pacer_late: Vec<(Op, f64, f64, u64, u64)>,
    /// The all-clients response times of each interval: (op, t_s, count, serialized histogram).
    pub interval_histograms: Vec<(Op, f64, u64, Vec<u8>)>,
    /// Host and process counters over the whole step.
    pub system: SystemDelta,
    /// The same per interval.
    pub host_intervals: Vec<HostInterval>,
    /// The database's gauges per interval.
    pub gauges: Vec<GaugeRow>,
}

/// A connection for one role.
enum Conn {
    Table(Box<dyn Session>),
    Kv(Box<dyn KvSession>),
}

impl Conn {
    fn interrupter(&self) -> Option<crate::stop::Interrupter> {
        match self {
            Conn::Table(s) => s.interrupter(),
            Conn::Kv(s) => s.interrupter(),
        }
    }
}

impl Worker<'_> {
    /// Runs `role`, timing into `rec`, which keeps what was measured even
    /// when the role fails.
    fn run(&self, role: Role, conn: Conn, rec: &mut Recorder, t0: Instant) -> Result<()> {
        match (conn, role) {
            (Conn::Kv(mut kv), Role::KvWrite(op)) => self.kv_write(op, kv.as_mut(), rec, t0),
            (Conn::Kv(mut kv), Role::KvRead(op)) => self.kv_read(op, kv.as_mut(), rec, t0),
            (Conn::Kv(mut kv), Role::KvMaintain(op)) => self.kv_maintain(op, kv.as_mut(), rec),
            (Conn::Table(mut s), Role::Insert) => self.insert(s.as_mut(), rec, t0),
            (Conn::Table(mut s), Role::Delete) => self.delete(s.as_mut(), rec, t0),
            (Conn::Table(mut s), Role::Query(kind)) => self.query(kind, s.as_mut(), rec, t0),
            (Conn::Table(mut s), Role::Wait) => self.wait(s.as_mut(), rec, t0),
            (Conn::Table(mut s), Role::CreateIndex) => {
                self.insert_before_indexes(s.as_mut())?;
                let start = Instant::now();
                s.create_indexes(&self.table.name, self.plan.config.secondary_indexes as usize)?;
                rec.record(start, start, Instant::now());
                let rows = self.table.window().len();
                self.shared.indexed_rows.fetch_add(rows, Ordering::Relaxed);
                Ok(())
            }
            (_, role) => unreachable!("{role:?} got the other kind of session"),
        }
    }
}

use crate::metrics::Recorder;

/// Runs one step and gathers what it measured.
pub(crate) fn run_step(plan: &StepPlan<'_>) -> StepOutcome {
    let c = plan.config;
    let roles = roles(c, plan.step, plan.tables.len() as u32);
    // Each paced stream's phase: its position among the step's paced streams.
    let streams: Vec<(u64, u64)> = {
        let paced: Vec<bool> = roles.iter().map(|&(_, r)| paced(c, plan.step, r)).collect();
        let n = paced.iter().filter(|&&p| p).count() as u64;
        let mut k = 0;
        paced
            .iter()
            .map(|&p| {
                let s = (k, n);
                k += p as u64;
                s
            })
            .collect()
    };
    // A shard runs its own clients' roles, each keeping its phase among the
    // whole run's paced streams, so the shards' arrivals interleave as one
    // process's would.
    let (roles, streams): (Vec<_>, Vec<_>) = roles
        .into_iter()
        .zip(streams)
        .filter(|((client, role), _)| role.kv() || plan.clients.contains(client))
        .unzip();
    let clients = (c.clients as usize).max(c.threads as usize + 1);
    let readers = roles.iter().filter(|(_, r)| matches!(r, Role::KvRead(_))).count() as u64;
    let shared = Shared::new(clients, c.clients as usize, roles.len(), readers);
    // Queries run until every inserter is done: another shard's are not here.
    for (client, done) in shared.inserters_done.iter().enumerate() {
        if !plan.clients.contains(&(client as u32)) {
            done.store(true, Ordering::Relaxed);
        }
    }
    let step_name = plan.step.to_string();
    let target = match plan.step {
        Step::Kv(op) => c.kv_planned(op),
        step => c.writes(step).map(|w| w.rows * plan.clients.len() as u64),
    };
    let kv = plan.step.kv();
    plan.observer.step_started(&step_name, target);
    for t in plan.tables {
        t.begin_step();
    }
    let barrier = Barrier::new(roles.len() + 1);
    let interval = Duration::from_secs_f64(c.interval_seconds);
    let mut started_at_us = 0;
    let mut recorded: Vec<Recorded> = Vec::new();
    let mut sampled = None;
    let mut gauges = (Vec::new(), None);
    let sampling_done = AtomicBool::new(false);
    let mut t0 = Instant::now();
    let mut ended = t0;

    std::thread::scope(|scope| {
        let handles: Vec<_> = roles
            .iter()
            .enumerate()
            .map(|(index, &(client, role))| {
                let (barrier, shared) = (&barrier, &shared);
                let (table, slot) = if c.shared_table || role.kv() || role == Role::Wait {
                    (&plan.tables[0], client as usize)
                } else {
                    (&plan.tables[client as usize], 0)
                };
                let stream = streams[index];
                let is_paced = paced(c, plan.step, role);
                scope.spawn(move || {
                    let worker = Worker {
                        plan,
                        shared,
                        client,
                        table,
                        slot,
                        stream,
                    };
                    // Connect before the barrier: connecting is not part of the step.
                    let conn = if role.kv() {
                        plan.connector.kv_session().map(Conn::Kv)
                    } else {
                        plan.connector.session().and_then(|mut s| {
                            s.prepare(&table.name)?;
                            Ok(Conn::Table(s))
                        })
                    };
                    if let Ok(conn) = &conn {
                        *shared.interrupters[index].lock().unwrap_or_else(|p| p.into_inner()) =
                            conn.interrupter().map(|i| (i, role.long()));
                    }
                    // Connected; then released once the step's first sample is taken.
                    barrier.wait();
                    barrier.wait();
                    let t0 = *shared.start.get_or_init(Instant::now);
                    let mut rec = worker.recorder(role.op(), t0, is_paced);
                    if let Err(e) = conn.and_then(|conn| worker.run(role, conn, &mut rec, t0)) {
                        // A statement cancelled because the step had to stop is not a failure.
                        let halted = plan.stop.requested() || shared.timed_out.load(Ordering::Relaxed);
                        if !(e.is_canceled() && halted) {
                            shared.errors.fetch_add(1, Ordering::Relaxed);
                            shared.fail(e.to_string());
                        }
                    }
                    *shared.interrupters[index].lock().unwrap_or_else(|p| p.into_inner()) = None;
                    let end = Instant::now();
                    (rec.finish(end), end)
                })
            })
            .collect();
        if let Some(at) = plan.start_at_us {
            let late_us = wait_until(at, plan.stop);
            // The schedules count from the common instant even when this
            // process reached it late: the lateness shows as schedule lag.
            let anchor = Instant::now()
                .checked_sub(Duration::from_micros(late_us.max(0) as u64))
                .unwrap_or_else(Instant::now);
            let _ = shared.start.set(anchor);
            if late_us > LATE_START_US {
                shared.note(vec![format!(
                    "this process reached the step's common start {:.1} ms late (it was still connecting or finishing the step before); its schedules count from the common start",
                    late_us as f64 / 1000.0
                )]);
            }
        }
        // Every worker connected: the first sample, then their release. A
        // sample taken after the release missed what the workers did before
        // this thread got to it (on a busy core, whole operations of CPU).
        barrier.wait();
        let mut sampler = HostSampler::start(&plan.probe.servers, &plan.probe.disks, interval);
        barrier.wait();
        t0 = *shared.start.get_or_init(Instant::now);
        started_at_us = plan.start_at_us.unwrap_or_else(unix_micros);
        let done = &sampling_done;
        let gauge_thread = plan
            .stats
            .map(|stats| scope.spawn(move || super::monitor::sample_gauges(stats, t0, interval, done)));
        let mut halted_at: Option<Instant> = None;
        let mut cancelled_at: Option<Instant> = None;
        while !handles.iter().all(|h| h.is_finished()) {
            let done = match kv {
                Some(op) if op.reads() => shared.queries.load(Ordering::Relaxed),
                Some(op) if op.deletes() => shared.deleted(),
                _ => shared.inserted(),
            };
            plan.observer.step_progress(&step_name, done, t0.elapsed());
            if c.max_seconds.is_some_and(|max| t0.elapsed().as_secs_f64() > max) {
                shared.timed_out.store(true, Ordering::Relaxed);
            }
            let halting = plan.stop.requested() || shared.timed_out.load(Ordering::Relaxed) || shared.aborted();
            if halting {
                let since = *halted_at.get_or_insert_with(Instant::now);
                if cancelled_at.is_none_or(|at| at.elapsed() >= Duration::from_millis(250)) {
                    cancel_running(&shared, since.elapsed() >= GRACE);
                    cancelled_at = Some(Instant::now());
                }
            }
            let max_sleep = if halting {
                Duration::from_millis(20)
            } else {
                Duration::from_millis(100)
            };
            std::thread::sleep(sampler.tick(t0, max_sleep));
        }
        sampling_done.store(true, Ordering::Relaxed);
        if let Some(g) = &gauge_thread {
            g.thread().unpark(); // it parks until the next boundary
        }
        if let Some(Ok(sampled)) = gauge_thread.map(|g| g.join()) {
            gauges = sampled;
        }
        ended = t0;
        for h in handles {
            match h.join() {
                Ok((rec, end)) => {
                    ended = ended.max(end);
                    recorded.push(rec);
                }
                Err(_) => {
                    shared.errors.fetch_add(1, Ordering::Relaxed);
                    shared.fail("a worker thread panicked".into());
                }
            }
        }
        sampled = Some(sampler);
    });
    // overwriteandwait: the rates count the writing; the engine counters
    // read after the step include the compaction this waits for.
    if plan.step == Step::Kv(KvOp::OverwriteAndWait) && !shared.aborted() && !plan.stop.requested() {
        let waited = plan.connector.kv_session().and_then(|mut s| {
            let interrupt = s.interrupter();
            plan.stop
                .guard(interrupt.as_ref(), || s.wait_for_compaction(KV_TABLE, plan.stop))
        });
        match waited {
            Ok(notes) => shared.note(notes),
            Err(e) if e.is_canceled() && plan.stop.requested() => {}
            Err(e) => {
                shared.errors.fetch_add(1, Ordering::Relaxed);
                shared.fail(e.to_string());
            }
        }
    }
    let (system, host_intervals) = sampled.expect("the scope ran").finish();
    let elapsed_s = ended.duration_since(t0).as_secs_f64();
    let mut latencies: Vec<(Op, Latencies)> = Vec::new();
    let mut intervals = Vec::new();
    let mut interval_histograms = Vec::new();
    let mut pacer_late = Vec::new();
    let mut ops: Vec<Op> = recorded.iter().map(|r| r.op).collect();
    ops.sort();
    ops.dedup();
    for op in ops {
        let parts: Vec<&Recorded> = recorded.iter().filter(|r| r.op == op).collect();
        let mut merged = Latencies::default();
        for p in &parts {
            merged.merge(&p.latencies);
            intervals.extend(p.rows.iter().cloned());
        }
        latencies.push((op, merged));
        let mut late: Option<hdrhistogram::Histogram<u64>> = None;
        for h in parts.iter().filter_map(|p| p.overshoot.as_ref()) {
            late.get_or_insert_with(crate::metrics::histogram)
                .add(h)
                .expect("same bounds");
        }
        if let Some(h) = late.filter(|h| !h.is_empty()) {
            let over = h.count_between((super::LAG_WARNING_US * 1000.0) as u64, u64::MAX);
            pacer_late.push((op, percentile_us(&h, 99.0), percentile_us(&h, 100.0), over, h.len()));
        }
        for (row, h) in merge_series(op, &parts, interval, elapsed_s) {
            interval_histograms.push((op, row.t_s, row.count, h));
            intervals.push(row);
        }
    }
    let errors = shared.errors.load(Ordering::Relaxed);
    let retries = shared.retries.load(Ordering::Relaxed);
    let counts = (
        shared.inserted(),
        shared.deleted(),
        shared.queries.load(Ordering::Relaxed),
        shared.indexed_rows.load(Ordering::Relaxed),
        shared.found.load(Ordering::Relaxed),
    );
    let timed_out = shared.timed_out.load(Ordering::Relaxed);
    let (error, mut notes) = shared.take();
    notes.extend(gauges.1);
    let status = if error.is_some() {
        "error"
    } else if plan.stop.requested() {
        "interrupted"
    } else if timed_out {
        "timeout"
    } else {
        "ok"
    };
    StepOutcome {
        status,
        error,
        notes,
        started_at_us,
        elapsed_s,
        inserts: counts.0,
        deletes: counts.1,
        queries: counts.2,
        indexed_rows: counts.3,
        found: counts.4,
        errors,
        retries,
        latencies,
        intervals,
        interval_histograms,
        pacer_late,
        system,
        host_intervals,
        gauges: gauges.0,
    }
}

/// Reaching a common start later than this (µs) is noted with the step.
const LATE_START_US: i64 = 50_000;

/// Sleeps until the wall clock reads `at_us` (Unix µs), or a stop is
/// requested; returns how late it is then (µs; negative when stopped early).
fn wait_until(at_us: i64, stop: &crate::stop::Stop) -> i64 {
    loop {
        let left = at_us - unix_micros();
        if left <= 0 || stop.requested() {
            return -left;
        }
        std::thread::sleep(Duration::from_micros(left.min(50_000) as u64));
    }
}

/// Cancels the statements the step's sessions run: long ones (index
/// creation, maintenance) always, the others when `all` (the grace passed).
fn cancel_running(shared: &Shared, all: bool) {
    for slot in &shared.interrupters {
        let registered = slot.lock().unwrap_or_else(|p| p.into_inner()).clone();
        if let Some((interrupt, long)) = registered {
            if long || all {
                interrupt();
            }
        }
    }
}
