//! Connectors: one module per database, each opening sessions (one connection
//! used by one thread). Nothing here knows about steps or timing.

pub(crate) mod dsn;
pub use dsn::with_options;
mod ini;
#[cfg(test)]
mod kv_contract;
mod maintain;
mod mysql;
mod null;
mod postgres;
#[cfg(feature = "rocksdb")]
mod rocks;
mod secrets;
mod sql;
mod sqlite;
mod stream;
mod sysbench;
mod tls;

use crate::error::{DbErrorKind, Error, Result};
use crate::gen::{KvBatch, RangeQuery, Row, Rows};
use crate::metrics::{Counter, EngineCounters, Gauge, NamedThread, Setting, WaitReading};
use crate::stop::{Interrupter, Stop};
pub(crate) use maintain::{per_table, privileged};

/// A session's prepared statements by their text, looked up on every
/// operation: foldhash, not SipHash, over the statement's ~150 bytes
/// (SipHash was 6% of a PostgreSQL query's client instructions).
pub(crate) type Statements<S> = std::collections::HashMap<String, S, foldhash::fast::FixedState>;

/// `sql`'s statement from `cache`, made by `prepare` the first time.
pub(crate) fn prepared_once<S: Clone>(
    cache: &mut Statements<S>,
    sql: &str,
    prepare: impl FnOnce(&str) -> Result<S>,
) -> Result<S> {
    if let Some(s) = cache.get(sql) {
        return Ok(s.clone());
    }
    let s = prepare(sql)?;
    cache.insert(sql.to_string(), s.clone());
    Ok(s)
}

/// The prepared writes of the table a session last wrote, found per batch
/// without hashing a statement's text: its inserts by rows, its delete.
pub(crate) struct TableWrites<S> {
    table: String,
    /// The inserts by rows.
    pub(crate) inserts: std::collections::HashMap<usize, S>,
    pub(crate) delete: Option<S>,
}

impl<S> Default for TableWrites<S> {
    fn default() -> Self {
        TableWrites {
            table: String::new(),
            inserts: std::collections::HashMap::new(),
            delete: None,
        }
    }
}

impl<S> TableWrites<S> {
    /// These statements, those of another table first given to `forget`
    /// (a client closes them on the server).
    pub(crate) fn of(&mut self, table: &str, forget: impl FnMut(S)) -> &mut Self {
        if self.table != table {
            self.take().for_each(forget);
            self.table = table.to_string();
        }
        self
    }

    /// Every statement held, forgetting them (DDL may drop their table).
    pub(crate) fn take(&mut self) -> impl Iterator<Item = S> {
        let writes = std::mem::take(self);
        writes.inserts.into_values().chain(writes.delete)
    }
}

/// One generated row's insert parameters (`P`: a session client's
/// parameter type): its seven columns, less the key when the server makes it.
pub(crate) struct RowParams<P> {
    /// 1 with server keys, else 0.
    pub(crate) skip: usize,
    pub(crate) columns: [P; 7],
}

impl<P> AsRef<[P]> for RowParams<P> {
    fn as_ref(&self) -> &[P] {
        &self.columns[self.skip..]
    }
}

pub use mysql::MysqlConnector;
pub use null::NullConnector;
pub use postgres::PostgresConnector;
#[cfg(feature = "rocksdb")]
pub use rocks::RocksdbConnector;
pub use secrets::{redact, redact_setting};
pub use sqlite::SqliteConnector;
pub use sysbench::{
    table_name as sb_table_name, SbRowRead, SbSession, SbTableFacts, SqlValue, SqlValues, LOAD_ROWS_PER_INSERT,
};

/// A table's key bounds and, when asked for, its row count, as the database reports them.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct Bounds {
    /// `COUNT(*)`, when counted (a full scan: verify counts only when asked to).
    pub count: Option<u64>,
    /// The smallest primary key, if any row.
    pub min: Option<u64>,
    /// The largest primary key, if any row.
    pub max: Option<u64>,
}

/// How much room a database takes: the database as its DBMS defines it,
/// the benchmark's tables alone, and the server's whole data directory.
/// Each is None when unknown (an embedded database in memory, a remote
/// server's files).
#[derive(Clone, Debug, Default, PartialEq, Eq)]
pub struct Sizes {
    /// PostgreSQL `pg_database_size`; MySQL the schema's directory (InnoDB)
    /// or `.rocksdb` (MyRocks); SQLite the file and its WAL; RocksDB its directory.
    pub database: Option<u64>,
    /// The benchmark's tables: PostgreSQL `pg_total_relation_size`, InnoDB
    /// their `.ibd` files, MyRocks `information_schema.tables`, SQLite its used pages.
    pub tables: Option<u64>,
    /// The whole data directory of a local server (its files' sizes, like `du -b`).
    pub datadir: Option<u64>,
    /// How they were measured, when it matters (a fallback to estimates).
    pub note: Option<String>,
}

/// A database that can hold Insert Benchmark tables.
pub trait Connector: Send + Sync {
    /// The DBMS name recorded with results ("sqlite", "null").
    fn dbms(&self) -> &'static str;
    /// The target as recorded: the DSN without any password.
    fn target(&self) -> String;
    /// The server or library version.
    fn version(&self) -> Result<String>;
    /// Settings the connector applied (name, value), recorded with the run.
    fn settings(&self) -> Vec<(String, String)>;
    /// Opens a session: one connection for one thread.
    fn session(&self) -> Result<Box<dyn Session>>;
    /// How the sessions opened from now on write the tables.
    fn set_spec(&mut self, _spec: SessionSpec) {}
    /// How much room the database takes now; `tables` names the benchmark's tables.
    fn sizes(&self, tables: &[String]) -> Sizes;
    /// The local file or directory holding the data (the database's file,
    /// a local server's data directory), for the disk it lives on; None for
    /// remote or in-memory databases.
    fn data_path(&self) -> Option<std::path::PathBuf> {
        None
    }
    /// Names of the server's processes when the server runs on this host
    /// (their CPU and memory are measured apart from the client's); empty for
    /// embedded or remote databases.
    fn server_processes(&self) -> Vec<&'static str> {
        Vec::new()
    }
    /// Whether each operation is a round trip to a server process (not an
    /// embedded database): the host's idle settings then cost every one.
    fn over_network(&self) -> bool {
        false
    }
    /// The server's main process on this host (the postmaster, mysqld),
    /// whose descendants are its other processes: with it, another server
    /// of the same name here is not measured as this one. None when it
    /// cannot be told (then every process of the server's names counts).
    fn server_pid(&self) -> Option<i32> {
        None
    }
    /// The database's configuration (scope "server"): PostgreSQL's
    /// `pg_settings`, MySQL's `SHOW GLOBAL VARIABLES`, SQLite's pragmas,
    /// RocksDB's OPTIONS file.
    fn configuration(&self) -> Result<Vec<Setting>> {
        Ok(self
            .settings()
            .into_iter()
            .map(|(k, v)| Setting::server(k, v, "ibench"))
            .collect())
    }
    /// Opens a key/value session (the key/value steps), when the database can
    /// be one: SQL databases through a (key, value) table.
    fn kv_session(&self) -> Result<Box<dyn KvSession>> {
        Err(Error::config(
            "db",
            format!("{} does not run the key/value steps", self.dbms()),
        ))
    }
    /// Opens a session of the sysbench steps (its `sbtestN` tables), when
    /// the database can hold them.
    fn sb_session(&self) -> Result<Box<dyn SbSession>> {
        Err(Error::config(
            "db",
            format!(
                "{} does not run the sysbench steps: they need SQL (SQLite, PostgreSQL, MySQL or MariaDB)",
                self.dbms()
            ),
        ))
    }
    /// The storage engine's counters now, when the engine exposes them (RocksDB).
    fn engine_counters(&self) -> Option<EngineCounters> {
        None
    }
    /// A reader of the database's own counters and gauges, with a
    /// connection of its own; `tables` names the benchmark's tables (their
    /// per-table statistics). None for a database that has none (null,
    /// SQLite in memory).
    fn counters(&self, _tables: &[String]) -> Result<Option<Box<dyn ServerCounters>>> {
        Ok(None)
    }
    /// True when the database only runs the key/value steps (no tables).
    fn kv_only(&self) -> bool {
        false
    }
    /// Why every read of the key/value table costs far more than a read
    /// should, when its options make it so (RocksDB's vector memtable);
    /// None otherwise.
    fn read_caveat(&self) -> Option<String> {
        None
    }
    /// False for a database that keeps nothing it is given (null): verify skips it.
    fn stores_data(&self) -> bool {
        true
    }
    /// True for a database whose operations take simulated time, not real
    /// time (the null connector's `time=simulated`): the run's threads then
    /// run on [`crate::clock::SimulatedClock`].
    fn simulated_time(&self) -> bool {
        false
    }
    /// Server settings a killed ibench had left changed, put back as this
    /// connector opened: a sentence each, naming the setting and both
    /// values. The run records them with its warnings.
    fn recovered(&self) -> Vec<String> {
        Vec::new()
    }
}

/// Reads the database's own counters (per step, in `counters.parquet`) and
/// gauges (per interval, in `gauges.parquet`), on a connection of its own.
pub trait ServerCounters: Send {
    /// The cumulative counters now, once the connector's earlier sessions
    /// have handed the server their statistics (PostgreSQL's backends flush
    /// theirs as they exit); at a step's end (`at_end`) also the engine's
    /// status text.
    fn counters(&mut self, at_end: bool) -> Result<Vec<Counter>>;
    /// The gauges now (history list length, dead tuples, L0 files, ...).
    fn gauges(&mut self) -> Result<Vec<Gauge>>;
    /// Where this database's waits come from (`pg_stat_activity`,
    /// `performance_schema`, `rocksdb`); None when it reports none; an
    /// error saying why when it could but cannot now (performance_schema off).
    fn wait_source(&mut self) -> Option<std::result::Result<&'static str, String>> {
        None
    }
    /// What the server's sessions wait on now: sampled or cumulative
    /// (see [`WaitReading`]); only called when [`ServerCounters::wait_source`] is Ok.
    fn waits(&mut self) -> Result<WaitReading> {
        Ok(WaitReading::Sampled(Vec::new()))
    }
    /// The server's threads (or processes) it names itself, now: what each
    /// is, and whether it serves a client, works in the background, or is
    /// this reader's own session. Empty where the server names none.
    fn thread_roles(&mut self) -> Result<Vec<NamedThread>> {
        Ok(Vec::new())
    }
}

/// The table of the key/value steps.
pub const KV_TABLE: &str = "kv";

/// One connection of a key/value store, used by one thread. Keys and values
/// are bytes; keys are ordered bytewise.
pub trait KvSession: Send {
    /// Drops `table` if it exists and creates it empty, for keys of `key_size` bytes.
    fn create(&mut self, table: &str, key_size: usize) -> Result<()>;
    /// Writes the pairs of `batch` (a later pair wins over an earlier one
    /// with the same key) in one commit.
    fn put(&mut self, table: &str, batch: &KvBatch) -> Result<()>;
    /// Reads `key` into `value` (cleared first); false when absent.
    fn get(&mut self, table: &str, key: &[u8], value: &mut Vec<u8>) -> Result<bool>;
    /// A point read whose value the caller does not keep (readrandom): the
    /// engine finds the value as [`KvSession::get`] does, and a client that
    /// can leave it where the engine has it does (RocksDB's pinned slice, as
    /// db_bench reads). The default gets it into `scratch`.
    fn probe(&mut self, table: &str, key: &[u8], scratch: &mut Vec<u8>) -> Result<bool> {
        self.get(table, key, scratch)
    }
    /// Seeks to the first key ≥ `start` and reads up to `limit` pairs in key
    /// order into `out` (cleared first); returns how many.
    fn scan(&mut self, table: &str, start: &[u8], limit: usize, out: &mut KvBatch) -> Result<usize>;
    /// Seeks to the last key ≤ `start` and reads up to `limit` pairs in
    /// descending key order into `out` (cleared first); returns how many.
    fn scan_reverse(&mut self, table: &str, start: &[u8], limit: usize, out: &mut KvBatch) -> Result<usize>;
    /// Reads the keys of `keys` (their values ignored) and appends the pairs
    /// found to `out` (cleared first), in the order of `keys`; returns how
    /// many were found. The default reads them one by one.
    fn multi_get(&mut self, table: &str, keys: &KvBatch, out: &mut KvBatch) -> Result<usize> {
        out.clear();
        let mut value = Vec::new();
        for i in 0..keys.len() {
            if self.get(table, keys.key(i), &mut value)? {
                out.push_raw(keys.key(i), &value);
            }
        }
        Ok(out.len())
    }
    /// Deletes the keys of `keys` (their values ignored; absent keys are no
    /// error) in one commit.
    fn delete_keys(&mut self, table: &str, keys: &KvBatch) -> Result<()>;
    /// Merges the pairs of `batch` with the put merge operator (the last
    /// operand wins) in one commit. The default is [`KvSession::put`], which
    /// leaves the same pairs; RocksDB writes merge operands.
    fn merge(&mut self, table: &str, batch: &KvBatch) -> Result<()> {
        self.put(table, batch)
    }
    /// The number of pairs.
    fn count(&mut self, table: &str) -> Result<u64>;
    /// Makes written pairs durable in the table's files (RocksDB: flush the
    /// memtable; SQL: a checkpoint). Returns what it skipped, and why (a
    /// privilege the user lacks).
    fn flush(&mut self, table: &str, stop: &Stop) -> Result<Vec<String>>;
    /// Waits until background work is done (RocksDB: no compaction pending
    /// or running; SQL: the wait step's maintenance), or a stop is
    /// requested. Returns what it skipped, and why.
    fn wait_for_compaction(&mut self, table: &str, stop: &Stop) -> Result<Vec<String>>;
    /// Cancels this session's running statement from another thread.
    fn interrupter(&self) -> Option<Interrupter> {
        None
    }
}

/// The kind a backend's one table of error kinds gives `code` (a
/// SQLSTATE, an error number); `Other` when the table has none.
pub(crate) fn kind_of<C: PartialEq>(table: &[(C, DbErrorKind)], code: &C) -> DbErrorKind {
    table
        .iter()
        .find(|(c, _)| c == code)
        .map_or(DbErrorKind::Other, |(_, k)| *k)
}

/// True for a host name or address of this machine.
pub(crate) fn is_local(host: &str) -> bool {
    host.starts_with('/') || ["127.0.0.1", "localhost", "::1", "[::1]"].contains(&host) || host.starts_with("127.")
}

/// The size of the files under `path` (their lengths, like `du -b`); None
/// when `path` cannot be read.
pub(crate) fn files_size(path: &std::path::Path) -> Option<u64> {
    let meta = std::fs::symlink_metadata(path).ok()?;
    if !meta.is_dir() {
        return Some(meta.len());
    }
    let mut total = 0;
    for entry in std::fs::read_dir(path).ok()? {
        // A file the server deletes while we walk (an obsolete WAL or SST) is simply gone.
        let Ok(entry) = entry else { continue };
        let Ok(meta) = entry.metadata() else { continue };
        total += if meta.is_dir() {
            files_size(&entry.path()).unwrap_or(0)
        } else {
            meta.len()
        };
    }
    Some(total)
}

/// How a connector's sessions write the benchmark's tables.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
pub struct SessionSpec {
    /// The server assigns the keys (AUTO_INCREMENT, a BIGSERIAL caching
    /// 1000 values, SQLite's rowid); deletes remove the oldest rows with
    /// `ORDER BY transactionid LIMIT n`.
    pub server_keys: bool,
    /// Statements as text with their values in them, as the reference
    /// client sends them (PostgreSQL's queries through SQL PREPARE/EXECUTE);
    /// else server-side prepared statements with binary parameters.
    pub literal: bool,
}

/// What the wait step asks of the database.
pub struct Maintenance<'a> {
    /// The benchmark's tables.
    pub tables: &'a [String],
    /// The reference scripts' procedure (else ibench's).
    pub reference: bool,
    /// With the reference's procedure on MySQL: `RESET MASTER` first.
    pub reset_master: bool,
    /// When the wait step is meant to end (the reference's procedure spans it).
    pub until: std::time::Instant,
    /// Waits end early when a stop is requested.
    pub stop: &'a Stop,
}

/// One connection, used by one thread.
pub trait Session: Send {
    /// Drops `table` if it exists and creates it empty, primary key only.
    fn create_table(&mut self, table: &str) -> Result<()>;
    /// Gets ready to work on `table` before a step's clock starts (PostgreSQL:
    /// learns where its sequence is, prepares the reference's queries).
    fn prepare(&mut self, _table: &str) -> Result<()> {
        Ok(())
    }
    /// Creates the first `count` secondary indexes of `table`.
    fn create_indexes(&mut self, table: &str, count: usize) -> Result<()>;
    /// Inserts `rows` in one transaction (without `transactionid` when the
    /// server assigns keys); returns the first key the server gave them
    /// (consecutive keys), or None with client keys.
    fn insert(&mut self, table: &str, rows: &Rows) -> Result<Option<u64>>;
    /// Deletes `n` rows in one transaction: with client keys those of
    /// `[from, from + n)`, with server keys the `n` oldest from key `from`.
    /// Returns how many.
    fn delete(&mut self, table: &str, from: u64, n: u64) -> Result<u64>;
    /// Runs a covering range query (through the index when `indexed`); returns rows read.
    fn range_query(&mut self, table: &str, query: &RangeQuery, indexed: bool) -> Result<usize>;
    /// Runs a primary-key multi-get; returns rows found.
    fn point_query(&mut self, table: &str, keys: &[u64]) -> Result<usize>;
    /// The smallest (or, with `max`, largest) key, as the reference asks it
    /// (`select min(transactionid) from t`).
    fn key_extreme(&mut self, table: &str, max: bool) -> Result<Option<u64>>;
    /// The maintenance of the wait step; waits it does end early when a stop
    /// is requested. Settings it changes are restored before it returns, on
    /// every path. Returns what it skipped, and why (a privilege the user lacks).
    fn maintain(&mut self, m: &Maintenance<'_>) -> Result<Vec<String>>;
    /// The smallest and largest key through the primary key (one row each),
    /// and the row count when `count` (a full scan); `None` when the
    /// database keeps no rows.
    fn bounds(&mut self, table: &str, count: bool) -> Result<Option<Bounds>>;
    /// The stored rows with these keys (for verify), in key order.
    fn rows(&mut self, table: &str, keys: &[u64]) -> Result<Vec<Row>>;
    /// Cancels this session's running statement from another thread.
    fn interrupter(&self) -> Option<Interrupter> {
        None
    }
}

/// Opens the connector a DSN names: `sqlite:PATH`, `sqlite::memory:`,
/// `postgres://user:pass@host:port/db` (or `host=... user=...`),
/// `mysql://user:pass@host:port/db?engine=innodb|rocksdb`, `null:[?options]`,
/// `rocksdb:PATH[?options]` (the `rocksdb` feature).
pub fn open(dsn: &str) -> Result<Box<dyn Connector>> {
    open_with_password(dsn, None)
}

/// The password in the first line of `path` (a `--password-file`).
pub fn read_password_file(path: &std::path::Path) -> Result<String> {
    let text = std::fs::read_to_string(path)
        .map_err(|e| Error::config("password_file", format!("cannot read {}: {e}", path.display())))?;
    let line = text.lines().next().unwrap_or("");
    if line.is_empty() {
        return Err(Error::config(
            "password_file",
            format!("{} is empty: its first line is the password", path.display()),
        ));
    }
    Ok(line.to_string())
}

/// Whether `dsn` is libpq's key=value form (`host=127.0.0.1 user=postgres
/// dbname=test`, `application_name=x service=bench`): its first word is a
/// keyword (letters, digits, `_`) followed by `=`. Every other DSN starts
/// with a scheme and a colon (`sqlite:`, `rocksdb:PATH?k=v`, `mysql://`).
fn is_key_value(dsn: &str) -> bool {
    let dsn = dsn.trim_start();
    let key = dsn.split(['=', ' ', '\t']).next().unwrap_or("");
    !key.is_empty()
        && key.chars().all(|c| c.is_ascii_alphanumeric() || c == '_')
        && dsn[key.len()..].trim_start().starts_with('=')
}

/// As [`open`], with a password given apart from the DSN (a password
/// file), used by PostgreSQL and MySQL/MariaDB when the DSN has none.
pub fn open_with_password(dsn: &str, password: Option<&str>) -> Result<Box<dyn Connector>> {
    if is_key_value(dsn) {
        return PostgresConnector::with_password(dsn, password)
            .map(|c| Box::new(c) as Box<dyn Connector>)
            .map_err(|e| hide_password(dsn, e));
    }
    let (scheme, rest) = dsn.split_once(':').ok_or_else(|| {
        Error::config(
            "db",
            format!(
                "{:?} is not a DSN; expected sqlite:PATH, sqlite::memory:, postgres://..., mysql://..., rocksdb:PATH or null:",
                redact(dsn)
            ),
        )
    })?;
    if password.is_some() && !matches!(scheme, "postgres" | "postgresql" | "mysql" | "mariadb") {
        return Err(Error::config(
            "password_file",
            format!("{scheme} takes no password: a password file is for PostgreSQL and MySQL/MariaDB"),
        ));
    }
    let opened: Result<Box<dyn Connector>> = match scheme {
        "sqlite" => SqliteConnector::new(rest).map(|c| Box::new(c) as Box<dyn Connector>),
        "null" => NullConnector::new(rest).map(|c| Box::new(c) as Box<dyn Connector>),
        "postgres" | "postgresql" => {
            PostgresConnector::with_password(dsn, password).map(|c| Box::new(c) as Box<dyn Connector>)
        }
        #[cfg(feature = "rocksdb")]
        "rocksdb" => rocks::open(rest),
        #[cfg(not(feature = "rocksdb"))]
        "rocksdb" => Err(Error::config(
            "db",
            "this build of ibench has no RocksDB: it was built with --no-default-features (the `rocksdb` feature is on by default, and in the wheel)",
        )),
        "mysql" | "mariadb" => {
            let url = dsn.replacen("mariadb://", "mysql://", 1);
            MysqlConnector::with_password(&url, password).map(|c| Box::new(c) as Box<dyn Connector>)
        }
        _ => Err(Error::config(
            "db",
            format!(
                "unknown database scheme {scheme:?} in {:?}; expected sqlite, postgres, mysql, mariadb, rocksdb or null",
                redact(dsn)
            ),
        )),
    };
    opened.map_err(|e| hide_password(dsn, e))
}

/// A connector may quote the DSN in its error: never with the password.
fn hide_password(dsn: &str, e: Error) -> Error {
    let clean = |t: String| secrets::clean(dsn, &t);
    match e {
        Error::Database { target, message, kind } => Error::Database {
            target: clean(target),
            message: clean(message),
            kind,
        },
        Error::Config { name, message } => Error::Config {
            name,
            message: clean(message),
        },
        Error::Step { step, message } => Error::Step {
            step,
            message: clean(message),
        },
        other => other,
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn passwords_never_reach_an_error_message() {
        // Malformed DSNs of every form, each with a password: the error names the DSN, not the password.
        for dsn in [
            "oracle://bob:s3cret@host/x",
            "postgres://bob@127.0.0.1:1/x?password=s3cret&connect_timeout=oops",
            "host=127.0.0.1 port=notaport password='s3cret word' dbname=x",
            "mysql://bob:s3cret@127.0.0.1:1/x?engine=nonsense",
            "mysql://bob@127.0.0.1:1/x?password=s3cret&engine=nonsense",
        ] {
            let e = open(dsn).err().expect("an error").to_string();
            assert!(!e.contains("s3cret"), "{dsn}: {e}");
        }
    }

    #[test]
    fn any_libpq_keyword_first_makes_a_key_value_dsn() {
        for dsn in [
            "host=h dbname=d",
            "application_name=x host=h",
            "connect_timeout = 10 host=h",
            "  sslrootcert=/c/ca.pem host=h",
            "options='-c work_mem=8MB' host=h",
        ] {
            assert!(is_key_value(dsn), "{dsn}");
        }
        for dsn in [
            "rocksdb:/d?wal=off",
            "null:?latency=exp:1ms",
            "sqlite::memory:",
            "mysql://u@h/d?x=y",
            "nocolon",
        ] {
            assert!(!is_key_value(dsn), "{dsn}");
        }
    }

    #[test]
    fn malformed_and_unknown_dsns_are_errors_naming_db() {
        for bad in ["nocolon", "oracle://x", "sqlite:"] {
            let e = open(bad).err().expect("an error").to_string();
            assert!(e.starts_with("invalid db:"), "{e}");
        }
    }
}
