//! SQLite's own counters and gauges, as far as the library exposes them to
//! another connection: the database's pages (in use and free) and its WAL's
//! frames (from the WAL file's size). SQLite keeps no checkpoint count.

use super::error::db_err;
use crate::connect::ServerCounters;
use crate::error::Result;
use crate::metrics::{Counter, Gauge};
use rusqlite::Connection;
use std::path::PathBuf;

/// A connection of its own to the database file.
pub(super) struct SqliteStats {
    pub(super) conn: Connection,
    pub(super) path: PathBuf,
    pub(super) target: String,
}

/// The WAL's header and each frame's header, bytes (sqlite.org/fileformat.html).
const WAL_HEADER: u64 = 32;
const FRAME_HEADER: u64 = 24;

impl SqliteStats {
    /// (page_count, freelist_count, page_size, WAL frames).
    fn read(&self) -> Result<[f64; 4]> {
        let pragma = |name: &str| {
            self.conn
                .query_row(&format!("PRAGMA {name}"), [], |r| r.get::<_, i64>(0))
                .map_err(|e| db_err(&self.target, &format!("PRAGMA {name}"), e))
        };
        let (pages, free, page_size) = (pragma("page_count")?, pragma("freelist_count")?, pragma("page_size")?);
        let mut wal = self.path.clone().into_os_string();
        wal.push("-wal");
        let wal_bytes = std::fs::metadata(&wal).map(|m| m.len()).unwrap_or(0);
        let frames = wal_bytes.saturating_sub(WAL_HEADER) / (page_size as u64 + FRAME_HEADER);
        Ok([pages as f64, free as f64, page_size as f64, frames as f64])
    }
}

impl ServerCounters for SqliteStats {
    fn counters(&mut self, _at_end: bool) -> Result<Vec<Counter>> {
        let [pages, free, page_size, frames] = self.read()?;
        Ok(vec![
            Counter::number("sqlite", "page_count", pages),
            Counter::number("sqlite", "freelist_count", free),
            Counter::number("sqlite", "page_size", page_size),
            Counter::number("sqlite", "wal_frames", frames),
        ])
    }

    fn gauges(&mut self) -> Result<Vec<Gauge>> {
        let [pages, free, _, frames] = self.read()?;
        Ok(vec![
            Gauge::level("sqlite", "pages_in_use", pages - free),
            Gauge::level("sqlite", "wal_frames", frames),
        ])
    }
}
