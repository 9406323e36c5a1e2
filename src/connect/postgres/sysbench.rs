//! The sysbench steps on PostgreSQL: statements prepared on the session's
//! own client ([`super::wire`]), parameters bound in the binary format;
//! text through the simple query protocol.

use super::error::wire_err as pg_err;
use super::session::PostgresSession;
use super::wire::{Param, Statement};
use crate::connect::sql::Dialect;
use crate::connect::sysbench::{SbCache, SqlConn, SqlValue};
use crate::error::Result;
use postgres::types::Type;

/// A session's sysbench statements.
#[derive(Default)]
pub(crate) struct SbStatements {
    cache: SbCache,
    prepared: Vec<Statement>,
}

impl SqlConn for PostgresSession {
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
        let stmt = self
            .client
            .prepare(sql)
            .map_err(|e| pg_err(&self.target, "prepare", e))?;
        self.sb.prepared.push(stmt);
        Ok(self.sb.prepared.len() - 1)
    }

    fn execute_prepared(&mut self, handle: usize, params: &[SqlValue<'_>]) -> Result<u64> {
        let stmt = &self.sb.prepared[handle];
        let types = stmt.param_types();
        // An integer goes as the column's type: INT4 for the suite's INTEGER columns.
        let values: smallvec::SmallVec<[Param<'_>; 4]> = params
            .iter()
            .zip(types.iter().chain(std::iter::repeat(&Type::INT8)))
            .map(|(v, ty)| match *v {
                SqlValue::Int(n) if *ty == Type::INT4 => Param::Int4(n as i32),
                SqlValue::Int(n) => Param::Int8(n),
                SqlValue::Text(t) => Param::Text(t),
            })
            .collect();
        self.client
            .execute_rows(stmt, 1, |_| values.as_slice())
            .map_err(|e| pg_err(&self.target, "statement", e))
    }

    fn execute_text(&mut self, sql: &str) -> Result<u64> {
        self.client
            .simple_count(sql)
            .map_err(|e| pg_err(&self.target, "statement", e))
    }

    fn text_rows(&mut self, sql: &str) -> Result<Vec<Vec<Option<String>>>> {
        self.client
            .simple_query(sql)
            .map(|r| r.rows)
            .map_err(|e| pg_err(&self.target, "read", e))
    }

    fn forget_prepared(&mut self) -> Result<()> {
        for stmt in std::mem::take(&mut self.sb.prepared) {
            self.client.close(&stmt).map_err(|e| pg_err(&self.target, "close", e))?;
        }
        Ok(())
    }
}
