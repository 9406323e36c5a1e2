//! Waiting until a loaded release's compactions end: RocksDB's own
//! `WaitForCompact` where the release has it (as the embedded engine
//! waits), else its properties polled until no flush or compaction is
//! pending or running. Either way in slices, so a stop request is seen.

use super::db::{taken, Family, LibDb};
use crate::error::Result;
use crate::stop::Stop;
use std::time::Duration;

/// One slice of a wait (the embedded engine's too).
const SLICE: Duration = Duration::from_millis(200);

/// How often the properties are read where the release cannot wait itself.
const POLL: Duration = Duration::from_millis(20);

/// The properties that are 0 when no flush or compaction is pending or
/// running: (property, per family or of the database).
const BUSY: [&str; 4] = [
    "rocksdb.mem-table-flush-pending",
    "rocksdb.compaction-pending",
    "rocksdb.num-running-flushes",
    "rocksdb.num-running-compactions",
];

/// Waits until `family`'s database has no flush or compaction pending or
/// running, or a stop is requested.
pub(super) fn until_compactions_end(db: &LibDb, family: Family, stop: &Stop) -> Result<()> {
    let api = db.api();
    match (
        api.rocksdb_wait_for_compact,
        api.rocksdb_wait_for_compact_options_create,
        api.rocksdb_wait_for_compact_options_set_timeout,
        api.rocksdb_wait_for_compact_options_destroy,
    ) {
        (Some(wait), Some(create), Some(set_timeout), Some(destroy)) => {
            // SAFETY: the options are made and destroyed here.
            let opts = unsafe { create() };
            unsafe { set_timeout(opts, SLICE.as_micros() as u64) };
            let mut outcome = Ok(());
            while !stop.requested() {
                let mut err = std::ptr::null_mut();
                // SAFETY: the database is open; err is the release's.
                match unsafe {
                    wait(db.raw(), opts, &mut err);
                    taken(api, err)
                } {
                    None => break,
                    Some(m) if m.starts_with("Operation timed out") => continue,
                    Some(m) => {
                        outcome = Err(db.error("wait for compaction", m));
                        break;
                    }
                }
            }
            // SAFETY: made above.
            unsafe { destroy(opts) };
            outcome
        }
        _ => {
            while !stop.requested() && busy(db, family) {
                std::thread::sleep(POLL);
            }
            Ok(())
        }
    }
}

/// Whether a flush or compaction is pending or running (twice read, a
/// poll apart, so that one finishing as the next is scheduled is not
/// taken for the end).
fn busy(db: &LibDb, family: Family) -> bool {
    let once = || BUSY.iter().any(|p| db.property_int(family, p).unwrap_or(0) > 0);
    once() || {
        std::thread::sleep(POLL);
        once()
    }
}
