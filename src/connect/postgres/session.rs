//! The Insert Benchmark's statements on PostgreSQL. Prepared (the default):
//! one multi-row INSERT per batch size, range and point queries, deletes,
//! all with binary parameters. Literal (the reference client's): the values
//! in the SQL text, sent through the simple query protocol, and the queries
//! through SQL-level `PREPARE` / `EXECUTE`, as iibench.py's
//! `--use_prepared_query` does.

use super::pg_err;
use crate::connect::sql::{self, SessionSql};
use crate::connect::{Bounds, Maintenance, Session, SessionSpec};
use crate::error::Result;
use crate::gen::{RangeQuery, Row, Rows};
use crate::stop::Interrupter;
use postgres::types::ToSql;
use postgres::{Client, Config, NoTls, SimpleQueryMessage, Statement};
use std::collections::HashMap;
use std::sync::Arc;
use std::time::{Duration, SystemTime, UNIX_EPOCH};

/// One connection.
pub(crate) struct PostgresSession {
    pub(super) client: Client,
    /// For more connections (the reference's parallel VACUUMs).
    pub(super) config: Config,
    pub(super) target: String,
    pub(super) sql: SessionSql,
    pub(super) spec: SessionSpec,
    /// Prepared statements by their text.
    pub(super) statements: HashMap<String, Statement>,
    /// The inserts of the current table, by rows.
    pub(super) inserts: (String, HashMap<usize, Statement>),
    /// With server keys: the key the sequence gives this session's next row
    /// (None until asked, and after a failed insert, which may have used some).
    pub(super) next_key: Option<u64>,
    /// The table whose reference queries this session has PREPAREd.
    pub(super) reference_queries: Option<String>,
}

fn timestamp(micros: i64) -> SystemTime {
    UNIX_EPOCH + Duration::from_micros(micros as u64)
}

/// The rows a simple query returned, and the count of its command tag.
fn simple_counts(messages: &[SimpleQueryMessage]) -> (usize, u64) {
    let mut rows = 0;
    let mut affected = 0;
    for m in messages {
        match m {
            SimpleQueryMessage::Row(_) => rows += 1,
            SimpleQueryMessage::CommandComplete(n) => affected = *n,
            _ => {}
        }
    }
    (rows, affected)
}

impl PostgresSession {
    /// `sql`, prepared once per session (cached by its text).
    pub(super) fn prepared(&mut self, sql: &str) -> Result<Statement> {
        if let Some(s) = self.statements.get(sql) {
            return Ok(s.clone());
        }
        let s = self
            .client
            .prepare(sql)
            .map_err(|e| pg_err(&self.target, "prepare", e))?;
        self.statements.insert(sql.to_string(), s.clone());
        Ok(s)
    }

    pub(super) fn batch(&mut self, what: &str, sql: &str) -> Result<()> {
        self.client
            .batch_execute(sql)
            .map_err(|e| pg_err(&self.target, what, e))
    }

    /// A statement as text (the simple query protocol): its rows and affected count.
    fn simple(&mut self, what: &str, sql: &str) -> Result<(usize, u64)> {
        let messages = self
            .client
            .simple_query(sql)
            .map_err(|e| pg_err(&self.target, what, e))?;
        Ok(simple_counts(&messages))
    }

    /// Runs DDL, forgetting prepared statements (they may name a dropped table).
    pub(super) fn ddl(&mut self, what: &str, statements: Vec<String>) -> Result<()> {
        self.statements.clear();
        self.inserts.1.clear();
        for sql in statements {
            self.batch(what, &sql)?;
        }
        Ok(())
    }

    pub(super) fn cancel_handle(&self) -> Interrupter {
        let token = self.client.cancel_token();
        Arc::new(move || {
            let _ = token.cancel_query(NoTls);
        })
    }

    /// The insert of `n` rows into `table`, prepared once per batch size.
    fn insert_statement(&mut self, table: &str, n: usize) -> Result<Statement> {
        if self.inserts.0 != table {
            self.inserts = (table.to_string(), HashMap::new());
        }
        if let Some(s) = self.inserts.1.get(&n) {
            return Ok(s.clone());
        }
        let sql = self.sql.dialect.insert(table, n, self.spec.server_keys);
        let s = self.prepared(&sql)?;
        self.inserts.1.insert(n, s.clone());
        Ok(s)
    }

    fn insert_prepared(&mut self, table: &str, rows: &Rows) -> Result<()> {
        let (n, server_keys) = (rows.len(), self.spec.server_keys);
        let stmt = self.insert_statement(table, n)?;
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

    /// The first key the sequence gave the `n` rows just inserted: counted
    /// on from the session's last insert, or (the first time, or after a
    /// failure) asked with `currval`, the session's last value.
    fn first_key(&mut self, table: &str, n: u64) -> Result<u64> {
        let first = match self.next_key {
            Some(k) => k,
            None => {
                let sql = format!("SELECT currval('{table}_transactionid_seq')");
                let row = self
                    .client
                    .query_one(sql.as_str(), &[])
                    .map_err(|e| pg_err(&self.target, "currval", e))?;
                (row.get::<_, i64>(0) as u64 + 1).saturating_sub(n)
            }
        };
        self.next_key = Some(first + n);
        Ok(first)
    }
}

impl Session for PostgresSession {
    fn create_table(&mut self, table: &str) -> Result<()> {
        let ddl = self.sql.dialect.create_table(table, self.spec.server_keys);
        self.next_key = None;
        self.ddl("create table", ddl)
    }

    fn prepare(&mut self, table: &str) -> Result<()> {
        if !self.spec.literal || self.reference_queries.as_deref() == Some(table) {
            return Ok(());
        }
        // The reference's query processes PREPARE their queries once.
        self.batch("deallocate", "DEALLOCATE ALL")?;
        for (_, text) in self.sql.dialect.pg_prepares(table) {
            self.batch("prepare", &text)?;
        }
        self.reference_queries = Some(table.to_string());
        Ok(())
    }

    fn create_indexes(&mut self, table: &str, count: usize) -> Result<()> {
        let ddl = self.sql.dialect.create_indexes(table, count);
        self.ddl("create index", ddl)
    }

    fn insert(&mut self, table: &str, rows: &Rows) -> Result<Option<u64>> {
        let inserted = if self.spec.literal {
            let text = self.sql.dialect.insert_literal(table, rows, self.spec.server_keys);
            self.batch("insert", &text)
        } else {
            self.insert_prepared(table, rows)
        };
        if let Err(e) = inserted {
            // A failed insert may have taken values from the sequence.
            self.next_key = None;
            return Err(e);
        }
        if !self.spec.server_keys {
            return Ok(None);
        }
        self.first_key(table, rows.len() as u64).map(Some)
    }

    fn delete(&mut self, table: &str, from: u64, n: u64) -> Result<u64> {
        match (self.spec.server_keys, self.spec.literal) {
            (true, true) => {
                let text = self.sql.dialect.delete_oldest(table, Some((from, n)));
                Ok(self.simple("delete", &text)?.1)
            }
            (false, true) => {
                let text = self.sql.dialect.delete_literal(table, from..from + n);
                Ok(self.simple("delete", &text)?.1)
            }
            (server_keys, false) => {
                let text = if server_keys {
                    self.sql.table(table).delete_oldest().to_string()
                } else {
                    self.sql.table(table).delete().to_string()
                };
                let stmt = self.prepared(&text)?;
                let second = if server_keys { n } else { from + n };
                self.client
                    .execute(&stmt, &[&(from as i64), &(second as i64)])
                    .map_err(|e| pg_err(&self.target, "delete", e))
            }
        }
    }

    fn range_query(&mut self, table: &str, query: &RangeQuery, indexed: bool) -> Result<usize> {
        if self.spec.literal {
            let text = self.sql.dialect.range_literal(table, query);
            return Ok(self.simple("range query", &text)?.0);
        }
        let text = self.sql.table(table).range(query.index, indexed).to_string();
        let stmt = self.prepared(&text)?;
        let rows = self
            .client
            .query(&stmt, &[&query.lower])
            .map_err(|e| pg_err(&self.target, "range query", e))?;
        Ok(rows.len())
    }

    fn point_query(&mut self, table: &str, keys: &[u64]) -> Result<usize> {
        if self.spec.literal {
            let text = self.sql.dialect.point_literal(table, keys);
            return Ok(self.simple("point query", &text)?.0);
        }
        let text = if keys.len() == crate::gen::POINT_KEYS {
            self.sql.table(table).point().to_string()
        } else {
            self.sql.dialect.point_query(table, keys.len())
        };
        let stmt = self.prepared(&text)?;
        let keys: Vec<i64> = keys.iter().map(|&k| k as i64).collect();
        let params: Vec<&(dyn ToSql + Sync)> = keys.iter().map(|k| k as &(dyn ToSql + Sync)).collect();
        let rows = self
            .client
            .query(&stmt, &params)
            .map_err(|e| pg_err(&self.target, "point query", e))?;
        Ok(rows.len())
    }

    fn key_extreme(&mut self, table: &str, max: bool) -> Result<Option<u64>> {
        let text = self.sql.dialect.key_extreme(table, max);
        let messages = self
            .client
            .simple_query(&text)
            .map_err(|e| pg_err(&self.target, "key bound", e))?;
        Ok(messages.iter().find_map(|m| match m {
            SimpleQueryMessage::Row(r) => r.get(0).and_then(|v| v.parse().ok()),
            _ => None,
        }))
    }

    fn maintain(&mut self, m: &Maintenance<'_>) -> Result<Vec<String>> {
        if m.reference {
            self.reference_maintenance(m)
        } else {
            self.vacuum_and_checkpoint(m.tables, m.stop)
        }
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
