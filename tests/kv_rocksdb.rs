//! Embedded RocksDB: options reach the engine, its statistics are consistent
//! (write amplification, sizes under compression), and errors are clear.
#![cfg(feature = "rocksdb")]

mod common;

use common::{config, run, step};
use ibench::connect;
use ibench::results::StepRow;
use ibench::results::{RunStatus, StepStatus};
use serde_json::json;

/// fillseq then flush of 200,000 pairs of 100-byte values compressible to
/// 0.5, with `options` in the DSN.
fn fill_and_flush(options: &str) -> (ibench::exec::RunOutcome, tempfile::TempDir) {
    let dir = tempfile::tempdir().unwrap();
    let c = config(json!({
        "preset": "kv-quick",
        "db": format!("rocksdb:{}?{options}", dir.path().join("db").display()),
        "steps": ["fillseq", "flush"],
        "num": 200_000,
        "batch_size": 100,
        "value_size": 100,
        "ratio": 0.5,
    }));
    let out = run(&c, dir.path());
    assert_eq!(out.results.run.status, RunStatus::Ok, "{:?}", out.results.run.error);
    (out, dir)
}

fn engine(s: &StepRow) -> &ibench::metrics::EngineDelta {
    s.engine.as_ref().expect("rocksdb reports engine counters")
}

#[test]
fn write_amplification_is_at_least_one_without_compression() {
    // Universal compaction merges sorted runs by rewriting them (leveled
    // compaction would move fillseq's non-overlapping files down untouched),
    // so every byte is written by a flush and then by compactions.
    let (out, _dir) = fill_and_flush("compaction_style=universal&compression=none&write_buffer_size=1M&wal=on");
    let (fill, flush) = (step(&out, "fillseq"), step(&out, "flush"));
    let user = engine(fill).user_bytes + engine(flush).user_bytes;
    // Keys and values: 200,000 × (16 + 100) bytes, plus each entry's type and
    // lengths and each batch's header (RocksDB counts the write batch).
    assert!((23_200_000..24_500_000).contains(&user), "user bytes {user}");
    assert!(engine(fill).wal_bytes >= 23_200_000, "the WAL got every write");
    let written: u64 = [fill, flush]
        .iter()
        .map(|s| engine(s).flush_bytes + engine(s).compaction_write_bytes)
        .sum();
    let w_amp = written as f64 / user as f64;
    assert!(
        w_amp >= 1.0,
        "w_amp {w_amp}: every byte is flushed and compacted, uncompressed"
    );
    assert!(engine(fill).compaction_write_bytes > 0);
    assert!(engine(fill).compaction_s > 0.0 && engine(fill).compaction_cpu_s > 0.0);
    assert!(
        engine(flush).live_sst_bytes >= 20_000_000,
        "at least the values, uncompressed"
    );
    assert!(engine(flush).files_per_level.iter().sum::<u64>() >= 1);
    assert!(engine(flush).sorted_runs >= 1);
    let largest = engine(flush).largest_run_bytes;
    assert!(
        largest > 0 && largest <= engine(flush).live_sst_bytes,
        "largest run {largest}"
    );
    assert_eq!(fill.rows_per_commit, Some(100));
    assert!(fill.engine.is_some());
}

#[test]
fn size_falls_with_compression() {
    let size = |options: &str| {
        let (out, _dir) = fill_and_flush(options);
        engine(step(&out, "flush")).live_sst_bytes as f64
    };
    let none = size("compression=none");
    for c in ["lz4", "zstd"] {
        let compressed = size(&format!("compression={c}"));
        let ratio = compressed / none;
        // Values compress to 0.5; keys and block overhead a little less.
        assert!((0.45..0.75).contains(&ratio), "{c}: {compressed} / {none} = {ratio}");
    }
}

#[test]
fn options_reach_rocksdb_and_are_recorded() {
    let dir = tempfile::tempdir().unwrap();
    let dsn = format!(
        "rocksdb:{}?compaction_style=universal&compression=lz4&bottommost_compression=zstd&compression_size_percent=80&write_buffer_size=8MB&max_background_jobs=3&subcompactions=2&block_cache=16MB&num_levels=12&wal=off",
        dir.path().join("db").display()
    );
    let connector = connect::open(&dsn).unwrap();
    let conf = connector.configuration().unwrap();
    let get = |name: &str| {
        conf.iter()
            .find(|s| s.name == name && !s.source.contains("default"))
            .map(|s| s.value.clone())
            .unwrap_or_else(|| panic!("no {name} in {conf:?}"))
    };
    assert_eq!(get("compaction_style"), "kCompactionStyleUniversal");
    assert_eq!(get("compression"), "kLZ4Compression");
    assert_eq!(get("bottommost_compression"), "kZSTD");
    assert_eq!(get("write_buffer_size"), "8388608");
    assert_eq!(get("max_background_jobs"), "3");
    assert_eq!(get("max_subcompactions"), "2");
    assert_eq!(get("num_levels"), "12");
    assert!(get("compaction_options_universal").contains("compression_size_percent=80"));
    assert_eq!(
        get("block_cache_capacity"),
        (16 << 20).to_string(),
        "read back as a property"
    );
    assert_eq!(get("disableWAL"), "true");
    drop(connector);

    // A run records the same, and the WAL stays empty with wal=off.
    let c = config(json!({"preset": "kv-quick", "db": dsn, "steps": ["fillseq"], "num": 10_000}));
    let out = run(&c, dir.path());
    assert_eq!(out.results.run.status, RunStatus::Ok, "{:?}", out.results.run.error);
    assert_eq!(out.results.run.dbms, "rocksdb");
    assert!(out.results.run.dbms_version.starts_with(|c: char| c.is_ascii_digit()));
    let recorded = |name: &str| {
        out.results
            .config
            .iter()
            .find(|s| s.scope == "server" && s.name == name && !s.source.contains("default"))
            .map(|s| s.value.clone())
    };
    assert_eq!(
        recorded("compaction_style").as_deref(),
        Some("kCompactionStyleUniversal")
    );
    assert_eq!(engine(step(&out, "fillseq")).wal_bytes, 0);
    let settings: serde_json::Value = serde_json::from_str(&out.results.run.settings).unwrap();
    assert_eq!(settings["compression"], "lz4");
}

#[test]
fn a_steps_own_options_reopen_the_database_for_that_step_alone() {
    let dir = tempfile::tempdir().unwrap();
    let dsn = format!(
        "rocksdb:{}?compaction_style=universal&wal=on",
        dir.path().join("db").display()
    );
    let (bulk, _) = ibench::workload::BENCHMARK_SH_STEP_OPTIONS[0];
    let c = config(json!({
        "preset": "kv-quick", "db": dsn, "num": 20_000, "writes": 5_000, "reads": 5_000, "batch_size": 10,
        "steps": ["fillseq", "overwrite", "readrandom"],
        "step_options": {bulk: ibench::workload::BENCHMARK_SH_STEP_OPTIONS[0].1},
    }));
    let out = run(&c, dir.path());
    assert_eq!(out.results.run.status, RunStatus::Ok, "{:?}", out.results.run.error);
    for s in &out.results.steps {
        assert_eq!(s.status, StepStatus::Ok, "{}: {:?}", s.step, s.error);
    }
    assert_eq!(step(&out, "fillseq").verified, Some(true));
    assert_eq!(step(&out, "overwrite").verified, Some(true));
    // What fillseq loaded is there after the reopen with the run's own options.
    assert_eq!(step(&out, "readrandom").found, Some(5_000));
    // fillseq wrote no WAL; overwrite, reopened with the DSN's wal=on, did.
    assert_eq!(engine(step(&out, "fillseq")).wal_bytes, 0);
    assert!(engine(step(&out, "overwrite")).wal_bytes > 0);
    // The reopened database's options that differ from the run's, recorded per step.
    let recorded = |name: &str| {
        out.results
            .config
            .iter()
            .find(|s| s.scope == "step" && s.name == name)
            .map(|s| s.value.clone())
    };
    assert_eq!(recorded("fillseq.disableWAL").as_deref(), Some("true"));
    assert_eq!(
        recorded("fillseq.allow_concurrent_memtable_write").as_deref(),
        Some("false")
    );
    assert!(
        recorded("fillseq.memtable_factory").is_some_and(|v| v.contains("Vector")),
        "{:?}",
        recorded("fillseq.memtable_factory")
    );
    assert!(
        recorded("overwrite.disableWAL").is_none(),
        "overwrite runs with the run's options"
    );

    // Step options are refused where they cannot apply, naming the parameter.
    for (db, step_options, says) in [
        (
            "sqlite::memory:",
            json!({"fillseq": "wal=off"}),
            "reopen embedded RocksDB",
        ),
        (dsn.as_str(), json!({"l.i0": "wal=off"}), "not a key/value step"),
        (dsn.as_str(), json!({"fillseq": ""}), "no options"),
    ] {
        let mut c = config(json!({"preset": "kv-quick", "db": db, "steps": ["fillseq"]}));
        c.step_options = serde_json::from_value(step_options).unwrap();
        let e = c.check().unwrap_err().to_string();
        assert!(e.contains("step_options") && e.contains(says), "{e}");
    }
    // An option RocksDB refuses ends the step's run with its name.
    let c = config(json!({
        "preset": "kv-quick", "db": dsn, "num": 1000, "steps": ["fillseq", "readrandom"],
        "step_options": {"readrandom": "colour=blue"},
    }));
    let out = run(&c, dir.path());
    assert_eq!(out.results.run.status, RunStatus::Error);
    let e = out.results.run.error.clone().unwrap_or_default();
    assert!(e.contains("step_options") && e.contains("colour"), "{e}");
}

#[test]
fn bad_rocksdb_dsns_and_table_steps_are_clear_errors() {
    let dir = tempfile::tempdir().unwrap();
    let path = dir.path().join("db");
    for (options, says) in [
        ("compression=brotli", "invalid compression"),
        ("write_buffer_size=big", "invalid write_buffer_size"),
        // RocksDB's own parser refuses a name it does not know, naming it.
        ("compactionstyle=universal", "compactionstyle"),
    ] {
        let e = connect::open(&format!("rocksdb:{}?{options}", path.display()))
            .err()
            .expect("an error")
            .to_string();
        assert!(e.contains(says), "{options}: {e}");
    }
    let c = config(json!({"db": format!("rocksdb:{}", path.display()), "steps": ["l.i0"]}));
    let stop = ibench::Stop::new();
    let e = ibench::exec::run(&c, &dir.path().join("out"), &ibench::exec::Silent, &stop)
        .expect_err("refused before the run")
        .to_string();
    assert!(e.starts_with("invalid steps: l.i0 is an Insert Benchmark step"), "{e}");
    assert!(!dir.path().join("out").exists(), "no run directory for a refused run");
}

#[test]
fn key_value_steps_alone_default_to_rocksdb_in_the_run_directory() {
    let dir = tempfile::tempdir().unwrap();
    let c = config(json!({"preset": "kv-quick", "num": 5000, "reads": 500, "writes": 1000}));
    let out = run(&c, dir.path());
    assert_eq!(out.results.run.status, RunStatus::Ok, "{:?}", out.results.run.error);
    assert_eq!(out.results.run.dbms, "rocksdb");
    assert!(out.dir.join("rocksdb").is_dir());
    assert_eq!(step(&out, "readrandom").found, Some(500), "fillseq wrote every key");
    assert_eq!(step(&out, "seekrandom").found, Some(500));
    for s in &out.results.steps {
        assert!(s.engine.is_some(), "{}", s.step);
    }
}

#[test]
fn stall_time_is_at_most_the_step_with_several_writers_and_adds_up_over_its_intervals() {
    // Four writers against a tiny memtable, one background job and low L0
    // triggers: most of the step is stalled. RocksDB counts a stall once per
    // write group (its leader waits; the others queue behind it), so the
    // stall share of the step stays within 100% whatever the writer count.
    let dir = tempfile::tempdir().unwrap();
    let c = config(json!({
        "preset": "kv-quick",
        "db": format!(
            "rocksdb:{}?write_buffer_size=64K&max_write_buffer_number=2&level0_slowdown_writes_trigger=1&level0_stop_writes_trigger=2&max_background_jobs=1&wal=off",
            dir.path().join("db").display()
        ),
        "steps": ["fillrandom"],
        "num": 60_000,
        "threads": 4,
        "value_size": 400,
        "interval_seconds": 0.25,
    }));
    let out = run(&c, dir.path());
    let s = step(&out, "fillrandom");
    let e = engine(s);
    let pct = e.stall_pct(s.elapsed_s).unwrap();
    assert!(
        e.stall_s > 0.1 && pct <= 100.0,
        "stall {} s of {} s: {pct}%",
        e.stall_s,
        s.elapsed_s
    );
    // Per interval: the stall rate (µs per s) and the bytes written, whose
    // sums over the step's intervals are the step's own figures.
    let gauge = |name: &str| -> Vec<(f64, f64)> {
        out.results
            .gauges
            .iter()
            .filter(|(st, g)| st == "fillrandom" && g.name == name)
            .filter_map(|(_, g)| Some((g.length_s, g.value?)))
            .collect()
    };
    let stalls = gauge("stall_micros_per_s");
    assert!(stalls.len() >= 4, "{stalls:?}");
    // RocksDB adds a stall to its counter when the stall ends, so an
    // interval holds the stalls that ended in it: one that began in the
    // interval before can take it past a second per second; the sum cannot
    // pass the step.
    let stalled: f64 = stalls.iter().map(|(len, v)| len * v / 1e6).sum();
    assert!(
        (stalled - e.stall_s).abs() <= 0.05 * e.stall_s + 0.01,
        "{stalled} vs {}",
        e.stall_s
    );
    let flushed: f64 = gauge("flush_bytes_per_s").iter().map(|(len, v)| len * v).sum();
    assert!(
        (flushed - e.flush_bytes as f64).abs() <= 0.05 * e.flush_bytes as f64,
        "{flushed} vs {}",
        e.flush_bytes
    );
    let user: f64 = gauge("user_bytes_per_s").iter().map(|(len, v)| len * v).sum();
    assert!(user > 0.9 * e.user_bytes as f64, "{user} vs {}", e.user_bytes);
    assert!(!gauge("compaction_write_bytes_per_s").is_empty());
}

#[test]
fn a_read_step_on_a_vector_memtable_is_warned_and_one_on_a_skip_list_is_not() {
    // RocksDB sorts a vector memtable that takes writes for every point read
    // and iterator: a user who runs reads on a published fillseq's options
    // waits minutes for what takes a second, so the run says why.
    let reads_warned = |db_options: &str, step_options: serde_json::Value| -> Vec<String> {
        let dir = tempfile::tempdir().unwrap();
        let c = config(json!({
            "db": format!("rocksdb:{}?{db_options}", dir.path().join("db").display()),
            "steps": ["fillseq", "readrandom", "updaterandom", "overwrite"],
            "num": 2000,
            "reads": 200,
            "writes": 200,
            "step_options": step_options,
        }));
        let out = run(&c, dir.path());
        assert_eq!(out.results.run.status, RunStatus::Ok, "{:?}", out.results.run.error);
        out.results
            .run
            .warnings
            .iter()
            .filter(|w| w.contains("the memtable is a vector"))
            .map(|w| w.split(':').next().unwrap().to_string())
            .collect()
    };
    assert_eq!(
        reads_warned("memtable_factory=vector", json!({})),
        ["readrandom", "updaterandom"]
    );
    // benchmark.sh's way: the vector memtable for fillseq only.
    assert!(reads_warned(
        "wal=on",
        json!({"fillseq": "wal=off&memtable_factory=vector&allow_concurrent_memtable_write=false"})
    )
    .is_empty());
}
