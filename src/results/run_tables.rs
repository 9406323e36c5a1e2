//! The result tables of a run (docs/results.md): `runs`, `steps`,
//! `intervals`, `histograms`. The core fills these structs; Parquet, the CLI
//! summary and Python read them.

use super::ParquetFile;
use crate::error::{Error, Result};
use crate::metrics::{EngineDelta, HostInterval, IntervalRow, Op, Setting, SystemDelta};
use arrow::array::{
    ArrayRef, BinaryBuilder, BooleanBuilder, Float64Array, Float64Builder, RecordBatch, StringArray, StringBuilder,
    TimestampMicrosecondBuilder, UInt32Builder, UInt64Array, UInt64Builder,
};
use arrow::datatypes::{DataType, Field, Schema, SchemaRef, TimeUnit};
use std::path::Path;
use std::sync::Arc;

/// Version of the result tables' layout; bumped on any incompatible change.
pub const SCHEMA_VERSION: u32 = 1;

/// Percentiles reported per operation and time kind, with their column suffixes.
pub const PERCENTILES: [(f64, &str); 5] = [
    (50.0, "p50"),
    (90.0, "p90"),
    (99.0, "p99"),
    (99.9, "p999"),
    (100.0, "max"),
];

/// Per-operation hardware costs in `steps` (see [`StepRow::costs`]).
pub const COST_COLUMNS: [&str; 10] = [
    "cpupq",
    "client_cpu_us_per_op",
    "server_cpu_us_per_op",
    "cspq",
    "rkbpq",
    "wkbpi",
    "rpq",
    "wpi",
    "read_mb_s",
    "write_mb_s",
];

/// Storage-engine columns of `steps` (see [`StepRow::engine_values`]), all
/// unsigned byte or file counts but `w_amp`, `stall_s`, `stall_pct`,
/// `compaction_s` and `compaction_cpu_s` (floats) and `files_per_level` (text).
pub const ENGINE_COLUMNS: [&str; 15] = [
    "user_bytes_written",
    "wal_bytes",
    "flush_bytes",
    "compaction_read_bytes",
    "compaction_write_bytes",
    "w_amp",
    "stall_s",
    "stall_pct",
    "compaction_s",
    "compaction_cpu_s",
    "live_sst_bytes",
    "total_sst_bytes",
    "largest_run_bytes",
    "sorted_runs",
    "files_per_level",
];

/// Operations that get percentile columns in `steps`.
pub const STEP_OPS: [Op; 3] = [Op::Insert, Op::Delete, Op::Query];

/// One run.
#[derive(Clone, Debug, Default)]
pub struct RunRow {
    /// Unique id, also the run directory's name.
    pub run_id: String,
    /// Wall-clock start, µs since the Unix epoch (UTC).
    pub started_at_us: i64,
    /// The ibench version.
    pub ibench_version: String,
    /// "release" or "debug": debug-build figures are not comparable.
    pub build_profile: String,
    /// The seed.
    pub seed: u64,
    /// "sqlite", "null", ...
    pub dbms: String,
    /// The database's version.
    pub dbms_version: String,
    /// The user's label.
    pub label: Option<String>,
    /// The DSN without password.
    pub target: String,
    /// The host name.
    pub host: String,
    /// Logical CPUs of the host.
    pub cpus: u32,
    /// The resolved configuration, JSON.
    pub config: String,
    /// Settings the connector applied, JSON object.
    pub settings: String,
    /// "running", "ok", "error" or "interrupted".
    pub status: String,
    /// The error that ended the run.
    pub error: Option<String>,
    /// Settings known to add noise (JSON array of sentences).
    pub warnings: Vec<String>,
}

/// One step's summary.
#[derive(Clone, Debug, Default)]
pub struct StepRow {
    /// The run.
    pub run_id: String,
    /// The step's name (`l.i0`, `qr100`, ...).
    pub step: String,
    /// "ok", "error", "interrupted" or "timeout".
    pub status: String,
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
    /// Queries run.
    pub queries: u64,
    /// Rows indexed (l.x only).
    pub indexed_rows: Option<u64>,
    /// Target background insert rate of a q step (clients × rate).
    pub target_ips: Option<f64>,
    /// A q step's SLA: achieved insert rate ≥ 95% of the target.
    pub sla_ok: Option<bool>,
    /// Verify's verdict after a write step (None when not checked).
    pub verified: Option<bool>,
    /// What verify found wrong.
    pub verify_error: Option<String>,
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
    /// Rows in the tables' windows after the step (all tables).
    pub live_rows: u64,
    /// Per op: response then service percentiles (PERCENTILES order), µs.
    pub latencies: Vec<(Op, [f64; 5], [f64; 5])>,
    /// Key/value reads that found their key (read steps).
    pub found: Option<u64>,
    /// What the storage engine did (RocksDB).
    pub engine: Option<EngineDelta>,
}

impl RunRow {
    /// The line announcing a run in progress output.
    pub fn start_line(&self, dir: &std::path::Path) -> String {
        format!(
            "run {} on {} {} -> {}",
            self.run_id,
            self.dbms,
            self.dbms_version,
            dir.display()
        )
    }
}

/// One engine column's value.
#[derive(Clone, Debug, PartialEq)]
pub enum EngineValue {
    /// Bytes or files.
    Count(u64),
    /// A ratio, seconds or a percentage (None: undefined, e.g. w_amp with no user bytes).
    Float(Option<f64>),
    /// Files per level.
    Text(String),
}

impl EngineValue {
    fn count(&self) -> Option<u64> {
        match self {
            EngineValue::Count(n) => Some(*n),
            _ => None,
        }
    }
    fn float(&self) -> Option<f64> {
        match self {
            EngineValue::Float(v) => *v,
            _ => None,
        }
    }
    fn text(&self) -> Option<String> {
        match self {
            EngineValue::Text(t) => Some(t.clone()),
            _ => None,
        }
    }
}

impl StepRow {
    /// The values of [`ENGINE_COLUMNS`], when the engine reported counters.
    pub fn engine_values(&self) -> Option<[EngineValue; 15]> {
        let e = self.engine.as_ref()?;
        use EngineValue::{Count, Float, Text};
        Some([
            Count(e.user_bytes),
            Count(e.wal_bytes),
            Count(e.flush_bytes),
            Count(e.compaction_read_bytes),
            Count(e.compaction_write_bytes),
            Float(e.w_amp()),
            Float(Some(e.stall_s)),
            Float(e.stall_pct(self.elapsed_s)),
            Float(Some(e.compaction_s)),
            Float(Some(e.compaction_cpu_s)),
            Count(e.live_sst_bytes),
            Count(e.total_sst_bytes),
            Count(e.largest_run_bytes),
            Count(e.sorted_runs),
            Text(e.files_per_level_text()),
        ])
    }

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
    /// Queries per second.
    pub fn qps(&self) -> f64 {
        self.rate(self.queries)
    }

    /// The values of [`COST_COLUMNS`]: host CPU µs, client and server CPU µs,
    /// context switches, KB read, KB written, reads and writes per operation
    /// (the reference's cpupq, cspq, rkbpq, wkbpi, rpq, wpi, all divided by
    /// `cost_ops`), then MB/s read and written. None where a counter is missing.
    pub fn costs(&self) -> [Option<f64>; 10] {
        let d = &self.system;
        let per = |v: Option<f64>| Some(v? / self.cost_ops.filter(|&n| n > 0)? as f64);
        let disk = d.disk;
        let mbs = |b: Option<u64>| {
            b.filter(|_| self.elapsed_s > 0.0)
                .map(|b| b as f64 / 1e6 / self.elapsed_s)
        };
        [
            per(d.host_busy_s.map(|s| s * 1e6)),
            per(d.client_cpu_s.map(|s| s * 1e6)),
            per(d.server_cpu_s.map(|s| s * 1e6)),
            per(d.ctxt.map(|c| c as f64)),
            per(disk.map(|x| x.read_bytes as f64 / 1024.0)),
            per(disk.map(|x| x.written_bytes as f64 / 1024.0)),
            per(disk.map(|x| x.reads as f64)),
            per(disk.map(|x| x.writes as f64)),
            mbs(disk.map(|x| x.read_bytes)),
            mbs(disk.map(|x| x.written_bytes)),
        ]
    }

    /// One line for progress output: step, status, time, rates, SLA, verify, error.
    pub fn summary_line(&self) -> String {
        let mut line = format!("{:>7} {:<11} {:>8.1} s", self.step, self.status, self.elapsed_s);
        if self.inserts > 0 {
            line += &format!("  {:>10.0} ips", self.ips());
        }
        if self.queries > 0 {
            line += &format!("  {:>9.0} qps", self.qps());
        }
        if let Some(found) = self.found {
            line += &format!("  {found} found");
        }
        if let Some(e) = &self.engine {
            if let Some(w) = e.w_amp() {
                line += &format!("  w_amp {w:.2}");
            }
            if let Some(p) = e.stall_pct(self.elapsed_s) {
                line += &format!("  stall {p:.1}%");
            }
            line += &format!("  sst {:.1} MB", e.live_sst_bytes as f64 / 1e6);
        }
        if let Some(ok) = self.sla_ok {
            line += if ok { "  SLA met" } else { "  SLA MISSED" };
        }
        match self.verified {
            Some(true) => line += "  verified",
            Some(false) => line += &format!("  VERIFY FAILED: {}", self.verify_error.as_deref().unwrap_or("")),
            None => {}
        }
        if let Some(e) = &self.error {
            line += &format!("  error: {e}");
        }
        line
    }
}

/// One serialized histogram: all clients of a step, per op and time kind.
#[derive(Clone, Debug)]
pub struct HistogramRow {
    /// The run.
    pub run_id: String,
    /// The step.
    pub step: String,
    /// The operation.
    pub op: Op,
    /// "response" or "service".
    pub time: &'static str,
    /// Operations recorded.
    pub count: u64,
    /// HdrHistogram V2 (deflate) of nanoseconds.
    pub histogram: Vec<u8>,
}

/// Everything a run has produced so far.
#[derive(Clone, Debug, Default)]
pub struct RunResults {
    /// The run.
    pub run: RunRow,
    /// Finished steps.
    pub steps: Vec<StepRow>,
    /// Per-interval series: (step, row).
    pub intervals: Vec<(String, IntervalRow)>,
    /// Per-interval host and process counters: (step, interval).
    pub host_intervals: Vec<(String, HostInterval)>,
    /// Histograms.
    pub histograms: Vec<HistogramRow>,
    /// Host facts and the server's configuration.
    pub config: Vec<Setting>,
}

fn utf8(name: &str, nullable: bool) -> Field {
    Field::new(name, DataType::Utf8, nullable)
}
fn ts(name: &str) -> Field {
    Field::new(
        name,
        DataType::Timestamp(TimeUnit::Microsecond, Some("UTC".into())),
        false,
    )
}

fn runs_schema() -> SchemaRef {
    Arc::new(Schema::new(vec![
        utf8("run_id", false),
        ts("started_at"),
        utf8("ibench_version", false),
        utf8("build_profile", false),
        Field::new("schema_version", DataType::UInt32, false),
        Field::new("seed", DataType::UInt64, false),
        utf8("dbms", false),
        utf8("dbms_version", false),
        utf8("label", true),
        utf8("target", false),
        utf8("host", false),
        Field::new("cpus", DataType::UInt32, false),
        utf8("config", false),
        utf8("settings", false),
        utf8("status", false),
        utf8("error", true),
        utf8("warnings", false),
    ]))
}

fn config_schema() -> SchemaRef {
    Arc::new(Schema::new(vec![
        utf8("run_id", false),
        utf8("scope", false),
        utf8("name", false),
        utf8("value", false),
        utf8("source", false),
    ]))
}

fn steps_schema() -> SchemaRef {
    let mut fields = vec![
        utf8("run_id", false),
        utf8("step", false),
        utf8("status", false),
        utf8("error", true),
        ts("started_at"),
        Field::new("elapsed_s", DataType::Float64, false),
        Field::new("clients", DataType::UInt32, false),
        Field::new("rows_per_commit", DataType::UInt32, true),
        Field::new("inserts", DataType::UInt64, false),
        Field::new("deletes", DataType::UInt64, false),
        Field::new("queries", DataType::UInt64, false),
        Field::new("ips", DataType::Float64, false),
        Field::new("dps", DataType::Float64, false),
        Field::new("qps", DataType::Float64, false),
        Field::new("indexed_rows_per_s", DataType::Float64, true),
        Field::new("target_ips", DataType::Float64, true),
        Field::new("sla_ok", DataType::Boolean, true),
        Field::new("verified", DataType::Boolean, true),
        utf8("verify_error", true),
        Field::new("errors", DataType::UInt64, false),
        Field::new("db_size_bytes", DataType::UInt64, true),
        Field::new("live_rows", DataType::UInt64, false),
        Field::new("retries", DataType::UInt64, false),
        Field::new("db_size_before_bytes", DataType::UInt64, true),
        Field::new("server_max_rss_bytes", DataType::UInt64, true),
    ];
    for name in COST_COLUMNS {
        fields.push(Field::new(name, DataType::Float64, true));
    }
    for op in STEP_OPS {
        for time in ["resp", "svc"] {
            for (_, p) in PERCENTILES {
                fields.push(Field::new(
                    format!("{}_{time}_{p}_us", op.name()),
                    DataType::Float64,
                    true,
                ));
            }
        }
    }
    fields.push(Field::new("found", DataType::UInt64, true));
    for name in ENGINE_COLUMNS {
        let kind = match name {
            "files_per_level" => DataType::Utf8,
            "w_amp" | "stall_s" | "stall_pct" | "compaction_s" | "compaction_cpu_s" => DataType::Float64,
            _ => DataType::UInt64,
        };
        fields.push(Field::new(name, kind, true));
    }
    Arc::new(Schema::new(fields))
}

fn intervals_schema() -> SchemaRef {
    Arc::new(Schema::new(vec![
        utf8("run_id", false),
        utf8("step", false),
        Field::new("client", DataType::UInt32, true),
        Field::new("t_s", DataType::Float64, false),
        utf8("op", false),
        Field::new("count", DataType::UInt64, true),
        Field::new("rate", DataType::Float64, true),
        Field::new("p50_us", DataType::Float64, true),
        Field::new("p99_us", DataType::Float64, true),
        Field::new("max_us", DataType::Float64, true),
        Field::new("host_cpu_pct", DataType::Float64, true),
        Field::new("client_cpu_pct", DataType::Float64, true),
        Field::new("server_cpu_pct", DataType::Float64, true),
        Field::new("cs_per_s", DataType::Float64, true),
        Field::new("reads_per_s", DataType::Float64, true),
        Field::new("writes_per_s", DataType::Float64, true),
        Field::new("read_mb_s", DataType::Float64, true),
        Field::new("write_mb_s", DataType::Float64, true),
        Field::new("server_rss_mb", DataType::Float64, true),
    ]))
}

fn histograms_schema() -> SchemaRef {
    Arc::new(Schema::new(vec![
        utf8("run_id", false),
        utf8("step", false),
        utf8("op", false),
        utf8("time", false),
        utf8("unit", false),
        Field::new("count", DataType::UInt64, false),
        Field::new("histogram", DataType::Binary, false),
    ]))
}

fn batch(schema: SchemaRef, columns: Vec<ArrayRef>) -> Result<RecordBatch> {
    RecordBatch::try_new(schema, columns).map_err(|e| Error::format("building results", e))
}

/// NaN (no data) becomes null.
fn opt(v: f64) -> Option<f64> {
    (!v.is_nan()).then_some(v)
}

impl RunResults {
    /// The `runs` table (one row).
    pub fn runs_batch(&self) -> Result<RecordBatch> {
        let r = &self.run;
        let s = |v: &str| Arc::new(arrow::array::StringArray::from(vec![v])) as ArrayRef;
        batch(
            runs_schema(),
            vec![
                s(&r.run_id),
                Arc::new(arrow::array::TimestampMicrosecondArray::from(vec![r.started_at_us]).with_timezone("UTC")),
                s(&r.ibench_version),
                s(&r.build_profile),
                Arc::new(arrow::array::UInt32Array::from(vec![SCHEMA_VERSION])),
                Arc::new(arrow::array::UInt64Array::from(vec![r.seed])),
                s(&r.dbms),
                s(&r.dbms_version),
                Arc::new(arrow::array::StringArray::from(vec![r.label.clone()])),
                s(&r.target),
                s(&r.host),
                Arc::new(arrow::array::UInt32Array::from(vec![r.cpus])),
                s(&r.config),
                s(&r.settings),
                s(&r.status),
                Arc::new(arrow::array::StringArray::from(vec![r.error.clone()])),
                s(&serde_json::to_string(&r.warnings).expect("strings serialize")),
            ],
        )
    }

    /// The `steps` table.
    pub fn steps_batch(&self) -> Result<RecordBatch> {
        let mut strings: Vec<StringBuilder> = (0..5).map(|_| StringBuilder::new()).collect();
        let mut started = TimestampMicrosecondBuilder::new().with_timezone("UTC");
        let mut f64s: Vec<Float64Builder> = (0..7).map(|_| Float64Builder::new()).collect();
        let mut u32s: Vec<UInt32Builder> = (0..2).map(|_| UInt32Builder::new()).collect();
        let mut u64s: Vec<UInt64Builder> = (0..9).map(|_| UInt64Builder::new()).collect();
        let mut costs: Vec<Float64Builder> = (0..COST_COLUMNS.len()).map(|_| Float64Builder::new()).collect();
        let mut bools: Vec<BooleanBuilder> = (0..2).map(|_| BooleanBuilder::new()).collect();
        let mut lat: Vec<Float64Builder> = (0..STEP_OPS.len() * 10).map(|_| Float64Builder::new()).collect();
        for s in &self.steps {
            strings[0].append_value(&s.run_id);
            strings[1].append_value(&s.step);
            strings[2].append_value(&s.status);
            strings[3].append_option(s.error.as_deref());
            strings[4].append_option(s.verify_error.as_deref());
            started.append_value(s.started_at_us);
            f64s[0].append_value(s.elapsed_s);
            f64s[1].append_value(s.ips());
            f64s[2].append_value(s.dps());
            f64s[3].append_value(s.qps());
            f64s[4].append_option(s.indexed_rows.map(|n| s.rate(n)));
            f64s[5].append_option(s.target_ips);
            u32s[0].append_value(s.clients);
            u32s[1].append_option(s.rows_per_commit);
            u64s[0].append_value(s.inserts);
            u64s[1].append_value(s.deletes);
            u64s[2].append_value(s.queries);
            u64s[3].append_value(s.errors);
            u64s[4].append_option(s.db_size_bytes);
            u64s[5].append_value(s.live_rows);
            u64s[6].append_value(s.retries);
            u64s[7].append_option(s.db_size_before_bytes);
            u64s[8].append_option(s.system.server_rss);
            for (b, v) in costs.iter_mut().zip(s.costs()) {
                b.append_option(v);
            }
            bools[0].append_option(s.sla_ok);
            bools[1].append_option(s.verified);
            for (i, op) in STEP_OPS.iter().enumerate() {
                let found = s.latencies.iter().find(|(o, _, _)| o == op);
                for k in 0..10 {
                    let v = found.map(|(_, resp, svc)| if k < 5 { resp[k] } else { svc[k - 5] });
                    lat[i * 10 + k].append_option(v.and_then(opt));
                }
            }
        }
        let mut columns: Vec<ArrayRef> = vec![
            Arc::new(strings[0].finish()),
            Arc::new(strings[1].finish()),
            Arc::new(strings[2].finish()),
            Arc::new(strings[3].finish()),
            Arc::new(started.finish()),
            Arc::new(f64s[0].finish()),
            Arc::new(u32s[0].finish()),
            Arc::new(u32s[1].finish()),
            Arc::new(u64s[0].finish()),
            Arc::new(u64s[1].finish()),
            Arc::new(u64s[2].finish()),
            Arc::new(f64s[1].finish()),
            Arc::new(f64s[2].finish()),
            Arc::new(f64s[3].finish()),
            Arc::new(f64s[4].finish()),
            Arc::new(f64s[5].finish()),
            Arc::new(bools[0].finish()),
            Arc::new(bools[1].finish()),
            Arc::new(strings[4].finish()),
            Arc::new(u64s[3].finish()),
            Arc::new(u64s[4].finish()),
            Arc::new(u64s[5].finish()),
            Arc::new(u64s[6].finish()),
            Arc::new(u64s[7].finish()),
            Arc::new(u64s[8].finish()),
        ];
        columns.extend(costs.iter_mut().map(|b| Arc::new(b.finish()) as ArrayRef));
        columns.extend(lat.iter_mut().map(|b| Arc::new(b.finish()) as ArrayRef));
        columns.push(Arc::new(self.steps.iter().map(|s| s.found).collect::<UInt64Array>()));
        for (i, name) in ENGINE_COLUMNS.iter().enumerate() {
            let values = self.steps.iter().map(|s| s.engine_values().map(|v| v[i].clone()));
            let column: ArrayRef = match *name {
                "files_per_level" => Arc::new(values.map(|v| v.and_then(|v| v.text())).collect::<StringArray>()),
                "w_amp" | "stall_s" | "stall_pct" | "compaction_s" | "compaction_cpu_s" => {
                    Arc::new(values.map(|v| v.and_then(|v| v.float())).collect::<Float64Array>())
                }
                _ => Arc::new(values.map(|v| v.and_then(|v| v.count())).collect::<UInt64Array>()),
            };
            columns.push(column);
        }
        batch(steps_schema(), columns)
    }

    /// The `intervals` table: operation rows, then host rows (op "host",
    /// client null) with the host and process counters of each interval.
    pub fn intervals_batch(&self) -> Result<RecordBatch> {
        let (mut run, mut step, mut op) = (StringBuilder::new(), StringBuilder::new(), StringBuilder::new());
        let mut client = UInt32Builder::new();
        let mut count = UInt64Builder::new();
        let mut f: Vec<Float64Builder> = (0..14).map(|_| Float64Builder::new()).collect();
        for (s, r) in &self.intervals {
            run.append_value(&self.run.run_id);
            step.append_value(s);
            client.append_value(r.client);
            f[0].append_value(r.t_s);
            op.append_value(r.op.name());
            count.append_value(r.count);
            f[1].append_value(r.rate);
            f[2].append_option(opt(r.p50_us));
            f[3].append_option(opt(r.p99_us));
            f[4].append_option(opt(r.max_us));
            for b in &mut f[5..] {
                b.append_null();
            }
        }
        for (s, h) in &self.host_intervals {
            let d = &h.delta;
            let per_s = |v: Option<f64>| v.filter(|_| d.seconds > 0.0).map(|v| v / d.seconds);
            run.append_value(&self.run.run_id);
            step.append_value(s);
            client.append_null();
            f[0].append_value(h.t_s);
            op.append_value("host");
            count.append_null();
            for b in &mut f[1..5] {
                b.append_null();
            }
            let disk = d.disk;
            let values = [
                per_s(d.host_busy_s.map(|v| v * 100.0)),
                per_s(d.client_cpu_s.map(|v| v * 100.0)),
                per_s(d.server_cpu_s.map(|v| v * 100.0)),
                per_s(d.ctxt.map(|v| v as f64)),
                per_s(disk.map(|x| x.reads as f64)),
                per_s(disk.map(|x| x.writes as f64)),
                per_s(disk.map(|x| x.read_bytes as f64 / 1e6)),
                per_s(disk.map(|x| x.written_bytes as f64 / 1e6)),
                d.server_rss.map(|b| b as f64 / 1e6),
            ];
            for (b, v) in f[5..].iter_mut().zip(values) {
                b.append_option(v);
            }
        }
        let mut columns: Vec<ArrayRef> = vec![
            Arc::new(run.finish()),
            Arc::new(step.finish()),
            Arc::new(client.finish()),
            Arc::new(f[0].finish()),
            Arc::new(op.finish()),
            Arc::new(count.finish()),
        ];
        columns.extend(f[1..].iter_mut().map(|b| Arc::new(b.finish()) as ArrayRef));
        batch(intervals_schema(), columns)
    }

    /// The `config` table: host facts and server settings.
    pub fn config_batch(&self) -> Result<RecordBatch> {
        let mut b: Vec<StringBuilder> = (0..5).map(|_| StringBuilder::new()).collect();
        for s in &self.config {
            b[0].append_value(&self.run.run_id);
            b[1].append_value(s.scope);
            b[2].append_value(&s.name);
            b[3].append_value(&s.value);
            b[4].append_value(&s.source);
        }
        batch(
            config_schema(),
            b.iter_mut().map(|x| Arc::new(x.finish()) as ArrayRef).collect(),
        )
    }

    /// The `histograms` table.
    pub fn histograms_batch(&self) -> Result<RecordBatch> {
        let mut s: Vec<StringBuilder> = (0..5).map(|_| StringBuilder::new()).collect();
        let mut count = UInt64Builder::new();
        let mut blob = BinaryBuilder::new();
        for h in &self.histograms {
            s[0].append_value(&h.run_id);
            s[1].append_value(&h.step);
            s[2].append_value(h.op.name());
            s[3].append_value(h.time);
            s[4].append_value("ns");
            count.append_value(h.count);
            blob.append_value(&h.histogram);
        }
        let mut columns: Vec<ArrayRef> = s.iter_mut().map(|b| Arc::new(b.finish()) as ArrayRef).collect();
        columns.push(Arc::new(count.finish()));
        columns.push(Arc::new(blob.finish()));
        batch(histograms_schema(), columns)
    }

    /// Writes the five Parquet files into `dir`, each replaced atomically, so
    /// a reader (or a crash) never sees a half-written file.
    pub fn write(&self, dir: &Path) -> Result<()> {
        for (name, batch) in [
            ("runs", self.runs_batch()?),
            ("steps", self.steps_batch()?),
            ("intervals", self.intervals_batch()?),
            ("histograms", self.histograms_batch()?),
            ("config", self.config_batch()?),
        ] {
            let path = dir.join(format!("{name}.parquet"));
            let tmp = dir.join(format!(".{name}.parquet.tmp"));
            let mut file = ParquetFile::create(&tmp, batch.schema())?;
            file.write(&batch)?;
            file.finish()?;
            std::fs::rename(&tmp, &path).map_err(|source| Error::Io {
                action: "cannot replace",
                path: path.clone(),
                source,
            })?;
        }
        Ok(())
    }
}
