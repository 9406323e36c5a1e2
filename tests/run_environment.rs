//! Every run records what changes its results: host facts, the build, the
//! database's settings, and warnings for settings known to add noise.

mod common;

use common::{config, run};
use ibench::metrics::host_facts;
use serde_json::json;

fn value<'a>(facts: &'a [ibench::metrics::Setting], name: &str) -> &'a ibench::metrics::Setting {
    facts
        .iter()
        .find(|s| s.name == name)
        .unwrap_or_else(|| panic!("no {name}"))
}

#[test]
fn host_facts_are_present_and_plausible() {
    let dir = tempfile::tempdir().unwrap();
    let facts = host_facts(Some(dir.path()), &ibench::metrics::Disks::for_path(Some(dir.path())));
    let threads = std::thread::available_parallelism().unwrap().get().to_string();
    assert_eq!(value(&facts, "cpu_threads").value, threads);
    assert!(!value(&facts, "cpu_model").value.is_empty());
    assert!(value(&facts, "kernel").value.chars().next().unwrap().is_ascii_digit());
    assert!(value(&facts, "memory_bytes").value.parse::<u64>().unwrap() > 1 << 30);
    // Readable, or empty with the reason in its source (this VM has no cpufreq).
    let governor = value(&facts, "cpufreq_governor");
    assert!(
        !governor.value.is_empty() || governor.source.starts_with("unknown: "),
        "{governor:?}"
    );
    // The idle states: what an idle CPU does between round trips, read from /sys.
    for (name, file) in [
        ("cpuidle_driver", "/sys/devices/system/cpu/cpuidle/current_driver"),
        (
            "guest_halt_poll_ns",
            "/sys/module/haltpoll/parameters/guest_halt_poll_ns",
        ),
    ] {
        let fact = value(&facts, name);
        match std::fs::read_to_string(file) {
            Ok(text) => assert_eq!(fact.value, text.trim(), "{fact:?}"),
            Err(_) => assert!(
                fact.value.is_empty() && fact.source.starts_with("unknown: "),
                "{fact:?}"
            ),
        }
    }
    assert!(value(&facts, "data_device").value.starts_with('/') || value(&facts, "data_device").value.contains(':'));
    assert!(value(&facts, "data_filesystem").value.contains(" on /"));
    assert_eq!(
        value(&facts, "build_profile").value,
        if cfg!(debug_assertions) { "debug" } else { "release" }
    );
}

#[test]
fn a_sqlite_run_records_its_pragmas_host_facts_and_warnings() {
    let dir = tempfile::tempdir().unwrap();
    let out = run(&config(json!({"steps": ["l.i0"], "rows_l_i0": 100})), dir.path());
    let config = &out.results.config;
    let pragma = |n: &str| {
        config
            .iter()
            .find(|s| s.scope == "server" && s.name == n)
            .map(|s| s.value.clone())
    };
    assert_eq!(pragma("journal_mode").as_deref(), Some("wal"));
    assert_eq!(pragma("synchronous").as_deref(), Some("1"), "NORMAL");
    assert!(config.iter().any(|s| s.scope == "host" && s.name == "cpu_model"));
    assert!(out.dir.join("config.parquet").is_file());
    // Embedded: no server sharing the CPUs, so no such warning.
    assert!(
        !out.results.run.warnings.iter().any(|w| w.contains("share")),
        "{:?}",
        out.results.run.warnings
    );
}
