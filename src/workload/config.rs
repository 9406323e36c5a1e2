//! A run's configuration: a preset, overlaid by a TOML file, overlaid by flags
//! or keyword arguments. The resolved configuration is recorded with the run.

use super::step::{QueryKind, Step, STANDARD_STEPS};
use crate::error::{Error, Result};
use serde::{Deserialize, Serialize};
use serde_json::{Map, Value};
use std::collections::BTreeMap;

/// Every parameter of an Insert Benchmark run. Row counts are per table.
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct Config {
    /// The database, as a DSN (`sqlite:PATH`, `sqlite::memory:`, `null:`, ...);
    /// empty for a SQLite file in the run directory.
    pub db: String,
    /// The preset the other values started from.
    pub preset: String,
    /// The steps to run, in order.
    pub steps: Vec<String>,
    /// Clients: each has its own table (unless `shared_table`) and up to three
    /// connections (insert, delete, query).
    pub clients: u32,
    /// All clients use one table instead of one each.
    pub shared_table: bool,
    /// Rows each client inserts in l.i0.
    pub rows_l_i0: u64,
    /// Rows each client inserts in l.i1.
    pub rows_l_i1: u64,
    /// Rows each client inserts in l.i2.
    pub rows_l_i2: u64,
    /// Rows per commit in l.i0.
    pub rows_per_commit_l_i0: u32,
    /// Rows per commit in l.i1.
    pub rows_per_commit_l_i1: u32,
    /// Rows per commit in l.i2.
    pub rows_per_commit_l_i2: u32,
    /// Rows per commit of the background inserts and deletes in q steps.
    pub rows_per_commit_q: u32,
    /// Delete as many rows from the tail as are inserted (l.i1, l.i2, q steps),
    /// so the table size stays constant.
    pub delete_per_insert: bool,
    /// Secondary indexes created by l.x (0 to 3).
    pub secondary_indexes: u8,
    /// How long each q step runs: it inserts `query_seconds × rate` rows per client.
    pub query_seconds: f64,
    /// Sleep of the wait step after maintenance; default min(1200, 60 + rows_l_i0 / 10^6).
    pub wait_seconds: Option<f64>,
    /// Length range of the `data` column, both ends included.
    pub data_length: [u32; 2],
    /// Compressed/raw ratio of `data`.
    pub ratio: f64,
    /// The seed of every generated row and query.
    pub seed: u64,
    /// Let the database assign primary keys (AUTO_INCREMENT, a BIGSERIAL with
    /// CACHE 1000, SQLite's rowid) instead of the client; deletes then remove
    /// the oldest rows with `ORDER BY transactionid LIMIT n`.
    pub server_keys: bool,
    /// How the Insert Benchmark's statements are sent: `prepared`
    /// (server-side prepared statements, binary parameters) or `literal`
    /// (the reference client's texts: values in the SQL, PostgreSQL's
    /// queries through SQL `PREPARE`/`EXECUTE`).
    pub statements: Statements,
    /// What the rows hold: `ibench` (`data` compressible to `ratio`, a
    /// clock-like `dateandtime` per row) or `iibench` (the reference's
    /// `data` construction, one `dateandtime` per batch at second
    /// resolution, the wall clock as the reference's: the one value the seed
    /// does not determine, so verify does not compare it).
    pub data: DataMode,
    /// `data = "iibench"`: the share of `data` meant to be random, as the
    /// reference's `--data_random_pct` (it makes int(len × 0.75 × pct/100)
    /// characters random).
    pub data_random_pct: u32,
    /// Rows each table gets in l.x before its indexes are created (the
    /// reference inserts one 100-row batch).
    pub lx_rows: u64,
    /// The wait step's maintenance: `ibench` (maintenance, then
    /// `wait_seconds` of sleep) or `iibench` (the reference's procedure per
    /// DBMS, the whole step lasting `wait_seconds`).
    pub maintenance: MaintenanceStyle,
    /// With `maintenance = "iibench"` on MySQL/MariaDB: run `RESET MASTER`
    /// first, as the reference's scripts do. It deletes the binary logs, so
    /// it needs its own explicit yes.
    pub reset_master: bool,
    /// A named bundle of the statement choices: `ibench` (the defaults) or
    /// `iibench` (the reference client's: server keys, literal statements,
    /// its data, l.x's 100 rows, its wait step). Choices given explicitly
    /// override the bundle's.
    pub compat: Compat,
    /// A guard: any step stops after this many seconds.
    pub max_seconds: Option<f64>,
    /// Length of the per-interval series, in seconds.
    pub interval_seconds: f64,
    /// Rows sampled per table by verify (besides the first and last).
    pub verify_sample: u32,
    /// What verify checks: `quick` (after each write step, the key bounds
    /// through the primary key and the sampled rows; the exact row counts
    /// once at the end of the run), `full` (the exact counts after every
    /// write step too), or `off`.
    pub verify: VerifyMode,
    /// With deletes, how many commits the deleter may fall behind the
    /// inserter before the inserter waits for it (the reference's queues
    /// allow about 8), so a table never grows by more than this many commits.
    pub max_delete_lag: u32,
    /// A name for the run in reports.
    pub label: Option<String>,
    /// A file whose first line is the database password, for a DSN that
    /// has none (PostgreSQL and MySQL/MariaDB); the password itself is
    /// never recorded.
    pub password_file: Option<std::path::PathBuf>,
    /// Key/value steps: the key space [0, num); fills write num keys.
    pub num: u64,
    /// Key/value steps: bytes per key (≥ 8; big-endian, zero-padded).
    pub key_size: u32,
    /// Key/value steps: value length range, both ends included (equal for a
    /// fixed size; a single number is accepted for a fixed size).
    #[serde(deserialize_with = "length_pair")]
    pub value_size: [u32; 2],
    /// Key/value steps: the bytes of a value's random part: `binary` (all
    /// 256) or `printable` (the 95 printable ASCII characters, as db_bench's
    /// values, which zstd's entropy coder compresses below `ratio`).
    pub value_alphabet: crate::gen::Alphabet,
    /// Key/value steps: where values come from: `per-key` (each generated
    /// from its own randomness) or `pool` (db_bench's: slices of a 1 MiB
    /// buffer of compressible pieces, so a write costs a copy, not a
    /// generation; for comparisons of client cost with db_bench).
    pub value_source: crate::gen::ValueSource,
    /// Key/value steps: pairs per write batch (one commit).
    pub batch_size: u32,
    /// Key/value steps: threads, each with its own key stream (disjoint ranges for fills).
    pub threads: u32,
    /// Writes of fillrandom and overwrite, all threads together (default num).
    pub writes: Option<u64>,
    /// Writes of overwritesome (default num / 10).
    pub overwritesome_writes: Option<u64>,
    /// Reads of readrandom, seekrandom and readwhilewriting, all readers together (default num).
    pub reads: Option<u64>,
    /// Run overwrite, overwriteandwait and the read steps for this many
    /// seconds instead of a count.
    pub duration: Option<f64>,
    /// Nexts after each seek of seekrandom.
    pub seek_nexts: u32,
    /// Keys per second of readwhilewriting's one writer.
    pub writer_rate: u32,
    /// Key/value steps: which keys the reads and overwrites pick (fills are
    /// uniform or in order, as db_bench's): `uniform`, `zipfian` (hot keys
    /// scattered over the space) or `latest` (the highest keys hottest).
    pub distribution: Distribution,
    /// The exponent of `zipfian` and `latest` (YCSB's 0.99 by default).
    pub zipf_theta: f64,
    /// How paced operations wait for their intended start: `precise` (sleep,
    /// then spin the last stretch: a lag of microseconds) or `sleep`.
    pub pacing: Pacing,
    /// `"i/N"`: this process runs shard i (from 0) of N, the clients
    /// [⌊i·clients/N⌋, ⌊(i+1)·clients/N⌋) and their tables, generating
    /// exactly what they generate in a one-process run (docs/distributed.md).
    /// None: every client.
    pub shard: Option<String>,
    /// The intended start of the first step, as Unix seconds: the shards of
    /// a run started by hand on several hosts share it, so their open-loop
    /// schedules count from one instant. None: at once.
    pub start_at: Option<f64>,
    /// Key/value steps' own database options (embedded RocksDB): step name
    /// → DSN options (`wal=off&memtable_factory=vector`) that replace or add
    /// to the DSN's for that step, for which the database is reopened, as
    /// each of benchmark.sh's db_bench processes opens it with its own flags
    /// ([`BENCHMARK_SH_STEP_OPTIONS`], docs/kv.md). Empty: the DSN's for
    /// every step.
    #[serde(default)]
    pub step_options: BTreeMap<String, String>,
}

/// The db_bench flags benchmark.sh passes per step, where they differ from
/// ibench's defaults (the WAL on, no sync, a skip-list memtable with
/// concurrent writes), as RocksDB options: its fillseq loads with the WAL
/// disabled into a vector memtable without concurrent memtable writes
/// (`--disable_wal=1 --memtablerep=vector
/// --allow_concurrent_memtable_write=false`).
pub const BENCHMARK_SH_STEP_OPTIONS: [(&str, &str); 1] = [(
    "fillseq",
    "wal=off&memtable_factory=vector&allow_concurrent_memtable_write=false",
)];

/// Which of a run's clients this process runs: shard `index` of `count`.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct Shard {
    /// From 0.
    pub index: u32,
    /// How many shards the run has.
    pub count: u32,
}

impl Shard {
    /// Every client: the one shard of a one-process run.
    pub const WHOLE: Shard = Shard { index: 0, count: 1 };

    /// Parses `"i/N"`.
    pub fn parse(text: &str) -> Result<Shard> {
        let bad = || {
            Error::config(
                "shard",
                format!("expected i/N with 0 ≤ i < N, such as 0/2, got {text:?}"),
            )
        };
        let (i, n) = text.split_once('/').ok_or_else(bad)?;
        let (index, count): (u32, u32) = (
            i.trim().parse().map_err(|_| bad())?,
            n.trim().parse().map_err(|_| bad())?,
        );
        if count == 0 || index >= count {
            return Err(bad());
        }
        Ok(Shard { index, count })
    }

    /// The clients of this shard among `clients`: a contiguous block, so
    /// shard i of N holds the tables pi⌊i·C/N⌋+1 … pi⌊(i+1)·C/N⌋.
    pub fn clients(self, clients: u32) -> std::ops::Range<u32> {
        let at = |i: u32| (i as u64 * clients as u64 / self.count as u64) as u32;
        at(self.index)..at(self.index + 1)
    }
}

impl std::fmt::Display for Shard {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        write!(f, "{}/{}", self.index, self.count)
    }
}

/// How paced operations wait for their intended start.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "lowercase")]
pub enum Pacing {
    /// Sleep until shortly before, then spin (the stretch adapts to how late
    /// this host wakes sleepers).
    #[default]
    Precise,
    /// Sleep only: a lag of the host's wake-up latency (tens to hundreds of µs).
    Sleep,
}

/// Which keys the key/value reads and overwrites pick.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "lowercase")]
pub enum Distribution {
    /// Uniform in `[0, num)`, as db_bench.
    #[default]
    Uniform,
    /// Zipfian ranks spread over `[0, num)` by a keyed bijection (YCSB's "zipfian").
    Zipfian,
    /// Zipfian ranks counted down from `num − 1` (YCSB's "latest").
    Latest,
}

impl Distribution {
    /// The key generator kind.
    pub fn kind(self) -> crate::gen::KeyKind {
        match self {
            Distribution::Uniform => crate::gen::KeyKind::Uniform,
            Distribution::Zipfian => crate::gen::KeyKind::Zipfian,
            Distribution::Latest => crate::gen::KeyKind::Latest,
        }
    }
}

/// How the Insert Benchmark's statements are sent.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "lowercase")]
pub enum Statements {
    /// Server-side prepared statements with binary parameters.
    #[default]
    Prepared,
    /// SQL text with the values in it, as the reference client sends it.
    Literal,
}

/// What the generated rows hold.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "lowercase")]
pub enum DataMode {
    /// ibench's rows: `data` compressible to `ratio`, a clock-like `dateandtime`.
    #[default]
    Ibench,
    /// The reference client's: its `data` construction, one `dateandtime`
    /// per batch.
    Iibench,
}

/// The wait step's maintenance.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "lowercase")]
pub enum MaintenanceStyle {
    /// Maintenance, then `wait_seconds` of sleep.
    #[default]
    Ibench,
    /// The reference scripts' procedure per DBMS, the step lasting `wait_seconds` in all.
    Iibench,
}

/// A named bundle of statement choices.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "lowercase")]
pub enum Compat {
    /// ibench's own choices.
    #[default]
    Ibench,
    /// The reference client's (iibench.py and its scripts).
    Iibench,
}

impl Compat {
    /// The choices this bundle makes: (parameter, value).
    pub fn bundle(self) -> Vec<(&'static str, Value)> {
        match self {
            Compat::Ibench => Vec::new(),
            Compat::Iibench => vec![
                ("server_keys", Value::from(true)),
                ("statements", Value::from("literal")),
                ("data", Value::from("iibench")),
                ("lx_rows", Value::from(100)),
                ("maintenance", Value::from("iibench")),
            ],
        }
    }
}

/// What verify checks after write steps and at the end of a run.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "lowercase")]
pub enum VerifyMode {
    /// Key bounds (one row at each end of the primary key) and sampled rows
    /// after each write step; exact counts at the end of the run.
    #[default]
    Quick,
    /// Exact counts, bounds and sampled rows after every write step.
    Full,
    /// Nothing.
    Off,
}

impl VerifyMode {
    /// Its name, as configured.
    pub fn name(self) -> &'static str {
        match self {
            VerifyMode::Quick => "quick",
            VerifyMode::Full => "full",
            VerifyMode::Off => "off",
        }
    }
}

/// The preset names, smallest first.
pub const PRESETS: [&str; 7] = [
    "quick",
    "small-1",
    "small-4",
    "large-12-cpu",
    "large-12-io",
    "kv-quick",
    "universal-compression",
];

impl Config {
    /// The configuration of preset `name`, on SQLite `db`.
    pub fn preset(name: &str) -> Result<Config> {
        // (clients, l.i0, l.i1, l.i2, query seconds, wait seconds) per reference.md §1.
        if let Some(kv) = Self::kv_preset(name) {
            return Ok(kv);
        }
        let (clients, n0, n1, n2, query_seconds, wait_seconds) = match name {
            "quick" => (1, 100_000, 20_000, 5_000, 3.0, Some(1.0)),
            "small-1" => (1, 30_000_000, 40_000_000, 10_000_000, 1800.0, None),
            "small-4" => (4, 8_000_000, 10_000_000, 2_500_000, 1800.0, None),
            "large-12-cpu" => (12, 10_000_000, 16_000_000, 4_000_000, 1800.0, None),
            "large-12-io" => (12, 300_000_000, 4_000_000, 1_000_000, 1800.0, None),
            _ => {
                return Err(Error::config(
                    "preset",
                    format!("unknown preset {name:?}; expected one of {}", PRESETS.join(", ")),
                ))
            }
        };
        Ok(Config {
            db: String::new(),
            preset: name.into(),
            steps: STANDARD_STEPS.iter().map(|s| s.to_string()).collect(),
            clients,
            shared_table: false,
            rows_l_i0: n0,
            rows_l_i1: n1,
            rows_l_i2: n2,
            rows_per_commit_l_i0: 100,
            rows_per_commit_l_i1: 50,
            rows_per_commit_l_i2: 5,
            rows_per_commit_q: 50,
            delete_per_insert: true,
            secondary_indexes: 3,
            query_seconds,
            wait_seconds,
            data_length: [10, 20],
            ratio: 0.5,
            seed: 0,
            server_keys: false,
            statements: Statements::Prepared,
            data: DataMode::Ibench,
            data_random_pct: 50,
            lx_rows: 0,
            maintenance: MaintenanceStyle::Ibench,
            reset_master: false,
            compat: Compat::Ibench,
            max_seconds: None,
            interval_seconds: 1.0,
            verify_sample: 100,
            verify: VerifyMode::Quick,
            max_delete_lag: 8,
            label: None,
            password_file: None,
            num: 1_000_000,
            key_size: 16,
            value_size: [100, 100],
            value_alphabet: crate::gen::Alphabet::Binary,
            value_source: crate::gen::ValueSource::PerKey,
            batch_size: 1,
            threads: 1,
            writes: None,
            overwritesome_writes: None,
            reads: None,
            duration: None,
            seek_nexts: 10,
            writer_rate: 10_000,
            distribution: Distribution::Uniform,
            zipf_theta: 0.99,
            pacing: Pacing::Precise,
            shard: None,
            start_at: None,
            step_options: BTreeMap::new(),
        })
    }

    /// A key/value preset: `kv-quick` (every key/value step, 100,000 keys,
    /// seconds) or `universal-compression` (the seeds' sequence at 2M keys
    /// of 400-byte values compressible to 0.5).
    fn kv_preset(name: &str) -> Option<Config> {
        if !["kv-quick", "universal-compression"].contains(&name) {
            return None;
        }
        let mut c = Config::preset("quick").expect("quick exists");
        c.preset = name.into();
        let steps: &[&str] = match name {
            "kv-quick" => {
                c.num = 100_000;
                &[
                    "fillseq",
                    "overwrite",
                    "readrandom",
                    "seekrandom",
                    "readwhilewriting",
                    "flush",
                    "waitforcompaction",
                ]
            }
            "universal-compression" => {
                // The steps as benchmark.sh runs them (fillseq without the WAL).
                c.step_options = BENCHMARK_SH_STEP_OPTIONS
                    .iter()
                    .map(|(step, options)| (step.to_string(), options.to_string()))
                    .collect();
                c.num = 2_000_000;
                c.value_size = [400, 400];
                // db_bench's values: the seed's compressed sizes and zstd's cost.
                c.value_alphabet = crate::gen::Alphabet::Printable;
                c.overwritesome_writes = Some(200_000);
                c.duration = Some(60.0);
                &["fillseq", "overwritesome", "waitforcompaction", "overwriteandwait"]
            }
            _ => return None,
        };
        c.steps = steps.iter().map(|s| s.to_string()).collect();
        Some(c)
    }

    /// Resolves a configuration: preset `overrides["preset"]` (default
    /// "quick"), then each override in turn. An unknown key is an error
    /// naming it.
    pub fn resolve(layers: &[Map<String, Value>]) -> Result<Config> {
        let preset = layers
            .iter()
            .rev()
            .find_map(|l| l.get("preset"))
            .map(|v| {
                v.as_str()
                    .map(str::to_owned)
                    .ok_or_else(|| Error::config("preset", "must be a string"))
            })
            .transpose()?
            .unwrap_or_else(|| "quick".into());
        let base = Config::preset(&preset)?;
        let Value::Object(base) = serde_json::to_value(&base).expect("a config serializes") else {
            unreachable!("a config is an object")
        };
        let mut merged = base.clone();
        for layer in layers {
            for (key, value) in layer {
                if !merged.contains_key(key) {
                    return Err(Error::config(key, "unknown parameter"));
                }
                merged.insert(key.clone(), value.clone());
            }
        }
        // A compat bundle sets the choices no layer gave explicitly.
        if let Some(compat) = merged.get("compat").cloned() {
            let compat: Compat = serde_json::from_value(compat.clone()).map_err(|_| {
                Error::config(
                    "compat",
                    format!("{compat} is not valid here: expected ibench or iibench"),
                )
            })?;
            for (key, value) in compat.bundle() {
                if !layers.iter().any(|l| l.contains_key(key)) {
                    merged.insert(key.to_string(), value);
                }
            }
        }
        let config: Config = serde_json::from_value(Value::Object(merged.clone())).map_err(|e| {
            // serde does not say which field failed: find it by trying each
            // given value alone on the preset.
            let culprit = merged.iter().find(|(key, value)| {
                let mut one = base.clone();
                one.insert((*key).clone(), (*value).clone());
                serde_json::from_value::<Config>(Value::Object(one)).is_err()
            });
            match culprit {
                Some((key, value)) => Error::config(key, format!("{value} is not valid here: {e}")),
                None => Error::config("config", e.to_string()),
            }
        })?;
        config.check()?;
        Ok(config)
    }

    /// Reads a TOML file of parameters (the same names as the flags, with `_`).
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

    /// The parsed steps.
    pub fn parsed_steps(&self) -> Result<Vec<Step>> {
        self.steps.iter().map(|s| Step::parse(s)).collect()
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

    /// The wait step's length in seconds: `wait_seconds`, else the
    /// reference's X = min(1200, 60 + M / 10⁶) for the M rows l.i0 loads in
    /// all (every client's).
    pub fn wait(&self) -> f64 {
        let loaded = self.rows_l_i0 as f64 * self.clients as f64;
        self.wait_seconds.unwrap_or((60.0 + loaded / 1e6).min(1200.0))
    }

    /// Checks every value; errors name the parameter.
    pub fn check(&self) -> Result<()> {
        let steps = self.parsed_steps()?;
        if steps.is_empty() {
            return Err(Error::config("steps", "no step to run"));
        }
        for (i, s) in self.steps.iter().enumerate() {
            if self.steps[..i].contains(s) {
                return Err(Error::config(
                    "steps",
                    format!("{s} appears twice; results are keyed by step name"),
                ));
            }
        }
        self.check_step_options()?;
        if self.clients == 0 || self.clients > 1024 {
            return Err(Error::config(
                "clients",
                format!("must be in [1, 1024], got {}", self.clients),
            ));
        }
        for (name, rows) in [
            ("rows_l_i0", self.rows_l_i0),
            ("rows_l_i1", self.rows_l_i1),
            ("rows_l_i2", self.rows_l_i2),
        ] {
            if rows == 0 {
                return Err(Error::config(name, "must be at least 1"));
            }
        }
        for (name, rpc) in [
            ("rows_per_commit_l_i0", self.rows_per_commit_l_i0),
            ("rows_per_commit_l_i1", self.rows_per_commit_l_i1),
            ("rows_per_commit_l_i2", self.rows_per_commit_l_i2),
            ("rows_per_commit_q", self.rows_per_commit_q),
        ] {
            if rpc == 0 || rpc > 4096 {
                return Err(Error::config(name, format!("must be in [1, 4096], got {rpc}")));
            }
        }
        if self.secondary_indexes > 3 {
            return Err(Error::config(
                "secondary_indexes",
                format!("must be 0 to 3, got {}", self.secondary_indexes),
            ));
        }
        if self.secondary_indexes == 0 {
            if let Some(q) = steps.iter().find(|s| {
                matches!(
                    s,
                    Step::Query {
                        kind: QueryKind::Range,
                        ..
                    }
                )
            }) {
                return Err(Error::config(
                    "secondary_indexes",
                    format!("{q} runs range queries on the secondary indexes: it needs at least 1, got 0"),
                ));
            }
        }
        if self.max_delete_lag == 0 {
            return Err(Error::config(
                "max_delete_lag",
                "must be at least 1 commit (the inserter must be able to insert before the deleter deletes)",
            ));
        }
        positive("query_seconds", Some(self.query_seconds))?;
        positive("interval_seconds", Some(self.interval_seconds))?;
        positive("max_seconds", self.max_seconds)?;
        if let Some(w) = self.wait_seconds {
            if !(w.is_finite() && w >= 0.0) {
                return Err(Error::config("wait_seconds", format!("must be ≥ 0, got {w}")));
            }
        }
        let [min, max] = self.data_length;
        crate::gen::Length::Uniform { min, max }.check("data_length")?;
        crate::gen::Compressible::new(self.ratio, crate::gen::Alphabet::Text, "ratio")?;
        self.check_kv()?;
        if self.data_random_pct > 100 {
            return Err(Error::config(
                "data_random_pct",
                format!("must be 0 to 100, got {}", self.data_random_pct),
            ));
        }
        self.check_shard(&steps)?;
        if self.server_keys && self.shared_table && self.clients > 1 {
            return Err(Error::config(
                "server_keys",
                "cannot be combined with a shared table and several clients: the client could not know which keys the server gave each row",
            ));
        }
        Ok(())
    }

    /// A shard of several needs clients of its own, each with its own table.
    fn check_shard(&self, steps: &[Step]) -> Result<()> {
        if let Some(t) = self.start_at {
            if !(t.is_finite() && t > 0.0) {
                return Err(Error::config("start_at", format!("must be Unix seconds, got {t}")));
            }
        }
        let shard = self.shard()?;
        if shard.count == 1 {
            return Ok(());
        }
        if shard.count > self.clients {
            return Err(Error::config(
                "shard",
                format!("{shard}: {} shards cannot split {} clients", shard.count, self.clients),
            ));
        }
        if self.shared_table {
            return Err(Error::config(
                "shard",
                "cannot split clients that share one table: its window is one counter, kept by one process",
            ));
        }
        if let Some(kv) = steps.iter().find(|s| s.kv().is_some()) {
            return Err(Error::config(
                "shard",
                format!("{kv} is a key/value step: its threads share one key space, kept by one process; shards split the Insert Benchmark's clients"),
            ));
        }
        Ok(())
    }

    /// The shard this process runs ([`Shard::WHOLE`] when none is set).
    pub fn shard(&self) -> Result<Shard> {
        self.shard.as_deref().map_or(Ok(Shard::WHOLE), Shard::parse)
    }

    fn check_kv(&self) -> Result<()> {
        if self.num == 0 {
            return Err(Error::config("num", "must be at least 1"));
        }
        crate::gen::check_key_size(self.key_size as usize)?;
        if self.key_size > 1024 {
            return Err(Error::config(
                "key_size",
                format!("must be at most 1024, got {}", self.key_size),
            ));
        }
        let [min, max] = self.value_size;
        crate::gen::Length::Uniform { min, max }.check("value_size")?;
        if max > 64 << 20 {
            return Err(Error::config(
                "value_size",
                format!("must be at most 64 MiB, got {max}"),
            ));
        }
        if self.batch_size == 0 || self.batch_size > 100_000 {
            return Err(Error::config(
                "batch_size",
                format!("must be in [1, 100000], got {}", self.batch_size),
            ));
        }
        if self.threads == 0 || self.threads > 1024 {
            return Err(Error::config(
                "threads",
                format!("must be in [1, 1024], got {}", self.threads),
            ));
        }
        if self.threads as u64 > self.num {
            return Err(Error::config(
                "threads",
                format!("{} threads cannot split {} keys", self.threads, self.num),
            ));
        }
        for (name, n) in [
            ("writes", self.writes),
            ("overwritesome_writes", self.overwritesome_writes),
            ("reads", self.reads),
        ] {
            if n == Some(0) {
                return Err(Error::config(name, "must be at least 1"));
            }
        }
        positive("duration", self.duration)?;
        if self.writer_rate == 0 {
            return Err(Error::config("writer_rate", "must be at least 1 key/s"));
        }
        if !(self.zipf_theta.is_finite() && self.zipf_theta > 0.0) {
            return Err(Error::config(
                "zipf_theta",
                format!("must be > 0, got {}", self.zipf_theta),
            ));
        }
        Ok(())
    }

    /// Step options name key/value steps, and only embedded RocksDB takes them.
    fn check_step_options(&self) -> Result<()> {
        for (step, options) in &self.step_options {
            if !matches!(Step::parse(step), Ok(Step::Kv(_))) {
                return Err(Error::config(
                    "step_options",
                    format!("{step:?} is not a key/value step (fillseq, overwrite, ...)"),
                ));
            }
            if options.split('&').all(|o| o.is_empty()) {
                return Err(Error::config("step_options", format!("{step}: no options given")));
            }
        }
        let rocksdb =
            self.db.starts_with("rocksdb:") || (self.db.is_empty() && cfg!(feature = "rocksdb") && self.kv_only());
        if !self.step_options.is_empty() && !rocksdb {
            return Err(Error::config(
                "step_options",
                format!(
                    "options per step reopen embedded RocksDB (a rocksdb: DSN); {} is opened once per run",
                    if self.db.is_empty() {
                        "the default SQLite file"
                    } else {
                        self.db.split(':').next().unwrap_or("this database")
                    }
                ),
            ));
        }
        Ok(())
    }

    /// True when every step is a key/value step.
    pub fn kv_only(&self) -> bool {
        self.parsed_steps()
            .map(|s| s.iter().all(|s| s.kv().is_some()))
            .unwrap_or(false)
    }

    /// The number of tables.
    pub fn tables(&self) -> u32 {
        if self.shared_table {
            1
        } else {
            self.clients
        }
    }
}

/// `[min, max]`, or one number for a fixed length.
fn length_pair<'de, D: serde::Deserializer<'de>>(d: D) -> std::result::Result<[u32; 2], D::Error> {
    #[derive(Deserialize)]
    #[serde(untagged)]
    enum Either {
        One(u32),
        Two([u32; 2]),
    }
    Ok(match Either::deserialize(d)? {
        Either::One(n) => [n, n],
        Either::Two(pair) => pair,
    })
}

fn positive(name: &str, value: Option<f64>) -> Result<()> {
    match value {
        Some(v) if !(v.is_finite() && v > 0.0) => Err(Error::config(name, format!("must be > 0, got {v}"))),
        _ => Ok(()),
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
        for p in PRESETS {
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
}
