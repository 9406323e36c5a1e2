//! The server's costs measured on the server's host, for a run whose
//! clients run elsewhere (shards on other hosts): its processes' CPU and
//! memory and the data disks' I/O, sampled on each step's interval grid from
//! the step's common start, written as a run directory of their own that
//! `ibench merge` folds into the run (docs/distributed.md).

use super::facts;
use super::monitor::HostSampler;
use super::open::run_id;
use super::plan::Probe;
use super::profiling::{self, PerfPlan, StepProfiles};
use crate::clock::{Clock, SystemClock};
use crate::connect;
use crate::error::{Error, Result};
use crate::metrics::{unix_micros, HostInterval, Side, SystemDelta, ThreadRoles, ThreadRow};
use crate::results::{RunResults, RunRow, StepRow};
use crate::results::{RunStatus, StepStatus};
use std::path::{Path, PathBuf};
use std::sync::atomic::{AtomicBool, Ordering};
use std::sync::Arc;
use std::thread::JoinHandle;
use std::time::Duration;

/// What the sampling thread returns: the step's totals, its intervals, the
/// server's CPU by thread role and the step's length.
type Sampled = (SystemDelta, Vec<HostInterval>, Vec<ThreadRow>, ThreadRoles, f64);

/// Samples one server's host, a step at a time.
pub struct ServerHost {
    probe: Arc<Probe>,
    interval: Duration,
    results: RunResults,
    dir: PathBuf,
    /// The step being sampled: its name, start, and the thread.
    running: Option<(String, i64, Arc<AtomicBool>, JoinHandle<Sampled>)>,
    /// `profile = "perf"`: how the server's processes are profiled, and the
    /// running step's profiles.
    perf: Option<PerfPlan>,
    profiles: Option<StepProfiles>,
}

impl ServerHost {
    /// Opens `dsn` (as this host sees the server) to learn the server's
    /// processes and data directory, and creates `out/server-<id>/`. An
    /// error when the server does not run on this host. With
    /// `profile_frequency_hz`, each step profiles the server's processes
    /// with perf (`profile = "perf"`; when perf cannot, the run's warnings
    /// say why).
    pub fn open(
        dsn: &str,
        password: Option<&str>,
        out: &Path,
        interval_seconds: f64,
        profile_frequency_hz: Option<u32>,
    ) -> Result<ServerHost> {
        if !(interval_seconds.is_finite() && interval_seconds > 0.0) {
            return Err(Error::config(
                "interval_seconds",
                format!("must be > 0, got {interval_seconds}"),
            ));
        }
        let connector = connect::open_with_password(dsn, password)?;
        let (config, warnings, probe) = facts::environment(connector.as_ref());
        if probe.servers.is_empty() {
            return Err(Error::config(
                "server_dsn",
                format!(
                    "{} does not name a server on this host ({}): name it as this host sees it (127.0.0.1, localhost or its socket)",
                    connector.target(),
                    facts::host_name()
                ),
            ));
        }
        let (perf, warning) = match profile_frequency_hz {
            Some(hz) => profiling::server_plan(hz, &probe.servers),
            None => (None, None),
        };
        let warnings = warnings.into_iter().chain(warning).collect();
        let id = format!("server-{}", run_id());
        let dir = out.join(&id);
        std::fs::create_dir_all(&dir).map_err(|source| Error::Io {
            action: "cannot create the output directory",
            path: dir.clone(),
            source,
        })?;
        let results = RunResults {
            run: RunRow {
                run_id: id,
                started_at_us: unix_micros(),
                ibench_version: env!("CARGO_PKG_VERSION").into(),
                build_profile: if cfg!(debug_assertions) { "debug" } else { "release" }.into(),
                dbms: connector.dbms().into(),
                dbms_version: connector.version()?,
                target: connector.target(),
                host: facts::host_name(),
                cpus: std::thread::available_parallelism()
                    .map(|n| n.get() as u32)
                    .unwrap_or(1),
                config: "{}".into(),
                settings: "{}".into(),
                status: RunStatus::Running,
                warnings,
                ..RunRow::default()
            },
            config,
            ..RunResults::default()
        };
        results.write(&dir)?;
        Ok(ServerHost {
            probe: Arc::new(probe),
            interval: Duration::from_secs_f64(interval_seconds),
            results,
            dir,
            running: None,
            perf,
            profiles: None,
        })
    }

    /// Its run directory.
    pub fn dir(&self) -> &Path {
        &self.dir
    }

    /// Starts sampling `step` from `start_at_us` (Unix µs, the step's
    /// common start; None: now), on the step's interval grid.
    pub fn begin(&mut self, step: &str, start_at_us: Option<i64>) -> Result<()> {
        if let Some((running, ..)) = &self.running {
            return Err(Error::config(
                "step",
                format!("{step} cannot start: {running} is still being sampled"),
            ));
        }
        let at = start_at_us.unwrap_or_else(unix_micros);
        // perf attaches before the step's start, so attaching is not its CPU.
        self.profiles = self
            .perf
            .as_ref()
            .map(|p| profiling::start_with(p, &self.probe.servers));
        let done = Arc::new(AtomicBool::new(false));
        let (probe, interval, flag) = (self.probe.clone(), self.interval, done.clone());
        let thread = std::thread::spawn(move || {
            while unix_micros() < at && !flag.load(Ordering::Relaxed) {
                let left = (at - unix_micros()).clamp(0, 20_000) as u64;
                SystemClock.sleep(Duration::from_micros(left));
            }
            let late = Duration::from_micros((unix_micros() - at).max(0) as u64);
            let t0 = SystemClock.now().checked_sub(late).unwrap_or_else(|| SystemClock.now());
            let mut sampler = HostSampler::start(&probe.servers, &probe.disks, interval);
            while !flag.load(Ordering::Relaxed) {
                SystemClock.sleep(sampler.tick(t0, Duration::from_millis(20)));
            }
            let elapsed = SystemClock.now().saturating_duration_since(t0).as_secs_f64();
            let (system, rows, threads, roles) = sampler.finish();
            // The agent's own threads are not the client's: keep the server's.
            let threads: Vec<_> = threads.into_iter().filter(|t| t.side == Side::Server).collect();
            (system, rows, threads, roles, elapsed)
        });
        self.running = Some((step.to_string(), at, done, thread));
        Ok(())
    }

    /// Stops sampling the step begun last and writes it.
    pub fn end(&mut self) -> Result<()> {
        let Some((step, at, done, thread)) = self.running.take() else {
            return Err(Error::config("step", "no step is being sampled"));
        };
        if let Some(profiles) = self.profiles.as_mut() {
            profiles.end_sampling();
        }
        done.store(true, Ordering::Relaxed);
        let (system, rows, threads, roles, elapsed_s) = thread
            .join()
            .map_err(|_| Error::database("ibench", "the server host's sampling thread panicked"))?;
        if let Some(profiles) = self.profiles.take() {
            let (profiles, notes) = profiles.finish(&step, &roles);
            self.results.profiles.extend(profiles);
            let warnings = &mut self.results.run.warnings;
            warnings.extend(notes.into_iter().map(|n| format!("{step}: {n}")));
        }
        let (fg_cpu_s, bg_cpu_s) = super::record::database_split(&threads, false);
        self.results.steps.push(StepRow {
            run_id: self.results.run.run_id.clone(),
            step: step.clone(),
            status: StepStatus::Ok,
            started_at_us: at,
            elapsed_s,
            system,
            fg_cpu_s,
            bg_cpu_s,
            ..StepRow::default()
        });
        self.results
            .host_intervals
            .extend(rows.into_iter().map(|h| (step.clone(), h)));
        self.results
            .threads
            .extend(threads.into_iter().map(|t| (step.clone(), t)));
        self.results.write(&self.dir)
    }

    /// Ends the sampling (a step still sampled is written) and marks it done.
    pub fn finish(mut self) -> Result<PathBuf> {
        if self.running.is_some() {
            self.end()?;
        }
        self.results.run.status = RunStatus::Ok;
        self.results.write(&self.dir)?;
        Ok(self.dir)
    }
}
