//! A run one step at a time, and the server host's sampler: what a shard's
//! coordinator (`ibench.distributed`, on Dask) drives on its workers. Each
//! call releases the GIL; `stop()` may be called from another thread while a
//! step runs.

use crate::exec::{Runner, ServerHost, Silent};
use crate::stop::Stop;
use pyo3::prelude::*;
use std::path::PathBuf;
use std::sync::{Arc, Mutex};

/// What a finished (or failed) piece of work reports: status and error.
type Status = (String, Option<String>);

/// The lock, whatever a panic left behind (the state is written after every step).
fn lock<T>(m: &Mutex<T>) -> std::sync::MutexGuard<'_, T> {
    m.lock().unwrap_or_else(|p| p.into_inner())
}

/// A run whose steps are started one by one, each at a given instant.
#[pyclass(module = "ibench._native")]
struct RunHandle {
    runner: Mutex<Option<Runner>>,
    /// The error that ended the run early, kept for `finish`.
    failed: Mutex<Option<crate::Error>>,
    stop: Arc<Stop>,
    dir: String,
    steps: Vec<String>,
}

#[pymethods]
impl RunHandle {
    /// Checks the configuration resolved from `layers` (and `config_file`),
    /// opens the database and creates the run directory under `out`.
    #[new]
    #[pyo3(signature = (layers, out, config_file=None))]
    fn new(py: Python<'_>, layers: &str, out: PathBuf, config_file: Option<PathBuf>) -> PyResult<Self> {
        let config = super::run::resolve(layers, config_file.as_deref())?;
        let runner = py.detach(|| Runner::open(&config, &out, &Silent))?;
        Ok(RunHandle {
            dir: runner.dir().display().to_string(),
            steps: runner.steps().iter().map(|s| s.to_string()).collect(),
            runner: Mutex::new(Some(runner)),
            failed: Mutex::new(None),
            stop: Arc::new(Stop::new()),
        })
    }

    /// The run directory.
    #[getter]
    fn dir(&self) -> String {
        self.dir.clone()
    }

    /// The steps, in order.
    #[getter]
    fn steps(&self) -> Vec<String> {
        self.steps.clone()
    }

    /// Runs step `ordinal` (the next one) from `start_at_us` (Unix µs);
    /// returns the step's status and error. A step that did not end `ok`
    /// (or `timeout`) ends the run: `finish` records why.
    #[pyo3(signature = (ordinal, start_at_us=None))]
    fn step(&self, py: Python<'_>, ordinal: usize, start_at_us: Option<i64>) -> PyResult<Status> {
        let stop = self.stop.clone();
        py.detach(|| {
            let mut guard = lock(&self.runner);
            let Some(runner) = guard.as_mut() else {
                return Err(crate::Error::config("step", "the run is finished"));
            };
            if let Some(e) = lock(&self.failed).as_ref() {
                return Ok(("error".into(), Some(format!("an earlier step ended the run: {e}"))));
            }
            let done = runner.results().steps.len();
            let outcome = runner.step(ordinal, start_at_us, &Silent, &stop);
            let row = runner
                .results()
                .steps
                .get(done)
                .map(|s| (s.status.to_string(), s.error.clone()));
            Ok(match outcome {
                Ok(()) => row.unwrap_or_else(|| ("ok".into(), None)),
                Err(e) => {
                    let status = row.unwrap_or_else(|| {
                        let status = if matches!(e, crate::Error::Interrupted) {
                            "interrupted"
                        } else {
                            "error"
                        };
                        (status.into(), Some(e.to_string()))
                    });
                    *lock(&self.failed) = Some(e);
                    status
                }
            })
        })
        .map_err(Into::into)
    }

    /// Stops the step that runs (between operations, statements cancelled).
    fn stop(&self) {
        self.stop.request();
    }

    /// Ends the run (the final count when every step went well) and writes
    /// its status; returns the run's status and error.
    fn finish(&self, py: Python<'_>) -> PyResult<Status> {
        let stop = self.stop.clone();
        py.detach(|| {
            let runner = lock(&self.runner)
                .take()
                .ok_or_else(|| crate::Error::config("finish", "the run is finished"))?;
            let outcome = lock(&self.failed).take().map_or(Ok(()), Err);
            let out = runner.finish(outcome, &stop)?;
            Ok::<_, crate::Error>((out.results.run.status.to_string(), out.results.run.error))
        })
        .map_err(Into::into)
    }
}

/// Samples the server's processes and data disks on the server's host, a
/// step at a time, into a run directory of its own (`server-<id>`).
#[pyclass(module = "ibench._native")]
struct ServerProbe {
    host: Mutex<Option<ServerHost>>,
    dir: String,
}

#[pymethods]
impl ServerProbe {
    /// Opens `dsn` as this host sees the server; an error when it does not
    /// run here.
    #[new]
    /// With `profile_frequency`, each step profiles the server's processes
    /// with perf at that many samples per CPU second.
    #[pyo3(signature = (dsn, out, interval_seconds=1.0, password_file=None, profile_frequency=None))]
    fn new(
        py: Python<'_>,
        dsn: &str,
        out: PathBuf,
        interval_seconds: f64,
        password_file: Option<PathBuf>,
        profile_frequency: Option<u32>,
    ) -> PyResult<Self> {
        let host = py.detach(|| {
            let password = password_file
                .as_deref()
                .map(crate::connect::read_password_file)
                .transpose()?;
            ServerHost::open(dsn, password.as_deref(), &out, interval_seconds, profile_frequency)
        })?;
        Ok(ServerProbe {
            dir: host.dir().display().to_string(),
            host: Mutex::new(Some(host)),
        })
    }

    /// Its run directory.
    #[getter]
    fn dir(&self) -> String {
        self.dir.clone()
    }

    /// Starts sampling `step` from `start_at_us` (Unix µs).
    #[pyo3(signature = (step, start_at_us=None))]
    fn begin(&self, step: &str, start_at_us: Option<i64>) -> PyResult<()> {
        let mut guard = lock(&self.host);
        let host = guard
            .as_mut()
            .ok_or_else(|| crate::Error::config("begin", "the probe is finished"))?;
        Ok(host.begin(step, start_at_us)?)
    }

    /// Stops sampling the step and writes it.
    fn end(&self, py: Python<'_>) -> PyResult<()> {
        py.detach(|| match lock(&self.host).as_mut() {
            Some(host) => host.end(),
            None => Err(crate::Error::config("end", "the probe is finished")),
        })
        .map_err(Into::into)
    }

    /// Ends sampling; returns its run directory.
    fn finish(&self, py: Python<'_>) -> PyResult<String> {
        py.detach(|| {
            let host = lock(&self.host)
                .take()
                .ok_or_else(|| crate::Error::config("finish", "the probe is finished"))?;
            Ok::<_, crate::Error>(host.finish()?.display().to_string())
        })
        .map_err(Into::into)
    }
}

/// The per-operation costs ([`crate::metrics::COST_COLUMNS`]) of counters
/// summed over shards: host, client and server CPU seconds, context
/// switches, disk reads, writes, bytes read and written, divided by `ops`
/// (rates over `elapsed_s`).
#[pyfunction]
#[pyo3(signature = (host_cpu_s, client_cpu_s, server_cpu_s, context_switches, disk, ops, elapsed_s))]
#[allow(clippy::too_many_arguments)]
fn step_costs(
    host_cpu_s: Option<f64>,
    client_cpu_s: Option<f64>,
    server_cpu_s: Option<f64>,
    context_switches: Option<u64>,
    disk: Option<(u64, u64, u64, u64)>,
    ops: Option<u64>,
    elapsed_s: f64,
) -> Vec<Option<f64>> {
    let d = crate::metrics::SystemDelta {
        seconds: elapsed_s,
        host_busy_s: host_cpu_s,
        client_cpu_s,
        server_cpu_s,
        ctxt: context_switches,
        disk: disk.map(
            |(reads, writes, read_bytes, written_bytes)| crate::metrics::DiskCounters {
                reads,
                writes,
                read_bytes,
                written_bytes,
            },
        ),
        ..Default::default()
    };
    crate::metrics::per_operation(&d, ops, elapsed_s).to_vec()
}

pub(super) fn register(m: &Bound<'_, PyModule>) -> PyResult<()> {
    m.add_class::<RunHandle>()?;
    m.add_class::<ServerProbe>()?;
    m.add_function(wrap_pyfunction!(step_costs, m)?)?;
    Ok(())
}
