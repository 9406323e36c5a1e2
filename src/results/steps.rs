//! `steps.parquet`: one row per step, with the rates, verdicts, costs,
//! latency percentiles and engine statistics derived from what it measured.

use super::columns::{col, Cell, Column, Kind};
use crate::metrics::{per_operation, EngineDelta, Op, SystemDelta, COST_COLUMNS};

/// Percentiles reported per operation and time kind, with their column suffixes.
pub const PERCENTILES: [(f64, &str); 5] = [
    (50.0, "p50"),
    (90.0, "p90"),
    (99.0, "p99"),
    (99.9, "p999"),
    (100.0, "max"),
];

/// Operations that get percentile columns in `steps`.
pub const STEP_OPS: [Op; 5] = [Op::Insert, Op::Delete, Op::Query, Op::Event, Op::Statement];

/// Operations that can be paced, with schedule-lag columns in `steps`.
pub const PACED_OPS: [Op; 3] = [Op::Insert, Op::Delete, Op::Event];

/// The schedule-lag statistics, with their column suffixes.
pub const LAG_STATS: [(f64, &str); 3] = [(50.0, "p50"), (99.0, "p99"), (100.0, "max")];

/// One operation's latency percentiles over a step.
#[derive(Clone, Debug, PartialEq)]
pub struct OpLatency {
    /// The operation.
    pub op: Op,
    /// Response-time percentiles ([`PERCENTILES`] order), µs.
    pub response: [f64; 5],
    /// Service-time percentiles ([`PERCENTILES`] order), µs.
    pub service: [f64; 5],
}

/// A paced operation's schedule lag over a step.
#[derive(Clone, Debug, PartialEq)]
pub struct OpLag {
    /// The operation.
    pub op: Op,
    /// Lag statistics ([`LAG_STATS`] order), µs.
    pub lag: [f64; 3],
}

/// One step's summary.
#[derive(Clone, Debug, Default)]
pub struct StepRow {
    /// The run.
    pub run_id: String,
    /// The step's name (`l.i0`, `qr100`, ...).
    pub step: String,
    /// How the step ended.
    pub status: super::StepStatus,
    /// The error that ended the step.
    pub error: Option<String>,
    /// Wall-clock start, µs since the Unix epoch.
    pub started_at_us: i64,
    /// Seconds from the start barrier to the last thread's end.
    pub elapsed_s: f64,
    /// Clients.
    pub clients: u32,
    /// Rows per insert/delete commit (load and q steps).
    pub rows_per_commit: Option<u32>,
    /// Rows inserted.
    pub inserts: u64,
    /// Rows deleted.
    pub deletes: u64,
    /// Queries run; in a sysbench step, its statements (BEGIN and COMMIT
    /// included, as sysbench's `queries:` counts them).
    pub queries: u64,
    /// sysbench steps: events (sysbench's transactions) run.
    pub events: Option<u64>,
    /// sysbench steps: rows the statements returned or changed.
    pub statement_rows: Option<u64>,
    /// Rows indexed (l.x only).
    pub indexed_rows: Option<u64>,
    /// Target background insert rate of a q step (clients × rate).
    pub target_ips: Option<f64>,
    /// A q step's SLA: achieved insert rate ≥ 95% of the target; false for
    /// a q step that did not run its course (timeout, error).
    pub sla_ok: Option<bool>,
    /// Verify's verdict after a write step (None when not checked).
    pub verified: Option<bool>,
    /// What verify found wrong.
    pub verify_error: Option<String>,
    /// Which verification ran after the step ("quick", "full"); None: none.
    pub verify: Option<String>,
    /// Seconds verify took (never part of `elapsed_s`).
    pub verify_s: Option<f64>,
    /// Operations that failed (a thread stops at its first failure).
    pub errors: u64,
    /// Operations run again after a deadlock or serialization failure.
    pub retries: u64,
    /// Database size before the step.
    pub db_size_before_bytes: Option<u64>,
    /// What the per-operation costs divide by: inserts in load steps, queries
    /// in q steps, indexed rows in l.x (None: no per-operation costs).
    pub cost_ops: Option<u64>,
    /// Host and process counters over the step.
    pub system: SystemDelta,
    /// Database size after the step.
    pub db_size_bytes: Option<u64>,
    /// The benchmark's tables' size after the step.
    pub tables_size_bytes: Option<u64>,
    /// The server's whole data directory after the step.
    pub datadir_size_bytes: Option<u64>,
    /// Rows in the tables' windows after the step (all tables).
    pub live_rows: u64,
    /// The largest window each table had during the step, summed over tables.
    pub live_rows_max: u64,
    /// Per op: response and service percentiles.
    pub latencies: Vec<OpLatency>,
    /// Per paced op: schedule-lag statistics.
    pub lags: Vec<OpLag>,
    /// Key/value reads that found their key (read steps).
    pub found: Option<u64>,
    /// What the storage engine did (RocksDB).
    pub engine: Option<EngineDelta>,
    /// The database's CPU seconds in threads serving the clients, and in
    /// threads working behind them (`metrics::threads`): a local server's
    /// processes, else (an embedded engine) ibench's workers and the
    /// engine's own pools. None when no thread was measured.
    pub fg_cpu_s: Option<f64>,
    pub bg_cpu_s: Option<f64>,
}

impl StepRow {
    fn rate(&self, n: u64) -> f64 {
        if self.elapsed_s > 0.0 {
            n as f64 / self.elapsed_s
        } else {
            0.0
        }
    }
    /// Inserted rows per second.
    pub fn ips(&self) -> f64 {
        self.rate(self.inserts)
    }
    /// Deleted rows per second.
    pub fn dps(&self) -> f64 {
        self.rate(self.deletes)
    }
    /// Queries per second (a sysbench step's statements per second: its QPS).
    pub fn qps(&self) -> f64 {
        self.rate(self.queries)
    }
    /// sysbench events per second.
    pub fn eps(&self) -> Option<f64> {
        self.events.map(|n| self.rate(n))
    }
    /// True when the step ran its course.
    pub fn ok(&self) -> bool {
        self.status == super::StepStatus::Ok
    }

    /// The values of [`COST_COLUMNS`] (see [`per_operation`]).
    pub fn costs(&self) -> [Option<f64>; 10] {
        per_operation(&self.system, self.cost_ops, self.elapsed_s)
    }

    /// CPU µs per operation of `seconds` (None: no operations counted).
    fn per_op_us(&self, seconds: Option<f64>) -> Option<f64> {
        let ops = self.cost_ops.filter(|&n| n > 0)?;
        Some(seconds? / ops as f64 * 1e6)
    }

    /// Statistic `index` (LAG_STATS order) of `op`'s schedule lag, µs.
    pub fn lag(&self, op: Op, index: usize) -> Option<f64> {
        self.lags.iter().find(|l| l.op == op).map(|l| l.lag[index])
    }

    /// Percentile `index` (PERCENTILES order) of `op`'s response or service time, µs.
    pub fn latency(&self, op: Op, service: bool, index: usize) -> Option<f64> {
        let l = self.latencies.iter().find(|l| l.op == op)?;
        Some(if service { l.service[index] } else { l.response[index] })
    }
}

/// Storage-engine columns of `steps`: (name, kind, value).
type EngineColumn = (&'static str, Kind, fn(&EngineDelta, &StepRow) -> Cell<'static>);

/// The storage-engine columns (null unless the engine reports counters).
fn engine_columns() -> [EngineColumn; 15] {
    use Cell::{Str, F64, U64};
    [
        ("user_bytes_written", Kind::U64, |e, _| U64(Some(e.user_bytes))),
        ("wal_bytes", Kind::U64, |e, _| U64(Some(e.wal_bytes))),
        ("flush_bytes", Kind::U64, |e, _| U64(Some(e.flush_bytes))),
        ("compaction_read_bytes", Kind::U64, |e, _| {
            U64(Some(e.compaction_read_bytes))
        }),
        ("compaction_write_bytes", Kind::U64, |e, _| {
            U64(Some(e.compaction_write_bytes))
        }),
        ("w_amp", Kind::F64, |e, _| F64(e.w_amp())),
        ("stall_s", Kind::F64, |e, _| F64(Some(e.stall_s))),
        ("stall_pct", Kind::F64, |e, s| F64(e.stall_pct(s.elapsed_s))),
        ("compaction_s", Kind::F64, |e, _| F64(Some(e.compaction_s))),
        ("compaction_cpu_s", Kind::F64, |e, _| F64(Some(e.compaction_cpu_s))),
        ("live_sst_bytes", Kind::U64, |e, _| U64(Some(e.live_sst_bytes))),
        ("total_sst_bytes", Kind::U64, |e, _| U64(Some(e.total_sst_bytes))),
        ("largest_run_bytes", Kind::U64, |e, _| U64(Some(e.largest_run_bytes))),
        ("sorted_runs", Kind::U64, |e, _| U64(Some(e.sorted_runs))),
        ("files_per_level", Kind::Str, |e, _| {
            Str(Some(e.files_per_level_text().into()))
        }),
    ]
}

fn null_of(kind: Kind) -> Cell<'static> {
    match kind {
        Kind::U32 => Cell::U32(None),
        Kind::U64 => Cell::U64(None),
        Kind::F64 => Cell::F64(None),
        Kind::Bool => Cell::Bool(None),
        Kind::Str => Cell::Str(None),
        Kind::Time => Cell::Time(None),
        Kind::Bin => Cell::Bin(None),
    }
}

/// The columns of `steps.parquet`, in their order: the step's outcome,
/// its costs, its latencies, the engine's counters, its sizes and verdicts,
/// its schedule lags, and the counters the costs divide.
pub(crate) fn columns() -> Vec<Column<StepRow>> {
    let mut c = outcome_columns();
    for (i, name) in COST_COLUMNS.iter().enumerate() {
        c.push(col!(*name, f64?, |s: &StepRow| s.costs()[i]));
    }
    c.extend([
        col!("fg_cpu_us_per_op", f64?, |s: &StepRow| s.per_op_us(s.fg_cpu_s)),
        col!("bg_cpu_us_per_op", f64?, |s: &StepRow| s.per_op_us(s.bg_cpu_s)),
    ]);
    for op in STEP_OPS {
        for (t, time) in ["resp", "svc"].into_iter().enumerate() {
            for (i, (_, p)) in PERCENTILES.iter().enumerate() {
                let name = format!("{}_{time}_{p}_us", op.name());
                c.push(col!(name, f64?, |s: &StepRow| s.latency(op, t == 1, i)));
            }
        }
    }
    c.push(col!("found", u64?, |s: &StepRow| s.found));
    for (name, kind, get) in engine_columns() {
        c.push(Column::new(name, kind, true, move |s: &StepRow| match &s.engine {
            Some(e) => get(e, s),
            None => null_of(kind),
        }));
    }
    c.extend([
        col!("tables_size_bytes", u64?, |s: &StepRow| s.tables_size_bytes),
        col!("datadir_size_bytes", u64?, |s: &StepRow| s.datadir_size_bytes),
        col!("live_rows_max", u64, |s: &StepRow| s.live_rows_max),
        col!("verify", str?, |s: &StepRow| s.verify.as_deref()),
        col!("verify_s", f64?, |s: &StepRow| s.verify_s),
        col!("events", u64?, |s: &StepRow| s.events),
        col!("eps", f64?, |s: &StepRow| s.eps()),
        col!("statement_rows", u64?, |s: &StepRow| s.statement_rows),
    ]);
    for op in PACED_OPS {
        for (i, (_, stat)) in LAG_STATS.iter().enumerate() {
            let name = format!("{}_lag_{stat}_us", op.name());
            c.push(col!(name, f64?, |s: &StepRow| s.lag(op, i)));
        }
    }
    c.extend(cost_base_columns());
    c
}

/// The step's outcome: status, time, counts, rates, verdicts, sizes.
fn outcome_columns() -> Vec<Column<StepRow>> {
    vec![
        col!("run_id", str, |s: &StepRow| s.run_id.as_str()),
        col!("step", str, |s: &StepRow| s.step.as_str()),
        col!("status", str, |s: &StepRow| s.status.as_str()),
        col!("error", str?, |s: &StepRow| s.error.as_deref()),
        col!("started_at", time, |s: &StepRow| s.started_at_us),
        col!("elapsed_s", f64, |s: &StepRow| s.elapsed_s),
        col!("clients", u32, |s: &StepRow| s.clients),
        col!("rows_per_commit", u32?, |s: &StepRow| s.rows_per_commit),
        col!("inserts", u64, |s: &StepRow| s.inserts),
        col!("deletes", u64, |s: &StepRow| s.deletes),
        col!("queries", u64, |s: &StepRow| s.queries),
        col!("ips", f64, |s: &StepRow| s.ips()),
        col!("dps", f64, |s: &StepRow| s.dps()),
        col!("qps", f64, |s: &StepRow| s.qps()),
        col!("indexed_rows_per_s", f64?, |s: &StepRow| s
            .indexed_rows
            .map(|n| s.rate(n))),
        col!("target_ips", f64?, |s: &StepRow| s.target_ips),
        col!("sla_ok", bool?, |s: &StepRow| s.sla_ok),
        col!("verified", bool?, |s: &StepRow| s.verified),
        col!("verify_error", str?, |s: &StepRow| s.verify_error.as_deref()),
        col!("errors", u64, |s: &StepRow| s.errors),
        col!("db_size_bytes", u64?, |s: &StepRow| s.db_size_bytes),
        col!("live_rows", u64, |s: &StepRow| s.live_rows),
        col!("retries", u64, |s: &StepRow| s.retries),
        col!("db_size_before_bytes", u64?, |s: &StepRow| s.db_size_before_bytes),
        col!("server_max_rss_bytes", u64?, |s: &StepRow| s.system.server_rss),
    ]
}

/// The counters the per-operation costs divide, so costs can be summed
/// (over shards, steps or runs) and divided again.
fn cost_base_columns() -> Vec<Column<StepRow>> {
    vec![
        col!("cost_ops", u64?, |s: &StepRow| s.cost_ops),
        col!("host_cpu_s", f64?, |s: &StepRow| s.system.host_busy_s),
        col!("client_cpu_s", f64?, |s: &StepRow| s.system.client_cpu_s),
        col!("client_sys_s", f64?, |s: &StepRow| s.system.client_sys_s),
        col!("server_cpu_s", f64?, |s: &StepRow| s.system.server_cpu_s),
        col!("fg_cpu_s", f64?, |s: &StepRow| s.fg_cpu_s),
        col!("bg_cpu_s", f64?, |s: &StepRow| s.bg_cpu_s),
        col!("context_switches", u64?, |s: &StepRow| s.system.ctxt),
        col!("disk_reads", u64?, |s: &StepRow| s.system.disk.map(|d| d.reads)),
        col!("disk_writes", u64?, |s: &StepRow| s.system.disk.map(|d| d.writes)),
        col!("disk_read_bytes", u64?, |s: &StepRow| s
            .system
            .disk
            .map(|d| d.read_bytes)),
        col!("disk_write_bytes", u64?, |s: &StepRow| s
            .system
            .disk
            .map(|d| d.written_bytes)),
    ]
}
