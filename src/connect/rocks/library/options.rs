//! A loaded release's options from the DSN's: every option through the
//! release's own options parser (so a release refuses an option it does
//! not know, by name), statistics on, the block cache, and the put merge
//! operator as C callbacks.

use super::api::Api;
use super::db::{c_string, taken};
use super::load::Release;
use crate::connect::rocks::options::RocksOptions;
use crate::error::{Error, Result};
use librocksdb_sys as ffi;
use std::ffi::{c_char, c_int, c_uchar, c_void};

/// The release's options for the DSN's (the caller owns them).
pub(super) fn options(release: &Release, dsn: &RocksOptions) -> Result<*mut ffi::rocksdb_options_t> {
    let api = &release.api;
    // SAFETY: made here; destroyed here on an error, else by the caller.
    let mut opts = unsafe { (api.rocksdb_options_create)() };
    for pair in dsn.library_pairs() {
        match parsed(api, opts, &pair) {
            Ok(next) => {
                // SAFETY: replaced by the parsed copy.
                unsafe { (api.rocksdb_options_destroy)(opts) };
                opts = next;
            }
            Err(message) => {
                // SAFETY: ours.
                unsafe { (api.rocksdb_options_destroy)(opts) };
                return Err(Error::config(
                    "db",
                    format!("{} refused the option {pair:?}: {message}", release.name()),
                ));
            }
        }
    }
    // SAFETY: opts is ours; the cache and table options are copied into it.
    unsafe {
        if let Some(bytes) = dsn.hyper_clock_cache() {
            let Some(create) = api.rocksdb_cache_create_hyper_clock else {
                (api.rocksdb_options_destroy)(opts);
                return Err(Error::config(
                    "block_cache_type",
                    format!(
                        "hyper_clock needs rocksdb_cache_create_hyper_clock, which {} lacks (RocksDB 8.1 and later have it)",
                        release.name()
                    ),
                ));
            };
            // 0: the charge per entry estimated as it goes (db_bench's hyper_clock_cache).
            let cache = create(bytes, 0);
            let table = (api.rocksdb_block_based_options_create)();
            (api.rocksdb_block_based_options_set_block_cache)(table, cache);
            (api.rocksdb_options_set_block_based_table_factory)(opts, table);
            (api.rocksdb_block_based_options_destroy)(table);
            (api.rocksdb_cache_destroy)(cache);
        }
        // What ibench needs of every database, whatever the options say.
        (api.rocksdb_options_set_create_if_missing)(opts, 1);
        (api.rocksdb_options_set_create_missing_column_families)(opts, 1);
        (api.rocksdb_options_enable_statistics)(opts);
        let merge = (api.rocksdb_mergeoperator_create)(
            std::ptr::null_mut(),
            Some(no_state),
            Some(full_merge),
            Some(partial_merge),
            Some(delete_value),
            Some(name),
        );
        (api.rocksdb_options_set_merge_operator)(opts, merge);
    }
    Ok(opts)
}

/// `base` with one `name=value` pair parsed into a copy, or the release's refusal.
fn parsed(
    api: &Api,
    base: *mut ffi::rocksdb_options_t,
    pair: &str,
) -> std::result::Result<*mut ffi::rocksdb_options_t, String> {
    let text = c_string("the option", pair).map_err(|e| e.to_string())?;
    // SAFETY: base is live; next is made here and returned or destroyed.
    unsafe {
        let next = (api.rocksdb_options_create)();
        let mut err = std::ptr::null_mut();
        (api.rocksdb_get_options_from_string)(base, text.as_ptr(), next, &mut err);
        match taken(api, err) {
            None => Ok(next),
            Some(message) => {
                (api.rocksdb_options_destroy)(next);
                Err(message)
            }
        }
    }
}

// The put merge operator (db_bench --merge_operator=put): the newest
// operand is the value. Its results are Rust allocations handed to RocksDB
// and given back to delete_value with their length.

unsafe extern "C" fn no_state(_: *mut c_void) {}

unsafe extern "C" fn name(_: *mut c_void) -> *const c_char {
    c"put".as_ptr()
}

/// A copy of `len` bytes at `at` that RocksDB owns until delete_value.
unsafe fn handed_over(at: *const c_char, len: usize, out_len: *mut usize) -> *mut c_char {
    let bytes: Box<[u8]> = if at.is_null() || len == 0 {
        Box::new([])
    } else {
        std::slice::from_raw_parts(at.cast::<u8>(), len).into()
    };
    *out_len = len;
    Box::into_raw(bytes).cast::<c_char>()
}

#[allow(clippy::too_many_arguments)]
unsafe extern "C" fn full_merge(
    _: *mut c_void,
    _key: *const c_char,
    _key_len: usize,
    existing: *const c_char,
    existing_len: usize,
    operands: *const *const c_char,
    operand_lens: *const usize,
    n: c_int,
    success: *mut c_uchar,
    out_len: *mut usize,
) -> *mut c_char {
    *success = 1;
    last_operand(operands, operand_lens, n, out_len).unwrap_or_else(|| handed_over(existing, existing_len, out_len))
}

/// The newest of `n` operands handed over (None without operands).
unsafe fn last_operand(
    operands: *const *const c_char,
    operand_lens: *const usize,
    n: c_int,
    out_len: *mut usize,
) -> Option<*mut c_char> {
    let last = usize::try_from(n).ok()?.checked_sub(1)?;
    Some(handed_over(*operands.add(last), *operand_lens.add(last), out_len))
}

unsafe extern "C" fn partial_merge(
    _: *mut c_void,
    _key: *const c_char,
    _key_len: usize,
    operands: *const *const c_char,
    operand_lens: *const usize,
    n: c_int,
    success: *mut c_uchar,
    out_len: *mut usize,
) -> *mut c_char {
    let merged = last_operand(operands, operand_lens, n, out_len);
    *success = merged.is_some() as c_uchar;
    merged.unwrap_or(std::ptr::null_mut())
}

unsafe extern "C" fn delete_value(_: *mut c_void, value: *const c_char, len: usize) {
    if !value.is_null() {
        drop(Box::from_raw(std::ptr::slice_from_raw_parts_mut(value as *mut u8, len)));
    }
}
