//! The key/value steps on SQLite: a table `(k BLOB PRIMARY KEY, v BLOB)`
//! (BLOBs compare bytewise), one statement per pair inside one transaction
//! (no round trips to save); flush is a checkpoint, waiting for compaction
//! the wait step's maintenance.

use super::session::SqliteSession;
use crate::connect::KvSession;
use crate::error::Result;
use crate::gen::KvBatch;
use crate::stop::{Interrupter, Stop};

impl SqliteSession {
    /// Runs `sql` once per pair of `batch` inside one transaction: no round
    /// trips to save in an embedded database, and no bound on the batch.
    fn each_pair(
        &mut self,
        what: &str,
        sql: &str,
        batch: &KvBatch,
        run: impl Fn(&mut rusqlite::CachedStatement<'_>, &[u8], &[u8]) -> rusqlite::Result<usize>,
    ) -> Result<()> {
        let several = batch.len() > 1;
        self.with(what, |c| {
            if several {
                c.execute_batch("BEGIN IMMEDIATE")?;
            }
            let result = (|| {
                let mut stmt = c.prepare_cached(sql)?;
                for (k, v) in batch.pairs() {
                    run(&mut stmt, k, v)?;
                }
                Ok(())
            })();
            if several {
                match &result {
                    Ok(()) => c.execute_batch("COMMIT")?,
                    Err(_) => {
                        let _ = c.execute_batch("ROLLBACK");
                    }
                }
            }
            result
        })
    }

    /// Pairs read by `sql` (a scan) with parameters `start` and `limit`.
    fn scan_with(&mut self, sql: &str, start: &[u8], limit: usize, out: &mut KvBatch) -> Result<usize> {
        out.clear();
        self.with("scan", |c| {
            let mut stmt = c.prepare_cached(sql)?;
            let mut rows = stmt.query((start, limit as i64))?;
            while let Some(r) = rows.next()? {
                out.push_raw(r.get_ref(0)?.as_blob()?, r.get_ref(1)?.as_blob()?);
            }
            Ok(out.len())
        })
    }
}

impl KvSession for SqliteSession {
    fn create(&mut self, table: &str, key_size: usize) -> Result<()> {
        let ddl = self.sql.dialect.kv_create(table, key_size).join(";\n");
        self.with("create table", |c| c.execute_batch(&ddl))
    }

    fn put(&mut self, table: &str, batch: &KvBatch) -> Result<()> {
        let sql = self.sql.dialect.kv_upsert(table, 1);
        self.each_pair("put", &sql, batch, |stmt, k, v| stmt.execute((k, v)))
    }

    fn delete_keys(&mut self, table: &str, keys: &KvBatch) -> Result<()> {
        let sql = self.sql.dialect.kv_delete(table, 1);
        self.each_pair("delete", &sql, keys, |stmt, k, _| stmt.execute([k]))
    }

    fn get(&mut self, table: &str, key: &[u8], value: &mut Vec<u8>) -> Result<bool> {
        let sql = self.sql.dialect.kv_get(table);
        value.clear();
        self.with("get", |c| {
            let mut stmt = c.prepare_cached(&sql)?;
            let mut rows = stmt.query([key])?;
            match rows.next()? {
                Some(r) => {
                    value.extend_from_slice(r.get_ref(0)?.as_blob()?);
                    Ok(true)
                }
                None => Ok(false),
            }
        })
    }

    fn scan(&mut self, table: &str, start: &[u8], limit: usize, out: &mut KvBatch) -> Result<usize> {
        let sql = self.sql.dialect.kv_scan(table);
        self.scan_with(&sql, start, limit, out)
    }

    fn scan_reverse(&mut self, table: &str, start: &[u8], limit: usize, out: &mut KvBatch) -> Result<usize> {
        let sql = self.sql.dialect.kv_scan_reverse(table);
        self.scan_with(&sql, start, limit, out)
    }

    fn count(&mut self, table: &str) -> Result<u64> {
        let sql = self.sql.dialect.count(table);
        self.with("count", |c| {
            c.query_row(&sql, [], |r| r.get::<_, i64>(0)).map(|n| n as u64)
        })
    }

    fn flush(&mut self, _table: &str, _stop: &Stop) -> Result<Vec<String>> {
        self.checkpoint()
    }

    fn wait_for_compaction(&mut self, table: &str, stop: &Stop) -> Result<Vec<String>> {
        self.analyze_and_checkpoint(&[table.to_string()], stop)
    }

    fn interrupter(&self) -> Option<Interrupter> {
        Some(self.interrupt.clone())
    }
}

#[cfg(test)]
mod kv_tests {
    use super::super::SqliteConnector;

    #[test]
    fn pairs_round_trip_through_a_kv_table() {
        let dir = tempfile::tempdir().unwrap();
        let c = SqliteConnector::new(&dir.path().join("kv.db").display().to_string()).unwrap();
        crate::connect::kv_contract::round_trip(&mut c.open_session().unwrap(), "kv");
    }
}
