//! The key/value steps on MySQL and MariaDB: a table `(k VARBINARY(key_size)
//! PRIMARY KEY, v LONGBLOB)` of the DSN's engine (VARBINARY compares
//! bytewise); a write batch is multi-row `INSERT ... ON DUPLICATE KEY UPDATE`
//! statements in one transaction (a later pair of a key wins, as in one
//! statement). Flush writes back what the wait step writes back (InnoDB: the
//! dirty pages; MyRocks: the memtable); waiting for compaction is the wait
//! step's maintenance.

use super::error::my_err;
use super::session::MysqlSession;
use crate::connect::sql;
use crate::connect::KvSession;
use crate::error::Result;
use crate::gen::KvBatch;
use crate::stop::{Interrupter, Stop};
use mysql::prelude::Queryable;
use mysql::{Params, TxOpts, Value};
use std::ops::Range;

impl MysqlSession {
    /// The upsert of `n` pairs into `table`, prepared once per batch size.
    fn kv_put_statement(&mut self, table: &str, n: usize) -> Result<mysql::Statement> {
        let key = (table.to_string(), n);
        if let Some(s) = self.kv_puts.get(&key) {
            return Ok(s.clone());
        }
        let text = self.sql.dialect.kv_upsert(table, n);
        let (conn, target) = self.conn_target()?;
        let s = conn.prep(text).map_err(|e| my_err(target, "prepare put", e))?;
        self.kv_puts.insert(key, s.clone());
        Ok(s)
    }

    /// Runs one statement per chunk of at most [`sql::PAIRS_PER_STATEMENT`]
    /// of `n` items: one chunk as its own transaction, several in one.
    fn in_chunks(
        &mut self,
        what: &str,
        n: usize,
        mut prepare: impl FnMut(&mut Self, usize) -> Result<mysql::Statement>,
        params: impl Fn(Range<usize>) -> Params,
    ) -> Result<()> {
        let chunks: Vec<Range<usize>> = (0..n)
            .step_by(sql::PAIRS_PER_STATEMENT)
            .map(|start| start..n.min(start + sql::PAIRS_PER_STATEMENT))
            .collect();
        let mut statements = Vec::with_capacity(chunks.len());
        for chunk in &chunks {
            statements.push(prepare(self, chunk.len())?);
        }
        let (conn, target) = self.conn_target()?;
        match chunks.len() {
            0 => Ok(()),
            1 => conn
                .exec_drop(&statements[0], params(chunks[0].clone()))
                .map_err(|e| my_err(target, what, e)),
            _ => {
                // Dropped without a commit (an error), the transaction rolls back.
                let mut tx = conn
                    .start_transaction(TxOpts::default())
                    .map_err(|e| my_err(target, "begin", e))?;
                for (stmt, chunk) in statements.iter().zip(chunks) {
                    tx.exec_drop(stmt, params(chunk)).map_err(|e| my_err(target, what, e))?;
                }
                tx.commit().map_err(|e| my_err(target, "commit", e))
            }
        }
    }

    /// Pairs read by `text` (a scan) with parameters `start` and `limit`.
    fn scan_with(&mut self, text: String, start: &[u8], limit: usize, out: &mut KvBatch) -> Result<usize> {
        out.clear();
        let (conn, target) = self.conn_target()?;
        let rows = conn
            .exec_iter(text, (start, limit as u64))
            .map_err(|e| my_err(target, "scan", e))?;
        for row in rows {
            let row = row.map_err(|e| my_err(target, "scan", e))?;
            if let (Some(Value::Bytes(k)), Some(Value::Bytes(v))) = (row.as_ref(0), row.as_ref(1)) {
                out.push_raw(k, v);
            }
        }
        Ok(out.len())
    }
}

/// The parameters of keys `range` of `batch`.
fn key_params(batch: &KvBatch, range: Range<usize>) -> Params {
    Params::Positional(range.map(|i| Value::Bytes(batch.key(i).to_vec())).collect())
}

/// The parameters of pairs `range` of `batch`: key, value, key, value, ...
fn pair_params(batch: &KvBatch, range: Range<usize>) -> Params {
    Params::Positional(
        range
            .flat_map(|i| {
                [
                    Value::Bytes(batch.key(i).to_vec()),
                    Value::Bytes(batch.value(i).to_vec()),
                ]
            })
            .collect(),
    )
}

impl KvSession for MysqlSession {
    fn create(&mut self, table: &str, key_size: usize) -> Result<()> {
        let ddl = self.sql.dialect.kv_create(table, key_size);
        self.ddl("create table", ddl)
    }

    fn put(&mut self, table: &str, batch: &KvBatch) -> Result<()> {
        self.in_chunks(
            "put",
            batch.len(),
            |s, n| s.kv_put_statement(table, n),
            |r| pair_params(batch, r),
        )
    }

    fn delete_keys(&mut self, table: &str, keys: &KvBatch) -> Result<()> {
        let prepare = |s: &mut Self, n: usize| {
            // The driver caches prepared statements by their text.
            let text = s.sql.dialect.kv_delete(table, n);
            s.conn()?.prep(text).map_err(|e| my_err(&s.target, "prepare delete", e))
        };
        self.in_chunks("delete", keys.len(), prepare, |r| key_params(keys, r))
    }

    fn get(&mut self, table: &str, key: &[u8], value: &mut Vec<u8>) -> Result<bool> {
        value.clear();
        let text = self.sql.dialect.kv_get(table);
        let (conn, target) = self.conn_target()?;
        let found: Option<Vec<u8>> = conn.exec_first(text, (key,)).map_err(|e| my_err(target, "get", e))?;
        Ok(match found {
            Some(v) => {
                *value = v;
                true
            }
            None => false,
        })
    }

    fn scan(&mut self, table: &str, start: &[u8], limit: usize, out: &mut KvBatch) -> Result<usize> {
        let text = self.sql.dialect.kv_scan(table);
        self.scan_with(text, start, limit, out)
    }

    fn scan_reverse(&mut self, table: &str, start: &[u8], limit: usize, out: &mut KvBatch) -> Result<usize> {
        let text = self.sql.dialect.kv_scan_reverse(table);
        self.scan_with(text, start, limit, out)
    }

    fn count(&mut self, table: &str) -> Result<u64> {
        let text = self.sql.dialect.count(table);
        let (conn, target) = self.conn_target()?;
        let n: Option<u64> = conn.query_first(text).map_err(|e| my_err(target, "count", e))?;
        Ok(n.unwrap_or(0))
    }

    fn flush(&mut self, _table: &str, stop: &Stop) -> Result<Vec<String>> {
        self.flush_engine(stop)
    }

    fn wait_for_compaction(&mut self, table: &str, stop: &Stop) -> Result<Vec<String>> {
        self.settle_and_analyze(&[table.to_string()], stop)
    }

    fn interrupter(&self) -> Option<Interrupter> {
        Some(self.cancel_handle())
    }
}

#[cfg(test)]
mod kv_tests {
    use super::super::MysqlConnector;
    use super::*;

    /// The session; None (skip) when the server (or the engine) is missing outside CI, a failure in CI.
    fn session(engine: &str) -> Option<MysqlSession> {
        let dsn = format!("mysql://root@127.0.0.1:3306/test?engine={engine}");
        match MysqlConnector::new(&dsn).and_then(|c| c.open_session()) {
            Ok(s) => Some(s),
            Err(e) if std::env::var("CI").as_deref() == Ok("true") => panic!("MySQL {engine}, and CI=true: {e}"),
            Err(e) => {
                eprintln!("note: MySQL with {engine} is not available ({e}); skipping (CI would fail)");
                None
            }
        }
    }

    fn round_trip(engine: &str) {
        let Some(mut s) = session(engine) else { return };
        let table = format!("kv_unit_my_{engine}");
        let table = table.as_str();
        s.create(table, 16).unwrap();
        crate::connect::kv_contract::round_trip(&mut s, table);
        s.run("drop table", &format!("DROP TABLE {table}")).unwrap();
    }

    #[test]
    fn pairs_round_trip_through_an_innodb_kv_table() {
        round_trip("innodb");
    }

    #[test]
    fn pairs_round_trip_through_a_myrocks_kv_table() {
        round_trip("rocksdb");
    }
}
