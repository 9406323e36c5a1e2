//! The key/value steps on PostgreSQL: a table `(k BYTEA PRIMARY KEY, v
//! BYTEA NOT NULL)` (BYTEA compares bytewise); a write batch is multi-row
//! `INSERT ... ON CONFLICT (k) DO UPDATE` statements in one transaction, its
//! pairs in key order and only the last of each key (PostgreSQL refuses one
//! statement that updates a row twice); flush is `CHECKPOINT`, waiting for
//! compaction is the wait step's maintenance.

use super::error::wire_err as pg_err;
use super::session::PostgresSession;
use super::wire::{self, Statement, Wire, WireError};
use crate::connect::sql;
use crate::connect::KvSession;
use crate::error::Result;
use crate::gen::KvBatch;
use crate::stop::{Interrupter, Stop};
use postgres::types::ToSql;

fn last_of_each_key(batch: &KvBatch) -> Vec<usize> {
    let n = batch.len();
    let mut order: Vec<usize> = (0..n).collect();
    if (1..n).all(|i| batch.key(i - 1) < batch.key(i)) {
        return order;
    }
    // Equal keys: the latest first, so that dedup (which keeps the first of a run) keeps it.
    order.sort_unstable_by(|&a, &b| batch.key(a).cmp(batch.key(b)).then(b.cmp(&a)));
    order.dedup_by(|a, b| batch.key(*a) == batch.key(*b));
    order
}

/// Runs each statement on its chunk of pairs (indexes into `batch`): their
/// keys and, `with_values`, their values as the parameters.
fn run_chunks(
    client: &mut Wire,
    statements: &[Statement],
    chunks: &[&[usize]],
    batch: &KvBatch,
    with_values: bool,
) -> std::result::Result<(), WireError> {
    for (stmt, chunk) in statements.iter().zip(chunks) {
        let params: Vec<&[u8]> = if with_values {
            chunk.iter().flat_map(|&i| [batch.key(i), batch.value(i)]).collect()
        } else {
            chunk.iter().map(|&i| batch.key(i)).collect()
        };
        let params: Vec<&(dyn ToSql + Sync)> = params.iter().map(|b| b as &(dyn ToSql + Sync)).collect();
        client.execute(stmt, &params)?;
    }
    Ok(())
}

impl PostgresSession {
    /// Runs statement `text(n)` on each chunk of `order`'s pairs of `batch`:
    /// one chunk as its own transaction, several in one.
    fn in_chunks(
        &mut self,
        what: &str,
        batch: &KvBatch,
        order: &[usize],
        text: impl Fn(usize) -> String,
        with_values: bool,
    ) -> Result<()> {
        let chunks: Vec<&[usize]> = order.chunks(sql::PAIRS_PER_STATEMENT).collect();
        let mut statements = Vec::with_capacity(chunks.len());
        for chunk in &chunks {
            statements.push(self.prepared(&text(chunk.len()))?);
        }
        let target = &self.target;
        if chunks.len() <= 1 {
            return run_chunks(&mut self.client, &statements, &chunks, batch, with_values)
                .map_err(|e| pg_err(target, what, e));
        }
        self.client
            .batch_execute("BEGIN")
            .map_err(|e| pg_err(target, "begin", e))?;
        if let Err(e) = run_chunks(&mut self.client, &statements, &chunks, batch, with_values) {
            let _ = self.client.batch_execute("ROLLBACK");
            return Err(pg_err(target, what, e));
        }
        self.client
            .batch_execute("COMMIT")
            .map_err(|e| pg_err(target, "commit", e))
    }

    /// Pairs read by `text` (a scan) with parameters `start` and `limit`.
    fn scan_with(&mut self, text: &str, start: &[u8], limit: usize, out: &mut KvBatch) -> Result<usize> {
        let stmt = self.prepared(text)?;
        out.clear();
        let limit = i64::try_from(limit).unwrap_or(i64::MAX);
        self.client
            .query_each(&stmt, &[&start, &limit], |v| {
                out.push_raw(v.value(0).unwrap_or_default(), v.value(1).unwrap_or_default());
                Ok(())
            })
            .map_err(|e| pg_err(&self.target, "scan", e))
    }
}

impl KvSession for PostgresSession {
    fn create(&mut self, table: &str, key_size: usize) -> Result<()> {
        let ddl = self.sql.dialect.kv_create(table, key_size);
        self.ddl("create table", ddl)
    }

    fn put(&mut self, table: &str, batch: &KvBatch) -> Result<()> {
        let order = last_of_each_key(batch);
        let dialect = self.sql.dialect.clone();
        self.in_chunks("put", batch, &order, |n| dialect.kv_upsert(table, n), true)
    }

    fn delete_keys(&mut self, table: &str, keys: &KvBatch) -> Result<()> {
        let order: Vec<usize> = (0..keys.len()).collect();
        let dialect = self.sql.dialect.clone();
        self.in_chunks("delete", keys, &order, |n| dialect.kv_delete(table, n), false)
    }

    fn get(&mut self, table: &str, key: &[u8], value: &mut Vec<u8>) -> Result<bool> {
        let stmt = self.prepared(&self.sql.dialect.kv_get(table))?;
        value.clear();
        let found = self
            .client
            .query_each(&stmt, &[&key], |v| {
                value.extend_from_slice(v.value(0).unwrap_or_default());
                Ok(())
            })
            .map_err(|e| pg_err(&self.target, "get", e))?;
        Ok(found > 0)
    }

    fn scan(&mut self, table: &str, start: &[u8], limit: usize, out: &mut KvBatch) -> Result<usize> {
        let text = self.sql.dialect.kv_scan(table);
        self.scan_with(&text, start, limit, out)
    }

    fn scan_reverse(&mut self, table: &str, start: &[u8], limit: usize, out: &mut KvBatch) -> Result<usize> {
        let text = self.sql.dialect.kv_scan_reverse(table);
        self.scan_with(&text, start, limit, out)
    }

    fn count(&mut self, table: &str) -> Result<u64> {
        let result = self
            .client
            .simple_query(&self.sql.dialect.count(table))
            .map_err(|e| pg_err(&self.target, "count", e))?;
        Ok(wire::first_value(&result).unwrap_or(0))
    }

    fn flush(&mut self, _table: &str, _stop: &Stop) -> Result<Vec<String>> {
        let mut notes = Vec::new();
        self.checkpoint(&mut notes)?;
        Ok(notes)
    }

    fn wait_for_compaction(&mut self, table: &str, stop: &Stop) -> Result<Vec<String>> {
        self.vacuum_and_checkpoint(&[table.to_string()], stop)
    }

    fn interrupter(&self) -> Option<Interrupter> {
        Some(self.cancel_handle())
    }
}

#[cfg(test)]
mod kv_tests {
    use super::super::PostgresConnector;
    use super::*;
    use crate::connect::kv_contract::{self, key};

    const DSN: &str = "postgres://postgres@127.0.0.1:5432/test";
    const TABLE: &str = "kv_unit_pg";

    /// The session; None (skip) when the server is down outside CI, a failure in CI.
    fn session() -> Option<PostgresSession> {
        match PostgresConnector::new(DSN).and_then(|c| c.open_session()) {
            Ok(s) => Some(s),
            Err(e) if std::env::var("CI").as_deref() == Ok("true") => panic!("PostgreSQL, and CI=true: {e}"),
            Err(e) => {
                eprintln!("note: PostgreSQL is not reachable ({e}); skipping (CI would fail)");
                None
            }
        }
    }

    #[test]
    fn the_last_pair_of_each_key_is_kept_in_key_order() {
        let mut b = KvBatch::new(16);
        for (k, v) in [(3, "a"), (1, "b"), (3, "c"), (2, "d"), (1, "e"), (3, "f")] {
            b.push_raw(&key(k), v.as_bytes());
        }
        let kept: Vec<(u64, &[u8])> = last_of_each_key(&b)
            .into_iter()
            .map(|i| (crate::gen::decode_key(b.key(i)), b.value(i)))
            .collect();
        assert_eq!(kept, [(1, &b"e"[..]), (2, b"d"), (3, b"f")]);
        let mut ascending = KvBatch::new(16);
        for k in 0..5 {
            ascending.push_raw(&key(k), b"x");
        }
        assert_eq!(last_of_each_key(&ascending), [0, 1, 2, 3, 4]);
        assert!(last_of_each_key(&KvBatch::new(16)).is_empty());
    }

    #[test]
    fn pairs_round_trip_through_a_kv_table() {
        let Some(mut s) = session() else { return };
        kv_contract::round_trip(&mut s, TABLE);
        s.batch("drop table", &format!("DROP TABLE {TABLE}")).unwrap();
    }
}
