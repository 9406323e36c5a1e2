//! The key/value session on embedded RocksDB: the shared database, the
//! `kv` column family's handle kept while no session drops or creates a
//! family, and this thread's write batch and read options.

use super::batch::{self, Edit};
use super::options::PerfLevel;
use super::{db_err, Db};
use crate::connect::KvSession;
use crate::error::{Error, Result};
use crate::gen::KvBatch;
use crate::stop::Stop;
use rocksdb::{BoundColumnFamily, Options, ReadOptions};
use std::sync::atomic::{AtomicU64, Ordering};
use std::sync::Arc;

/// The column family a session last used, looked up by name when the
/// connector's family generation was `generation`.
struct Family<'a> {
    name: String,
    generation: u64,
    cf: Arc<BoundColumnFamily<'a>>,
}

type CachedFamily<'a> = Option<Family<'a>>;

self_cell::self_cell!(
    /// A session's database and its column family's handle, which borrows it.
    struct DbCell {
        owner: Arc<Db>,
        #[covariant]
        dependent: CachedFamily,
    }
);

/// A session: the shared database, this thread's write batch and read
/// options (made once: a ReadOptions per get or a WriteBatch per write is an
/// allocation and a free, which db_bench does not pay either).
pub(super) struct RocksdbSession {
    cell: DbCell,
    families: Arc<AtomicU64>,
    writer: batch::Writer,
    perf_level: PerfLevel,
    read: ReadOptions,
    opts: Options,
    pub(super) target: String,
}

impl RocksdbSession {
    /// A session of `db` whose thread counts at `perf_level`; `families` is
    /// the connector's generation of column families.
    pub(super) fn new(
        db: Arc<Db>,
        families: Arc<AtomicU64>,
        writer: batch::Writer,
        perf_level: PerfLevel,
        opts: Options,
        target: String,
    ) -> Self {
        RocksdbSession {
            cell: DbCell::new(db, |_| None),
            families,
            writer,
            perf_level,
            read: ReadOptions::default(),
            opts,
            target,
        }
    }

    /// Writes `batch` to `table` as one write batch (the session's, reused).
    fn write_batch(&mut self, table: &str, batch: &KvBatch, edit: Edit) -> Result<()> {
        self.look_up(table)?;
        // The fields, not family(): the writer is borrowed mutably beside them.
        let cf = &self.cell.borrow_dependent().as_ref().expect("looked up first").cf;
        self.writer
            .write(self.cell.borrow_owner(), cf, edit, batch)
            .map_err(|e| db_err(&self.target, edit.name(), e))
    }

    /// Up to `limit` pairs from an iterator placed by `seek`, moved by `step`.
    fn scan_with(
        &mut self,
        table: &str,
        limit: usize,
        out: &mut KvBatch,
        seek: impl FnOnce(&mut rocksdb::DBRawIteratorWithThreadMode<'_, Db>),
        forward: bool,
    ) -> Result<usize> {
        self.look_up(table)?;
        out.clear();
        let mut it = self.db().raw_iterator_cf(self.family());
        seek(&mut it);
        while it.valid() && out.len() < limit {
            if let (Some(k), Some(v)) = (it.key(), it.value()) {
                out.push_raw(k, v);
            }
            if forward {
                it.next();
            } else {
                it.prev();
            }
        }
        it.status().map_err(|e| db_err(&self.target, "scan", e))?;
        Ok(out.len())
    }

    pub(super) fn db(&self) -> &Db {
        self.cell.borrow_owner()
    }

    /// Makes `table`'s column family the session's: its handle is looked up
    /// by name once, then kept while no session drops or creates a family
    /// (a lookup takes the database's lock and clones an Arc, about 100
    /// instructions: a tenth of a write's client cost).
    #[inline]
    pub(super) fn look_up(&mut self, table: &str) -> Result<()> {
        let generation = self.families.load(Ordering::Acquire);
        let kept = self
            .cell
            .borrow_dependent()
            .as_ref()
            .is_some_and(|f| f.generation == generation && f.name == table);
        if kept {
            return Ok(());
        }
        self.look_up_again(table, generation)
    }

    /// [`RocksdbSession::look_up`]'s lookup by name, rare: out of the write's path.
    #[cold]
    #[inline(never)]
    fn look_up_again(&mut self, table: &str, generation: u64) -> Result<()> {
        // A session used on another thread than the one that opened it
        // gets its perf level there too (by its first operation).
        self.perf_level.apply();
        let target = &self.target;
        self.cell.with_dependent_mut(|db, cached| {
            let cf = db
                .cf_handle(table)
                .ok_or_else(|| Error::database(target, format!("no column family {table:?}")))?;
            *cached = Some(Family {
                name: table.to_string(),
                generation,
                cf,
            });
            Ok(())
        })
    }

    /// `key`'s value where RocksDB holds it (a block cache entry or the
    /// memtable), without a copy.
    fn pinned(&mut self, table: &str, key: &[u8]) -> Result<Option<rocksdb::DBPinnableSlice<'_>>> {
        self.look_up(table)?;
        self.db()
            .get_pinned_cf_opt(self.family(), key, &self.read)
            .map_err(|e| db_err(&self.target, "get", e))
    }

    /// The handle [`RocksdbSession::look_up`] found.
    pub(super) fn family(&self) -> &Arc<BoundColumnFamily<'_>> {
        &self.cell.borrow_dependent().as_ref().expect("looked up first").cf
    }
}

impl KvSession for RocksdbSession {
    fn create(&mut self, table: &str, _key_size: usize) -> Result<()> {
        // Every session's handles are stale from here: they look theirs up again.
        self.families.fetch_add(1, Ordering::AcqRel);
        self.cell.with_dependent_mut(|_, cached| *cached = None);
        let db = self.db();
        if db.cf_handle(table).is_some() {
            db.drop_cf(table)
                .map_err(|e| db_err(&self.target, &format!("drop column family {table}"), e))?;
        }
        let created = db
            .create_cf(table, &self.opts)
            .map_err(|e| db_err(&self.target, &format!("create column family {table}"), e));
        // Again once created: a session that looked up meanwhile holds the dropped one or none.
        self.families.fetch_add(1, Ordering::AcqRel);
        created
    }
    fn put(&mut self, table: &str, batch: &KvBatch) -> Result<()> {
        self.write_batch(table, batch, Edit::Put)
    }
    fn merge(&mut self, table: &str, batch: &KvBatch) -> Result<()> {
        self.write_batch(table, batch, Edit::Merge)
    }
    fn delete_keys(&mut self, table: &str, keys: &KvBatch) -> Result<()> {
        self.write_batch(table, keys, Edit::Delete)
    }
    fn multi_get(&mut self, table: &str, keys: &KvBatch, out: &mut KvBatch) -> Result<usize> {
        self.look_up(table)?;
        let cf = self.family();
        out.clear();
        let found = self
            .db()
            .batched_multi_get_cf(cf, (0..keys.len()).map(|i| keys.key(i)), false);
        for (i, v) in found.into_iter().enumerate() {
            if let Some(v) = v.map_err(|e| db_err(&self.target, "multiget", e))? {
                out.push_raw(keys.key(i), &v);
            }
        }
        Ok(out.len())
    }
    fn get(&mut self, table: &str, key: &[u8], value: &mut Vec<u8>) -> Result<bool> {
        value.clear();
        let found = self.pinned(table, key)?;
        if let Some(v) = &found {
            value.extend_from_slice(v);
        }
        Ok(found.is_some())
    }
    fn probe(&mut self, table: &str, key: &[u8], _scratch: &mut Vec<u8>) -> Result<bool> {
        Ok(self.pinned(table, key)?.is_some())
    }
    fn scan(&mut self, table: &str, start: &[u8], limit: usize, out: &mut KvBatch) -> Result<usize> {
        self.scan_with(table, limit, out, |it| it.seek(start), true)
    }
    fn scan_reverse(&mut self, table: &str, start: &[u8], limit: usize, out: &mut KvBatch) -> Result<usize> {
        self.scan_with(table, limit, out, |it| it.seek_for_prev(start), false)
    }
    fn count(&mut self, table: &str) -> Result<u64> {
        self.look_up(table)?;
        let cf = self.family();
        let mut it = self.db().raw_iterator_cf(cf);
        it.seek_to_first();
        let mut n = 0;
        while it.valid() {
            n += 1;
            it.next();
        }
        it.status().map_err(|e| db_err(&self.target, "count", e))?;
        Ok(n)
    }
    fn flush(&mut self, table: &str, _stop: &Stop) -> Result<Vec<String>> {
        self.flush_family(table)
    }
    fn wait_for_compaction(&mut self, _table: &str, stop: &Stop) -> Result<Vec<String>> {
        self.wait_for_compactions(stop)
    }
}

#[cfg(test)]
mod tests {
    use super::super::RocksdbConnector;
    use crate::connect::{Connector, KV_TABLE};
    use crate::gen::KvBatch;
    use rocksdb::statistics::Ticker;

    #[test]
    fn pairs_round_trip_through_the_kv_column_family() {
        let dir = tempfile::tempdir().unwrap();
        let c = RocksdbConnector::new(&format!("{}?write_buffer_size=64K", dir.path().display())).unwrap();
        crate::connect::kv_contract::round_trip(c.kv_session().unwrap().as_mut(), KV_TABLE);
    }

    #[test]
    fn a_session_keeps_its_family_s_handle_until_another_session_recreates_the_family() {
        let dir = tempfile::tempdir().unwrap();
        let c = RocksdbConnector::new(&dir.path().display().to_string()).unwrap();
        let (mut a, mut b) = (c.kv_session().unwrap(), c.kv_session().unwrap());
        let pair = |k: u8| {
            let mut batch = KvBatch::new(1);
            batch.push_raw(&[k], b"v");
            batch
        };
        let mut v = Vec::new();
        a.create(KV_TABLE, 1).unwrap();
        a.put(KV_TABLE, &pair(1)).unwrap();
        assert!(a.get(KV_TABLE, &[1], &mut v).unwrap() && b.probe(KV_TABLE, &[1], &mut v).unwrap());
        // b drops and recreates the family: a's kept handle is of the dropped one.
        b.create(KV_TABLE, 1).unwrap();
        assert!(!a.get(KV_TABLE, &[1], &mut v).unwrap(), "a reads the new, empty family");
        a.put(KV_TABLE, &pair(2)).unwrap();
        assert!(b.get(KV_TABLE, &[2], &mut v).unwrap(), "a writes into the new family");
        assert_eq!((a.count(KV_TABLE).unwrap(), b.count(KV_TABLE).unwrap()), (1, 1));
        let e = a.get("nope", &[1], &mut v).unwrap_err().to_string();
        assert!(e.contains("no column family \"nope\""), "{e}");
        assert!(
            a.get(KV_TABLE, &[2], &mut v).unwrap(),
            "back to its family after another"
        );
    }

    #[test]
    fn a_session_s_reused_batch_writes_each_write_s_pairs_only() {
        use crate::connect::kv_contract::key;
        let dir = tempfile::tempdir().unwrap();
        let c = RocksdbConnector::new(&format!("{}?wal=off", dir.path().display())).unwrap();
        let mut s = c.kv_session().unwrap();
        s.create(KV_TABLE, 16).unwrap();
        let written = || c.opts.get_ticker_count(Ticker::NumberKeysWritten);
        let before = written();
        let mut b = KvBatch::new(16);
        for k in 0..3 {
            b.clear();
            b.push_raw(&key(k), b"v");
            s.put(KV_TABLE, &b).unwrap();
        }
        // A batch not cleared between writes would write 1 + 2 + 3 keys.
        assert_eq!(written() - before, 3);
        b.clear();
        b.push_raw(&key(1), b"");
        s.delete_keys(KV_TABLE, &b).unwrap();
        b.clear();
        b.push_raw(&key(9), b"w");
        s.merge(KV_TABLE, &b).unwrap();
        assert_eq!(s.count(KV_TABLE).unwrap(), 3, "keys 0, 2 and 9");
        let mut v = Vec::new();
        assert!(!s.get(KV_TABLE, &key(1), &mut v).unwrap());
        // A failed write's message reaches the error: a column family dropped under the session.
        c.db.drop_cf(KV_TABLE).unwrap();
        let e = s.put(KV_TABLE, &b).unwrap_err().to_string();
        assert!(
            e.ends_with("write: Invalid argument: Invalid column family specified in write batch"),
            "{e}"
        );
    }

    /// Key comparisons RocksDB's perf context counted on this thread while
    /// a session of `dsn_query` wrote 200 keys in random order and read them.
    fn key_comparisons_counted(dsn_query: &str) -> u64 {
        use crate::connect::kv_contract::key;
        use rocksdb::perf::{PerfContext, PerfMetric};
        let dir = tempfile::tempdir().unwrap();
        let c = RocksdbConnector::new(&format!("{}?{dsn_query}", dir.path().display())).unwrap();
        let mut s = c.kv_session().unwrap();
        s.create(KV_TABLE, 16).unwrap();
        let mut context = PerfContext::default();
        context.reset();
        let mut b = KvBatch::new(16);
        let mut v = Vec::new();
        for k in (0..200u64).map(|i| i * 7919 % 200) {
            b.clear();
            b.push_raw(&key(k), b"v");
            s.put(KV_TABLE, &b).unwrap();
            assert!(s.get(KV_TABLE, &key(k), &mut v).unwrap());
        }
        context.metric(PerfMetric::UserKeyComparisonCount)
    }

    #[test]
    fn a_session_s_thread_counts_no_perf_context_unless_the_dsn_asks() {
        // db_bench's default (--perf_level=1), not RocksDB's (2: counts).
        assert_eq!(key_comparisons_counted("wal=off"), 0);
        let counted = key_comparisons_counted("wal=off&perf_level=2");
        assert!(counted > 200, "memtable inserts and gets compare keys: {counted}");
        // The run's settings say which level ran, given or not.
        let dir = tempfile::tempdir().unwrap();
        for (query, level) in [("", "1"), ("?perf_level=3", "3")] {
            let c = RocksdbConnector::new(&format!("{}{query}", dir.path().display())).unwrap();
            let settings = c.settings();
            assert!(
                settings.contains(&("perf_level".into(), level.into())),
                "{query}: {settings:?}"
            );
        }
    }
}
