//! The sysbench steps on MySQL and MariaDB: statements prepared on the
//! session's own client ([`super::wire`], the binary protocol), or sent as
//! text (COM_QUERY) where the server cannot prepare them (error 1295, as
//! sysbench falls back to emulation) or the run says so.

use super::error::wire_err;
use super::session::MysqlSession;
use super::wire::{Param, Statement};
use crate::connect::sql::Dialect;
use crate::connect::sysbench::{SbCache, SqlConn, SqlValue};
use crate::error::Result;

/// ER_UNSUPPORTED_PS: "This command is not supported in the prepared statement protocol yet".
const UNSUPPORTED_PS: u16 = 1295;

/// A statement as the session runs it.
enum Prepared {
    Server(Statement),
    Text(String),
}

/// A session's sysbench statements.
#[derive(Default)]
pub(crate) struct SbStatements {
    cache: SbCache,
    prepared: Vec<Prepared>,
}

impl MysqlSession {
    /// What a statement did: the rows it returned, or else the rows it changed.
    fn rows_or_affected(&self, rows: usize) -> u64 {
        if rows > 0 {
            rows as u64
        } else {
            self.wire.affected_rows()
        }
    }
}

impl SqlConn for MysqlSession {
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
        let prepared = match self.wire.prepare(sql) {
            Ok(stmt) => Prepared::Server(stmt),
            Err(e) if e.code == Some(UNSUPPORTED_PS) => Prepared::Text(sql.to_string()),
            Err(e) => return Err(wire_err(&self.target, "prepare", e)),
        };
        self.sb.prepared.push(prepared);
        Ok(self.sb.prepared.len() - 1)
    }

    fn execute_prepared(&mut self, handle: usize, params: &[SqlValue<'_>]) -> Result<u64> {
        let rows = match &self.sb.prepared[handle] {
            Prepared::Server(stmt) => {
                let stmt = *stmt;
                let values: smallvec::SmallVec<[Param<'_>; 4]> = params
                    .iter()
                    .map(|v| match *v {
                        SqlValue::Int(n) => Param::Int(n),
                        SqlValue::Text(t) => Param::Bytes(t),
                    })
                    .collect();
                self.wire.execute(stmt, &values)
            }
            Prepared::Text(sql) => {
                let sql = sql.clone();
                self.wire.query(&sql)
            }
        };
        let rows = rows.map_err(|e| wire_err(&self.target, "statement", e))?;
        Ok(self.rows_or_affected(rows))
    }

    fn execute_text(&mut self, sql: &str) -> Result<u64> {
        let rows = self
            .wire
            .query(sql)
            .map_err(|e| wire_err(&self.target, "statement", e))?;
        Ok(self.rows_or_affected(rows))
    }

    fn text_rows(&mut self, sql: &str) -> Result<Vec<Vec<Option<String>>>> {
        let mut out = Vec::new();
        self.wire
            .query_each(sql, |row| {
                out.push(
                    row.iter()
                        .map(|v| v.map(|b| String::from_utf8_lossy(b).into_owned()))
                        .collect(),
                );
                Ok(())
            })
            .map_err(|e| wire_err(&self.target, "read", e))?;
        Ok(out)
    }

    fn forget_prepared(&mut self) -> Result<()> {
        for p in std::mem::take(&mut self.sb.prepared) {
            if let Prepared::Server(stmt) = p {
                self.wire.close(stmt).map_err(|e| wire_err(&self.target, "close", e))?;
            }
        }
        Ok(())
    }
}
