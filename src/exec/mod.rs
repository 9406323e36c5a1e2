//! How to run a workload: steps in order, each with a thread per connection
//! role per client, measured honestly; results written after every step.
//! Nothing here prints: progress goes to an [`Observer`].
//!
//! `mod.rs` runs a run (tables, steps, verify, sizes, results); `step.rs`
//! runs one step; each role has its file (`insert`, `delete`, `query`,
//! `wait`, `kv`), on the state of `shared.rs`, paced by `pacing.rs`.

mod delete;
mod facts;
mod insert;
mod kv;
mod kv_state;
mod monitor;
mod pacing;
mod plan;
mod query;
mod role;
mod server_host;
mod shared;
mod step;
mod tables;
mod verify;
mod wait;

pub use kv_state::{KvState, TRACKED_KEYS};
pub use pacing::{Pacer, Schedule};
pub use server_host::ServerHost;
pub use tables::TableState;

use crate::connect::{self, Bounds, Connector, ServerCounters, SessionSpec};
use crate::error::{Error, Result};
use crate::gen::Window;
use crate::metrics::{counter_rows, percentile_us, serialize, unix_micros, Counter, EngineDelta, Setting};
use crate::results::{HistogramRow, RunResults, RunRow, StepRow, LAG_STATS, PERCENTILES};
use crate::stop::Stop;
use crate::workload::{Config, KvOp, Shard, Statements, Step, VerifyMode};
use plan::{Probe, StepPlan};
use std::path::{Path, PathBuf};
use std::time::{Duration, Instant};
use step::{run_step, StepOutcome};
use verify::Check;

/// Hears about a run's progress (the CLI draws bars, Python prints lines).
pub trait Observer: Sync {
    /// The run directory exists and the database is open.
    fn run_started(&self, _run: &RunRow, _dir: &Path) {}
    /// A step starts; `rows` is how many rows it will insert, if it inserts.
    fn step_started(&self, _step: &str, _rows: Option<u64>) {}
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

/// A run id that sorts by start time: `20261129T233000Z-1a2b3c`.
fn run_id() -> String {
    run_id_at(unix_micros(), std::process::id())
}

/// The run id of a run started at `micros` (Unix µs) by process `pid`: the
/// UTC second, then 6 hex digits: the millisecond (3 digits, so ids started
/// in the same second still sort by start time) and 3 digits mixed from the
/// time and the pid, which tell apart runs started in the same millisecond.
fn run_id_at(micros: i64, pid: u32) -> String {
    let t = crate::metrics::utc(micros);
    let stamp = format!(
        "{:04}{:02}{:02}T{:02}{:02}{:02}Z",
        t.year(),
        t.month() as u8,
        t.day(),
        t.hour(),
        t.minute(),
        t.second()
    );
    let ms = micros.rem_euclid(1_000_000) / 1000;
    let tag = (micros as u64 ^ (pid as u64).rotate_left(20)).wrapping_mul(0x9e37_79b9_7f4a_7c15) >> 52;
    format!("{stamp}-{ms:03x}{tag:03x}")
}

/// The benchmark's tables: `pi1`, `pi2`, ...
fn table_names(c: &Config) -> Vec<String> {
    (0..c.tables()).map(|t| format!("pi{}", t + 1)).collect()
}

/// How the connector's sessions write the tables, from the statement choices.
fn session_spec(c: &Config) -> SessionSpec {
    SessionSpec {
        server_keys: c.server_keys,
        literal: c.statements == Statements::Literal,
    }
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
}

/// What the steps of a run carry from one to the next.
struct State {
    tables: Vec<TableState>,
    kv: Option<KvState>,
    /// Verify knows the key/value table once this run has filled it.
    kv_known: bool,
    /// Whether the secondary indexes exist.
    indexed: bool,
}

impl Runner {
    /// Checks `config`, opens the database, creates the run directory and
    /// writes the run's first files.
    pub fn open(config: &Config, out: &Path, observer: &dyn Observer) -> Result<Runner> {
        config.check()?;
        let steps = config.parsed_steps()?;
        let shard = config.shard()?;
        let id = run_id();
        let dir = out.join(&id);
        // The run's own directory is new: a run never writes into another's.
        let make_dir = || {
            std::fs::create_dir_all(out)
                .and_then(|()| std::fs::create_dir(&dir))
                .map_err(|source| Error::Io {
                    action: "cannot create the output directory",
                    path: dir.clone(),
                    source,
                })
        };
        // A key/value store cannot run table steps: refuse before any work.
        let refuse_table_steps = |connector: &dyn Connector| -> Result<()> {
            match steps.iter().find(|s| s.kv().is_none()) {
                Some(table_step) if connector.kv_only() => Err(Error::config(
                    "steps",
                    format!(
                        "{table_step} is an Insert Benchmark step; {} runs the key/value steps only (fillseq, overwrite, readrandom, ...)",
                        connector.dbms()
                    ),
                )),
                _ => Ok(()),
            }
        };
        let mut config = config.clone();
        let password = config
            .password_file
            .as_deref()
            .map(connect::read_password_file)
            .transpose()?;
        let mut connector: Box<dyn Connector> = if config.db.is_empty() {
            make_dir()?;
            // The key/value steps alone default to embedded RocksDB, when built in.
            config.db = if cfg!(feature = "rocksdb") && config.kv_only() {
                format!("rocksdb:{}", dir.join("rocksdb").display())
            } else {
                format!("sqlite:{}", dir.join("ibench.sqlite").display())
            };
            connect::open(&config.db)?
        } else {
            let c = connect::open_with_password(&config.db, password.as_deref())?;
            refuse_table_steps(c.as_ref())?;
            make_dir()?;
            c
        };
        connector.set_spec(session_spec(&config));
        let settings: serde_json::Map<String, serde_json::Value> =
            connector.settings().into_iter().map(|(k, v)| (k, v.into())).collect();
        let (config_rows, warnings, mut probe) = facts::environment(connector.as_ref());
        if config.shard.is_some() {
            // A shard is one of several clients of the server: the server's
            // processes are measured once, on the server's host (docs/distributed.md).
            probe.servers = Default::default();
        }
        let results = RunResults {
            run: RunRow {
                run_id: id.clone(),
                started_at_us: unix_micros(),
                ibench_version: env!("CARGO_PKG_VERSION").into(),
                build_profile: if cfg!(debug_assertions) { "debug" } else { "release" }.into(),
                seed: config.seed,
                dbms: connector.dbms().into(),
                dbms_version: connector.version()?,
                label: config.label.clone(),
                target: connector.target(),
                host: facts::host_name(),
                cpus: std::thread::available_parallelism()
                    .map(|n| n.get() as u32)
                    .unwrap_or(1),
                // The recorded configuration names the database as its target: no password.
                config: serde_json::to_string(&Config {
                    db: connector.target(),
                    ..config.clone()
                })
                .expect("a config serializes"),
                settings: serde_json::Value::Object(settings).to_string(),
                status: "running".into(),
                error: None,
                warnings,
                verified: None,
                verify_error: None,
            },
            config: config_rows,
            ..RunResults::default()
        };
        results.write(&dir)?;
        observer.run_started(&results.run, &dir);
        Ok(Runner {
            config,
            steps,
            connector,
            results,
            dir,
            probe,
            shard,
            size_noted: false,
            stats: None,
            state: None,
            next: 0,
            open_options: String::new(),
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
                "interrupted"
            } else {
                "error"
            }
            .into();
            self.results.run.error = Some(e.to_string());
        } else if self.results.run.status == "running" {
            self.results.run.status = "ok".into();
        }
        self.results.write(&self.dir)?;
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
                return Err(Error::config("step_options", format!("{step}: {dsn}: {e}")));
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
            0..self.config.tables() as usize
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
        }
        Ok(State {
            tables,
            kv: self
                .steps
                .iter()
                .any(|s| s.kv().is_some())
                .then(|| KvState::new(self.config.num)),
            kv_known: false,
            indexed: !self.steps.contains(&Step::LoadI0),
        })
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
        let table_steps = self.steps.iter().any(|s| s.kv().is_none());
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

    /// One step: run, measure, verify, write.
    fn run_one(
        &mut self,
        state: &mut State,
        ordinal: usize,
        step: Step,
        start_at_us: Option<i64>,
        observer: &dyn Observer,
        stop: &Stop,
    ) -> Result<()> {
        let c = self.config.clone();
        let c = &c;
        let first_key = if c.server_keys { 1 } else { 0 };
        let inserters = if c.shared_table { c.clients as usize } else { 1 };
        let table_names = table_names(c);
        let own = self.own_tables();
        if step == Step::LoadI0 {
            let mut s = self.connector.session()?;
            let interrupt = s.interrupter();
            for t in &mut state.tables[own.clone()] {
                stop.guard(interrupt.as_ref(), || s.create_table(&t.name))?;
                *t = TableState::new(t.name.clone(), t.number, Window::new(first_key), inserters);
            }
            state.indexed = false;
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
        let counters_before = self.counters(observer, false);
        let before = self.connector.sizes(&table_names);
        let engine_before = self.connector.engine_counters();
        let out = {
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
                probe: &self.probe,
                stats: self.stats.as_ref(),
            };
            run_step(&plan)
        };
        let counters_after = self.counters(observer, true);
        if let (Some(before), Some(after)) = (&counters_before, &counters_after) {
            let name = step.to_string();
            self.results.counters.extend(counter_rows(&name, before, after));
        }
        let engine = match (engine_before, self.connector.engine_counters()) {
            (Some(before), Some(after)) => Some(EngineDelta::between(&before, &after)),
            _ => None,
        };
        if step == Step::CreateIndexes && out.status == "ok" {
            state.indexed = true;
        }
        for note in &out.notes {
            self.warn(observer, format!("{step}: {note}"));
        }
        let mut row = self.step_row(step, &out, engine);
        for &(op, p99, max, late, waits) in &out.pacer_late {
            // A few late wakes are a VM's host at work; more than 1% of a
            // stream's (and at least three) is an overloaded client host.
            if p99 > LAG_WARNING_US && late >= 3.max(waits / 100) {
                self.warn(
                    observer,
                    format!(
                        "{step}: the pacer woke late: {} starts p99 {p99:.0} µs (max {max:.0} µs) after their intended time, {late} of {waits} more than {LAG_WARNING_US:.0} µs; the client host is overloaded, so response times include the client's own lateness",
                        op.name()
                    ),
                );
            }
        }
        row.db_size_before_bytes = before.database;
        self.record_histograms(&row.step, &out);
        if step.writes() && out.status == "ok" && c.verify != VerifyMode::Off {
            let check = if c.verify == VerifyMode::Full {
                Check::Full
            } else {
                Check::Quick
            };
            let started = Instant::now();
            let checked = match (step, &state.kv) {
                (Step::Kv(_), Some(kv)) if state.kv_known => {
                    verify::verify_kv(c, self.connector.as_ref(), kv, ordinal as u64, check, stop)
                }
                (Step::Kv(_), _) => Ok(None),
                _ => verify::verify_tables(
                    c,
                    self.connector.as_ref(),
                    &state.tables[own.clone()],
                    ordinal as u64,
                    check,
                    stop,
                ),
            };
            row.verify_s = Some(started.elapsed().as_secs_f64());
            match checked {
                Ok(None) => {}
                Ok(Some(verdict)) => {
                    row.verify = Some(c.verify.name().into());
                    if let Err(what) = verdict {
                        row.verified = Some(false);
                        row.verify_error = Some(what);
                    } else {
                        row.verified = Some(true);
                    }
                }
                Err(e) if e.is_canceled() && stop.requested() => {}
                Err(e) => {
                    row.verify = Some(c.verify.name().into());
                    row.verified = Some(false);
                    row.verify_error = Some(format!("verify could not run: {e}"));
                }
            }
        }
        let sizes = self.connector.sizes(&table_names);
        if let (Some(note), false) = (&sizes.note, self.size_noted) {
            self.size_noted = true;
            self.warn(observer, format!("database sizes: {note}"));
        }
        row.db_size_bytes = sizes.database;
        row.tables_size_bytes = sizes.tables;
        row.datadir_size_bytes = sizes.datadir;
        let tables = &state.tables[own];
        row.live_rows = match (step, &state.kv) {
            (Step::Kv(_), Some(kv)) if state.kv_known => kv.written().unwrap_or(0),
            _ => tables.iter().map(|t| t.bounds().len()).sum(),
        };
        row.live_rows_max = match step {
            Step::Kv(_) => row.live_rows,
            _ => tables.iter().map(|t| t.max_len()).sum(),
        };
        let (status, error) = (row.status.clone(), row.error.clone());
        let name = row.step.clone();
        self.results
            .intervals
            .extend(out.intervals.into_iter().map(|r| (name.clone(), r)));
        self.results
            .host_intervals
            .extend(out.host_intervals.into_iter().map(|h| (name.clone(), h)));
        self.results
            .gauges
            .extend(out.gauges.into_iter().map(|g| (name.clone(), g)));
        self.results.steps.push(row);
        self.results.write(&self.dir)?;
        observer.step_finished(self.results.steps.last().expect("just pushed"));
        match status.as_str() {
            "error" => Err(Error::Step {
                step: step.to_string(),
                message: error.unwrap_or_default(),
            }),
            "interrupted" => Err(Error::Interrupted),
            _ => Ok(()),
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
        let wrote_tables = self.steps.iter().any(|s| s.kv().is_none() && s.writes());
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

    /// The step's row, from what it measured.
    fn step_row(&self, step: Step, out: &StepOutcome, engine: Option<EngineDelta>) -> StepRow {
        let c = &self.config;
        let mut row = StepRow {
            run_id: self.results.run.run_id.clone(),
            step: step.to_string(),
            status: out.status.into(),
            error: out.error.clone(),
            started_at_us: out.started_at_us,
            elapsed_s: out.elapsed_s,
            clients: if step.kv().is_some() {
                c.threads
            } else {
                self.shard.clients(c.clients).len() as u32
            },
            rows_per_commit: match step {
                Step::Kv(op) if op.writes() => Some(c.kv_batch(op)),
                _ => c.writes(step).map(|w| w.rows_per_commit),
            },
            inserts: out.inserts,
            deletes: out.deletes,
            queries: out.queries,
            indexed_rows: (step == Step::CreateIndexes).then_some(out.indexed_rows),
            errors: out.errors,
            retries: out.retries,
            cost_ops: match step {
                Step::LoadI0 | Step::LoadI1 | Step::LoadI2 => Some(out.inserts),
                Step::Query { .. } => Some(out.queries),
                Step::CreateIndexes => Some(out.indexed_rows),
                Step::Wait => None,
                Step::Kv(op) if op.maintains() => None,
                Step::Kv(op) if op.reads() => Some(out.queries),
                Step::Kv(op) if op.deletes() => Some(out.deletes),
                Step::Kv(_) => Some(out.inserts),
            },
            found: step.kv().is_some_and(KvOp::reads).then_some(out.found),
            engine,
            system: out.system.clone(),
            ..StepRow::default()
        };
        if let Step::Query { rate, .. } = step {
            let target = rate as f64 * self.shard.clients(c.clients).len() as f64;
            row.target_ips = Some(target);
            // A q step that did not insert its rows in time (it timed out or
            // failed) missed its SLA; one the user stopped has no verdict.
            row.sla_ok = match out.status {
                "ok" => Some(row.ips() >= 0.95 * target),
                "interrupted" => None,
                _ => Some(false),
            };
        }
        for (op, lat) in &out.latencies {
            let p = |h| PERCENTILES.map(|(q, _)| percentile_us(h, q));
            row.latencies.push((*op, p(&lat.response), p(&lat.service)));
            if let Some(lag) = &lat.lag {
                row.lags.push((*op, LAG_STATS.map(|(q, _)| percentile_us(lag, q))));
            }
        }
        row
    }

    /// The step's histograms: per operation over the step, and the
    /// all-clients response times per interval.
    fn record_histograms(&mut self, step: &str, out: &StepOutcome) {
        let run_id = self.results.run.run_id.clone();
        for (op, lat) in &out.latencies {
            let lag = lat.lag.as_ref().map(|h| ("lag", h));
            for (time, h) in [("response", &lat.response), ("service", &lat.service)]
                .into_iter()
                .chain(lag)
            {
                self.results.histograms.push(HistogramRow {
                    run_id: run_id.clone(),
                    step: step.to_string(),
                    op: *op,
                    time,
                    count: h.len(),
                    histogram: serialize(h),
                    t_s: None,
                });
            }
        }
        for (op, t_s, count, h) in &out.interval_histograms {
            self.results.histograms.push(HistogramRow {
                run_id: run_id.clone(),
                step: step.to_string(),
                op: *op,
                time: "response",
                count: *count,
                histogram: h.clone(),
                t_s: Some(*t_s),
            });
        }
    }
}

#[cfg(test)]
mod tests {
    use super::run_id_at;

    #[test]
    fn run_ids_sort_by_start_time_within_a_second_and_differ_between_processes() {
        // Every millisecond across a second's boundary, and a few µs apart.
        let start = 1_764_806_399_000_000i64; // 2025-12-03T23:59:59Z
        let times: Vec<i64> = (0..2_000).map(|i| start + i * 1_000 + (i % 7)).collect();
        let ids: Vec<String> = times.iter().map(|&t| run_id_at(t, 4242)).collect();
        let mut sorted = ids.clone();
        sorted.sort();
        assert_eq!(sorted, ids, "ids must sort in start order");
        assert!(ids[0].starts_with("20251203T235959Z-000"), "{}", ids[0]);
        assert!(ids[1_999].starts_with("20251204T000000Z-3e7"), "{}", ids[1_999]);
        assert!(ids.iter().all(|id| id.len() == "20251203T235959Z-000000".len()));
        // Two processes starting in the same microsecond get different ids.
        assert_ne!(run_id_at(start, 100), run_id_at(start, 101));
    }
}
