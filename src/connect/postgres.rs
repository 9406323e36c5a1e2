//! `postgres://user:pass@host:port/db?sslmode=disable` (or the key=value
//! form `host=... user=... dbname=...`) — PostgreSQL through the `postgres`
//! crate, without TLS.
//!
//! The table has BIGINT (BIGSERIAL with server keys) primary key, TIMESTAMP
//! and VARCHAR(4000); the three indexes are CREATE INDEX; inserts are one
//! multi-row INSERT prepared once per batch size; range and point queries
//! are prepared; the wait step runs `VACUUM (ANALYZE)` on each table, then
//! `CHECKPOINT`.
//!
//! The key/value steps use a table `(k BYTEA PRIMARY KEY, v BYTEA NOT NULL)`
//! (BYTEA compares bytewise): a write batch is multi-row
//! `INSERT ... ON CONFLICT (k) DO UPDATE` statements in one transaction, its
//! pairs in key order and only the last of each key (PostgreSQL refuses one
//! statement that updates a row twice); flush is `CHECKPOINT`, waiting for
//! compaction is the wait step's maintenance.

use super::sql::{self, Dialect, SessionSql};
use super::{Bounds, Connector, KvSession, Session, Sizes};
use crate::error::{DbErrorKind, Error, Result};
use crate::gen::{KvBatch, RangeQuery, Row, Rows};
use crate::stop::{Interrupter, Stop};
use postgres::config::Host;
use postgres::error::SqlState;
use postgres::types::ToSql;
use postgres::{Client, Config, GenericClient, NoTls, Statement};
use std::collections::HashMap;
use std::ops::Range;
use std::path::PathBuf;
use std::str::FromStr;
use std::sync::{Arc, OnceLock};
use std::time::{Duration, SystemTime, UNIX_EPOCH};

/// Connect timeout: an unreachable server is reported within seconds.
const CONNECT_TIMEOUT: Duration = Duration::from_secs(5);

/// The PostgreSQL connector.
pub struct PostgresConnector {
    config: Config,
    target: String,
    /// `data_directory`, read once (superusers and pg_read_all_settings only).
    data_dir: OnceLock<Option<PathBuf>>,
}

fn describe(config: &Config) -> String {
    let host = config
        .get_hosts()
        .first()
        .map(|h| match h {
            Host::Tcp(name) => name.clone(),
            Host::Unix(path) => path.display().to_string(),
        })
        .unwrap_or_else(|| "localhost".into());
    let port = config.get_ports().first().copied().unwrap_or(5432);
    let user = config.get_user().unwrap_or("");
    let db = config.get_dbname().unwrap_or(user);
    format!("postgres://{user}@{host}:{port}/{db}")
}

/// Maps a server error to its kind: deadlocks and serialization failures
/// are retryable, 42501 a missing privilege, 57014 a cancelled statement.
fn pg_err(target: &str, what: &str, e: postgres::Error) -> Error {
    let kind = match e.code() {
        Some(c) if *c == SqlState::T_R_DEADLOCK_DETECTED || *c == SqlState::T_R_SERIALIZATION_FAILURE => {
            DbErrorKind::Retryable
        }
        Some(c) if *c == SqlState::INSUFFICIENT_PRIVILEGE => DbErrorKind::Privilege,
        Some(c) if *c == SqlState::QUERY_CANCELED => DbErrorKind::Canceled,
        _ => DbErrorKind::Other,
    };
    let message = match e.as_db_error() {
        Some(db) => format!("{what}: {} ({})", db.message(), db.code().code()),
        None => format!("{what}: {e}"),
    };
    Error::database_kind(target, message, kind)
}

/// Runs a privileged maintenance statement: a missing privilege is a note
/// of what was skipped, not a failure.
fn privileged(what: &str, result: Result<()>, notes: &mut Vec<String>) -> Result<()> {
    match result {
        Err(e) if e.is_privilege() => {
            notes.push(format!("{what} skipped: {e}"));
            Ok(())
        }
        other => other,
    }
}

impl PostgresConnector {
    /// Parses `dsn` (URL or key=value form) and checks that the server answers.
    pub fn new(dsn: &str) -> Result<Self> {
        let mut config = Config::from_str(dsn)
            .map_err(|e| Error::config("db", format!("{:?} is not a PostgreSQL DSN: {e}", super::redact(dsn))))?;
        config.connect_timeout(CONNECT_TIMEOUT).application_name("ibench");
        let connector = PostgresConnector {
            target: describe(&config),
            config,
            data_dir: OnceLock::new(),
        };
        // Connect once now: an unreachable server or a bad login fails before any work.
        connector.connect()?;
        Ok(connector)
    }

    fn connect(&self) -> Result<Client> {
        self.config.connect(NoTls).map_err(|e| {
            let user = self.config.get_user().unwrap_or("");
            let cause = match e.as_db_error() {
                Some(db) => format!("{} ({})", db.message(), db.code().code()),
                None => {
                    let mut text = e.to_string();
                    let mut source = std::error::Error::source(&e);
                    while let Some(s) = source {
                        text = format!("{text}: {s}");
                        source = s.source();
                    }
                    text
                }
            };
            Error::database(&self.target, format!("cannot connect as user {user:?}: {cause}"))
        })
    }

    fn open_session(&self) -> Result<PostgresSession> {
        Ok(PostgresSession {
            client: self.connect()?,
            target: self.target.clone(),
            sql: SessionSql::new(Dialect::Postgres),
            statements: HashMap::new(),
            inserts: (String::new(), HashMap::new()),
        })
    }
}

impl Connector for PostgresConnector {
    fn dbms(&self) -> &'static str {
        "postgres"
    }
    fn target(&self) -> String {
        self.target.clone()
    }
    fn version(&self) -> Result<String> {
        let mut c = self.connect()?;
        let row = c
            .query_one("SHOW server_version", &[])
            .map_err(|e| pg_err(&self.target, "version", e))?;
        Ok(row.get(0))
    }
    fn settings(&self) -> Vec<(String, String)> {
        vec![("tls".into(), "none".into())]
    }
    fn session(&self) -> Result<Box<dyn Session>> {
        Ok(Box::new(self.open_session()?))
    }
    fn kv_session(&self) -> Result<Box<dyn KvSession>> {
        Ok(Box::new(self.open_session()?))
    }
    fn sizes(&self, tables: &[String]) -> Sizes {
        let Ok(mut c) = self.connect() else {
            return Sizes::default();
        };
        let database = c
            .query_one("SELECT pg_database_size(current_database())", &[])
            .ok()
            .map(|r| r.get::<_, i64>(0) as u64);
        // Every relation of the tables: heap, indexes, TOAST, free-space and visibility maps.
        let tables = c
            .query_one(
                "SELECT COALESCE(SUM(pg_total_relation_size(c.oid)), 0)::BIGINT FROM pg_class c
                 WHERE c.relkind = 'r' AND c.relname = ANY($1) AND pg_table_is_visible(c.oid)",
                &[&tables],
            )
            .ok()
            .map(|r| r.get::<_, i64>(0) as u64);
        let datadir = self.data_path().and_then(|p| super::files_size(&p));
        Sizes {
            database,
            tables,
            datadir,
            note: None,
        }
    }
    fn data_path(&self) -> Option<PathBuf> {
        if self.server_processes().is_empty() {
            return None;
        }
        self.data_dir
            .get_or_init(|| {
                let mut c = self.connect().ok()?;
                let row = c.query_one("SHOW data_directory", &[]).ok()?;
                Some(PathBuf::from(row.get::<_, String>(0)))
            })
            .clone()
    }
    fn configuration(&self) -> Result<Vec<(String, String, String)>> {
        let mut c = self.connect()?;
        let rows = c
            .query(
                "SELECT name, setting, COALESCE(unit, ''), source FROM pg_settings ORDER BY name",
                &[],
            )
            .map_err(|e| pg_err(&self.target, "pg_settings", e))?;
        Ok(rows
            .iter()
            .map(|r| {
                let (setting, unit): (String, String) = (r.get(1), r.get(2));
                let value = if unit.is_empty() {
                    setting
                } else {
                    format!("{setting} {unit}")
                };
                (r.get(0), value, format!("pg_settings: {}", r.get::<_, String>(3)))
            })
            .collect())
    }
    fn server_processes(&self) -> Vec<&'static str> {
        let local = self.config.get_hosts().iter().all(|h| match h {
            Host::Tcp(name) => super::is_local(name),
            Host::Unix(_) => true,
        });
        if local {
            vec!["postgres"]
        } else {
            Vec::new()
        }
    }
}

struct PostgresSession {
    client: Client,
    target: String,
    sql: SessionSql,
    /// Prepared statements by their text.
    statements: HashMap<String, Statement>,
    /// The inserts of the current table, by (rows, server keys).
    inserts: (String, HashMap<(usize, bool), Statement>),
}

fn timestamp(micros: i64) -> SystemTime {
    UNIX_EPOCH + Duration::from_micros(micros as u64)
}

/// `sql`, prepared once per session (`statements` caches it by its text).
fn prepared(
    client: &mut Client,
    statements: &mut HashMap<String, Statement>,
    target: &str,
    sql: &str,
) -> Result<Statement> {
    if let Some(s) = statements.get(sql) {
        return Ok(s.clone());
    }
    let s = client.prepare(sql).map_err(|e| pg_err(target, "prepare", e))?;
    statements.insert(sql.to_string(), s.clone());
    Ok(s)
}

impl PostgresSession {
    fn prepared(&mut self, sql: &str) -> Result<Statement> {
        prepared(&mut self.client, &mut self.statements, &self.target, sql)
    }

    fn batch(&mut self, what: &str, sql: &str) -> Result<()> {
        self.client
            .batch_execute(sql)
            .map_err(|e| pg_err(&self.target, what, e))
    }

    /// Runs DDL, forgetting prepared statements (they may name a dropped table).
    fn ddl(&mut self, what: &str, statements: Vec<String>) -> Result<()> {
        self.statements.clear();
        self.inserts.1.clear();
        for sql in statements {
            self.batch(what, &sql)?;
        }
        Ok(())
    }

    /// CHECKPOINT, which needs superuser or pg_checkpoint: skipped with a note without.
    fn checkpoint(&mut self, notes: &mut Vec<String>) -> Result<()> {
        let done = self.batch("CHECKPOINT", "CHECKPOINT");
        privileged("CHECKPOINT", done, notes)
    }

    /// The wait step's maintenance: `VACUUM (ANALYZE)` of each table, then a
    /// checkpoint; a stop request ends it between statements (and cancels
    /// the running one: [`Session::interrupter`]).
    fn vacuum_and_checkpoint<'a>(
        &mut self,
        tables: impl IntoIterator<Item = &'a str>,
        stop: &Stop,
    ) -> Result<Vec<String>> {
        let mut notes = Vec::new();
        for t in tables {
            if stop.requested() {
                return Ok(notes);
            }
            self.batch("vacuum", &format!("VACUUM (ANALYZE) {t}"))?;
        }
        if !stop.requested() {
            self.checkpoint(&mut notes)?;
        }
        Ok(notes)
    }

    fn cancel_handle(&self) -> Interrupter {
        let token = self.client.cancel_token();
        Arc::new(move || {
            let _ = token.cancel_query(NoTls);
        })
    }

    /// The insert of `n` rows into `table`, prepared once per batch size.
    fn insert_statement(&mut self, table: &str, n: usize, server_keys: bool) -> Result<Statement> {
        if self.inserts.0 != table {
            self.inserts = (table.to_string(), HashMap::new());
        }
        if let Some(s) = self.inserts.1.get(&(n, server_keys)) {
            return Ok(s.clone());
        }
        let sql = self.sql.dialect.insert(table, n, server_keys);
        let s = self.prepared(&sql)?;
        self.inserts.1.insert((n, server_keys), s.clone());
        Ok(s)
    }
}

/// The pairs of `batch` to write, as indexes in key order: of pairs with the
/// same key, only the last. O(n) when the keys already ascend, else a sort.
fn last_of_each_key(batch: &KvBatch) -> Vec<usize> {
    let n = batch.len();
    let mut order: Vec<usize> = (0..n).collect();
    if (1..n).all(|i| batch.key(i - 1) < batch.key(i)) {
        return order;
    }
    // Equal keys: the latest first, so that dedup (which keeps the first of a run) keeps it.
    order.sort_unstable_by(|&a, &b| batch.key(a).cmp(batch.key(b)).then(b.cmp(&a)));
    order.dedup_by(|a, b| batch.key(*a) == batch.key(*b));
    order
}

/// Runs each upsert statement on its chunk of pairs (indexes into `batch`).
fn upsert(
    client: &mut impl GenericClient,
    statements: &[Statement],
    chunks: &[&[usize]],
    batch: &KvBatch,
) -> std::result::Result<(), postgres::Error> {
    for (stmt, chunk) in statements.iter().zip(chunks) {
        let pairs: Vec<&[u8]> = chunk.iter().flat_map(|&i| [batch.key(i), batch.value(i)]).collect();
        let params: Vec<&(dyn ToSql + Sync)> = pairs.iter().map(|b| b as &(dyn ToSql + Sync)).collect();
        client.execute(stmt, &params)?;
    }
    Ok(())
}

impl Session for PostgresSession {
    fn create_table(&mut self, table: &str, server_keys: bool) -> Result<()> {
        let ddl = self.sql.dialect.create_table(table, server_keys);
        self.ddl("create table", ddl)
    }

    fn create_indexes(&mut self, table: &str, count: usize) -> Result<()> {
        let ddl = self.sql.dialect.create_indexes(table, count);
        self.ddl("create index", ddl)
    }

    fn insert(&mut self, table: &str, rows: &Rows, server_keys: bool) -> Result<()> {
        let n = rows.len();
        let stmt = self.insert_statement(table, n, server_keys)?;
        let times: Vec<SystemTime> = rows.dateandtime.iter().map(|&t| timestamp(t)).collect();
        let data: Vec<&str> = (0..n)
            .map(|i| {
                let b = &rows.data[rows.data_offsets[i] as usize..rows.data_offsets[i + 1] as usize];
                std::str::from_utf8(b).expect("data is ASCII")
            })
            .collect();
        let mut params: Vec<&(dyn ToSql + Sync)> = Vec::with_capacity(n * sql::per_row(server_keys));
        for i in 0..n {
            if !server_keys {
                params.push(&rows.transactionid[i]);
            }
            params.push(&times[i]);
            params.push(&rows.cashregisterid[i]);
            params.push(&rows.customerid[i]);
            params.push(&rows.productid[i]);
            params.push(&rows.price[i]);
            params.push(&data[i]);
        }
        self.client
            .execute(&stmt, &params)
            .map_err(|e| pg_err(&self.target, "insert", e))?;
        Ok(())
    }

    fn delete(&mut self, table: &str, keys: Range<u64>) -> Result<u64> {
        let text = self.sql.table(table).delete();
        let stmt = prepared(&mut self.client, &mut self.statements, &self.target, text)?;
        self.client
            .execute(&stmt, &[&(keys.start as i64), &(keys.end as i64)])
            .map_err(|e| pg_err(&self.target, "delete", e))
    }

    fn range_query(&mut self, table: &str, query: &RangeQuery, indexed: bool) -> Result<usize> {
        let text = self.sql.table(table).range(query.index, indexed);
        let stmt = prepared(&mut self.client, &mut self.statements, &self.target, text)?;
        let rows = self
            .client
            .query(&stmt, &[&query.lower])
            .map_err(|e| pg_err(&self.target, "range query", e))?;
        Ok(rows.len())
    }

    fn point_query(&mut self, table: &str, keys: &[u64]) -> Result<usize> {
        let stmt = if keys.len() == crate::gen::POINT_KEYS {
            let text = self.sql.table(table).point();
            prepared(&mut self.client, &mut self.statements, &self.target, text)?
        } else {
            let text = self.sql.dialect.point_query(table, keys.len());
            self.prepared(&text)?
        };
        let keys: Vec<i64> = keys.iter().map(|&k| k as i64).collect();
        let params: Vec<&(dyn ToSql + Sync)> = keys.iter().map(|k| k as &(dyn ToSql + Sync)).collect();
        let rows = self
            .client
            .query(&stmt, &params)
            .map_err(|e| pg_err(&self.target, "point query", e))?;
        Ok(rows.len())
    }

    fn maintain(&mut self, tables: &[String], stop: &Stop) -> Result<Vec<String>> {
        self.vacuum_and_checkpoint(tables.iter().map(String::as_str), stop)
    }

    fn bounds(&mut self, table: &str, count: bool) -> Result<Option<Bounds>> {
        // One row from each end of the primary key: no scan.
        let [first, last] = self.sql.dialect.key_bounds(table);
        let mut end = |sql: &str| -> Result<Option<u64>> {
            let row = self
                .client
                .query_opt(sql, &[])
                .map_err(|e| pg_err(&self.target, "bounds", e))?;
            Ok(row.map(|r| r.get::<_, i64>(0) as u64))
        };
        let (min, max) = (end(&first)?, end(&last)?);
        let count = if count {
            let row = self
                .client
                .query_one(&self.sql.dialect.count(table), &[])
                .map_err(|e| pg_err(&self.target, "count", e))?;
            Some(row.get::<_, i64>(0) as u64)
        } else {
            None
        };
        Ok(Some(Bounds { count, min, max }))
    }

    fn rows(&mut self, table: &str, keys: &[u64]) -> Result<Vec<Row>> {
        let sql = self.sql.dialect.rows(table, keys.len());
        let keys: Vec<i64> = keys.iter().map(|&k| k as i64).collect();
        // Through the primary key: a freshly loaded table has no statistics,
        // and the planner would scan it whole for a hundred keys.
        self.batch("read rows", "SET enable_seqscan = off")?;
        let rows = self.client.query(&sql, &[&keys]);
        self.batch("read rows", "RESET enable_seqscan")?;
        let rows = rows.map_err(|e| pg_err(&self.target, "read rows", e))?;
        Ok(rows
            .iter()
            .map(|r| {
                let t: SystemTime = r.get(1);
                Row {
                    transactionid: r.get(0),
                    dateandtime: t
                        .duration_since(UNIX_EPOCH)
                        .map(|d| d.as_micros() as i64)
                        .unwrap_or(i64::MIN),
                    cashregisterid: r.get(2),
                    customerid: r.get(3),
                    productid: r.get(4),
                    price: r.get(5),
                    data: r.get(6),
                }
            })
            .collect())
    }

    fn interrupter(&self) -> Option<Interrupter> {
        Some(self.cancel_handle())
    }
}

impl KvSession for PostgresSession {
    fn create(&mut self, table: &str, key_size: usize) -> Result<()> {
        let ddl = self.sql.dialect.kv_create(table, key_size);
        self.ddl("create table", ddl)
    }

    fn put(&mut self, table: &str, batch: &KvBatch) -> Result<()> {
        let order = last_of_each_key(batch);
        let chunks: Vec<&[usize]> = order.chunks(sql::PAIRS_PER_STATEMENT).collect();
        let mut statements = Vec::with_capacity(chunks.len());
        for chunk in &chunks {
            let text = self.sql.dialect.kv_upsert(table, chunk.len());
            statements.push(self.prepared(&text)?);
        }
        let target = &self.target;
        if chunks.len() <= 1 {
            return upsert(&mut self.client, &statements, &chunks, batch).map_err(|e| pg_err(target, "put", e));
        }
        // Dropped without a commit (an error), the transaction rolls back.
        let mut tx = self.client.transaction().map_err(|e| pg_err(target, "begin", e))?;
        upsert(&mut tx, &statements, &chunks, batch).map_err(|e| pg_err(target, "put", e))?;
        tx.commit().map_err(|e| pg_err(target, "commit", e))
    }

    fn get(&mut self, table: &str, key: &[u8], value: &mut Vec<u8>) -> Result<bool> {
        let stmt = self.prepared(&self.sql.dialect.kv_get(table))?;
        value.clear();
        let row = self
            .client
            .query_opt(&stmt, &[&key])
            .map_err(|e| pg_err(&self.target, "get", e))?;
        Ok(match row {
            Some(r) => {
                value.extend_from_slice(r.get::<_, &[u8]>(0));
                true
            }
            None => false,
        })
    }

    fn scan(&mut self, table: &str, start: &[u8], limit: usize, out: &mut KvBatch) -> Result<usize> {
        let stmt = self.prepared(&self.sql.dialect.kv_scan(table))?;
        out.clear();
        let limit = i64::try_from(limit).unwrap_or(i64::MAX);
        let rows = self
            .client
            .query(&stmt, &[&start, &limit])
            .map_err(|e| pg_err(&self.target, "scan", e))?;
        for r in &rows {
            out.push_raw(r.get::<_, &[u8]>(0), r.get::<_, &[u8]>(1));
        }
        Ok(rows.len())
    }

    fn count(&mut self, table: &str) -> Result<u64> {
        let row = self
            .client
            .query_one(&self.sql.dialect.count(table), &[])
            .map_err(|e| pg_err(&self.target, "count", e))?;
        Ok(row.get::<_, i64>(0) as u64)
    }

    fn flush(&mut self, _table: &str, _stop: &Stop) -> Result<Vec<String>> {
        let mut notes = Vec::new();
        self.checkpoint(&mut notes)?;
        Ok(notes)
    }

    fn wait_for_compaction(&mut self, table: &str, stop: &Stop) -> Result<Vec<String>> {
        self.vacuum_and_checkpoint([table], stop)
    }

    fn interrupter(&self) -> Option<Interrupter> {
        Some(self.cancel_handle())
    }
}

#[cfg(test)]
mod kv_tests {
    use super::super::kv_contract::key;
    use super::*;

    const DSN: &str = "postgres://postgres@127.0.0.1:5432/test";
    const TABLE: &str = "kv_unit_pg";

    /// The session; None (skip) when the server is down outside CI, a failure in CI.
    fn session() -> Option<PostgresSession> {
        match PostgresConnector::new(DSN).and_then(|c| c.open_session()) {
            Ok(s) => Some(s),
            Err(e) if std::env::var("CI").as_deref() == Ok("true") => panic!("PostgreSQL, and CI=true: {e}"),
            Err(e) => {
                eprintln!("note: PostgreSQL is not reachable ({e}); skipping (CI would fail)");
                None
            }
        }
    }

    #[test]
    fn the_last_pair_of_each_key_is_kept_in_key_order() {
        let mut b = KvBatch::new(16);
        for (k, v) in [(3, "a"), (1, "b"), (3, "c"), (2, "d"), (1, "e"), (3, "f")] {
            b.push_raw(&key(k), v.as_bytes());
        }
        let kept: Vec<(u64, &[u8])> = last_of_each_key(&b)
            .into_iter()
            .map(|i| (crate::gen::decode_key(b.key(i)), b.value(i)))
            .collect();
        assert_eq!(kept, [(1, &b"e"[..]), (2, b"d"), (3, b"f")]);
        let mut ascending = KvBatch::new(16);
        for k in 0..5 {
            ascending.push_raw(&key(k), b"x");
        }
        assert_eq!(last_of_each_key(&ascending), [0, 1, 2, 3, 4]);
        assert!(last_of_each_key(&KvBatch::new(16)).is_empty());
    }

    #[test]
    fn pairs_round_trip_through_a_kv_table() {
        let Some(mut s) = session() else { return };
        super::super::kv_contract::round_trip(&mut s, TABLE);
        s.batch("drop table", &format!("DROP TABLE {TABLE}")).unwrap();
    }
}
