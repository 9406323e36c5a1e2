//! The Insert Benchmark's statements on MySQL and MariaDB. Prepared (the
//! default): server-side prepared statements (the driver's statement
//! cache) with binary parameters. Literal (the reference client's): SQL
//! text with the values in it (COM_QUERY), nothing prepared on the server.

use super::my_err;
use crate::connect::sql::{self, Engine, SessionSql};
use crate::connect::{Bounds, Maintenance, Session, SessionSpec, Statements};
use crate::error::Result;
use crate::gen::{RangeQuery, Row, Rows};
use crate::stop::Interrupter;
use mysql::prelude::Queryable;
use mysql::{Conn, Opts, Params, Value};
use std::collections::HashMap;
use std::sync::Arc;

/// One connection.
pub(crate) struct MysqlSession {
    pub(super) conn: Conn,
    /// For more connections: cancelling a statement, restoring a setting
    /// after this connection was lost, the reference's parallel ANALYZEs.
    pub(super) opts: Opts,
    pub(super) sql: SessionSql,
    pub(super) spec: SessionSpec,
    /// The inserts of the current table, by rows.
    pub(super) inserts: (String, HashMap<usize, mysql::Statement>),
    /// The other prepared statements by their text: passing the text to
    /// the driver would have it scan the text for named parameters on
    /// every execution (a profile's top entry of the client's own code).
    pub(super) statements: Statements<mysql::Statement>,
    /// The key/value upserts by (table, pairs).
    pub(super) kv_puts: HashMap<(String, usize), mysql::Statement>,
    pub(super) engine: Engine,
    pub(super) target: String,
    /// MyRocks: whether the server has `information_schema.rocksdb_active_compaction_stats`.
    pub(super) active_compactions: Option<bool>,
    /// MyRocks on this host: its RocksDB event log.
    pub(super) rocksdb_log: Option<super::rocksdb_log::EventLog>,
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

/// A DATETIME read as text (`YYYY-MM-DD HH:MM:SS[.ffffff]`) as Unix microseconds (UTC).
fn micros_of_text(v: &Value) -> i64 {
    let Value::Bytes(b) = v else {
        return micros(v);
    };
    let text = String::from_utf8_lossy(b);
    let format = time::macros::format_description!(
        version = 2,
        "[year]-[month]-[day] [hour]:[minute]:[second][optional [.[subsecond]]]"
    );
    time::PrimitiveDateTime::parse(&text, format)
        .map(|t| (t.assume_utc().unix_timestamp_nanos() / 1000) as i64)
        .unwrap_or(i64::MIN)
}

/// `sql`, prepared once per session (cached by its text).
fn prepared(
    conn: &mut Conn,
    cache: &mut Statements<mysql::Statement>,
    target: &str,
    sql: &str,
) -> Result<mysql::Statement> {
    if let Some(s) = cache.get(sql) {
        return Ok(s.clone());
    }
    let s = conn.prep(sql).map_err(|e| my_err(target, "prepare", e))?;
    cache.insert(sql.to_string(), s.clone());
    Ok(s)
}

/// The rows of a result (text or binary), counted as they arrive, not kept.
fn counted<T: mysql::prelude::Protocol>(
    result: mysql::Result<mysql::QueryResult<'_, '_, '_, T>>,
    target: &str,
    what: &str,
) -> Result<usize> {
    let mut n = 0;
    for row in result.map_err(|e| my_err(target, what, e))? {
        row.map_err(|e| my_err(target, what, e))?;
        n += 1;
    }
    Ok(n)
}

impl MysqlSession {
    pub(super) fn run(&mut self, what: &str, sql: &str) -> Result<()> {
        self.conn.query_drop(sql).map_err(|e| my_err(&self.target, what, e))
    }

    /// Runs DDL, forgetting prepared statements (they may name a dropped table).
    pub(super) fn ddl(&mut self, what: &str, statements: Vec<String>) -> Result<()> {
        self.inserts.1.clear();
        self.kv_puts.clear();
        self.statements.clear();
        for sql in statements {
            self.run(what, &sql)?;
        }
        Ok(())
    }

    /// Cancels the statement this connection runs: `KILL QUERY` from a second connection.
    pub(super) fn cancel_handle(&self) -> Interrupter {
        let (opts, id) = (self.opts.clone(), self.conn.connection_id());
        Arc::new(move || {
            if let Ok(mut c) = Conn::new(opts.clone()) {
                let _ = c.query_drop(format!("KILL QUERY {id}"));
            }
        })
    }

    /// A prepared statement's execution; the rows it returned (counted as they arrive).
    fn count_prepared(&mut self, what: &str, stmt: &mysql::Statement, params: Params) -> Result<usize> {
        let result = self.conn.exec_iter(stmt, params);
        counted(result, &self.target, what)
    }

    /// A statement as text; the rows it returned.
    fn count_text(&mut self, what: &str, sql: &str) -> Result<usize> {
        let result = self.conn.query_iter(sql);
        counted(result, &self.target, what)
    }

    fn insert_prepared(&mut self, table: &str, rows: &Rows) -> Result<()> {
        let (n, server_keys) = (rows.len(), self.spec.server_keys);
        if self.inserts.0 != table {
            self.inserts = (table.to_string(), HashMap::new());
        }
        let stmt = match self.inserts.1.get(&n) {
            Some(s) => s.clone(),
            None => {
                let s = self
                    .conn
                    .prep(self.sql.dialect.insert(table, n, server_keys))
                    .map_err(|e| my_err(&self.target, "prepare insert", e))?;
                self.inserts.1.insert(n, s.clone());
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
        Ok(self.spec.server_keys.then(|| self.conn.last_insert_id()))
    }

    fn delete(&mut self, table: &str, from: u64, n: u64) -> Result<u64> {
        let target = &self.target;
        match (self.spec.server_keys, self.spec.literal) {
            (true, true) => {
                let text = self.sql.dialect.delete_oldest(table, Some((from, n)));
                self.conn.query_drop(text).map_err(|e| my_err(target, "delete", e))?;
            }
            (false, true) => {
                let text = self.sql.dialect.delete_literal(table, from..from + n);
                self.conn.query_drop(text).map_err(|e| my_err(target, "delete", e))?;
            }
            (server_keys, false) => {
                let t = self.sql.table(table);
                let (sql, second) = if server_keys {
                    (t.delete_oldest(), n)
                } else {
                    (t.delete(), from + n)
                };
                let stmt = prepared(&mut self.conn, &mut self.statements, target, sql)?;
                self.conn
                    .exec_drop(&stmt, (from, second))
                    .map_err(|e| my_err(target, "delete", e))?;
            }
        }
        Ok(self.conn.affected_rows())
    }

    fn range_query(&mut self, table: &str, query: &RangeQuery, indexed: bool) -> Result<usize> {
        if self.spec.literal {
            let text = self.sql.dialect.range_literal(table, query);
            return self.count_text("range query", &text);
        }
        let sql = self.sql.table(table).range(query.index, indexed);
        let stmt = prepared(&mut self.conn, &mut self.statements, &self.target, sql)?;
        self.count_prepared("range query", &stmt, Params::from((query.lower,)))
    }

    fn point_query(&mut self, table: &str, keys: &[u64]) -> Result<usize> {
        if self.spec.literal {
            let text = self.sql.dialect.point_literal(table, keys);
            return self.count_text("point query", &text);
        }
        let params = Params::Positional(keys.iter().map(|&k| Value::UInt(k)).collect());
        let stmt = if keys.len() == crate::gen::POINT_KEYS {
            let sql = self.sql.table(table).point();
            prepared(&mut self.conn, &mut self.statements, &self.target, sql)?
        } else {
            let sql = self.sql.dialect.point_query(table, keys.len());
            prepared(&mut self.conn, &mut self.statements, &self.target, &sql)?
        };
        self.count_prepared("point query", &stmt, params)
    }

    fn key_extreme(&mut self, table: &str, max: bool) -> Result<Option<u64>> {
        let text = self.sql.dialect.key_extreme(table, max);
        let v: Option<Option<u64>> = self
            .conn
            .query_first(text)
            .map_err(|e| my_err(&self.target, "key bound", e))?;
        Ok(v.flatten())
    }

    fn maintain(&mut self, m: &Maintenance<'_>) -> Result<Vec<String>> {
        if m.reference {
            self.reference_maintenance(m)
        } else {
            self.settle_and_analyze(m.tables, m.stop)
        }
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
            // As text, the keys in it: verify prepares nothing on the server either.
            let sql = self.sql.dialect.rows_listed(table, chunk);
            let rows: Vec<mysql::Row> = self
                .conn
                .query(&sql)
                .map_err(|e| my_err(&self.target, "read rows", e))?;
            for r in rows {
                let when: Value = r.get(1).unwrap_or(Value::NULL);
                out.push(Row {
                    transactionid: r.get(0).unwrap_or_default(),
                    dateandtime: micros_of_text(&when),
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

#[cfg(test)]
mod tests {
    use super::super::MysqlConnector;
    use super::*;

    #[test]
    fn a_held_statement_survives_more_statements_than_the_drivers_default_cache() {
        let dsn = "mysql://root@127.0.0.1:3306/test";
        let mut s = match MysqlConnector::new(dsn).and_then(|c| c.open_session()) {
            Ok(s) => s,
            Err(e) if std::env::var("CI").as_deref() == Ok("true") => panic!("MariaDB, and CI=true: {e}"),
            Err(e) => return eprintln!("note: MariaDB is not reachable ({e}); skipping (CI would fail)"),
        };
        let table = "stmt_cache_unit_my";
        s.run("drop", &format!("DROP TABLE IF EXISTS {table}")).unwrap();
        s.create_table(table).unwrap();
        let keys: Vec<u64> = (1..=crate::gen::POINT_KEYS as u64).collect();
        assert_eq!(s.point_query(table, &keys).unwrap(), 0);
        // 40 more statements: the driver's default cache (32) would evict,
        // and close on the server, the one this session holds.
        for n in 1..=40u64 {
            let keys: Vec<u64> = (0..n + 10).collect();
            s.point_query(table, &keys).unwrap();
        }
        assert_eq!(s.point_query(table, &keys).unwrap(), 0);
        s.run("drop", &format!("DROP TABLE {table}")).unwrap();
    }
}
