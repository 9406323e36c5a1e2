//! `ibench run`: the Insert Benchmark on a database, with progress and a summary.

use super::summary;
use crate::error::{Error, Result};
use crate::exec::{self, Observer};
use crate::results::{RunRow, StepRow};
use crate::stop::Stop;
use crate::workload::Config;
use clap::Args;
use indicatif::{ProgressBar, ProgressStyle};
use serde_json::{json, Map, Value};
use std::io::IsTerminal;
use std::path::{Path, PathBuf};
use std::sync::atomic::{AtomicI32, Ordering};
use std::sync::{Arc, Mutex};
use std::time::Duration;

/// With no arguments: the quick preset on a SQLite file under ./ibench-results/<run_id>/.
#[derive(Debug, Args)]
#[command(allow_negative_numbers = true)] // so `--rows-l-i0 -5` is refused by name, as a value
pub(super) struct RunArgs {
    /// The database: sqlite:PATH, sqlite::memory:, postgres://user:pass@host:port/db,
    /// mysql://user:pass@host:port/db?engine=innodb|rocksdb,
    /// rocksdb:PATH[?compaction_style=universal&compression=lz4&...], or null:[?latency=exp:1ms&stall=2s@5s].
    /// Default: a SQLite file in the run directory (RocksDB for key/value steps alone).
    #[arg(long)]
    db: Option<String>,
    /// quick, small-1, small-4, large-12-cpu, large-12-io (the Insert Benchmark),
    /// kv-quick or universal-compression (key/value steps).
    #[arg(long)]
    preset: Option<String>,
    /// Steps to run, comma-separated: l.i0,l.x,l.i1,l.i2,wait,qr100,qp100,... or
    /// fillseq,fillrandom,filluniquerandom,overwrite,overwritesome,overwriteandwait,
    /// readrandom,seekrandom,readwhilewriting,readseq,readreverse,multireadrandom,
    /// fwdrange,revrange,updaterandom,mergerandom,deleterandom,deleteseq,flush,
    /// waitforcompaction (default: the preset's).
    #[arg(long, value_delimiter = ',')]
    steps: Option<Vec<String>>,
    /// Clients (one table and up to three connections each).
    #[arg(long)]
    clients: Option<u32>,
    /// Directory under which the run directory is created.
    #[arg(long, default_value = "ibench-results")]
    out: PathBuf,
    /// A name for the run in reports.
    #[arg(long)]
    label: Option<String>,
    /// A file whose first line is the database password (for a DSN without
    /// one; PGPASSWORD, ~/.pgpass, MYSQL_PWD and ~/.my.cnf work too).
    #[arg(long)]
    password_file: Option<PathBuf>,
    /// A TOML file of parameters (the names below, with '_'); flags override it.
    #[arg(long)]
    config: Option<PathBuf>,
    /// Seed of every generated row and query.
    #[arg(long)]
    seed: Option<u64>,
    /// Rows per client in l.i0.
    #[arg(long)]
    rows_l_i0: Option<u64>,
    /// Rows per client in l.i1.
    #[arg(long)]
    rows_l_i1: Option<u64>,
    /// Rows per client in l.i2.
    #[arg(long)]
    rows_l_i2: Option<u64>,
    /// Rows per commit in l.i0 (default 100).
    #[arg(long)]
    rows_per_commit_l_i0: Option<u32>,
    /// Rows per commit in l.i1 (default 50).
    #[arg(long)]
    rows_per_commit_l_i1: Option<u32>,
    /// Rows per commit in l.i2 (default 5).
    #[arg(long)]
    rows_per_commit_l_i2: Option<u32>,
    /// Rows per commit of the background writes in q steps (default 50).
    #[arg(long)]
    rows_per_commit_q: Option<u32>,
    /// Delete as many rows as are inserted in l.i1, l.i2 and the q steps (default true).
    #[arg(long)]
    delete_per_insert: Option<bool>,
    /// Secondary indexes created by l.x, 0 to 3 (default 3).
    #[arg(long)]
    secondary_indexes: Option<u8>,
    /// Seconds per q step: each inserts seconds × rate rows per client.
    #[arg(long)]
    query_seconds: Option<f64>,
    /// Length of the wait step (default min(1200, 60 + M/10^6) for the M rows of l.i0, all clients).
    #[arg(long)]
    wait_seconds: Option<f64>,
    /// Length of the data column: MIN..MAX (default 10..20).
    #[arg(long, value_parser = super::gen::parse_length)]
    data_length: Option<crate::gen::Length>,
    /// Compressed/raw ratio of the data column (default 0.5).
    #[arg(long)]
    ratio: Option<f64>,
    /// Let the database assign primary keys (AUTO_INCREMENT, a BIGSERIAL
    /// caching 1000, SQLite's rowid); deletes then remove the oldest rows
    /// with ORDER BY ... LIMIT. `--server-keys` alone means true.
    #[arg(long, num_args = 0..=1, default_missing_value = "true")]
    server_keys: Option<bool>,
    /// A bundle of the statement choices: ibench (the default) or iibench
    /// (the reference client's: server keys, literal statements, its data,
    /// l.x's 100 rows, its wait step). Choices given too override it.
    #[arg(long)]
    compat: Option<String>,
    /// How statements are sent: prepared (server-side, binary parameters)
    /// or literal (SQL text with the values in it, as the reference sends them).
    #[arg(long)]
    statements: Option<String>,
    /// What rows hold: ibench (data compressible to --ratio) or iibench
    /// (the reference's data construction, one dateandtime per batch).
    #[arg(long)]
    data: Option<String>,
    /// --data iibench: the reference's --data_random_pct (default 50).
    #[arg(long)]
    data_random_pct: Option<u32>,
    /// Rows per table inserted by l.x before it creates the indexes (default 0; the reference 100).
    #[arg(long)]
    lx_rows: Option<u64>,
    /// The wait step: ibench (maintenance, then the sleep) or iibench (the
    /// reference scripts' procedure, the step lasting the wait in all).
    #[arg(long)]
    maintenance: Option<String>,
    /// With --maintenance iibench on MySQL/MariaDB: RESET MASTER first, as the
    /// reference's scripts do. It deletes the server's binary logs.
    #[arg(long)]
    reset_master: bool,
    /// One table shared by all clients.
    #[arg(long)]
    shared_table: bool,
    /// Stop any step after this many seconds.
    #[arg(long)]
    max_seconds: Option<f64>,
    /// Length of the per-interval series in seconds (default 1).
    #[arg(long)]
    interval_seconds: Option<f64>,
    /// What verify checks: quick (key bounds and sampled rows after each
    /// write step, exact counts at the end), full (exact counts after every
    /// write step too) or off (default quick).
    #[arg(long)]
    verify: Option<String>,
    /// Commits the deleter may fall behind its inserter before the inserter
    /// waits (default 8).
    #[arg(long)]
    max_delete_lag: Option<u32>,
    /// Key/value steps: the key space [0, NUM); fills write NUM keys.
    #[arg(long)]
    num: Option<u64>,
    /// Key/value steps: bytes per key (default 16).
    #[arg(long)]
    key_size: Option<u32>,
    /// Key/value steps: value length, N or MIN..MAX (default 100).
    #[arg(long, value_parser = super::gen::parse_length)]
    value_size: Option<crate::gen::Length>,
    /// Key/value steps: pairs per write batch (default 1).
    #[arg(long)]
    batch_size: Option<u32>,
    /// Key/value steps: threads (default 1).
    #[arg(long)]
    threads: Option<u32>,
    /// Writes of fillrandom and overwrite, all threads (default NUM).
    #[arg(long)]
    writes: Option<u64>,
    /// Writes of overwritesome (default NUM / 10).
    #[arg(long)]
    overwritesome_writes: Option<u64>,
    /// Reads of the read steps, all readers (default NUM).
    #[arg(long)]
    reads: Option<u64>,
    /// Run overwrite, overwriteandwait and the read steps for this many seconds instead of a count.
    #[arg(long)]
    duration: Option<f64>,
    /// Nexts after each seek of seekrandom (default 10).
    #[arg(long)]
    seek_nexts: Option<u32>,
    /// Keys/s of readwhilewriting's writer (default 10000).
    #[arg(long)]
    writer_rate: Option<u32>,
    /// Key/value reads and overwrites: uniform, zipfian or latest (default uniform).
    #[arg(long)]
    distribution: Option<String>,
    /// Key/value values' random bytes: binary, text or printable (db_bench's; default binary).
    #[arg(long)]
    value_alphabet: Option<String>,
    /// Key/value values: per-key (each generated; default) or pool (db_bench's:
    /// slices of a 1 MiB buffer).
    #[arg(long)]
    value_source: Option<String>,
    /// The exponent of the zipfian and latest distributions (default 0.99).
    #[arg(long)]
    zipf_theta: Option<f64>,
    /// How paced operations wait for their start: precise (sleep, then spin
    /// the last stretch) or sleep (default precise).
    #[arg(long)]
    pacing: Option<String>,
    /// Run shard I of N: the clients [I·C/N, (I+1)·C/N) and their tables
    /// (docs/distributed.md); merge the shards with `ibench merge`.
    #[arg(long, value_name = "I/N")]
    shard: Option<String>,
    /// When the first step starts, shared by the shards of a run started by
    /// hand: RFC 3339 (2026-12-01T21:30:00Z) or Unix seconds.
    #[arg(long, value_name = "TIME", value_parser = parse_start_at)]
    start_at: Option<f64>,
    /// Run the clients on a Dask cluster (its scheduler's address,
    /// tcp://host:8786), split in --shards shards, one per worker.
    #[arg(long, value_name = "ADDRESS")]
    cluster: Option<String>,
    /// With --cluster: how many shards (default: one per worker).
    #[arg(long, requires = "cluster")]
    shards: Option<u32>,
    /// With --cluster: the worker on the database's host, which measures the
    /// server's CPU, memory and disks.
    #[arg(long, value_name = "ADDRESS", requires = "cluster")]
    server_worker: Option<String>,
    /// With --server-worker: the DSN as the server's host sees it (default --db).
    #[arg(long, value_name = "DSN", requires = "server_worker")]
    server_dsn: Option<String>,
    /// No progress output.
    #[arg(long, short)]
    quiet: bool,
}

/// `--start-at`: RFC 3339 or Unix seconds.
fn parse_start_at(text: &str) -> std::result::Result<f64, String> {
    if let Ok(seconds) = text.parse::<f64>() {
        return Ok(seconds);
    }
    time::OffsetDateTime::parse(text, &time::format_description::well_known::Rfc3339)
        .map(|t| t.unix_timestamp_nanos() as f64 / 1e9)
        .map_err(|e| format!("expected RFC 3339 (2026-12-01T21:30:00Z) or Unix seconds: {e}"))
}

fn length_json(l: crate::gen::Length) -> Value {
    match l {
        crate::gen::Length::Fixed(n) => json!([n, n]),
        crate::gen::Length::Uniform { min, max } => json!([min, max]),
    }
}

impl RunArgs {
    /// The flags given, as a configuration layer.
    fn layer(&self) -> Map<String, Value> {
        let mut m = Map::new();
        let mut put = |k: &str, v: Option<Value>| {
            if let Some(v) = v {
                m.insert(k.into(), v);
            }
        };
        put("db", self.db.clone().map(Value::from));
        put("preset", self.preset.clone().map(Value::from));
        put("steps", self.steps.clone().map(|s| json!(s)));
        put("clients", self.clients.map(Value::from));
        put("label", self.label.clone().map(Value::from));
        put(
            "password_file",
            self.password_file
                .as_ref()
                .map(|p| Value::from(p.display().to_string())),
        );
        put("seed", self.seed.map(Value::from));
        put("rows_l_i0", self.rows_l_i0.map(Value::from));
        put("rows_l_i1", self.rows_l_i1.map(Value::from));
        put("rows_l_i2", self.rows_l_i2.map(Value::from));
        put("rows_per_commit_l_i0", self.rows_per_commit_l_i0.map(Value::from));
        put("rows_per_commit_l_i1", self.rows_per_commit_l_i1.map(Value::from));
        put("rows_per_commit_l_i2", self.rows_per_commit_l_i2.map(Value::from));
        put("rows_per_commit_q", self.rows_per_commit_q.map(Value::from));
        put("delete_per_insert", self.delete_per_insert.map(Value::from));
        put("secondary_indexes", self.secondary_indexes.map(Value::from));
        put("query_seconds", self.query_seconds.map(Value::from));
        put("wait_seconds", self.wait_seconds.map(Value::from));
        put("data_length", self.data_length.map(length_json));
        put("num", self.num.map(Value::from));
        put("key_size", self.key_size.map(Value::from));
        put("value_size", self.value_size.map(length_json));
        put("batch_size", self.batch_size.map(Value::from));
        put("threads", self.threads.map(Value::from));
        put("writes", self.writes.map(Value::from));
        put("overwritesome_writes", self.overwritesome_writes.map(Value::from));
        put("reads", self.reads.map(Value::from));
        put("duration", self.duration.map(Value::from));
        put("seek_nexts", self.seek_nexts.map(Value::from));
        put("writer_rate", self.writer_rate.map(Value::from));
        put("distribution", self.distribution.clone().map(Value::from));
        put("value_alphabet", self.value_alphabet.clone().map(Value::from));
        put("value_source", self.value_source.clone().map(Value::from));
        put("zipf_theta", self.zipf_theta.map(Value::from));
        put("pacing", self.pacing.clone().map(Value::from));
        put("ratio", self.ratio.map(Value::from));
        put("server_keys", self.server_keys.map(Value::from));
        put("compat", self.compat.clone().map(Value::from));
        put("statements", self.statements.clone().map(Value::from));
        put("data", self.data.clone().map(Value::from));
        put("data_random_pct", self.data_random_pct.map(Value::from));
        put("lx_rows", self.lx_rows.map(Value::from));
        put("maintenance", self.maintenance.clone().map(Value::from));
        put("reset_master", self.reset_master.then_some(Value::from(true)));
        put("shared_table", self.shared_table.then_some(Value::from(true)));
        put("max_seconds", self.max_seconds.map(Value::from));
        put("interval_seconds", self.interval_seconds.map(Value::from));
        put("verify", self.verify.clone().map(Value::from));
        put("max_delete_lag", self.max_delete_lag.map(Value::from));
        put("shard", self.shard.clone().map(Value::from));
        put("start_at", self.start_at.map(Value::from));
        m
    }
}

/// Progress on a terminal: a bar per step with rate and ETA; elsewhere plain lines.
pub(super) struct Progress {
    bar: Mutex<Option<ProgressBar>>,
    terminal: bool,
    quiet: bool,
}

impl Progress {
    /// Bars on a terminal, lines elsewhere; only warnings when `quiet`.
    pub(super) fn new(quiet: bool) -> Self {
        Progress {
            bar: Mutex::new(None),
            terminal: std::io::stderr().is_terminal(),
            quiet,
        }
    }
}

impl Observer for Progress {
    fn run_started(&self, run: &RunRow, dir: &Path) {
        if !self.quiet {
            eprintln!("{}", summary::start_line(run, dir));
        }
        // Warnings are shown even with --quiet: they say the figures may mislead.
        for w in &run.warnings {
            eprintln!("warning: {w}");
        }
    }
    fn step_started(&self, step: &str, rows: Option<u64>) {
        if self.quiet {
            return;
        }
        if !self.terminal {
            eprintln!("{step}: started");
            return;
        }
        let bar = match rows {
            Some(n) => ProgressBar::new(n).with_style(
                ProgressStyle::with_template("{prefix:>7} {bar:30} {pos}/{len} rows {per_sec} eta {eta}")
                    .expect("a valid template"),
            ),
            None => ProgressBar::new_spinner()
                .with_style(ProgressStyle::with_template("{prefix:>7} {spinner} {elapsed}").expect("a valid template")),
        };
        bar.set_prefix(step.to_string());
        bar.enable_steady_tick(Duration::from_millis(200));
        *self.bar.lock().unwrap_or_else(|p| p.into_inner()) = Some(bar);
    }
    fn warning(&self, message: &str) {
        eprintln!("warning: {message}");
    }
    fn step_progress(&self, _step: &str, rows: u64, _elapsed: Duration) {
        if let Some(bar) = self.bar.lock().unwrap_or_else(|p| p.into_inner()).as_ref() {
            bar.set_position(rows);
        }
    }
    fn step_finished(&self, row: &StepRow) {
        if let Some(bar) = self.bar.lock().unwrap_or_else(|p| p.into_inner()).take() {
            bar.finish_and_clear();
        }
        if !self.quiet {
            eprintln!("{}", summary::step_line(row));
        }
    }
}

/// Turns SIGINT, SIGTERM and SIGHUP into stop requests: the run stops
/// between operations, cancels long statements, restores what it changed on
/// the server and writes its results. Further signals never cut that short
/// (SIGKILL does). Returns the first signal's number, once one came.
pub(super) fn stop_on_signals(stop: Arc<Stop>) -> Result<(signal_hook::iterator::Handle, Arc<AtomicI32>)> {
    use signal_hook::consts::{SIGHUP, SIGINT, SIGTERM};
    let mut signals = signal_hook::iterator::Signals::new([SIGINT, SIGTERM, SIGHUP]).map_err(|source| Error::Io {
        action: "cannot handle signals for",
        path: "ibench run".into(),
        source,
    })?;
    let handle = signals.handle();
    let first = Arc::new(AtomicI32::new(0));
    let seen = first.clone();
    std::thread::spawn(move || {
        for signal in signals.forever() {
            let _ = seen.compare_exchange(0, signal, Ordering::SeqCst, Ordering::SeqCst);
            if stop.request() == 1 {
                eprintln!("stopping: the running step ends between operations and its results are written");
            } else {
                eprintln!(
                    "still stopping: ibench restores the server settings it changed and writes its results first (SIGKILL abandons them)"
                );
            }
        }
    });
    Ok((handle, first))
}

/// Runs `ibench run`; returns the exit code: 0, 1 when the run failed, 128 +
/// the signal's number when a signal stopped it.
pub(super) fn run(args: RunArgs) -> Result<i32> {
    let mut layers = Vec::new();
    if let Some(path) = &args.config {
        layers.push(Config::layer_from_toml(path)?);
    }
    layers.push(args.layer());
    let config = Config::resolve(&layers)?;
    if let Some(cluster) = &args.cluster {
        return on_cluster(&args, cluster, &config);
    }
    let stop = Arc::new(Stop::new());
    let (signals, signal) = stop_on_signals(stop.clone())?;
    let observer = Progress::new(args.quiet);
    let outcome = exec::run(&config, &args.out, &observer, &stop);
    signals.close();
    let outcome = outcome?;
    println!("{}", summary::table(&outcome.results.steps, Some(&outcome.results.run)));
    println!("results: {}", outcome.dir.display());
    let run = &outcome.results.run;
    match (run.status.as_str(), signal.load(Ordering::SeqCst)) {
        ("ok", _) => Ok(0),
        ("interrupted", n) if n > 0 => {
            eprintln!("error: run interrupted by signal {n}");
            Ok(128 + n)
        }
        (status, _) => {
            eprintln!("error: run {status}: {}", run.error.clone().unwrap_or_default());
            Ok(1)
        }
    }
}

/// `ibench run --cluster`: the coordinator is the Python package's
/// (ibench.distributed, on Dask), given the resolved configuration.
fn on_cluster(args: &RunArgs, cluster: &str, config: &Config) -> Result<i32> {
    if config.shard.is_some() {
        return Err(Error::config(
            "shard",
            "--cluster splits the clients itself; --shard is for runs started by hand",
        ));
    }
    // The configuration (whose DSN may hold a password) goes in the
    // environment, which other users cannot read, not in the arguments.
    let layer = serde_json::to_string(config).expect("a config serializes");
    let mut argv = vec![
        "--out".to_string(),
        args.out.display().to_string(),
        "--cluster".into(),
        cluster.to_string(),
    ];
    let optional = [
        ("--shards", args.shards.map(|n| n.to_string())),
        ("--server-worker", args.server_worker.clone()),
        ("--server-dsn", args.server_dsn.clone()),
    ];
    for (flag, value) in optional {
        if let Some(v) = value {
            argv.extend([flag.to_string(), v]);
        }
    }
    if args.quiet {
        argv.push("--quiet".into());
    }
    let env = [("IBENCH_RUN_CONFIG", layer)];
    super::python_module("ibench.distributed", &argv, &env, super::Signals::Forwarded).map(super::stopped_exit_code)
}
