//! `rocksdb:PATH?options` — embedded RocksDB (rust-rocksdb), a key/value store.
//!
//! Pairs live in the column family `kv`; a fill step drops and recreates it,
//! so its files go and the options stay. Statistics are on: they give the
//! engine counters of every step (write amplification, stalls, compaction
//! time). The resolved options are RocksDB's own `OPTIONS-*` file, recorded
//! with the run.

mod batch;
mod stats;

use crate::connect::{Connector, KvSession, ServerCounters, Sizes, KV_TABLE};
use crate::error::{Error, Result};
use crate::gen::KvBatch;
use crate::metrics::EngineCounters;
use crate::stop::Stop;
use batch::Edit;
use rocksdb::statistics::{Histogram, Ticker};
use rocksdb::{
    BlockBasedOptions, BoundColumnFamily, Cache, DBWithThreadMode, MultiThreaded, Options, ReadOptions,
    WaitForCompactOptions,
};
use std::path::{Path, PathBuf};
use std::sync::atomic::{AtomicU64, Ordering};
use std::sync::Arc;

type Db = DBWithThreadMode<MultiThreaded>;

/// The DSN options, as given (None: RocksDB's default).
#[derive(Clone, Debug, Default, PartialEq)]
struct DsnOptions {
    block_cache: Option<usize>,
    block_cache_type: CacheKind,
    wal: bool,
    sync: bool,
    /// RocksDB's perf context level on the sessions' threads.
    perf_level: PerfLevel,
    /// The options for RocksDB's own options parser: DBOptions and
    /// ColumnFamilyOptions by RocksDB's names, in the order given (an options
    /// file's where it is given), the named ones translated
    /// (`compression=lz4` as `compression=kLZ4Compression`), so that a later
    /// option overrides an earlier one whichever way each was given.
    raw: Pairs,
    /// Block-based table options (`table.NAME=VALUE`, or an options file's
    /// `[TableOptions/BlockBasedTable ...]` section).
    table: Pairs,
    /// (name, value) as given, for the run's settings.
    given: Vec<(String, String)>,
}

/// The block cache's kind (db_bench `--cache_type`).
#[derive(Clone, Copy, Debug, Default, PartialEq)]
enum CacheKind {
    /// RocksDB's LRU cache: its options parser's only kind, and RocksDB's default.
    #[default]
    Lru,
    /// HyperClockCache with the entry charge estimated as it goes: db_bench's
    /// default (`hyper_clock_cache`), lock-free on lookups.
    HyperClock,
}

/// RocksDB's perf context level (db_bench `--perf_level`): what RocksDB
/// counts and times per thread, per operation, in its thread-local perf
/// context. RocksDB's own default is `EnableCount` (2): a count per key
/// comparison and block read, each a thread-local access, about 300
/// instructions of an overwrite's memtable insert; ibench reads none of
/// them, and db_bench's default is `Disable` (1), so a session's thread
/// disables them unless the DSN asks (`perf_level=2` to `5`).
#[derive(Clone, Copy, Debug, PartialEq)]
struct PerfLevel(rocksdb::perf::PerfStatsLevel);

impl Default for PerfLevel {
    fn default() -> Self {
        PerfLevel(rocksdb::perf::PerfStatsLevel::Disable)
    }
}

impl PerfLevel {
    /// The level's number (db_bench's `--perf_level`).
    fn number(self) -> i32 {
        self.0 as i32
    }

    /// Sets the calling thread's level (RocksDB's is per thread).
    fn apply(self) {
        rocksdb::perf::set_perf_stats(self.0);
    }
}

fn perf_level(name: &str, v: &str) -> Result<PerfLevel> {
    use rocksdb::perf::PerfStatsLevel as L;
    Ok(PerfLevel(match v {
        "1" => L::Disable,
        "2" => L::EnableCount,
        "3" => L::EnableTimeExceptForMutex,
        "4" => L::EnableTimeAndCPUTimeExceptForMutex,
        "5" => L::EnableTime,
        _ => {
            return Err(bad(
                name,
                v,
                "1 (disable, db_bench's default), 2 (counts), 3 (times except mutexes), \
                 4 (and CPU times) or 5 (all times)",
            ))
        }
    }))
}

/// Options as (name, value), in order.
type Pairs = Vec<(String, String)>;

/// The prefix of a block-based table option in the DSN: `table.block_size=16K`.
const TABLE_PREFIX: &str = "table.";

/// RocksDB's options file sections ibench reads: (section prefix, where its options go).
const FILE_SECTIONS: [(&str, FileSection); 3] = [
    ("DBOptions", FileSection::Db),
    ("CFOptions", FileSection::Cf),
    ("TableOptions/BlockBasedTable", FileSection::Table),
];

#[derive(Clone, Copy, Debug, PartialEq)]
enum FileSection {
    Db,
    Cf,
    Table,
}

/// The options of an OPTIONS file (RocksDB's INI, as RocksDB writes it):
/// DBOptions, the `default` column family's CFOptions and its block-based
/// table options (the `kv` family gets them), as (DB and CF options, table
/// options). Other sections and column families are ignored.
fn options_file_options(path: &Path) -> Result<(Pairs, Pairs)> {
    let text = std::fs::read_to_string(path).map_err(|source| Error::Io {
        action: "cannot read the RocksDB options file",
        path: path.to_path_buf(),
        source,
    })?;
    let (mut raw, mut table) = (Vec::new(), Vec::new());
    let mut found = false;
    for (section, name, value) in parse_options_file(&text) {
        let kind = FILE_SECTIONS.iter().find_map(|(prefix, kind)| {
            let rest = section.strip_prefix(prefix)?;
            // Only the default column family's: `CFOptions default`, `TableOptions/BlockBasedTable default`.
            (rest.is_empty() || rest.trim() == "default").then_some(*kind)
        });
        match kind {
            Some(FileSection::Db | FileSection::Cf) => raw.push((name, value)),
            Some(FileSection::Table) => table.push((name, value)),
            None => continue,
        }
        found = true;
    }
    if !found {
        return Err(Error::config(
            "options_file",
            format!(
                "{} has no [DBOptions], [CFOptions \"default\"] or [TableOptions/BlockBasedTable \"default\"] section",
                path.display()
            ),
        ));
    }
    Ok((raw, table))
}

fn bad(name: &str, value: &str, expected: &str) -> Error {
    Error::config(name, format!("{value:?} is not valid; expected {expected}"))
}

/// A compression's name in RocksDB's options syntax: ibench's short names,
/// or RocksDB's own (`kZSTD`), which its parser checks.
fn compression(name: &str, v: &str) -> Result<String> {
    Ok(match v {
        "none" | "no" => "kNoCompression",
        "snappy" => "kSnappyCompression",
        "lz4" => "kLZ4Compression",
        "zstd" => "kZSTD",
        _ if v.starts_with('k') => v,
        _ => return Err(bad(name, v, "none, snappy, lz4, zstd or RocksDB's name (kZSTD, ...)")),
    }
    .to_string())
}

/// A size in bytes (docs/kv.md: `64M`, `64MiB`, `1048576`).
fn size(name: &str, v: &str) -> Result<usize> {
    Ok(crate::connect::dsn::size(name, v)? as usize)
}

fn int<T: std::str::FromStr>(name: &str, v: &str, expected: &str) -> Result<T> {
    v.parse().map_err(|_| bad(name, v, expected))
}

/// A named option of the DSN's own vocabulary as (RocksDB's name, its value
/// in RocksDB's options syntax); None for a name that is not one of them.
fn named(name: &str, v: &str) -> Result<Option<(&'static str, String)>> {
    Ok(Some(match name {
        "compaction_style" => (
            "compaction_style",
            match v {
                "level" | "leveled" => "kCompactionStyleLevel",
                "universal" => "kCompactionStyleUniversal",
                "fifo" => "kCompactionStyleFIFO",
                _ if v.starts_with("kCompactionStyle") => v,
                _ => return Err(bad(name, v, "level, universal or fifo")),
            }
            .to_string(),
        ),
        "compression" => ("compression", compression(name, v)?),
        "compression_per_level" => (
            "compression_per_level",
            v.split([',', ':'])
                .map(|c| compression(name, c))
                .collect::<Result<Vec<_>>>()?
                .join(":"),
        ),
        "bottommost_compression" => ("bottommost_compression", compression(name, v)?),
        // Only this field of the universal options: the others keep their values.
        "compression_size_percent" => (
            "compaction_options_universal",
            format!(
                "{{compression_size_percent={}}}",
                int::<i32>(name, v, "an integer percentage, or -1")?
            ),
        ),
        "write_buffer_size" => ("write_buffer_size", size(name, v)?.to_string()),
        "max_write_buffer_number" => ("max_write_buffer_number", int::<i32>(name, v, "a count")?.to_string()),
        "max_background_jobs" => ("max_background_jobs", int::<i32>(name, v, "a count")?.to_string()),
        "subcompactions" => ("max_subcompactions", int::<u32>(name, v, "a count")?.to_string()),
        "num_levels" => ("num_levels", int::<i32>(name, v, "a count of levels")?.to_string()),
        _ => return Ok(None),
    }))
}

impl DsnOptions {
    fn parse(query: &str) -> Result<DsnOptions> {
        let mut o = DsnOptions {
            wal: true,
            ..DsnOptions::default()
        };
        for (name, v) in crate::connect::dsn::options(query) {
            let (name, v) = (name.as_str(), v.as_str());
            if v.is_empty() {
                return Err(Error::config(
                    "db",
                    format!("rocksdb option {name:?} has no value (name=value)"),
                ));
            }
            match name {
                "block_cache" => o.block_cache = Some(size(name, v)?),
                "block_cache_type" => {
                    o.block_cache_type = match v {
                        "lru" | "lru_cache" => CacheKind::Lru,
                        "hyper_clock" | "hyper_clock_cache" | "auto_hyper_clock_cache" => CacheKind::HyperClock,
                        _ => return Err(bad(name, v, "lru or hyper_clock")),
                    }
                }
                "wal" => o.wal = crate::connect::dsn::switch(name, v)?,
                "sync" => o.sync = crate::connect::dsn::switch(name, v)?,
                "perf_level" => o.perf_level = perf_level(name, v)?,
                "options_file" => {
                    let (raw, table) = options_file_options(Path::new(v))?;
                    // The file first: options given in the DSN override it.
                    o.raw.splice(0..0, raw);
                    o.table.splice(0..0, table);
                }
                _ => match (name.strip_prefix(TABLE_PREFIX), named(name, v)?) {
                    (Some(table), _) => o.table.push((table.to_string(), v.to_string())),
                    (None, Some((rocksdb_name, value))) => o.raw.push((rocksdb_name.to_string(), value)),
                    // Any other name is RocksDB's to accept or refuse (Options::get_options_from_string).
                    (None, None) => o.raw.push((name.to_string(), v.to_string())),
                },
            }
            o.given.push((name.to_string(), v.to_string()));
        }
        if o.sync && !o.wal {
            return Err(Error::config("db", "rocksdb: sync=on needs the WAL (wal=on)"));
        }
        if o.block_cache_type == CacheKind::HyperClock {
            if o.block_cache.is_none() {
                return Err(Error::config(
                    "block_cache_type",
                    "hyper_clock needs the cache's size: block_cache=SIZE",
                ));
            }
            if !o.table.is_empty() {
                // The table options go through RocksDB's options parser,
                // whose block caches are LRU ones.
                return Err(Error::config(
                    "block_cache_type",
                    "hyper_clock cannot be combined with table options (table.NAME or an options file's): \
                     RocksDB's options parser makes LRU block caches only",
                ));
            }
        }
        Ok(o)
    }

    /// What RocksDB's options parser reads, in order: each option as
    /// `name=value`, then the table options as one
    /// `block_based_table_factory={...}`.
    fn parser_pairs(&self) -> Vec<String> {
        let mut parts: Vec<String> = self.raw.iter().map(|(k, v)| format!("{k}={v}")).collect();
        let mut table: Vec<String> = self.table.iter().map(|(k, v)| format!("{k}={v}")).collect();
        if let (Some(bytes), false) = (self.block_cache, table.is_empty()) {
            // One table factory: the block cache joins the other table options.
            table.insert(0, format!("block_cache={bytes}"));
        }
        if !table.is_empty() {
            parts.push(format!("block_based_table_factory={{{}}}", table.join(";")));
        }
        parts
    }

    /// The options of the database and of the `kv` column family: every
    /// option through RocksDB's own options parser, which refuses an unknown
    /// name or a bad value by name. One option per parse: the parser reads a
    /// text into a map, where a name given twice (an options file's
    /// `compaction_options_universal={...}`, then the DSN's) would keep only
    /// the last value whole; parsed in turn, a struct's fields merge and a
    /// later scalar overrides an earlier one.
    fn options(&self) -> Result<Options> {
        let mut opts = self.named_options();
        let pairs = self.parser_pairs();
        for pair in &pairs {
            opts = opts
                .get_options_from_string(pair)
                .map_err(|e| Error::config("db", format!("rocksdb refused the option {pair:?}: {e}")))?;
        }
        if !pairs.is_empty() {
            // What ibench needs of every database, whatever the options say.
            opts.create_if_missing(true);
            opts.create_missing_column_families(true);
            opts.enable_statistics();
        }
        // mergerandom's operator: the last operand wins (db_bench --merge_operator=put).
        opts.set_merge_operator_associative("put", put_merge);
        Ok(opts)
    }

    /// What every database gets, and the block cache when no table option
    /// goes through RocksDB's parser (which makes LRU caches only).
    fn named_options(&self) -> Options {
        let mut opts = Options::default();
        opts.create_if_missing(true);
        opts.create_missing_column_families(true);
        opts.enable_statistics();
        if let (Some(bytes), true) = (self.block_cache, self.table.is_empty()) {
            let mut table = BlockBasedOptions::default();
            table.set_block_cache(&match self.block_cache_type {
                CacheKind::Lru => Cache::new_lru_cache(bytes),
                // 0: the charge per entry estimated as it goes (db_bench's hyper_clock_cache).
                CacheKind::HyperClock => Cache::new_hyper_clock_cache(bytes, 0),
            });
            opts.set_block_based_table_factory(&table);
        }
        opts
    }

    fn writer(&self) -> batch::Writer {
        batch::Writer::new(self.wal, self.sync)
    }
}

/// The RocksDB connector: one database, shared by every session.
pub struct RocksdbConnector {
    db: Arc<Db>,
    /// Bumped whenever a session drops or creates a column family, so every
    /// session looks its family's handle up again.
    families: Arc<AtomicU64>,
    /// Holds the statistics object the database writes to.
    opts: Options,
    dsn: DsnOptions,
    path: PathBuf,
    target: String,
}

fn db_err(target: &str, what: &str, e: impl std::fmt::Display) -> Error {
    Error::database(target, format!("{what}: {e}"))
}

impl RocksdbConnector {
    /// The block cache's kind as RocksDB names it (`LRUCache`,
    /// `AutoHyperClockCache`), read back from its entry statistics.
    fn block_cache_name(&self, cf: &Arc<BoundColumnFamily<'_>>) -> Option<String> {
        let stats = self
            .db
            .property_value_cf(cf, "rocksdb.block-cache-entry-stats")
            .ok()??;
        let rest = stats.strip_prefix("Block cache ")?;
        Some(rest[..rest.find('@')?].to_string())
    }

    /// `rest` is what follows `rocksdb:`: `PATH[?name=value&...]`.
    pub fn new(rest: &str) -> Result<Self> {
        let (path, query) = rest.split_once('?').unwrap_or((rest, ""));
        if path.is_empty() {
            return Err(Error::config("db", "rocksdb: needs a directory (rocksdb:PATH?options)"));
        }
        let target = format!("rocksdb:{rest}");
        let dsn = DsnOptions::parse(query)?;
        let opts = dsn.options()?;
        let path = PathBuf::from(crate::connect::dsn::decode(path));
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

    /// The newest `OPTIONS-*` file: what RocksDB resolved, every option.
    fn options_file(&self) -> Option<PathBuf> {
        let mut files: Vec<(u64, PathBuf)> = std::fs::read_dir(&self.path)
            .ok()?
            .filter_map(|e| e.ok())
            .filter_map(|e| {
                let name = e.file_name().to_string_lossy().to_string();
                let n = name.strip_prefix("OPTIONS-")?.parse().ok()?;
                Some((n, e.path()))
            })
            .collect();
        files.sort();
        files.pop().map(|(_, p)| p)
    }

    /// (section, name, value) of the options file.
    fn resolved_options(&self) -> Result<Vec<(String, String, String)>> {
        let file = self
            .options_file()
            .ok_or_else(|| Error::database(&self.target, "no OPTIONS file in the database directory"))?;
        let text = std::fs::read_to_string(&file).map_err(|source| Error::Io {
            action: "cannot read RocksDB's options",
            path: file.clone(),
            source,
        })?;
        Ok(parse_options_file(&text))
    }
}

/// Parses RocksDB's OPTIONS file (INI) into (section, name, value).
fn parse_options_file(text: &str) -> Vec<(String, String, String)> {
    let mut section = String::new();
    let mut out = Vec::new();
    for line in text.lines().map(str::trim) {
        if line.starts_with('#') || line.is_empty() {
            continue;
        }
        if let Some(s) = line.strip_prefix('[').and_then(|l| l.strip_suffix(']')) {
            section = s.replace('"', "");
        } else if let Some((k, v)) = line.split_once('=') {
            out.push((section.clone(), k.trim().to_string(), v.trim().to_string()));
        }
    }
    out
}

/// An option's value in an options file's rows: (section, name, value).
fn option<'a>(rows: &'a [(String, String, String)], section: &str, name: &str) -> Option<&'a str> {
    rows.iter()
        .find(|(s, k, _)| s == section && k == name)
        .map(|(_, _, v)| v.as_str())
}

/// The largest sorted run of the `kv` column family: every L0 file is a run,
/// every other level one.
fn largest_run(files: &[rocksdb::LiveFile]) -> u64 {
    let mut per_level: Vec<u64> = Vec::new();
    let mut largest_l0 = 0;
    for f in files.iter().filter(|f| f.column_family_name == KV_TABLE) {
        if f.level == 0 {
            largest_l0 = largest_l0.max(f.size as u64);
        } else {
            let l = f.level as usize;
            if per_level.len() <= l {
                per_level.resize(l + 1, 0);
            }
            per_level[l] += f.size as u64;
        }
    }
    per_level.into_iter().chain([largest_l0]).max().unwrap_or(0)
}

fn dir_size(path: &Path) -> u64 {
    std::fs::read_dir(path)
        .map(|d| {
            d.filter_map(|e| e.ok())
                .filter_map(|e| e.metadata().ok())
                .filter(|m| m.is_file())
                .map(|m| m.len())
                .sum()
        })
        .unwrap_or(0)
}

impl Connector for RocksdbConnector {
    fn dbms(&self) -> &'static str {
        "rocksdb"
    }
    fn target(&self) -> String {
        self.target.clone()
    }
    fn version(&self) -> Result<String> {
        let options = self.resolved_options()?;
        Ok(option(&options, "Version", "rocksdb_version")
            .unwrap_or("unknown")
            .to_string())
    }
    fn settings(&self) -> Vec<(String, String)> {
        let d = &self.dsn;
        let mut out = d.given.clone();
        let switch = |on: bool| if on { "on" } else { "off" }.to_string();
        for (name, value) in [
            ("wal", switch(d.wal)),
            ("sync", switch(d.sync)),
            ("statistics", switch(true)),
            ("perf_level", d.perf_level.number().to_string()),
        ] {
            if !out.iter().any(|(k, _)| k == name) {
                out.push((name.into(), value));
            }
        }
        out
    }
    fn configuration(&self) -> Result<Vec<(String, String, String)>> {
        let mut rows: Vec<(String, String, String)> = self
            .resolved_options()?
            .into_iter()
            .filter(|(s, _, _)| s != "CFOptions default" && s != "TableOptions/BlockBasedTable default")
            .map(|(section, k, v)| (k, v, section))
            .collect();
        // Per-write options are not in the OPTIONS file.
        rows.push(("disableWAL".into(), (!self.dsn.wal).to_string(), "WriteOptions".into()));
        rows.push(("sync".into(), self.dsn.sync.to_string(), "WriteOptions".into()));
        if let Some(cf) = self.db.cf_handle(KV_TABLE) {
            if let Ok(Some(cap)) = self.db.property_int_value_cf(&cf, "rocksdb.block-cache-capacity") {
                rows.push(("block_cache_capacity".into(), cap.to_string(), "property".into()));
            }
            if let Some(name) = self.block_cache_name(&cf) {
                rows.push(("block_cache_name".into(), name, "property".into()));
            }
        }
        Ok(rows)
    }
    fn session(&self) -> Result<Box<dyn crate::connect::Session>> {
        Err(Error::config(
            "steps",
            "rocksdb runs the key/value steps only (fillseq, overwrite, readrandom, ...); the Insert Benchmark steps need a SQL database",
        ))
    }
    fn sizes(&self, _tables: &[String]) -> Sizes {
        let tables = self.db.cf_handle(KV_TABLE).and_then(|cf| {
            self.db
                .property_int_value_cf(&cf, "rocksdb.live-sst-files-size")
                .ok()
                .flatten()
        });
        Sizes {
            database: Some(dir_size(&self.path)),
            tables,
            datadir: crate::connect::files_size(&self.path),
            note: None,
        }
    }
    fn data_path(&self) -> Option<PathBuf> {
        Some(self.path.clone())
    }
    fn kv_session(&self) -> Result<Box<dyn KvSession>> {
        // The thread that opens a session is the one that uses it (ibench's
        // workers); a session looking its family up sets it again.
        self.dsn.perf_level.apply();
        Ok(Box::new(RocksdbSession {
            cell: DbCell::new(self.db.clone(), |_| None),
            families: self.families.clone(),
            writer: self.dsn.writer(),
            perf_level: self.dsn.perf_level,
            read: ReadOptions::default(),
            opts: self.opts.clone(),
            target: self.target.clone(),
        }))
    }
    fn counters(&self, _tables: &[String]) -> Result<Option<Box<dyn ServerCounters>>> {
        Ok(Some(Box::new(stats::RocksdbStats {
            db: self.db.clone(),
            opts: self.opts.clone(),
        })))
    }
    fn engine_counters(&self) -> Option<EngineCounters> {
        let o = &self.opts;
        let t = |ticker| o.get_ticker_count(ticker);
        let cf = self.db.cf_handle(KV_TABLE)?;
        let prop = |name: &str| self.db.property_int_value_cf(&cf, name).ok().flatten().unwrap_or(0);
        let levels = self
            .db
            .property_value_cf(&cf, "rocksdb.num-levels")
            .ok()
            .flatten()
            .and_then(|v| v.trim().parse::<usize>().ok())
            .unwrap_or(7);
        Some(EngineCounters {
            user_bytes: t(Ticker::BytesWritten),
            wal_bytes: t(Ticker::WalFileBytes),
            flush_bytes: t(Ticker::FlushWriteBytes),
            compaction_read_bytes: t(Ticker::CompactReadBytes),
            compaction_write_bytes: t(Ticker::CompactWriteBytes),
            stall_us: t(Ticker::StallMicros),
            compaction_us: o.get_histogram_data(Histogram::CompactionTime).sum(),
            compaction_cpu_us: o.get_histogram_data(Histogram::CompactionCpuTime).sum(),
            live_sst_bytes: prop("rocksdb.live-sst-files-size"),
            total_sst_bytes: prop("rocksdb.total-sst-files-size"),
            files_per_level: (0..levels)
                .map(|l| prop(&format!("rocksdb.num-files-at-level{l}")))
                .collect(),
            largest_run_bytes: largest_run(&self.db.live_files().unwrap_or_default()),
        })
    }
    fn kv_only(&self) -> bool {
        true
    }
    fn read_caveat(&self) -> Option<String> {
        let options = self.resolved_options().ok()?;
        let factory = option(&options, &format!("CFOptions {KV_TABLE}"), "memtable_factory")?;
        factory.contains("VectorRepFactory").then(|| {
            "the memtable is a vector (memtable_factory=vector): RocksDB sorts a vector memtable that takes \
             writes for every point read and every iterator, so each read sorts it; benchmark.sh uses it for \
             fillseq only (step_options), and memtable_factory=skip_list is RocksDB's default"
                .to_string()
        })
    }
}

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
struct RocksdbSession {
    cell: DbCell,
    families: Arc<AtomicU64>,
    writer: batch::Writer,
    perf_level: PerfLevel,
    read: ReadOptions,
    opts: Options,
    target: String,
}

/// The put merge operator: the newest operand is the value.
fn put_merge(_key: &[u8], existing: Option<&[u8]>, operands: &rocksdb::MergeOperands) -> Option<Vec<u8>> {
    operands.iter().last().or(existing).map(<[u8]>::to_vec)
}

impl RocksdbSession {
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

    fn db(&self) -> &Db {
        self.cell.borrow_owner()
    }

    /// Makes `table`'s column family the session's: its handle is looked up
    /// by name once, then kept while no session drops or creates a family
    /// (a lookup takes the database's lock and clones an Arc, about 100
    /// instructions: a tenth of a write's client cost).
    #[inline]
    fn look_up(&mut self, table: &str) -> Result<()> {
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
    fn family(&self) -> &Arc<BoundColumnFamily<'_>> {
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
        self.look_up(table)?;
        let cf = self.family();
        self.db().flush_cf(cf).map_err(|e| db_err(&self.target, "flush", e))?;
        Ok(Vec::new())
    }
    fn wait_for_compaction(&mut self, _table: &str, stop: &Stop) -> Result<Vec<String>> {
        // Waits in slices, so a stop request is seen within one.
        let mut opts = WaitForCompactOptions::default();
        opts.set_timeout(200_000);
        while !stop.requested() {
            match self.db().wait_for_compact(&opts) {
                Ok(()) => break,
                Err(e) if e.kind() == rocksdb::ErrorKind::TimedOut => continue,
                Err(e) => return Err(db_err(&self.target, "wait for compaction", e)),
            }
        }
        Ok(Vec::new())
    }
}

#[cfg(test)]
mod tests {
    use super::*;

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

    #[test]
    fn dsn_options_parse_and_bad_ones_name_themselves() {
        let o = DsnOptions::parse(
            "compaction_style=universal&compression=lz4&bottommost_compression=zstd&write_buffer_size=8MB&wal=off&block_cache=1G",
        )
        .unwrap();
        let raw =
            |pairs: &[(&str, &str)]| -> Pairs { pairs.iter().map(|(k, v)| (k.to_string(), v.to_string())).collect() };
        assert_eq!(
            o.raw,
            raw(&[
                ("compaction_style", "kCompactionStyleUniversal"),
                ("compression", "kLZ4Compression"),
                ("bottommost_compression", "kZSTD"),
                ("write_buffer_size", "8388608"),
            ])
        );
        assert_eq!(o.block_cache, Some(1 << 30));
        assert!(!o.wal);
        let o = DsnOptions::parse(
            "compression_per_level=none,none,lz4,zstd&compression_size_percent=80&subcompactions=2&compression=kZSTD",
        )
        .unwrap();
        assert_eq!(
            o.raw,
            raw(&[
                (
                    "compression_per_level",
                    "kNoCompression:kNoCompression:kLZ4Compression:kZSTD"
                ),
                ("compaction_options_universal", "{compression_size_percent=80}"),
                ("max_subcompactions", "2"),
                ("compression", "kZSTD"),
            ])
        );
        for (bad, name) in [
            ("compression=lzma", "invalid compression"),
            ("write_buffer_size=lots", "invalid write_buffer_size"),
            ("wal=off&sync=on", "sync=on needs the WAL"),
            ("compression", "has no value"),
            ("perf_level=0", "invalid perf_level"),
            ("perf_level=6", "invalid perf_level"),
        ] {
            let e = DsnOptions::parse(bad).unwrap_err().to_string();
            assert!(e.contains(name), "{bad}: {e}");
        }
    }

    #[test]
    fn the_block_cache_is_lru_or_db_bench_s_hyper_clock_cache_as_asked() {
        let name_of = |query: &str| {
            let dir = tempfile::tempdir().unwrap();
            let c = RocksdbConnector::new(&format!("{}?{query}", dir.path().display())).unwrap();
            let rows = c.configuration().unwrap();
            let get = |k: &str| rows.iter().find(|r| r.0 == k).map(|r| r.1.clone());
            (get("block_cache_name"), get("block_cache_capacity"))
        };
        let (lru, cap) = name_of("block_cache=8M");
        assert_eq!((lru.as_deref(), cap.as_deref()), (Some("LRUCache"), Some("8388608")));
        assert_eq!(
            name_of("block_cache=8M&block_cache_type=lru_cache").0.as_deref(),
            Some("LRUCache")
        );
        for kind in ["hyper_clock", "hyper_clock_cache", "auto_hyper_clock_cache"] {
            let (name, cap) = name_of(&format!("block_cache=8M&block_cache_type={kind}&compression=lz4"));
            assert_eq!(
                (name.as_deref(), cap.as_deref()),
                (Some("AutoHyperClockCache"), Some("8388608")),
                "{kind}"
            );
        }
        for (bad, says) in [
            ("block_cache_type=clock", "expected lru or hyper_clock"),
            ("block_cache_type=hyper_clock", "needs the cache's size"),
            (
                "block_cache=8M&block_cache_type=hyper_clock&table.block_size=8192",
                "cannot be combined with table options",
            ),
        ] {
            let e = DsnOptions::parse(bad).unwrap_err().to_string();
            assert!(e.contains("block_cache_type") && e.contains(says), "{bad}: {e}");
        }
    }

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
            .find(|(k, _, _)| k == "block_cache_capacity")
            .map(|r| r.1.clone());
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
            for (s, name, value) in ra.iter().filter(|(s, _, _)| s == section) {
                if name == "level0_slowdown_writes_trigger" {
                    assert_eq!(option(&rb, s, name), Some("17"), "the DSN overrides the file");
                } else {
                    assert_eq!(option(&rb, s, name), Some(value.as_str()), "{s} {name}");
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

    #[test]
    fn the_options_file_parses_into_sections() {
        let rows = parse_options_file(
            "[Version]\n  rocksdb_version=10.4.2\n# c\n[CFOptions \"kv\"]\n  compression=kLZ4Compression\n",
        );
        assert_eq!(rows[0], ("Version".into(), "rocksdb_version".into(), "10.4.2".into()));
        assert_eq!(
            rows[1],
            ("CFOptions kv".into(), "compression".into(), "kLZ4Compression".into())
        );
    }
}
