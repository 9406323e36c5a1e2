//! The key/value session on a loaded release: the calls the embedded
//! engine makes (rust-rocksdb wraps the same C API), made through the
//! release's function table — one write batch and write options reused
//! per session, pinned gets, batched multi-gets, raw iterators.

use super::api::Api;
use super::db::{taken, Family, LibDb};
use crate::connect::rocks::batch::Edit;
use crate::connect::KvSession;
use crate::error::{Error, Result};
use crate::gen::KvBatch;
use crate::stop::Stop;
use librocksdb_sys as ffi;
use std::ffi::c_char;
use std::sync::atomic::Ordering;
use std::sync::Arc;

/// A session: the shared database, the family it last used, and this
/// thread's write batch, write options and read options (made once).
pub(super) struct LibSession {
    db: Arc<LibDb>,
    /// (name, the database's family generation when looked up, handle).
    cached: Option<(String, u64, Family)>,
    batch: *mut ffi::rocksdb_writebatch_t,
    write: *mut ffi::rocksdb_writeoptions_t,
    read: *mut ffi::rocksdb_readoptions_t,
    perf_level: i32,
}

// SAFETY: the batch and options are this session's alone; it moves to its
// worker thread and is used there only.
unsafe impl Send for LibSession {}

fn ptr(s: &[u8]) -> *const c_char {
    s.as_ptr().cast()
}

impl LibSession {
    /// A session of `db` writing with the WAL on or off, synced or not;
    /// its thread counts at RocksDB's `perf_level`.
    pub(super) fn new(db: Arc<LibDb>, wal: bool, sync: bool, perf_level: i32) -> LibSession {
        let api = db.api();
        // SAFETY: made here, destroyed in drop.
        let (batch, write, read) = unsafe {
            let write = (api.rocksdb_writeoptions_create)();
            (api.rocksdb_writeoptions_disable_WAL)(write, (!wal) as i32);
            (api.rocksdb_writeoptions_set_sync)(write, sync as u8);
            (
                (api.rocksdb_writebatch_create)(),
                write,
                (api.rocksdb_readoptions_create)(),
            )
        };
        // SAFETY: sets the calling thread's level.
        unsafe { (api.rocksdb_set_perf_level)(perf_level) };
        LibSession {
            db,
            cached: None,
            batch,
            write,
            read,
            perf_level,
        }
    }

    fn api(&self) -> &'static Api {
        self.db.api()
    }

    /// `table`'s handle: kept while no family is dropped or created.
    #[inline]
    fn look_up(&mut self, table: &str) -> Result<Family> {
        let generation = self.db.generation.load(Ordering::Acquire);
        match &self.cached {
            Some((name, g, f)) if *g == generation && name == table => Ok(*f),
            _ => self.look_up_again(table, generation),
        }
    }

    #[cold]
    #[inline(never)]
    fn look_up_again(&mut self, table: &str, generation: u64) -> Result<Family> {
        // A session used on another thread than the one that opened it
        // gets its perf level there too (by its first operation).
        // SAFETY: sets the calling thread's level.
        unsafe { (self.api().rocksdb_set_perf_level)(self.perf_level) };
        let f = self
            .db
            .family(table)
            .ok_or_else(|| Error::database(&self.db.target, format!("no column family {table:?}")))?;
        self.cached = Some((table.to_string(), generation, f));
        Ok(f)
    }

    /// Writes `batch` to `table` as one write batch (the session's, reused).
    fn write_batch(&mut self, table: &str, batch: &KvBatch, edit: Edit) -> Result<()> {
        let cf = self.look_up(table)?.0;
        let (api, b) = (self.api(), self.batch);
        let mut err = std::ptr::null_mut();
        // SAFETY: the batch is ours; keys and values outlive the calls,
        // which copy them; the database and family are open.
        unsafe {
            (api.rocksdb_writebatch_clear)(b);
            match edit {
                Edit::Put => {
                    for (k, v) in batch.pairs() {
                        (api.rocksdb_writebatch_put_cf)(b, cf, ptr(k), k.len(), ptr(v), v.len());
                    }
                }
                Edit::Merge => {
                    for (k, v) in batch.pairs() {
                        (api.rocksdb_writebatch_merge_cf)(b, cf, ptr(k), k.len(), ptr(v), v.len());
                    }
                }
                Edit::Delete => {
                    for (k, _) in batch.pairs() {
                        (api.rocksdb_writebatch_delete_cf)(b, cf, ptr(k), k.len());
                    }
                }
            }
            (api.rocksdb_write)(self.db.raw(), self.write, b, &mut err);
            match taken(api, err) {
                None => Ok(()),
                Some(message) => Err(self.db.error(edit.name(), message)),
            }
        }
    }

    /// Calls `with` on `key`'s value where RocksDB holds it (a pinned
    /// slice: a block cache entry or the memtable), without a copy.
    fn pinned<T>(&mut self, table: &str, key: &[u8], with: impl FnOnce(Option<&[u8]>) -> T) -> Result<T> {
        let cf = self.look_up(table)?.0;
        let api = self.api();
        let mut err = std::ptr::null_mut();
        // SAFETY: the slice is read while pinned, then destroyed.
        unsafe {
            let slice = (api.rocksdb_get_pinned_cf)(self.db.raw(), self.read, cf, ptr(key), key.len(), &mut err);
            if let Some(message) = taken(api, err) {
                return Err(self.db.error("get", message));
            }
            if slice.is_null() {
                return Ok(with(None));
            }
            let mut len = 0;
            let at = (api.rocksdb_pinnableslice_value)(slice, &mut len);
            let out = with(Some(bytes(at, len)));
            (api.rocksdb_pinnableslice_destroy)(slice);
            Ok(out)
        }
    }

    /// Up to `limit` pairs from an iterator placed by `seek`, moved forward or back.
    fn scan_with(
        &mut self,
        table: &str,
        limit: usize,
        out: &mut KvBatch,
        seek: impl FnOnce(&Api, *mut ffi::rocksdb_iterator_t),
        forward: bool,
    ) -> Result<usize> {
        let cf = self.look_up(table)?.0;
        let api = self.api();
        out.clear();
        // SAFETY: the iterator is made, read and destroyed here.
        unsafe {
            let it = (api.rocksdb_create_iterator_cf)(self.db.raw(), self.read, cf);
            seek(api, it);
            while (api.rocksdb_iter_valid)(it) != 0 && out.len() < limit {
                let (mut kl, mut vl) = (0, 0);
                let k = (api.rocksdb_iter_key)(it, &mut kl);
                let v = (api.rocksdb_iter_value)(it, &mut vl);
                out.push_raw(bytes(k, kl), bytes(v, vl));
                if forward {
                    (api.rocksdb_iter_next)(it);
                } else {
                    (api.rocksdb_iter_prev)(it);
                }
            }
            self.finish_iterator(it, "scan")?;
        }
        Ok(out.len())
    }

    /// Destroys `it`, returning its error if it had one.
    ///
    /// # Safety
    /// `it` is a live iterator of this session's release.
    unsafe fn finish_iterator(&self, it: *mut ffi::rocksdb_iterator_t, what: &str) -> Result<()> {
        let api = self.api();
        let mut err = std::ptr::null_mut();
        (api.rocksdb_iter_get_error)(it, &mut err);
        (api.rocksdb_iter_destroy)(it);
        match taken(api, err) {
            None => Ok(()),
            Some(message) => Err(self.db.error(what, message)),
        }
    }
}

/// The bytes at `at` (RocksDB's), empty for a null pointer.
///
/// # Safety
/// `at` points at `len` readable bytes while the result is used.
unsafe fn bytes<'a>(at: *const c_char, len: usize) -> &'a [u8] {
    if at.is_null() || len == 0 {
        &[]
    } else {
        std::slice::from_raw_parts(at.cast(), len)
    }
}

impl KvSession for LibSession {
    fn create(&mut self, table: &str, _key_size: usize) -> Result<()> {
        self.cached = None;
        self.db.recreate(table)
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
        let cf = self.look_up(table)?.0;
        let api = self.api();
        out.clear();
        let n = keys.len();
        let ptrs: Vec<*const c_char> = (0..n).map(|i| ptr(keys.key(i))).collect();
        let lens: Vec<usize> = (0..n).map(|i| keys.key(i).len()).collect();
        let mut values = vec![std::ptr::null_mut(); n];
        let mut errs = vec![std::ptr::null_mut(); n];
        // SAFETY: one entry per key in every array; each value and error is
        // read, then freed.
        unsafe {
            (api.rocksdb_batched_multi_get_cf)(
                self.db.raw(),
                self.read,
                cf,
                n,
                ptrs.as_ptr(),
                lens.as_ptr(),
                values.as_mut_ptr(),
                errs.as_mut_ptr(),
                false,
            );
            let mut failed = None;
            for i in 0..n {
                if let Some(message) = taken(api, errs[i]) {
                    failed.get_or_insert(message);
                }
                if !values[i].is_null() {
                    let mut len = 0;
                    let at = (api.rocksdb_pinnableslice_value)(values[i], &mut len);
                    out.push_raw(keys.key(i), bytes(at, len));
                    (api.rocksdb_pinnableslice_destroy)(values[i]);
                }
            }
            if let Some(message) = failed {
                return Err(self.db.error("multiget", message));
            }
        }
        Ok(out.len())
    }
    fn get(&mut self, table: &str, key: &[u8], value: &mut Vec<u8>) -> Result<bool> {
        value.clear();
        self.pinned(table, key, |v| {
            if let Some(v) = v {
                value.extend_from_slice(v);
            }
            v.is_some()
        })
    }
    fn probe(&mut self, table: &str, key: &[u8], _scratch: &mut Vec<u8>) -> Result<bool> {
        self.pinned(table, key, |v| v.is_some())
    }
    fn scan(&mut self, table: &str, start: &[u8], limit: usize, out: &mut KvBatch) -> Result<usize> {
        // SAFETY (both): the iterator is live; the key outlives the seek.
        let seek = |api: &Api, it| unsafe { (api.rocksdb_iter_seek)(it, ptr(start), start.len()) };
        self.scan_with(table, limit, out, seek, true)
    }
    fn scan_reverse(&mut self, table: &str, start: &[u8], limit: usize, out: &mut KvBatch) -> Result<usize> {
        let seek = |api: &Api, it| unsafe { (api.rocksdb_iter_seek_for_prev)(it, ptr(start), start.len()) };
        self.scan_with(table, limit, out, seek, false)
    }
    fn count(&mut self, table: &str) -> Result<u64> {
        let cf = self.look_up(table)?.0;
        let api = self.api();
        let mut n = 0;
        // SAFETY: the iterator is made, moved and destroyed here.
        unsafe {
            let it = (api.rocksdb_create_iterator_cf)(self.db.raw(), self.read, cf);
            (api.rocksdb_iter_seek_to_first)(it);
            while (api.rocksdb_iter_valid)(it) != 0 {
                n += 1;
                (api.rocksdb_iter_next)(it);
            }
            self.finish_iterator(it, "count")?;
        }
        Ok(n)
    }
    fn flush(&mut self, table: &str, _stop: &Stop) -> Result<Vec<String>> {
        let cf = self.look_up(table)?.0;
        let api = self.api();
        let mut err = std::ptr::null_mut();
        // SAFETY: the flush options are made and destroyed here.
        unsafe {
            let fo = (api.rocksdb_flushoptions_create)();
            (api.rocksdb_flushoptions_set_wait)(fo, 1);
            (api.rocksdb_flush_cf)(self.db.raw(), fo, cf, &mut err);
            (api.rocksdb_flushoptions_destroy)(fo);
            if let Some(message) = taken(api, err) {
                return Err(self.db.error("flush", message));
            }
        }
        Ok(Vec::new())
    }
    fn wait_for_compaction(&mut self, table: &str, stop: &Stop) -> Result<Vec<String>> {
        let family = self.look_up(table)?;
        super::wait::until_compactions_end(&self.db, family, stop)?;
        Ok(Vec::new())
    }
}

impl Drop for LibSession {
    fn drop(&mut self) {
        let api = self.api();
        // SAFETY: made in new, destroyed once.
        unsafe {
            (api.rocksdb_writebatch_destroy)(self.batch);
            (api.rocksdb_writeoptions_destroy)(self.write);
            (api.rocksdb_readoptions_destroy)(self.read);
        }
    }
}
