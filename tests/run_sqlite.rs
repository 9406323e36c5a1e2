//! The Insert Benchmark on SQLite: every step's counts and window are exact,
//! verify passes after every write step, deletes keep the table size constant.

mod common;

use common::{config, run, step};
use ibench::results::{RunStatus, StepStatus};
use serde_json::json;

/// Small sizes so the whole sequence runs in seconds.
fn small(clients: u32, delete_per_insert: bool, shared_table: bool, db: &str) -> serde_json::Value {
    json!({
        "db": db,
        "clients": clients,
        "delete_per_insert": delete_per_insert,
        "shared_table": shared_table,
        "rows_l_i0": 3000,
        "rows_l_i1": 1000,
        "rows_l_i2": 200,
        "query_seconds": 0.5,
        "wait_seconds": 0.1,
        "steps": ["l.i0", "l.x", "l.i1", "l.i2", "wait", "qr100", "qp100", "qr500", "qp500"],
    })
}

fn check_sequence(clients: u32, delete_per_insert: bool, shared_table: bool) {
    let dir = tempfile::tempdir().unwrap();
    let db = format!("sqlite:{}", dir.path().join("db.sqlite").display());
    let c = config(small(clients, delete_per_insert, shared_table, &db));
    let out = run(&c, dir.path());
    assert_eq!(out.results.run.status, RunStatus::Ok, "{:?}", out.results.run.error);
    let n = clients as u64;
    let mut live = 0;
    for s in &out.results.steps {
        assert_eq!(s.status, StepStatus::Ok, "{}: {:?}", s.step, s.error);
        let expected_inserts = match s.step.as_str() {
            "l.i0" => 3000 * n,
            "l.i1" => 1000 * n,
            "l.i2" => 200 * n,
            "qr100" | "qp100" => 50 * n,
            "qr500" | "qp500" => 250 * n,
            _ => 0,
        };
        assert_eq!(s.inserts, expected_inserts, "{}", s.step);
        let deletes_expected = if delete_per_insert && s.step != "l.i0" {
            expected_inserts
        } else {
            0
        };
        assert_eq!(s.deletes, deletes_expected, "{}", s.step);
        live += s.inserts - s.deletes;
        assert_eq!(s.live_rows, live, "{}: rows in the windows", s.step);
        if s.step == "l.x" || s.step == "wait" {
            assert_eq!(s.verified, None, "{}", s.step);
        } else {
            assert_eq!(s.verified, Some(true), "{}: {:?}", s.step, s.verify_error);
        }
        if s.step.starts_with('q') {
            assert!(s.queries > 0, "{}", s.step);
            // The 3 inserters serialize on SQLite's one write lock per file
            // (a table each or one shared), and these steps last half a
            // second: on a busy 2-core host they can fall short of 1500
            // rows/s (CI once saw 889 in qr500 with a table each). So a
            // verdict, not necessarily met: the rate itself has its own test
            // (a_q_step_holds_its_background_rate_for_ten_seconds).
            let why = format!("{}: {} of {:?} rows/s", s.step, s.ips(), s.target_ips);
            assert!(s.sla_ok.is_some(), "{why}");
        }
    }
    if delete_per_insert {
        // l.i0 loaded the tables; from then on each insert has its delete.
        for name in ["l.i1", "l.i2", "qr100", "qp100", "qr500", "qp500"] {
            assert_eq!(step(&out, name).live_rows, 3000 * n, "{name}");
        }
    }
}

#[test]
fn the_sequence_is_exact_on_one_client_with_deletes() {
    check_sequence(1, true, false);
}

#[test]
fn the_sequence_is_exact_on_three_clients_with_deletes() {
    check_sequence(3, true, false);
}

#[test]
fn the_sequence_is_exact_on_three_clients_without_deletes() {
    check_sequence(3, false, false);
}

#[test]
fn the_sequence_is_exact_on_one_shared_table() {
    check_sequence(3, true, true);
}

#[test]
fn server_assigned_keys_verify_too() {
    let dir = tempfile::tempdir().unwrap();
    let db = format!("sqlite:{}", dir.path().join("db.sqlite").display());
    let mut params = small(2, true, false, &db);
    params["server_keys"] = json!(true);
    params["steps"] = json!(["l.i0", "l.x", "l.i1", "qp100"]);
    let out = run(&config(params), dir.path());
    assert_eq!(out.results.run.status, RunStatus::Ok, "{:?}", out.results.run.error);
    assert!(out
        .results
        .steps
        .iter()
        .filter(|s| s.step != "l.x")
        .all(|s| s.verified == Some(true)));
}

#[test]
fn an_in_memory_database_runs_the_sequence() {
    let dir = tempfile::tempdir().unwrap();
    let out = run(&config(small(2, true, false, "sqlite::memory:")), dir.path());
    assert_eq!(out.results.run.status, RunStatus::Ok, "{:?}", out.results.run.error);
    assert!(out.results.steps.iter().all(|s| s.status == StepStatus::Ok));
}

#[test]
fn a_q_step_holds_its_background_rate_for_ten_seconds() {
    let dir = tempfile::tempdir().unwrap();
    let db = format!("sqlite:{}", dir.path().join("db.sqlite").display());
    let c = config(json!({
        "db": db, "rows_l_i0": 10000, "query_seconds": 10.0, "steps": ["l.i0", "qp1000"],
    }));
    let out = run(&c, dir.path());
    let q = step(&out, "qp1000");
    assert_eq!(q.status, StepStatus::Ok);
    let rate = q.ips();
    assert!((rate - 1000.0).abs() <= 20.0, "ips {rate}");
    assert!((q.dps() - 1000.0).abs() <= 20.0, "dps {}", q.dps());
    assert!((q.elapsed_s - 10.0).abs() < 0.2, "elapsed {}", q.elapsed_s);
    assert_eq!(q.sla_ok, Some(true));
    // Every whole second holds 20 commits of 50 rows, give or take one.
    let per_second: Vec<u64> = out
        .results
        .intervals
        .iter()
        .filter(|(s, r)| s == "qp1000" && r.op == ibench::metrics::Op::Insert && r.client == Some(0) && r.t_s < 9.0)
        .map(|(_, r)| r.count)
        .collect();
    assert_eq!(per_second.len(), 9);
    assert!(per_second.iter().all(|&c| (19..=21).contains(&c)), "{per_second:?}");
}

#[test]
fn a_later_run_continues_the_tables_an_earlier_run_loaded() {
    let dir = tempfile::tempdir().unwrap();
    let db = format!("sqlite:{}", dir.path().join("db.sqlite").display());
    let first = run(
        &config(json!({"db": db, "rows_l_i0": 2000, "steps": ["l.i0", "l.x"]})),
        dir.path(),
    );
    assert_eq!(first.results.run.status, RunStatus::Ok);
    let second = run(
        &config(json!({"db": db, "rows_l_i1": 500, "steps": ["l.i1", "qr100"], "query_seconds": 0.5})),
        dir.path(),
    );
    assert_eq!(
        second.results.run.status,
        RunStatus::Ok,
        "{:?}",
        second.results.run.error
    );
    assert_eq!(step(&second, "l.i1").verified, Some(true));
    assert_eq!(step(&second, "qr100").live_rows, 2000);
}

#[test]
fn verify_is_skipped_after_a_step_that_did_not_end_ok() {
    let dir = tempfile::tempdir().unwrap();
    let db = format!("sqlite:{}", dir.path().join("db.sqlite").display());
    let c = config(json!({"db": db, "steps": ["l.i0"], "rows_l_i0": 50_000_000, "max_seconds": 0.3}));
    let out = run(&c, dir.path());
    let s = step(&out, "l.i0");
    assert_eq!(s.status, StepStatus::Timeout);
    assert_eq!(
        (s.verified, s.verify.as_deref()),
        (None, None),
        "no verdict on a partial step"
    );
}

#[test]
fn the_default_verify_checks_bounds_and_samples_per_step_and_counts_once_at_the_end() {
    for (mode, per_step) in [("quick", Some("quick")), ("full", Some("full")), ("off", None)] {
        let dir = tempfile::tempdir().unwrap();
        let db = format!("sqlite:{}", dir.path().join("db.sqlite").display());
        let c = config(json!({
            "db": db, "steps": ["l.i0", "l.x", "l.i1", "qp100"], "rows_l_i0": 2000, "rows_l_i1": 500,
            "query_seconds": 0.5, "verify": mode,
        }));
        let out = run(&c, dir.path());
        assert_eq!(out.results.run.status, RunStatus::Ok);
        for s in &out.results.steps {
            let written = s.step != "l.x";
            assert_eq!(
                s.verify.as_deref(),
                if written { per_step } else { None },
                "{mode} {}",
                s.step
            );
            assert_eq!(
                s.verified,
                (written && per_step.is_some()).then_some(true),
                "{mode} {}",
                s.step
            );
            assert_eq!(s.verify_s.is_some(), written && per_step.is_some(), "{mode} {}", s.step);
        }
        let counted = (mode != "off").then_some(true);
        assert_eq!(out.results.run.verified, counted, "{mode}: the exact counts at the end");
    }
}

#[test]
fn a_missing_row_in_the_middle_is_found_by_the_final_count() {
    let dir = tempfile::tempdir().unwrap();
    let path = dir.path().join("db.sqlite");
    let db = format!("sqlite:{}", path.display());
    let first = run(
        &config(json!({"db": db, "steps": ["l.i0"], "rows_l_i0": 5000})),
        dir.path(),
    );
    assert_eq!(first.results.run.verified, Some(true));
    // Remove one row between the bounds, away from the sampled keys' likely places: only a count sees it.
    let conn = rusqlite::Connection::open(&path).unwrap();
    conn.execute("DELETE FROM pi1 WHERE transactionid = 2500", []).unwrap();
    drop(conn);
    let second = run(
        &config(json!({"db": db, "steps": ["l.i1"], "rows_l_i1": 100, "verify_sample": 0})),
        dir.path(),
    );
    assert_eq!(
        step(&second, "l.i1").verified,
        Some(true),
        "bounds and the ends of the window hold"
    );
    assert_eq!(second.results.run.verified, Some(false));
    let e = second.results.run.verify_error.clone().unwrap();
    assert!(e.contains("pi1") && e.contains("count: Some(4999)"), "{e}");
}

#[test]
fn the_live_window_never_exceeds_its_start_size_plus_max_delete_lag_commits() {
    use std::sync::atomic::{AtomicBool, AtomicU64, Ordering};
    let dir = tempfile::tempdir().unwrap();
    let path = dir.path().join("db.sqlite");
    let db = format!("sqlite:{}", path.display());
    run(
        &config(json!({"db": db, "steps": ["l.i0", "l.x"], "rows_l_i0": 5000})),
        dir.path(),
    );
    let done = AtomicBool::new(false);
    let largest = AtomicU64::new(0);
    let c = config(json!({
        "db": db, "steps": ["l.i1"], "rows_l_i1": 20_000, "rows_per_commit_l_i1": 50, "max_delete_lag": 8,
    }));
    let out = std::thread::scope(|scope| {
        scope.spawn(|| {
            // Count the table from another connection all through the step.
            let conn = rusqlite::Connection::open(&path).unwrap();
            while !done.load(Ordering::SeqCst) {
                if let Ok(n) = conn.query_row("SELECT COUNT(*) FROM pi1", [], |r| r.get::<_, i64>(0)) {
                    largest.fetch_max(n as u64, Ordering::SeqCst);
                }
            }
        });
        let out = run(&c, dir.path());
        done.store(true, Ordering::SeqCst);
        out
    });
    let s = step(&out, "l.i1");
    assert_eq!((s.status.as_str(), s.inserts, s.deletes), ("ok", 20_000, 20_000));
    let bound = 5000 + 8 * 50;
    assert!(
        largest.load(Ordering::SeqCst) <= bound,
        "counted {} rows",
        largest.load(Ordering::SeqCst)
    );
    assert!(
        s.live_rows_max <= bound && s.live_rows_max >= 5000,
        "{}",
        s.live_rows_max
    );
}

#[test]
fn sizes_and_the_disks_counted_are_recorded() {
    let dir = tempfile::tempdir().unwrap();
    let db = format!("sqlite:{}", dir.path().join("db.sqlite").display());
    let out = run(
        &config(json!({"db": db, "steps": ["l.i0", "l.i1"], "rows_l_i0": 20_000, "delete_per_insert": false})),
        dir.path(),
    );
    let (a, b) = (step(&out, "l.i0"), step(&out, "l.i1"));
    let tables = a.tables_size_bytes.expect("SQLite's used pages");
    // About 20,000 rows of 8 + 8 + 4 × 4 + 15 bytes, with SQLite's overheads.
    assert!(
        (20_000 * 30..20_000 * 200).contains(&tables),
        "{tables} bytes for 20,000 rows"
    );
    assert!(b.tables_size_bytes.unwrap() > tables, "grows with l.i1's rows");
    let disks = out
        .results
        .config
        .iter()
        .find(|s| s.name == "data_disks")
        .expect("recorded");
    assert!(!disks.value.is_empty() && !disks.source.starts_with("all"), "{disks:?}");
    let stats = std::fs::read_to_string("/proc/diskstats").unwrap();
    for d in disks.value.split(',') {
        assert!(
            stats.lines().any(|l| l.split_whitespace().nth(2) == Some(d)),
            "{d} in /proc/diskstats"
        );
    }
}

#[test]
fn sqlite_s_pages_and_each_disk_are_recorded_per_step_and_interval() {
    let dir = tempfile::tempdir().unwrap();
    let db = format!("sqlite:{}", dir.path().join("db.sqlite").display());
    let out = run(
        &config(
            json!({"db": db, "steps": ["l.i0", "l.x", "l.i1"], "rows_l_i0": 300_000, "rows_l_i1": 5_000,
                       "interval_seconds": 0.02}),
        ),
        dir.path(),
    );
    assert_eq!(out.results.run.status, RunStatus::Ok, "{:?}", out.results.run.error);
    let pages = |step: &str| {
        let c = out
            .results
            .counters
            .iter()
            .find(|c| c.step == step && c.source == "sqlite" && c.name == "page_count")
            .expect("page_count");
        (c.start.unwrap(), c.end.unwrap())
    };
    let (before, after) = pages("l.i0");
    let page_size = 4096.0;
    // The pages hold the rows: SQLite's used pages are the tables' size.
    let used = step(&out, "l.i0").tables_size_bytes.unwrap() as f64 / page_size;
    assert!(after > before && after >= used, "{before} → {after} pages, {used} used");
    assert!(pages("l.x").1 > after, "the indexes take pages");
    // The gauge rises through the load, on the interval grid.
    let in_use: Vec<f64> = out
        .results
        .gauges
        .iter()
        .filter(|(s, g)| s == "l.i0" && g.name == "pages_in_use")
        .map(|(_, g)| g.value.unwrap())
        .collect();
    assert!(in_use.len() >= 2 && in_use.last() > in_use.first(), "{in_use:?}");
    // Each disk: a row per interval and one for the whole step, adding up to the step's totals.
    let batch = out.results.disks_batch().unwrap();
    assert!(batch.num_rows() > 0);
    let l_i0 = step(&out, "l.i0");
    let per_step: u64 = l_i0.system.devices.iter().map(|d| d.counters.writes).sum();
    assert_eq!(per_step, l_i0.system.disk.unwrap().writes);
    for d in &l_i0.system.devices {
        let util = d.util_pct().unwrap();
        assert!((0.0..=100.0).contains(&util), "{util}");
    }
    let host_rows = out.results.host_intervals.iter().filter(|(s, _)| s == "l.i0").count();
    assert!(host_rows >= 2);
    assert!(out
        .results
        .host_intervals
        .iter()
        .all(|(_, h)| h.delta.devices.len() == l_i0.system.devices.len()));
}

#[test]
fn a_step_ends_without_waiting_for_its_gauge_sampler_s_next_boundary() {
    // The sampler parks until the next boundary (30 s here) and is woken
    // when the step ends.
    let dir = tempfile::tempdir().unwrap();
    let db = format!("sqlite:{}", dir.path().join("db.sqlite").display());
    let c = config(json!({"db": db, "steps": ["l.i0"], "rows_l_i0": 100, "interval_seconds": 30.0}));
    let started = std::time::Instant::now();
    let out = run(&c, dir.path());
    let took = started.elapsed();
    assert!(took < std::time::Duration::from_secs(10), "the run took {took:?}");
    assert!(out
        .results
        .gauges
        .iter()
        .any(|(s, g)| s == "l.i0" && g.name == "pages_in_use"));
}

#[test]
fn a_step_shorter_than_any_interval_still_has_its_gauges_read_once() {
    let dir = tempfile::tempdir().unwrap();
    let db = format!("sqlite:{}", dir.path().join("db.sqlite").display());
    let out = run(
        &config(json!({"db": db, "steps": ["l.i0"], "rows_l_i0": 100})),
        dir.path(),
    );
    assert!(step(&out, "l.i0").elapsed_s < 0.5);
    let rows: Vec<&str> = out.results.gauges.iter().map(|(_, g)| g.name.as_str()).collect();
    assert!(
        rows.contains(&"pages_in_use") && rows.contains(&"wal_frames"),
        "{rows:?}"
    );
    assert!(out.results.gauges.iter().all(|(s, g)| s == "l.i0" && g.t_s == 0.0));
}
