//! The sysbench steps on SQLite: statements from rusqlite's cache of
//! prepared statements, parameters bound in place.

use super::session::SqliteSession;
use crate::connect::sql::Dialect;
use crate::connect::sysbench::{SbCache, SqlConn, SqlValue};
use crate::error::Result;
use rusqlite::types::ValueRef;
use rusqlite::{Connection, Statement};

/// A session's sysbench statements: their texts (rusqlite caches them compiled).
#[derive(Default)]
pub(crate) struct SbStatements {
    cache: SbCache,
    texts: Vec<String>,
}

/// Binds `params` to `stmt` and runs it: rows returned, or rows changed.
fn run(stmt: &mut Statement<'_>, params: &[SqlValue<'_>]) -> rusqlite::Result<u64> {
    for (i, v) in params.iter().enumerate() {
        match *v {
            SqlValue::Int(n) => stmt.raw_bind_parameter(i + 1, n)?,
            // The generated text is ASCII.
            SqlValue::Text(t) => stmt.raw_bind_parameter(i + 1, std::str::from_utf8(t).unwrap_or_default())?,
        }
    }
    if stmt.column_count() == 0 {
        return stmt.raw_execute().map(|n| n as u64);
    }
    let mut rows = stmt.raw_query();
    let mut n = 0;
    while rows.next()?.is_some() {
        n += 1;
    }
    Ok(n)
}

/// A value as text (verify's reads).
fn text(v: ValueRef<'_>) -> Option<String> {
    match v {
        ValueRef::Null => None,
        ValueRef::Integer(n) => Some(n.to_string()),
        ValueRef::Real(x) => Some(x.to_string()),
        ValueRef::Text(t) | ValueRef::Blob(t) => Some(String::from_utf8_lossy(t).into_owned()),
    }
}

impl SqlConn for SqliteSession {
    fn sql_dialect(&self) -> &Dialect {
        &self.sql.dialect
    }

    fn literal(&self) -> bool {
        self.spec.literal
    }

    fn sb_cache(&mut self) -> &mut SbCache {
        &mut self.sb.cache
    }

    fn prepare_sql(&mut self, sql: &str) -> Result<usize> {
        self.with("prepare", |c: &Connection| c.prepare_cached(sql).map(drop))?;
        self.sb.texts.push(sql.to_string());
        Ok(self.sb.texts.len() - 1)
    }

    fn execute_prepared(&mut self, handle: usize, params: &[SqlValue<'_>]) -> Result<u64> {
        let sql = std::mem::take(&mut self.sb.texts[handle]);
        let result = self.with("statement", |c| {
            let mut stmt = c.prepare_cached(&sql)?;
            run(&mut stmt, params)
        });
        self.sb.texts[handle] = sql;
        result
    }

    fn execute_text(&mut self, sql: &str) -> Result<u64> {
        self.with("statement", |c| run(&mut c.prepare(sql)?, &[]))
    }

    fn text_rows(&mut self, sql: &str) -> Result<Vec<Vec<Option<String>>>> {
        self.with("read", |c| {
            let mut stmt = c.prepare(sql)?;
            let columns = stmt.column_count();
            let mut rows = stmt.query([])?;
            let mut out = Vec::new();
            while let Some(row) = rows.next()? {
                out.push((0..columns).map(|i| row.get_ref(i).ok().and_then(text)).collect());
            }
            Ok(out)
        })
    }

    fn forget_prepared(&mut self) -> Result<()> {
        self.sb.texts.clear();
        self.with("flush", |c| {
            c.flush_prepared_statement_cache();
            Ok(())
        })
    }
}
