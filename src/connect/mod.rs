//! Connectors: one module per database, each opening sessions (one connection
//! used by one thread). Nothing here knows about steps or timing.

#[cfg(test)]
mod kv_contract;
mod mysql;
mod null;
mod postgres;
#[cfg(feature = "rocksdb")]
mod rocks;
mod sqlite;

use crate::error::{Error, Result};
use crate::gen::{KvBatch, RangeQuery, Row, Rows};
use crate::metrics::EngineCounters;
use std::ops::Range;

pub use mysql::MysqlConnector;
pub use null::NullConnector;
pub use postgres::PostgresConnector;
#[cfg(feature = "rocksdb")]
pub use rocks::RocksdbConnector;
pub use sqlite::SqliteConnector;

/// A table's row count and key bounds, as the database reports them.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct Bounds {
    /// `COUNT(*)`.
    pub count: u64,
    /// The smallest primary key, if any row.
    pub min: Option<u64>,
    /// The largest primary key, if any row.
    pub max: Option<u64>,
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
    /// Bytes the database occupies, when known.
    fn size_bytes(&self) -> Option<u64>;
    /// Names of the server's processes when the server runs on this host
    /// (their CPU and memory are measured apart from the client's); empty for
    /// embedded or remote databases.
    fn server_processes(&self) -> Vec<&'static str> {
        Vec::new()
    }
    /// The database's configuration as (name, value, source): PostgreSQL's
    /// `pg_settings`, MySQL's `SHOW GLOBAL VARIABLES`, SQLite's pragmas.
    fn configuration(&self) -> Result<Vec<(String, String, String)>> {
        Ok(self
            .settings()
            .into_iter()
            .map(|(k, v)| (k, v, "ibench".to_string()))
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
    /// The storage engine's counters now, when the engine exposes them (RocksDB).
    fn engine_counters(&self) -> Option<EngineCounters> {
        None
    }
    /// True when the database only runs the key/value steps (no tables).
    fn kv_only(&self) -> bool {
        false
    }
    /// False for a database that keeps nothing it is given (null): verify skips it.
    fn stores_data(&self) -> bool {
        true
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
    /// Seeks to the first key ≥ `start` and reads up to `limit` pairs in key
    /// order into `out` (cleared first); returns how many.
    fn scan(&mut self, table: &str, start: &[u8], limit: usize, out: &mut KvBatch) -> Result<usize>;
    /// The number of pairs.
    fn count(&mut self, table: &str) -> Result<u64>;
    /// Makes written pairs durable in the table's files (RocksDB: flush the
    /// memtable; SQL: a checkpoint).
    fn flush(&mut self, table: &str) -> Result<()>;
    /// Waits until background work is done (RocksDB: no compaction pending
    /// or running; SQL: the wait step's maintenance).
    fn wait_for_compaction(&mut self, table: &str) -> Result<()>;
}

/// True for a host name or address of this machine.
pub(crate) fn is_local(host: &str) -> bool {
    host.starts_with('/') || ["127.0.0.1", "localhost", "::1", "[::1]"].contains(&host) || host.starts_with("127.")
}

/// One connection, used by one thread.
pub trait Session: Send {
    /// Drops `table` if it exists and creates it empty, primary key only.
    fn create_table(&mut self, table: &str, server_keys: bool) -> Result<()>;
    /// Creates the first `count` secondary indexes of `table`.
    fn create_indexes(&mut self, table: &str, count: usize) -> Result<()>;
    /// Inserts `rows` in one transaction (without `transactionid` when the
    /// server assigns keys).
    fn insert(&mut self, table: &str, rows: &Rows, server_keys: bool) -> Result<()>;
    /// Deletes the rows with keys in `keys` in one transaction; returns how many.
    fn delete(&mut self, table: &str, keys: Range<u64>) -> Result<u64>;
    /// Runs a covering range query (through the index when `indexed`); returns rows read.
    fn range_query(&mut self, table: &str, query: &RangeQuery, indexed: bool) -> Result<usize>;
    /// Runs a primary-key multi-get; returns rows found.
    fn point_query(&mut self, table: &str, keys: &[u64]) -> Result<usize>;
    /// The maintenance of the wait step.
    fn maintain(&mut self, tables: &[String]) -> Result<()>;
    /// Row count and key bounds, or `None` when the database keeps no rows.
    fn bounds(&mut self, table: &str) -> Result<Option<Bounds>>;
    /// The stored rows with these keys (for verify), in key order.
    fn rows(&mut self, table: &str, keys: &[u64]) -> Result<Vec<Row>>;
}

/// Opens the connector a DSN names: `sqlite:PATH`, `sqlite::memory:`,
/// `postgres://user:pass@host:port/db` (or `host=... user=...`),
/// `mysql://user:pass@host:port/db?engine=innodb|rocksdb`, `null:[?options]`,
/// `rocksdb:PATH[?options]` (the `rocksdb` feature).
pub fn open(dsn: &str) -> Result<Box<dyn Connector>> {
    // libpq's key=value form: `host=127.0.0.1 user=postgres dbname=test`.
    let key_value = !dsn.contains("://") && dsn.split_whitespace().all(|w| w.contains('='));
    if key_value && ["host=", "user=", "dbname="].iter().any(|k| dsn.contains(k)) {
        return PostgresConnector::new(dsn)
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
    let opened: Result<Box<dyn Connector>> = match scheme {
        "sqlite" => SqliteConnector::new(rest).map(|c| Box::new(c) as Box<dyn Connector>),
        "null" => NullConnector::new(rest).map(|c| Box::new(c) as Box<dyn Connector>),
        "postgres" | "postgresql" => PostgresConnector::new(dsn).map(|c| Box::new(c) as Box<dyn Connector>),
        #[cfg(feature = "rocksdb")]
        "rocksdb" => RocksdbConnector::new(rest).map(|c| Box::new(c) as Box<dyn Connector>),
        #[cfg(not(feature = "rocksdb"))]
        "rocksdb" => Err(Error::config(
            "db",
            "this build of ibench has no RocksDB: it was built with --no-default-features (the `rocksdb` feature is on by default, and in the wheel)",
        )),
        "mysql" | "mariadb" => {
            let url = dsn.replacen("mariadb://", "mysql://", 1);
            MysqlConnector::new(&url).map(|c| Box::new(c) as Box<dyn Connector>)
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
    match password(dsn) {
        Some(p) if e.to_string().contains(p) => Error::config("db", e.to_string().replace(p, "***")),
        _ => e,
    }
}

/// The password of a `scheme://user:pass@host` or `... password=pass ...` DSN.
fn password(dsn: &str) -> Option<&str> {
    if let Some(p) = dsn.split_whitespace().find_map(|w| w.strip_prefix("password=")) {
        return (!p.is_empty()).then_some(p);
    }
    let (_, rest) = dsn.split_once("://")?;
    let (userinfo, _) = rest.rsplit_once('@')?;
    let (_, pass) = userinfo.split_once(':')?;
    (!pass.is_empty()).then_some(pass)
}

/// The DSN with any password replaced by `***` (`scheme://user:pass@host`
/// and `password=...` forms).
pub fn redact(dsn: &str) -> String {
    if !dsn.contains("://") && dsn.contains("password=") {
        let words: Vec<&str> = dsn
            .split_whitespace()
            .map(|w| if w.starts_with("password=") { "password=***" } else { w })
            .collect();
        return words.join(" ");
    }
    if let Some((scheme, rest)) = dsn.split_once("://") {
        if let Some((userinfo, host)) = rest.rsplit_once('@') {
            if let Some((user, _)) = userinfo.split_once(':') {
                return format!("{scheme}://{user}:***@{host}");
            }
        }
    }
    dsn.to_string()
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn passwords_never_reach_an_error_message() {
        let e = open("null://bob:s3cret@host/x").err().expect("an error").to_string();
        assert!(!e.contains("s3cret"), "{e}");
    }

    #[test]
    fn passwords_never_survive_redaction() {
        assert_eq!(
            redact("postgres://bob:s3cret@db:5432/x"),
            "postgres://bob:***@db:5432/x"
        );
        assert_eq!(redact("sqlite:/tmp/x.db"), "sqlite:/tmp/x.db");
        assert_eq!(
            redact("host=h user=u password=p dbname=d"),
            "host=h user=u password=*** dbname=d"
        );
        assert_eq!(redact("mysql://u:p@ss@h/d"), "mysql://u:***@h/d");
    }

    #[test]
    fn malformed_and_unknown_dsns_are_errors_naming_db() {
        for bad in ["nocolon", "oracle://x", "sqlite:"] {
            let e = open(bad).err().expect("an error").to_string();
            assert!(e.starts_with("invalid db:"), "{e}");
        }
    }
}
