//! Presets: named partial overlays of the defaults (which are `quick`'s),
//! and the compat bundle's choices.

use super::choices::{Compat, DataMode, MaintenanceStyle, Statements};
use super::config::Overrides;
use super::step::Step;
use crate::error::{Error, Result};

/// The preset names, smallest first.
pub const PRESETS: [&str; 12] = [
    "quick",
    "small-1",
    "small-4",
    "large-12-cpu",
    "large-12-io",
    "kv-quick",
    "universal-compression",
    "rocksdb-releases",
    "sysbench-quick",
    "sysbench-small",
    "sysbench-large-cpu",
    "sysbench-large-io",
];

/// The db_bench flags benchmark.sh passes per step, where they differ from
/// ibench's defaults (the WAL on, no sync, a skip-list memtable with
/// concurrent writes), as RocksDB options: its fillseq loads with the WAL
/// disabled into a vector memtable without concurrent memtable writes
/// (`--disable_wal=1 --memtablerep=vector
/// --allow_concurrent_memtable_write=false`).
pub const BENCHMARK_SH_STEP_OPTIONS: [(&str, &str); 1] = [(
    "fillseq",
    "wal=off&memtable_factory=vector&allow_concurrent_memtable_write=false",
)];

/// Preset `name` as the parameters it sets over the defaults.
pub fn overrides(name: &str) -> Result<Overrides> {
    let mut o = match name {
        "quick" => Overrides::default(),
        "small-1" => published(1, 30_000_000, 40_000_000, 10_000_000),
        "small-4" => published(4, 8_000_000, 10_000_000, 2_500_000),
        "large-12-cpu" => published(12, 10_000_000, 16_000_000, 4_000_000),
        "large-12-io" => published(12, 300_000_000, 4_000_000, 1_000_000),
        "kv-quick" => kv_quick(),
        "universal-compression" => universal_compression(),
        "rocksdb-releases" => rocksdb_releases(),
        "sysbench-quick" => sysbench_quick(),
        "sysbench-small" => sysbench_published(1, 1, 50_000_000),
        "sysbench-large-cpu" => sysbench_published(40, 8, 10_000_000),
        "sysbench-large-io" => sysbench_published(40, 8, 250_000_000),
        _ => {
            return Err(Error::config(
                super::param!(preset),
                format!("unknown preset {name:?}; expected one of {}", PRESETS.join(", ")),
            ))
        }
    };
    o.preset = Some(name.into());
    Ok(o)
}

/// The published reports' sizes (reference.md §1): clients, and rows per
/// client of l.i0, l.i1 and l.i2; 1800-second q steps and the reference's
/// wait. Whoever picks them wants results that stand beside the published
/// ones, so they run the reference client's workload (`compat = iibench`)
/// unless the user chooses otherwise.
fn published(clients: u32, l_i0: u64, l_i1: u64, l_i2: u64) -> Overrides {
    Overrides {
        compat: Some(Compat::Iibench),
        clients: Some(clients),
        rows_l_i0: Some(l_i0),
        rows_l_i1: Some(l_i1),
        rows_l_i2: Some(l_i2),
        query_seconds: Some(1800.0),
        wait_seconds: Some(None),
        ..Overrides::default()
    }
}

/// `kv-quick`: every key/value step, 100,000 keys, seconds.
fn kv_quick() -> Overrides {
    Overrides {
        num: Some(100_000),
        steps: Some(steps(&[
            "fillseq",
            "overwrite",
            "readrandom",
            "seekrandom",
            "readwhilewriting",
            "flush",
            "waitforcompaction",
        ])),
        ..Overrides::default()
    }
}

/// [`BENCHMARK_SH_STEP_OPTIONS`] as the `step_options` parameter's value.
fn benchmark_sh_step_options() -> std::collections::BTreeMap<String, String> {
    BENCHMARK_SH_STEP_OPTIONS
        .iter()
        .map(|(step, options)| (step.to_string(), options.to_string()))
        .collect()
}

/// `universal-compression`: the seeds' sequence at 2M keys of 400-byte
/// values compressible to 0.5, the steps as benchmark.sh runs them
/// (fillseq without the WAL).
fn universal_compression() -> Overrides {
    Overrides {
        step_options: Some(benchmark_sh_step_options()),
        num: Some(2_000_000),
        value_size: Some([400, 400]),
        // db_bench's values: the seed's compressed sizes and zstd's cost.
        value_alphabet: Some(crate::gen::Alphabet::Printable),
        overwritesome_writes: Some(Some(200_000)),
        duration: Some(Some(60.0)),
        steps: Some(steps(&[
            "fillseq",
            "overwritesome",
            "waitforcompaction",
            "overwriteandwait",
        ])),
        ..Overrides::default()
    }
}

/// `rocksdb-releases`: the sequence of the published comparisons of RocksDB
/// releases (benchmark.sh's steps as their driver script orders them: the
/// load, the read-only steps, reads beside a writer, then overwrite until
/// compaction ends), scaled to a small server: 1M keys, 20 s per timed step,
/// fillseq as benchmark.sh runs it (no WAL, a vector memtable).
fn rocksdb_releases() -> Overrides {
    Overrides {
        step_options: Some(benchmark_sh_step_options()),
        num: Some(1_000_000),
        duration: Some(Some(20.0)),
        steps: Some(steps(&[
            "fillseq",
            "revrange",
            "fwdrange",
            "readrandom",
            "multireadrandom",
            "readwhilewriting",
            "overwriteandwait",
        ])),
        ..Overrides::default()
    }
}

/// `sysbench-quick`: the whole current suite on one small table, a second
/// per microbenchmark and per pause, its series in quarter seconds (so a
/// comparison of two runs has intervals from their series).
fn sysbench_quick() -> Overrides {
    Overrides {
        steps: Some(steps(&super::sysbench::SUITE)),
        interval_seconds: Some(0.25),
        ..Overrides::default()
    }
}

/// The sysbench suite at the published sizes (research/sysbench.md §3):
/// `clients` connections on `tables` tables of `rows` rows; reads 600 s,
/// writes and inserts 900 s, the scan warm-ups 60 s, a 5-s warm-up before
/// each, the pauses' published length.
fn sysbench_published(clients: u32, tables: u32, rows: u64) -> Overrides {
    Overrides {
        steps: Some(steps(&super::sysbench::SUITE)),
        clients: Some(clients),
        tables: Some(tables),
        table_size: Some(rows),
        read_seconds: Some(600.0),
        write_seconds: Some(900.0),
        insert_seconds: Some(900.0),
        scan_warm_seconds: Some(60.0),
        warmup_seconds: Some(5.0),
        postwrite_seconds: Some(None),
        ..Overrides::default()
    }
}

fn steps(names: &[&str]) -> Vec<Step> {
    names.iter().map(|n| n.parse().expect("a known step")).collect()
}

impl Compat {
    /// The choices this bundle makes.
    pub fn bundle(self) -> Overrides {
        match self {
            Compat::Ibench => Overrides::default(),
            Compat::Iibench => Overrides {
                server_keys: Some(true),
                statements: Some(Statements::Literal),
                data: Some(DataMode::Iibench),
                lx_rows: Some(100),
                maintenance: Some(MaintenanceStyle::Iibench),
                ..Overrides::default()
            },
        }
    }
}
