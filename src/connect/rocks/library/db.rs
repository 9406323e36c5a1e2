//! A database opened through a loaded release's C API: its options (which
//! hold the statistics), its column families by name, their creation and
//! dropping, properties, statistics and live files. Shared by the
//! connector and its sessions; closed when the last of them goes.

use super::api::Api;
use super::load::Release;
use crate::error::{Error, Result};
use librocksdb_sys as ffi;
use std::ffi::{c_char, CStr, CString};
use std::path::Path;
use std::sync::atomic::{AtomicU64, Ordering};
use std::sync::Mutex;

/// A column family's handle. Handles are destroyed only when the database
/// closes (a dropped family's too), so a session may hold one while
/// another drops its family: RocksDB then refuses the session's writes
/// with its own message instead of a use after free.
#[derive(Clone, Copy, PartialEq, Eq, Debug)]
pub(super) struct Family(pub(super) *mut ffi::rocksdb_column_family_handle_t);

// SAFETY: RocksDB's handles and database are safe to use from any thread.
unsafe impl Send for Family {}

/// The families of the database: the live ones by name, the dropped ones
/// kept until it closes.
#[derive(Default)]
struct Families {
    live: Vec<(String, Family)>,
    dropped: Vec<Family>,
}

/// An open database of a loaded release.
pub(super) struct LibDb {
    pub(super) release: &'static Release,
    raw: *mut ffi::rocksdb_t,
    /// The database's and every family's options; they hold the statistics.
    opts: *mut ffi::rocksdb_options_t,
    families: Mutex<Families>,
    /// Bumped whenever a family is dropped or created, so every session
    /// looks its family's handle up again.
    pub(super) generation: AtomicU64,
    pub(super) target: String,
}

// SAFETY: the C++ objects behind the pointers are thread-safe (a DB, its
// statistics); the families' list is behind a mutex.
unsafe impl Send for LibDb {}
unsafe impl Sync for LibDb {}

/// A C string of `s`, or an error naming what it is.
pub(super) fn c_string(what: &str, s: &str) -> Result<CString> {
    CString::new(s).map_err(|_| Error::config("db", format!("{what} {s:?} has a NUL byte")))
}

/// Takes a C API error (`*errptr`): None when there was none; the message,
/// freed, when there was.
///
/// # Safety
/// `err` is null or a string the release allocated.
pub(super) unsafe fn taken(api: &Api, err: *mut c_char) -> Option<String> {
    if err.is_null() {
        return None;
    }
    let message = CStr::from_ptr(err).to_string_lossy().into_owned();
    (api.rocksdb_free)(err.cast());
    Some(message)
}

impl LibDb {
    pub(super) fn api(&self) -> &'static Api {
        &self.release.api
    }

    /// An error of `what` on this database, with the release named.
    pub(super) fn error(&self, what: &str, message: impl std::fmt::Display) -> Error {
        Error::database(
            &self.target,
            format!("{what} (RocksDB {}): {message}", self.release.version),
        )
    }

    /// Opens (creating if missing) the database at `path` with every
    /// family it has and `needed`, each with `opts` (which this takes).
    pub(super) fn open(
        release: &'static Release,
        opts: *mut ffi::rocksdb_options_t,
        path: &Path,
        needed: &[&str],
        target: String,
    ) -> Result<LibDb> {
        let api = &release.api;
        let mut db = LibDb {
            release,
            raw: std::ptr::null_mut(),
            opts,
            families: Mutex::new(Families::default()),
            generation: AtomicU64::new(0),
            target,
        };
        let name = c_string("the database path", &path.to_string_lossy())?;
        let mut names = db.list_families(&name);
        for n in needed {
            if !names.iter().any(|f| f == n) {
                names.push(n.to_string());
            }
        }
        let c_names = names
            .iter()
            .map(|n| c_string("a column family", n))
            .collect::<Result<Vec<_>>>()?;
        let name_ptrs: Vec<*const c_char> = c_names.iter().map(|n| n.as_ptr()).collect();
        let cf_opts: Vec<*const ffi::rocksdb_options_t> = vec![opts; names.len()];
        let mut handles = vec![std::ptr::null_mut(); names.len()];
        let mut err = std::ptr::null_mut();
        // SAFETY: every array has one entry per family; the strings outlive the call.
        db.raw = unsafe {
            (api.rocksdb_open_column_families)(
                opts,
                name.as_ptr(),
                names.len() as i32,
                name_ptrs.as_ptr(),
                cf_opts.as_ptr(),
                handles.as_mut_ptr(),
                &mut err,
            )
        };
        // SAFETY: err is the release's.
        if let Some(message) = unsafe { taken(api, err) } {
            return Err(db.error(&format!("cannot open {}", path.display()), message));
        }
        db.families.get_mut().expect("not poisoned").live =
            names.into_iter().zip(handles.into_iter().map(Family)).collect();
        Ok(db)
    }

    /// The families of the database at `name` (none when it does not exist yet).
    fn list_families(&self, name: &CStr) -> Vec<String> {
        let api = self.api();
        let (mut n, mut err) = (0usize, std::ptr::null_mut());
        // SAFETY: the list is read, then destroyed by the release.
        unsafe {
            let list = (api.rocksdb_list_column_families)(self.opts, name.as_ptr(), &mut n, &mut err);
            if taken(api, err).is_some() || list.is_null() {
                return Vec::new();
            }
            let names = (0..n)
                .map(|i| CStr::from_ptr(*list.add(i)).to_string_lossy().into_owned())
                .collect();
            (api.rocksdb_list_column_families_destroy)(list, n);
            names
        }
    }

    pub(super) fn raw(&self) -> *mut ffi::rocksdb_t {
        self.raw
    }

    /// The handle of the live family `name`.
    pub(super) fn family(&self, name: &str) -> Option<Family> {
        let families = self.families.lock().expect("not poisoned");
        families.live.iter().find(|(n, _)| n == name).map(|(_, f)| *f)
    }

    /// Drops `name` if it exists and creates it again, empty, with the
    /// database's options.
    pub(super) fn recreate(&self, name: &str) -> Result<()> {
        let api = self.api();
        let c_name = c_string("a column family", name)?;
        let mut families = self.families.lock().expect("not poisoned");
        self.generation.fetch_add(1, Ordering::AcqRel);
        if let Some(at) = families.live.iter().position(|(n, _)| n == name) {
            let (_, old) = families.live.remove(at);
            let mut err = std::ptr::null_mut();
            // SAFETY: the handle is live; it is kept (dropped) until close.
            unsafe { (api.rocksdb_drop_column_family)(self.raw, old.0, &mut err) };
            families.dropped.push(old);
            // SAFETY: err is the release's.
            if let Some(message) = unsafe { taken(api, err) } {
                return Err(self.error(&format!("drop column family {name}"), message));
            }
        }
        let mut err = std::ptr::null_mut();
        // SAFETY: the name outlives the call.
        let handle = unsafe { (api.rocksdb_create_column_family)(self.raw, self.opts, c_name.as_ptr(), &mut err) };
        // SAFETY: err is the release's.
        if let Some(message) = unsafe { taken(api, err) } {
            return Err(self.error(&format!("create column family {name}"), message));
        }
        families.live.push((name.to_string(), Family(handle)));
        self.generation.fetch_add(1, Ordering::AcqRel);
        Ok(())
    }

    /// A property of `family` as text.
    pub(super) fn property(&self, family: Family, name: &str) -> Option<String> {
        let api = self.api();
        let c_name = CString::new(name).ok()?;
        // SAFETY: the returned string is the release's, freed here.
        unsafe {
            let v = (api.rocksdb_property_value_cf)(self.raw, family.0, c_name.as_ptr());
            taken(api, v)
        }
    }

    /// A property of `family` as a number.
    pub(super) fn property_int(&self, family: Family, name: &str) -> Option<u64> {
        let c_name = CString::new(name).ok()?;
        let mut v = 0u64;
        // SAFETY: v is written on success (0).
        let status = unsafe { (self.api().rocksdb_property_int_cf)(self.raw, family.0, c_name.as_ptr(), &mut v) };
        (status == 0).then_some(v)
    }

    /// The statistics' text (RocksDB's `Statistics::ToString`).
    pub(super) fn statistics(&self) -> String {
        let api = self.api();
        // SAFETY: the options hold the statistics; the text is freed here.
        unsafe { taken(api, (api.rocksdb_options_statistics_get_string)(self.opts)) }.unwrap_or_default()
    }

    /// The live SST files of `family` as (level, bytes).
    pub(super) fn live_files(&self, family: &str) -> Vec<(i32, u64)> {
        let api = self.api();
        let mut out = Vec::new();
        // SAFETY: the list is read, then destroyed.
        unsafe {
            let files = (api.rocksdb_livefiles)(self.raw);
            if files.is_null() {
                return out;
            }
            for i in 0..(api.rocksdb_livefiles_count)(files) {
                let cf = (api.rocksdb_livefiles_column_family_name)(files, i);
                if !cf.is_null() && CStr::from_ptr(cf).to_bytes() == family.as_bytes() {
                    out.push((
                        (api.rocksdb_livefiles_level)(files, i),
                        (api.rocksdb_livefiles_size)(files, i) as u64,
                    ));
                }
            }
            (api.rocksdb_livefiles_destroy)(files);
        }
        out
    }
}

impl Drop for LibDb {
    fn drop(&mut self) {
        let api = self.api();
        let families = std::mem::take(self.families.get_mut().expect("not poisoned"));
        // SAFETY: no session is left (they hold this database); each handle
        // is destroyed once, before the database closes.
        unsafe {
            for f in families.live.iter().map(|(_, f)| *f).chain(families.dropped) {
                (api.rocksdb_column_family_handle_destroy)(f.0);
            }
            if !self.raw.is_null() {
                (api.rocksdb_close)(self.raw);
            }
            (api.rocksdb_options_destroy)(self.opts);
        }
    }
}
