//! Running one step: a thread per connection role per client, a start
//! barrier, open-loop pacing for rate-limited writes, closed loops for the
//! rest, and the stop rules.

use super::kv::KvState;
use super::pacing::Schedule;
use super::tables::TableState;
use super::Observer;
use crate::connect::{Connector, KvSession, Session};
use crate::error::Result;
use crate::gen::{Domains, PointQueries, RangeQueries, RowCursor, RowGen, RowSpec, Rows, SecondaryIndex};
use crate::metrics::{HostInterval, IntervalRow, Latencies, Op, Recorder, SystemDelta, SystemSample};
use crate::workload::{Config, KvOp, QueryKind, Step};
use std::sync::atomic::{AtomicBool, AtomicU64, Ordering};
use std::sync::{Barrier, Mutex, OnceLock};
use std::time::{Duration, Instant, SystemTime};

/// What a step is asked to do.
pub(crate) struct StepPlan<'a> {
    pub config: &'a Config,
    pub connector: &'a dyn Connector,
    pub tables: &'a [TableState],
    pub step: Step,
    /// The step's position in the run: query streams differ per step.
    pub ordinal: u64,
    /// Whether the secondary indexes exist.
    pub indexed: bool,
    pub stop: &'a AtomicBool,
    pub observer: &'a dyn Observer,
    /// The key/value table's state, for key/value steps.
    pub kv: Option<&'a KvState>,
}

/// What a step did.
pub(crate) struct StepOutcome {
    pub status: &'static str,
    pub error: Option<String>,
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
    pub intervals: Vec<IntervalRow>,
    /// Host and process counters over the whole step.
    pub system: SystemDelta,
    /// The same per interval.
    pub host_intervals: Vec<HostInterval>,
}

#[derive(Clone, Copy, PartialEq)]
enum Role {
    Insert,
    Delete,
    Query(QueryKind),
    CreateIndex,
    KvWrite(KvOp),
    KvRead(KvOp),
    KvMaintain(KvOp),
}

/// Attempts after the first for an operation that hit a deadlock or a serialization failure.
const MAX_RETRIES: u32 = 10;

/// State the step's threads share.
pub(super) struct Shared {
    /// Rows (pairs) each client (thread) has written.
    pub(super) inserted: Vec<AtomicU64>,
    inserters_done: Vec<AtomicBool>,
    deleted: AtomicU64,
    pub(super) queries: AtomicU64,
    indexed_rows: AtomicU64,
    /// Key/value reads that found their key.
    pub(super) found: AtomicU64,
    /// Key/value readers still running (readwhilewriting's writer stops at 0).
    pub(super) readers_left: AtomicU64,
    errors: AtomicU64,
    retries: AtomicU64,
    abort: AtomicBool,
    timed_out: AtomicBool,
    error: Mutex<Option<String>>,
    start: OnceLock<Instant>,
}

impl Shared {
    fn fail(&self, message: String) {
        self.error
            .lock()
            .unwrap_or_else(|p| p.into_inner())
            .get_or_insert(message);
        self.abort.store(true, Ordering::SeqCst);
    }
}

/// Per-client work of a write step: rows to insert, rows per commit, and
/// the background rate (rows/s) for q steps.
struct Writes {
    rows: u64,
    rows_per_commit: u32,
    rate: Option<u32>,
}

fn writes(config: &Config, step: Step) -> Option<Writes> {
    let (rows, rows_per_commit, rate) = match step {
        Step::LoadI0 => (config.rows_l_i0, config.rows_per_commit_l_i0, None),
        Step::LoadI1 => (config.rows_l_i1, config.rows_per_commit_l_i1, None),
        Step::LoadI2 => (config.rows_l_i2, config.rows_per_commit_l_i2, None),
        Step::Query { rate, .. } => (
            (config.query_seconds * rate as f64).round().max(1.0) as u64,
            config.rows_per_commit_q,
            Some(rate),
        ),
        Step::CreateIndexes | Step::Wait | Step::Kv(_) => return None,
    };
    Some(Writes {
        rows,
        rows_per_commit,
        rate,
    })
}

/// Rows per commit of a step, for the steps table.
pub(crate) fn rows_per_commit(config: &Config, step: Step) -> Option<u32> {
    writes(config, step).map(|w| w.rows_per_commit)
}

/// Rows each client inserts in a step.
pub(crate) fn rows_per_client(config: &Config, step: Step) -> Option<u64> {
    writes(config, step).map(|w| w.rows)
}

pub(super) struct Worker<'a> {
    pub(super) plan: &'a StepPlan<'a>,
    pub(super) shared: &'a Shared,
    /// The client, or the thread of a key/value step.
    pub(super) client: u32,
    table: &'a TableState,
    /// The inserter's slot in its table (several inserters share one table).
    slot: usize,
}

impl Worker<'_> {
    pub(super) fn stopping(&self, t0: Instant) -> bool {
        if self.shared.abort.load(Ordering::Relaxed) || self.plan.stop.load(Ordering::Relaxed) {
            return true;
        }
        if let Some(max) = self.plan.config.max_seconds {
            if t0.elapsed().as_secs_f64() > max {
                self.shared.timed_out.store(true, Ordering::Relaxed);
                return true;
            }
        }
        false
    }

    /// Runs `op`, again after a deadlock or serialization failure (up to
    /// [`MAX_RETRIES`] times, each counted); the time of the failed attempts
    /// stays in the operation's latency.
    pub(super) fn retrying<T>(&self, mut op: impl FnMut() -> Result<T>) -> Result<T> {
        let mut attempt = 0;
        loop {
            match op() {
                Err(e) if e.is_retryable() && attempt < MAX_RETRIES => {
                    attempt += 1;
                    self.shared.retries.fetch_add(1, Ordering::Relaxed);
                    std::thread::sleep(Duration::from_millis(attempt as u64));
                }
                other => return other,
            }
        }
    }

    fn recorder(&self, op: Op, t0: Instant) -> Recorder {
        Recorder::new(
            self.client,
            op,
            t0,
            Duration::from_secs_f64(self.plan.config.interval_seconds),
        )
    }

    /// Runs `role`, timing into `rec`, which keeps what was measured even
    /// when the role fails.
    fn run(&self, role: Role, conn: Conn, rec: &mut Recorder, t0: Instant) -> Result<()> {
        let mut session = match conn {
            Conn::Kv(mut kv) => {
                return match role {
                    Role::KvWrite(op) => self.kv_write(op, kv.as_mut(), rec, t0),
                    Role::KvRead(op) => self.kv_read(op, kv.as_mut(), rec, t0),
                    Role::KvMaintain(op) => self.kv_maintain(op, kv.as_mut(), rec),
                    _ => unreachable!("table roles get table sessions"),
                }
            }
            Conn::Table(session) => session,
        };
        let session = session.as_mut();
        match role {
            Role::Insert => self.insert(session, rec, t0),
            Role::Delete => self.delete(session, rec, t0),
            Role::Query(kind) => self.query(kind, session, rec, t0),
            Role::CreateIndex => {
                let start = Instant::now();
                session.create_indexes(&self.table.name, self.plan.config.secondary_indexes as usize)?;
                rec.record(start, start, Instant::now());
                let rows = self.table.window().len();
                self.shared.indexed_rows.fetch_add(rows, Ordering::Relaxed);
                Ok(())
            }
            Role::KvWrite(_) | Role::KvRead(_) | Role::KvMaintain(_) => unreachable!("opened a key/value session"),
        }
    }

    fn schedule(&self, w: &Writes, t0: Instant) -> Schedule {
        match w.rate {
            Some(rate) => Schedule::rate(t0, rate as f64 / w.rows_per_commit as f64),
            None => Schedule::Unthrottled,
        }
    }

    fn insert(&self, session: &mut dyn Session, rec: &mut Recorder, t0: Instant) -> Result<()> {
        let c = self.plan.config;
        let w = writes(c, self.plan.step).expect("a write step");
        let schedule = self.schedule(&w, t0);
        let mut rows_gen = RowCursor::new(RowGen::new(&RowSpec {
            seed: c.seed,
            table: self.table.number,
            data_length: crate::gen::Length::Uniform {
                min: c.data_length[0],
                max: c.data_length[1],
            },
            ratio: c.ratio,
            ..RowSpec::default()
        })?);
        let mut rows = Rows::default();
        let (mut done, mut i) = (0u64, 0u64);
        let result = (|| {
            while done < w.rows {
                let intended = schedule.wait_for(i, || self.stopping(t0));
                if self.stopping(t0) {
                    break;
                }
                let n = (w.rows - done).min(w.rows_per_commit as u64);
                let keys = self.table.allocate(self.slot, n);
                rows_gen.generate_into(keys.start, n as usize, &mut rows)?;
                let started = Instant::now();
                self.retrying(|| session.insert(&self.table.name, &rows, c.server_keys))?;
                let ended = Instant::now();
                self.table.committed(self.slot);
                rec.record(if w.rate.is_some() { intended } else { started }, started, ended);
                done += n;
                i += 1;
                self.shared.inserted[self.client as usize].store(done, Ordering::Release);
            }
            // A paced stream lasts until the end of its last slot, so rows /
            // elapsed is the rate it kept, not one slot more.
            schedule.wait_for(i, || self.stopping(t0));
            Ok(())
        })();
        self.shared.inserters_done[self.client as usize].store(true, Ordering::Release);
        result
    }

    fn delete(&self, session: &mut dyn Session, rec: &mut Recorder, t0: Instant) -> Result<()> {
        let c = self.plan.config;
        let w = writes(c, self.plan.step).expect("a write step");
        let schedule = self.schedule(&w, t0);
        let (mut done, mut i) = (0u64, 0u64);
        let inserted = &self.shared.inserted[self.client as usize];
        let inserter_done = &self.shared.inserters_done[self.client as usize];
        while done < w.rows {
            let intended = schedule.wait_for(i, || self.stopping(t0));
            // Delete no more than this client has inserted in the step.
            let want = (w.rows - done).min(w.rows_per_commit as u64);
            let n = loop {
                if self.stopping(t0) {
                    return Ok(());
                }
                let finished = inserter_done.load(Ordering::Acquire);
                let available = inserted.load(Ordering::Acquire).saturating_sub(done);
                if available >= want || (finished && available > 0) {
                    break want.min(available);
                }
                if finished {
                    return Ok(());
                }
                std::thread::sleep(Duration::from_micros(200));
            };
            let keys = self.table.take_tail(n);
            if keys.is_empty() {
                std::thread::sleep(Duration::from_micros(200));
                continue;
            }
            let started = Instant::now();
            let deleted = self.retrying(|| session.delete(&self.table.name, keys.clone()))?;
            let ended = Instant::now();
            rec.record(if w.rate.is_some() { intended } else { started }, started, ended);
            if deleted != keys.end - keys.start {
                return Err(crate::Error::database(
                    self.plan.connector.target(),
                    format!("deleting keys [{}, {}) removed {deleted} rows", keys.start, keys.end),
                ));
            }
            done += deleted;
            i += 1;
            self.shared.deleted.fetch_add(deleted, Ordering::Relaxed);
        }
        schedule.wait_for(i, || self.stopping(t0));
        Ok(())
    }

    fn query(&self, kind: QueryKind, session: &mut dyn Session, rec: &mut Recorder, t0: Instant) -> Result<()> {
        let c = self.plan.config;
        let stream = self.plan.ordinal * 4096 + self.client as u64;
        let mut ranges = RangeQueries::new(c.seed, self.table.number, stream, 0, Domains::default());
        let mut points = PointQueries::new(c.seed, self.table.number, stream, 0);
        let all_inserted = || self.shared.inserters_done.iter().all(|d| d.load(Ordering::Acquire));
        while !all_inserted() && !self.stopping(t0) {
            let started = Instant::now();
            match kind {
                QueryKind::Range => {
                    let q = ranges.next_query();
                    let position = SecondaryIndex::ALL.iter().position(|&i| i == q.index).unwrap_or(0);
                    let indexed = self.plan.indexed && position < c.secondary_indexes as usize;
                    self.retrying(|| session.range_query(&self.table.name, &q, indexed))?;
                }
                QueryKind::Point => {
                    let w = self.table.window();
                    if w.is_empty() {
                        std::thread::sleep(Duration::from_millis(1));
                        continue;
                    }
                    let keys = points.next_keys(w);
                    self.retrying(|| session.point_query(&self.table.name, &keys))?;
                }
            }
            rec.record(started, started, Instant::now());
            self.shared.queries.fetch_add(1, Ordering::Relaxed);
        }
        Ok(())
    }
}

/// A connection for one role.
enum Conn {
    Table(Box<dyn Session>),
    Kv(Box<dyn KvSession>),
}

/// The roles of a key/value step: (thread, role).
fn kv_roles(c: &Config, op: KvOp) -> Vec<(u32, Role)> {
    let threads = c.threads;
    match op {
        KvOp::Flush | KvOp::WaitForCompaction => vec![(0, Role::KvMaintain(op))],
        KvOp::ReadRandom | KvOp::SeekRandom => (0..threads).map(|t| (t, Role::KvRead(op))).collect(),
        KvOp::ReadWhileWriting => (0..threads)
            .map(|t| (t, Role::KvRead(op)))
            .chain([(threads, Role::KvWrite(op))])
            .collect(),
        _ => (0..threads).map(|t| (t, Role::KvWrite(op))).collect(),
    }
}

/// Operations a key/value step will run in all, when known: pairs written,
/// or reads for the read steps.
pub(crate) fn kv_planned(c: &Config, op: KvOp) -> Option<u64> {
    match op {
        KvOp::Flush | KvOp::WaitForCompaction => None,
        KvOp::ReadRandom | KvOp::SeekRandom | KvOp::ReadWhileWriting => {
            (0..c.threads as u64).map(|t| c.kv_reader(0, t).ok()?.count).sum()
        }
        _ => (0..c.threads as u64).map(|t| c.kv_writer(op, 0, t).ok()??.count).sum(),
    }
}

/// Runs one step and gathers what it measured.
pub(crate) fn run_step(plan: &StepPlan<'_>) -> StepOutcome {
    let c = plan.config;
    let clients = (c.clients as usize).max(c.threads as usize + 1);
    let mut roles: Vec<(u32, Role)> = Vec::new();
    match plan.step {
        Step::CreateIndexes => roles.extend((0..plan.tables.len() as u32).map(|t| (t, Role::CreateIndex))),
        Step::Wait => {}
        Step::Kv(op) => roles = kv_roles(c, op),
        step => {
            for client in 0..c.clients {
                roles.push((client, Role::Insert));
                if c.delete_per_insert && step != Step::LoadI0 {
                    roles.push((client, Role::Delete));
                }
                if let Step::Query { kind, .. } = step {
                    roles.push((client, Role::Query(kind)));
                }
            }
        }
    }
    let shared = Shared {
        inserted: (0..clients).map(|_| AtomicU64::new(0)).collect(),
        // The q steps' queries run until every client's inserter is done.
        inserters_done: (0..c.clients).map(|_| AtomicBool::new(false)).collect(),
        deleted: AtomicU64::new(0),
        queries: AtomicU64::new(0),
        indexed_rows: AtomicU64::new(0),
        found: AtomicU64::new(0),
        readers_left: AtomicU64::new(roles.iter().filter(|(_, r)| matches!(r, Role::KvRead(_))).count() as u64),
        errors: AtomicU64::new(0),
        retries: AtomicU64::new(0),
        abort: AtomicBool::new(false),
        timed_out: AtomicBool::new(false),
        error: Mutex::new(None),
        start: OnceLock::new(),
    };
    let step_name = plan.step.to_string();
    let target = match plan.step {
        Step::Kv(op) => kv_planned(c, op),
        step => rows_per_client(c, step).map(|r| r * c.clients as u64),
    };
    let reads_progress = matches!(
        plan.step,
        Step::Kv(KvOp::ReadRandom | KvOp::SeekRandom | KvOp::ReadWhileWriting)
    );
    plan.observer.step_started(&step_name, target);
    let barrier = Barrier::new(roles.len() + 1);
    let servers = plan.connector.server_processes();
    let interval = Duration::from_secs_f64(c.interval_seconds);
    let mut host_intervals = Vec::new();
    let mut first = SystemSample::default();
    let mut last_previous = SystemSample::default();
    let mut last_boundary = 0.0;
    let mut started_at_us = 0;
    let mut recorders = Vec::new();
    let mut ended = Instant::now();

    std::thread::scope(|scope| {
        let handles: Vec<_> = roles
            .iter()
            .map(|&(client, role)| {
                let (barrier, shared) = (&barrier, &shared);
                let (table, slot) = if c.shared_table || matches!(plan.step, Step::Kv(_)) {
                    (&plan.tables[0], client as usize)
                } else {
                    (&plan.tables[client as usize], 0)
                };
                scope.spawn(move || {
                    let worker = Worker {
                        plan,
                        shared,
                        client,
                        table,
                        slot,
                    };
                    // Connect before the barrier: connecting is not part of the step.
                    let session = match role {
                        Role::KvWrite(_) | Role::KvRead(_) | Role::KvMaintain(_) => {
                            plan.connector.kv_session().map(Conn::Kv)
                        }
                        _ => plan.connector.session().map(Conn::Table),
                    };
                    barrier.wait();
                    let t0 = *shared.start.get_or_init(Instant::now);
                    let op = match role {
                        Role::Insert => Op::Insert,
                        Role::Delete => Op::Delete,
                        Role::Query(_) => Op::Query,
                        Role::CreateIndex => Op::CreateIndex,
                        Role::KvWrite(_) => Op::Insert,
                        Role::KvRead(_) => Op::Query,
                        Role::KvMaintain(_) => Op::Maintenance,
                    };
                    let mut rec = worker.recorder(op, t0);
                    if let Err(e) = session.and_then(|s| worker.run(role, s, &mut rec, t0)) {
                        shared.errors.fetch_add(1, Ordering::Relaxed);
                        shared.fail(e.to_string());
                    }
                    (rec, Instant::now())
                })
            })
            .collect();
        barrier.wait();
        let t0 = *shared.start.get_or_init(Instant::now);
        started_at_us = unix_micros();
        first = SystemSample::take(&servers);
        let mut previous = first.clone();
        let mut boundary = 1u32;
        if plan.step == Step::Wait {
            run_wait(plan, &shared, t0);
        }
        while !handles.iter().all(|h| h.is_finished()) {
            let done = if reads_progress {
                shared.queries.load(Ordering::Relaxed)
            } else {
                shared.inserted.iter().map(|a| a.load(Ordering::Relaxed)).sum()
            };
            plan.observer.step_progress(&step_name, done, t0.elapsed());
            let next = interval * boundary;
            if t0.elapsed() >= next {
                // Cut the host counters on the same interval grid as the operations.
                let now = SystemSample::take(&servers);
                host_intervals.push(HostInterval {
                    t_s: (interval * (boundary - 1)).as_secs_f64(),
                    delta: SystemDelta::between(&previous, &now),
                });
                previous = now;
                boundary += 1;
            }
            std::thread::sleep(
                Duration::from_millis(100).min(next.saturating_sub(t0.elapsed()) + Duration::from_millis(1)),
            );
        }
        last_boundary = (interval * (boundary - 1)).as_secs_f64();
        last_previous = previous;
        ended = t0;
        for h in handles {
            match h.join() {
                Ok((rec, end)) => {
                    ended = ended.max(end);
                    recorders.push(rec);
                }
                Err(_) => {
                    shared.errors.fetch_add(1, Ordering::Relaxed);
                    shared.fail("a worker thread panicked".into());
                }
            }
        }
        if roles.is_empty() {
            ended = Instant::now();
        }
    });
    // overwriteandwait: the rates count the writing; the engine counters
    // read after the step include the compaction this waits for.
    if plan.step == Step::Kv(KvOp::OverwriteAndWait) && shared.error.lock().map(|e| e.is_none()).unwrap_or(false) {
        if let Err(e) = plan
            .connector
            .kv_session()
            .and_then(|mut s| s.wait_for_compaction(crate::connect::KV_TABLE))
        {
            shared.errors.fetch_add(1, Ordering::Relaxed);
            shared.fail(e.to_string());
        }
    }

    let t0 = *shared.start.get().expect("the barrier set the start");
    let last = SystemSample::take(&servers);
    let tail = SystemDelta::between(&last_previous, &last);
    if tail.seconds > 0.05 * interval.as_secs_f64() {
        host_intervals.push(HostInterval {
            t_s: last_boundary,
            delta: tail,
        });
    }
    let mut system = SystemDelta::between(&first, &last);
    // The largest server memory seen at any interval boundary, not only at the ends.
    system.server_rss = host_intervals
        .iter()
        .filter_map(|h| h.delta.server_rss)
        .chain(system.server_rss)
        .max();
    let mut latencies: Vec<(Op, Latencies)> = Vec::new();
    let mut intervals = Vec::new();
    for rec in recorders {
        let (op, lat, rows) = rec.finish();
        intervals.extend(rows);
        match latencies.iter_mut().find(|(o, _)| *o == op) {
            Some((_, l)) => l.merge(&lat),
            None => latencies.push((op, lat)),
        }
    }
    latencies.sort_by_key(|(op, _)| *op);
    let error = shared.error.into_inner().unwrap_or_else(|p| p.into_inner());
    let status = if error.is_some() {
        "error"
    } else if plan.stop.load(Ordering::Relaxed) {
        "interrupted"
    } else if shared.timed_out.load(Ordering::Relaxed) {
        "timeout"
    } else {
        "ok"
    };
    StepOutcome {
        status,
        errors: shared.errors.load(Ordering::Relaxed),
        retries: shared.retries.load(Ordering::Relaxed),
        error,
        started_at_us,
        elapsed_s: ended.duration_since(t0).as_secs_f64(),
        inserts: shared.inserted.iter().map(|a| a.load(Ordering::Relaxed)).sum(),
        deletes: shared.deleted.load(Ordering::Relaxed),
        queries: shared.queries.load(Ordering::Relaxed),
        indexed_rows: shared.indexed_rows.load(Ordering::Relaxed),
        found: shared.found.load(Ordering::Relaxed),
        latencies,
        intervals,
        system,
        host_intervals,
    }
}

/// The wait step: maintenance, then an interruptible sleep.
fn run_wait(plan: &StepPlan<'_>, shared: &Shared, t0: Instant) {
    let names: Vec<String> = plan.tables.iter().map(|t| t.name.clone()).collect();
    if let Err(e) = plan.connector.session().and_then(|mut s| s.maintain(&names)) {
        shared.errors.fetch_add(1, Ordering::Relaxed);
        shared.fail(e.to_string());
        return;
    }
    let until = Instant::now() + Duration::from_secs_f64(plan.config.wait());
    while Instant::now() < until && !plan.stop.load(Ordering::Relaxed) {
        if let Some(max) = plan.config.max_seconds {
            if t0.elapsed().as_secs_f64() > max {
                shared.timed_out.store(true, Ordering::Relaxed);
                break;
            }
        }
        plan.observer.step_progress(&plan.step.to_string(), 0, t0.elapsed());
        std::thread::sleep((until - Instant::now()).min(Duration::from_millis(100)));
    }
}

/// Microseconds since the Unix epoch, now.
pub(crate) fn unix_micros() -> i64 {
    SystemTime::now()
        .duration_since(SystemTime::UNIX_EPOCH)
        .map(|d| d.as_micros() as i64)
        .unwrap_or(0)
}
