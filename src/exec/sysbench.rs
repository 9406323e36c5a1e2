//! The sysbench family's roles: the load (each connection its share of
//! the tables, rows in id order by multi-row inserts), the index on k, the
//! postwrite pause, and a client's events (workload/sysbench.rs says what
//! each microbenchmark's event runs). The tables' expected row counts are
//! kept in [`SbState`] for verify.

use super::shared::Worker;
use crate::clock::Clock;
use crate::connect::{Maintenance, SbSession, SqlValue, SqlValues, LOAD_ROWS_PER_INSERT};
use crate::error::{Error, Result};
use crate::gen::{SbDraws, SbIds, SbRowGen, SbRowSpec, SbRows, SbStatement, C_LEN, PAD_LEN};
use crate::metrics::Recorder;
use crate::workload::sysbench::{SbDuration, SbEvent, SbGroup, SbKeys};
use crate::workload::{Config, Microbenchmark};
use std::sync::atomic::{AtomicBool, AtomicI64, Ordering};
use std::time::{Duration, Instant};

/// Attempts of an event after its first that hit a deadlock, a
/// serialization failure or (PostgreSQL's write-only) a duplicate key:
/// sysbench restarts such events without end; this bounds it.
const MAX_RESTARTS: u32 = 1000;

/// What the run knows of the sysbench tables between steps: each one's
/// rows, counted from what the statements did (when the run loaded them),
/// and whether the index on k exists.
#[derive(Debug)]
pub struct SbState {
    rows: Vec<AtomicI64>,
    known: AtomicBool,
    indexed: AtomicBool,
}

impl SbState {
    /// `tables` tables, nothing known of them yet.
    pub fn new(tables: u32, indexed: bool) -> SbState {
        SbState {
            rows: (0..tables).map(|_| AtomicI64::new(0)).collect(),
            known: AtomicBool::new(false),
            indexed: AtomicBool::new(indexed),
        }
    }

    /// Table `table` (from 1) holds `n` more rows (fewer when negative).
    pub fn changed(&self, table: u32, n: i64) {
        self.rows[table as usize - 1].fetch_add(n, Ordering::Relaxed);
    }

    /// Every table is about to be loaded: nothing in them, their counts
    /// known from now on when the database keeps what it is given (`keeps`).
    pub fn loading(&self, keeps: bool) {
        for r in &self.rows {
            r.store(0, Ordering::Relaxed);
        }
        self.known.store(keeps, Ordering::Relaxed);
        self.indexed.store(false, Ordering::Relaxed);
    }

    /// The rows table `table` holds, when the run knows.
    pub fn rows(&self, table: u32) -> Option<u64> {
        self.known
            .load(Ordering::Relaxed)
            .then(|| self.rows[table as usize - 1].load(Ordering::Relaxed).max(0) as u64)
    }

    /// Rows of all tables, when known.
    pub fn total(&self) -> Option<u64> {
        (1..=self.rows.len() as u32).map(|t| self.rows(t)).sum()
    }

    /// Whether the index on k exists.
    pub fn indexed(&self) -> bool {
        self.indexed.load(Ordering::Relaxed)
    }

    /// The index on k exists now.
    pub fn set_indexed(&self) {
        self.indexed.store(true, Ordering::Relaxed);
    }
}

impl Config {
    /// How long a microbenchmark runs, in seconds.
    pub fn sb_seconds(&self, m: &Microbenchmark) -> f64 {
        match m.duration() {
            SbDuration::Read => self.read_seconds,
            SbDuration::Write => self.write_seconds,
            SbDuration::Insert => self.insert_seconds,
            SbDuration::ScanWarm => self.scan_warm_seconds,
        }
    }

    /// The generator of table `table`'s rows (from 1).
    pub fn sb_rows(&self, table: u32) -> Result<SbRowGen> {
        SbRowGen::new(&SbRowSpec {
            seed: self.seed,
            table,
            size: self.table_size,
            k: self.k_distribution.kind(),
            theta: self.rand_zipfian_exp,
        })
    }

    /// The ids microbenchmark `m`'s events pick (client `client`'s).
    fn sb_ids(&self, m: &Microbenchmark, client: u32) -> Result<SbIds> {
        let n = self.table_size;
        match m.test.keys() {
            SbKeys::Ids => SbIds::drawn(self.id_distribution.kind(), n, self.rand_zipfian_exp),
            SbKeys::Zipf => SbIds::drawn(crate::gen::KeyKind::Zipfian, n, self.rand_zipfian_exp),
            SbKeys::One => Ok(SbIds::One),
            SbKeys::Hot => Ok(SbIds::Hot(n)),
            SbKeys::Segment => {
                // select_random_*.lua: rlen = table_size / threads; [rlen·tid, rlen·tid + rlen].
                let rlen = n / self.clients as u64;
                let lo = rlen * client as u64;
                Ok(SbIds::Segment { lo, hi: lo + rlen })
            }
        }
    }
}

/// The tables (from 1) connection `i` of `connections` loads and indexes:
/// every `connections`-th from `i + 1`, as sysbench's prepare splits them.
fn share(i: u32, connections: u32, tables: u32) -> impl Iterator<Item = u32> {
    (i + 1..=tables).step_by(connections.max(1) as usize)
}

/// What one event did.
#[derive(Default)]
struct Done {
    statements: u64,
    rows: u64,
    inserted: u64,
    deleted: u64,
}

/// A client's event loop: what it draws from and binds.
struct Events<'a> {
    event: SbEvent,
    ids: SbIds,
    range: u32,
    draws: SbDraws,
    state: Option<&'a SbState>,
    /// scan's table: each client its own, as oltp_scan.lua's `tid % tables + 1`.
    scan_table: u32,
    c: [u8; C_LEN],
    pad: [u8; PAD_LEN],
    values: Vec<i64>,
}

impl<C: Clock> Worker<'_, C> {
    /// `load`: this connection's tables created anew and filled in id order.
    pub(super) fn sb_load(&self, session: &mut dyn SbSession, rec: &mut Recorder, t0: Instant) -> Result<()> {
        let c = self.plan.config;
        let state = self.plan.sb.expect("a sysbench step has its state");
        let mut rows = SbRows::default();
        let slot = &self.shared.clients[self.client as usize];
        let mut done = 0;
        for table in share(self.client, c.load_connections, c.tables) {
            session.sb_create(table)?;
            let gen = c.sb_rows(table)?;
            let mut next = 1;
            while next <= c.table_size {
                if self.stopping(t0) {
                    return Ok(());
                }
                let n = (c.table_size + 1 - next).min(LOAD_ROWS_PER_INSERT as u64) as usize;
                gen.fill(next, n, &mut rows)?;
                let started = self.clock.now();
                let inserted = session.sb_load(table, &rows)?;
                rec.record(started, started, self.clock.now());
                state.changed(table, inserted as i64);
                next += n as u64;
                done += n as u64;
                slot.inserted.store(done, Ordering::Release);
            }
        }
        Ok(())
    }

    /// `create-index`: the index on k of this connection's tables, each timed.
    pub(super) fn sb_index(&self, session: &mut dyn SbSession, rec: &mut Recorder, t0: Instant) -> Result<()> {
        let c = self.plan.config;
        let state = self.plan.sb.expect("a sysbench step has its state");
        for table in share(self.client, c.load_connections, c.tables) {
            if self.stopping(t0) {
                return Ok(());
            }
            let started = self.clock.now();
            session.sb_create_index(table)?;
            rec.record(started, started, self.clock.now());
            let rows = state.rows(table).unwrap_or(c.table_size);
            self.shared.indexed_rows.fetch_add(rows, Ordering::Relaxed);
        }
        Ok(())
    }

    /// A postwrite pause: the published scripts' procedure per DBMS (the
    /// wait step's reference maintenance, settings restored on every path),
    /// the whole pause lasting `postwrite()` seconds.
    pub(super) fn sb_pause(&self, session: &mut dyn SbSession, rec: &mut Recorder, t0: Instant) -> Result<()> {
        let c = self.plan.config;
        let names: Vec<String> = (1..=c.tables).map(crate::connect::sb_table_name).collect();
        let x = Duration::from_secs_f64(c.postwrite());
        let started = self.clock.now();
        let notes = session.maintain(&Maintenance {
            tables: &names,
            reference: true,
            reset_master: c.reset_master,
            until: started + x,
            stop: self.plan.stop,
        })?;
        rec.record(started, started, self.clock.now());
        self.shared.note(notes);
        while self.clock.now() < started + x && !self.stopping(t0) {
            self.clock
                .sleep((started + x - self.clock.now()).min(Duration::from_millis(50)));
        }
        Ok(())
    }

    /// A client's events of microbenchmark `m` until its time is up,
    /// each timed whole (`recs[0]`: from its intended start when paced)
    /// and statement by statement (`recs[1]`).
    pub(super) fn sb_events(
        &self,
        m: Microbenchmark,
        session: &mut dyn SbSession,
        recs: &mut [Recorder],
        t0: Instant,
    ) -> Result<()> {
        let c = self.plan.config;
        let mut events = self.events(m)?;
        let seconds = c.sb_seconds(&m);
        let rate = c.events_per_second.map(|r| r / c.clients as f64);
        let mut schedule = self.pacer(rate, t0);
        let slot = &self.shared.clients[self.client as usize];
        let (event_rec, rest) = recs.split_first_mut().expect("an event's recorders");
        let mut statement_rec = rest.first_mut();
        let mut i = 0u64;
        let over =
            |w: &Self, now: Instant| w.stopping(t0) || now.saturating_duration_since(t0).as_secs_f64() >= seconds;
        // The clock is read once between statements: one's end is the next
        // one's start, and an event's are its first's start and its last's
        // end (a read per statement instead of two per statement and two
        // per event; clock reads were an eighth of the client's own CPU).
        let mut now = self.clock.now();
        while !over(self, now) {
            let intended = schedule.wait_for(i, || over(self, self.clock.now()));
            if intended.is_some() {
                now = self.clock.now();
                if over(self, now) {
                    break;
                }
            }
            let (done, ended) = self.sb_event(&mut events, session, statement_rec.as_deref_mut(), now)?;
            event_rec.record(intended.unwrap_or(now), now, ended);
            now = ended;
            i += 1;
            slot.events.fetch_add(1, Ordering::Relaxed);
            slot.statements.fetch_add(done.statements, Ordering::Relaxed);
            slot.rows.fetch_add(done.rows, Ordering::Relaxed);
            if done.inserted > 0 {
                slot.inserted.fetch_add(done.inserted, Ordering::Relaxed);
            }
            if done.deleted > 0 {
                slot.deleted.fetch_add(done.deleted, Ordering::Relaxed);
            }
        }
        if rate.is_some() {
            event_rec.pacer_overshoot(schedule.overshoot());
        }
        Ok(())
    }

    /// Runs events for `warmup_seconds` before the step's measured span
    /// (sysbench's --warmup-time): nothing recorded or counted.
    pub(super) fn sb_warm_up(&self, m: Microbenchmark, session: &mut dyn SbSession) -> Result<()> {
        let seconds = self.plan.config.warmup_seconds;
        if seconds <= 0.0 {
            return Ok(());
        }
        let mut events = self.events(m)?;
        let start = self.clock.now();
        let mut now = start;
        while now.saturating_duration_since(start).as_secs_f64() < seconds && !self.plan.stop.requested() {
            now = self.sb_event(&mut events, session, None, now)?.1;
        }
        Ok(())
    }

    /// What this client's events of `m` draw from.
    fn events(&self, m: Microbenchmark) -> Result<Events<'_>> {
        let c = self.plan.config;
        Ok(Events {
            event: m.test.event(m.range),
            ids: c.sb_ids(&m, self.client)?,
            range: m.range,
            draws: SbDraws::new(c.seed, self.plan.ordinal, self.client, c.tables),
            state: self.plan.sb,
            scan_table: self.client % c.tables + 1,
            c: [0; C_LEN],
            pad: [0; PAD_LEN],
            values: Vec::new(),
        })
    }

    /// One event from `started` (the clock read just before), restarted
    /// after a deadlock, a serialization failure or a duplicate key (the
    /// transaction rolled back first), as sysbench restarts it; each restart
    /// is counted as a retry. What it did, and when it ended.
    fn sb_event(
        &self,
        e: &mut Events<'_>,
        s: &mut dyn SbSession,
        mut rec: Option<&mut Recorder>,
        started: Instant,
    ) -> Result<(Done, Instant)> {
        let mut restarts = 0;
        let mut last = started;
        loop {
            let mut done = Done::default();
            match self.sb_event_once(e, s, rec.as_deref_mut(), &mut done, &mut last) {
                Ok(()) => return Ok((done, last)),
                Err(err) if restartable(&err) && restarts < MAX_RESTARTS => {
                    restarts += 1;
                    self.shared.retries.fetch_add(1, Ordering::Relaxed);
                    if e.event.trx {
                        s.sb_rollback()?;
                    }
                    last = self.clock.now();
                    if self.plan.stop.requested() {
                        return Err(err);
                    }
                }
                Err(err) => return Err(err),
            }
        }
    }

    /// One attempt at an event; `last` is the clock's last reading (the
    /// next statement's start), moved on as each statement ends.
    fn sb_event_once(
        &self,
        e: &mut Events<'_>,
        s: &mut dyn SbSession,
        mut rec: Option<&mut Recorder>,
        done: &mut Done,
        last: &mut Instant,
    ) -> Result<()> {
        let mut run = |stmt: SbStatement, table: u32, params: &[SqlValue<'_>], done: &mut Done| -> Result<u64> {
            let started = *last;
            let n = s.sb_run(stmt, table, params)?;
            let ended = self.clock.now();
            *last = ended;
            if let Some(rec) = rec.as_deref_mut() {
                rec.record(started, started, ended);
            }
            done.statements += 1;
            done.rows += n;
            Ok(n)
        };
        if e.event.trx {
            run(SbStatement::Begin, 1, &[], done)?;
        }
        for g in 0..e.event.groups.len() {
            match e.event.groups[g] {
                SbGroup::Each(stmt, count) => {
                    let table = match stmt {
                        SbStatement::Scan => e.scan_table,
                        // upstream's select_random_* read sbtest1 alone.
                        SbStatement::KPoints(_) | SbStatement::KRanges { .. } => 1,
                        _ => e.draws.table(),
                    };
                    for _ in 0..count {
                        let n = {
                            let params = e.bind(stmt);
                            run(stmt, table, &params, done)?
                        };
                        e.counted(stmt, table, n, done);
                    }
                }
                SbGroup::DeleteInsert => {
                    let table = e.draws.table();
                    let id = e.draws.id(&e.ids, 0) as i64;
                    let k = e.draws.id(&e.ids, 0) as i64;
                    let n = run(SbStatement::Delete, table, &[SqlValue::Int(id)], done)?;
                    e.counted(SbStatement::Delete, table, n, done);
                    e.draws.text(&mut e.c);
                    e.draws.text(&mut e.pad);
                    let params = [
                        SqlValue::Int(id),
                        SqlValue::Int(k),
                        SqlValue::Text(&e.c),
                        SqlValue::Text(&e.pad),
                    ];
                    let n = run(SbStatement::Insert, table, &params, done)?;
                    e.counted(SbStatement::Insert, table, n, done);
                }
            }
        }
        if e.event.trx {
            run(SbStatement::Commit, 1, &[], done)?;
        }
        Ok(())
    }
}

impl Events<'_> {
    /// Draws statement `stmt`'s parameters, as its script does.
    fn bind(&mut self, stmt: SbStatement) -> SqlValues<'_> {
        use SbStatement as S;
        let n = self.ids_needed(stmt);
        self.values.clear();
        for i in 0..n {
            let id = self.draws.id(&self.ids, i as u32) as i64;
            self.values.push(id);
        }
        let range = self.range as i64;
        let v = &self.values;
        match stmt {
            S::PointSelect | S::IndexUpdate | S::Delete => smallvec::smallvec![SqlValue::Int(v[0])],
            S::SimpleRange | S::SumRange | S::OrderRange | S::DistinctRange | S::CountRange => {
                smallvec::smallvec![SqlValue::Int(v[0]), SqlValue::Int(v[0] + range - 1)]
            }
            // range_covered.lua: x .. x + random_points (101 rows).
            S::CoveredRange { .. } => smallvec::smallvec![SqlValue::Int(v[0]), SqlValue::Int(v[0] + range)],
            S::InlistSelect(_) | S::Points { .. } | S::KPoints(_) => v.iter().map(|&x| SqlValue::Int(x)).collect(),
            // select_random_ranges.lua: each range [v, v + delta].
            S::KRanges { delta, .. } => v
                .iter()
                .flat_map(|&x| [SqlValue::Int(x), SqlValue::Int(x + delta as i64)])
                .collect(),
            S::NonIndexUpdate => {
                self.draws.text(&mut self.c);
                smallvec::smallvec![SqlValue::Text(&self.c), SqlValue::Int(v[0])]
            }
            S::InlistUpdate(_) => {
                self.draws.text(&mut self.c);
                let mut p = smallvec::smallvec![SqlValue::Text(&self.c)];
                p.extend(v.iter().map(|&x| SqlValue::Int(x)));
                p
            }
            S::InsertNew => {
                // oltp_insert.lua: k of rand.default(1, table_size), new c and pad.
                self.draws.text(&mut self.c);
                self.draws.text(&mut self.pad);
                smallvec::smallvec![SqlValue::Int(v[0]), SqlValue::Text(&self.c), SqlValue::Text(&self.pad)]
            }
            S::Scan | S::Begin | S::Commit | S::Insert => SqlValues::new(),
        }
    }

    /// How many ids statement `stmt` draws.
    fn ids_needed(&self, stmt: SbStatement) -> usize {
        use SbStatement as S;
        match stmt {
            S::InlistSelect(n) | S::InlistUpdate(n) | S::Points { n, .. } | S::KPoints(n) | S::KRanges { n, .. } => {
                n as usize
            }
            S::Scan | S::Begin | S::Commit | S::Insert => 0,
            _ => 1,
        }
    }

    /// Counts what a write did: rows inserted or deleted, in the table's count.
    fn counted(&self, stmt: SbStatement, table: u32, n: u64, done: &mut Done) {
        let change = match stmt {
            SbStatement::Insert | SbStatement::InsertNew => {
                done.inserted += n;
                n as i64
            }
            SbStatement::Delete => {
                done.deleted += n;
                -(n as i64)
            }
            _ => 0,
        };
        if let (Some(state), true) = (self.state, change != 0) {
            state.changed(table, change);
        }
    }
}

/// True for the errors after which sysbench restarts an event: deadlocks,
/// serialization failures, lock wait timeouts (MySQL's 1213, 1205, 1020;
/// PostgreSQL's 40P01, 40001) and a duplicate key (PostgreSQL's 23505:
/// write-only's re-insert of an id another client re-inserted first).
fn restartable(e: &Error) -> bool {
    e.is_retryable() || e.is_duplicate_key()
}
