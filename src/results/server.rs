//! `counters.parquet` (the database's own counters over each step),
//! `gauges.parquet` (its gauges on each step's interval grid) and
//! `waits.parquet` (what its sessions waited on in each step, `profile`).

use super::columns::{col, Column};
use crate::metrics::{CounterRow, GaugeRow, WaitRow};

/// A row of one of the two tables, with its run id.
pub(crate) struct Line<'a, T>(pub &'a str, pub &'a T);

/// The columns of `counters.parquet`.
pub(crate) fn counter_columns<'a>() -> Vec<Column<Line<'a, CounterRow>>> {
    type L<'b> = Line<'b, CounterRow>;
    vec![
        col!("run_id", str, |l: &L| l.0),
        col!("step", str, |l: &L| l.1.step.as_str()),
        col!("source", str, |l: &L| l.1.source),
        col!("name", str, |l: &L| l.1.name.as_str()),
        col!("start", f64?, |l: &L| l.1.start),
        col!("end", f64?, |l: &L| l.1.end),
        col!("delta", f64?, |l: &L| l.1.delta()),
        col!("text", str?, |l: &L| l.1.text.as_deref()),
    ]
}

/// The columns of `gauges.parquet`.
pub(crate) fn gauge_columns<'a>() -> Vec<Column<Line<'a, (String, GaugeRow)>>> {
    type L<'b> = Line<'b, (String, GaugeRow)>;
    vec![
        col!("run_id", str, |l: &L| l.0),
        col!("step", str, |l: &L| l.1 .0.as_str()),
        col!("t_s", f64, |l: &L| l.1 .1.t_s),
        col!("length_s", f64, |l: &L| l.1 .1.length_s),
        col!("source", str, |l: &L| l.1 .1.source),
        col!("name", str, |l: &L| l.1 .1.name.as_str()),
        col!("value", f64?, |l: &L| l.1 .1.value),
    ]
}

/// A row of `waits.parquet`: a wait event of a step, with its run id and the
/// operations its per-operation figures divide by (the step's `cost_ops`).
pub(crate) struct WaitLine<'a> {
    pub run_id: &'a str,
    pub row: &'a WaitRow,
    pub ops: Option<u64>,
}

/// The columns of `waits.parquet`.
pub(crate) fn wait_columns<'a>() -> Vec<Column<WaitLine<'a>>> {
    type L<'b> = WaitLine<'b>;
    vec![
        col!("run_id", str, |l: &L| l.run_id),
        col!("step", str, |l: &L| l.row.step.as_str()),
        col!("source", str, |l: &L| l.row.source),
        col!("event", str, |l: &L| l.row.event.as_str()),
        col!("samples", u64?, |l: &L| l.row.samples),
        col!("wait_s", f64, |l: &L| l.row.wait_s),
        col!("count", u64?, |l: &L| l.row.count),
        col!("ops", u64?, |l: &L| l.ops),
    ]
}
