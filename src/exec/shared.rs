//! What a step's threads share: counters, the first error, stop and timeout
//! flags, the sessions' interrupters, and the pairing of each client's
//! inserter and deleter; and the [`Worker`] every role runs as.

use super::pacing::{Pacer, Schedule};
use super::plan::StepPlan;
use super::tables::TableState;
use crate::clock::Clock;
use crate::error::Result;
use crate::metrics::{Op, Recorder};
use crate::stop::Interrupter;
use crate::workload::Pacing;
use std::sync::atomic::{AtomicBool, AtomicU32, AtomicU64, Ordering};
use std::sync::{Condvar, Mutex, OnceLock};
use std::time::{Duration, Instant};

/// Attempts after the first for an operation that hit a deadlock or a serialization failure.
const MAX_RETRIES: u32 = 10;

/// Lets one thread wait for a condition another makes true (an inserter for
/// its deleter to catch up, a deleter for rows to delete) without polling.
#[derive(Default)]
pub(super) struct Pair {
    lock: Mutex<()>,
    cv: Condvar,
    waiters: AtomicU32,
}

impl Pair {
    /// Waits until `ready()` or `stopping()`; true when ready.
    pub(super) fn wait_until(&self, ready: impl Fn() -> bool, stopping: impl Fn() -> bool) -> bool {
        if ready() {
            return true;
        }
        self.waiters.fetch_add(1, Ordering::SeqCst);
        let mut guard = self.lock.lock().unwrap_or_else(|p| p.into_inner());
        let result = loop {
            if ready() {
                break true;
            }
            if stopping() {
                break false;
            }
            // The timeout only bounds how late a stop is seen; wakes are notified.
            guard = self
                .cv
                .wait_timeout(guard, Duration::from_millis(10))
                .unwrap_or_else(|p| p.into_inner())
                .0;
        };
        drop(guard);
        self.waiters.fetch_sub(1, Ordering::SeqCst);
        result
    }

    /// Wakes the waiter, if any, after the condition may have changed.
    pub(super) fn wake(&self) {
        if self.waiters.load(Ordering::SeqCst) > 0 {
            let _guard = self.lock.lock().unwrap_or_else(|p| p.into_inner());
            self.cv.notify_all();
        }
    }
}

/// Where the step's threads wait, their operations done, with their
/// sessions still open, until the monitor has looked at every thread: a
/// server backend's CPU can be read only while it lives, and the session's
/// end would take the backend with it (metrics::threads).
pub(super) struct FinishLine {
    arrived: Mutex<usize>,
    /// Signalled when the last thread arrives, and when the look is taken.
    cv: Condvar,
    looked: AtomicBool,
    threads: usize,
}

/// How long a thread waits at the finish line for the monitor's look: the
/// monitor looks within one of its ticks; a stuck monitor must not hold the
/// sessions.
const FINISH_WAIT: Duration = Duration::from_secs(5);

impl FinishLine {
    /// A finish line for `threads` threads.
    pub(super) fn new(threads: usize) -> Self {
        FinishLine {
            arrived: Mutex::new(0),
            cv: Condvar::new(),
            looked: AtomicBool::new(false),
            threads,
        }
    }

    /// A thread's operations are done: waits for the look (at most [`FINISH_WAIT`]).
    pub(super) fn arrive(&self) {
        let mut arrived = self.arrived.lock().unwrap_or_else(|p| p.into_inner());
        *arrived += 1;
        self.cv.notify_all();
        let deadline = Instant::now() + FINISH_WAIT;
        while !self.looked.load(Ordering::SeqCst) {
            let left = deadline.saturating_duration_since(Instant::now());
            if left.is_zero() {
                break;
            }
            arrived = self.cv.wait_timeout(arrived, left).unwrap_or_else(|p| p.into_inner()).0;
        }
    }

    /// The monitor's sleep: returns after `d`, or as soon as every thread
    /// has arrived and the look is still to take (true). Once it is taken
    /// it sleeps the whole `d` (returning at once would spin the monitor
    /// until the threads have closed their sessions: ~17 ms of CPU a step).
    pub(super) fn wait_all(&self, d: Duration) -> bool {
        let arrived = self.arrived.lock().unwrap_or_else(|p| p.into_inner());
        let waiting = |n: &mut usize| *n < self.threads || self.looked.load(Ordering::SeqCst);
        let (arrived, _) = self
            .cv
            .wait_timeout_while(arrived, d, waiting)
            .unwrap_or_else(|p| p.into_inner());
        *arrived >= self.threads && !self.looked.load(Ordering::SeqCst)
    }

    /// The look is taken: the threads may close their sessions.
    pub(super) fn looked(&self) {
        let _arrived = self.arrived.lock().unwrap_or_else(|p| p.into_inner());
        self.looked.store(true, Ordering::SeqCst);
        self.cv.notify_all();
    }
}

/// A session's interrupter, and whether its role runs long statements
/// (index creation, maintenance) that a stop cancels at once.
pub(super) type Registered = Mutex<Option<(Interrupter, bool)>>;

/// What one client's threads share: on a cache line of its own, so clients
/// never slow each other by writing next to each other's counters.
#[repr(align(128))]
#[derive(Default)]
pub(super) struct ClientState {
    /// Rows (pairs) the client (thread) has written.
    pub(super) inserted: AtomicU64,
    /// Rows the client's deleter has deleted.
    pub(super) deleted: AtomicU64,
    /// sysbench events the client ran, their statements, and the rows those
    /// returned or changed.
    pub(super) events: AtomicU64,
    pub(super) statements: AtomicU64,
    pub(super) rows: AtomicU64,
    /// The client's inserter and deleter wait for each other here.
    pub(super) pair: Pair,
}

/// State the step's threads share.
pub(super) struct Shared {
    /// Per client (or key/value thread).
    pub(super) clients: Vec<ClientState>,
    pub(super) inserters_done: Vec<AtomicBool>,
    /// On simulated time: how far each inserter's clock has got (ns since
    /// the step's start), so query threads keep behind them (see
    /// `Worker::inserting`).
    pub(super) inserters_at: Vec<AtomicU64>,
    pub(super) queries: AtomicU64,
    pub(super) indexed_rows: AtomicU64,
    /// Key/value reads that found their key.
    pub(super) found: AtomicU64,
    /// Key/value readers still running (readwhilewriting's writer stops at 0).
    pub(super) readers_left: AtomicU64,
    pub(super) errors: AtomicU64,
    pub(super) retries: AtomicU64,
    abort: AtomicBool,
    pub(super) timed_out: AtomicBool,
    error: Mutex<Option<String>>,
    /// What maintenance skipped, and why.
    notes: Mutex<Vec<String>>,
    pub(super) start: OnceLock<Instant>,
    /// Each role's session interrupter, by role.
    pub(super) interrupters: Vec<Registered>,
    /// Where the roles' threads wait for the monitor's last look at the threads.
    pub(super) finish_line: FinishLine,
}

impl Shared {
    /// State for `clients` clients (or threads) and `roles` roles.
    pub(super) fn new(clients: usize, inserters: usize, roles: usize, readers: u64) -> Self {
        Shared {
            clients: (0..clients).map(|_| ClientState::default()).collect(),
            inserters_done: (0..inserters).map(|_| AtomicBool::new(false)).collect(),
            inserters_at: (0..inserters).map(|_| AtomicU64::new(0)).collect(),
            queries: AtomicU64::new(0),
            indexed_rows: AtomicU64::new(0),
            found: AtomicU64::new(0),
            readers_left: AtomicU64::new(readers),
            errors: AtomicU64::new(0),
            retries: AtomicU64::new(0),
            abort: AtomicBool::new(false),
            timed_out: AtomicBool::new(false),
            error: Mutex::new(None),
            notes: Mutex::new(Vec::new()),
            start: OnceLock::new(),
            interrupters: (0..roles).map(|_| Mutex::new(None)).collect(),
            finish_line: FinishLine::new(roles),
        }
    }

    /// Records the step's first error and tells every thread to stop.
    pub(super) fn fail(&self, message: String) {
        self.error
            .lock()
            .unwrap_or_else(|p| p.into_inner())
            .get_or_insert(message);
        self.abort.store(true, Ordering::SeqCst);
    }

    /// Notes what maintenance skipped.
    pub(super) fn note(&self, notes: Vec<String>) {
        self.notes.lock().unwrap_or_else(|p| p.into_inner()).extend(notes);
    }

    /// Rows written by every client so far.
    pub(super) fn inserted(&self) -> u64 {
        self.clients.iter().map(|c| c.inserted.load(Ordering::Relaxed)).sum()
    }

    /// Rows deleted by every client so far.
    pub(super) fn deleted(&self) -> u64 {
        self.clients.iter().map(|c| c.deleted.load(Ordering::Relaxed)).sum()
    }

    /// sysbench events, statements and their rows, every client's so far.
    pub(super) fn sb_counts(&self) -> [u64; 3] {
        let sum = |f: fn(&ClientState) -> &AtomicU64| self.clients.iter().map(|c| f(c).load(Ordering::Relaxed)).sum();
        [sum(|c| &c.events), sum(|c| &c.statements), sum(|c| &c.rows)]
    }

    /// The first error, and the notes.
    pub(super) fn take(self) -> (Option<String>, Vec<String>) {
        let error = self.error.into_inner().unwrap_or_else(|p| p.into_inner());
        let notes = self.notes.into_inner().unwrap_or_else(|p| p.into_inner());
        (error, notes)
    }

    /// True once a thread failed.
    pub(super) fn aborted(&self) -> bool {
        self.abort.load(Ordering::Relaxed)
    }
}

/// One role's thread: what it works on, its clock, and the helpers every role uses.
pub(super) struct Worker<'a, C: Clock> {
    pub(super) plan: &'a StepPlan<'a>,
    /// Every time a role reads or waits for.
    pub(super) clock: C,
    pub(super) shared: &'a Shared,
    /// The client, or the thread of a key/value step.
    pub(super) client: u32,
    pub(super) table: &'a TableState,
    /// The inserter's slot in its table (several inserters share one table).
    pub(super) slot: usize,
    /// The step's paced stream this role is, and how many there are (its phase).
    pub(super) stream: (u64, u64),
}

impl<C: Clock> Worker<'_, C> {
    /// Nanoseconds since `t0` on the role's clock.
    fn ns_since(&self, t0: Instant) -> u64 {
        self.clock.now().saturating_duration_since(t0).as_nanos() as u64
    }

    /// An inserter's progress, for the query threads (simulated time only).
    pub(super) fn inserted_until_now(&self, t0: Instant) {
        if C::SIMULATED {
            self.shared.inserters_at[self.client as usize].store(self.ns_since(t0), Ordering::Release);
        }
    }

    /// True while a q step's queries go on: until every inserter is done.
    /// On simulated time each thread's clock is its own, so a query thread
    /// also keeps behind the inserters' clocks: it starts a query at its
    /// time only once some inserter is known to be busy past it, waits
    /// (really) while none is, and ends once every inserter has ended before it.
    pub(super) fn inserting(&self, t0: Instant) -> bool {
        let done = |i: usize| self.shared.inserters_done[i].load(Ordering::Acquire);
        if !C::SIMULATED {
            return !(0..self.shared.inserters_done.len()).all(done);
        }
        let me = self.ns_since(t0);
        loop {
            let mut all_done = true;
            for i in 0..self.shared.inserters_done.len() {
                let finished = done(i);
                if self.shared.inserters_at[i].load(Ordering::Acquire) > me {
                    return true;
                }
                all_done &= finished;
            }
            if all_done || self.stopping(t0) {
                return false;
            }
            std::thread::yield_now();
        }
    }

    /// Seconds since `t0` on the role's clock.
    pub(super) fn since(&self, t0: Instant) -> f64 {
        self.clock.now().saturating_duration_since(t0).as_secs_f64()
    }

    /// True when the role should stop: a failure elsewhere, a stop request,
    /// or `max_seconds` passed (which marks the step timed out).
    pub(super) fn stopping(&self, t0: Instant) -> bool {
        if self.shared.aborted() || self.plan.stop.requested() {
            return true;
        }
        if let Some(max) = self.plan.config.max_seconds {
            if self.since(t0) > max {
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
                    self.clock.sleep(Duration::from_millis(attempt as u64));
                }
                other => return other,
            }
        }
    }

    /// This role's pacer: `ops_per_second` (None: closed loop), phased as
    /// its stream among the step's paced streams.
    pub(super) fn pacer(&self, ops_per_second: Option<f64>, t0: Instant) -> Pacer<C> {
        let schedule = match ops_per_second {
            Some(rate) => Schedule::rate(t0, rate).phased(self.stream.0, self.stream.1),
            None => Schedule::Unthrottled,
        };
        Pacer::new(schedule, self.plan.config.pacing == Pacing::Precise, self.clock)
    }

    /// A recorder for `op` of this role (with schedule lags when it is paced).
    pub(super) fn recorder(&self, op: Op, t0: Instant, paced: bool) -> Recorder {
        let interval = Duration::from_secs_f64(self.plan.config.interval_seconds);
        if paced {
            Recorder::paced(self.client, op, t0, interval)
        } else {
            Recorder::new(self.client, op, t0, interval)
        }
    }
}
