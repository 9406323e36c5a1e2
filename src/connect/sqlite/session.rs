//! The Insert Benchmark's statements on SQLite: each session its own
//! connection to a file (WAL, `synchronous=NORMAL`, writers waiting on each
//! other in short naps), or the one connection of an in-memory database,
//! shared. Prepared statements are rusqlite's cache, bound in place.

use super::error::db_err;
use crate::connect::sql::{self, Dialect, SessionSql};
use crate::connect::{Bounds, Maintenance, Session, SessionSpec};
use crate::error::Result;
use crate::gen::{RangeQuery, Row, Rows};
use crate::stop::Interrupter;
use rusqlite::{params_from_iter, Connection};
use std::sync::{Arc, Mutex};

/// The pragmas every connection to a file gets.
pub(super) const PRAGMAS: [(&str, &str); 2] = [("journal_mode", "WAL"), ("synchronous", "NORMAL")];

/// Waits for a lock held by another connection (the inserter and the deleter
/// both write) in 50 µs naps, for up to a minute. SQLite's own busy_timeout
/// naps 1, 2, 5, 10, ... 100 ms, which would put its back-off, not the
/// database's work, in the measured latencies.
fn busy(attempt: i32) -> bool {
    std::thread::sleep(std::time::Duration::from_micros(50));
    attempt < 1_000_000
}

/// Sets a connection to a file up: the pragmas and the busy handler.
pub(super) fn configure(conn: &mut Connection, target: &str) -> Result<()> {
    for (name, value) in PRAGMAS {
        conn.pragma_update(None, name, value)
            .map_err(|e| db_err(target, &format!("PRAGMA {name}"), e))?;
    }
    conn.busy_handler(Some(busy))
        .map_err(|e| db_err(target, "busy handler", e))
}

/// A session's connection: its own, or the in-memory database's shared one.
pub(super) enum Conn {
    Own(Box<Connection>),
    Shared(Arc<Mutex<Connection>>),
}

/// One session.
pub(super) struct SqliteSession {
    pub(super) conn: Conn,
    pub(super) target: String,
    pub(super) sql: SessionSql,
    pub(super) spec: SessionSpec,
    /// The sysbench steps' statements.
    pub(super) sb: super::sysbench::SbStatements,
    /// The insert statements of the current table, by rows.
    inserts: (String, std::collections::HashMap<usize, String>),
    pub(super) interrupt: Interrupter,
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
    /// A session on `conn`; `interrupt` cancels what it runs.
    pub(super) fn new(conn: Conn, interrupt: Interrupter, target: String, spec: SessionSpec) -> Self {
        SqliteSession {
            conn,
            target,
            sql: SessionSql::new(Dialect::Sqlite),
            spec,
            sb: Default::default(),
            inserts: (String::new(), std::collections::HashMap::new()),
            interrupt,
        }
    }

    /// Runs `f` on the connection, its error named `what`.
    pub(super) fn with<T>(&mut self, what: &str, f: impl FnOnce(&Connection) -> rusqlite::Result<T>) -> Result<T> {
        on(&self.conn, &self.target, what, f)
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
        let (conn, target) = (&self.conn, &self.target);
        let bounds = self.sql.dialect.bounds(table, count, |what, sql| {
            on(conn, target, what, |c| {
                c.query_row(sql, [], |r| r.get::<_, i64>(0))
                    .map(|v| Some(v as u64))
                    .or_else(|e| match e {
                        rusqlite::Error::QueryReturnedNoRows => Ok(None),
                        e => Err(e),
                    })
            })
        })?;
        Ok(Some(bounds))
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
    use super::super::SqliteConnector;
    use super::*;
    use crate::connect::Connector;
    use rusqlite::trace::{TraceEvent, TraceEventCodes};

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
