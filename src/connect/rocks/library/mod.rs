//! `rocksdb:PATH?lib=LIBRARY&options` — any RocksDB release as the
//! key/value engine, through its C API in a shared library loaded at run
//! time: the same steps, options, statistics, properties, waits and
//! results as the embedded engine (which rust-rocksdb drives through the
//! same C API), with the release's version read from the library itself.
//!
//! `load.rs` opens and checks the library and reads its version, `api.rs`
//! is the table of its C functions, `options.rs` makes its options from
//! the DSN's, `db.rs` is the open database and its column families,
//! `kv.rs` the session, `wait.rs` the compaction wait, `stats.rs` the
//! engine's counters.

mod api;
mod db;
mod kv;
mod load;
mod options;
mod stats;
mod wait;

use super::{resolved, RocksDsn};
use crate::connect::{Connector, KvSession, ServerCounters, Sizes, KV_TABLE};
use crate::error::Result;
use crate::metrics::{EngineCounters, Setting};
use db::LibDb;
pub(crate) use load::Release;
use std::path::PathBuf;
use std::sync::Arc;

/// A database of a loaded RocksDB release, shared by every session.
pub(crate) struct LibraryConnector {
    db: Arc<LibDb>,
    dsn: RocksDsn,
}

impl LibraryConnector {
    /// Loads the DSN's library (once per process), makes its options
    /// (refused by the release's own parser where it does not know one)
    /// and opens the database.
    pub(super) fn open(dsn: RocksDsn) -> Result<LibraryConnector> {
        let lib = dsn.options.lib.clone().expect("a lib= DSN");
        let release = Release::load(&lib)?;
        let opts = options::options(release, &dsn.options)?;
        // RocksDB makes the database's own directory only; rust-rocksdb, and
        // so the embedded engine, makes its parents too.
        if let Err(source) = std::fs::create_dir_all(&dsn.path) {
            // SAFETY: made above, not handed on.
            unsafe { (release.api.rocksdb_options_destroy)(opts) };
            return Err(crate::error::Error::Io {
                action: "cannot create the RocksDB directory",
                path: dsn.path.clone(),
                source,
            });
        }
        let db = LibDb::open(release, opts, &dsn.path, &["default", KV_TABLE], dsn.target.clone())?;
        Ok(LibraryConnector { db: Arc::new(db), dsn })
    }
}

impl Connector for LibraryConnector {
    fn dbms(&self) -> &'static str {
        "rocksdb"
    }
    fn target(&self) -> String {
        self.dsn.target.clone()
    }
    fn version(&self) -> Result<String> {
        Ok(self.db.release.version.clone())
    }
    fn settings(&self) -> Vec<(String, String)> {
        let mut out = resolved::settings(&self.dsn.options);
        // The library as loaded (canonical), beside the DSN's lib= as given.
        out.push(("library".into(), self.db.release.path.display().to_string()));
        out
    }
    fn configuration(&self) -> Result<Vec<Setting>> {
        let cf = self.db.family(KV_TABLE);
        let property = |name: &str| self.db.property(cf?, name);
        let mut rows = resolved::configuration(&self.dsn.path, &self.dsn.target, &self.dsn.options, property)?;
        rows.push(Setting::server(
            "library",
            self.db.release.path.display().to_string(),
            "loaded",
        ));
        Ok(rows)
    }
    fn session(&self) -> Result<Box<dyn crate::connect::Session>> {
        Err(resolved::no_sql_session())
    }
    fn sizes(&self, _tables: &[String]) -> Sizes {
        let live = self
            .db
            .family(KV_TABLE)
            .and_then(|cf| self.db.property_int(cf, "rocksdb.live-sst-files-size"));
        resolved::sizes(&self.dsn.path, live)
    }
    fn data_path(&self) -> Option<PathBuf> {
        Some(self.dsn.path.clone())
    }
    fn kv_session(&self) -> Result<Box<dyn KvSession>> {
        let o = &self.dsn.options;
        Ok(Box::new(kv::LibSession::new(
            self.db.clone(),
            o.wal,
            o.sync,
            o.perf_level.number(),
        )))
    }
    fn counters(&self, _tables: &[String]) -> Result<Option<Box<dyn ServerCounters>>> {
        Ok(Some(Box::new(stats::LibStats { db: self.db.clone() })))
    }
    fn engine_counters(&self) -> Option<EngineCounters> {
        stats::engine_counters(&self.db)
    }
    fn kv_only(&self) -> bool {
        true
    }
    fn read_caveat(&self) -> Option<String> {
        resolved::read_caveat(&self.dsn.path)
    }
}
