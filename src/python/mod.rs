//! pyo3 glue only: argument conversion, GIL release, error mapping. The
//! native module is `ibench._native`; the package `python/ibench` re-exports it.

mod convert;
mod errors;
mod gen;
mod run;
mod shard;

use pyo3::prelude::*;

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
    m.add_function(wrap_pyfunction!(cli_main, m)?)?;
    errors::register(m)?;
    gen::register(m)?;
    run::register(m)?;
    shard::register(m)?;
    Ok(())
}
