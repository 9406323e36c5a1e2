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

use super::{Bounds, Connector, KvSession, Session};
use crate::civil::{self, Civil};
use crate::error::{Error, Result};
use crate::gen::{KvBatch, RangeQuery, Row, Rows, SecondaryIndex};
use mysql::prelude::Queryable;
use mysql::{Conn, Opts, OptsBuilder, Params, TxOpts, Value};
use std::ops::Range;
use std::time::{Duration, Instant};

const CONNECT_TIMEOUT: Duration = Duration::from_secs(5);

/// Pairs per key/value INSERT: two placeholders each, and a statement has at
/// most 65535.
const PAIRS_PER_STATEMENT: usize = 65535 / 2;

/// The storage engine of the tables.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
enum Engine {
    InnoDb,
    RocksDb,
}

impl Engine {
    fn sql(self) -> &'static str {
        match self {
            Engine::InnoDb => "InnoDB",
            Engine::RocksDb => "ROCKSDB",
        }
    }
}

/// The MySQL/MariaDB connector.
pub struct MysqlConnector {
    opts: Opts,
    engine: Engine,
    engine_options: String,
    target: String,
}

/// Maps a server error, marking deadlocks (1213) and lock wait timeouts (1205) retryable.
fn my_err(target: &str, what: &str, e: mysql::Error) -> Error {
    match e {
        mysql::Error::MySqlError(m) => {
            let message = format!("{what}: {} ({})", m.message, m.code);
            if m.code == 1213 || m.code == 1205 {
                Error::retryable(target, message)
            } else {
                Error::database(target, message)
            }
        }
        other => Error::database(target, format!("{what}: {other}")),
    }
}

impl MysqlConnector {
    /// Parses `dsn` and checks that the server answers and has the engine.
    pub fn new(dsn: &str) -> Result<Self> {
        let bad = |why: String| Error::config("db", format!("{:?}: {why}", super::redact(dsn)));
        let (base, query) = dsn.split_once('?').unwrap_or((dsn, ""));
        let (mut engine, mut socket, mut engine_options, mut rest) = (Engine::InnoDb, None, String::new(), Vec::new());
        for pair in query.split('&').filter(|p| !p.is_empty()) {
            match pair.split_once('=') {
                Some(("engine", v)) => {
                    engine = match v.to_ascii_lowercase().as_str() {
                        "innodb" => Engine::InnoDb,
                        "rocksdb" | "myrocks" => Engine::RocksDb,
                        _ => return Err(bad(format!("engine {v:?}: expected innodb or rocksdb"))),
                    }
                }
                Some(("socket", v)) => socket = Some(v.to_string()),
                Some(("engine_options", v)) => engine_options = v.replace('+', " "),
                _ => rest.push(pair),
            }
        }
        let url = if rest.is_empty() {
            base.to_string()
        } else {
            format!("{base}?{}", rest.join("&"))
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
            inserts: std::collections::HashMap::new(),
            kv_puts: std::collections::HashMap::new(),
            engine: self.engine,
            engine_options: self.engine_options.clone(),
            target: self.target.clone(),
        })
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
        if self.opts.get_socket().is_some() || super::is_local(&self.opts.get_ip_or_hostname()) {
            vec!["mariadbd", "mysqld"]
        } else {
            Vec::new()
        }
    }
    fn session(&self) -> Result<Box<dyn Session>> {
        Ok(Box::new(self.open_session()?))
    }
    fn kv_session(&self) -> Result<Box<dyn KvSession>> {
        Ok(Box::new(self.open_session()?))
    }
    fn size_bytes(&self) -> Option<u64> {
        let mut c = self.connect().ok()?;
        c.query_first::<Option<u64>, _>(
            "SELECT SUM(data_length + index_length) FROM information_schema.tables WHERE table_schema = DATABASE()",
        )
        .ok()
        .flatten()
        .flatten()
    }
}

struct MysqlSession {
    conn: Conn,
    inserts: std::collections::HashMap<(String, usize, bool), mysql::Statement>,
    /// The key/value upserts by (table, pairs).
    kv_puts: std::collections::HashMap<(String, usize), mysql::Statement>,
    engine: Engine,
    engine_options: String,
    target: String,
}

fn datetime(micros: i64) -> Value {
    let c = civil::from_micros(micros);
    Value::Date(
        c.year as u16,
        c.month as u8,
        c.day as u8,
        c.hour as u8,
        c.minute as u8,
        c.second as u8,
        c.micros,
    )
}

fn micros(v: &Value) -> i64 {
    match *v {
        Value::Date(year, month, day, hour, minute, second, micros) => civil::to_micros(Civil {
            year: year as i64,
            month: month as u32,
            day: day as u32,
            hour: hour as u32,
            minute: minute as u32,
            second: second as u32,
            micros,
        }),
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

    /// InnoDB: lowers the dirty-page limit until the buffer pool is written
    /// back (for up to 5 minutes), then restores it.
    fn write_back_dirty_pages(&mut self) -> Result<()> {
        let old: Option<f64> = self
            .conn
            .query_first("SELECT @@GLOBAL.innodb_max_dirty_pages_pct")
            .map_err(|e| my_err(&self.target, "read innodb_max_dirty_pages_pct", e))?;
        self.run(
            "lower innodb_max_dirty_pages_pct",
            "SET GLOBAL innodb_max_dirty_pages_pct = 0",
        )?;
        let flushed = self.wait_until(Duration::from_secs(300), |s| {
            Ok(s.status("Innodb_buffer_pool_pages_dirty")? < 16)
        });
        let restored = self.run(
            "restore innodb_max_dirty_pages_pct",
            &format!("SET GLOBAL innodb_max_dirty_pages_pct = {}", old.unwrap_or(90.0)),
        );
        flushed.and(restored)
    }

    /// The wait step's maintenance: InnoDB writes back its dirty pages,
    /// MyRocks flushes the memtable and compacts L0 and waits (up to 5
    /// minutes) until compaction is quiet; then ANALYZE TABLE of each table.
    fn settle_and_analyze<'a>(&mut self, tables: impl IntoIterator<Item = &'a str>) -> Result<()> {
        match self.engine {
            Engine::InnoDb => self.write_back_dirty_pages()?,
            Engine::RocksDb => {
                self.run(
                    "flush memtable and L0",
                    "SET GLOBAL rocksdb_force_flush_memtable_and_lzero_now = 1",
                )?;
                let mut last = u64::MAX;
                self.wait_until(Duration::from_secs(300), |s| {
                    let written = s.status("Rocksdb_compact_write_bytes")?;
                    let running = s.status("Rocksdb_manual_compactions_running")?;
                    let quiet = running == 0 && written == last;
                    last = written;
                    Ok(quiet)
                })?;
            }
        }
        for t in tables {
            let _: Vec<mysql::Row> = self
                .conn
                .query(format!("ANALYZE TABLE {t}"))
                .map_err(|e| my_err(&self.target, "analyze", e))?;
        }
        Ok(())
    }

    /// The upsert of `n` pairs into `table`, prepared once per batch size.
    fn kv_put_statement(&mut self, table: &str, n: usize) -> Result<mysql::Statement> {
        let key = (table.to_string(), n);
        if let Some(s) = self.kv_puts.get(&key) {
            return Ok(s.clone());
        }
        let sql = format!(
            "INSERT INTO {table} (k, v) VALUES {} ON DUPLICATE KEY UPDATE v = VALUES(v)",
            vec!["(?,?)"; n].join(",")
        );
        let s = self
            .conn
            .prep(sql)
            .map_err(|e| my_err(&self.target, "prepare put", e))?;
        self.kv_puts.insert(key, s.clone());
        Ok(s)
    }

    /// Polls `done` every 100 ms until it holds or `limit` passes.
    fn wait_until(&mut self, limit: Duration, mut done: impl FnMut(&mut Self) -> Result<bool>) -> Result<()> {
        let start = Instant::now();
        while start.elapsed() < limit && !done(self)? {
            std::thread::sleep(Duration::from_millis(100));
        }
        Ok(())
    }
}

impl Session for MysqlSession {
    fn create_table(&mut self, table: &str, server_keys: bool) -> Result<()> {
        let auto = if server_keys { " AUTO_INCREMENT" } else { "" };
        self.inserts.clear();
        self.run("drop table", &format!("DROP TABLE IF EXISTS {table}"))?;
        self.run(
            "create table",
            &format!(
                "CREATE TABLE {table} (
                   transactionid BIGINT NOT NULL{auto},
                   dateandtime DATETIME,
                   cashregisterid INT NOT NULL,
                   customerid INT NOT NULL,
                   productid INT NOT NULL,
                   price INT NOT NULL,
                   data VARCHAR(4000),
                   PRIMARY KEY (transactionid)
                 ) ENGINE={} {}",
                self.engine.sql(),
                self.engine_options
            ),
        )
    }

    fn create_indexes(&mut self, table: &str, count: usize) -> Result<()> {
        let adds: Vec<String> = SecondaryIndex::ALL
            .iter()
            .take(count)
            .map(|i| format!("ADD INDEX {table}_{} ({})", i.suffix(), i.columns().join(", ")))
            .collect();
        match self.engine {
            Engine::InnoDb if !adds.is_empty() => {
                self.run("create indexes", &format!("ALTER TABLE {table} {}", adds.join(", ")))
            }
            Engine::InnoDb => Ok(()),
            Engine::RocksDb => {
                for add in adds {
                    self.run("create index", &format!("ALTER TABLE {table} {add}"))?;
                }
                Ok(())
            }
        }
    }

    fn insert(&mut self, table: &str, rows: &Rows, server_keys: bool) -> Result<()> {
        let n = rows.len();
        // Keyed by shape, so the statement text is built and hashed once per batch size.
        let key = (table.to_string(), n, server_keys);
        let stmt = match self.inserts.get(&key) {
            Some(s) => s.clone(),
            None => {
                let (cols, one) = if server_keys {
                    (
                        "dateandtime, cashregisterid, customerid, productid, price, data",
                        "(?,?,?,?,?,?)",
                    )
                } else {
                    (
                        "transactionid, dateandtime, cashregisterid, customerid, productid, price, data",
                        "(?,?,?,?,?,?,?)",
                    )
                };
                let sql = format!("INSERT INTO {table} ({cols}) VALUES {}", vec![one; n].join(","));
                let s = self
                    .conn
                    .prep(sql)
                    .map_err(|e| my_err(&self.target, "prepare insert", e))?;
                self.inserts.insert(key, s.clone());
                s
            }
        };
        let mut values = Vec::with_capacity(n * 7);
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
        let sql = format!("DELETE FROM {table} WHERE transactionid >= ? AND transactionid < ?");
        self.conn
            .exec_drop(&sql, (keys.start, keys.end))
            .map_err(|e| my_err(&self.target, "delete", e))?;
        Ok(self.conn.affected_rows())
    }

    fn range_query(&mut self, table: &str, query: &RangeQuery, indexed: bool) -> Result<usize> {
        let cols = query.index.columns().join(", ");
        let lead = query.index.columns()[0];
        let hint = if indexed {
            format!("FORCE INDEX ({table}_{})", query.index.suffix())
        } else {
            String::new()
        };
        let sql = format!("SELECT {cols} FROM {table} {hint} WHERE {lead} >= ? ORDER BY {cols} LIMIT 10");
        let rows: Vec<mysql::Row> = self
            .conn
            .exec(&sql, (query.lower,))
            .map_err(|e| my_err(&self.target, "range query", e))?;
        Ok(rows.len())
    }

    fn point_query(&mut self, table: &str, keys: &[u64]) -> Result<usize> {
        let sql = format!(
            "SELECT transactionid, productid, data FROM {table} WHERE transactionid IN ({})",
            vec!["?"; keys.len()].join(",")
        );
        let params = Params::Positional(keys.iter().map(|&k| Value::UInt(k)).collect());
        let rows: Vec<mysql::Row> = self
            .conn
            .exec(&sql, params)
            .map_err(|e| my_err(&self.target, "point query", e))?;
        Ok(rows.len())
    }

    fn maintain(&mut self, tables: &[String]) -> Result<()> {
        self.settle_and_analyze(tables.iter().map(String::as_str))
    }

    fn bounds(&mut self, table: &str) -> Result<Option<Bounds>> {
        let row: Option<(u64, Option<u64>, Option<u64>)> = self
            .conn
            .query_first(format!(
                "SELECT COUNT(*), MIN(transactionid), MAX(transactionid) FROM {table}"
            ))
            .map_err(|e| my_err(&self.target, "bounds", e))?;
        Ok(row.map(|(count, min, max)| Bounds { count, min, max }))
    }

    fn rows(&mut self, table: &str, keys: &[u64]) -> Result<Vec<Row>> {
        let mut out = Vec::with_capacity(keys.len());
        for chunk in keys.chunks(500) {
            let sql = format!(
                "SELECT transactionid, dateandtime, cashregisterid, customerid, productid, price, data
                 FROM {table} WHERE transactionid IN ({}) ORDER BY transactionid",
                vec!["?"; chunk.len()].join(",")
            );
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
        self.kv_puts.clear();
        self.run("drop table", &format!("DROP TABLE IF EXISTS {table}"))?;
        self.run(
            "create table",
            &format!(
                "CREATE TABLE {table} (
                   k VARBINARY({key_size}) NOT NULL PRIMARY KEY,
                   v LONGBLOB NOT NULL
                 ) ENGINE={} {}",
                self.engine.sql(),
                self.engine_options
            ),
        )
    }

    fn put(&mut self, table: &str, batch: &KvBatch) -> Result<()> {
        let n = batch.len();
        let chunks: Vec<Range<usize>> = (0..n)
            .step_by(PAIRS_PER_STATEMENT)
            .map(|start| start..n.min(start + PAIRS_PER_STATEMENT))
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
            .exec_first(format!("SELECT v FROM {table} WHERE k = ?"), (key,))
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
            .exec_iter(
                format!("SELECT k, v FROM {table} WHERE k >= ? ORDER BY k LIMIT ?"),
                (start, limit as u64),
            )
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
            .query_first(format!("SELECT COUNT(*) FROM {table}"))
            .map_err(|e| my_err(&self.target, "count", e))?;
        Ok(n.unwrap_or(0))
    }

    fn flush(&mut self, _table: &str) -> Result<()> {
        match self.engine {
            Engine::InnoDb => self.write_back_dirty_pages(),
            Engine::RocksDb => self.run("flush memtable", "SET GLOBAL rocksdb_force_flush_memtable_now = 1"),
        }
    }

    fn wait_for_compaction(&mut self, table: &str) -> Result<()> {
        self.settle_and_analyze([table])
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
