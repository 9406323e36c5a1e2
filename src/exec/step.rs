//! Running one step (docs/harness.md's table), in phases:
//!
//! 1. **prepare**: the step's roles (a thread per connection role per
//!    client), each paced stream's phase, the state they share;
//! 2. **start roles**: each thread connects, then waits at a barrier;
//! 3. **release**: the CPU profiles started (`profile = "perf"`), the host's
//!    first sample, the common start, the threads released;
//! 4. **monitor**: the host sampled on the interval grid, progress reported,
//!    running statements cancelled when the step must stop;
//! 5. **stop**: the threads joined (and overwriteandwait's compaction
//!    waited for), the profiles' sampling ended;
//! 6. **merge**: the threads' measurements merged per operation;
//! 7. **status**: how the step ended; the profiles folded.

use super::flush::{Flusher, Progress};
use super::monitor::HostSampler;
use super::plan::StepPlan;
use super::profiling::StepProfiles;
use super::role::{paced, roles, Role};
use super::shared::{Shared, Worker};
use crate::clock::{Clock, SimulatedClock, SystemClock};
use crate::connect::{KvSession, SbSession, Session, KV_TABLE};
use crate::error::Result;
use crate::metrics::{
    merge_series, percentile_us, unix_micros, GaugeRow, HostInterval, IntervalRow, Latencies, Op, Outbox, Recorded,
    Recorder, Series, SharedSeries, SystemDelta, ThreadRow, WaitRow, WORKER_PREFIX,
};
use crate::results::{ProfileRow, StepStatus};
use crate::workload::{KvOp, SbStep, Step};
use std::sync::atomic::{AtomicBool, Ordering};
use std::sync::{Arc, Barrier};
use std::thread::{Scope, ScopedJoinHandle};
use std::time::{Duration, Instant};

/// How long threads get to stop between operations before the statements
/// they still run are cancelled (long ones are cancelled at once).
const GRACE: Duration = Duration::from_millis(500);

/// Reaching a common start later than this (µs) is noted with the step.
const LATE_START_US: i64 = 50_000;

/// How late a paced operation's own pacer woke, over a step.
#[derive(Clone, Copy, Debug, PartialEq)]
pub(crate) struct PacerLateness {
    pub op: Op,
    /// The 99th percentile and the maximum, µs.
    pub p99_us: f64,
    pub max_us: f64,
    /// Waits that ended later than `LAG_WARNING_US`, of `waits`.
    pub late: u64,
    pub waits: u64,
}

/// The all-clients response times of one interval of one operation.
#[derive(Clone, Debug, PartialEq)]
pub(crate) struct IntervalHistogram {
    pub op: Op,
    /// The interval's start, seconds from the step's.
    pub t_s: f64,
    pub count: u64,
    /// Serialized (`metrics::serialize`).
    pub histogram: Vec<u8>,
}

/// How many operations of each kind a step did.
#[derive(Clone, Copy, Debug, Default, PartialEq)]
pub(crate) struct Counts {
    pub inserts: u64,
    pub deletes: u64,
    pub queries: u64,
    pub indexed_rows: u64,
    /// Reads that found their key (key/value read steps).
    pub found: u64,
    /// sysbench events (transactions) run; their statements are `queries`.
    pub events: u64,
    /// Rows the sysbench statements returned or changed.
    pub statement_rows: u64,
    pub errors: u64,
    pub retries: u64,
}

/// What a step did.
#[derive(Default)]
pub(crate) struct StepOutcome {
    pub status: StepStatus,
    pub error: Option<String>,
    /// What maintenance skipped, and why.
    pub notes: Vec<String>,
    pub started_at_us: i64,
    pub elapsed_s: f64,
    pub counts: Counts,
    pub latencies: Vec<(Op, Latencies)>,
    /// Per client, then all clients together (client None).
    pub intervals: Vec<IntervalRow>,
    /// Per paced op: how late its pacer woke.
    pub pacer_late: Vec<PacerLateness>,
    /// The all-clients response times of each interval.
    pub interval_histograms: Vec<IntervalHistogram>,
    /// Host and process counters over the whole step.
    pub system: SystemDelta,
    /// The same per interval.
    pub host_intervals: Vec<HostInterval>,
    /// The database's gauges per interval.
    pub gauges: Vec<GaugeRow>,
    /// What the server's sessions waited on (`profile`).
    pub waits: Vec<WaitRow>,
    /// The step's CPU profiles (`profile = "perf"`).
    pub profiles: Vec<ProfileRow>,
    /// Its CPU by thread role, server and client apart.
    pub threads: Vec<ThreadRow>,
}

/// A connection for one role.
enum Conn {
    Table(Box<dyn Session>),
    Kv(Box<dyn KvSession>),
    Sb(Box<dyn SbSession>),
}

impl Conn {
    /// Opens `role`'s connection (a table session prepared for `table`).
    fn open(plan: &StepPlan<'_>, role: Role, table: &str) -> Result<Conn> {
        if role.kv() {
            plan.connector.kv_session().map(Conn::Kv)
        } else if role.sb() {
            plan.connector.sb_session().map(Conn::Sb)
        } else {
            let mut s = plan.connector.session()?;
            s.prepare(table)?;
            Ok(Conn::Table(s))
        }
    }

    fn interrupter(&self) -> Option<crate::stop::Interrupter> {
        match self {
            Conn::Table(s) => s.interrupter(),
            Conn::Kv(s) => s.interrupter(),
            Conn::Sb(s) => s.interrupter(),
        }
    }
}

impl<C: Clock> Worker<'_, C> {
    /// Runs `role`, timing into `recs` (one per operation of
    /// [`Role::ops`]), which keep what was measured even when the role fails.
    fn run(&self, role: Role, conn: &mut Conn, recs: &mut [Recorder], t0: Instant) -> Result<()> {
        let rec = &mut recs[0];
        match (conn, role) {
            (Conn::Sb(s), Role::SbEvents(m)) => self.sb_events(m, s.as_mut(), recs, t0),
            (Conn::Sb(s), Role::SbLoad) => self.sb_load(s.as_mut(), rec, t0),
            (Conn::Sb(s), Role::SbIndex) => self.sb_index(s.as_mut(), rec, t0),
            (Conn::Sb(s), Role::SbPause) => self.sb_pause(s.as_mut(), rec, t0),
            (Conn::Kv(kv), Role::KvWrite(op)) => self.kv_write(op, kv.as_mut(), rec, t0),
            (Conn::Kv(kv), Role::KvRead(op)) => self.kv_read(op, kv.as_mut(), rec, t0),
            (Conn::Kv(kv), Role::KvMaintain(op)) => self.kv_maintain(op, kv.as_mut(), rec),
            (Conn::Table(s), Role::Insert) => self.insert(s.as_mut(), rec, t0),
            (Conn::Table(s), Role::Delete) => self.delete(s.as_mut(), rec, t0),
            (Conn::Table(s), Role::Query(kind)) => self.query(kind, s.as_mut(), rec, t0),
            (Conn::Table(s), Role::Wait) => self.wait(s.as_mut(), rec, t0),
            (Conn::Table(s), Role::CreateIndex) => self.create_indexes(s.as_mut(), rec),
            (_, role) => unreachable!("{role:?} got another kind of session"),
        }
    }

    /// Runs `role` on `conn` (when it connected), then waits at the finish
    /// line with the session still open, so the monitor's last look sees
    /// its server thread; returns how the role ended and when.
    fn run_to_finish_line(
        &self,
        role: Role,
        conn: Result<Conn>,
        recs: &mut [Recorder],
        t0: Instant,
    ) -> (Result<()>, Instant) {
        let (ran, conn) = match conn {
            Ok(mut conn) => (self.run(role, &mut conn, recs, t0), Some(conn)),
            Err(e) => (Err(e), None),
        };
        let end = self.clock.now();
        self.shared.finish_line.arrive();
        drop(conn);
        (ran, end)
    }

    /// l.x: the rows before the indexes (`lx_rows`), then the indexes, timed.
    fn create_indexes(&self, s: &mut dyn Session, rec: &mut Recorder) -> Result<()> {
        self.insert_before_indexes(s)?;
        let start = self.clock.now();
        s.create_indexes(&self.table.name, self.plan.config.secondary_indexes as usize)?;
        rec.record(start, start, self.clock.now());
        let rows = self.table.window().len();
        self.shared.indexed_rows.fetch_add(rows, Ordering::Relaxed);
        Ok(())
    }
}

/// What the step's threads work from, made before any starts.
struct Setup {
    /// (client or thread, role), this process's only.
    roles: Vec<(u32, Role)>,
    /// Where each role's thread hands over the intervals it closes (one
    /// per operation of [`Role::ops`]), when the step's results are written
    /// while it runs.
    outboxes: Vec<Vec<(Op, Arc<Outbox>)>>,
    /// Each operation's all-clients series, shared by its roles' threads.
    by_op: Vec<(Op, SharedSeries)>,
    /// Each role's paced stream among the run's: (k, of n).
    streams: Vec<(u64, u64)>,
    shared: Shared,
    barrier: Barrier,
    interval: Duration,
    name: String,
}

impl Setup {
    /// Operation `op`'s all-clients series.
    fn series(&self, op: Op) -> SharedSeries {
        let (_, series) = self
            .by_op
            .iter()
            .find(|(o, _)| *o == op)
            .expect("a series per role's operation");
        series.clone()
    }
}

/// Runs one step and gathers what it measured.
pub(crate) fn run_step(plan: &StepPlan<'_>) -> StepOutcome {
    if plan.simulated.is_some() {
        run_on(plan, SimulatedClock)
    } else {
        run_on(plan, SystemClock)
    }
}

/// [`run_step`] with the roles' time on `clock`.
fn run_on<C: Clock>(plan: &StepPlan<'_>, clock: C) -> StepOutcome {
    let setup = prepare(plan);
    let done = AtomicBool::new(false);
    let mut ran = std::thread::scope(|scope| {
        let handles: Vec<_> = (0..setup.roles.len())
            .map(|index| start_role(scope, plan, &setup, index, clock))
            .collect();
        let (done, interval, name) = (&done, setup.interval, setup.name.as_str());
        // Before the release: a cumulative source's first reading precedes the step.
        let waits = plan
            .stats
            .zip(plan.waits)
            .map(|(stats, source)| scope.spawn(move || super::monitor::sample_waits(stats, source, name, done)));
        let (t0, started_at_us, sampler, perf) = release(plan, &setup);
        let gauges = plan
            .stats
            .map(|stats| scope.spawn(move || super::monitor::sample_gauges(stats, t0, interval, done)));
        let sampler = monitor(plan, &setup, (t0, started_at_us), sampler, &handles);
        done.store(true, Ordering::Relaxed);
        let gauges = gauges.and_then(last_reading);
        let waits = waits.and_then(last_reading);
        let (recorded, ended) = join(handles, &setup.shared, t0);
        Ran {
            t0,
            started_at_us,
            ended,
            recorded,
            sampler,
            gauges: gauges.unwrap_or_default(),
            waits: waits.unwrap_or_default(),
            perf,
        }
    });
    wait_for_compaction(plan, &setup.shared);
    // After the wait: the profiles then cover what the threads' CPU and the
    // step's costs cover (overwriteandwait's compaction included).
    ran.perf.end_sampling();
    status(plan, setup.shared, ran)
}

/// What a sampling thread gathered, once woken for its last reading (it
/// parks until its next one).
fn last_reading<T>(h: ScopedJoinHandle<'_, T>) -> Option<T> {
    h.thread().unpark();
    h.join().ok()
}

/// Phase 1: the roles, their streams, the shared state.
fn prepare(plan: &StepPlan<'_>) -> Setup {
    let c = plan.config;
    let roles = roles(c, plan.step, plan.tables.len() as u32);
    let streams = stream_phases(plan, &roles);
    // A shard runs its own clients' roles, each keeping its phase among the
    // whole run's paced streams, so the shards' arrivals interleave as one
    // process's would.
    let (roles, streams): (Vec<_>, Vec<_>) = roles
        .into_iter()
        .zip(streams)
        .filter(|((client, role), _)| role.kv() || plan.clients.contains(client))
        .unzip();
    let clients = (c.clients as usize)
        .max(c.threads as usize + 1)
        .max(c.load_connections as usize);
    let readers = roles.iter().filter(|(_, r)| matches!(r, Role::KvRead(_))).count() as u64;
    let shared = Shared::new(clients, c.clients as usize, roles.len(), readers);
    // Queries run until every inserter is done: another shard's are not here.
    for (client, done) in shared.inserters_done.iter().enumerate() {
        if !plan.clients.contains(&(client as u32)) {
            done.store(true, Ordering::Relaxed);
        }
    }
    let name = plan.step.to_string();
    plan.observer.step_started(&name, expected(plan));
    for t in plan.tables {
        t.begin_step();
    }
    let outboxes = match plan.flush {
        Some(_) => roles
            .iter()
            .map(|(_, r)| r.ops().iter().map(|&op| (op, Arc::new(Outbox::default()))).collect())
            .collect(),
        None => Vec::new(),
    };
    let mut by_op: Vec<(Op, SharedSeries)> = Vec::new();
    for &op in roles.iter().flat_map(|(_, r)| r.ops()) {
        if !by_op.iter().any(|(o, _)| *o == op) {
            let threads = roles.iter().filter(|(_, r)| r.ops().contains(&op)).count();
            by_op.push((op, Series::for_threads(threads)));
        }
    }
    Setup {
        barrier: Barrier::new(roles.len() + 1),
        outboxes,
        by_op,
        roles,
        streams,
        shared,
        interval: Duration::from_secs_f64(c.interval_seconds),
        name,
    }
}

/// What the step will do: its rows (pairs, reads) where counted, else its
/// seconds where timed.
fn expected(plan: &StepPlan<'_>) -> super::Expected {
    let c = plan.config;
    let (rows, seconds) = match plan.step {
        Step::Kv(op) => (c.kv_planned(op), c.duration),
        Step::Wait => (None, Some(c.wait())),
        Step::Sysbench(SbStep::Load) => (Some(c.table_size * c.tables as u64), None),
        Step::Sysbench(SbStep::CreateIndex) => (None, None),
        Step::Sysbench(SbStep::Postwrite(_)) => (None, Some(c.postwrite())),
        Step::Sysbench(SbStep::Run(m)) => (None, Some(c.sb_seconds(&m))),
        step => (c.writes(step).map(|w| w.rows * plan.clients.len() as u64), None),
    };
    super::Expected { rows, seconds }
}

/// Each role's paced stream: its position among the step's paced streams.
fn stream_phases(plan: &StepPlan<'_>, roles: &[(u32, Role)]) -> Vec<(u64, u64)> {
    let paced: Vec<bool> = roles.iter().map(|&(_, r)| paced(plan.config, plan.step, r)).collect();
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
}

/// Phase 2: role `index`'s thread. It connects before the barrier
/// (connecting is not part of the step), then runs once released; returns
/// what it recorded and when it ended.
fn start_role<'scope, C: Clock>(
    scope: &'scope Scope<'scope, '_>,
    plan: &'scope StepPlan<'scope>,
    setup: &'scope Setup,
    index: usize,
    clock: C,
) -> ScopedJoinHandle<'scope, (Vec<Recorded>, Instant)> {
    let c = plan.config;
    let (client, role) = setup.roles[index];
    let (table, slot) = if c.shared_table || role.kv() || role.sb() || role == Role::Wait {
        (&plan.tables[0], client as usize)
    } else {
        (&plan.tables[client as usize], 0)
    };
    let shared = &setup.shared;
    let worker = Worker {
        plan,
        clock,
        shared,
        client,
        table,
        slot,
        stream: setup.streams[index],
    };
    // Named, so the step's CPU by thread tells its workers (the clients, an
    // embedded engine's foreground) from ibench's monitoring (metrics::threads).
    let name = format!("{WORKER_PREFIX}{}-{client}", role.short());
    let builder = std::thread::Builder::new().name(name.chars().take(15).collect());
    let spawned = builder.spawn_scoped(scope, move || {
        let conn = Conn::open(plan, role, &table.name);
        if let Ok(conn) = &conn {
            *shared.interrupters[index].lock().unwrap_or_else(|p| p.into_inner()) =
                conn.interrupter().map(|i| (i, role.long()));
        }
        // sysbench's --warmup-time: events before the step's span, not measured.
        let conn = conn.and_then(|mut conn| {
            if let (Conn::Sb(s), Role::SbEvents(m)) = (&mut conn, role) {
                worker.sb_warm_up(m, s.as_mut())?;
            }
            Ok(conn)
        });
        // Connected; then released once the step's first sample is taken.
        setup.barrier.wait();
        setup.barrier.wait();
        let t0 = *shared.start.get().expect("the start is set before the release");
        if let Some(span) = plan.simulated {
            clock.enter(span.epoch, t0);
        }
        // The role's own operation paced; a sysbench event's statements within it.
        let mut recs: Vec<Recorder> = role
            .ops()
            .iter()
            .enumerate()
            .map(|(i, &op)| {
                let mut rec = worker.recorder(op, t0, i == 0 && paced(c, plan.step, role));
                rec.share_series(setup.series(op));
                if let Some((_, outbox)) = setup.outboxes.get(index).and_then(|o| o.get(i)) {
                    rec.hand_over(outbox.clone());
                }
                rec
            })
            .collect();
        let (ran, end) = worker.run_to_finish_line(role, conn, &mut recs, t0);
        if let Err(e) = ran {
            // A statement cancelled because the step had to stop is not a failure.
            let halted = plan.stop.requested() || shared.timed_out.load(Ordering::Relaxed);
            if !(e.is_canceled() && halted) {
                shared.errors.fetch_add(1, Ordering::Relaxed);
                shared.fail(e.to_string());
            }
        }
        *shared.interrupters[index].lock().unwrap_or_else(|p| p.into_inner()) = None;
        (recs.into_iter().map(|r| r.finish(end)).collect(), end)
    });
    spawned.expect("a thread starts")
}

/// Phase 3: once every thread connected, the CPU profiles started (perf
/// attaches before the span: its reading of the processes' maps is not the
/// step's), the host's first sample, the step's start (a shard's common
/// instant, the simulated timeline's next instant, or now), and the
/// threads' release. A sample taken after the
/// release would miss what the threads did before the sampler got to it
/// (on a busy core, whole operations of CPU). Returns the start (monotonic
/// and Unix µs), the sampler and the profiles.
fn release<'a>(plan: &'a StepPlan<'_>, setup: &Setup) -> (Instant, i64, HostSampler<'a>, StepProfiles) {
    let shared = &setup.shared;
    if let Some(at) = plan.start_at_us {
        let late_us = wait_until(at, plan.stop);
        // The schedules count from the common instant even when this
        // process reached it late: the lateness shows as schedule lag.
        let anchor = SystemClock
            .now()
            .checked_sub(Duration::from_micros(late_us.max(0) as u64))
            .unwrap_or_else(|| SystemClock.now());
        let _ = shared.start.set(anchor);
        if late_us > LATE_START_US {
            shared.note(vec![format!(
                "this process reached the step's common start {:.1} ms late (it was still connecting or finishing the step before); its schedules count from the common start",
                late_us as f64 / 1000.0
            )]);
        }
    }
    if let Some(span) = plan.simulated {
        let _ = shared.start.set(span.start);
    }
    setup.barrier.wait();
    // The server names its threads now: the step's connections are made.
    let named = plan
        .stats
        .and_then(|s| s.lock().unwrap_or_else(|p| p.into_inner()).thread_roles().ok())
        .unwrap_or_default();
    let perf = super::profiling::start(plan);
    let mut sampler = HostSampler::start(&plan.probe.servers, &plan.probe.disks, setup.interval);
    sampler.name_threads(named);
    let t0 = *shared.start.get_or_init(|| SystemClock.now());
    setup.barrier.wait();
    (t0, plan.start_at_us.unwrap_or_else(unix_micros), sampler, perf)
}

/// Phase 4: until every thread is done, on real time: the host sampled on
/// the interval grid, progress reported, the whole intervals of the
/// all-clients series compacted, the results so far written out
/// (`flush_seconds`), `max_seconds` enforced, and the sessions' statements
/// cancelled once the step must stop.
fn monitor<'a, T>(
    plan: &StepPlan<'_>,
    setup: &Setup,
    (t0, started_at_us): (Instant, i64),
    mut sampler: HostSampler<'a>,
    handles: &[ScopedJoinHandle<'_, T>],
) -> HostSampler<'a> {
    let (c, shared) = (plan.config, &setup.shared);
    let mut flusher = plan.flush.clone().map(|f| {
        let outboxes = setup.outboxes.iter().flatten().cloned();
        let clients = plan.clients.len() as u32;
        Flusher::new(f, c, plan.step, clients, outboxes.collect(), &setup.by_op, t0)
    });
    let mut halted_at: Option<Instant> = None;
    let mut cancelled_at: Option<Instant> = None;
    while !handles.iter().all(|h| h.is_finished()) {
        let now = SystemClock.now();
        let elapsed = now.saturating_duration_since(t0);
        let done = match plan.step.kv() {
            _ if matches!(plan.step.sb(), Some(SbStep::Run(_))) => shared.sb_counts()[0],
            Some(op) if op.reads() => shared.queries.load(Ordering::Relaxed),
            Some(op) if op.deletes() => shared.deleted(),
            _ => shared.inserted(),
        };
        plan.observer.step_progress(&setup.name, done, elapsed);
        if c.max_seconds.is_some_and(|max| elapsed.as_secs_f64() > max) {
            shared.timed_out.store(true, Ordering::Relaxed);
        }
        let halting = plan.stop.requested() || shared.timed_out.load(Ordering::Relaxed) || shared.aborted();
        if halting {
            let since = *halted_at.get_or_insert(now);
            if cancelled_at.is_none_or(|at| now.saturating_duration_since(at) >= Duration::from_millis(250)) {
                cancel_running(shared, now.saturating_duration_since(since) >= GRACE);
                cancelled_at = Some(now);
            }
        }
        let mut sleep = sampler.tick(t0, Duration::from_millis(if halting { 20 } else { 100 }));
        for (_, series) in &setup.by_op {
            series.lock().unwrap_or_else(|p| p.into_inner()).compact();
        }
        if let Some(f) = &mut flusher {
            let progress = Progress {
                t0,
                started_at_us,
                counts: counts(shared),
                host: sampler.rows(),
            };
            if let Some(trouble) = f.tick(SystemClock.now(), &progress) {
                shared.note(vec![trouble]);
            }
            sleep = sleep.min(f.due_in(SystemClock.now()) + Duration::from_millis(1));
        }
        if shared.finish_line.wait_all(sleep) {
            sampler.look_at_threads();
            shared.finish_line.looked();
        }
    }
    // Threads that never arrived (a panic) must not hold the others.
    shared.finish_line.looked();
    sampler
}

/// What the step's threads have done so far.
fn counts(shared: &Shared) -> Counts {
    let [events, statements, statement_rows] = shared.sb_counts();
    Counts {
        inserts: shared.inserted(),
        deletes: shared.deleted(),
        queries: shared.queries.load(Ordering::Relaxed) + statements,
        events,
        statement_rows,
        indexed_rows: shared.indexed_rows.load(Ordering::Relaxed),
        found: shared.found.load(Ordering::Relaxed),
        errors: shared.errors.load(Ordering::Relaxed),
        retries: shared.retries.load(Ordering::Relaxed),
    }
}

/// What the step's threads and its monitor gathered.
struct Ran<'a> {
    t0: Instant,
    started_at_us: i64,
    /// When the last thread ended.
    ended: Instant,
    recorded: Vec<Recorded>,
    sampler: HostSampler<'a>,
    gauges: (Vec<GaugeRow>, Option<String>),
    waits: (Vec<WaitRow>, Option<String>),
    perf: StepProfiles,
}

/// Phase 5: the threads joined: what each recorded, and the last end.
fn join(
    handles: Vec<ScopedJoinHandle<'_, (Vec<Recorded>, Instant)>>,
    shared: &Shared,
    t0: Instant,
) -> (Vec<Recorded>, Instant) {
    let mut ended = t0;
    let mut recorded = Vec::new();
    for h in handles {
        match h.join() {
            Ok((recs, end)) => {
                ended = ended.max(end);
                recorded.extend(recs);
            }
            Err(_) => {
                shared.errors.fetch_add(1, Ordering::Relaxed);
                shared.fail("a worker thread panicked".into());
            }
        }
    }
    (recorded, ended)
}

/// Phase 5, overwriteandwait: the rates count the writing; the engine
/// counters read after the step include the compaction this waits for.
fn wait_for_compaction(plan: &StepPlan<'_>, shared: &Shared) {
    if plan.step != Step::Kv(KvOp::OverwriteAndWait) || shared.aborted() || plan.stop.requested() {
        return;
    }
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

/// What the threads measured, merged per operation.
#[derive(Default)]
struct Merged {
    latencies: Vec<(Op, Latencies)>,
    intervals: Vec<IntervalRow>,
    interval_histograms: Vec<IntervalHistogram>,
    pacer_late: Vec<PacerLateness>,
}

/// Phase 6: per operation, the threads' histograms added, their interval
/// rows kept and the all-clients series made, and their pacers' lateness.
fn merge(recorded: &[Recorded], interval: Duration, elapsed_s: f64) -> Merged {
    let mut merged = Merged::default();
    let mut ops: Vec<Op> = recorded.iter().map(|r| r.op).collect();
    ops.sort();
    ops.dedup();
    for op in ops {
        let parts: Vec<&Recorded> = recorded.iter().filter(|r| r.op == op).collect();
        let mut latencies = Latencies::default();
        for p in &parts {
            latencies.merge(&p.latencies);
            merged.intervals.extend(p.rows.iter().cloned());
        }
        merged.latencies.push((op, latencies));
        merged.pacer_late.extend(pacer_lateness(op, &parts));
        for (row, h) in merge_series(op, &parts, interval, elapsed_s) {
            merged.interval_histograms.push(IntervalHistogram {
                op,
                t_s: row.t_s,
                count: row.count,
                histogram: h,
            });
            merged.intervals.push(row);
        }
    }
    merged
}

/// How late the pacers of `op`'s paced streams woke, when any was paced.
fn pacer_lateness(op: Op, parts: &[&Recorded]) -> Option<PacerLateness> {
    let mut late: Option<hdrhistogram::Histogram<u64>> = None;
    for h in parts.iter().filter_map(|p| p.overshoot.as_ref()) {
        late.get_or_insert_with(crate::metrics::histogram)
            .add(h)
            .expect("same bounds");
    }
    let h = late.filter(|h| !h.is_empty())?;
    Some(PacerLateness {
        op,
        p99_us: percentile_us(&h, 99.0),
        max_us: percentile_us(&h, 100.0),
        late: h.count_between((super::LAG_WARNING_US * 1000.0) as u64, u64::MAX),
        waits: h.len(),
    })
}

/// Phase 7: the counts, the merged measurements, and how the step ended.
fn status(plan: &StepPlan<'_>, shared: Shared, ran: Ran<'_>) -> StepOutcome {
    let elapsed_s = ran.ended.saturating_duration_since(ran.t0).as_secs_f64();
    let merged = merge(
        &ran.recorded,
        Duration::from_secs_f64(plan.config.interval_seconds),
        elapsed_s,
    );
    let (system, host_intervals, threads, roles) = ran.sampler.finish();
    // Folded after the host's last sample: `perf script` is not the step's CPU.
    let (profiles, profile_notes) = ran.perf.finish(&plan.step.to_string(), &roles);
    let counts = counts(&shared);
    let timed_out = shared.timed_out.load(Ordering::Relaxed);
    let (error, mut notes) = shared.take();
    notes.extend(ran.gauges.1);
    notes.extend(ran.waits.1);
    notes.extend(profile_notes);
    let status = if error.is_some() {
        StepStatus::Error
    } else if plan.stop.requested() {
        StepStatus::Interrupted
    } else if timed_out {
        StepStatus::Timeout
    } else {
        StepStatus::Ok
    };
    StepOutcome {
        status,
        error,
        notes,
        started_at_us: ran.started_at_us,
        elapsed_s,
        counts,
        latencies: merged.latencies,
        intervals: merged.intervals,
        interval_histograms: merged.interval_histograms,
        pacer_late: merged.pacer_late,
        system,
        host_intervals,
        gauges: ran.gauges.0,
        waits: ran.waits.0,
        profiles,
        threads,
    }
}

/// Sleeps until the wall clock reads `at_us` (Unix µs), or a stop is
/// requested; returns how late it is then (µs; negative when stopped early).
fn wait_until(at_us: i64, stop: &crate::stop::Stop) -> i64 {
    loop {
        let left = at_us - unix_micros();
        if left <= 0 || stop.requested() {
            return -left;
        }
        SystemClock.sleep(Duration::from_micros(left.min(50_000) as u64));
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
