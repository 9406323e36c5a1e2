//! The Insert Benchmark's statements on MySQL and MariaDB, through the
//! sessions' own client ([`wire`]). Prepared (the default): server-side
//! prepared statements with binary parameters. Literal (the reference
//! client's): SQL text with the values in it (COM_QUERY), nothing prepared
//! on the server. Maintenance and the key/value steps use a second
//! connection, the driver's, opened when first needed.

use super::error::{my_err, wire_err};
use super::wire::{self, Param, Wire};
use crate::connect::sql::{self, Engine, SessionSql};
use crate::connect::{Bounds, Maintenance, RowParams, Session, SessionSpec, Statements, TableWrites};
use crate::error::Result;
use crate::gen::{RangeQuery, Row, Rows};
use crate::stop::Interrupter;
use mysql::prelude::Queryable;
use mysql::{Conn, Opts};
use std::collections::HashMap;
use std::sync::atomic::{AtomicU32, Ordering};
use std::sync::Arc;

/// One session: the benchmark's statements on its own connection.
pub(crate) struct MysqlSession {
    pub(super) wire: Wire,
    /// The driver's connection (maintenance, key/value steps), opened when first needed.
    pub(super) admin: Option<Conn>,
    /// The driver connection's id once open, for cancelling what it runs.
    admin_id: Arc<AtomicU32>,
    /// For more connections: cancelling a statement, restoring a setting
    /// after this connection was lost, the reference's parallel ANALYZEs.
    pub(super) opts: Opts,
    pub(super) sql: SessionSql,
    pub(super) spec: SessionSpec,
    /// The current table's inserts and delete: looked up per batch without
    /// hashing a statement's text.
    pub(super) writes: TableWrites<wire::Statement>,
    /// The other prepared statements by their text.
    pub(super) statements: Statements<wire::Statement>,
    /// The key/value upserts by (table, pairs).
    pub(super) kv_puts: HashMap<(String, usize), mysql::Statement>,
    pub(super) engine: Engine,
    pub(super) target: String,
    /// MyRocks: whether the server has `information_schema.rocksdb_active_compaction_stats`.
    pub(super) active_compactions: Option<bool>,
    /// MyRocks on this host: its RocksDB event log.
    pub(super) rocksdb_log: Option<super::rocksdb_log::EventLog>,
    /// The sysbench steps' statements.
    pub(super) sb: super::sysbench::SbStatements,
}

/// A DATETIME read as text (`YYYY-MM-DD HH:MM:SS[.ffffff]`) as Unix microseconds (UTC); `i64::MIN` if not one.
fn micros_of_text(text: &[u8]) -> i64 {
    let format = time::macros::format_description!(
        version = 2,
        "[year]-[month]-[day] [hour]:[minute]:[second][optional [.[subsecond]]]"
    );
    std::str::from_utf8(text)
        .ok()
        .and_then(|t| time::PrimitiveDateTime::parse(t, format).ok())
        .map(|t| (t.assume_utc().unix_timestamp_nanos() / 1000) as i64)
        .unwrap_or(i64::MIN)
}

/// A text value parsed as T (T's default when NULL or not one).
fn parsed<T: std::str::FromStr + Default>(v: Option<&[u8]>) -> T {
    v.and_then(|b| std::str::from_utf8(b).ok()?.parse().ok())
        .unwrap_or_default()
}

/// `sql`, prepared once per session (cached by its text). Apart from the
/// session, so the text can be borrowed from the session's own SQL.
fn prepared(
    wire: &mut Wire,
    cache: &mut Statements<wire::Statement>,
    target: &str,
    sql: &str,
) -> Result<wire::Statement> {
    crate::connect::prepared_once(cache, sql, |sql| {
        wire.prepare(sql).map_err(|e| wire_err(target, "prepare", e))
    })
}

impl MysqlSession {
    pub(super) fn new(
        wire: Wire,
        opts: Opts,
        sql: SessionSql,
        spec: SessionSpec,
        engine: Engine,
        target: String,
    ) -> Self {
        MysqlSession {
            wire,
            admin: None,
            admin_id: Arc::new(AtomicU32::new(0)),
            opts,
            sql,
            spec,
            writes: TableWrites::default(),
            statements: Default::default(),
            kv_puts: HashMap::new(),
            engine,
            target,
            active_compactions: None,
            rocksdb_log: None,
            sb: Default::default(),
        }
    }

    /// The driver's connection, opened on first use.
    pub(super) fn conn(&mut self) -> Result<&mut Conn> {
        if self.admin.is_none() {
            let conn = Conn::new(self.opts.clone()).map_err(|e| my_err(&self.target, "connect", e))?;
            self.admin_id.store(conn.connection_id(), Ordering::Relaxed);
            self.admin = Some(conn);
        }
        Ok(self.admin.as_mut().expect("opened above"))
    }

    /// [`MysqlSession::conn`], and the target (for errors) beside it.
    pub(super) fn conn_target(&mut self) -> Result<(&mut Conn, &str)> {
        self.conn()?;
        Ok((self.admin.as_mut().expect("opened above"), &self.target))
    }

    /// Runs a statement as text on the session's connection.
    pub(super) fn run(&mut self, what: &str, sql: &str) -> Result<()> {
        self.wire
            .query(sql)
            .map(drop)
            .map_err(|e| wire_err(&self.target, what, e))
    }

    /// Runs DDL, forgetting prepared statements (they may name a dropped
    /// table) and closing them on the server.
    pub(super) fn ddl(&mut self, what: &str, statements: Vec<String>) -> Result<()> {
        let held: Vec<wire::Statement> = self
            .writes
            .take()
            .chain(self.statements.drain().map(|(_, s)| s))
            .collect();
        for s in held {
            self.wire.close(s).map_err(|e| wire_err(&self.target, what, e))?;
        }
        self.kv_puts.clear();
        for sql in statements {
            self.run(what, &sql)?;
        }
        Ok(())
    }

    /// Cancels the statement this session runs: `KILL QUERY` from another
    /// connection, for the session's connection and the driver's.
    pub(super) fn cancel_handle(&self) -> Interrupter {
        let (opts, id, admin) = (self.opts.clone(), self.wire.connection_id(), self.admin_id.clone());
        Arc::new(move || {
            if let Ok(mut c) = Conn::new(opts.clone()) {
                let _ = c.query_drop(format!("KILL QUERY {id}"));
                match admin.load(Ordering::Relaxed) {
                    0 => {}
                    other => {
                        let _ = c.query_drop(format!("KILL QUERY {other}"));
                    }
                }
            }
        })
    }

    /// A statement as text; the rows it returned (counted, not kept).
    fn count_text(&mut self, what: &str, sql: &str) -> Result<usize> {
        self.wire.query(sql).map_err(|e| wire_err(&self.target, what, e))
    }

    fn insert_prepared(&mut self, table: &str, rows: &Rows) -> Result<()> {
        let (n, server_keys) = (rows.len(), self.spec.server_keys);
        let stmt = match self.writes.of(table, |s| self.wire.forget(s)).inserts.get(&n) {
            Some(s) => *s,
            None => {
                let s = self
                    .wire
                    .prepare(&self.sql.dialect.insert(table, n, server_keys))
                    .map_err(|e| wire_err(&self.target, "prepare insert", e))?;
                self.writes.inserts.insert(n, s);
                s
            }
        };
        // Each row's parameters in the statement's column order, written as
        // they are made.
        let skip = usize::from(server_keys);
        let row = |i: usize| {
            let data = &rows.data[rows.data_offsets[i] as usize..rows.data_offsets[i + 1] as usize];
            RowParams {
                skip,
                columns: [
                    Param::Int(rows.transactionid[i]),
                    Param::DateTime(rows.dateandtime[i]),
                    Param::Int(rows.cashregisterid[i] as i64),
                    Param::Int(rows.customerid[i] as i64),
                    Param::Int(rows.productid[i] as i64),
                    Param::Int(rows.price[i] as i64),
                    Param::Bytes(data),
                ],
            }
        };
        self.wire
            .execute_rows(stmt, n, row)
            .map(drop)
            .map_err(|e| wire_err(&self.target, "insert", e))
    }
}

impl Session for MysqlSession {
    fn create_table(&mut self, table: &str) -> Result<()> {
        let ddl = self.sql.dialect.create_table(table, self.spec.server_keys);
        self.ddl("create table", ddl)
    }

    fn create_indexes(&mut self, table: &str, count: usize) -> Result<()> {
        let ddl = self.sql.dialect.create_indexes(table, count);
        self.ddl("create indexes", ddl)
    }

    fn insert(&mut self, table: &str, rows: &Rows) -> Result<Option<u64>> {
        if self.spec.literal {
            let text = self.sql.dialect.insert_literal(table, rows, self.spec.server_keys);
            self.run("insert", &text)?;
        } else {
            self.insert_prepared(table, rows)?;
        }
        // A multi-row insert's LAST_INSERT_ID() is its first row's key, and
        // one statement's keys are consecutive (one inserter per table).
        Ok(self.spec.server_keys.then(|| self.wire.last_insert_id()))
    }

    fn delete(&mut self, table: &str, from: u64, n: u64) -> Result<u64> {
        let target = &self.target;
        match (self.spec.server_keys, self.spec.literal) {
            (true, true) => {
                let text = self.sql.dialect.delete_oldest(table, Some((from, n)));
                self.run("delete", &text)?;
            }
            (false, true) => {
                let text = self.sql.dialect.delete_literal(table, from..from + n);
                self.run("delete", &text)?;
            }
            (server_keys, false) => {
                let second = if server_keys { n } else { from + n };
                let stmt = match self.writes.of(table, |s| self.wire.forget(s)).delete {
                    Some(s) => s,
                    None => {
                        let t = self.sql.table(table);
                        let sql = if server_keys { t.delete_oldest() } else { t.delete() };
                        let s = self
                            .wire
                            .prepare(sql)
                            .map_err(|e| wire_err(target, "prepare delete", e))?;
                        self.writes.delete = Some(s);
                        s
                    }
                };
                self.wire
                    .execute(stmt, &[Param::UInt(from), Param::UInt(second)])
                    .map_err(|e| wire_err(target, "delete", e))?;
            }
        }
        Ok(self.wire.affected_rows())
    }

    fn range_query(&mut self, table: &str, query: &RangeQuery, indexed: bool) -> Result<usize> {
        if self.spec.literal {
            let text = self.sql.dialect.range_literal(table, query);
            return self.count_text("range query", &text);
        }
        let sql = self.sql.table(table).range(query.index, indexed);
        let stmt = prepared(&mut self.wire, &mut self.statements, &self.target, sql)?;
        self.wire
            .execute(stmt, &[Param::Int(query.lower as i64)])
            .map_err(|e| wire_err(&self.target, "range query", e))
    }

    fn point_query(&mut self, table: &str, keys: &[u64]) -> Result<usize> {
        if self.spec.literal {
            let text = self.sql.dialect.point_literal(table, keys);
            return self.count_text("point query", &text);
        }
        let stmt = if keys.len() == crate::gen::POINT_KEYS {
            let sql = self.sql.table(table).point();
            prepared(&mut self.wire, &mut self.statements, &self.target, sql)?
        } else {
            let sql = self.sql.dialect.point_query(table, keys.len());
            prepared(&mut self.wire, &mut self.statements, &self.target, &sql)?
        };
        // The usual number of keys without an allocation per query.
        let mut fixed = [Param::UInt(0); crate::gen::POINT_KEYS];
        let owned: Vec<Param<'_>>;
        let params: &[Param<'_>] = match keys.len() <= fixed.len() {
            true => {
                for (p, &k) in fixed.iter_mut().zip(keys) {
                    *p = Param::UInt(k);
                }
                &fixed[..keys.len()]
            }
            false => {
                owned = keys.iter().map(|&k| Param::UInt(k)).collect();
                &owned
            }
        };
        self.wire
            .execute(stmt, params)
            .map_err(|e| wire_err(&self.target, "point query", e))
    }

    fn key_extreme(&mut self, table: &str, max: bool) -> Result<Option<u64>> {
        let text = self.sql.dialect.key_extreme(table, max);
        self.wire
            .query_first(&text)
            .map_err(|e| wire_err(&self.target, "key bound", e))
    }

    fn maintain(&mut self, m: &Maintenance<'_>) -> Result<Vec<String>> {
        if m.reference {
            self.reference_maintenance(m)
        } else {
            self.settle_and_analyze(m.tables, m.stop)
        }
    }

    fn bounds(&mut self, table: &str, count: bool) -> Result<Option<Bounds>> {
        let (wire, target) = (&mut self.wire, &self.target);
        let bounds = self.sql.dialect.bounds(table, count, |what, sql| {
            wire.query_first(sql).map_err(|e| wire_err(target, what, e))
        })?;
        Ok(Some(bounds))
    }

    fn interrupter(&self) -> Option<Interrupter> {
        Some(self.cancel_handle())
    }

    fn rows(&mut self, table: &str, keys: &[u64]) -> Result<Vec<Row>> {
        let mut out = Vec::with_capacity(keys.len());
        for chunk in keys.chunks(sql::ROWS_PER_READ) {
            // As text, the keys in it: verify prepares nothing on the server either.
            let sql = self.sql.dialect.rows_listed(table, chunk);
            self.wire
                .query_each(&sql, |r| {
                    let at = |i: usize| r.get(i).copied().flatten();
                    out.push(Row {
                        transactionid: parsed(at(0)),
                        dateandtime: at(1).map_or(i64::MIN, micros_of_text),
                        cashregisterid: parsed(at(2)),
                        customerid: parsed(at(3)),
                        productid: parsed(at(4)),
                        price: parsed(at(5)),
                        data: at(6)
                            .map(|d| String::from_utf8_lossy(d).into_owned())
                            .unwrap_or_default(),
                    });
                    Ok(())
                })
                .map_err(|e| wire_err(&self.target, "read rows", e))?;
        }
        Ok(out)
    }
}

#[cfg(test)]
mod tests {
    use super::super::MysqlConnector;
    use super::*;

    /// A session on the local MariaDB; None (a note) when it is not
    /// reachable, a failure in CI.
    fn local_session() -> Option<MysqlSession> {
        match MysqlConnector::new("mysql://root@127.0.0.1:3306/test").and_then(|c| c.open_session()) {
            Ok(s) => Some(s),
            Err(e) if std::env::var("CI").as_deref() == Ok("true") => panic!("MariaDB, and CI=true: {e}"),
            Err(e) => {
                eprintln!("note: MariaDB is not reachable ({e}); skipping (CI would fail)");
                None
            }
        }
    }

    #[test]
    fn a_held_statement_survives_many_more_prepared_statements() {
        let Some(mut s) = local_session() else { return };
        let table = "stmt_cache_unit_my";
        s.run("drop", &format!("DROP TABLE IF EXISTS {table}")).unwrap();
        s.create_table(table).unwrap();
        let keys: Vec<u64> = (1..=crate::gen::POINT_KEYS as u64).collect();
        assert_eq!(s.point_query(table, &keys).unwrap(), 0);
        // 40 more statements: a bounded cache (the driver's held 32) would
        // evict, and close on the server, the one this session holds.
        for n in 1..=40u64 {
            let keys: Vec<u64> = (0..n + 10).collect();
            s.point_query(table, &keys).unwrap();
        }
        assert_eq!(s.point_query(table, &keys).unwrap(), 0);
        s.run("drop", &format!("DROP TABLE {table}")).unwrap();
    }

    #[test]
    fn a_session_that_writes_another_table_closes_the_last_ones_statements() {
        let Some(mut s) = local_session() else { return };
        let tables = ["stmt_switch_unit_a", "stmt_switch_unit_b"];
        for t in tables {
            s.run("drop", &format!("DROP TABLE IF EXISTS {t}")).unwrap();
            s.create_table(t).unwrap();
        }
        let closed = |s: &mut MysqlSession| -> u64 {
            let sql =
                "SELECT VARIABLE_VALUE FROM information_schema.SESSION_STATUS WHERE VARIABLE_NAME = 'COM_STMT_CLOSE'";
            s.wire.query_first(sql).unwrap().unwrap()
        };
        let before = closed(&mut s);
        let rows = crate::gen::RowGen::new(&crate::gen::RowSpec::default()).unwrap();
        for round in 0..10u64 {
            for t in tables {
                s.insert(t, &rows.generate(round * 5, 5).unwrap()).unwrap();
                assert_eq!(s.delete(t, round * 5, 5).unwrap(), 5);
            }
        }
        // Each of the 19 switches closed the insert and the delete it left:
        // none stays prepared on the server for the session's life.
        assert_eq!(closed(&mut s) - before, 38);
        for t in tables {
            s.run("drop", &format!("DROP TABLE {t}")).unwrap();
        }
    }
}
