//! `disks.parquet`: what each disk holding the data did, as iostat shows
//! it, per interval and over each whole step.

use super::columns::{col, Column};
use crate::metrics::DeviceDelta;

/// One disk over one interval (`t_s` Some) or a whole step (None).
pub(crate) struct DiskLine<'a> {
    pub run_id: &'a str,
    pub step: &'a str,
    pub t_s: Option<f64>,
    pub disk: &'a DeviceDelta,
}

/// The columns of `disks.parquet`.
pub(crate) fn columns<'a>() -> Vec<Column<DiskLine<'a>>> {
    type L<'b> = DiskLine<'b>;
    vec![
        col!("run_id", str, |l: &L| l.run_id),
        col!("step", str, |l: &L| l.step),
        col!("device", str, |l: &L| l.disk.name()),
        col!("t_s", f64?, |l: &L| l.t_s),
        col!("length_s", f64, |l: &L| l.disk.seconds),
        col!("reads_per_s", f64?, |l: &L| l.disk.reads_per_s()),
        col!("writes_per_s", f64?, |l: &L| l.disk.writes_per_s()),
        col!("read_kb_s", f64?, |l: &L| l.disk.read_kb_s()),
        col!("write_kb_s", f64?, |l: &L| l.disk.write_kb_s()),
        col!("r_await_ms", f64?, |l: &L| l.disk.r_await_ms()),
        col!("w_await_ms", f64?, |l: &L| l.disk.w_await_ms()),
        col!("await_ms", f64?, |l: &L| l.disk.await_ms()),
        col!("util_pct", f64?, |l: &L| l.disk.util_pct()),
    ]
}
