//! The options of a `rocksdb:PATH?options` DSN, parsed without I/O
//! (`RocksOptions: FromStr`), the options files they name read apart
//! ([`RocksOptions::with_files`]), and RocksDB's `OPTIONS` files read as
//! settings: what RocksDB resolved, recorded with the run.

use crate::connect::ini::{self, Line};
use crate::error::{Error, Result};
use crate::metrics::Setting;
use rocksdb::{BlockBasedOptions, Cache, Options};
use std::path::{Path, PathBuf};
use std::str::FromStr;

/// The DSN options, as given (None: RocksDB's default).
#[derive(Clone, Debug, Default, PartialEq)]
pub(super) struct RocksOptions {
    pub(super) block_cache: Option<usize>,
    block_cache_type: CacheKind,
    pub(super) wal: bool,
    pub(super) sync: bool,
    /// RocksDB's perf context level on the sessions' threads.
    pub(super) perf_level: PerfLevel,
    /// The options for RocksDB's own options parser: DBOptions and
    /// ColumnFamilyOptions by RocksDB's names, in the order given (an options
    /// file's where it is given), the named ones translated
    /// (`compression=lz4` as `compression=kLZ4Compression`), so that a later
    /// option overrides an earlier one whichever way each was given.
    raw: Pairs,
    /// Block-based table options (`table.NAME=VALUE`, or an options file's
    /// `[TableOptions/BlockBasedTable ...]` section).
    table: Pairs,
    /// The options files named (`options_file=PATH`), read by
    /// [`RocksOptions::with_files`].
    files: Vec<PathBuf>,
    /// (name, value) as given, for the run's settings.
    pub(super) given: Vec<(String, String)>,
    /// A RocksDB release's shared library to load instead of the embedded
    /// engine (`lib=PATH`, [`super::library`]).
    pub(super) lib: Option<PathBuf>,
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
pub(super) struct PerfLevel(rocksdb::perf::PerfStatsLevel);

impl Default for PerfLevel {
    fn default() -> Self {
        PerfLevel(rocksdb::perf::PerfStatsLevel::Disable)
    }
}

impl PerfLevel {
    /// The level's number (db_bench's `--perf_level`).
    pub(super) fn number(self) -> i32 {
        self.0 as i32
    }

    /// Sets the calling thread's level (RocksDB's is per thread).
    pub(super) fn apply(self) {
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
    for s in read_options_file(&text) {
        let kind = FILE_SECTIONS.iter().find_map(|(prefix, kind)| {
            let rest = s.source.strip_prefix(prefix)?;
            // Only the default column family's: `CFOptions default`, `TableOptions/BlockBasedTable default`.
            (rest.is_empty() || rest.trim() == "default").then_some(*kind)
        });
        match kind {
            Some(FileSection::Db | FileSection::Cf) => raw.push((s.name, s.value)),
            Some(FileSection::Table) => table.push((s.name, s.value)),
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

impl FromStr for RocksOptions {
    type Err = Error;

    /// The options of the DSN's query (`name=value&...`), checked; the
    /// options files they name are read apart, by [`RocksOptions::with_files`].
    fn from_str(query: &str) -> Result<RocksOptions> {
        let mut o = RocksOptions {
            wal: true,
            ..RocksOptions::default()
        };
        for (name, v) in crate::connect::dsn::options(query) {
            if v.is_empty() {
                return Err(Error::config(
                    "db",
                    format!("rocksdb option {name:?} has no value (name=value)"),
                ));
            }
            o.set(&name, &v)?;
            o.given.push((name, v));
        }
        if o.sync && !o.wal {
            return Err(Error::config("db", "rocksdb: sync=on needs the WAL (wal=on)"));
        }
        o.check_cache()?;
        Ok(o)
    }
}

impl RocksOptions {
    /// Takes one option of the DSN.
    fn set(&mut self, name: &str, v: &str) -> Result<()> {
        match name {
            "block_cache" => self.block_cache = Some(size(name, v)?),
            "block_cache_type" => {
                self.block_cache_type = match v {
                    "lru" | "lru_cache" => CacheKind::Lru,
                    "hyper_clock" | "hyper_clock_cache" | "auto_hyper_clock_cache" => CacheKind::HyperClock,
                    _ => return Err(bad(name, v, "lru or hyper_clock")),
                }
            }
            "wal" => self.wal = crate::connect::dsn::switch(name, v)?,
            "sync" => self.sync = crate::connect::dsn::switch(name, v)?,
            "perf_level" => self.perf_level = perf_level(name, v)?,
            "options_file" => self.files.push(PathBuf::from(v)),
            "lib" => self.lib = Some(PathBuf::from(v)),
            _ => match (name.strip_prefix(TABLE_PREFIX), named(name, v)?) {
                (Some(table), _) => self.table.push((table.to_string(), v.to_string())),
                (None, Some((rocksdb_name, value))) => self.raw.push((rocksdb_name.to_string(), value)),
                // Any other name is RocksDB's to accept or refuse (Options::get_options_from_string).
                (None, None) => self.raw.push((name.to_string(), v.to_string())),
            },
        }
        Ok(())
    }

    /// The options of the options files named put first, so that the
    /// DSN's own override them (each file before those named earlier).
    pub(super) fn with_files(mut self) -> Result<RocksOptions> {
        for file in std::mem::take(&mut self.files) {
            let (raw, table) = options_file_options(&file)?;
            self.raw.splice(0..0, raw);
            self.table.splice(0..0, table);
        }
        self.check_cache()?;
        Ok(self)
    }

    /// A HyperClockCache needs its size, and no table option (RocksDB's
    /// options parser, which the table options go through, makes LRU block
    /// caches only).
    fn check_cache(&self) -> Result<()> {
        if self.block_cache_type != CacheKind::HyperClock {
            return Ok(());
        }
        if self.block_cache.is_none() {
            return Err(Error::config(
                "block_cache_type",
                "hyper_clock needs the cache's size: block_cache=SIZE",
            ));
        }
        if !self.table.is_empty() {
            return Err(Error::config(
                "block_cache_type",
                "hyper_clock cannot be combined with table options (table.NAME or an options file's): \
                 RocksDB's options parser makes LRU block caches only",
            ));
        }
        Ok(())
    }

    /// What RocksDB's options parser reads, in order: each option as
    /// `name=value`, then the table options as one
    /// `block_based_table_factory={...}`.
    fn parser_pairs(&self) -> Vec<String> {
        self.pairs(false)
    }

    /// What a loaded release's options parser reads ([`super::library`]):
    /// as [`RocksOptions::parser_pairs`], an LRU block cache always among
    /// the table options (the C API has no other way to an LRU cache's
    /// size that every release keeps); a HyperClockCache is
    /// [`RocksOptions::hyper_clock_cache`]'s.
    pub(super) fn library_pairs(&self) -> Vec<String> {
        self.pairs(self.block_cache_type == CacheKind::Lru)
    }

    /// The bytes of a HyperClockCache the DSN asks for (None: an LRU cache or none).
    pub(super) fn hyper_clock_cache(&self) -> Option<usize> {
        (self.block_cache_type == CacheKind::HyperClock)
            .then_some(self.block_cache)
            .flatten()
    }

    /// The parser's pairs; `cache_alone` puts the block cache among the
    /// table options even when no other table option is given.
    fn pairs(&self, cache_alone: bool) -> Vec<String> {
        let mut parts: Vec<String> = self.raw.iter().map(|(k, v)| format!("{k}={v}")).collect();
        let mut table: Vec<String> = self.table.iter().map(|(k, v)| format!("{k}={v}")).collect();
        if let (Some(bytes), true) = (self.block_cache, cache_alone || !table.is_empty()) {
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
    pub(super) fn options(&self) -> Result<Options> {
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

    /// The writer of a session's batches, with the WAL and sync as asked.
    pub(super) fn writer(&self) -> super::batch::Writer {
        super::batch::Writer::new(self.wal, self.sync)
    }
}

/// RocksDB's OPTIONS file (INI) as settings: each option's section
/// (quotes removed: `CFOptions kv`) is its source.
pub(super) fn read_options_file(text: &str) -> Vec<Setting> {
    let mut section = String::new();
    let mut out = Vec::new();
    for (_, line) in ini::lines(text, ini::Dialect::default()) {
        match line {
            Line::Group(s) => section = s.replace('"', ""),
            Line::Entry(name, Some(value)) => out.push(Setting::server(name, value, section.as_str())),
            _ => {}
        }
    }
    out
}

/// An option's value among an options file's settings: `name` in `section`.
pub(super) fn option<'a>(rows: &'a [Setting], section: &str, name: &str) -> Option<&'a str> {
    rows.iter()
        .find(|s| s.source == section && s.name == name)
        .map(|s| s.value.as_str())
}

/// The put merge operator: the newest operand is the value.
fn put_merge(_key: &[u8], existing: Option<&[u8]>, operands: &rocksdb::MergeOperands) -> Option<Vec<u8>> {
    operands.iter().last().or(existing).map(<[u8]>::to_vec)
}

#[cfg(test)]
mod tests {
    use super::super::RocksdbConnector;
    use super::*;
    use crate::connect::Connector;

    #[test]
    fn dsn_options_parse_and_bad_ones_name_themselves() {
        let o = RocksOptions::from_str(
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
        let o = RocksOptions::from_str(
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
            let e = RocksOptions::from_str(bad).unwrap_err().to_string();
            assert!(e.contains(name), "{bad}: {e}");
        }
    }

    #[test]
    fn the_block_cache_is_lru_or_db_bench_s_hyper_clock_cache_as_asked() {
        let name_of = |query: &str| {
            let dir = tempfile::tempdir().unwrap();
            let c = RocksdbConnector::new(&format!("{}?{query}", dir.path().display())).unwrap();
            let rows = c.configuration().unwrap();
            let get = |k: &str| rows.iter().find(|r| r.name == k).map(|r| r.value.clone());
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
            let e = RocksOptions::from_str(bad).unwrap_err().to_string();
            assert!(e.contains("block_cache_type") && e.contains(says), "{bad}: {e}");
        }
    }

    #[test]
    fn the_options_file_parses_into_sections() {
        let rows = read_options_file(
            "[Version]\n  rocksdb_version=10.4.2\n# c\n[CFOptions \"kv\"]\n  compression=kLZ4Compression\n",
        );
        assert_eq!(rows[0], Setting::server("rocksdb_version", "10.4.2", "Version"));
        assert_eq!(
            rows[1],
            Setting::server("compression", "kLZ4Compression", "CFOptions kv")
        );
        assert_eq!(option(&rows, "CFOptions kv", "compression"), Some("kLZ4Compression"));
    }
}
