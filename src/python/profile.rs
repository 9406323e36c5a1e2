//! Flame graphs of folded stacks (`ibench.profile`'s drawing, from
//! `crate::profile`), and whether perf can sample here. Each call releases
//! the GIL.

use pyo3::prelude::*;

/// Folded stacks as `(stack, samples)` pairs, as the profile table stores them.
type Stacks = Vec<(String, u64)>;

/// An interactive SVG flame graph of `stacks`, titled `title`.
#[pyfunction]
#[pyo3(signature = (stacks, title=String::new()))]
fn flamegraph(py: Python<'_>, stacks: Stacks, title: String) -> PyResult<String> {
    Ok(py.detach(|| crate::profile::flamegraph(&stacks, &title))?)
}

/// A differential flame graph: `after`'s shape, coloured by the change from
/// `before` (red: more samples, blue: fewer); `normalize` scales `before` to
/// `after`'s total first.
#[pyfunction]
#[pyo3(signature = (before, after, title=String::new(), normalize=false))]
fn flamegraph_diff(py: Python<'_>, before: Stacks, after: Stacks, title: String, normalize: bool) -> PyResult<String> {
    Ok(py.detach(|| crate::profile::differential(&before, &after, &title, normalize))?)
}

/// None when perf can sample here; otherwise why not, in a sentence that
/// says what to do.
#[pyfunction]
fn perf_unavailable(py: Python<'_>) -> Option<String> {
    py.detach(|| crate::profile::Profiler::check().err().map(|e| e.to_string()))
}

pub(super) fn register(m: &Bound<'_, PyModule>) -> PyResult<()> {
    m.add_function(wrap_pyfunction!(flamegraph, m)?)?;
    m.add_function(wrap_pyfunction!(flamegraph_diff, m)?)?;
    m.add_function(wrap_pyfunction!(perf_unavailable, m)?)?;
    Ok(())
}
