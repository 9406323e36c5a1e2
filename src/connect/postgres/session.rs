//! The Insert Benchmark's statements on PostgreSQL. Prepared (the default):
//! one multi-row INSERT per batch size, range and point queries, deletes,
//! all with binary parameters. Literal (the reference client's): the values
//! in the SQL text, sent through the simple query protocol, and the queries
//! through SQL-level `PREPARE` / `EXECUTE`, as iibench.py's
//! `--use_prepared_query` does.

use super::error::wire_err as pg_err;
use super::wire::{self, Param, Statement, Wire};
use crate::connect::sql::SessionSql;
use crate::connect::RowParams;
use crate::connect::{Bounds, Maintenance, Session, SessionSpec, Statements, TableWrites};
use crate::error::Result;
use crate::gen::{RangeQuery, Row, Rows};
use crate::stop::Interrupter;
use postgres::types::{ToSql, Type};
use std::sync::Arc;
use std::time::{SystemTime, UNIX_EPOCH};

/// One connection, through the sessions' own client ([`wire`]).
pub(crate) struct PostgresSession {
    pub(super) client: Wire,
    /// For more connections (the reference's parallel VACUUMs) and cancels.
    pub(super) dial: super::Dial,
    pub(super) target: String,
    pub(super) sql: SessionSql,
    pub(super) spec: SessionSpec,
    /// Prepared statements by their text.
    pub(super) statements: Statements<Statement>,
    /// The current table's inserts and delete, found per batch without
    /// hashing their text.
    pub(super) writes: TableWrites<Statement>,
    /// With server keys: the key the sequence gives this session's next row
    /// (None until asked, and after a failed insert, which may have used some).
    pub(super) next_key: Option<u64>,
    /// The table whose reference queries this session has PREPAREd.
    pub(super) reference_queries: Option<String>,
    /// The sysbench steps' statements.
    pub(super) sb: super::sysbench::SbStatements,
}

/// `sql`, prepared once per session (cached by its text). Apart from the
/// session, so the text can be borrowed from the session's own SQL.
fn prepared_in(client: &mut Wire, cache: &mut Statements<Statement>, target: &str, sql: &str) -> Result<Statement> {
    crate::connect::prepared_once(cache, sql, |sql| {
        client.prepare(sql).map_err(|e| pg_err(target, "prepare", e))
    })
}

impl PostgresSession {
    /// `sql`, prepared once per session (cached by its text).
    pub(super) fn prepared(&mut self, sql: &str) -> Result<Statement> {
        prepared_in(&mut self.client, &mut self.statements, &self.target, sql)
    }

    pub(super) fn batch(&mut self, what: &str, sql: &str) -> Result<()> {
        self.client
            .batch_execute(sql)
            .map_err(|e| pg_err(&self.target, what, e))
    }

    /// A statement as text (the simple query protocol): its rows and affected count.
    fn simple(&mut self, what: &str, sql: &str) -> Result<(usize, u64)> {
        let result = self
            .client
            .simple_query(sql)
            .map_err(|e| pg_err(&self.target, what, e))?;
        Ok((result.rows.len(), result.affected))
    }

    /// Runs DDL, forgetting prepared statements (they may name a dropped table).
    pub(super) fn ddl(&mut self, what: &str, statements: Vec<String>) -> Result<()> {
        if !self.statements.is_empty() || self.reference_queries.is_some() {
            self.batch(what, "DEALLOCATE ALL")?;
        }
        self.statements.clear();
        self.writes.take().for_each(drop);
        self.reference_queries = None;
        for sql in statements {
            self.batch(what, &sql)?;
        }
        Ok(())
    }

    pub(super) fn cancel_handle(&self) -> Interrupter {
        let key = self.client.cancel_key();
        Arc::new(move || key.cancel())
    }

    /// The insert of `n` rows into `table`, prepared once per batch size.
    fn insert_statement(&mut self, table: &str, n: usize) -> Result<()> {
        // Another table's statements stay prepared in `statements`.
        if self.writes.of(table, drop).inserts.contains_key(&n) {
            return Ok(());
        }
        let sql = self.sql.dialect.insert(table, n, self.spec.server_keys);
        let s = self.prepared(&sql)?;
        self.writes.inserts.insert(n, s);
        Ok(())
    }

    fn insert_prepared(&mut self, table: &str, rows: &Rows) -> Result<()> {
        let (n, server_keys) = (rows.len(), self.spec.server_keys);
        self.insert_statement(table, n)?;
        let stmt = &self.writes.inserts[&n];
        // Each row's parameters in the statement's column order, written as
        // they are made.
        let skip = usize::from(server_keys);
        let row = |i: usize| {
            let data = &rows.data[rows.data_offsets[i] as usize..rows.data_offsets[i + 1] as usize];
            let columns = [
                Param::Int8(rows.transactionid[i]),
                Param::Timestamp(rows.dateandtime[i]),
                Param::Int4(rows.cashregisterid[i]),
                Param::Int4(rows.customerid[i]),
                Param::Int4(rows.productid[i]),
                Param::Int4(rows.price[i]),
                Param::Text(data),
            ];
            RowParams { skip, columns }
        };
        self.client
            .execute_rows(stmt, n, row)
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
                let result = self
                    .client
                    .simple_query(&sql)
                    .map_err(|e| pg_err(&self.target, "currval", e))?;
                let last: u64 = wire::first_value(&result)
                    .ok_or_else(|| crate::error::Error::database(&self.target, "currval: no value"))?;
                (last + 1).saturating_sub(n)
            }
        };
        self.next_key = Some(first + n);
        Ok(first)
    }
}

impl PostgresSession {
    /// The rows of `keys` (an int8[] parameter), decoded.
    fn read_rows(&mut self, sql: &str, keys: &[i64]) -> std::result::Result<Vec<Row>, wire::WireError> {
        let stmt = self.client.prepare_typed(sql, &[Type::INT8_ARRAY])?;
        let types: Vec<Type> = stmt.columns().to_vec();
        let mut rows = Vec::with_capacity(keys.len());
        self.client.query_each(&stmt, &[&keys], |v| {
            let t: SystemTime = wire::decode(&types[1], v.value(1))?;
            rows.push(Row {
                transactionid: wire::decode(&types[0], v.value(0))?,
                dateandtime: t
                    .duration_since(UNIX_EPOCH)
                    .map(|d| d.as_micros() as i64)
                    .unwrap_or(i64::MIN),
                cashregisterid: wire::decode(&types[2], v.value(2))?,
                customerid: wire::decode(&types[3], v.value(3))?,
                productid: wire::decode(&types[4], v.value(4))?,
                price: wire::decode(&types[5], v.value(5))?,
                data: wire::decode(&types[6], v.value(6))?,
            });
            Ok(())
        })?;
        self.client.close(&stmt)?;
        Ok(rows)
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
                if self.writes.of(table, drop).delete.is_none() {
                    let t = self.sql.table(table);
                    let text = if server_keys { t.delete_oldest() } else { t.delete() };
                    let s = prepared_in(&mut self.client, &mut self.statements, &self.target, text)?;
                    self.writes.delete = Some(s);
                }
                let stmt = self.writes.delete.as_ref().expect("just prepared");
                let second = if server_keys { n } else { from + n };
                let params = [Param::Int8(from as i64), Param::Int8(second as i64)];
                self.client
                    .execute_rows(stmt, 1, |_| params)
                    .map_err(|e| pg_err(&self.target, "delete", e))
            }
        }
    }

    fn range_query(&mut self, table: &str, query: &RangeQuery, indexed: bool) -> Result<usize> {
        if self.spec.literal {
            let text = self.sql.dialect.range_literal(table, query);
            return Ok(self.simple("range query", &text)?.0);
        }
        let text = self.sql.table(table).range(query.index, indexed);
        let stmt = prepared_in(&mut self.client, &mut self.statements, &self.target, text)?;
        self.client
            .query_count(&stmt, &[&query.lower])
            .map_err(|e| pg_err(&self.target, "range query", e))
    }

    fn point_query(&mut self, table: &str, keys: &[u64]) -> Result<usize> {
        if self.spec.literal {
            let text = self.sql.dialect.point_literal(table, keys);
            return Ok(self.simple("point query", &text)?.0);
        }
        let stmt = if keys.len() == crate::gen::POINT_KEYS {
            let text = self.sql.table(table).point();
            prepared_in(&mut self.client, &mut self.statements, &self.target, text)?
        } else {
            let text = self.sql.dialect.point_query(table, keys.len());
            self.prepared(&text)?
        };
        let keys: Vec<i64> = keys.iter().map(|&k| k as i64).collect();
        let params: Vec<&(dyn ToSql + Sync)> = keys.iter().map(|k| k as &(dyn ToSql + Sync)).collect();
        self.client
            .query_count(&stmt, &params)
            .map_err(|e| pg_err(&self.target, "point query", e))
    }

    fn key_extreme(&mut self, table: &str, max: bool) -> Result<Option<u64>> {
        let text = self.sql.dialect.key_extreme(table, max);
        let result = self
            .client
            .simple_query(&text)
            .map_err(|e| pg_err(&self.target, "key bound", e))?;
        Ok(wire::first_value(&result))
    }

    fn maintain(&mut self, m: &Maintenance<'_>) -> Result<Vec<String>> {
        if m.reference {
            self.reference_maintenance(m)
        } else {
            self.vacuum_and_checkpoint(m.tables, m.stop)
        }
    }

    fn bounds(&mut self, table: &str, count: bool) -> Result<Option<Bounds>> {
        let (client, target) = (&mut self.client, &self.target);
        let bounds = self.sql.dialect.bounds(table, count, |what, sql| {
            let result = client.simple_query(sql).map_err(|e| pg_err(target, what, e))?;
            Ok(wire::first_value(&result))
        })?;
        Ok(Some(bounds))
    }

    fn rows(&mut self, table: &str, keys: &[u64]) -> Result<Vec<Row>> {
        let sql = self.sql.dialect.rows(table, keys.len());
        let keys: Vec<i64> = keys.iter().map(|&k| k as i64).collect();
        // Through the primary key: a freshly loaded table has no statistics,
        // and the planner would scan it whole for a hundred keys.
        self.batch("read rows", "SET enable_seqscan = off")?;
        let rows = self.read_rows(&sql, &keys);
        self.batch("read rows", "RESET enable_seqscan")?;
        rows.map_err(|e| pg_err(&self.target, "read rows", e))
    }

    fn interrupter(&self) -> Option<Interrupter> {
        Some(self.cancel_handle())
    }
}
