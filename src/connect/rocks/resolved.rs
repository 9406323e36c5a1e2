//! What a RocksDB database resolved, read the same way whichever way in
//! (embedded or a loaded release, `library/`): its newest `OPTIONS` file
//! (every option, and the release's version), the run's settings and
//! configuration rows, the read caveat of a vector memtable, and sizes.

use super::options::{option, read_options_file, RocksOptions};
use crate::connect::{Sizes, KV_TABLE};
use crate::error::{Error, Result};
use crate::metrics::Setting;
use std::path::{Path, PathBuf};

/// The newest `OPTIONS-*` file in `dir`: what RocksDB resolved, every option.
pub(super) fn newest_options_file(dir: &Path) -> Option<PathBuf> {
    let mut files: Vec<(u64, PathBuf)> = std::fs::read_dir(dir)
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

/// The newest options file's settings, each with its section as the source.
pub(super) fn options(dir: &Path, target: &str) -> Result<Vec<Setting>> {
    let file =
        newest_options_file(dir).ok_or_else(|| Error::database(target, "no OPTIONS file in the database directory"))?;
    let text = std::fs::read_to_string(&file).map_err(|source| Error::Io {
        action: "cannot read RocksDB's options",
        path: file.clone(),
        source,
    })?;
    Ok(read_options_file(&text))
}

/// The release that wrote the options file.
pub(super) fn version(dir: &Path, target: &str) -> Result<String> {
    Ok(option(&options(dir, target)?, "Version", "rocksdb_version")
        .unwrap_or("unknown")
        .to_string())
}

/// The run's settings: the DSN's options as given, and the switches that
/// were not given at their values.
pub(super) fn settings(d: &RocksOptions) -> Vec<(String, String)> {
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

/// The configuration rows: the options file's (defaults of the `default`
/// family left out), the per-write options, and the block cache read back
/// from the `kv` family's properties (`property` reads one by name).
pub(super) fn configuration(
    dir: &Path,
    target: &str,
    dsn: &RocksOptions,
    property: impl Fn(&str) -> Option<String>,
) -> Result<Vec<Setting>> {
    let mut rows: Vec<Setting> = options(dir, target)?
        .into_iter()
        .filter(|s| s.source != "CFOptions default" && s.source != "TableOptions/BlockBasedTable default")
        .collect();
    // Per-write options are not in the OPTIONS file.
    rows.push(Setting::server("disableWAL", (!dsn.wal).to_string(), "WriteOptions"));
    rows.push(Setting::server("sync", dsn.sync.to_string(), "WriteOptions"));
    if let Some(cap) = property("rocksdb.block-cache-capacity") {
        rows.push(Setting::server("block_cache_capacity", cap.trim(), "property"));
    }
    if let Some(name) = property("rocksdb.block-cache-entry-stats").and_then(|s| block_cache_name(&s)) {
        rows.push(Setting::server("block_cache_name", name, "property"));
    }
    Ok(rows)
}

/// The block cache's kind as RocksDB names it (`LRUCache`,
/// `AutoHyperClockCache`), from its entry statistics' text.
fn block_cache_name(entry_stats: &str) -> Option<String> {
    let rest = entry_stats.strip_prefix("Block cache ")?;
    Some(rest[..rest.find('@')?].to_string())
}

/// RocksDB runs no SQL session.
pub(super) fn no_sql_session() -> Error {
    Error::config(
        "steps",
        "rocksdb runs the key/value steps only (fillseq, overwrite, readrandom, ...); the Insert Benchmark steps need a SQL database",
    )
}

/// The size of the files directly in `path`.
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

/// The database's sizes: its directory, and the `kv` family's live SST files.
pub(super) fn sizes(dir: &Path, live_sst_bytes: Option<u64>) -> Sizes {
    Sizes {
        database: Some(dir_size(dir)),
        tables: live_sst_bytes,
        datadir: crate::connect::files_size(dir),
        note: None,
    }
}

/// Why reads are slow with a vector memtable, when the `kv` family has one.
pub(super) fn read_caveat(dir: &Path) -> Option<String> {
    let options = options(dir, "").ok()?;
    let factory = option(&options, &format!("CFOptions {KV_TABLE}"), "memtable_factory")?;
    factory.contains("VectorRepFactory").then(|| {
        "the memtable is a vector (memtable_factory=vector): RocksDB sorts a vector memtable that takes \
         writes for every point read and every iterator, so each read sorts it; benchmark.sh uses it for \
         fillseq only (step_options), and memtable_factory=skip_list is RocksDB's default"
            .to_string()
    })
}
