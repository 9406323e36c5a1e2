//! `histograms.parquet`: the HdrHistograms of every step and operation, over
//! the whole step and (response time, all clients) per interval.

use super::columns::{col, Column};
use crate::metrics::Op;

/// One serialized histogram: all clients of a step, per op and time kind,
/// over the whole step or one interval.
#[derive(Clone, Debug)]
pub struct HistogramRow {
    /// The run.
    pub run_id: String,
    /// The step.
    pub step: String,
    /// The operation.
    pub op: Op,
    /// "response", "service" or "lag".
    pub time: &'static str,
    /// Operations recorded.
    pub count: u64,
    /// HdrHistogram V2 (deflate) of nanoseconds.
    pub histogram: Vec<u8>,
    /// The interval's start (seconds after the step's), None for the whole step.
    pub t_s: Option<f64>,
}

/// The columns of `histograms.parquet`.
pub(crate) fn columns() -> Vec<Column<HistogramRow>> {
    vec![
        col!("run_id", str, |h: &HistogramRow| h.run_id.as_str()),
        col!("step", str, |h: &HistogramRow| h.step.as_str()),
        col!("op", str, |h: &HistogramRow| h.op.name()),
        col!("time", str, |h: &HistogramRow| h.time),
        col!("unit", str, |_h: &HistogramRow| "ns"),
        col!("count", u64, |h: &HistogramRow| h.count),
        col!("histogram", bin, |h: &HistogramRow| h.histogram.as_slice()),
        col!("t_s", f64?, |h: &HistogramRow| h.t_s),
    ]
}
