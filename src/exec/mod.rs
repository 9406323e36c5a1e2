//! How to run a workload: steps in order, each with a thread per connection
//! role per client, measured honestly; results written after every step.
//! Nothing here prints: progress goes to an [`Observer`].

mod kv;
mod pacing;
mod step;
mod tables;
mod verify;

pub use kv::{KvState, TRACKED_KEYS};
pub use pacing::Schedule;
pub use tables::TableState;

use crate::connect::{self, Connector};
use crate::error::{Error, Result};
use crate::gen::Window;
use crate::metrics::{host_facts, percentile_us, serialize, warnings, EngineDelta, Setting};
use crate::results::{HistogramRow, RunResults, RunRow, StepRow, PERCENTILES};
use crate::workload::{Config, KvOp, Step};
use std::path::{Path, PathBuf};
use std::sync::atomic::{AtomicBool, Ordering};
use std::time::Duration;
use step::{rows_per_commit, run_step, unix_micros, StepPlan};

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
    let micros = unix_micros();
    let c = crate::civil::from_micros(micros);
    let tag = (micros as u64 ^ (std::process::id() as u64).rotate_left(20)) & 0xff_ffff;
    format!(
        "{:04}{:02}{:02}T{:02}{:02}{:02}Z-{tag:06x}",
        c.year, c.month, c.day, c.hour, c.minute, c.second
    )
}

fn host_name() -> String {
    std::fs::read_to_string("/proc/sys/kernel/hostname")
        .map(|s| s.trim().to_string())
        .or_else(|_| std::env::var("HOSTNAME"))
        .unwrap_or_else(|_| "unknown".into())
}

/// Host facts, the server's configuration, and the warnings they call for.
fn environment(config: &Config, connector: &dyn Connector) -> (Vec<Setting>, Vec<String>) {
    let mut server = Vec::new();
    let mut trouble = Vec::new();
    match connector.configuration() {
        Ok(rows) => server.extend(rows.into_iter().map(|(name, value, source)| Setting {
            scope: "server",
            name,
            value,
            source,
        })),
        Err(e) => trouble.push(format!("the server's configuration could not be read: {e}")),
    }
    let local = !connector.server_processes().is_empty();
    let find = |n: &str| server.iter().find(|s| s.name == n).map(|s| PathBuf::from(&s.value));
    let data = match config.db.strip_prefix("sqlite:") {
        Some(path) if path != ":memory:" => Some(PathBuf::from(path)),
        _ if local => find("data_directory").or_else(|| find("datadir")),
        _ => None,
    };
    let facts = host_facts(data.as_deref());
    let mut warnings = warnings(&facts, local);
    warnings.extend(trouble);
    (facts.into_iter().chain(server).collect(), warnings)
}

/// Runs `config`'s steps, writing results under `out/<run_id>/`.
///
/// Bad input (configuration, DSN, output directory) is an error before any
/// work. Once the run has started, a failing step or `stop` (Ctrl-C) ends the
/// run with its status and error recorded in the files, and this returns
/// `Ok` with that status in `results.run`.
pub fn run(config: &Config, out: &Path, observer: &dyn Observer, stop: &AtomicBool) -> Result<RunOutcome> {
    config.check()?;
    let steps = config.parsed_steps()?;
    let id = run_id();
    let dir = out.join(&id);
    let make_dir = || {
        std::fs::create_dir_all(&dir).map_err(|source| Error::Io {
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
    let connector: Box<dyn Connector> = if config.db.is_empty() {
        make_dir()?;
        // The key/value steps alone default to embedded RocksDB, when built in.
        config.db = if cfg!(feature = "rocksdb") && config.kv_only() {
            format!("rocksdb:{}", dir.join("rocksdb").display())
        } else {
            format!("sqlite:{}", dir.join("ibench.sqlite").display())
        };
        connect::open(&config.db)?
    } else {
        let c = connect::open(&config.db)?;
        refuse_table_steps(c.as_ref())?;
        make_dir()?;
        c
    };
    let settings: serde_json::Map<String, serde_json::Value> =
        connector.settings().into_iter().map(|(k, v)| (k, v.into())).collect();
    let (config_rows, warnings) = environment(&config, connector.as_ref());
    let mut results = RunResults {
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
            host: host_name(),
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
        },
        config: config_rows,
        ..RunResults::default()
    };
    results.write(&dir)?;
    observer.run_started(&results.run, &dir);

    let outcome = run_steps(&config, &steps, connector.as_ref(), &mut results, &dir, observer, stop);
    if let Err(e) = outcome {
        results.run.status = if matches!(e, Error::Interrupted) {
            "interrupted"
        } else {
            "error"
        }
        .into();
        results.run.error = Some(e.to_string());
    } else if results.run.status == "running" {
        results.run.status = "ok".into();
    }
    results.write(&dir)?;
    Ok(RunOutcome { dir, results })
}

fn run_steps(
    config: &Config,
    steps: &[Step],
    connector: &dyn Connector,
    results: &mut RunResults,
    dir: &Path,
    observer: &dyn Observer,
    stop: &AtomicBool,
) -> Result<()> {
    let first_key = if config.server_keys { 1 } else { 0 };
    let loads = steps.contains(&Step::LoadI0);
    let inserters = if config.shared_table {
        config.clients as usize
    } else {
        1
    };
    let mut tables = Vec::new();
    let table_steps = steps.iter().any(|s| s.kv().is_none());
    let mut session: Option<Box<dyn connect::Session>> = None;
    for t in 0..config.tables() {
        if !table_steps {
            tables.push(TableState::new(
                format!("pi{}", t + 1),
                t as u64,
                Window::new(first_key),
                inserters,
            ));
            continue;
        }
        let session = match &mut session {
            Some(s) => s,
            None => session.insert(connector.session()?),
        };
        let name = format!("pi{}", t + 1);
        let window = if loads {
            Window::new(first_key)
        } else {
            // Continue tables an earlier run loaded: the database says where they are.
            match session.bounds(&name)? {
                Some(b) if b.count > 0 => Window {
                    tail: b.min.unwrap_or(first_key),
                    head: b.max.map_or(first_key, |m| m + 1),
                },
                _ => Window::new(first_key),
            }
        };
        tables.push(TableState::new(name, t as u64, window, inserters));
    }
    drop(session);
    let kv_state = steps.iter().any(|s| s.kv().is_some()).then(|| KvState::new(config.num));
    // Verify knows the key/value table once this run has filled it.
    let mut kv_known = false;
    let mut indexed = !loads;
    for (ordinal, &step) in steps.iter().enumerate() {
        if stop.load(Ordering::Relaxed) {
            return Err(Error::Interrupted);
        }
        if step == Step::LoadI0 {
            let mut s = connector.session()?;
            for t in &mut tables {
                s.create_table(&t.name, config.server_keys)?;
                *t = TableState::new(t.name.clone(), t.number, Window::new(first_key), inserters);
            }
            indexed = false;
        }
        if let (Step::Kv(op), Some(state)) = (step, &kv_state) {
            if op.fills() {
                connector
                    .kv_session()?
                    .create(connect::KV_TABLE, config.key_size as usize)?;
                state.clear();
                kv_known = true;
            }
        }
        let plan = StepPlan {
            config,
            connector,
            tables: &tables,
            step,
            ordinal: ordinal as u64,
            indexed,
            stop,
            observer,
            kv: kv_state.as_ref(),
        };
        let db_size_before_bytes = connector.size_bytes();
        let engine_before = connector.engine_counters();
        let out = run_step(&plan);
        let engine = match (engine_before, connector.engine_counters()) {
            (Some(before), Some(after)) => Some(EngineDelta::between(&before, &after)),
            _ => None,
        };
        if step == Step::CreateIndexes && out.status == "ok" {
            indexed = true;
        }
        let mut row = StepRow {
            run_id: results.run.run_id.clone(),
            step: step.to_string(),
            status: out.status.into(),
            error: out.error.clone(),
            started_at_us: out.started_at_us,
            elapsed_s: out.elapsed_s,
            clients: if step.kv().is_some() {
                config.threads
            } else {
                config.clients
            },
            rows_per_commit: match step {
                Step::Kv(op) if op.writes() => Some(config.batch_size),
                _ => rows_per_commit(config, step),
            },
            inserts: out.inserts,
            deletes: out.deletes,
            queries: out.queries,
            indexed_rows: (step == Step::CreateIndexes).then_some(out.indexed_rows),
            errors: out.errors,
            retries: out.retries,
            db_size_before_bytes,
            cost_ops: match step {
                Step::LoadI0 | Step::LoadI1 | Step::LoadI2 => Some(out.inserts),
                Step::Query { .. } => Some(out.queries),
                Step::CreateIndexes => Some(out.indexed_rows),
                Step::Wait => None,
                Step::Kv(KvOp::Flush | KvOp::WaitForCompaction) => None,
                Step::Kv(KvOp::ReadRandom | KvOp::SeekRandom | KvOp::ReadWhileWriting) => Some(out.queries),
                Step::Kv(_) => Some(out.inserts),
            },
            found: matches!(
                step,
                Step::Kv(KvOp::ReadRandom | KvOp::SeekRandom | KvOp::ReadWhileWriting)
            )
            .then_some(out.found),
            engine,
            system: out.system.clone(),
            ..StepRow::default()
        };
        if let Step::Query { rate, .. } = step {
            let target = rate as f64 * config.clients as f64;
            row.target_ips = Some(target);
            // A verdict only for a step that ran its course.
            row.sla_ok = (out.status == "ok").then(|| row.ips() >= 0.95 * target);
        }
        for (op, lat) in &out.latencies {
            let p = |h| PERCENTILES.map(|(q, _)| percentile_us(h, q));
            row.latencies.push((*op, p(&lat.response), p(&lat.service)));
            for (time, h) in [("response", &lat.response), ("service", &lat.service)] {
                results.histograms.push(HistogramRow {
                    run_id: results.run.run_id.clone(),
                    step: row.step.clone(),
                    op: *op,
                    time,
                    count: h.len(),
                    histogram: serialize(h),
                });
            }
        }
        if step.writes() && out.status != "error" {
            let checked = match (step, &kv_state) {
                (Step::Kv(_), Some(state)) if kv_known => kv::verify(config, connector, state, ordinal as u64),
                (Step::Kv(_), _) => Ok(None),
                _ => verify::verify(config, connector, &tables, ordinal as u64),
            };
            match checked {
                Ok(None) => {}
                Ok(Some(Ok(()))) => row.verified = Some(true),
                Ok(Some(Err(what))) => {
                    row.verified = Some(false);
                    row.verify_error = Some(what);
                }
                Err(e) => {
                    row.verified = Some(false);
                    row.verify_error = Some(format!("verify could not run: {e}"));
                }
            }
        }
        row.db_size_bytes = connector.size_bytes();
        row.live_rows = match (step, &kv_state) {
            (Step::Kv(_), Some(state)) if kv_known => state.written().unwrap_or(0),
            _ => tables.iter().map(|t| t.bounds().len()).sum(),
        };
        let (status, error) = (row.status.clone(), row.error.clone());
        results
            .intervals
            .extend(out.intervals.into_iter().map(|r| (row.step.clone(), r)));
        results
            .host_intervals
            .extend(out.host_intervals.into_iter().map(|h| (row.step.clone(), h)));
        results.steps.push(row);
        results.write(dir)?;
        observer.step_finished(results.steps.last().expect("just pushed"));
        match status.as_str() {
            "error" => {
                return Err(Error::Step {
                    step: step.to_string(),
                    message: error.unwrap_or_default(),
                })
            }
            "interrupted" => return Err(Error::Interrupted),
            _ => {}
        }
    }
    Ok(())
}
