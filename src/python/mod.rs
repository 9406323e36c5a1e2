//! pyo3 glue only: argument conversion, GIL release, error mapping. The
//! native module is `ibench._native`; the package `python/ibench` re-exports it.

mod convert;
mod errors;
mod gen;
mod profile;
mod run;
mod shard;

use pyo3::prelude::*;

/// What a sysbench step is, for the report's tables: None for a step of
/// another family; else its kind (`load`, `create-index`, `postwrite`,
/// `microbenchmark`) and, for a microbenchmark, its name without variant
/// or range, report group, variant (`""`, `pre`, `warm`, `warmpre`), range,
/// statements per event and whether its events are transactions.
#[pyfunction]
fn sysbench_step(py: Python<'_>, name: &str) -> PyResult<Option<Py<pyo3::types::PyDict>>> {
    use crate::workload::sysbench::{SbStep, SbVariant};
    let Some(Ok(step)) = crate::workload::sysbench::parse(name) else {
        return Ok(None);
    };
    let d = pyo3::types::PyDict::new(py);
    match step {
        SbStep::Load => d.set_item("kind", "load")?,
        SbStep::CreateIndex => d.set_item("kind", "create-index")?,
        SbStep::Postwrite(_) => d.set_item("kind", "postwrite")?,
        SbStep::Run(m) => {
            let event = m.test.event(m.range);
            d.set_item("kind", "microbenchmark")?;
            d.set_item("test", m.test.name())?;
            d.set_item("group", m.test.group().name())?;
            let variant = match m.variant {
                SbVariant::Plain => "",
                SbVariant::Pre => "pre",
                SbVariant::Warm => "warm",
                SbVariant::WarmPre => "warmpre",
            };
            d.set_item("variant", variant)?;
            d.set_item("range", m.range)?;
            d.set_item("statements_per_event", event.statements())?;
            d.set_item("trx", event.trx)?;
        }
    }
    Ok(Some(d.unbind()))
}

/// Runs the `ibench` command line with `argv` (program name first); returns the exit code.
#[pyfunction]
fn cli_main(py: Python<'_>, argv: Vec<String>) -> i32 {
    py.detach(|| crate::cli::main(argv))
}

#[pymodule]
fn _native(m: &Bound<'_, PyModule>) -> PyResult<()> {
    m.add("__version__", env!("CARGO_PKG_VERSION"))?;
    m.add(
        "build_profile",
        if cfg!(debug_assertions) { "debug" } else { "release" },
    )?;
    m.add("COST_COLUMNS", crate::metrics::COST_COLUMNS.to_vec())?;
    // The steps table's percentile and lag columns: (quantile, suffix).
    m.add("PERCENTILES", crate::results::PERCENTILES.to_vec())?;
    m.add("LAG_STATS", crate::results::LAG_STATS.to_vec())?;
    // Every run parameter: (name, documentation), as `ibench.parameters()` lists them.
    let params: Vec<(&str, String)> = crate::workload::PARAMETERS
        .iter()
        .map(|p| (p.name, p.doc.lines().map(str::trim).collect::<Vec<_>>().join(" ")))
        .collect();
    m.add("PARAMETERS", params)?;
    // The key/value steps by what their rate counts: pairs written (ips),
    // read (qps) or deleted (dps); flush and waitforcompaction have none.
    use crate::workload::KvOp;
    let kv_steps = |f: fn(KvOp) -> bool| -> Vec<&'static str> {
        KvOp::ALL.iter().filter(|op| f(**op)).map(|op| op.name()).collect()
    };
    m.add("KV_STEPS", kv_steps(|_| true))?;
    m.add(
        "KV_WRITE_STEPS",
        kv_steps(|op| op.writes() && !op.reads() && !op.deletes()),
    )?;
    m.add("KV_READ_STEPS", kv_steps(KvOp::reads))?;
    m.add("KV_DELETE_STEPS", kv_steps(KvOp::deletes))?;
    // The sysbench suite's steps in order: the current form and the long one.
    m.add("SB_SUITE", crate::workload::sysbench::SUITE.to_vec())?;
    m.add("SB_LONG_SUITE", crate::workload::sysbench::LONG_SUITE.to_vec())?;
    m.add_function(wrap_pyfunction!(sysbench_step, m)?)?;
    m.add_function(wrap_pyfunction!(cli_main, m)?)?;
    errors::register(m)?;
    gen::register(m)?;
    profile::register(m)?;
    run::register(m)?;
    shard::register(m)?;
    Ok(())
}
