//! One write batch per session, cleared and refilled for every write, as
//! db_bench keeps one. rust-rocksdb's `write_opt` consumes its batch and
//! `DB::Put` builds one per call: each is an allocation and a free per write
//! (about 300 instructions of a fillseq write). RocksDB's C API writes a
//! batch it is lent, so the batch lives here, next to the options it is
//! written with.

use crate::gen::KvBatch;
use librocksdb_sys as ffi;
use rocksdb::{AsColumnFamilyRef, AsRawPtr, DBWithThreadMode, MultiThreaded};
use std::ffi::{c_char, CStr};
use std::ptr::NonNull;

/// What a write does with each pair.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub(super) enum Edit {
    Put,
    Merge,
    Delete,
}

impl Edit {
    /// The write's name in errors.
    pub(super) fn name(self) -> &'static str {
        match self {
            Edit::Put => "write",
            Edit::Merge => "merge",
            Edit::Delete => "delete",
        }
    }
}

/// A RocksDB `WriteBatch` and `WriteOptions`, owned and reused.
pub(super) struct Writer {
    batch: NonNull<ffi::rocksdb_writebatch_t>,
    options: NonNull<ffi::rocksdb_writeoptions_t>,
}

// Both are plain C++ objects owned by this value alone; a session moves to
// its worker thread and uses them there only.
unsafe impl Send for Writer {}

impl Writer {
    /// A batch written with the WAL on or off, synced or not.
    pub(super) fn new(wal: bool, sync: bool) -> Self {
        // SAFETY: the create functions return new objects (or abort on OOM).
        unsafe {
            let options = NonNull::new(ffi::rocksdb_writeoptions_create()).expect("rocksdb_writeoptions_create");
            ffi::rocksdb_writeoptions_disable_WAL(options.as_ptr(), (!wal) as i32);
            ffi::rocksdb_writeoptions_set_sync(options.as_ptr(), sync as u8);
            let batch = NonNull::new(ffi::rocksdb_writebatch_create()).expect("rocksdb_writebatch_create");
            Writer { batch, options }
        }
    }

    /// Writes `batch`'s pairs to `cf` of `db` as one write batch (a delete
    /// ignores the values).
    pub(super) fn write(
        &mut self,
        db: &DBWithThreadMode<MultiThreaded>,
        cf: &impl AsColumnFamilyRef,
        edit: Edit,
        batch: &KvBatch,
    ) -> Result<(), String> {
        let (b, cf) = (self.batch.as_ptr(), cf.inner());
        let ptr = |s: &[u8]| s.as_ptr() as *const c_char;
        // SAFETY: the batch is ours; the keys and values outlive the calls,
        // which copy them into the batch; `db` and `cf` are open (borrowed).
        unsafe {
            ffi::rocksdb_writebatch_clear(b);
            // One loop per edit: the choice is made once per batch.
            match edit {
                Edit::Put => {
                    for (k, v) in batch.pairs() {
                        ffi::rocksdb_writebatch_put_cf(b, cf, ptr(k), k.len(), ptr(v), v.len());
                    }
                }
                Edit::Merge => {
                    for (k, v) in batch.pairs() {
                        ffi::rocksdb_writebatch_merge_cf(b, cf, ptr(k), k.len(), ptr(v), v.len());
                    }
                }
                Edit::Delete => {
                    for (k, _) in batch.pairs() {
                        ffi::rocksdb_writebatch_delete_cf(b, cf, ptr(k), k.len());
                    }
                }
            }
            let mut err: *mut c_char = std::ptr::null_mut();
            ffi::rocksdb_write(db.as_raw_ptr(), self.options.as_ptr(), b, &mut err);
            if err.is_null() {
                return Ok(());
            }
            let message = CStr::from_ptr(err).to_string_lossy().into_owned();
            ffi::rocksdb_free(err as *mut std::ffi::c_void);
            Err(message)
        }
    }
}

impl Drop for Writer {
    fn drop(&mut self) {
        // SAFETY: created in new, destroyed once.
        unsafe {
            ffi::rocksdb_writebatch_destroy(self.batch.as_ptr());
            ffi::rocksdb_writeoptions_destroy(self.options.as_ptr());
        }
    }
}
