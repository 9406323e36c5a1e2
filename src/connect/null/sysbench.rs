//! The sysbench steps on the null connector: each statement an operation
//! of its kind (a query, an insert, a delete; an update counts as an
//! insert), with its injected latency; BEGIN and COMMIT cost nothing.

use super::session::NullSession;
use crate::connect::sql::Dialect;
use crate::connect::sysbench::{SbCache, SqlConn, SqlValue};
use crate::error::Result;

/// A session's sysbench statements: each one's operation kind.
#[derive(Default)]
pub(crate) struct SbStatements {
    cache: SbCache,
    kinds: Vec<Option<usize>>,
}

/// The null operation a statement is (0 insert, 1 delete, 2 query), by its
/// first word; None for BEGIN, COMMIT, ROLLBACK and DDL.
fn kind(sql: &str) -> Option<usize> {
    let word = sql.split_whitespace().next().unwrap_or("").to_ascii_uppercase();
    match word.as_str() {
        "SELECT" => Some(2),
        "DELETE" => Some(1),
        "INSERT" | "UPDATE" => Some(0),
        _ => None,
    }
}

impl NullSession {
    fn statement(&mut self, kind: Option<usize>) -> Result<u64> {
        match kind {
            Some(op) => {
                self.count(op)?;
                self.operate(op)?;
                Ok(1)
            }
            None => Ok(0),
        }
    }
}

impl SqlConn for NullSession {
    fn sql_dialect(&self) -> &Dialect {
        &Dialect::Sqlite
    }

    fn literal(&self) -> bool {
        false
    }

    fn sb_cache(&mut self) -> &mut SbCache {
        &mut self.sb.cache
    }

    fn prepare_sql(&mut self, sql: &str) -> Result<usize> {
        self.sb.kinds.push(kind(sql));
        Ok(self.sb.kinds.len() - 1)
    }

    fn execute_prepared(&mut self, handle: usize, _params: &[SqlValue<'_>]) -> Result<u64> {
        let kind = self.sb.kinds[handle];
        self.statement(kind)
    }

    fn execute_text(&mut self, sql: &str) -> Result<u64> {
        self.statement(kind(sql))
    }

    fn text_rows(&mut self, _sql: &str) -> Result<Vec<Vec<Option<String>>>> {
        Ok(Vec::new())
    }

    fn forget_prepared(&mut self) -> Result<()> {
        self.sb.kinds.clear();
        Ok(())
    }

    fn keeps_rows(&self) -> bool {
        false
    }
}
