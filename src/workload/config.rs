//! A run's configuration: every parameter declared once (below), resolved
//! from a preset, overlaid by a TOML file, overlaid by flags or keyword
//! arguments. The resolved configuration is recorded with the run.

use super::choices::{
    Compat, DataMode, Distribution, MaintenanceStyle, Pacing, Profile, Shard, Statements, VerifyMode,
};
use super::params::{at_least, params, positive, within};
use super::presets;
use super::step::{QueryKind, Step};
use super::sysbench::SbStep;
use crate::error::{Error, Result};
use serde_json::{Map, Value};
use std::collections::BTreeMap;

/// The name of run parameter `field`, checked against its declaration at
/// compile time: code names a parameter in an error without spelling it.
macro_rules! param {
    ($field:ident) => {{
        let _ = |c: &$crate::workload::Config| {
            let _ = &c.$field;
        };
        stringify!($field)
    }};
}
pub(crate) use param;

params! {
    /// The database, as a DSN: sqlite:PATH, sqlite::memory:,
    /// postgres://user:pass@host:port/db, mysql://user:pass@host:port/db?engine=innodb|rocksdb,
    /// rocksdb:PATH[?compaction_style=universal&compression=lz4&...], or
    /// null:[?latency=exp:1ms&stall=2s@5s]. Empty: a SQLite file in the run
    /// directory (RocksDB for key/value steps alone).
    #[arg(long)]
    db: String = String::new();

    /// The preset the other values start from: quick, small-1, small-4,
    /// large-12-cpu, large-12-io (the Insert Benchmark), kv-quick,
    /// universal-compression or rocksdb-releases (key/value steps), sysbench-quick,
    /// sysbench-small, sysbench-large-cpu or sysbench-large-io (the sysbench suite).
    #[arg(long)]
    preset: String = "quick".into();

    /// The steps to run, in order, comma-separated: l.i0,l.x,l.i1,l.i2,wait,qr100,qp100,...
    /// or fillseq,fillrandom,filluniquerandom,overwrite,overwritesome,overwriteandwait,
    /// readrandom,seekrandom,readwhilewriting,readseq,readreverse,multireadrandom,
    /// fwdrange,revrange,updaterandom,mergerandom,deleterandom,deleteseq,flush,
    /// waitforcompaction, or sysbench's load,create-index,postwrite and
    /// microbenchmarks by their published names (point-query,
    /// read-only_range=10, ...; `sysbench` and `sysbench-long` name the
    /// whole suites) (default: the preset's).
    #[arg(long)]
    steps: Vec<Step> = super::step::standard_steps();

    /// Clients: each has its own table (unless shared_table) and up to three
    /// connections (insert, delete, query).
    #[arg(long)]
    clients: u32 = 1, check = within(1, 1024);

    /// All clients use one table instead of one each.
    #[arg(long, num_args = 0..=1, default_missing_value = "true")]
    shared_table: bool = false;

    /// Rows each client inserts in l.i0.
    #[arg(long)]
    rows_l_i0: u64 = 100_000, check = at_least(1);

    /// Rows each client inserts in l.i1.
    #[arg(long)]
    rows_l_i1: u64 = 20_000, check = at_least(1);

    /// Rows each client inserts in l.i2.
    #[arg(long)]
    rows_l_i2: u64 = 5_000, check = at_least(1);

    /// Rows per commit in l.i0.
    #[arg(long)]
    rows_per_commit_l_i0: u32 = 100, check = within(1, 4096);

    /// Rows per commit in l.i1.
    #[arg(long)]
    rows_per_commit_l_i1: u32 = 50, check = within(1, 4096);

    /// Rows per commit in l.i2.
    #[arg(long)]
    rows_per_commit_l_i2: u32 = 5, check = within(1, 4096);

    /// Rows per commit of the background inserts and deletes in q steps.
    #[arg(long)]
    rows_per_commit_q: u32 = 50, check = within(1, 4096);

    /// Delete as many rows from the tail as are inserted (l.i1, l.i2, q
    /// steps), so the table size stays constant.
    #[arg(long, num_args = 0..=1, default_missing_value = "true")]
    delete_per_insert: bool = true;

    /// Secondary indexes created by l.x (0 to 3).
    #[arg(long)]
    secondary_indexes: u8 = 3, check = within(0, 3);

    /// How long each q step runs: it inserts query_seconds × rate rows per client.
    #[arg(long)]
    query_seconds: f64 = 3.0, check = positive;

    /// The wait step's sleep after maintenance; default min(1200, 60 + M/10^6)
    /// for the M rows of l.i0, all clients.
    #[arg(long)]
    wait_seconds: Option<f64> = Some(1.0);

    /// Length range of the data column, both ends included: N or MIN..MAX.
    #[arg(long)]
    data_length: [u32; 2] = [10, 20];

    /// Compressed/raw ratio of the data column (and of key/value values).
    #[arg(long)]
    ratio: f64 = 0.5;

    /// The seed of every generated row and query.
    #[arg(long)]
    seed: u64 = 0;

    /// Let the database assign primary keys (AUTO_INCREMENT, a BIGSERIAL
    /// caching 1000, SQLite's rowid) instead of the client; deletes then
    /// remove the oldest rows with ORDER BY transactionid LIMIT n.
    #[arg(long, num_args = 0..=1, default_missing_value = "true")]
    server_keys: bool = false;

    /// How the Insert Benchmark's statements are sent: prepared
    /// (server-side prepared statements, binary parameters) or literal (the
    /// reference client's texts: values in the SQL, PostgreSQL's queries
    /// through SQL PREPARE/EXECUTE).
    #[arg(long)]
    statements: Statements = Statements::Prepared;

    /// What the rows hold: ibench (data compressible to ratio, a clock-like
    /// dateandtime per row) or iibench (the reference's data construction,
    /// one dateandtime per batch at second resolution, the wall clock as the
    /// reference's: the one value the seed does not determine, so verify
    /// does not compare it).
    #[arg(long)]
    data: DataMode = DataMode::Ibench;

    /// With data = iibench: the share of data meant to be random, as the
    /// reference's --data_random_pct (it makes int(len × 0.75 × pct/100)
    /// characters random).
    #[arg(long)]
    data_random_pct: u32 = 50, check = within(0, 100);

    /// Rows each table gets in l.x before its indexes are created (the
    /// reference inserts one 100-row batch).
    #[arg(long)]
    lx_rows: u64 = 0;

    /// The wait step's maintenance: ibench (maintenance, then wait_seconds of
    /// sleep) or iibench (the reference's procedure per DBMS, the whole step
    /// lasting wait_seconds).
    #[arg(long)]
    maintenance: MaintenanceStyle = MaintenanceStyle::Ibench;

    /// With maintenance = iibench on MySQL/MariaDB: run RESET MASTER first,
    /// as the reference's scripts do. It deletes the binary logs, so it
    /// needs its own explicit yes.
    #[arg(long, num_args = 0..=1, default_missing_value = "true")]
    reset_master: bool = false;

    /// A named bundle of the statement choices: ibench (the defaults) or
    /// iibench (the reference client's: server keys, literal statements, its
    /// data, l.x's 100 rows, its wait step). Choices given explicitly
    /// override the bundle's.
    #[arg(long)]
    compat: Compat = Compat::Ibench;

    /// A guard: any step stops after this many seconds.
    #[arg(long)]
    max_seconds: Option<f64> = None, check = positive;

    /// Length of the per-interval series, in seconds.
    #[arg(long)]
    interval_seconds: f64 = 1.0, check = positive;

    /// What the run records of where the server's time goes, per step: off;
    /// waits (what the server's sessions wait on, from the database itself:
    /// PostgreSQL's pg_stat_activity sampled, MySQL's performance_schema,
    /// RocksDB's statistics); or perf (the waits, and the server's CPU
    /// profile sampled with Linux perf). docs/profiling.md.
    #[arg(long)]
    profile: Profile = Profile::Off;

    /// With profile: how often PostgreSQL's sessions are sampled for their
    /// wait events, per second.
    #[arg(long)]
    wait_sampling_hz: f64 = 10.0, check = positive;

    /// With profile = perf: samples per second of each profiled thread's CPU time.
    #[arg(long)]
    profile_frequency: u32 = 99, check = within(1, 10_000);

    /// With profile = perf: profile ibench's own process too.
    #[arg(long, num_args = 0..=1, default_missing_value = "true")]
    profile_client: bool = false;

    /// How often a running step's results (its intervals so far, and a
    /// provisional row) are written out, in seconds: a crash or a kill
    /// loses at most this much.
    #[arg(long)]
    flush_seconds: f64 = 10.0, check = positive;

    /// Rows sampled per table by verify (besides the first and last).
    #[arg(long)]
    verify_sample: u32 = 100;

    /// What verify checks: quick (after each write step, the key bounds
    /// through the primary key and the sampled rows; the exact row counts
    /// once at the end of the run), full (the exact counts after every write
    /// step too), or off.
    #[arg(long)]
    verify: VerifyMode = VerifyMode::Quick;

    /// With deletes, how many commits the deleter may fall behind the
    /// inserter before the inserter waits for it (the reference's queues
    /// allow about 8), so a table never grows by more than this many commits.
    #[arg(long)]
    max_delete_lag: u32 = 8,
        check = |&n: &u32| if n == 0 { Err("must be at least 1 commit (the inserter must be able to insert before the deleter deletes)".to_string()) } else { Ok(()) };

    /// A name for the run in reports.
    #[arg(long)]
    label: Option<String> = None;

    /// A file whose first line is the database password, for a DSN that has
    /// none (PostgreSQL and MySQL/MariaDB; PGPASSWORD, ~/.pgpass, MYSQL_PWD
    /// and ~/.my.cnf work too); the password itself is never recorded.
    #[arg(long)]
    password_file: Option<std::path::PathBuf> = None;

    /// Key/value steps: the key space [0, num); fills write num keys.
    #[arg(long)]
    num: u64 = 1_000_000, check = at_least(1);

    /// Key/value steps: bytes per key (8 to 1024; big-endian, zero-padded).
    #[arg(long)]
    key_size: u32 = 16;

    /// Key/value steps: value length, N or MIN..MAX, both ends included.
    #[arg(long)]
    value_size: [u32; 2] = [100, 100];

    /// Key/value steps: the bytes of a value's random part: binary (all
    /// 256), text, or printable (the 95 printable ASCII characters, as
    /// db_bench's values, which zstd's entropy coder compresses below ratio).
    #[arg(long)]
    value_alphabet: crate::gen::Alphabet = crate::gen::Alphabet::Binary;

    /// Key/value steps: where values come from: per-key (each generated from
    /// its own randomness) or pool (db_bench's: slices of a 1 MiB buffer of
    /// compressible pieces, so a write costs a copy, not a generation; for
    /// comparisons of client cost with db_bench).
    #[arg(long)]
    value_source: crate::gen::ValueSource = crate::gen::ValueSource::PerKey;

    /// Key/value steps: pairs per write batch (one commit).
    #[arg(long)]
    batch_size: u32 = 1, check = within(1, 100_000);

    /// Key/value steps: threads, each with its own key stream (disjoint ranges for fills).
    #[arg(long)]
    threads: u32 = 1, check = within(1, 1024);

    /// Writes of fillrandom and overwrite, all threads together (default num).
    #[arg(long)]
    writes: Option<u64> = None, check = some_at_least_1;

    /// Writes of overwritesome (default num / 10).
    #[arg(long)]
    overwritesome_writes: Option<u64> = None, check = some_at_least_1;

    /// Reads of readrandom, seekrandom and readwhilewriting, all readers together (default num).
    #[arg(long)]
    reads: Option<u64> = None, check = some_at_least_1;

    /// Run overwrite, overwriteandwait and the read steps for this many
    /// seconds instead of a count.
    #[arg(long)]
    duration: Option<f64> = None, check = positive;

    /// Nexts after each seek of seekrandom.
    #[arg(long)]
    seek_nexts: u32 = 10;

    /// Keys per second of readwhilewriting's one writer.
    #[arg(long)]
    writer_rate: u32 = 10_000,
        check = |&n: &u32| if n == 0 { Err("must be at least 1 key/s".to_string()) } else { Ok(()) };

    /// Key/value steps: which keys the reads and overwrites pick (fills are
    /// uniform or in order, as db_bench's): uniform, zipfian (hot keys
    /// scattered over the space) or latest (the highest keys hottest).
    #[arg(long)]
    distribution: Distribution = Distribution::Uniform;

    /// The exponent of zipfian and latest (YCSB's 0.99 by default).
    #[arg(long)]
    zipf_theta: f64 = 0.99, check = positive;

    /// How paced operations wait for their intended start: precise (sleep,
    /// then spin the last stretch: a lag of microseconds) or sleep.
    #[arg(long)]
    pacing: Pacing = Pacing::Precise;

    /// I/N: this process runs shard I (from 0) of N, the clients
    /// [⌊I·clients/N⌋, ⌊(I+1)·clients/N⌋) and their tables, generating
    /// exactly what they generate in a one-process run (docs/distributed.md).
    /// None: every client.
    #[arg(long, value_name = "I/N")]
    shard: Option<Shard> = None;

    /// The intended start of the first step: RFC 3339 (2026-12-01T21:30:00Z)
    /// or Unix seconds. The shards of a run started by hand on several hosts
    /// share it, so their open-loop schedules count from one instant. None: at once.
    #[arg(long, value_name = "TIME", value_parser = parse_start_at)]
    start_at: Option<f64> = None,
        check = |t: &Option<f64>| match t { Some(t) if !(t.is_finite() && *t > 0.0) => Err(format!("must be Unix seconds, got {t}")), _ => Ok(()) };

    /// Key/value steps' own database options (embedded RocksDB): step →
    /// DSN options (wal=off&memtable_factory=vector) that replace or add to
    /// the DSN's for that step, for which the database is reopened, as each
    /// of benchmark.sh's db_bench processes opens it with its own flags
    /// (docs/kv.md). As a flag: STEP:OPTIONS[;STEP:OPTIONS...]. Empty: the
    /// DSN's for every step.
    #[arg(long, value_name = "STEP:OPTIONS")]
    step_options: BTreeMap<String, String> = BTreeMap::new();

    /// sysbench steps: the tables, sbtest1 .. sbtestN.
    #[arg(long)]
    tables: u32 = 1, check = within(1, 100_000);

    /// sysbench steps: rows per table (ids 1 .. table_size).
    #[arg(long)]
    table_size: u64 = 10_000, check = within(1, i32::MAX as u64);

    /// sysbench steps: seconds each microbenchmark that reads runs (and
    /// write-only, as the published scripts run it).
    #[arg(long)]
    read_seconds: f64 = 1.0, check = positive;

    /// sysbench steps: seconds each update, read-write and delete runs.
    #[arg(long)]
    write_seconds: f64 = 1.0, check = positive;

    /// sysbench steps: seconds insert runs.
    #[arg(long)]
    insert_seconds: f64 = 1.0, check = positive;

    /// sysbench steps: seconds the scan warm-ups (scan.warm, scan.warmpre) run.
    #[arg(long)]
    scan_warm_seconds: f64 = 1.0, check = positive;

    /// sysbench steps: seconds each client runs events before a
    /// microbenchmark's measured span starts (sysbench's --warmup-time; the
    /// published runs use 5).
    #[arg(long)]
    warmup_seconds: f64 = 0.0,
        check = |&v: &f64| if v.is_finite() && v >= 0.0 { Ok(()) } else { Err(format!("must be ≥ 0, got {v}")) };

    /// sysbench steps: connections that load the tables and build their
    /// indexes, each its share of the tables (sysbench prepare as the
    /// published scripts run it: one).
    #[arg(long)]
    load_connections: u32 = 1, check = within(1, 1024);

    /// sysbench steps: how long each postwrite pause lasts, maintenance
    /// included; default min(1200, 60 + M/10^6) for the M rows of all tables.
    #[arg(long)]
    postwrite_seconds: Option<f64> = Some(1.0);

    /// sysbench steps: the distribution of k at load, over [1, table_size]:
    /// uniform (sysbench 1.1's default), zipfian or latest.
    #[arg(long)]
    k_distribution: Distribution = Distribution::Uniform;

    /// sysbench steps: the distribution of the ids events pick, over [1,
    /// table_size]: uniform (sysbench 1.1's default), zipfian or latest.
    #[arg(long)]
    id_distribution: Distribution = Distribution::Uniform;

    /// sysbench steps: the exponent of update-zipf's ids and of a zipfian
    /// k or id distribution (sysbench's --rand-zipfian-exp).
    #[arg(long)]
    rand_zipfian_exp: f64 = 0.8, check = positive;

    /// sysbench steps: events per second, all clients together (sysbench's
    /// --rate), each client on an open-loop schedule of its share: response
    /// times count from each event's intended start. None: as fast as possible.
    #[arg(long)]
    events_per_second: Option<f64> = None, check = positive;
}

/// `writes`, `reads`, ...: when given, at least 1.
fn some_at_least_1(n: &Option<u64>) -> std::result::Result<(), String> {
    match n {
        Some(0) => Err("must be at least 1".into()),
        _ => Ok(()),
    }
}

/// `--start-at`: RFC 3339 or Unix seconds.
fn parse_start_at(text: &str) -> std::result::Result<f64, String> {
    if let Ok(seconds) = text.parse::<f64>() {
        return Ok(seconds);
    }
    time::OffsetDateTime::parse(text, &time::format_description::well_known::Rfc3339)
        .map(|t| t.unix_timestamp_nanos() as f64 / 1e9)
        .map_err(|e| format!("expected RFC 3339 (2026-12-01T21:30:00Z) or Unix seconds: {e}"))
}

impl Overrides {
    /// A layer from a JSON object (Python keywords, a TOML table, a
    /// campaign's `[run]`); an unknown or invalid key is an error naming it.
    pub fn from_map(map: &Map<String, Value>) -> Result<Overrides> {
        let mut layer = Overrides::default();
        for (name, value) in map {
            layer.set(name, value.clone())?;
        }
        Ok(layer)
    }

    /// Reads a TOML file of parameters (the same names as the flags, with `_`).
    pub fn from_toml(path: &std::path::Path) -> Result<Overrides> {
        Overrides::from_map(&Config::layer_from_toml(path)?)
    }
}

impl Config {
    /// The configuration of preset `name` alone.
    pub fn preset(name: &str) -> Result<Config> {
        let mut c = Config::default();
        presets::overrides(name)?.apply_to(&mut c);
        Ok(c)
    }

    /// Resolves a configuration from layers given as JSON objects (see
    /// [`Config::resolve_layers`]). An unknown key is an error naming it.
    pub fn resolve(layers: &[Map<String, Value>]) -> Result<Config> {
        let layers = layers.iter().map(Overrides::from_map).collect::<Result<Vec<_>>>()?;
        Config::resolve_layers(layers)
    }

    /// Resolves a configuration: the defaults, the preset the last layer
    /// naming one names (default quick), the compat bundle's choices, then
    /// each layer in turn; then checks it.
    pub fn resolve_layers(layers: impl IntoIterator<Item = Overrides>) -> Result<Config> {
        let given = layers.into_iter().fold(Overrides::default(), Overrides::then);
        let mut config = Config::preset(given.preset.as_deref().unwrap_or("quick"))?;
        // A compat bundle sets the choices no layer gave explicitly.
        given.compat.unwrap_or(config.compat).bundle().apply_to(&mut config);
        given.apply_to(&mut config);
        config.check()?;
        Ok(config)
    }

    /// Reads a TOML file of parameters as a JSON object.
    pub fn layer_from_toml(path: &std::path::Path) -> Result<Map<String, Value>> {
        let text = std::fs::read_to_string(path).map_err(|source| Error::Io {
            action: "cannot read config",
            path: path.to_owned(),
            source,
        })?;
        let table: toml::Table =
            toml::from_str(&text).map_err(|e| Error::config("config", format!("{}: {e}", path.display())))?;
        match serde_json::to_value(table) {
            Ok(Value::Object(map)) => Ok(map),
            _ => Err(Error::config(
                "config",
                format!("{}: not a table of parameters", path.display()),
            )),
        }
    }

    /// The generator of table `table`'s rows.
    pub fn row_spec(&self, table: u64) -> crate::gen::RowSpec {
        crate::gen::RowSpec {
            seed: self.seed,
            table,
            data_length: crate::gen::Length::Uniform {
                min: self.data_length[0],
                max: self.data_length[1],
            },
            ratio: self.ratio,
            data_random_pct: (self.data == DataMode::Iibench).then_some(self.data_random_pct),
            ..crate::gen::RowSpec::default()
        }
    }

    /// A postwrite pause's length in seconds: `postwrite_seconds`, else the
    /// published scripts' min(1200, 60 + M / 10⁶) for the M rows of all tables.
    pub fn postwrite(&self) -> f64 {
        let rows = self.table_size as f64 * self.tables as f64;
        self.postwrite_seconds.unwrap_or((60.0 + rows / 1e6).min(1200.0))
    }

    /// The wait step's length in seconds: `wait_seconds`, else the
    /// reference's X = min(1200, 60 + M / 10⁶) for the M rows l.i0 loads in
    /// all (every client's).
    pub fn wait(&self) -> f64 {
        let loaded = self.rows_l_i0 as f64 * self.clients as f64;
        self.wait_seconds.unwrap_or((60.0 + loaded / 1e6).min(1200.0))
    }

    /// Checks every value; errors name the parameter.
    pub fn check(&self) -> Result<()> {
        self.check_steps()?;
        self.check_each()?;
        self.check_step_options()?;
        if self.secondary_indexes == 0 {
            if let Some(q) = self.steps.iter().find(|s| {
                matches!(
                    s,
                    Step::Query {
                        kind: QueryKind::Range,
                        ..
                    }
                )
            }) {
                return Err(Error::config(
                    param!(secondary_indexes),
                    format!("{q} runs range queries on the secondary indexes: it needs at least 1, got 0"),
                ));
            }
        }
        if let Some(w) = self.wait_seconds {
            if !(w.is_finite() && w >= 0.0) {
                return Err(Error::config(param!(wait_seconds), format!("must be ≥ 0, got {w}")));
            }
        }
        if let Some(w) = self.postwrite_seconds {
            if !(w.is_finite() && w >= 0.0) {
                return Err(Error::config(
                    param!(postwrite_seconds),
                    format!("must be ≥ 0, got {w}"),
                ));
            }
        }
        self.check_sysbench_order()?;
        let [min, max] = self.data_length;
        crate::gen::Length::Uniform { min, max }.check(param!(data_length))?;
        crate::gen::Compressible::new(self.ratio, crate::gen::Alphabet::Text, param!(ratio))?;
        self.check_kv()?;
        self.check_shard()?;
        if self.server_keys && self.shared_table && self.clients > 1 {
            return Err(Error::config(
                param!(server_keys),
                "cannot be combined with a shared table and several clients: the client could not know which keys the server gave each row",
            ));
        }
        Ok(())
    }

    /// At least one step, each once.
    fn check_steps(&self) -> Result<()> {
        if self.steps.is_empty() {
            return Err(Error::config(param!(steps), "no step to run"));
        }
        for (i, s) in self.steps.iter().enumerate() {
            if self.steps[..i].contains(s) {
                return Err(Error::config(
                    param!(steps),
                    format!("{s} appears twice; results are keyed by step name"),
                ));
            }
        }
        Ok(())
    }

    /// The sysbench steps' data phase in order: the load before the index
    /// on k, the index before the microbenchmarks that read it.
    fn check_sysbench_order(&self) -> Result<()> {
        let at = |wanted: SbStep| self.steps.iter().position(|s| s.sb() == Some(wanted));
        let (load, index) = (at(SbStep::Load), at(SbStep::CreateIndex));
        let refuse = |message: String| Err(Error::config(param!(steps), message));
        if let (Some(load), Some(index)) = (load, index) {
            if index < load {
                return refuse(
                    "create-index runs before load, which creates the tables anew: put it after load".into(),
                );
            }
        }
        if let Some(step) = self.steps.iter().find(|s| {
            s.sb()
                .and_then(SbStep::microbenchmark)
                .is_some_and(|m| m.test.one_table())
        }) {
            if self.tables != 1 {
                return Err(Error::config(
                    param!(tables),
                    format!(
                        "{step} is upstream sysbench's script for one table (sbtest1): tables must be 1, got {}",
                        self.tables
                    ),
                ));
            }
        }
        let Some(load) = load else { return Ok(()) };
        for (i, step) in self.steps.iter().enumerate().skip(load + 1) {
            let needs = step
                .sb()
                .and_then(SbStep::microbenchmark)
                .is_some_and(|m| m.test.needs_k_index());
            if needs && index.is_none_or(|x| x > i) {
                return refuse(format!(
                    "{step} reads the index on k, which load leaves out: run create-index after load and before {step}"
                ));
            }
        }
        Ok(())
    }

    /// A shard of several needs clients of its own, each with its own table.
    fn check_shard(&self) -> Result<()> {
        let shard = self.shard();
        if shard.count == 1 {
            return Ok(());
        }
        let refuse = |message: String| Err(Error::config(param!(shard), message));
        if shard.count > self.clients {
            return refuse(format!(
                "{shard}: {} shards cannot split {} clients",
                shard.count, self.clients
            ));
        }
        if self.shared_table {
            return refuse(
                "cannot split clients that share one table: its window is one counter, kept by one process".into(),
            );
        }
        if let Some(kv) = self.steps.iter().find(|s| s.kv().is_some()) {
            return refuse(format!(
                "{kv} is a key/value step: its threads share one key space, kept by one process; shards split the Insert Benchmark's clients"
            ));
        }
        Ok(())
    }

    /// The shard this process runs ([`Shard::WHOLE`] when none is set).
    pub fn shard(&self) -> Shard {
        self.shard.unwrap_or(Shard::WHOLE)
    }

    /// The key/value parameters that depend on each other.
    fn check_kv(&self) -> Result<()> {
        crate::gen::check_key_size(self.key_size as usize)?;
        if self.key_size > 1024 {
            return Err(Error::config(
                param!(key_size),
                format!("must be at most 1024, got {}", self.key_size),
            ));
        }
        let [min, max] = self.value_size;
        crate::gen::Length::Uniform { min, max }.check(param!(value_size))?;
        if max > 64 << 20 {
            return Err(Error::config(
                param!(value_size),
                format!("must be at most 64 MiB, got {max}"),
            ));
        }
        if self.threads as u64 > self.num {
            return Err(Error::config(
                param!(threads),
                format!("{} threads cannot split {} keys", self.threads, self.num),
            ));
        }
        Ok(())
    }

    /// Step options name key/value steps, and only embedded RocksDB takes them.
    fn check_step_options(&self) -> Result<()> {
        let refuse = |message: String| Err(Error::config(param!(step_options), message));
        for (step, options) in &self.step_options {
            if !matches!(step.parse::<Step>(), Ok(Step::Kv(_))) {
                return refuse(format!("{step:?} is not a key/value step (fillseq, overwrite, ...)"));
            }
            if options.split('&').all(|o| o.is_empty()) {
                return refuse(format!("{step}: no options given"));
            }
        }
        let rocksdb =
            self.db.starts_with("rocksdb:") || (self.db.is_empty() && cfg!(feature = "rocksdb") && self.kv_only());
        if !self.step_options.is_empty() && !rocksdb {
            return refuse(format!(
                "options per step reopen embedded RocksDB (a rocksdb: DSN); {} is opened once per run",
                if self.db.is_empty() {
                    "the default SQLite file"
                } else {
                    self.db.split(':').next().unwrap_or("this database")
                }
            ));
        }
        Ok(())
    }

    /// True when every step is a key/value step.
    pub fn kv_only(&self) -> bool {
        self.steps.iter().all(|s| s.kv().is_some())
    }

    /// The number of the Insert Benchmark's tables (pi1, ...).
    pub fn ib_tables(&self) -> u32 {
        if self.shared_table {
            1
        } else {
            self.clients
        }
    }

    /// This configuration as a layer giving every parameter (a shard's
    /// coordinator hands it to each shard).
    pub fn to_map(&self) -> Map<String, Value> {
        match serde_json::to_value(self) {
            Ok(Value::Object(map)) => map,
            _ => unreachable!("a config serializes to an object"),
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use serde_json::json;

    fn layer(v: Value) -> Map<String, Value> {
        v.as_object().unwrap().clone()
    }

    #[test]
    fn every_preset_resolves_and_checks() {
        for p in presets::PRESETS {
            let c = Config::resolve(&[layer(json!({ "preset": p }))]).unwrap();
            assert_eq!(c.preset, p);
        }
    }

    #[test]
    fn later_layers_override_earlier_ones() {
        let c = Config::resolve(&[layer(json!({"clients": 3, "seed": 1})), layer(json!({"clients": 2}))]).unwrap();
        assert_eq!((c.clients, c.seed), (2, 1));
    }

    #[test]
    fn bad_values_name_the_parameter() {
        for (l, name) in [
            (json!({"preset": "huge"}), "preset"),
            (json!({"rows_l_i0": 0}), "rows_l_i0"),
            (json!({"rows_l_i1": -5}), "rows_l_i1"),
            (json!({"clients": 0}), "clients"),
            (json!({"steps": ["l.i0", "bogus"]}), "steps"),
            (json!({"nonsense": 1}), "nonsense"),
            (json!({"query_seconds": 0}), "query_seconds"),
            (json!({"ratio": 2.0}), "ratio"),
        ] {
            let e = Config::resolve(&[layer(l)]).unwrap_err().to_string();
            assert!(e.starts_with(&format!("invalid {name}")), "{e}");
        }
    }

    #[test]
    fn a_null_unsets_an_optional_parameter() {
        let c = Config::resolve(&[layer(json!({"wait_seconds": null}))]).unwrap();
        assert_eq!(c.wait_seconds, None);
    }

    #[test]
    fn the_recorded_configuration_resolves_to_itself() {
        let c = Config::resolve(&[layer(json!({"preset": "kv-quick", "shard": null, "seed": 7}))]).unwrap();
        assert_eq!(Config::resolve(&[c.to_map()]).unwrap(), c);
    }
}
