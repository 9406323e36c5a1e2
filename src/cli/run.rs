//! `ibench run`: the Insert Benchmark on a database, with progress and a summary.

use super::progress::Progress;
use super::summary;
use crate::error::{Error, Result};
use crate::exec;
use crate::results::RunStatus;
use crate::stop::Stop;
use crate::workload::{Config, Flags, Overrides};
use clap::Args;
use std::path::PathBuf;
use std::sync::atomic::{AtomicI32, Ordering};
use std::sync::Arc;
use std::time::Duration;

/// With no arguments: the quick preset on a SQLite file under ./ibench-results/<run_id>/.
#[derive(Debug, Args)]
#[command(allow_negative_numbers = true)] // so `--rows-l-i0 -5` is refused by name, as a value
pub(super) struct RunArgs {
    /// The run's parameters.
    #[command(flatten)]
    params: Flags,
    /// Directory under which the run directory is created.
    #[arg(long, default_value = "ibench-results")]
    out: PathBuf,
    /// A TOML file of parameters (the names below, with '_'); flags override it.
    #[arg(long)]
    config: Option<PathBuf>,
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
    /// When standard error is not a terminal: a progress line this often (seconds).
    #[arg(long, default_value_t = 30.0, value_name = "SECONDS")]
    progress_seconds: f64,
    /// Print the resolved configuration (JSON, as the run would record it)
    /// and exit without running.
    #[arg(long)]
    print_config: bool,
}

/// `--progress-seconds`: a duration, checked.
pub(super) fn seconds(s: f64) -> Result<Duration> {
    Duration::try_from_secs_f64(s)
        .ok()
        .filter(|d| !d.is_zero())
        .ok_or_else(|| Error::config("progress-seconds", format!("must be > 0, got {s}")))
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
        layers.push(Overrides::from_toml(path)?);
    }
    layers.push(args.params.clone().overrides());
    let config = Config::resolve_layers(layers)?;
    if args.print_config {
        println!(
            "{}",
            serde_json::to_string_pretty(&config).expect("a config serializes")
        );
        return Ok(0);
    }
    if let Some(cluster) = &args.cluster {
        return on_cluster(&args, cluster, &config);
    }
    let stop = Arc::new(Stop::new());
    let (signals, signal) = stop_on_signals(stop.clone())?;
    let observer = Progress::new(args.quiet, seconds(args.progress_seconds)?);
    let outcome = exec::run(&config, &args.out, &observer, &stop);
    signals.close();
    let outcome = outcome?;
    println!("{}", summary::table(&outcome.results.steps, Some(&outcome.results.run)));
    println!("results: {}", outcome.dir.display());
    let run = &outcome.results.run;
    match (run.status, signal.load(Ordering::SeqCst)) {
        (RunStatus::Ok, _) => Ok(0),
        (RunStatus::Interrupted, n) if n > 0 => {
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
