//! How to run a workload: steps in order, each with a thread per connection
//! role per client, measured honestly; results written after every step.
//! Nothing here prints: progress goes to an [`Observer`]. Every clock read
//! and wait goes through [`crate::clock`].
//!
//! `mod.rs` runs a run (its steps in order, and what each step needs from
//! the run before and after it); `open.rs` opens a run; `step.rs` runs one
//! step, in phases; `record.rs` makes a step's outcome result rows;
//! `verify.rs` checks the database after write steps. Each role has its
//! file (`insert`, `delete`, `query`, `wait`, `kv`), on the state of
//! `shared.rs`, paced by `pacing.rs`.

mod delete;
mod facts;
mod flush;
mod insert;
mod kv;
mod kv_state;
mod monitor;
mod open;
mod pacing;
mod plan;
mod profiling;
mod query;
mod record;
mod role;
mod server_host;
mod shared;
mod step;
mod sysbench;
mod tables;
mod verify;
mod wait;

pub use kv_state::{KvState, TRACKED_KEYS};
pub use pacing::{Pacer, Schedule};
pub use server_host::ServerHost;
pub use sysbench::SbState;
pub use tables::TableState;

use crate::clock::{Clock, SystemClock};
use crate::connect::{self, Bounds, Connector, ServerCounters, Sizes};
use crate::error::{Error, Result};
use crate::gen::Window;
use crate::metrics::{counter_rows, Counter, EngineCounters, EngineDelta, Setting};
use crate::results::{RunResults, RunRow, RunStatus, StepRow, StepStatus};
use crate::stop::Stop;
use crate::workload::{param, Config, KvOp, Profile, SbStep, Shard, Step, VerifyMode};
use open::{session_spec, table_names};
use plan::{Probe, SimulatedSpan, StepPlan};
use std::path::{Path, PathBuf};
use std::time::Duration;
use step::{run_step, StepOutcome};
use verify::Check;

/// What a step is expected to do, for progress and its ETA: the rows (or
/// pairs) it writes, or the seconds it lasts, where either is known.
#[derive(Clone, Copy, Debug, Default, PartialEq)]
pub struct Expected {
    /// Rows (pairs, reads) the step does in all.
    pub rows: Option<u64>,
    /// Seconds it lasts (a timed step).
    pub seconds: Option<f64>,
}

/// Hears about a run's progress (the CLI draws bars, Python prints lines).
pub trait Observer: Sync {
    /// The run directory exists and the database is open.
    fn run_started(&self, _run: &RunRow, _dir: &Path) {}
    /// A step starts, expected to do `expected`.
    fn step_started(&self, _step: &str, _expected: Expected) {}
    /// About ten times a second during a step: rows inserted so far.
    fn step_progress(&self, _step: &str, _rows: u64, _elapsed: Duration) {}
    /// A step ended and its results are written.
    fn step_finished(&self, _row: &StepRow) {}
    /// Something the user should know, also recorded in the run's warnings.
    fn warning(&self, _message: &str) {}
}

/// An observer that ignores everything.
pub struct Silent;
impl Observer for Silent {}

/// A finished (or stopped) run: where its files are and what they hold.
#[derive(Debug)]
pub struct RunOutcome {
    /// The run directory.
    pub dir: PathBuf,
    /// The results, as written.
    pub results: RunResults,
}

/// Runs `config`'s steps, writing results under `out/<run_id>/`.
///
/// Bad input (configuration, DSN, output directory) is an error before any
/// work. Once the run has started, a failing step or a `stop` request
/// (Ctrl-C, SIGTERM) ends the run with its status and error recorded in the
/// files, and this returns `Ok` with that status in `results.run`.
pub fn run(config: &Config, out: &Path, observer: &dyn Observer, stop: &Stop) -> Result<RunOutcome> {
    let mut runner = Runner::open(config, out, observer)?;
    let start_at = config.start_at.map(|s| (s * 1e6).round() as i64);
    let mut outcome = Ok(());
    for ordinal in 0..runner.steps.len() {
        // The first step starts at the run's common instant, the others at once.
        outcome = runner.step(ordinal, start_at.filter(|_| ordinal == 0), observer, stop);
        if outcome.is_err() {
            break;
        }
    }
    runner.finish(outcome, stop)
}

/// A paced stream whose pacer woke later than this (µs) at p99, more than
/// 1% of the time, gets a warning (a VM's host alone delays a wake-up by a
/// few ms now and then; more is an overloaded client host).
pub const LAG_WARNING_US: f64 = 5000.0;

/// A run in progress, one step at a time: [`run`] takes its steps in order;
/// a shard's coordinator (ibench.distributed) starts each step of every
/// shard at one common instant. It owns what the steps share: the
/// connector, the tables' windows, the results written so far.
pub struct Runner {
    config: Config,
    steps: Vec<Step>,
    connector: Box<dyn Connector>,
    results: RunResults,
    dir: PathBuf,
    probe: Probe,
    shard: Shard,
    /// A note about how sizes are measured has been recorded.
    size_noted: bool,
    /// Reads the database's own counters and gauges (None: it has none,
    /// reading them failed once, or another shard reads them).
    stats: Option<std::sync::Mutex<Box<dyn ServerCounters>>>,
    /// Set up by the first step: the tables' windows, the key/value state.
    state: Option<State>,
    /// The next step to run.
    next: usize,
    /// The step options the database is open with ("": the DSN's alone).
    open_options: String,
    /// The run's simulated timeline (the database simulates time): its
    /// epoch and where the next step starts.
    simulated: Option<SimulatedSpan>,
    /// The run directory's lock, held while the run is under way.
    lock: Option<std::fs::File>,
    /// With `profile`: where the server's waits come from.
    wait_source: Option<&'static str>,
    /// With `profile = "perf"`: whose processes each step profiles.
    perf: Option<profiling::PerfPlan>,
}

/// What the steps of a run carry from one to the next.
struct State {
    tables: Vec<TableState>,
    kv: Option<KvState>,
    /// The sysbench tables, when a step of the family runs.
    sb: Option<SbState>,
    /// Verify knows the key/value table once this run has filled it.
    kv_known: bool,
    /// Whether the secondary indexes exist.
    indexed: bool,
}

/// The database's counters and sizes before a step.
struct Before {
    counters: Option<Vec<Counter>>,
    sizes: Sizes,
    engine: Option<EngineCounters>,
}

impl Runner {
    /// Checks `config`, opens the database, creates the run directory and
    /// writes the run's first files.
    pub fn open(config: &Config, out: &Path, observer: &dyn Observer) -> Result<Runner> {
        config.check()?;
        let id = open::run_id();
        let dir = out.join(&id);
        let mut config = config.clone();
        let connector = open::open_database(&mut config, out, &dir)?;
        let lock = open::hold(&dir)?;
        let (results, probe) = open::first_record(id, &config, connector.as_ref())?;
        results.write(&dir)?;
        observer.run_started(&results.run, &dir);
        let simulated = connector.simulated_time().then(|| {
            let epoch = SystemClock.now();
            SimulatedSpan { epoch, start: epoch }
        });
        Ok(Runner {
            steps: config.steps.clone(),
            shard: config.shard(),
            config,
            connector,
            results,
            dir,
            probe,
            size_noted: false,
            stats: None,
            state: None,
            next: 0,
            open_options: String::new(),
            simulated,
            lock: Some(lock),
            wait_source: None,
            perf: None,
        })
    }

    /// The run directory.
    pub fn dir(&self) -> &Path {
        &self.dir
    }

    /// The results so far.
    pub fn results(&self) -> &RunResults {
        &self.results
    }

    /// The steps, in order.
    pub fn steps(&self) -> &[Step] {
        &self.steps
    }

    /// Runs step `ordinal`, which must be the next. `start_at_us` (Unix µs)
    /// is its intended start: the step waits for it, and its schedules and
    /// intervals count from it even when this process reaches it late, so
    /// shards started at one instant share one time base. An error ends the
    /// run: pass it to [`Runner::finish`].
    pub fn step(
        &mut self,
        ordinal: usize,
        start_at_us: Option<i64>,
        observer: &dyn Observer,
        stop: &Stop,
    ) -> Result<()> {
        if ordinal != self.next || ordinal >= self.steps.len() {
            return Err(Error::config(
                "step",
                format!(
                    "step {ordinal} cannot run now: the run's next step is {} of {}",
                    self.next,
                    self.steps.len()
                ),
            ));
        }
        self.next += 1;
        if stop.requested() {
            return Err(Error::Interrupted);
        }
        let mut state = match self.state.take() {
            Some(state) => state,
            None => self.begin(observer, stop)?,
        };
        let step = self.steps[ordinal];
        let outcome = self
            .open_for(step)
            .and_then(|()| self.run_one(&mut state, ordinal, step, start_at_us, observer, stop));
        self.state = Some(state);
        outcome
    }

    /// Ends the run after `outcome` (the last step's): the exact counts once
    /// when every step went well, then the run's status, written.
    pub fn finish(mut self, outcome: Result<()>, stop: &Stop) -> Result<RunOutcome> {
        let outcome = outcome.and_then(|()| self.final_count(stop));
        // A statement cancelled by a stop request is the run's interruption.
        let outcome = outcome.map_err(|e| match e {
            e if e.is_canceled() && stop.requested() => Error::Interrupted,
            e => e,
        });
        if let Err(e) = outcome {
            self.results.run.status = if matches!(e, Error::Interrupted) {
                RunStatus::Interrupted
            } else {
                RunStatus::Error
            };
            self.results.run.error = Some(e.to_string());
        } else if self.results.run.status == RunStatus::Running {
            self.results.run.status = RunStatus::Ok;
        }
        self.results.write(&self.dir)?;
        // Written in full: no partial files, and no live run to tell apart.
        let _ = std::fs::remove_dir_all(self.dir.join(flush::PARTIAL));
        drop(self.lock.take());
        let _ = std::fs::remove_file(self.dir.join(open::LOCK));
        Ok(RunOutcome {
            dir: self.dir,
            results: self.results,
        })
    }

    /// Reopens the database with `step`'s options (`step_options`) when they
    /// are not the ones it is open with, as each of benchmark.sh's db_bench
    /// processes opens it with its own flags. The database is closed first
    /// (RocksDB allows one handle) and its counters reader with it; the
    /// reopened database's resolved options that differ from the run's are
    /// recorded in config.parquet (scope `step`, name `STEP.OPTION`).
    fn open_for(&mut self, step: Step) -> Result<()> {
        let wanted = self
            .config
            .step_options
            .get(&step.to_string())
            .cloned()
            .unwrap_or_default();
        if wanted == self.open_options {
            return Ok(());
        }
        let reread = self.stats.take().is_some();
        self.connector = connect::open("null:")?;
        let dsn = connect::with_options(&self.config.db, &wanted);
        self.connector = match connect::open(&dsn) {
            Ok(reopened) => reopened,
            Err(e) => {
                // The run's own options again, so what follows finds its database.
                self.open_options.clear();
                self.connector = connect::open(&self.config.db)?;
                return Err(Error::config(param!(step_options), format!("{step}: {dsn}: {e}")));
            }
        };
        self.open_options = wanted;
        self.connector.set_spec(session_spec(&self.config));
        if reread {
            self.stats = self
                .connector
                .counters(&table_names(&self.config))?
                .map(std::sync::Mutex::new);
        }
        if !self.open_options.is_empty() {
            let run_wide: std::collections::HashSet<(&str, &str, &str)> = self
                .results
                .config
                .iter()
                .filter(|s| s.scope == "server")
                .map(|s| (s.name.as_str(), s.value.as_str(), s.source.as_str()))
                .collect();
            let differing: Vec<Setting> = self
                .connector
                .configuration()?
                .into_iter()
                .filter(|s| !run_wide.contains(&(s.name.as_str(), s.value.as_str(), s.source.as_str())))
                .map(|s| Setting {
                    scope: "step",
                    value: connect::redact_setting(&s.name, &s.value),
                    name: format!("{step}.{}", s.name),
                    source: s.source,
                })
                .collect();
            self.results
                .config
                .retain(|s| !(s.scope == "step" && s.name.starts_with(&format!("{step}."))));
            self.results.config.extend(differing);
        }
        Ok(())
    }

    /// Records a warning with the run and tells the observer.
    fn warn(&mut self, observer: &dyn Observer, message: String) {
        observer.warning(&message);
        self.results.run.warnings.push(message);
    }

    /// The database's own counters now; a failure is a warning, and the
    /// run goes on without them.
    fn counters(&mut self, observer: &dyn Observer, at_end: bool) -> Option<Vec<Counter>> {
        let read = self
            .stats
            .as_ref()?
            .lock()
            .unwrap_or_else(|p| p.into_inner())
            .counters(at_end);
        match read {
            Ok(c) => Some(c),
            Err(e) => {
                self.stats = None;
                self.warn(
                    observer,
                    format!(
                        "the server's counters could not be read, so counters.parquet and gauges.parquet stop here: {e}"
                    ),
                );
                None
            }
        }
    }

    /// The tables this process works on: its shard's (all of them in a
    /// one-process run).
    fn own_tables(&self) -> std::ops::Range<usize> {
        if self.shard.count == 1 {
            0..self.config.ib_tables() as usize
        } else {
            let r = self.shard.clients(self.config.clients);
            r.start as usize..r.end as usize
        }
    }

    /// Before the first step: the tables' windows, the server's counters.
    fn begin(&mut self, observer: &dyn Observer, stop: &Stop) -> Result<State> {
        let tables = self.tables(stop)?;
        // The server's counters are the server's: one shard reads them.
        if self.shard.index == 0 {
            let names = table_names(&self.config);
            match self.connector.counters(&names) {
                Ok(stats) => self.stats = stats.map(std::sync::Mutex::new),
                Err(e) => self.warn(observer, format!("the server's counters cannot be read: {e}")),
            }
            self.wait_source = self.find_wait_source(observer);
        }
        let (perf, warning) = profiling::plan(&self.config, &self.probe.servers, self.shard.index == 0);
        self.perf = perf;
        if let Some(warning) = warning {
            self.warn(observer, warning);
        }
        let sb = self.sb_state(stop)?;
        Ok(State {
            tables,
            sb,
            kv: self
                .steps
                .iter()
                .any(|s| s.kv().is_some())
                .then(|| KvState::new(self.config.num)),
            kv_known: false,
            indexed: !self.steps.contains(&Step::LoadI0),
        })
    }

    /// The sysbench tables' state, when a step of the family runs. A run
    /// that does not load them finds them as an earlier run left them:
    /// each must have the suite's columns, and the index on k must exist
    /// before a step that reads it runs (else the run is refused before
    /// any step, naming the table or the step).
    fn sb_state(&self, stop: &Stop) -> Result<Option<SbState>> {
        let c = &self.config;
        let first = self.steps.iter().position(|s| s.sb().is_some());
        let Some(first) = first else { return Ok(None) };
        if c.db.starts_with("sqlite::memory:") && c.clients > 1 {
            return Err(Error::config(
                param!(clients),
                "the sysbench steps on sqlite::memory: take one client: its one connection is shared, and events with BEGIN and COMMIT would interleave (use a SQLite file)",
            ));
        }
        let loads = self.steps.iter().position(|s| s.sb() == Some(SbStep::Load));
        if loads == Some(first) {
            return Ok(Some(SbState::new(c.tables, false)));
        }
        let mut s = self.connector.sb_session()?;
        let interrupt = s.interrupter();
        let mut indexed = true;
        for table in 1..=c.tables {
            let facts = stop.guard(interrupt.as_ref(), || s.sb_facts(table))?;
            if !facts.schema {
                return Err(Error::config(
                    param!(steps),
                    format!(
                        "{} has no table {} with the sysbench suite's columns (id, k, c, pad): run load first (or a run whose steps start with load)",
                        self.connector.target(),
                        connect::sb_table_name(table)
                    ),
                ));
            }
            indexed &= facts.k_index;
        }
        if !indexed {
            let index = self.steps.iter().position(|s| s.sb() == Some(SbStep::CreateIndex));
            let reader = self.steps.iter().enumerate().find(|(i, s)| {
                let needs = s
                    .sb()
                    .and_then(SbStep::microbenchmark)
                    .is_some_and(|m| m.test.needs_k_index());
                needs && index.is_none_or(|x| x > *i) && loads.is_none_or(|l| l > *i)
            });
            if let Some((_, step)) = reader {
                return Err(Error::config(
                    param!(steps),
                    format!(
                        "{step} reads the index on k, which the tables do not have yet: run create-index before it"
                    ),
                ));
            }
        }
        Ok(Some(SbState::new(c.tables, indexed)))
    }

    /// Before a sysbench step: the load starts from empty tables (their
    /// counts known from now on); a step that reads the index on k finds it.
    fn sb_prepare(&self, step: SbStep, sb: &SbState) -> Result<()> {
        match step {
            // Shards share the tables: no one process knows their counts.
            SbStep::Load => sb.loading(self.connector.stores_data() && self.shard.count == 1),
            SbStep::Run(m) if m.test.needs_k_index() && !sb.indexed() => {
                return Err(Error::config(
                    param!(steps),
                    format!("{step} reads the index on k, which the tables do not have: run create-index before it"),
                ))
            }
            _ => {}
        }
        Ok(())
    }

    /// With `profile`, where the server's waits come from; a warning when
    /// the database could report them but does not now (performance_schema off).
    fn find_wait_source(&mut self, observer: &dyn Observer) -> Option<&'static str> {
        if self.config.profile == Profile::Off {
            return None;
        }
        let source = self
            .stats
            .as_ref()
            .map(|s| s.lock().unwrap_or_else(|p| p.into_inner()).wait_source());
        match source.flatten() {
            Some(Ok(source)) => Some(source),
            Some(Err(why)) => {
                self.warn(observer, format!("profile: no waits: {why}"));
                None
            }
            None => None,
        }
    }

    /// The tables at the start of the run: empty when it loads them, else
    /// continuing the tables an earlier run loaded (the database says where
    /// their windows are). Server keys in such a table may have gaps this
    /// run cannot know: counted, they are found, and verify then checks
    /// counts only. A shard reads its own tables only.
    fn tables(&self, stop: &Stop) -> Result<Vec<TableState>> {
        let c = &self.config;
        let first_key = if c.server_keys { 1 } else { 0 };
        let inserters = if c.shared_table { c.clients as usize } else { 1 };
        let names = table_names(c);
        let table_steps = self.steps.iter().any(Step::insert_benchmark);
        let continuing = table_steps && !self.steps.contains(&Step::LoadI0);
        let mut session = if continuing {
            Some(self.connector.session()?)
        } else {
            None
        };
        let own = self.own_tables();
        let mut tables = Vec::new();
        for (t, name) in names.into_iter().enumerate() {
            let mut window = Window::new(first_key);
            let mut gaps = false;
            if let (Some(session), true) = (session.as_mut(), own.contains(&t)) {
                let interrupt = session.interrupter();
                let bounds = stop.guard(interrupt.as_ref(), || session.bounds(&name, c.server_keys))?;
                if let Some(Bounds {
                    min: Some(min),
                    max: Some(max),
                    count,
                }) = bounds
                {
                    let len = count.unwrap_or(max + 1 - min);
                    gaps = len != max + 1 - min;
                    window = Window {
                        tail: min,
                        head: min + len,
                    };
                }
            }
            let state = TableState::new(name, t as u64, window, inserters);
            tables.push(if gaps { state.forget_keys() } else { state });
        }
        Ok(tables)
    }

    /// One step: prepared, run and measured, verified, recorded and written.
    fn run_one(
        &mut self,
        state: &mut State,
        ordinal: usize,
        step: Step,
        start_at_us: Option<i64>,
        observer: &dyn Observer,
        stop: &Stop,
    ) -> Result<()> {
        self.prepare_step(state, step, observer, stop)?;
        let before = self.measure_before(observer);
        let out = {
            let c = &self.config;
            let plan = StepPlan {
                config: c,
                connector: self.connector.as_ref(),
                tables: &state.tables,
                clients: self.shard.clients(c.clients),
                start_at_us,
                step,
                ordinal: ordinal as u64,
                indexed: state.indexed,
                stop,
                observer,
                kv: state.kv.as_ref(),
                sb: state.sb.as_ref(),
                probe: &self.probe,
                stats: self.stats.as_ref(),
                simulated: self.simulated,
                flush: Some(flush::FlushPlan {
                    run_dir: self.dir.clone(),
                    run_id: self.results.run.run_id.clone(),
                    every: Duration::from_secs_f64(c.flush_seconds),
                }),
                waits: self.wait_source.map(|source| (source, c.wait_sampling_hz)),
                perf: self.perf.as_ref(),
            };
            run_step(&plan)
        };
        if let Some(span) = &mut self.simulated {
            span.start += Duration::from_secs_f64(out.elapsed_s);
        }
        if step == Step::CreateIndexes && out.status == StepStatus::Ok {
            state.indexed = true;
        }
        if let (Step::Sysbench(SbStep::CreateIndex), Some(sb)) = (step, &state.sb) {
            if out.status == StepStatus::Ok {
                sb.set_indexed();
            }
        }
        let mut row = self.measure_after(step, &out, before, observer);
        if let (Step::Sysbench(sb_step), Some(sb), StepStatus::Ok) = (step, &state.sb, out.status) {
            if sb_step.writes() {
                let check = verify::Verify {
                    config: &self.config,
                    connector: self.connector.as_ref(),
                    salt: ordinal as u64,
                    stop,
                };
                check.after_sb_step(sb_step, sb, &mut row);
            }
        } else if step.writes() && out.status == StepStatus::Ok {
            let kv = state.kv.as_ref().filter(|_| state.kv_known);
            let tables = &state.tables[self.own_tables()];
            let check = verify::Verify {
                config: &self.config,
                connector: self.connector.as_ref(),
                salt: ordinal as u64,
                stop,
            };
            check.after_step(step, tables, kv, &mut row);
        }
        self.record_sizes(state, step, &mut row, observer);
        self.record(step, out, row, observer)
    }

    /// Before a step: l.i0 creates the tables (empty windows), a key/value
    /// fill the key/value table; a read of RocksDB's vector memtable is warned of.
    fn prepare_step(&mut self, state: &mut State, step: Step, observer: &dyn Observer, stop: &Stop) -> Result<()> {
        let c = &self.config;
        if step == Step::LoadI0 {
            let first_key = if c.server_keys { 1 } else { 0 };
            let inserters = if c.shared_table { c.clients as usize } else { 1 };
            let mut s = self.connector.session()?;
            let interrupt = s.interrupter();
            for t in &mut state.tables[self.own_tables()] {
                stop.guard(interrupt.as_ref(), || s.create_table(&t.name))?;
                *t = TableState::new(t.name.clone(), t.number, Window::new(first_key), inserters);
            }
            state.indexed = false;
        }
        if let (Step::Sysbench(sb_step), Some(sb)) = (step, &state.sb) {
            self.sb_prepare(sb_step, sb)?;
        }
        if let (Step::Kv(op), Some(kv)) = (step, &state.kv) {
            if op.fills() {
                self.connector
                    .kv_session()?
                    .create(connect::KV_TABLE, c.key_size as usize)?;
                kv.clear();
                state.kv_known = true;
            }
        }
        if let Step::Kv(op) = step {
            if op.reads() || op == KvOp::UpdateRandom {
                if let Some(caveat) = self.connector.read_caveat() {
                    self.warn(observer, format!("{step}: {caveat}"));
                }
            }
        }
        Ok(())
    }

    /// The database's sizes, engine counters and counters before a step,
    /// the counters last: the statements that measure sizes are not the step's.
    fn measure_before(&mut self, observer: &dyn Observer) -> Before {
        let sizes = self.connector.sizes(&table_names(&self.config));
        let engine = self.connector.engine_counters();
        Before {
            counters: self.counters(observer, false),
            sizes,
            engine,
        }
    }

    /// After a step: the counters' deltas, the step's notes and pacer
    /// warnings, and its row.
    fn measure_after(&mut self, step: Step, out: &StepOutcome, before: Before, observer: &dyn Observer) -> StepRow {
        let counters_after = self.counters(observer, true);
        if let (Some(before), Some(after)) = (&before.counters, &counters_after) {
            self.results
                .counters
                .extend(counter_rows(&step.to_string(), before, after));
        }
        let engine = match (before.engine, self.connector.engine_counters()) {
            (Some(before), Some(after)) => Some(EngineDelta::between(&before, &after)),
            _ => None,
        };
        for note in &out.notes {
            self.warn(observer, format!("{step}: {note}"));
        }
        for warning in record::pacer_warnings(step, &out.pacer_late) {
            self.warn(observer, warning);
        }
        let clients = self.shard.clients(self.config.clients).len() as u32;
        let mut row = record::step_row(&self.results.run.run_id, &self.config, step, clients, out, engine);
        (row.fg_cpu_s, row.bg_cpu_s) = record::database_split(&out.threads, !self.connector.over_network());
        row.db_size_before_bytes = before.sizes.database;
        row
    }

    /// The database's sizes after a step, and the rows its windows hold.
    fn record_sizes(&mut self, state: &State, step: Step, row: &mut StepRow, observer: &dyn Observer) {
        let sizes = self.connector.sizes(&table_names(&self.config));
        if let (Some(note), false) = (&sizes.note, self.size_noted) {
            self.size_noted = true;
            self.warn(observer, format!("database sizes: {note}"));
        }
        row.db_size_bytes = sizes.database;
        row.tables_size_bytes = sizes.tables;
        row.datadir_size_bytes = sizes.datadir;
        let tables = &state.tables[self.own_tables()];
        row.live_rows = match (step, &state.kv, &state.sb) {
            (Step::Kv(_), Some(kv), _) if state.kv_known => kv.written().unwrap_or(0),
            (Step::Sysbench(_), _, Some(sb)) => sb.total().unwrap_or(0),
            _ => tables.iter().map(|t| t.bounds().len()).sum(),
        };
        row.live_rows_max = match step {
            Step::Kv(_) | Step::Sysbench(_) => row.live_rows,
            _ => tables.iter().map(|t| t.max_len()).sum(),
        };
    }

    /// Adds the step's rows to the results, writes them, tells the
    /// observer; an error or an interruption ends the run.
    fn record(&mut self, step: Step, mut out: StepOutcome, row: StepRow, observer: &dyn Observer) -> Result<()> {
        let name = row.step.clone();
        let run_id = &self.results.run.run_id;
        let mut histograms = record::histograms(run_id, &name, &out);
        histograms.extend(record::interval_histograms(
            run_id,
            &name,
            std::mem::take(&mut out.interval_histograms),
        ));
        self.results.histograms.extend(histograms);
        let r = &mut self.results;
        r.intervals.extend(out.intervals.into_iter().map(|i| (name.clone(), i)));
        r.host_intervals
            .extend(out.host_intervals.into_iter().map(|h| (name.clone(), h)));
        r.gauges.extend(out.gauges.into_iter().map(|g| (name.clone(), g)));
        r.waits.extend(out.waits);
        r.profiles.extend(out.profiles);
        r.threads
            .extend(std::mem::take(&mut out.threads).into_iter().map(|t| (name.clone(), t)));
        let (status, error) = (row.status, row.error.clone());
        r.steps.push(row);
        r.write(&self.dir)?;
        // The step's partial files are in the run's files now.
        let _ = std::fs::remove_dir_all(flush::step_dir(&self.dir, &name));
        observer.step_finished(self.results.steps.last().expect("just pushed"));
        match status {
            StepStatus::Error => Err(Error::Step {
                step: step.to_string(),
                message: error.unwrap_or_default(),
            }),
            StepStatus::Interrupted => Err(Error::Interrupted),
            StepStatus::Ok | StepStatus::Timeout | StepStatus::Running | StepStatus::Killed => Ok(()),
        }
    }

    /// The exact counts, once: a full scan of every table at the end.
    fn final_count(&mut self, stop: &Stop) -> Result<()> {
        let c = &self.config;
        let Some(state) = &self.state else {
            return Ok(());
        };
        if c.verify == VerifyMode::Off || stop.requested() {
            return Ok(());
        }
        let own = self.own_tables();
        let wrote_tables = self.steps.iter().any(|s| s.insert_benchmark() && s.writes());
        let mut verdicts = Vec::new();
        if wrote_tables {
            verdicts.push(verify::verify_tables(
                c,
                self.connector.as_ref(),
                &state.tables[own],
                0,
                Check::Count,
                stop,
            ));
        }
        if let (true, Some(kv)) = (state.kv_known, &state.kv) {
            verdicts.push(verify::verify_kv(c, self.connector.as_ref(), kv, 0, Check::Count, stop));
        }
        let sb_wrote = self.steps.iter().any(|s| s.sb().is_some_and(SbStep::writes));
        if let (true, Some(sb)) = (sb_wrote, &state.sb) {
            verdicts.push(verify::verify_sb(c, self.connector.as_ref(), sb, 0, Check::Count, stop));
        }
        for verdict in verdicts {
            match verdict {
                Ok(None) => {}
                Ok(Some(Ok(()))) => {
                    self.results.run.verified.get_or_insert(true);
                }
                Ok(Some(Err(what))) => {
                    self.results.run.verified = Some(false);
                    self.results.run.verify_error = Some(what);
                }
                Err(e) if e.is_canceled() && stop.requested() => return Err(Error::Interrupted),
                Err(e) => {
                    self.results.run.verified = Some(false);
                    self.results.run.verify_error = Some(format!("the final count could not run: {e}"));
                }
            }
        }
        Ok(())
    }
}
