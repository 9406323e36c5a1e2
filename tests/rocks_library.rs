//! A RocksDB release loaded at run time (`rocksdb:PATH?lib=LIBRARY`):
//! Debian's librocksdb 7.8 (installed by .ci/services) runs every
//! key/value step with the embedded engine's results, and bad libraries,
//! options and databases are refused by name.
#![cfg(feature = "rocksdb")]

mod common;

use common::{config, run, step};
use ibench::connect;
use ibench::results::{RunStatus, StepStatus};
use serde_json::json;
use std::path::{Path, PathBuf};

/// Debian's librocksdb 7.8; None (skipped) when absent outside CI, a
/// failure in CI.
fn system_7_8() -> Option<PathBuf> {
    let found = std::fs::read_dir("/usr/lib/x86_64-linux-gnu")
        .into_iter()
        .chain(std::fs::read_dir("/usr/lib/aarch64-linux-gnu"))
        .flatten()
        .flatten()
        .map(|e| e.path())
        .find(|p| {
            p.file_name()
                .is_some_and(|n| n.to_string_lossy().starts_with("librocksdb.so.7.8"))
        });
    common::reachable(
        "the system's librocksdb.so.7.8 (apt-get install librocksdb7.8)",
        found.is_some(),
    );
    found
}

/// Every key/value step, fills first and deletes last, small.
const EVERY_STEP: [&str; 20] = [
    "fillrandom",
    "filluniquerandom",
    "fillseq",
    "overwrite",
    "overwritesome",
    "updaterandom",
    "mergerandom",
    "readrandom",
    "multireadrandom",
    "seekrandom",
    "readseq",
    "readreverse",
    "fwdrange",
    "revrange",
    "readwhilewriting",
    "flush",
    "waitforcompaction",
    "overwriteandwait",
    "deleterandom",
    "deleteseq",
];

/// [`EVERY_STEP`] on `db`.
fn every_step(db: &str, out: &Path) -> ibench::exec::RunOutcome {
    let c = config(json!({
        "preset": "kv-quick", "db": db, "steps": EVERY_STEP, "num": 20_000, "writes": 4_000, "reads": 4_000,
        "batch_size": 10, "seed": 7,
    }));
    run(&c, out)
}

/// The column names of every result file of a run directory, by file.
fn schemas(dir: &Path) -> Vec<(String, Vec<String>)> {
    use parquet::file::reader::{FileReader, SerializedFileReader};
    let mut out: Vec<(String, Vec<String>)> = std::fs::read_dir(dir)
        .unwrap()
        .flatten()
        .filter(|e| e.path().extension().is_some_and(|x| x == "parquet"))
        .map(|e| {
            let reader = SerializedFileReader::new(std::fs::File::open(e.path()).unwrap()).unwrap();
            let fields = reader.metadata().file_metadata().schema().get_fields();
            let names = fields.iter().map(|f| f.name().to_string()).collect();
            (e.file_name().to_string_lossy().into_owned(), names)
        })
        .collect();
    out.sort();
    out
}

#[test]
fn every_key_value_step_runs_on_the_system_s_7_8_with_the_embedded_engine_s_results() {
    let Some(lib) = system_7_8() else { return };
    let dir = tempfile::tempdir().unwrap();
    let loaded = every_step(
        &format!(
            "rocksdb:{}?lib={}&compression=lz4",
            dir.path().join("db78").display(),
            lib.display()
        ),
        &dir.path().join("r78"),
    );
    assert_eq!(
        loaded.results.run.status,
        RunStatus::Ok,
        "{:?}",
        loaded.results.run.error
    );
    assert_eq!(loaded.results.run.dbms, "rocksdb");
    assert!(
        loaded.results.run.dbms_version.starts_with("7.8."),
        "{}",
        loaded.results.run.dbms_version
    );
    for s in &loaded.results.steps {
        assert_eq!(s.status, StepStatus::Ok, "{}: {:?}", s.step, s.error);
        assert_ne!(s.verified, Some(false), "{}", s.step);
    }
    assert_eq!(step(&loaded, "fillseq").verified, Some(true));
    assert_eq!(step(&loaded, "readrandom").found, Some(4_000));
    let fill = step(&loaded, "fillseq").engine.as_ref().expect("engine counters");
    assert!(fill.user_bytes > 20_000 * 16 && fill.wal_bytes > 0, "{fill:?}");
    // The library as loaded, and the release's own resolved options.
    let recorded = |name: &str| common::recorded_setting(&dir.path().join("r78"), name);
    assert_eq!(
        recorded("library").as_deref(),
        Some(std::fs::canonicalize(&lib).unwrap().to_str().unwrap())
    );
    assert_eq!(recorded("compression").as_deref(), Some("kLZ4Compression"));
    let settings: serde_json::Value = serde_json::from_str(&loaded.results.run.settings).unwrap();
    assert_eq!(settings["lib"], lib.display().to_string());

    // The embedded engine's run of the same steps writes the same files with the same columns.
    let embedded = every_step(
        &format!("rocksdb:{}?compression=lz4", dir.path().join("db11").display()),
        &dir.path().join("r11"),
    );
    assert_eq!(
        embedded.results.run.status,
        RunStatus::Ok,
        "{:?}",
        embedded.results.run.error
    );
    let steps = |o: &ibench::exec::RunOutcome| o.results.steps.iter().map(|s| s.step.clone()).collect::<Vec<_>>();
    assert_eq!(steps(&loaded), steps(&embedded));
    assert_eq!(schemas(&loaded.dir), schemas(&embedded.dir));
    // The same keys were read and found.
    for name in ["readrandom", "multireadrandom", "seekrandom"] {
        assert_eq!(step(&loaded, name).found, step(&embedded, name).found, "{name}");
    }
}

#[test]
fn bad_libraries_are_refused_by_name_before_any_step() {
    let dir = tempfile::tempdir().unwrap();
    let db = dir.path().join("db");
    let refused = |lib: &Path| {
        connect::open(&format!("rocksdb:{}?lib={}", db.display(), lib.display()))
            .err()
            .expect("refused")
            .to_string()
    };
    let text = dir.path().join("librocksdb.so");
    std::fs::write(&text, "#!/bin/sh\necho not a library, just text long enough\n").unwrap();
    let e = refused(&text);
    assert!(e.contains("librocksdb.so: not a shared library (no ELF header"), "{e}");
    // A shared library, but not RocksDB's.
    let libz = ["/usr/lib/x86_64-linux-gnu/libz.so.1", "/lib/x86_64-linux-gnu/libz.so.1"]
        .into_iter()
        .map(PathBuf::from)
        .find(|p| p.exists());
    if let Some(libz) = libz {
        let e = refused(&libz);
        assert!(e.contains("not a RocksDB library: it has no rocksdb_open"), "{e}");
    }
    let e = refused(&dir.path().join("nowhere.so"));
    assert!(e.contains("nowhere.so: cannot read it"), "{e}");
    // Nothing was created where the database would be.
    assert!(!db.exists());
}

#[test]
fn a_release_too_old_for_an_option_names_the_option_and_itself() {
    let Some(lib) = system_7_8() else { return };
    let dir = tempfile::tempdir().unwrap();
    let open = |options: &str| {
        connect::open(&format!(
            "rocksdb:{}?lib={}&{options}",
            dir.path().join("db").display(),
            lib.display()
        ))
    };
    // DBOptions::daily_offpeak_time_utc arrived in RocksDB 8.9.
    let e = open("daily_offpeak_time_utc=04:00-08:00")
        .err()
        .expect("refused")
        .to_string();
    assert!(
        e.contains("RocksDB 7.8.") && e.contains("refused the option \"daily_offpeak_time_utc=04:00-08:00\""),
        "{e}"
    );
    // The embedded release takes it.
    let embedded = connect::open(&format!(
        "rocksdb:{}?daily_offpeak_time_utc=04:00-08:00",
        dir.path().join("db11").display()
    ));
    assert!(embedded.is_ok(), "{:?}", embedded.err().map(|e| e.to_string()));
    // db_bench's hyper_clock_cache needs a C function 7.8 lacks.
    let e = open("block_cache=8M&block_cache_type=hyper_clock")
        .err()
        .expect("refused")
        .to_string();
    assert!(
        e.contains("rocksdb_cache_create_hyper_clock") && e.contains("RocksDB 7.8."),
        "{e}"
    );
    // A known option opens, and its value is the release's.
    let c = open("write_buffer_size=2M").unwrap();
    assert!(c.version().unwrap().starts_with("7.8."));
}

#[test]
fn a_database_of_a_newer_release_is_refused_by_the_older_with_rocksdb_s_message() {
    let Some(lib) = system_7_8() else { return };
    let dir = tempfile::tempdir().unwrap();
    let db = dir.path().join("db");
    // Written by the embedded release (11.8), with its newest table format.
    let c = config(json!({
        "preset": "kv-quick", "db": format!("rocksdb:{}", db.display()),
        "steps": ["fillseq", "flush"], "num": 5_000,
    }));
    let out = run(&c, &dir.path().join("r11"));
    assert_eq!(out.results.run.status, RunStatus::Ok, "{:?}", out.results.run.error);
    // Read by 7.8: refused when opened or when read, with RocksDB's words, not a crash.
    let c = config(json!({
        "preset": "kv-quick", "db": format!("rocksdb:{}?lib={}", db.display(), lib.display()),
        "steps": ["readrandom"], "num": 5_000, "reads": 1_000,
    }));
    let e = match ibench::exec::run(&c, &dir.path().join("r78"), &ibench::exec::Silent, &ibench::Stop::new()) {
        Err(e) => e.to_string(),
        Ok(out) => {
            assert_ne!(out.results.run.status, RunStatus::Ok, "7.8 read an 11.8 database");
            out.results.run.error.clone().unwrap_or_default()
        }
    };
    // "cannot open ... (RocksDB 7.8.3): Corruption: Corrupt or unsupported
    // format_version: 7 in file .../MANIFEST-000005"
    assert!(
        e.contains("(RocksDB 7.8.") && e.contains("unsupported format_version") && e.contains("MANIFEST"),
        "{e}"
    );
}

#[test]
fn a_second_release_sharing_static_objects_with_the_first_is_refused() {
    let Some(lib) = system_7_8() else { return };
    let dir = tempfile::tempdir().unwrap();
    // Debian's build has STB_GNU_UNIQUE symbols; a copy at another path is a
    // second library with the same ones, which the loader would share.
    let copy = dir.path().join("librocksdb-copy.so");
    std::fs::copy(&lib, &copy).unwrap();
    let open = |l: &Path, db: &str| {
        connect::open(&format!(
            "rocksdb:{}?lib={}",
            dir.path().join(db).display(),
            l.display()
        ))
    };
    let first = open(&lib, "a");
    assert!(first.is_ok(), "{:?}", first.err().map(|e| e.to_string()));
    let e = open(&copy, "b").err().expect("refused").to_string();
    assert!(
        e.contains("librocksdb-copy.so: this process has loaded RocksDB 7.8.") && e.contains("STB_GNU_UNIQUE"),
        "{e}"
    );
    // The first stays usable.
    assert!(open(&lib, "c").is_ok());
}

/// scripts/rocksdb-build with `args`: (success, stdout, stderr).
fn build_script(args: &[&str]) -> (bool, String, String) {
    let out = std::process::Command::new("bash")
        .arg(concat!(env!("CARGO_MANIFEST_DIR"), "/scripts/rocksdb-build"))
        .args(args)
        .output()
        .unwrap();
    let text = |b: &[u8]| String::from_utf8_lossy(b).into_owned();
    (out.status.success(), text(&out.stdout), text(&out.stderr))
}

#[test]
fn the_build_script_checks_its_cache_first_and_names_the_releases_it_can_build() {
    let cache = tempfile::tempdir().unwrap();
    let cache_s = cache.path().to_str().unwrap();
    // A release in the cache is its path at once: no index read, no build.
    std::fs::create_dir_all(cache.path().join("8.1.1")).unwrap();
    std::fs::write(cache.path().join("8.1.1/librocksdb.so"), b"").unwrap();
    let (ok, out, _) = build_script(&["8.1.1", "--cache", cache_s]);
    assert!(ok && out.trim_end().ends_with("8.1.1/librocksdb.so"), "{out}");
    // A release no crate carries: the list of those that exist (crates.io's index).
    let (ok, _, err) = build_script(&["5.99.1", "--cache", cache_s]);
    assert!(!ok);
    assert!(
        err.contains("no crate carries RocksDB 5.99.1; these releases can be built:")
            && err.contains("8.1.1")
            && err.contains("11.8.1"),
        "{err}"
    );
    if let Some(lib) = system_7_8() {
        let (ok, out, _) = build_script(&["system"]);
        let canonical = |p: &Path| std::fs::canonicalize(p).unwrap();
        assert!(ok && canonical(Path::new(out.trim_end())) == canonical(&lib), "{out}");
    }
}
