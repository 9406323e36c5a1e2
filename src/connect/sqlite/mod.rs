//! `sqlite:PATH` or `sqlite::memory:` — embedded SQLite (rusqlite, bundled).
//!
//! Files use WAL with `synchronous=NORMAL`; each session is its own
//! connection, writers wait on each other in short naps (see `busy`). An
//! in-memory database is one connection that sessions share (SQLite cannot
//! share a private in-memory database between connections).
//! `dateandtime` is stored as INTEGER microseconds since the Unix epoch.

mod stats;

use crate::connect::sql::{self, Dialect, SessionSql};
use crate::connect::{Bounds, Connector, KvSession, Maintenance, ServerCounters, Session, SessionSpec, Sizes};
use crate::error::{DbErrorKind, Error, Result};
use crate::gen::{KvBatch, RangeQuery, Row, Rows};
use crate::stop::{Interrupter, Stop};
use rusqlite::{params_from_iter, Connection, OpenFlags};

use std::path::PathBuf;
use std::sync::{Arc, Mutex};

const PRAGMAS: [(&str, &str); 2] = [("journal_mode", "WAL"), ("synchronous", "NORMAL")];

/// Waits for a lock held by another connection (the inserter and the deleter
/// both write) in 50 µs naps, for up to a minute. SQLite's own busy_timeout
/// naps 1, 2, 5, 10, ... 100 ms, which would put its back-off, not the
/// database's work, in the measured latencies.
fn busy(attempt: i32) -> bool {
    std::thread::sleep(std::time::Duration::from_micros(50));
    attempt < 1_000_000
}

enum Location {
    File(PathBuf),
    Memory(Arc<Mutex<Connection>>),
}

/// The SQLite connector.
pub struct SqliteConnector {
    location: Location,
    target: String,
    spec: SessionSpec,
}

fn db_err(target: &str, what: &str, e: rusqlite::Error) -> Error {
    let kind = match e.sqlite_error_code() {
        Some(rusqlite::ErrorCode::OperationInterrupted) => DbErrorKind::Canceled,
        _ => DbErrorKind::Other,
    };
    Error::database_kind(target, format!("{what}: {e}"), kind)
}

fn configure(conn: &mut Connection, target: &str) -> Result<()> {
    for (name, value) in PRAGMAS {
        conn.pragma_update(None, name, value)
            .map_err(|e| db_err(target, &format!("PRAGMA {name}"), e))?;
    }
    conn.busy_handler(Some(busy))
        .map_err(|e| db_err(target, "busy handler", e))
}

impl SqliteConnector {
    /// `rest` is what follows `sqlite:`: a path or `:memory:`.
    pub fn new(rest: &str) -> Result<Self> {
        let target = format!("sqlite:{rest}");
        if rest.is_empty() {
            return Err(Error::config(
                "db",
                "sqlite: needs a path (sqlite:PATH) or sqlite::memory:",
            ));
        }
        let location = if rest == ":memory:" {
            let conn = Connection::open_in_memory().map_err(|e| db_err(&target, "open", e))?;
            Location::Memory(Arc::new(Mutex::new(conn)))
        } else {
            let path = PathBuf::from(crate::connect::dsn::decode(rest));
            // Open once now so a bad path fails before any work.
            let mut conn = Connection::open_with_flags(&path, OpenFlags::default())
                .map_err(|e| db_err(&target, &format!("cannot open {}", path.display()), e))?;
            configure(&mut conn, &target)?;
            Location::File(path)
        };
        Ok(SqliteConnector {
            location,
            target,
            spec: SessionSpec::default(),
        })
    }
}

impl SqliteConnector {
    /// A connection of this database (the shared one for `:memory:`).
    fn open_session(&self) -> Result<SqliteSession> {
        let (conn, interrupt) = match &self.location {
            Location::File(path) => {
                let mut conn = Connection::open(path).map_err(|e| db_err(&self.target, "open", e))?;
                configure(&mut conn, &self.target)?;
                let handle = conn.get_interrupt_handle();
                (Conn::Own(Box::new(conn)), handle)
            }
            Location::Memory(shared) => {
                let handle = shared.lock().unwrap_or_else(|p| p.into_inner()).get_interrupt_handle();
                (Conn::Shared(shared.clone()), handle)
            }
        };
        let interrupt = Arc::new(interrupt);
        Ok(SqliteSession {
            conn,
            target: self.target.clone(),
            sql: SessionSql::new(Dialect::Sqlite),
            spec: self.spec,
            inserts: (String::new(), std::collections::HashMap::new()),
            interrupt: Arc::new(move || interrupt.interrupt()),
        })
    }
}

impl Connector for SqliteConnector {
    fn dbms(&self) -> &'static str {
        "sqlite"
    }
    fn target(&self) -> String {
        self.target.clone()
    }
    fn version(&self) -> Result<String> {
        Ok(rusqlite::version().to_string())
    }
    fn settings(&self) -> Vec<(String, String)> {
        match self.location {
            Location::File(_) => PRAGMAS
                .iter()
                .map(|(k, v)| (k.to_string(), v.to_string()))
                .chain([("busy_handler".to_string(), "50us naps, up to 60 s".to_string())])
                .collect(),
            Location::Memory(_) => vec![("journal_mode".into(), "memory".into())],
        }
    }
    fn session(&self) -> Result<Box<dyn Session>> {
        Ok(Box::new(self.open_session()?))
    }
    fn set_spec(&mut self, spec: SessionSpec) {
        self.spec = spec;
    }
    fn configuration(&self) -> Result<Vec<(String, String, String)>> {
        const NAMES: [&str; 10] = [
            "journal_mode",
            "synchronous",
            "page_size",
            "cache_size",
            "mmap_size",
            "wal_autocheckpoint",
            "temp_store",
            "locking_mode",
            "auto_vacuum",
            "busy_timeout",
        ];
        let mut session = self.open_session()?;
        let mut out = Vec::new();
        for name in NAMES {
            let value: String = session.with("pragma", |c| {
                c.query_row(&format!("PRAGMA {name}"), [], |r| r.get::<_, rusqlite::types::Value>(0))
                    .map(|v| match v {
                        rusqlite::types::Value::Integer(i) => i.to_string(),
                        rusqlite::types::Value::Text(t) => t,
                        other => format!("{other:?}"),
                    })
            })?;
            out.push((name.to_string(), value, "PRAGMA".to_string()));
        }
        out.push(("sqlite_version".into(), rusqlite::version().into(), "library".into()));
        out.push(("busy_handler".into(), "50us naps, up to 60 s".into(), "ibench".into()));
        Ok(out)
    }
    fn kv_session(&self) -> Result<Box<dyn KvSession>> {
        Ok(Box::new(self.open_session()?))
    }
    fn counters(&self, _tables: &[String]) -> Result<Option<Box<dyn ServerCounters>>> {
        let Location::File(path) = &self.location else {
            return Ok(None);
        };
        let conn = Connection::open(path).map_err(|e| db_err(&self.target, "open", e))?;
        Ok(Some(Box::new(stats::SqliteStats {
            conn,
            path: path.clone(),
            target: self.target.clone(),
        })))
    }
    fn sizes(&self, _tables: &[String]) -> Sizes {
        let Location::File(path) = &self.location else {
            return Sizes::default();
        };
        let size = |suffix: &str| {
            let mut p = path.clone().into_os_string();
            p.push(suffix);
            std::fs::metadata(p).map(|m| m.len()).unwrap_or(0)
        };
        // The pages in use (the file less its free list) hold the tables and their indexes.
        let used = self.open_session().ok().and_then(|mut s| {
            s.with("page counts", |c| {
                let pragma = |name: &str| c.query_row(&format!("PRAGMA {name}"), [], |r| r.get::<_, i64>(0));
                Ok((pragma("page_count")? - pragma("freelist_count")?) * pragma("page_size")?)
            })
            .ok()
        });
        Sizes {
            database: Some(size("") + size("-wal")),
            tables: used.map(|b| b.max(0) as u64),
            datadir: None,
            note: None,
        }
    }
    fn data_path(&self) -> Option<PathBuf> {
        match &self.location {
            Location::File(path) => Some(path.clone()),
            Location::Memory(_) => None,
        }
    }
}

impl SqliteSession {
    /// Runs `sql` once per pair of `batch` inside one transaction: no round
    /// trips to save in an embedded database, and no bound on the batch.
    fn each_pair(
        &mut self,
        what: &str,
        sql: &str,
        batch: &KvBatch,
        run: impl Fn(&mut rusqlite::CachedStatement<'_>, &[u8], &[u8]) -> rusqlite::Result<usize>,
    ) -> Result<()> {
        let several = batch.len() > 1;
        self.with(what, |c| {
            if several {
                c.execute_batch("BEGIN IMMEDIATE")?;
            }
            let result = (|| {
                let mut stmt = c.prepare_cached(sql)?;
                for (k, v) in batch.pairs() {
                    run(&mut stmt, k, v)?;
                }
                Ok(())
            })();
            if several {
                match &result {
                    Ok(()) => c.execute_batch("COMMIT")?,
                    Err(_) => {
                        let _ = c.execute_batch("ROLLBACK");
                    }
                }
            }
            result
        })
    }

    /// Pairs read by `sql` (a scan) with parameters `start` and `limit`.
    fn scan_with(&mut self, sql: &str, start: &[u8], limit: usize, out: &mut KvBatch) -> Result<usize> {
        out.clear();
        self.with("scan", |c| {
            let mut stmt = c.prepare_cached(sql)?;
            let mut rows = stmt.query((start, limit as i64))?;
            while let Some(r) = rows.next()? {
                out.push_raw(r.get_ref(0)?.as_blob()?, r.get_ref(1)?.as_blob()?);
            }
            Ok(out.len())
        })
    }
}

impl KvSession for SqliteSession {
    fn create(&mut self, table: &str, key_size: usize) -> Result<()> {
        let ddl = self.sql.dialect.kv_create(table, key_size).join(";\n");
        self.with("create table", |c| c.execute_batch(&ddl))
    }

    fn put(&mut self, table: &str, batch: &KvBatch) -> Result<()> {
        let sql = self.sql.dialect.kv_upsert(table, 1);
        self.each_pair("put", &sql, batch, |stmt, k, v| stmt.execute((k, v)))
    }

    fn delete_keys(&mut self, table: &str, keys: &KvBatch) -> Result<()> {
        let sql = self.sql.dialect.kv_delete(table, 1);
        self.each_pair("delete", &sql, keys, |stmt, k, _| stmt.execute([k]))
    }

    fn get(&mut self, table: &str, key: &[u8], value: &mut Vec<u8>) -> Result<bool> {
        let sql = self.sql.dialect.kv_get(table);
        value.clear();
        self.with("get", |c| {
            let mut stmt = c.prepare_cached(&sql)?;
            let mut rows = stmt.query([key])?;
            match rows.next()? {
                Some(r) => {
                    value.extend_from_slice(r.get_ref(0)?.as_blob()?);
                    Ok(true)
                }
                None => Ok(false),
            }
        })
    }

    fn scan(&mut self, table: &str, start: &[u8], limit: usize, out: &mut KvBatch) -> Result<usize> {
        let sql = self.sql.dialect.kv_scan(table);
        self.scan_with(&sql, start, limit, out)
    }

    fn scan_reverse(&mut self, table: &str, start: &[u8], limit: usize, out: &mut KvBatch) -> Result<usize> {
        let sql = self.sql.dialect.kv_scan_reverse(table);
        self.scan_with(&sql, start, limit, out)
    }

    fn count(&mut self, table: &str) -> Result<u64> {
        let sql = self.sql.dialect.count(table);
        self.with("count", |c| {
            c.query_row(&sql, [], |r| r.get::<_, i64>(0)).map(|n| n as u64)
        })
    }

    fn flush(&mut self, _table: &str, _stop: &Stop) -> Result<Vec<String>> {
        self.with("checkpoint", |c| c.execute_batch("PRAGMA wal_checkpoint(TRUNCATE)"))?;
        Ok(Vec::new())
    }

    fn wait_for_compaction(&mut self, table: &str, stop: &Stop) -> Result<Vec<String>> {
        self.analyze_and_checkpoint(&[table.to_string()], stop)
    }

    fn interrupter(&self) -> Option<Interrupter> {
        Some(self.interrupt.clone())
    }
}

enum Conn {
    Own(Box<Connection>),
    Shared(Arc<Mutex<Connection>>),
}

struct SqliteSession {
    conn: Conn,
    target: String,
    sql: SessionSql,
    spec: SessionSpec,
    /// The insert statements of the current table, by rows.
    inserts: (String, std::collections::HashMap<usize, String>),
    interrupt: Interrupter,
}

/// Runs `f` on the connection, its error named `what`.
fn on<T>(conn: &Conn, target: &str, what: &str, f: impl FnOnce(&Connection) -> rusqlite::Result<T>) -> Result<T> {
    let result = match conn {
        Conn::Own(c) => f(c),
        Conn::Shared(m) => f(&m.lock().unwrap_or_else(|p| p.into_inner())),
    };
    result.map_err(|e| db_err(target, what, e))
}

/// Runs a query and counts the rows it returns.
fn count_rows(conn: &Conn, target: &str, what: &str, sql: &str, params: impl rusqlite::Params) -> Result<usize> {
    on(conn, target, what, |c| {
        let mut stmt = c.prepare_cached(sql)?;
        let mut rows = stmt.query(params)?;
        let mut n = 0;
        while rows.next()?.is_some() {
            n += 1;
        }
        Ok(n)
    })
}

/// Runs a statement given as text (compiled for it alone) and counts its rows.
fn count_literal(conn: &Conn, target: &str, what: &str, sql: &str) -> Result<usize> {
    on(conn, target, what, |c| {
        let mut stmt = c.prepare(sql)?;
        let mut rows = stmt.query([])?;
        let mut n = 0;
        while rows.next()?.is_some() {
            n += 1;
        }
        Ok(n)
    })
}

impl SqliteSession {
    fn with<T>(&mut self, what: &str, f: impl FnOnce(&Connection) -> rusqlite::Result<T>) -> Result<T> {
        on(&self.conn, &self.target, what, f)
    }

    /// ANALYZE of each table, then a checkpoint that empties the WAL; a stop
    /// ends it between statements.
    fn analyze_and_checkpoint(&mut self, tables: &[String], stop: &Stop) -> Result<Vec<String>> {
        for t in tables {
            if stop.requested() {
                return Ok(Vec::new());
            }
            self.with("analyze", |c| c.execute_batch(&format!("ANALYZE {t}")))?;
        }
        self.with("checkpoint", |c| c.execute_batch("PRAGMA wal_checkpoint(TRUNCATE)"))?;
        Ok(Vec::new())
    }

    /// Binds `rows` to the prepared insert of their count and runs it.
    fn insert_prepared(&mut self, table: &str, rows: &Rows) -> Result<()> {
        let (n, server_keys) = (rows.len(), self.spec.server_keys);
        if self.inserts.0 != table {
            self.inserts = (table.to_string(), std::collections::HashMap::new());
        }
        let dialect = &self.sql.dialect;
        let sql = self
            .inserts
            .1
            .entry(n)
            .or_insert_with(|| dialect.insert(table, n, server_keys));
        let data = |i: usize| {
            let b = &rows.data[rows.data_offsets[i] as usize..rows.data_offsets[i + 1] as usize];
            std::str::from_utf8(b).expect("data is ASCII")
        };
        on(&self.conn, &self.target, "insert", |c| {
            let mut stmt = c.prepare_cached(sql)?;
            // Bind in place: no per-row allocation on the hot path.
            let mut p = 1;
            for i in 0..n {
                if !server_keys {
                    stmt.raw_bind_parameter(p, rows.transactionid[i])?;
                    p += 1;
                }
                stmt.raw_bind_parameter(p, rows.dateandtime[i])?;
                stmt.raw_bind_parameter(p + 1, rows.cashregisterid[i])?;
                stmt.raw_bind_parameter(p + 2, rows.customerid[i])?;
                stmt.raw_bind_parameter(p + 3, rows.productid[i])?;
                stmt.raw_bind_parameter(p + 4, rows.price[i])?;
                stmt.raw_bind_parameter(p + 5, data(i))?;
                p += 6;
            }
            stmt.raw_execute()?;
            Ok(())
        })
    }
}

impl Session for SqliteSession {
    fn create_table(&mut self, table: &str) -> Result<()> {
        let ddl = self.sql.dialect.create_table(table, self.spec.server_keys).join(";\n");
        self.with("create table", |c| c.execute_batch(&ddl))
    }

    fn create_indexes(&mut self, table: &str, count: usize) -> Result<()> {
        for sql in self.sql.dialect.create_indexes(table, count) {
            self.with("create index", |c| c.execute_batch(&sql))?;
        }
        Ok(())
    }

    fn insert(&mut self, table: &str, rows: &Rows) -> Result<Option<u64>> {
        if self.spec.literal {
            let text = self.sql.dialect.insert_literal(table, rows, self.spec.server_keys);
            // Compiled for this statement alone, as text sent to a server is parsed.
            self.with("insert", |c| c.execute(&text, []))?;
        } else {
            self.insert_prepared(table, rows)?;
        }
        if !self.spec.server_keys {
            return Ok(None);
        }
        // The rowids of one statement are consecutive (max + 1 on): the last less n - 1.
        let last = self.with("last rowid", |c| Ok(c.last_insert_rowid()))?;
        Ok(Some((last as u64 + 1).saturating_sub(rows.len() as u64)))
    }

    fn delete(&mut self, table: &str, from: u64, n: u64) -> Result<u64> {
        let deleted = match (self.spec.server_keys, self.spec.literal) {
            (true, true) => {
                let text = self.sql.dialect.delete_oldest(table, Some((from, n)));
                self.with("delete", |c| c.execute(&text, []))?
            }
            (true, false) => {
                let text = self.sql.table(table).delete_oldest();
                on(&self.conn, &self.target, "delete", |c| {
                    c.prepare_cached(text)?.execute([from as i64, n as i64])
                })?
            }
            (false, true) => {
                let text = self.sql.dialect.delete_literal(table, from..from + n);
                self.with("delete", |c| c.execute(&text, []))?
            }
            (false, false) => {
                let text = self.sql.table(table).delete();
                on(&self.conn, &self.target, "delete", |c| {
                    c.prepare_cached(text)?.execute([from as i64, (from + n) as i64])
                })?
            }
        };
        Ok(deleted as u64)
    }

    fn range_query(&mut self, table: &str, query: &RangeQuery, indexed: bool) -> Result<usize> {
        if self.spec.literal {
            let text = self.sql.dialect.range_literal(table, query);
            return count_literal(&self.conn, &self.target, "range query", &text);
        }
        let sql = self.sql.table(table).range(query.index, indexed);
        count_rows(&self.conn, &self.target, "range query", sql, [query.lower])
    }

    fn point_query(&mut self, table: &str, keys: &[u64]) -> Result<usize> {
        if self.spec.literal {
            let text = self.sql.dialect.point_literal(table, keys);
            return count_literal(&self.conn, &self.target, "point query", &text);
        }
        let params = params_from_iter(keys.iter().map(|&k| k as i64));
        if keys.len() == crate::gen::POINT_KEYS {
            let sql = self.sql.table(table).point();
            count_rows(&self.conn, &self.target, "point query", sql, params)
        } else {
            let sql = self.sql.dialect.point_query(table, keys.len());
            count_rows(&self.conn, &self.target, "point query", &sql, params)
        }
    }

    fn key_extreme(&mut self, table: &str, max: bool) -> Result<Option<u64>> {
        let text = self.sql.dialect.key_extreme(table, max);
        let v: Option<i64> = self.with("key bound", |c| c.query_row(&text, [], |r| r.get(0)))?;
        Ok(v.map(|v| v as u64))
    }

    fn maintain(&mut self, m: &Maintenance<'_>) -> Result<Vec<String>> {
        // The reference scripts have no SQLite procedure: the same either way.
        self.analyze_and_checkpoint(m.tables, m.stop)
    }

    fn bounds(&mut self, table: &str, count: bool) -> Result<Option<Bounds>> {
        // One row from each end of the rowid's b-tree: no scan.
        let [first, last] = self.sql.dialect.key_bounds(table);
        let end = |s: &mut Self, sql: &str| {
            s.with("bounds", |c| {
                c.query_row(sql, [], |r| r.get::<_, i64>(0))
                    .map(|v| Some(v as u64))
                    .or_else(|e| match e {
                        rusqlite::Error::QueryReturnedNoRows => Ok(None),
                        e => Err(e),
                    })
            })
        };
        let (min, max) = (end(self, &first)?, end(self, &last)?);
        let count = if count {
            let sql = self.sql.dialect.count(table);
            Some(self.with("count", |c| c.query_row(&sql, [], |r| r.get::<_, i64>(0)))? as u64)
        } else {
            None
        };
        Ok(Some(Bounds { count, min, max }))
    }

    fn interrupter(&self) -> Option<Interrupter> {
        Some(self.interrupt.clone())
    }

    fn rows(&mut self, table: &str, keys: &[u64]) -> Result<Vec<Row>> {
        let mut out = Vec::with_capacity(keys.len());
        for chunk in keys.chunks(sql::ROWS_PER_READ) {
            let sql = self.sql.dialect.rows(table, chunk.len());
            let part = self.with("read rows", |c| {
                let mut stmt = c.prepare(&sql)?;
                let rows = stmt.query_map(params_from_iter(chunk.iter().map(|&k| k as i64)), |r| {
                    Ok(Row {
                        transactionid: r.get(0)?,
                        dateandtime: r.get(1)?,
                        cashregisterid: r.get(2)?,
                        customerid: r.get(3)?,
                        productid: r.get(4)?,
                        price: r.get(5)?,
                        data: r.get(6)?,
                    })
                })?;
                rows.collect::<rusqlite::Result<Vec<_>>>()
            })?;
            out.extend(part);
        }
        Ok(out)
    }
}

#[cfg(test)]
mod statement_tests {
    use super::*;
    use rusqlite::trace::{TraceEvent, TraceEventCodes};
    use std::sync::Mutex;

    /// The statements a session with `spec` runs for a few rows, deletes and
    /// queries, as SQLite saw them; and the first keys of two inserts.
    fn statements(spec: SessionSpec, seen: &'static Mutex<Vec<String>>) -> (Vec<String>, [Option<u64>; 2]) {
        let dir = tempfile::tempdir().unwrap();
        let mut c = SqliteConnector::new(&dir.path().join("t.db").display().to_string()).unwrap();
        c.set_spec(spec);
        let mut s = c.open_session().unwrap();
        let Conn::Own(conn) = &mut s.conn else {
            unreachable!("a file")
        };
        conn.trace_v2(
            TraceEventCodes::SQLITE_TRACE_STMT,
            Some(move |e: TraceEvent<'_>| {
                if let TraceEvent::Stmt(_, sql) = e {
                    seen.lock().unwrap().push(sql.to_string());
                }
            }),
        )
        .unwrap();
        s.create_table("pi1").unwrap();
        s.create_indexes("pi1", 3).unwrap();
        let g = crate::gen::RowGen::new(&crate::gen::RowSpec::default()).unwrap();
        let mut rows = Rows::default();
        g.generate_into(1, 3, &mut rows).unwrap();
        let one = s.insert("pi1", &rows).unwrap();
        g.generate_into(4, 3, &mut rows).unwrap();
        let first = [one, s.insert("pi1", &rows).unwrap()];
        assert_eq!(s.delete("pi1", 1, 2).unwrap(), 2);
        let q = RangeQuery {
            index: crate::gen::SecondaryIndex::MarketSegment,
            lower: 5,
        };
        s.range_query("pi1", &q, true).unwrap();
        s.point_query("pi1", &[1, 2, 3, 4, 5, 6, 7, 8, 9, 10]).unwrap();
        assert_eq!(s.key_extreme("pi1", false).unwrap(), Some(3));
        let seen = std::mem::take(&mut *seen.lock().unwrap());
        (seen, first)
    }

    #[test]
    fn literal_statements_with_server_keys_are_the_reference_clients_text() {
        static SEEN: Mutex<Vec<String>> = Mutex::new(Vec::new());
        let (seen, first) = statements(
            SessionSpec {
                server_keys: true,
                literal: true,
            },
            &SEEN,
        );
        assert_eq!(first, [Some(1), Some(4)], "the rowid assigns the keys");
        let find = |prefix: &str| {
            seen.iter()
                .find(|s| s.starts_with(prefix))
                .unwrap_or_else(|| panic!("no {prefix:?} in {seen:#?}"))
        };
        let insert = find("insert into pi1 (dateandtime,cashregisterid,customerid,productid,price,data) values (");
        assert!(insert.contains(".00,'") && insert.contains("),\n("), "{insert}");
        find("delete from pi1 where transactionid in (select transactionid from pi1 where transactionid >= 1 order by transactionid asc limit 2)");
        find("SELECT productid, customerid, price FROM pi1 WHERE (productid >= 5) ORDER BY productid, customerid, price LIMIT 10");
        find("SELECT transactionid, productid, data FROM pi1 WHERE transactionid in (1,2,3,4,5,6,7,8,9,10)");
        find("select min(transactionid) from pi1");
        assert!(
            !seen.iter().any(|s| s.contains('?')),
            "a parameter in literal mode: {seen:#?}"
        );
    }

    #[test]
    fn prepared_statements_carry_parameters() {
        static SEEN: Mutex<Vec<String>> = Mutex::new(Vec::new());
        let (seen, first) = statements(SessionSpec::default(), &SEEN);
        assert_eq!(first, [None, None], "client keys");
        for prefix in ["INSERT INTO pi1", "DELETE FROM pi1", "SELECT productid"] {
            let s = seen
                .iter()
                .find(|s| s.starts_with(prefix))
                .unwrap_or_else(|| panic!("no {prefix}"));
            assert!(s.contains('?'), "{s}");
        }
    }
}

#[cfg(test)]
mod kv_tests {
    use super::*;

    #[test]
    fn pairs_round_trip_through_a_kv_table() {
        let dir = tempfile::tempdir().unwrap();
        let c = SqliteConnector::new(&dir.path().join("kv.db").display().to_string()).unwrap();
        crate::connect::kv_contract::round_trip(&mut c.open_session().unwrap(), "kv");
    }
}
