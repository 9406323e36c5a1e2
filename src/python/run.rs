//! `ibench.run`: runs a workload without the GIL, reports progress through
//! Python (so it shows in Jupyter), and turns Ctrl-C into a clean stop.

use crate::exec::{self, Observer};
use crate::results::{RunRow, StepRow};
use crate::workload::Config;
use pyo3::prelude::*;
use serde_json::{Map, Value};
use std::path::{Path, PathBuf};
use std::sync::mpsc;
use std::sync::{Arc, Mutex};
use std::time::Duration;

/// Sends progress lines to the Python thread that waits for the run.
struct Lines(Mutex<mpsc::Sender<String>>);

impl Lines {
    fn send(&self, line: String) {
        let _ = self.0.lock().unwrap_or_else(|p| p.into_inner()).send(line);
    }
}

impl Observer for Lines {
    fn run_started(&self, run: &RunRow, dir: &Path) {
        self.send(crate::cli::summary::start_line(run, dir));
        for w in &run.warnings {
            self.send(format!("warning: {w}"));
        }
    }
    fn step_finished(&self, s: &StepRow) {
        self.send(crate::cli::summary::step_line(s));
    }
    fn warning(&self, message: &str) {
        self.send(format!("warning: {message}"));
    }
}

/// The configuration from an optional TOML file overlaid by `layers` (a
/// JSON list of objects, the later overriding the earlier).
pub(super) fn resolve(layers: &str, config_file: Option<&Path>) -> crate::Result<Config> {
    let parsed: Vec<Map<String, Value>> =
        serde_json::from_str(layers).map_err(|e| crate::Error::config("params", e.to_string()))?;
    let mut all = Vec::new();
    if let Some(path) = config_file {
        all.push(Config::layer_from_toml(path)?);
    }
    all.extend(parsed);
    Config::resolve(&all)
}

/// Runs the configuration resolved from `layers` (JSON list of objects, the
/// later overriding the earlier) and an optional TOML file; returns the run
/// directory, its status and its error.
#[pyfunction]
#[pyo3(signature = (layers, out, config_file=None, progress=true))]
fn run(
    py: Python<'_>,
    layers: &str,
    out: PathBuf,
    config_file: Option<PathBuf>,
    progress: bool,
) -> PyResult<(String, String, Option<String>)> {
    let config = resolve(layers, config_file.as_deref())?;
    let stop = Arc::new(crate::stop::Stop::new());
    let (tx, rx) = mpsc::channel();
    let worker = {
        let stop = stop.clone();
        std::thread::spawn(move || exec::run(&config, &out, &Lines(Mutex::new(tx)), &stop))
    };
    let print = |py: Python<'_>, line: String| -> PyResult<()> {
        if progress {
            let sys = py.import("sys")?;
            sys.getattr("stderr")?.call_method1("write", (line + "\n",))?;
        }
        Ok(())
    };
    let rx = Mutex::new(rx);
    let mut interrupted = None;
    loop {
        let line = py.detach(|| {
            rx.lock()
                .unwrap_or_else(|p| p.into_inner())
                .recv_timeout(Duration::from_millis(100))
        });
        match line {
            Ok(l) => print(py, l)?,
            Err(mpsc::RecvTimeoutError::Disconnected) => break,
            Err(mpsc::RecvTimeoutError::Timeout) => {}
        }
        if interrupted.is_none() {
            if let Err(e) = py.check_signals() {
                // Stop between operations; the results so far are written.
                stop.request();
                interrupted = Some(e);
            }
        }
    }
    let outcome = py
        .detach(|| worker.join())
        .map_err(|_| crate::Error::database("ibench", "the run thread panicked"))??;
    if let Some(e) = interrupted {
        return Err(e);
    }
    let run = outcome.results.run;
    Ok((outcome.dir.display().to_string(), run.status.to_string(), run.error))
}

/// The configuration resolved from `layers` and `config_file`, checked,
/// as JSON (a layer that resolves to itself).
#[pyfunction]
#[pyo3(signature = (layers, config_file=None))]
fn resolve_config(layers: &str, config_file: Option<PathBuf>) -> PyResult<String> {
    let config = resolve(layers, config_file.as_deref())?;
    config.check()?;
    Ok(serde_json::to_string(&config).expect("a config serializes"))
}

/// Percentiles `qs` (0..=100) of a serialized histogram (histograms.parquet), in µs.
#[pyfunction]
fn histogram_percentiles(blob: &[u8], qs: Vec<f64>) -> PyResult<Vec<f64>> {
    let h = crate::metrics::deserialize(blob)?;
    Ok(qs.into_iter().map(|q| crate::metrics::percentile_us(&h, q)).collect())
}

/// How many values of a serialized histogram are at most each of
/// `limits_us` (µs), for response-time bucket tables: exact up to the
/// histogram's 3 significant digits (a value within 0.1% of a limit may
/// count on either side).
#[pyfunction]
fn histogram_counts_at_most(blob: &[u8], limits_us: Vec<f64>) -> PyResult<Vec<u64>> {
    let h = crate::metrics::deserialize(blob)?;
    let recorded: Vec<(u64, u64)> = h
        .iter_recorded()
        .map(|v| (h.median_equivalent(v.value_iterated_to()), v.count_at_value()))
        .collect();
    Ok(limits_us
        .into_iter()
        .map(|limit| {
            let limit_ns = limit * 1000.0;
            recorded
                .iter()
                .filter(|(v, _)| *v as f64 <= limit_ns)
                .map(|(_, n)| n)
                .sum()
        })
        .collect())
}

/// Merges serialized histograms into one (e.g. the same step of several runs).
#[pyfunction]
fn merge_histograms(blobs: Vec<Vec<u8>>) -> PyResult<Vec<u8>> {
    let mut merged = crate::metrics::histogram();
    for b in &blobs {
        merged
            .add(crate::metrics::deserialize(b)?)
            .map_err(|e| crate::Error::format("merging histograms", format!("{e:?}")))?;
    }
    Ok(crate::metrics::serialize(&merged))
}

pub(super) fn register(m: &Bound<'_, PyModule>) -> PyResult<()> {
    m.add_function(wrap_pyfunction!(run, m)?)?;
    m.add_function(wrap_pyfunction!(resolve_config, m)?)?;
    m.add_function(wrap_pyfunction!(histogram_percentiles, m)?)?;
    m.add_function(wrap_pyfunction!(merge_histograms, m)?)?;
    m.add_function(wrap_pyfunction!(histogram_counts_at_most, m)?)?;
    Ok(())
}
