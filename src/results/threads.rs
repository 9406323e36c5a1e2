//! `threads.parquet`: each step's CPU by thread role, server and client
//! apart (`metrics::threads`).

use super::columns::{col, Column};
use crate::metrics::ThreadRow;

/// A row of `threads.parquet`: one role of one step, with its run id and
/// the operations its per-operation figures divide by (the step's `cost_ops`).
pub(crate) struct ThreadLine<'a> {
    pub run_id: &'a str,
    pub step: &'a str,
    pub row: &'a ThreadRow,
    pub ops: Option<u64>,
}

/// The columns of `threads.parquet`.
pub(crate) fn columns<'a>() -> Vec<Column<ThreadLine<'a>>> {
    type L<'b> = ThreadLine<'b>;
    vec![
        col!("run_id", str, |l: &L| l.run_id),
        col!("step", str, |l: &L| l.step),
        col!("side", str, |l: &L| l.row.side.name()),
        col!("kind", str, |l: &L| l.row.kind.name()),
        col!("role", str, |l: &L| l.row.role.as_str()),
        col!("threads", u32, |l: &L| l.row.threads),
        col!("cpu_s", f64, |l: &L| l.row.cpu_s),
        col!("user_s", f64, |l: &L| l.row.user_s),
        col!("sys_s", f64, |l: &L| l.row.sys_s),
        col!("ops", u64?, |l: &L| l.ops),
        col!("cpu_us_per_op", f64?, |l: &L| l.ops.filter(|&n| n > 0).map(|n| l
            .row
            .cpu_s
            / n as f64
            * 1e6)),
    ]
}
