//! `rocksdb:PATH?options` — embedded RocksDB (rust-rocksdb), a key/value store.
//!
//! Pairs live in the column family `kv`; a fill step drops and recreates it,
//! so its files go and the options stay. Statistics are on: they give the
//! engine counters of every step (write amplification, stalls, compaction
//! time). The resolved options are RocksDB's own `OPTIONS-*` file, recorded
//! with the run.
//!
//! `options.rs` parses the DSN's options and reads options files, `kv.rs`
//! is the session, `maintain.rs` its flush and wait, `stats.rs` the
//! engine's counters, `batch.rs` the session's reused write batch.

mod batch;
mod kv;
mod library;
mod maintain;
mod options;
mod resolved;
mod stats;

use crate::connect::{Connector, KvSession, ServerCounters, Sizes, KV_TABLE};
use crate::error::{Error, Result};
use crate::metrics::{EngineCounters, Setting};
use kv::RocksdbSession;
#[cfg(test)]
use options::option;
use options::RocksOptions;
use rocksdb::{DBWithThreadMode, MultiThreaded, Options};
use std::path::PathBuf;
use std::sync::atomic::AtomicU64;
use std::sync::Arc;

type Db = DBWithThreadMode<MultiThreaded>;

/// The RocksDB connector: one database, shared by every session.
pub struct RocksdbConnector {
    db: Arc<Db>,
    /// Bumped whenever a session drops or creates a column family, so every
    /// session looks its family's handle up again.
    families: Arc<AtomicU64>,
    /// Holds the statistics object the database writes to.
    opts: Options,
    dsn: RocksOptions,
    path: PathBuf,
    target: String,
}

/// A RocksDB error as ibench's, naming what failed.
fn db_err(target: &str, what: &str, e: impl std::fmt::Display) -> Error {
    Error::database(target, format!("{what}: {e}"))
}

impl RocksdbConnector {
    /// `rest` is what follows `rocksdb:`: `PATH[?name=value&...]`; the embedded engine.
    pub fn new(rest: &str) -> Result<Self> {
        Self::with(RocksDsn::parse(rest)?)
    }

    fn with(d: RocksDsn) -> Result<Self> {
        let RocksDsn {
            path,
            options: dsn,
            target,
        } = d;
        let opts = dsn.options()?;
        let mut families = Db::list_cf(&opts, &path).unwrap_or_default();
        for needed in ["default", KV_TABLE] {
            if !families.iter().any(|f| f == needed) {
                families.push(needed.to_string());
            }
        }
        // Every column family gets the DSN's options.
        let descriptors = families
            .iter()
            .map(|name| rocksdb::ColumnFamilyDescriptor::new(name, opts.clone()));
        let db = Db::open_cf_descriptors(&opts, &path, descriptors)
            .map_err(|e| db_err(&target, &format!("cannot open {}", path.display()), e))?;
        Ok(RocksdbConnector {
            db: Arc::new(db),
            families: Arc::new(AtomicU64::new(0)),
            opts,
            dsn,
            path,
            target,
        })
    }

    /// The options file's settings, each with its section as the source.
    #[cfg(test)]
    fn resolved_options(&self) -> Result<Vec<Setting>> {
        resolved::options(&self.path, &self.target)
    }

    #[cfg(test)]
    fn options_file(&self) -> Option<PathBuf> {
        resolved::newest_options_file(&self.path)
    }
}

/// A `rocksdb:` DSN: the directory, the options, the target recorded.
struct RocksDsn {
    path: PathBuf,
    options: RocksOptions,
    target: String,
}

impl RocksDsn {
    /// `rest` is what follows `rocksdb:`: `PATH[?name=value&...]`; the
    /// options files it names are read.
    fn parse(rest: &str) -> Result<RocksDsn> {
        let (path, query) = rest.split_once('?').unwrap_or((rest, ""));
        if path.is_empty() {
            return Err(Error::config("db", "rocksdb: needs a directory (rocksdb:PATH?options)"));
        }
        Ok(RocksDsn {
            options: query.parse::<RocksOptions>()?.with_files()?,
            path: PathBuf::from(crate::connect::dsn::decode(path)),
            target: format!("rocksdb:{rest}"),
        })
    }
}

/// `rocksdb:PATH?options`: the embedded engine, or with `lib=LIBRARY` the
/// RocksDB release that shared library holds.
pub fn open(rest: &str) -> Result<Box<dyn Connector>> {
    let dsn = RocksDsn::parse(rest)?;
    if dsn.options.lib.is_some() {
        return library::LibraryConnector::open(dsn).map(|c| Box::new(c) as Box<dyn Connector>);
    }
    RocksdbConnector::with(dsn).map(|c| Box::new(c) as Box<dyn Connector>)
}

impl Connector for RocksdbConnector {
    fn dbms(&self) -> &'static str {
        "rocksdb"
    }
    fn target(&self) -> String {
        self.target.clone()
    }
    fn version(&self) -> Result<String> {
        resolved::version(&self.path, &self.target)
    }
    fn settings(&self) -> Vec<(String, String)> {
        resolved::settings(&self.dsn)
    }
    fn configuration(&self) -> Result<Vec<Setting>> {
        let cf = self.db.cf_handle(KV_TABLE);
        let property = |name: &str| {
            let cf = cf.as_ref()?;
            self.db.property_value_cf(cf, name).ok().flatten()
        };
        resolved::configuration(&self.path, &self.target, &self.dsn, property)
    }
    fn session(&self) -> Result<Box<dyn crate::connect::Session>> {
        Err(resolved::no_sql_session())
    }
    fn sizes(&self, _tables: &[String]) -> Sizes {
        let live = self.db.cf_handle(KV_TABLE).and_then(|cf| {
            self.db
                .property_int_value_cf(&cf, "rocksdb.live-sst-files-size")
                .ok()
                .flatten()
        });
        resolved::sizes(&self.path, live)
    }
    fn data_path(&self) -> Option<PathBuf> {
        Some(self.path.clone())
    }
    fn kv_session(&self) -> Result<Box<dyn KvSession>> {
        // The thread that opens a session is the one that uses it (ibench's
        // workers); a session looking its family up sets it again.
        self.dsn.perf_level.apply();
        Ok(Box::new(RocksdbSession::new(
            self.db.clone(),
            self.families.clone(),
            self.dsn.writer(),
            self.dsn.perf_level,
            self.opts.clone(),
            self.target.clone(),
        )))
    }
    fn counters(&self, _tables: &[String]) -> Result<Option<Box<dyn ServerCounters>>> {
        Ok(Some(Box::new(stats::RocksdbStats {
            db: self.db.clone(),
            opts: self.opts.clone(),
        })))
    }
    fn engine_counters(&self) -> Option<EngineCounters> {
        stats::engine_counters(&self.db, &self.opts)
    }
    fn kv_only(&self) -> bool {
        true
    }
    fn read_caveat(&self) -> Option<String> {
        resolved::read_caveat(&self.path)
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    /// Options of every kind, in RocksDB's own names and values.
    const EVERY_KIND: &str = "compaction_style=universal\
        &compaction_options_universal={size_ratio=7;min_merge_width=3;max_merge_width=9}\
        &max_bytes_for_level_base=123456789&level0_slowdown_writes_trigger=11\
        &memtable_factory=vector&allow_concurrent_memtable_write=false\
        &bytes_per_sync=1048576&compaction_readahead_size=4194304&use_direct_io_for_flush_and_compaction=false\
        &table.block_size=16384&table.filter_policy=bloomfilter:10:false&block_cache=32M";

    #[test]
    fn any_option_rocksdb_parses_reaches_it_and_an_unknown_one_is_refused_by_name() {
        let dir = tempfile::tempdir().unwrap();
        let c = RocksdbConnector::new(&format!("{}?{EVERY_KIND}", dir.path().display())).unwrap();
        let rows = c.resolved_options().unwrap();
        let cf = "CFOptions kv";
        let table = "TableOptions/BlockBasedTable kv";
        assert_eq!(option(&rows, cf, "max_bytes_for_level_base"), Some("123456789"));
        assert_eq!(option(&rows, cf, "level0_slowdown_writes_trigger"), Some("11"));
        assert!(option(&rows, cf, "memtable_factory")
            .unwrap()
            .contains("id=VectorRepFactory"));
        assert_eq!(option(&rows, cf, "compaction_style"), Some("kCompactionStyleUniversal"));
        let universal = option(&rows, cf, "compaction_options_universal").unwrap();
        for part in ["size_ratio=7", "min_merge_width=3", "max_merge_width=9"] {
            assert!(universal.contains(part), "{universal}");
        }
        assert_eq!(
            option(&rows, "DBOptions", "allow_concurrent_memtable_write"),
            Some("false")
        );
        assert_eq!(option(&rows, "DBOptions", "bytes_per_sync"), Some("1048576"));
        assert_eq!(option(&rows, "DBOptions", "compaction_readahead_size"), Some("4194304"));
        assert_eq!(option(&rows, table, "block_size"), Some("16384"));
        assert!(
            option(&rows, table, "filter_policy").unwrap().contains("bloomfilter"),
            "{rows:?}"
        );
        // The block cache joined the table options: its capacity, read back as a property.
        let config = c.configuration().unwrap();
        let cap = config
            .iter()
            .find(|r| r.name == "block_cache_capacity")
            .map(|r| r.value.clone());
        assert_eq!(cap.as_deref(), Some("33554432"));
        // Data goes in and out through the vector memtable.
        crate::connect::kv_contract::round_trip(c.kv_session().unwrap().as_mut(), KV_TABLE);

        for (bad, named) in [
            ("colour=blue", "colour"),
            ("table.bloom_bitz=10", "bloom_bitz"),
            ("max_bytes_for_level_base=lots", "max_bytes_for_level_base"),
        ] {
            let other = tempfile::tempdir().unwrap();
            let e = RocksdbConnector::new(&format!("{}?{bad}", other.path().display()))
                .err()
                .expect("refused")
                .to_string();
            assert!(
                e.starts_with("invalid db: rocksdb refused the option") && e.contains(named),
                "{bad}: {e}"
            );
        }
    }

    #[test]
    fn an_options_file_round_trips_and_the_dsn_overrides_it() {
        let first = tempfile::tempdir().unwrap();
        let a = RocksdbConnector::new(&format!("{}?{EVERY_KIND}", first.path().display())).unwrap();
        let file = a.options_file().unwrap();
        let copy = first.path().join("published-OPTIONS.ini");
        std::fs::copy(&file, &copy).unwrap();
        let second = tempfile::tempdir().unwrap();
        let b = RocksdbConnector::new(&format!(
            "{}?options_file={}&level0_slowdown_writes_trigger=17",
            second.path().display(),
            copy.display()
        ))
        .unwrap();
        let (ra, rb) = (a.resolved_options().unwrap(), b.resolved_options().unwrap());
        for section in ["CFOptions kv", "TableOptions/BlockBasedTable kv", "DBOptions"] {
            for r in ra.iter().filter(|r| r.source == section) {
                let (s, name) = (r.source.as_str(), r.name.as_str());
                if name == "level0_slowdown_writes_trigger" {
                    assert_eq!(option(&rb, s, name), Some("17"), "the DSN overrides the file");
                } else {
                    assert_eq!(option(&rb, s, name), Some(r.value.as_str()), "{s} {name}");
                }
            }
        }
        let e = RocksdbConnector::new(&format!(
            "{}?options_file=/nonexistent/OPTIONS",
            second.path().display()
        ))
        .err()
        .unwrap()
        .to_string();
        assert!(e.contains("/nonexistent/OPTIONS"), "{e}");
    }

    /// A named option overrides an options file's value as a RocksDB name
    /// does: the DSN's options come after the file's, whichever way they are
    /// written, and a named option changes only its own field.
    #[test]
    fn named_options_override_an_options_file_too() {
        let first = tempfile::tempdir().unwrap();
        let a = RocksdbConnector::new(&format!(
            "{}?compression=snappy&write_buffer_size=4M&compaction_style=universal\
             &compaction_options_universal={{size_ratio=7;max_merge_width=9}}&max_background_jobs=3&num_levels=5",
            first.path().display()
        ))
        .unwrap();
        let universal = option(
            &a.resolved_options().unwrap(),
            "CFOptions default",
            "compaction_options_universal",
        )
        .unwrap()
        .to_string();
        assert!(universal.contains("size_ratio=7;"), "{universal}");
        let copy = first.path().join("published-OPTIONS.ini");
        std::fs::copy(a.options_file().unwrap(), &copy).unwrap();
        let second = tempfile::tempdir().unwrap();
        let b = RocksdbConnector::new(&format!(
            "{}?options_file={}&compression=zstd&write_buffer_size=1M&compression_size_percent=80\
             &max_background_jobs=5&num_levels=6&subcompactions=2",
            second.path().display(),
            copy.display()
        ))
        .unwrap();
        let rows = b.resolved_options().unwrap();
        let cf = "CFOptions kv";
        assert_eq!(option(&rows, cf, "compression"), Some("kZSTD"));
        assert_eq!(option(&rows, cf, "write_buffer_size"), Some("1048576"));
        assert_eq!(option(&rows, cf, "num_levels"), Some("6"));
        assert_eq!(option(&rows, cf, "compaction_style"), Some("kCompactionStyleUniversal"));
        let universal = option(&rows, cf, "compaction_options_universal").unwrap();
        for part in ["compression_size_percent=80", "size_ratio=7", "max_merge_width=9"] {
            assert!(universal.contains(part), "{universal}");
        }
        assert_eq!(option(&rows, "DBOptions", "max_background_jobs"), Some("5"));
        assert_eq!(option(&rows, "DBOptions", "max_subcompactions"), Some("2"));
    }
}
