//! The database's own counters and gauges are real: what the server counted
//! over a step matches what ibench did in it (rows inserted, commits, files
//! per level), and gauges move as the workload says they must (dead tuples
//! rise with deletes and fall after VACUUM).

mod common;

use common::{config, postgres_db, run, step};
use ibench::exec::RunOutcome;
use ibench::metrics::{CounterRow, GaugeRow};
use ibench::results::RunStatus;
use serde_json::json;

/// The counter `source`/`name` over `step`.
fn counter<'a>(out: &'a RunOutcome, step: &str, source: &str, name: &str) -> &'a CounterRow {
    out.results
        .counters
        .iter()
        .find(|c| c.step == step && c.source == source && c.name == name)
        .unwrap_or_else(|| panic!("no counter {source}/{name} in {step}"))
}

fn delta(out: &RunOutcome, step: &str, source: &str, name: &str) -> f64 {
    counter(out, step, source, name).delta().expect("read at both ends")
}

/// The gauge `name`'s rows in `step`, in time order.
fn gauges<'a>(out: &'a RunOutcome, step: &str, name: &str) -> Vec<&'a GaugeRow> {
    out.results
        .gauges
        .iter()
        .filter(|(s, g)| s == step && g.name == name)
        .map(|(_, g)| g)
        .collect()
}

/// The counters and gauges are in their Parquet files, as in memory.
fn files_hold(out: &RunOutcome) {
    for (name, rows) in [
        ("counters", out.results.counters.len()),
        ("gauges", out.results.gauges.len()),
    ] {
        let file = std::fs::File::open(out.dir.join(format!("{name}.parquet"))).unwrap();
        let reader = parquet::arrow::arrow_reader::ParquetRecordBatchReaderBuilder::try_new(file).unwrap();
        assert_eq!(reader.metadata().file_metadata().num_rows() as usize, rows, "{name}");
        assert!(rows > 0, "{name} is empty");
    }
}

#[test]
fn mariadb_counts_exactly_the_rows_ibench_inserted_and_reports_innodb_gauges() {
    // A server of its own: global status is server-wide, and nothing else writes here.
    let spec = ibench::server::ServerSpec {
        kind: ibench::server::Kind::Mariadb,
        bin: None,
        config: String::new(),
        work_dir: std::env::temp_dir(),
        keep_data: false,
    };
    let server = match ibench::server::Managed::start(&spec) {
        Ok(s) => s,
        Err(e) => {
            assert!(common::reachable(&format!("a private MariaDB ({e})"), false));
            return;
        }
    };
    let dir = tempfile::tempdir().unwrap();
    let out = run(
        &config(
            json!({"db": server.dsn(), "steps": ["l.i0", "l.x", "l.i1"], "rows_l_i0": 30_000,
                       "rows_l_i1": 5_000, "clients": 2}),
        ),
        dir.path(),
    );
    assert_eq!(out.results.run.status, RunStatus::Ok, "{:?}", out.results.run.error);
    assert!(
        out.results.run.warnings.iter().all(|w| !w.contains("counters")),
        "{:?}",
        out.results.run.warnings
    );
    let load = step(&out, "l.i0");
    assert_eq!(load.inserts, 60_000);
    // MariaDB 10.11 has no Innodb_rows_inserted (MySQL has): the handler
    // counts every row written to a table (temporary tables apart).
    assert_eq!(delta(&out, "l.i0", "global_status", "Handler_write"), 60_000.0);
    // l.i1 inserts and deletes as many rows, one commit each per batch.
    let churn = step(&out, "l.i1");
    assert_eq!(
        delta(&out, "l.i1", "global_status", "Handler_write"),
        churn.inserts as f64
    );
    assert_eq!(
        delta(&out, "l.i1", "global_status", "Handler_delete"),
        churn.deletes as f64
    );
    // Where the server has InnoDB's own row counters (MySQL), they agree.
    for (step_name, name, expected) in [
        ("l.i0", "Innodb_rows_inserted", 60_000),
        ("l.i1", "Innodb_rows_inserted", churn.inserts),
        ("l.i1", "Innodb_rows_deleted", churn.deletes),
    ] {
        if let Some(c) = out
            .results
            .counters
            .iter()
            .find(|c| c.step == step_name && c.name == name)
        {
            assert_eq!(c.delta(), Some(expected as f64), "{step_name} {name}");
        }
    }
    let status = counter(&out, "l.i1", "innodb_status", "status");
    assert!(status.text.as_deref().unwrap().contains("BUFFER POOL AND MEMORY"));
    // innodb_metrics where enabled: the load wrote redo and created pages.
    assert!(delta(&out, "l.i0", "innodb_metrics", "buffer_pages_created") > 0.0);
    assert!(delta(&out, "l.i0", "innodb_metrics", "os_log_bytes_written") > 0.0);
    for name in [
        "history_list_length",
        "dirty_pages",
        "checkpoint_age_bytes",
        "redo_bytes_per_s",
    ] {
        assert!(!gauges(&out, "l.i0", name).is_empty(), "no {name} gauge");
    }
    assert!(gauges(&out, "l.i0", "dirty_pages").iter().any(|g| g.value > Some(0.0)));
    assert!(gauges(&out, "l.i0", "redo_bytes_per_s")
        .iter()
        .any(|g| g.value > Some(0.0)));
    files_hold(&out);
    server.stop(None).unwrap();
}

#[test]
fn postgres_counts_the_rows_and_commits_and_dead_tuples_fall_after_vacuum() {
    let Some(db) = postgres_db("ibench_counters").filter(|d| !d.is_empty()) else {
        return;
    };
    let dir = tempfile::tempdir().unwrap();
    let out = run(
        &config(
            json!({"db": db, "steps": ["l.i0", "l.x", "l.i1", "wait"], "rows_l_i0": 40_000,
                       "rows_l_i1": 30_000, "rows_per_commit_l_i1": 10, "wait_seconds": 1}),
        ),
        dir.path(),
    );
    assert_eq!(out.results.run.status, RunStatus::Ok, "{:?}", out.results.run.error);
    let load = step(&out, "l.i0");
    // The table's own count is exact: only ibench writes it.
    assert_eq!(
        delta(&out, "l.i0", "pg_stat_user_tables", "pi1.n_tup_ins"),
        load.inserts as f64
    );
    // The database's counts cover ibench's rows and commits (autoanalyze may add a few catalog rows).
    let tup = delta(&out, "l.i0", "pg_stat_database", "tup_inserted");
    assert!(
        (load.inserts as f64..load.inserts as f64 + 2_000.0).contains(&tup),
        "tup_inserted {tup}"
    );
    let commits = load.inserts / 100;
    let xact = delta(&out, "l.i0", "pg_stat_database", "xact_commit");
    assert!(xact >= commits as f64, "xact_commit {xact} < {commits} commits");
    assert!(gauges(&out, "l.i0", "wal_bytes_per_s")
        .iter()
        .any(|g| g.value > Some(1e5)));
    let churn = step(&out, "l.i1");
    assert_eq!(
        delta(&out, "l.i1", "pg_stat_user_tables", "pi1.n_tup_del"),
        churn.deletes as f64
    );
    // Dead tuples pile up with l.i1's deletes; the wait step's VACUUM removes them.
    let dead_after_i1 = counter(&out, "l.i1", "pg_stat_user_tables", "pi1.n_dead_tup")
        .end
        .unwrap();
    let risen = gauges(&out, "l.i1", "dead_tuples");
    let peak = risen.iter().filter_map(|g| g.value).fold(0.0, f64::max);
    assert!(
        peak > 1_000.0 && dead_after_i1 > 1_000.0,
        "dead tuples {peak} / {dead_after_i1}"
    );
    let dead_after_wait = counter(&out, "wait", "pg_stat_user_tables", "pi1.n_dead_tup")
        .end
        .unwrap();
    assert!(dead_after_wait < dead_after_i1 / 10.0, "{dead_after_wait} after VACUUM");
    let last = gauges(&out, "wait", "dead_tuples");
    assert!(last.last().unwrap().value.unwrap() < peak / 10.0, "{last:?}");
    assert!(delta(&out, "wait", "pg_stat_user_tables", "pi1.vacuum_count") >= 1.0);
    files_hold(&out);
}

#[cfg(feature = "rocksdb")]
#[test]
fn rocksdb_s_level_table_matches_its_files_per_level() {
    let dir = tempfile::tempdir().unwrap();
    let out = run(
        &config(json!({
            "preset": "kv-quick",
            "db": format!("rocksdb:{}?write_buffer_size=1M", dir.path().join("db").display()),
            "steps": ["fillseq", "flush", "waitforcompaction"],
            "num": 200_000,
        })),
        dir.path(),
    );
    assert_eq!(out.results.run.status, RunStatus::Ok, "{:?}", out.results.run.error);
    let last = step(&out, "waitforcompaction");
    let files = &last.engine.as_ref().unwrap().files_per_level;
    assert!(files.iter().sum::<u64>() > 0);
    for (level, &n) in files.iter().enumerate() {
        let row = out.results.counters.iter().find(|c| {
            c.step == "waitforcompaction" && c.source == "rocksdb_levels" && c.name == format!("L{level}.Files")
        });
        // RocksDB prints a level's row when it has files (or compaction work).
        assert_eq!(row.and_then(|r| r.end).unwrap_or(0.0), n as f64, "L{level}: {row:?}");
    }
    let fill = step(&out, "fillseq").engine.as_ref().unwrap().user_bytes;
    assert_eq!(delta(&out, "fillseq", "rocksdb", "rocksdb.bytes.written"), fill as f64);
    let text = counter(&out, "flush", "rocksdb_stats", "stats")
        .text
        .as_deref()
        .unwrap();
    assert!(text.contains("** Compaction Stats [kv] **"), "{text}");
    for name in [
        "l0_files",
        "pending_compaction_bytes",
        "immutable_memtables",
        "write_stopped",
    ] {
        assert!(!gauges(&out, "fillseq", name).is_empty(), "no {name} gauge");
    }
    files_hold(&out);
}

#[test]
fn mariadb_s_myrocks_reports_its_status_and_gauges() {
    let Some(db) = common::mysql_db("ibench_counters_rocks").filter(|d| !d.is_empty()) else {
        return;
    };
    let dir = tempfile::tempdir().unwrap();
    let out = run(
        &config(json!({"db": format!("{db}?engine=rocksdb"), "steps": ["l.i0"], "rows_l_i0": 20_000})),
        dir.path(),
    );
    assert_eq!(out.results.run.status, RunStatus::Ok, "{:?}", out.results.run.error);
    // The shared server may serve other tests meanwhile: at least ibench's rows.
    assert!(delta(&out, "l.i0", "global_status", "Rocksdb_rows_inserted") >= 20_000.0);
    let status = counter(&out, "l.i0", "rocksdb_status", "status");
    assert!(
        status.text.as_deref().unwrap().contains("Compaction Stats"),
        "{status:?}"
    );
    for name in [
        "l0_files",
        "immutable_memtables",
        "compaction_pending",
        "stall_micros_per_s",
    ] {
        assert!(!gauges(&out, "l.i0", name).is_empty(), "no {name} gauge");
    }
}
