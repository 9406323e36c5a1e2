//! Helpers shared by the run tests.
#![allow(dead_code)]

use ibench::exec::{self, RunOutcome, Silent};
use ibench::results::StepRow;
use ibench::workload::Config;
use serde_json::Value;
use std::path::Path;
use std::sync::atomic::AtomicBool;

/// A configuration: the quick preset overlaid by `params` (a JSON object).
pub fn config(params: Value) -> Config {
    Config::resolve(&[params.as_object().expect("an object").clone()]).expect("a valid config")
}

/// Runs `config` with results under `out`.
pub fn run(config: &Config, out: &Path) -> RunOutcome {
    exec::run(config, out, &Silent, &AtomicBool::new(false)).expect("the run starts")
}

/// The step named `name`.
pub fn step<'a>(outcome: &'a RunOutcome, name: &str) -> &'a StepRow {
    outcome
        .results
        .steps
        .iter()
        .find(|s| s.step == name)
        .unwrap_or_else(|| panic!("no step {name}"))
}

/// A percentile column of a step (µs): `op` insert/delete/query, `service` or response, index into PERCENTILES.
pub fn latency(step: &StepRow, op: ibench::metrics::Op, service: bool, index: usize) -> f64 {
    let (_, resp, svc) = step.latencies.iter().find(|(o, _, _)| *o == op).expect("the op ran");
    if service {
        svc[index]
    } else {
        resp[index]
    }
}
