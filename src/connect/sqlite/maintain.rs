//! The wait step on SQLite (the reference scripts have no SQLite
//! procedure: the same either way): ANALYZE of each table, then a checkpoint
//! that empties the WAL; the key/value steps' flush is the checkpoint.

use super::session::SqliteSession;
use crate::error::Result;
use crate::stop::Stop;

impl SqliteSession {
    /// A checkpoint that empties the WAL into the database file.
    pub(super) fn checkpoint(&mut self) -> Result<Vec<String>> {
        self.with("checkpoint", |c| c.execute_batch("PRAGMA wal_checkpoint(TRUNCATE)"))?;
        Ok(Vec::new())
    }

    /// ends it between statements.
    /// ANALYZE of each table, then a checkpoint that empties the WAL; a stop
    pub(super) fn analyze_and_checkpoint(&mut self, tables: &[String], stop: &Stop) -> Result<Vec<String>> {
        for t in tables {
            if stop.requested() {
                return Ok(Vec::new());
            }
            self.with("analyze", |c| c.execute_batch(&format!("ANALYZE {t}")))?;
        }
        self.checkpoint()
    }
}
