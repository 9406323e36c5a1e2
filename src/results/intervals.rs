//! `intervals.parquet`: the per-interval series. Operation rows (one per
//! client, operation and interval, then one per operation and interval for
//! all clients together, `client` null) and host rows (`op` = `host`).

use super::columns::{col, Column};
use crate::metrics::{HostInterval, IntervalRow, SystemDelta};

/// One row of `intervals.parquet`: an operation's interval or the host's.
pub(crate) struct IntervalLine<'a> {
    pub run_id: &'a str,
    pub step: &'a str,
    pub what: Line<'a>,
}

/// What an interval row is about.
pub(crate) enum Line<'a> {
    /// An operation's interval.
    Op(&'a IntervalRow),
    /// The host and process counters of an interval.
    Host(&'a HostInterval),
}

impl IntervalLine<'_> {
    fn op(&self) -> Option<&IntervalRow> {
        match self.what {
            Line::Op(r) => Some(r),
            Line::Host(_) => None,
        }
    }
    /// A host counter per second of the interval (percentages for CPU).
    fn host(&self, value: impl Fn(&SystemDelta) -> Option<f64>) -> Option<f64> {
        match self.what {
            Line::Host(h) if h.delta.seconds > 0.0 => value(&h.delta).map(|v| v / h.delta.seconds),
            _ => None,
        }
    }
}

/// The columns of `intervals.parquet`.
pub(crate) fn columns<'a>() -> Vec<Column<IntervalLine<'a>>> {
    type L<'b> = IntervalLine<'b>;
    vec![
        col!("run_id", str, |l: &L| l.run_id),
        col!("step", str, |l: &L| l.step),
        col!("client", u32?, |l: &L| l.op().and_then(|r| r.client)),
        col!("t_s", f64, |l: &L| match l.what {
            Line::Op(r) => r.t_s,
            Line::Host(h) => h.t_s,
        }),
        col!("op", str, |l: &L| l.op().map_or("host", |r| r.op.name())),
        col!("count", u64?, |l: &L| l.op().map(|r| r.count)),
        col!("rate", f64?, |l: &L| l.op().map(|r| r.rate())),
        col!("p50_us", f64?, |l: &L| l.op().map(|r| r.p50_us)),
        col!("p99_us", f64?, |l: &L| l.op().map(|r| r.p99_us)),
        col!("max_us", f64?, |l: &L| l.op().map(|r| r.max_us)),
        col!("host_cpu_pct", f64?, |l: &L| l
            .host(|d| d.host_busy_s.map(|v| v * 100.0))),
        col!("client_cpu_pct", f64?, |l: &L| l
            .host(|d| d.client_cpu_s.map(|v| v * 100.0))),
        col!("server_cpu_pct", f64?, |l: &L| l
            .host(|d| d.server_cpu_s.map(|v| v * 100.0))),
        col!("cs_per_s", f64?, |l: &L| l.host(|d| d.ctxt.map(|v| v as f64))),
        col!("reads_per_s", f64?, |l: &L| l.host(|d| d.disk.map(|x| x.reads as f64))),
        col!("writes_per_s", f64?, |l: &L| l
            .host(|d| d.disk.map(|x| x.writes as f64))),
        col!("read_mb_s", f64?, |l: &L| l
            .host(|d| d.disk.map(|x| x.read_bytes as f64 / 1e6))),
        col!("write_mb_s", f64?, |l: &L| l
            .host(|d| d.disk.map(|x| x.written_bytes as f64 / 1e6))),
        col!("server_rss_mb", f64?, |l: &L| match l.what {
            Line::Host(h) => h.delta.server_rss.map(|b| b as f64 / 1e6),
            Line::Op(_) => None,
        }),
        col!("length_s", f64, |l: &L| match l.what {
            Line::Op(r) => r.length_s,
            Line::Host(h) => h.delta.seconds,
        }),
        col!("lag_p50_us", f64?, |l: &L| l.op().map(|r| r.lag_us[0])),
        col!("lag_p99_us", f64?, |l: &L| l.op().map(|r| r.lag_us[1])),
        col!("lag_max_us", f64?, |l: &L| l.op().map(|r| r.lag_us[2])),
    ]
}
