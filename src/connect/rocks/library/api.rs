//! The C functions of RocksDB's `rocksdb/c.h` that ibench calls in a loaded
//! release, declared once: each is resolved by name in the library, and
//! checked at compile time against the signature bindgen read from the
//! embedded release's header (librocksdb-sys), so a typing slip here does
//! not compile. The signatures of these functions have not changed from
//! 7.8 to 11.x (compared in their headers).

use libloading::Library;
use librocksdb_sys as ffi;
use std::ffi::{c_char, c_int, c_uchar, c_void};

/// A merge operator's full merge (rocksdb_mergeoperator_create's argument).
pub(super) type FullMerge = unsafe extern "C" fn(
    *mut c_void,
    *const c_char,
    usize,
    *const c_char,
    usize,
    *const *const c_char,
    *const usize,
    c_int,
    *mut c_uchar,
    *mut usize,
) -> *mut c_char;
/// A merge operator's partial merge.
pub(super) type PartialMerge = unsafe extern "C" fn(
    *mut c_void,
    *const c_char,
    usize,
    *const *const c_char,
    *const usize,
    c_int,
    *mut c_uchar,
    *mut usize,
) -> *mut c_char;
/// Frees what a merge returned.
pub(super) type DeleteValue = unsafe extern "C" fn(*mut c_void, *const c_char, usize);
/// A merge operator's name, or its state's destructor.
pub(super) type Name = unsafe extern "C" fn(*mut c_void) -> *const c_char;
/// A merge operator state's destructor.
pub(super) type Destructor = unsafe extern "C" fn(*mut c_void);

/// Declares the function table: `required` functions every release ibench
/// loads must have, `optional` ones (newer releases') as `Option`s.
macro_rules! c_api {
    (
        required { $($r:ident($($ra:ty),*) $(-> $rr:ty)?;)* }
        optional { $($o:ident($($oa:ty),*) $(-> $or:ty)?;)* }
    ) => {
        /// The C functions of one loaded release.
        #[allow(non_snake_case)]
        pub(crate) struct Api {
            $(pub(super) $r: unsafe extern "C" fn($($ra),*) $(-> $rr)?,)*
            $(pub(super) $o: Option<unsafe extern "C" fn($($oa),*) $(-> $or)?>,)*
        }

        // Each declaration is the embedded release's own signature.
        #[allow(dead_code, non_snake_case)]
        fn _signatures_match_the_header() {
            $(let _: unsafe extern "C" fn($($ra),*) $(-> $rr)? = ffi::$r;)*
            $(let _: unsafe extern "C" fn($($oa),*) $(-> $or)? = ffi::$o;)*
        }

        impl Api {
            /// The table of `lib`'s functions, or the names of the required
            /// ones it lacks.
            #[allow(non_snake_case)]
            pub(super) fn resolve(lib: &Library) -> std::result::Result<Api, Vec<&'static str>> {
                let mut missing = Vec::new();
                $(
                    // SAFETY: the symbol is the C function of this name and
                    // type (the header's); the library is never unloaded.
                    let $r = unsafe {
                        lib.get::<unsafe extern "C" fn($($ra),*) $(-> $rr)?>(concat!(stringify!($r), "\0").as_bytes())
                    }
                    .map(|s| *s)
                    .map_err(|_| missing.push(stringify!($r)))
                    .ok();
                )*
                $(
                    // SAFETY: as above.
                    let $o = unsafe {
                        lib.get::<unsafe extern "C" fn($($oa),*) $(-> $or)?>(concat!(stringify!($o), "\0").as_bytes())
                    }
                    .map(|s| *s)
                    .ok();
                )*
                if !missing.is_empty() {
                    return Err(missing);
                }
                Ok(Api {
                    $($r: $r.expect("checked"),)*
                    $($o,)*
                })
            }
        }
    };
}

c_api! {
    required {
        rocksdb_free(*mut c_void);
        rocksdb_options_create() -> *mut ffi::rocksdb_options_t;
        rocksdb_options_destroy(*mut ffi::rocksdb_options_t);
        rocksdb_get_options_from_string(*const ffi::rocksdb_options_t, *const c_char, *mut ffi::rocksdb_options_t, *mut *mut c_char);
        rocksdb_options_set_create_if_missing(*mut ffi::rocksdb_options_t, c_uchar);
        rocksdb_options_set_create_missing_column_families(*mut ffi::rocksdb_options_t, c_uchar);
        rocksdb_options_enable_statistics(*mut ffi::rocksdb_options_t);
        rocksdb_options_statistics_get_string(*mut ffi::rocksdb_options_t) -> *mut c_char;
        rocksdb_options_set_merge_operator(*mut ffi::rocksdb_options_t, *mut ffi::rocksdb_mergeoperator_t);
        rocksdb_mergeoperator_create(*mut c_void, Option<Destructor>, Option<FullMerge>, Option<PartialMerge>, Option<DeleteValue>, Option<Name>) -> *mut ffi::rocksdb_mergeoperator_t;
        rocksdb_open(*const ffi::rocksdb_options_t, *const c_char, *mut *mut c_char) -> *mut ffi::rocksdb_t;
        rocksdb_open_column_families(*const ffi::rocksdb_options_t, *const c_char, c_int, *const *const c_char, *const *const ffi::rocksdb_options_t, *mut *mut ffi::rocksdb_column_family_handle_t, *mut *mut c_char) -> *mut ffi::rocksdb_t;
        rocksdb_list_column_families(*const ffi::rocksdb_options_t, *const c_char, *mut usize, *mut *mut c_char) -> *mut *mut c_char;
        rocksdb_list_column_families_destroy(*mut *mut c_char, usize);
        rocksdb_close(*mut ffi::rocksdb_t);
        rocksdb_create_column_family(*mut ffi::rocksdb_t, *const ffi::rocksdb_options_t, *const c_char, *mut *mut c_char) -> *mut ffi::rocksdb_column_family_handle_t;
        rocksdb_drop_column_family(*mut ffi::rocksdb_t, *mut ffi::rocksdb_column_family_handle_t, *mut *mut c_char);
        rocksdb_column_family_handle_destroy(*mut ffi::rocksdb_column_family_handle_t);
        rocksdb_writeoptions_create() -> *mut ffi::rocksdb_writeoptions_t;
        rocksdb_writeoptions_destroy(*mut ffi::rocksdb_writeoptions_t);
        rocksdb_writeoptions_disable_WAL(*mut ffi::rocksdb_writeoptions_t, c_int);
        rocksdb_writeoptions_set_sync(*mut ffi::rocksdb_writeoptions_t, c_uchar);
        rocksdb_writebatch_create() -> *mut ffi::rocksdb_writebatch_t;
        rocksdb_writebatch_destroy(*mut ffi::rocksdb_writebatch_t);
        rocksdb_writebatch_clear(*mut ffi::rocksdb_writebatch_t);
        rocksdb_writebatch_put_cf(*mut ffi::rocksdb_writebatch_t, *mut ffi::rocksdb_column_family_handle_t, *const c_char, usize, *const c_char, usize);
        rocksdb_writebatch_merge_cf(*mut ffi::rocksdb_writebatch_t, *mut ffi::rocksdb_column_family_handle_t, *const c_char, usize, *const c_char, usize);
        rocksdb_writebatch_delete_cf(*mut ffi::rocksdb_writebatch_t, *mut ffi::rocksdb_column_family_handle_t, *const c_char, usize);
        rocksdb_write(*mut ffi::rocksdb_t, *const ffi::rocksdb_writeoptions_t, *mut ffi::rocksdb_writebatch_t, *mut *mut c_char);
        rocksdb_readoptions_create() -> *mut ffi::rocksdb_readoptions_t;
        rocksdb_readoptions_destroy(*mut ffi::rocksdb_readoptions_t);
        rocksdb_get_pinned_cf(*mut ffi::rocksdb_t, *const ffi::rocksdb_readoptions_t, *mut ffi::rocksdb_column_family_handle_t, *const c_char, usize, *mut *mut c_char) -> *mut ffi::rocksdb_pinnableslice_t;
        rocksdb_pinnableslice_value(*const ffi::rocksdb_pinnableslice_t, *mut usize) -> *const c_char;
        rocksdb_pinnableslice_destroy(*mut ffi::rocksdb_pinnableslice_t);
        rocksdb_batched_multi_get_cf(*mut ffi::rocksdb_t, *const ffi::rocksdb_readoptions_t, *mut ffi::rocksdb_column_family_handle_t, usize, *const *const c_char, *const usize, *mut *mut ffi::rocksdb_pinnableslice_t, *mut *mut c_char, bool);
        rocksdb_create_iterator_cf(*mut ffi::rocksdb_t, *const ffi::rocksdb_readoptions_t, *mut ffi::rocksdb_column_family_handle_t) -> *mut ffi::rocksdb_iterator_t;
        rocksdb_iter_seek(*mut ffi::rocksdb_iterator_t, *const c_char, usize);
        rocksdb_iter_seek_for_prev(*mut ffi::rocksdb_iterator_t, *const c_char, usize);
        rocksdb_iter_seek_to_first(*mut ffi::rocksdb_iterator_t);
        rocksdb_iter_valid(*const ffi::rocksdb_iterator_t) -> c_uchar;
        rocksdb_iter_key(*const ffi::rocksdb_iterator_t, *mut usize) -> *const c_char;
        rocksdb_iter_value(*const ffi::rocksdb_iterator_t, *mut usize) -> *const c_char;
        rocksdb_iter_next(*mut ffi::rocksdb_iterator_t);
        rocksdb_iter_prev(*mut ffi::rocksdb_iterator_t);
        rocksdb_iter_get_error(*const ffi::rocksdb_iterator_t, *mut *mut c_char);
        rocksdb_iter_destroy(*mut ffi::rocksdb_iterator_t);
        rocksdb_flushoptions_create() -> *mut ffi::rocksdb_flushoptions_t;
        rocksdb_flushoptions_destroy(*mut ffi::rocksdb_flushoptions_t);
        rocksdb_flushoptions_set_wait(*mut ffi::rocksdb_flushoptions_t, c_uchar);
        rocksdb_flush_cf(*mut ffi::rocksdb_t, *const ffi::rocksdb_flushoptions_t, *mut ffi::rocksdb_column_family_handle_t, *mut *mut c_char);
        rocksdb_property_value_cf(*mut ffi::rocksdb_t, *mut ffi::rocksdb_column_family_handle_t, *const c_char) -> *mut c_char;
        rocksdb_property_int_cf(*mut ffi::rocksdb_t, *mut ffi::rocksdb_column_family_handle_t, *const c_char, *mut u64) -> c_int;
        rocksdb_set_perf_level(c_int);
        rocksdb_livefiles(*mut ffi::rocksdb_t) -> *const ffi::rocksdb_livefiles_t;
        rocksdb_livefiles_count(*const ffi::rocksdb_livefiles_t) -> c_int;
        rocksdb_livefiles_column_family_name(*const ffi::rocksdb_livefiles_t, c_int) -> *const c_char;
        rocksdb_livefiles_level(*const ffi::rocksdb_livefiles_t, c_int) -> c_int;
        rocksdb_livefiles_size(*const ffi::rocksdb_livefiles_t, c_int) -> usize;
        rocksdb_livefiles_destroy(*const ffi::rocksdb_livefiles_t);
        rocksdb_block_based_options_create() -> *mut ffi::rocksdb_block_based_table_options_t;
        rocksdb_block_based_options_destroy(*mut ffi::rocksdb_block_based_table_options_t);
        rocksdb_block_based_options_set_block_cache(*mut ffi::rocksdb_block_based_table_options_t, *mut ffi::rocksdb_cache_t);
        rocksdb_options_set_block_based_table_factory(*mut ffi::rocksdb_options_t, *mut ffi::rocksdb_block_based_table_options_t);
        rocksdb_cache_destroy(*mut ffi::rocksdb_cache_t);
    }
    optional {
        // 8.1 and later (db_bench's hyper_clock_cache).
        rocksdb_cache_create_hyper_clock(usize, usize) -> *mut ffi::rocksdb_cache_t;
        // 8.9 and later; older releases' waits poll the properties.
        rocksdb_wait_for_compact(*mut ffi::rocksdb_t, *mut ffi::rocksdb_wait_for_compact_options_t, *mut *mut c_char);
        rocksdb_wait_for_compact_options_create() -> *mut ffi::rocksdb_wait_for_compact_options_t;
        rocksdb_wait_for_compact_options_destroy(*mut ffi::rocksdb_wait_for_compact_options_t);
        rocksdb_wait_for_compact_options_set_timeout(*mut ffi::rocksdb_wait_for_compact_options_t, u64);
    }
}
