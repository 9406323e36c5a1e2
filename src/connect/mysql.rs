//! `mysql://user:pass@host:port/db?engine=innodb|rocksdb&socket=PATH&engine_options=...`
//! — MySQL and MariaDB through the `mysql` crate, InnoDB or the RocksDB
//! engine (MyRocks).
//!
//! InnoDB gets its three indexes in one ALTER TABLE, RocksDB one ALTER per
//! index; range queries use FORCE INDEX; statements are prepared (the
//! crate's statement cache). The wait step: InnoDB lowers the dirty-page
//! limit until the buffer pool is written back, runs ANALYZE TABLE and
//! restores the setting; MyRocks flushes the memtable and compacts L0, waits
//! until compaction is quiet, then runs ANALYZE TABLE.
//!
//! The key/value steps use a table `(k VARBINARY(key_size) PRIMARY KEY,
//! v LONGBLOB)` of the DSN's engine (VARBINARY compares bytewise): a write
//! batch is multi-row `INSERT ... ON DUPLICATE KEY UPDATE` statements in one
//! transaction (a later pair of a key wins, as in one statement). Flush
//! writes back what the wait step writes back (InnoDB: the dirty pages;
//! MyRocks: the memtable); waiting for compaction is the wait step's
//! maintenance.

use super::sql::{self, Dialect, Engine, SessionSql};
use super::{Bounds, Connector, KvSession, Session, Sizes};
use crate::error::{DbErrorKind, Error, Result};
use crate::gen::{KvBatch, RangeQuery, Row, Rows};
use crate::stop::{Interrupter, Stop};
use mysql::prelude::Queryable;
use mysql::{Conn, Opts, OptsBuilder, Params, TxOpts, Value};
use std::ops::Range;
use std::path::PathBuf;
use std::sync::{Arc, OnceLock};
use std::time::{Duration, Instant};

const CONNECT_TIMEOUT: Duration = Duration::from_secs(5);

/// The MySQL/MariaDB connector.
pub struct MysqlConnector {
    opts: Opts,
    engine: Engine,
    engine_options: String,
    target: String,
    /// The server's `datadir` when it runs on this host, read once.
    datadir: OnceLock<Option<PathBuf>>,
    /// MyRocks' data directory (`rocksdb_datadir`, relative to `datadir`), read once.
    rocksdb_dir: OnceLock<Option<PathBuf>>,
}

/// Maps a server error to its kind: deadlocks (1213) and lock wait timeouts
/// (1205) are retryable; a missing privilege (1227 SUPER and the like, 1142
/// on a table, 1044 on a database) is skipped by maintenance; 1317 is a
/// statement killed by `KILL QUERY` (a stop request).
fn my_err(target: &str, what: &str, e: mysql::Error) -> Error {
    match e {
        mysql::Error::MySqlError(m) => {
            let kind = match m.code {
                1213 | 1205 => DbErrorKind::Retryable,
                1227 | 1142 | 1044 | 1370 => DbErrorKind::Privilege,
                1317 | 3024 | 1969 => DbErrorKind::Canceled,
                _ => DbErrorKind::Other,
            };
            Error::database_kind(target, format!("{what}: {} ({})", m.message, m.code), kind)
        }
        other => Error::database(target, format!("{what}: {other}")),
    }
}

/// Runs a privileged maintenance statement: a missing privilege is a note
/// of what was skipped, not a failure.
fn privileged(what: &str, result: Result<()>, notes: &mut Vec<String>) -> Result<bool> {
    match result {
        Ok(()) => Ok(true),
        Err(e) if e.is_privilege() => {
            notes.push(format!("{what} skipped: {e}"));
            Ok(false)
        }
        Err(e) => Err(e),
    }
}

/// A schema or table name as MySQL names its file: letters, digits and `_`
/// as they are, any other character as `@` and four hex digits.
fn file_name(name: &str) -> String {
    name.chars()
        .map(|c| {
            if c.is_ascii_alphanumeric() || c == '_' {
                c.to_string()
            } else {
                format!("@{:04x}", c as u32)
            }
        })
        .collect()
}

impl MysqlConnector {
    /// Parses `dsn` and checks that the server answers and has the engine.
    pub fn new(dsn: &str) -> Result<Self> {
        let bad = |why: String| Error::config("db", format!("{:?}: {why}", super::redact(dsn)));
        let (base, query) = super::dsn::split(dsn);
        let (mut engine, mut socket, mut engine_options, mut rest) = (Engine::InnoDb, None, String::new(), Vec::new());
        for (name, v) in query {
            match name.as_str() {
                "engine" => {
                    engine = match v.to_ascii_lowercase().as_str() {
                        "innodb" => Engine::InnoDb,
                        "rocksdb" | "myrocks" => Engine::RocksDb,
                        _ => return Err(bad(format!("engine {v:?}: expected innodb or rocksdb"))),
                    }
                }
                "socket" => socket = Some(v),
                "engine_options" => engine_options = v,
                _ => rest.push((name, v)),
            }
        }
        // The driver's own options go back to it, encoded again.
        let url = if rest.is_empty() {
            base.to_string()
        } else {
            let query: String = url::form_urlencoded::Serializer::new(String::new())
                .extend_pairs(&rest)
                .finish();
            format!("{base}?{query}")
        };
        let opts = Opts::from_url(&url).map_err(|e| bad(format!("not a MySQL DSN: {e}")))?;
        let user = opts.get_user().unwrap_or("").to_string();
        let target = format!(
            "mysql://{user}@{}:{}/{}?engine={}",
            opts.get_ip_or_hostname(),
            opts.get_tcp_port(),
            opts.get_db_name().unwrap_or(""),
            engine.sql().to_lowercase()
        );
        let opts: Opts = OptsBuilder::from_opts(opts)
            .tcp_connect_timeout(Some(CONNECT_TIMEOUT))
            .socket(socket)
            .into();
        let connector = MysqlConnector {
            opts,
            engine,
            engine_options,
            target,
            datadir: OnceLock::new(),
            rocksdb_dir: OnceLock::new(),
        };
        let mut conn = connector.connect()?;
        let supported: Option<String> = conn
            .exec_first(
                "SELECT support FROM information_schema.engines WHERE engine = ?",
                (engine.sql(),),
            )
            .map_err(|e| my_err(&connector.target, "engine check", e))?;
        if !matches!(supported.as_deref(), Some("YES" | "DEFAULT")) {
            return Err(Error::database(
                &connector.target,
                format!(
                    "the server has no {} engine (for MyRocks on MariaDB: mariadb-plugin-rocksdb, loaded at start-up)",
                    engine.sql()
                ),
            ));
        }
        Ok(connector)
    }

    fn connect(&self) -> Result<Conn> {
        Conn::new(self.opts.clone()).map_err(|e| {
            let user = self.opts.get_user().unwrap_or("");
            let cause = match &e {
                mysql::Error::MySqlError(m) => format!("{} ({})", m.message, m.code),
                other => other.to_string(),
            };
            Error::database(&self.target, format!("cannot connect as user {user:?}: {cause}"))
        })
    }

    fn open_session(&self) -> Result<MysqlSession> {
        Ok(MysqlSession {
            conn: self.connect()?,
            opts: self.opts.clone(),
            sql: SessionSql::new(Dialect::Mysql {
                engine: self.engine,
                options: self.engine_options.clone(),
            }),
            inserts: (String::new(), std::collections::HashMap::new()),
            kv_puts: std::collections::HashMap::new(),
            engine: self.engine,
            target: self.target.clone(),
        })
    }

    fn local(&self) -> bool {
        self.opts.get_socket().is_some() || super::is_local(&self.opts.get_ip_or_hostname())
    }

    /// MyRocks' directory: `rocksdb_datadir` (MariaDB `./#rocksdb`, MySQL
    /// `./.rocksdb`), relative to `datadir`.
    fn rocksdb_dir(&self, datadir: &std::path::Path) -> Option<PathBuf> {
        self.rocksdb_dir
            .get_or_init(|| {
                let mut c = self.connect().ok()?;
                let dir: Option<String> = c.query_first("SELECT @@rocksdb_datadir").ok()?;
                let dir = PathBuf::from(dir?);
                Some(if dir.is_absolute() { dir } else { datadir.join(dir) })
            })
            .clone()
    }

    /// Sizes from `information_schema`: estimates (InnoDB's come from its
    /// statistics, which MySQL 8 caches for up to a day).
    fn estimated_sizes(&self, tables: &[String]) -> Option<(u64, u64)> {
        let mut c = self.connect().ok()?;
        let all: Option<u64> = c
            .query_first(
                "SELECT CAST(COALESCE(SUM(data_length + index_length), 0) AS UNSIGNED)
                 FROM information_schema.tables WHERE table_schema = DATABASE()",
            )
            .ok()
            .flatten();
        let mine: u64 = tables
            .iter()
            .filter_map(|t| {
                c.exec_first::<Option<u64>, _, _>(
                    "SELECT CAST(data_length + index_length AS UNSIGNED) FROM information_schema.tables
                     WHERE table_schema = DATABASE() AND table_name = ?",
                    (t,),
                )
                .ok()
                .flatten()
                .flatten()
            })
            .sum();
        Some((all?, mine))
    }
}

impl Connector for MysqlConnector {
    fn dbms(&self) -> &'static str {
        "mysql"
    }
    fn target(&self) -> String {
        self.target.clone()
    }
    fn version(&self) -> Result<String> {
        let mut c = self.connect()?;
        let v: Option<String> = c
            .query_first("SELECT VERSION()")
            .map_err(|e| my_err(&self.target, "version", e))?;
        Ok(v.unwrap_or_default())
    }
    fn settings(&self) -> Vec<(String, String)> {
        vec![
            ("engine".into(), self.engine.sql().into()),
            ("engine_options".into(), self.engine_options.clone()),
        ]
    }
    fn configuration(&self) -> Result<Vec<(String, String, String)>> {
        let mut c = self.connect()?;
        let rows: Vec<(String, String)> = c
            .query("SHOW GLOBAL VARIABLES")
            .map_err(|e| my_err(&self.target, "SHOW GLOBAL VARIABLES", e))?;
        let mut out: Vec<(String, String, String)> = rows
            .into_iter()
            .map(|(name, value)| {
                // GTID positions move with every transaction: facts of the moment, not configuration.
                let source = if name.contains("gtid") {
                    "sampled"
                } else {
                    "SHOW GLOBAL VARIABLES"
                };
                (name, value, source.to_string())
            })
            .collect();
        out.push(("ibench_engine".into(), self.engine.sql().into(), "DSN".into()));
        Ok(out)
    }
    fn server_processes(&self) -> Vec<&'static str> {
        if self.local() {
            vec!["mariadbd", "mysqld"]
        } else {
            Vec::new()
        }
    }
    fn data_path(&self) -> Option<PathBuf> {
        if !self.local() {
            return None;
        }
        self.datadir
            .get_or_init(|| {
                let mut c = self.connect().ok()?;
                let dir: Option<String> = c.query_first("SELECT @@datadir").ok()?;
                dir.map(PathBuf::from)
            })
            .clone()
    }
    fn session(&self) -> Result<Box<dyn Session>> {
        Ok(Box::new(self.open_session()?))
    }
    fn kv_session(&self) -> Result<Box<dyn KvSession>> {
        Ok(Box::new(self.open_session()?))
    }
    fn sizes(&self, tables: &[String]) -> Sizes {
        // A local server's files say what is on disk now; information_schema
        // holds estimates (and MySQL 8 caches them for up to a day).
        let files = self
            .data_path()
            .filter(|d| std::fs::read_dir(d).is_ok())
            .and_then(|datadir| {
                let schema = datadir.join(file_name(self.opts.get_db_name()?));
                let database = match self.engine {
                    Engine::InnoDb => super::files_size(&schema)?,
                    // MyRocks keeps every schema's data in one RocksDB instance.
                    Engine::RocksDb => super::files_size(&self.rocksdb_dir(&datadir)?)?,
                };
                let table_files = match self.engine {
                    Engine::InnoDb => {
                        let ibd: Vec<_> = tables
                            .iter()
                            .map(|t| super::files_size(&schema.join(format!("{}.ibd", file_name(t)))))
                            .collect();
                        // No .ibd files (innodb_file_per_table=OFF): the tables live in the system tablespace.
                        ibd.iter().all(Option::is_some).then(|| ibd.iter().flatten().sum())
                    }
                    Engine::RocksDb => None,
                };
                Some((database, table_files, super::files_size(&datadir)))
            });
        match files {
            Some((database, table_files, datadir)) => Sizes {
                database: Some(database),
                // MyRocks' tables share its SST files: their size is what it reports.
                tables: table_files.or_else(|| self.estimated_sizes(tables).map(|e| e.1)),
                datadir,
                note: None,
            },
            None => {
                let estimated = self.estimated_sizes(tables);
                Sizes {
                    database: estimated.map(|e| e.0),
                    tables: estimated.map(|e| e.1),
                    datadir: None,
                    note: Some("information_schema estimates: the server's data directory is not readable here".into()),
                }
            }
        }
    }
}

struct MysqlSession {
    conn: Conn,
    /// For a second connection: cancelling a statement, restoring a setting
    /// after this connection was lost.
    opts: Opts,
    sql: SessionSql,
    /// The inserts of the current table, by (rows, server keys).
    inserts: (String, std::collections::HashMap<(usize, bool), mysql::Statement>),
    /// The key/value upserts by (table, pairs).
    kv_puts: std::collections::HashMap<(String, usize), mysql::Statement>,
    engine: Engine,
    target: String,
}

/// Unix microseconds as a DATETIME value (UTC).
fn datetime(micros: i64) -> Value {
    let t = time::OffsetDateTime::from_unix_timestamp_nanos(micros as i128 * 1000).expect("a DATETIME's range");
    Value::Date(
        t.year() as u16,
        t.month() as u8,
        t.day(),
        t.hour(),
        t.minute(),
        t.second(),
        t.microsecond(),
    )
}

/// A DATETIME value as Unix microseconds (UTC); `i64::MIN` for anything else.
fn micros(v: &Value) -> i64 {
    let Value::Date(year, month, day, hour, minute, second, micros) = *v else {
        return i64::MIN;
    };
    let date = time::Month::try_from(month)
        .ok()
        .and_then(|m| time::Date::from_calendar_date(year as i32, m, day).ok());
    let clock = time::Time::from_hms_micro(hour, minute, second, micros).ok();
    match (date, clock) {
        (Some(d), Some(t)) => (time::PrimitiveDateTime::new(d, t).assume_utc().unix_timestamp_nanos() / 1000) as i64,
        _ => i64::MIN,
    }
}

impl MysqlSession {
    fn run(&mut self, what: &str, sql: &str) -> Result<()> {
        self.conn.query_drop(sql).map_err(|e| my_err(&self.target, what, e))
    }

    fn status(&mut self, name: &str) -> Result<u64> {
        let row: Option<(String, String)> = self
            .conn
            .query_first(format!("SHOW GLOBAL STATUS LIKE '{name}'"))
            .map_err(|e| my_err(&self.target, "status", e))?;
        Ok(row.and_then(|(_, v)| v.parse().ok()).unwrap_or(0))
    }

    /// Sets a global variable, restoring its old value when the returned
    /// guard is dropped (on every path: error, stop, panic). None, with a
    /// note, when the user lacks the privilege (SUPER, SYSTEM_VARIABLES_ADMIN).
    fn set_global(&mut self, name: &str, value: &str, notes: &mut Vec<String>) -> Result<Option<Restore>> {
        let old: Option<String> = self
            .conn
            .query_first(format!("SELECT CAST(@@GLOBAL.{name} AS CHAR)"))
            .map_err(|e| my_err(&self.target, &format!("read {name}"), e))?;
        let set = self.run(&format!("SET GLOBAL {name}"), &format!("SET GLOBAL {name} = {value}"));
        if !privileged(&format!("SET GLOBAL {name} = {value}"), set, notes)? {
            return Ok(None);
        }
        Ok(Some(Restore {
            opts: self.opts.clone(),
            target: self.target.clone(),
            name: name.to_string(),
            value: old.unwrap_or_default(),
            restored: false,
        }))
    }

    /// InnoDB: lowers the dirty-page limit until the buffer pool is written
    /// back (for up to 5 minutes, or until a stop), then restores it.
    fn write_back_dirty_pages(&mut self, stop: &Stop, notes: &mut Vec<String>) -> Result<()> {
        let Some(mut restore) = self.set_global("innodb_max_dirty_pages_pct", "0", notes)? else {
            return Ok(());
        };
        let flushed = self.wait_until(Duration::from_secs(300), stop, |s| {
            Ok(s.status("Innodb_buffer_pool_pages_dirty")? < 16)
        });
        let restored = restore.now(Some(&mut self.conn));
        flushed.and(restored)
    }

    /// The wait step's maintenance: InnoDB writes back its dirty pages,
    /// MyRocks flushes the memtable and compacts L0 and waits (up to 5
    /// minutes) until compaction is quiet; then ANALYZE TABLE of each table.
    /// A stop request ends the waits; statements needing a privilege the
    /// user lacks are skipped with a note.
    fn settle_and_analyze<'a>(
        &mut self,
        tables: impl IntoIterator<Item = &'a str>,
        stop: &Stop,
    ) -> Result<Vec<String>> {
        let mut notes = Vec::new();
        match self.engine {
            Engine::InnoDb => self.write_back_dirty_pages(stop, &mut notes)?,
            Engine::RocksDb => {
                let flush = self.run(
                    "flush memtable and L0",
                    "SET GLOBAL rocksdb_force_flush_memtable_and_lzero_now = 1",
                );
                privileged(
                    "SET GLOBAL rocksdb_force_flush_memtable_and_lzero_now = 1",
                    flush,
                    &mut notes,
                )?;
                let mut last = u64::MAX;
                self.wait_until(Duration::from_secs(300), stop, |s| {
                    let written = s.status("Rocksdb_compact_write_bytes")?;
                    let running = s.status("Rocksdb_manual_compactions_running")?;
                    let quiet = running == 0 && written == last;
                    last = written;
                    Ok(quiet)
                })?;
            }
        }
        for t in tables {
            if stop.requested() {
                break;
            }
            let _: Vec<mysql::Row> = self
                .conn
                .query(format!("ANALYZE TABLE {t}"))
                .map_err(|e| my_err(&self.target, "analyze", e))?;
        }
        Ok(notes)
    }

    /// The upsert of `n` pairs into `table`, prepared once per batch size.
    fn kv_put_statement(&mut self, table: &str, n: usize) -> Result<mysql::Statement> {
        let key = (table.to_string(), n);
        if let Some(s) = self.kv_puts.get(&key) {
            return Ok(s.clone());
        }
        let s = self
            .conn
            .prep(self.sql.dialect.kv_upsert(table, n))
            .map_err(|e| my_err(&self.target, "prepare put", e))?;
        self.kv_puts.insert(key, s.clone());
        Ok(s)
    }

    /// Runs DDL, forgetting prepared statements (they may name a dropped table).
    fn ddl(&mut self, what: &str, statements: Vec<String>) -> Result<()> {
        self.inserts.1.clear();
        self.kv_puts.clear();
        for sql in statements {
            self.run(what, &sql)?;
        }
        Ok(())
    }

    /// Polls `done` every 100 ms until it holds, `limit` passes or a stop is requested.
    fn wait_until(
        &mut self,
        limit: Duration,
        stop: &Stop,
        mut done: impl FnMut(&mut Self) -> Result<bool>,
    ) -> Result<()> {
        let start = Instant::now();
        while start.elapsed() < limit && !stop.requested() && !done(self)? {
            std::thread::sleep(Duration::from_millis(100));
        }
        Ok(())
    }

    /// Cancels the statement this connection runs: `KILL QUERY` from a second connection.
    fn cancel_handle(&self) -> Interrupter {
        let (opts, id) = (self.opts.clone(), self.conn.connection_id());
        Arc::new(move || {
            if let Ok(mut c) = Conn::new(opts.clone()) {
                let _ = c.query_drop(format!("KILL QUERY {id}"));
            }
        })
    }
}

/// A global variable ibench changed, set back to its old value by
/// [`Restore::now`] or, failing that, when dropped.
struct Restore {
    opts: Opts,
    target: String,
    name: String,
    value: String,
    restored: bool,
}

impl Restore {
    /// Restores the value through `conn`, or through a new connection when
    /// there is none or it fails (it may have been killed).
    fn now(&mut self, conn: Option<&mut Conn>) -> Result<()> {
        if self.restored {
            return Ok(());
        }
        // Numbers and ON/OFF as they are (numeric variables refuse a string), anything else quoted.
        let v = &self.value;
        let literal = if v.parse::<f64>().is_ok() || matches!(v.as_str(), "ON" | "OFF") {
            v.clone()
        } else {
            format!("'{}'", v.replace('\'', "''"))
        };
        let sql = format!("SET GLOBAL {} = {literal}", self.name);
        let through = |c: &mut Conn| c.query_drop(&sql);
        let result = match conn {
            Some(c) => through(c).or_else(|_| Conn::new(self.opts.clone()).and_then(|mut c| through(&mut c))),
            None => Conn::new(self.opts.clone()).and_then(|mut c| through(&mut c)),
        };
        self.restored = result.is_ok();
        result.map_err(|e| my_err(&self.target, &format!("restore {}", self.name), e))
    }
}

impl Drop for Restore {
    fn drop(&mut self) {
        let _ = self.now(None);
    }
}

impl Session for MysqlSession {
    fn create_table(&mut self, table: &str, server_keys: bool) -> Result<()> {
        let ddl = self.sql.dialect.create_table(table, server_keys);
        self.ddl("create table", ddl)
    }

    fn create_indexes(&mut self, table: &str, count: usize) -> Result<()> {
        let ddl = self.sql.dialect.create_indexes(table, count);
        self.ddl("create indexes", ddl)
    }

    fn insert(&mut self, table: &str, rows: &Rows, server_keys: bool) -> Result<()> {
        let n = rows.len();
        if self.inserts.0 != table {
            self.inserts = (table.to_string(), std::collections::HashMap::new());
        }
        let stmt = match self.inserts.1.get(&(n, server_keys)) {
            Some(s) => s.clone(),
            None => {
                let s = self
                    .conn
                    .prep(self.sql.dialect.insert(table, n, server_keys))
                    .map_err(|e| my_err(&self.target, "prepare insert", e))?;
                self.inserts.1.insert((n, server_keys), s.clone());
                s
            }
        };
        let mut values = Vec::with_capacity(n * sql::per_row(server_keys));
        for i in 0..n {
            if !server_keys {
                values.push(Value::Int(rows.transactionid[i]));
            }
            values.push(datetime(rows.dateandtime[i]));
            values.push(Value::Int(rows.cashregisterid[i] as i64));
            values.push(Value::Int(rows.customerid[i] as i64));
            values.push(Value::Int(rows.productid[i] as i64));
            values.push(Value::Int(rows.price[i] as i64));
            values.push(Value::Bytes(
                rows.data[rows.data_offsets[i] as usize..rows.data_offsets[i + 1] as usize].to_vec(),
            ));
        }
        self.conn
            .exec_drop(&stmt, Params::Positional(values))
            .map_err(|e| my_err(&self.target, "insert", e))
    }

    fn delete(&mut self, table: &str, keys: Range<u64>) -> Result<u64> {
        let sql = self.sql.table(table).delete();
        self.conn
            .exec_drop(sql, (keys.start, keys.end))
            .map_err(|e| my_err(&self.target, "delete", e))?;
        Ok(self.conn.affected_rows())
    }

    fn range_query(&mut self, table: &str, query: &RangeQuery, indexed: bool) -> Result<usize> {
        let sql = self.sql.table(table).range(query.index, indexed);
        let rows: Vec<mysql::Row> = self
            .conn
            .exec(sql, (query.lower,))
            .map_err(|e| my_err(&self.target, "range query", e))?;
        Ok(rows.len())
    }

    fn point_query(&mut self, table: &str, keys: &[u64]) -> Result<usize> {
        let params = Params::Positional(keys.iter().map(|&k| Value::UInt(k)).collect());
        let other;
        let sql = if keys.len() == crate::gen::POINT_KEYS {
            self.sql.table(table).point()
        } else {
            other = self.sql.dialect.point_query(table, keys.len());
            &other
        };
        let rows: Vec<mysql::Row> = self
            .conn
            .exec(sql, params)
            .map_err(|e| my_err(&self.target, "point query", e))?;
        Ok(rows.len())
    }

    fn maintain(&mut self, tables: &[String], stop: &Stop) -> Result<Vec<String>> {
        self.settle_and_analyze(tables.iter().map(String::as_str), stop)
    }

    fn bounds(&mut self, table: &str, count: bool) -> Result<Option<Bounds>> {
        // One row from each end of the primary key: no scan.
        let [first, last] = self.sql.dialect.key_bounds(table);
        let mut end = |sql: &str| -> Result<Option<u64>> {
            self.conn
                .query_first(sql)
                .map_err(|e| my_err(&self.target, "bounds", e))
        };
        let (min, max) = (end(&first)?, end(&last)?);
        let count = if count {
            let n: Option<u64> = self
                .conn
                .query_first(self.sql.dialect.count(table))
                .map_err(|e| my_err(&self.target, "count", e))?;
            Some(n.unwrap_or(0))
        } else {
            None
        };
        Ok(Some(Bounds { count, min, max }))
    }

    fn interrupter(&self) -> Option<Interrupter> {
        Some(self.cancel_handle())
    }

    fn rows(&mut self, table: &str, keys: &[u64]) -> Result<Vec<Row>> {
        let mut out = Vec::with_capacity(keys.len());
        for chunk in keys.chunks(sql::ROWS_PER_READ) {
            let sql = self.sql.dialect.rows(table, chunk.len());
            let params = Params::Positional(chunk.iter().map(|&k| Value::UInt(k)).collect());
            let rows: Vec<mysql::Row> = self
                .conn
                .exec(&sql, params)
                .map_err(|e| my_err(&self.target, "read rows", e))?;
            for r in rows {
                let when: Value = r.get(1).unwrap_or(Value::NULL);
                out.push(Row {
                    transactionid: r.get(0).unwrap_or_default(),
                    dateandtime: micros(&when),
                    cashregisterid: r.get(2).unwrap_or_default(),
                    customerid: r.get(3).unwrap_or_default(),
                    productid: r.get(4).unwrap_or_default(),
                    price: r.get(5).unwrap_or_default(),
                    data: r.get(6).unwrap_or_default(),
                });
            }
        }
        Ok(out)
    }
}

/// The parameters of pairs `range` of `batch`: key, value, key, value, ...
fn pair_params(batch: &KvBatch, range: Range<usize>) -> Params {
    Params::Positional(
        range
            .flat_map(|i| {
                [
                    Value::Bytes(batch.key(i).to_vec()),
                    Value::Bytes(batch.value(i).to_vec()),
                ]
            })
            .collect(),
    )
}

impl KvSession for MysqlSession {
    fn create(&mut self, table: &str, key_size: usize) -> Result<()> {
        let ddl = self.sql.dialect.kv_create(table, key_size);
        self.ddl("create table", ddl)
    }

    fn put(&mut self, table: &str, batch: &KvBatch) -> Result<()> {
        let n = batch.len();
        let chunks: Vec<Range<usize>> = (0..n)
            .step_by(sql::PAIRS_PER_STATEMENT)
            .map(|start| start..n.min(start + sql::PAIRS_PER_STATEMENT))
            .collect();
        let mut statements = Vec::with_capacity(chunks.len());
        for chunk in &chunks {
            statements.push(self.kv_put_statement(table, chunk.len())?);
        }
        let target = &self.target;
        match chunks.len() {
            0 => Ok(()),
            // One statement: its own transaction.
            1 => self
                .conn
                .exec_drop(&statements[0], pair_params(batch, chunks[0].clone()))
                .map_err(|e| my_err(target, "put", e)),
            _ => {
                // Dropped without a commit (an error), the transaction rolls back.
                let mut tx = self
                    .conn
                    .start_transaction(TxOpts::default())
                    .map_err(|e| my_err(target, "begin", e))?;
                for (stmt, chunk) in statements.iter().zip(chunks) {
                    tx.exec_drop(stmt, pair_params(batch, chunk))
                        .map_err(|e| my_err(target, "put", e))?;
                }
                tx.commit().map_err(|e| my_err(target, "commit", e))
            }
        }
    }

    fn get(&mut self, table: &str, key: &[u8], value: &mut Vec<u8>) -> Result<bool> {
        value.clear();
        let found: Option<Vec<u8>> = self
            .conn
            .exec_first(self.sql.dialect.kv_get(table), (key,))
            .map_err(|e| my_err(&self.target, "get", e))?;
        Ok(match found {
            Some(v) => {
                *value = v;
                true
            }
            None => false,
        })
    }

    fn scan(&mut self, table: &str, start: &[u8], limit: usize, out: &mut KvBatch) -> Result<usize> {
        out.clear();
        let target = &self.target;
        let rows = self
            .conn
            .exec_iter(self.sql.dialect.kv_scan(table), (start, limit as u64))
            .map_err(|e| my_err(target, "scan", e))?;
        for row in rows {
            let row = row.map_err(|e| my_err(target, "scan", e))?;
            if let (Some(Value::Bytes(k)), Some(Value::Bytes(v))) = (row.as_ref(0), row.as_ref(1)) {
                out.push_raw(k, v);
            }
        }
        Ok(out.len())
    }

    fn count(&mut self, table: &str) -> Result<u64> {
        let n: Option<u64> = self
            .conn
            .query_first(self.sql.dialect.count(table))
            .map_err(|e| my_err(&self.target, "count", e))?;
        Ok(n.unwrap_or(0))
    }

    fn flush(&mut self, _table: &str, stop: &Stop) -> Result<Vec<String>> {
        let mut notes = Vec::new();
        match self.engine {
            Engine::InnoDb => self.write_back_dirty_pages(stop, &mut notes)?,
            Engine::RocksDb => {
                let done = self.run("flush memtable", "SET GLOBAL rocksdb_force_flush_memtable_now = 1");
                privileged("SET GLOBAL rocksdb_force_flush_memtable_now = 1", done, &mut notes)?;
            }
        }
        Ok(notes)
    }

    fn wait_for_compaction(&mut self, table: &str, stop: &Stop) -> Result<Vec<String>> {
        self.settle_and_analyze([table], stop)
    }

    fn interrupter(&self) -> Option<Interrupter> {
        Some(self.cancel_handle())
    }
}

#[cfg(test)]
mod kv_tests {
    use super::*;

    /// The session; None (skip) when the server (or the engine) is missing outside CI, a failure in CI.
    fn session(engine: &str) -> Option<MysqlSession> {
        let dsn = format!("mysql://root@127.0.0.1:3306/test?engine={engine}");
        match MysqlConnector::new(&dsn).and_then(|c| c.open_session()) {
            Ok(s) => Some(s),
            Err(e) if std::env::var("CI").as_deref() == Ok("true") => panic!("MySQL {engine}, and CI=true: {e}"),
            Err(e) => {
                eprintln!("note: MySQL with {engine} is not available ({e}); skipping (CI would fail)");
                None
            }
        }
    }

    fn round_trip(engine: &str) {
        let Some(mut s) = session(engine) else { return };
        let table = format!("kv_unit_my_{engine}");
        let table = table.as_str();
        s.create(table, 16).unwrap();
        super::super::kv_contract::round_trip(&mut s, table);
        s.run("drop table", &format!("DROP TABLE {table}")).unwrap();
    }

    #[test]
    fn pairs_round_trip_through_an_innodb_kv_table() {
        round_trip("innodb");
    }

    #[test]
    fn pairs_round_trip_through_a_myrocks_kv_table() {
        round_trip("rocksdb");
    }
}
