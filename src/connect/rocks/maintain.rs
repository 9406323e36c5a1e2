//! What RocksDB does for the key/value steps' flush and wait: the `kv`
//! column family's memtable flushed, and a wait until no compaction is
//! pending or running (in slices, so a stop request is seen).

use super::db_err;
use super::kv::RocksdbSession;
use crate::error::Result;
use crate::stop::Stop;
use rocksdb::WaitForCompactOptions;

impl RocksdbSession {
    /// Flushes `table`'s memtable to its files.
    pub(super) fn flush_family(&mut self, table: &str) -> Result<Vec<String>> {
        self.look_up(table)?;
        let cf = self.family();
        self.db().flush_cf(cf).map_err(|e| db_err(&self.target, "flush", e))?;
        Ok(Vec::new())
    }

    /// Waits until no compaction is pending or running, or a stop request.
    pub(super) fn wait_for_compactions(&mut self, stop: &Stop) -> Result<Vec<String>> {
        // Waits in slices, so a stop request is seen within one.
        let mut opts = WaitForCompactOptions::default();
        opts.set_timeout(200_000);
        while !stop.requested() {
            match self.db().wait_for_compact(&opts) {
                Ok(()) => break,
                Err(e) if e.kind() == rocksdb::ErrorKind::TimedOut => continue,
                Err(e) => return Err(db_err(&self.target, "wait for compaction", e)),
            }
        }
        Ok(Vec::new())
    }
}
