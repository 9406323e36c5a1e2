//! `profile = "waits"`: what the server's sessions waited on in each step,
//! from the database itself, in waits.parquet: PostgreSQL's sessions sampled
//! from pg_stat_activity, MariaDB's performance_schema summaries (a fresh
//! server with performance_schema on; a warning where it is off), and
//! embedded RocksDB's statistics that time waits.

mod common;

use common::{config, postgres_admin, reachable, run};
use ibench::metrics::WaitRow;
use ibench::results::RunStatus;
use serde_json::json;

fn waits_of(out: &ibench::exec::RunOutcome, step: &str) -> Vec<WaitRow> {
    out.results.waits.iter().filter(|w| w.step == step).cloned().collect()
}

fn run_ok(params: serde_json::Value) -> ibench::exec::RunOutcome {
    let dir = tempfile::tempdir().unwrap();
    let out = run(&config(params), dir.path());
    assert_eq!(out.results.run.status, RunStatus::Ok, "{:?}", out.results.run.error);
    out
}

#[test]
fn postgres_sessions_are_sampled_for_their_wait_events() {
    let admin = postgres_admin();
    // The admin DSN's database, not its user, becomes `test`.
    let db = format!("{}/test", admin.rsplit_once('/').unwrap().0);
    if !reachable("PostgreSQL", postgres::Client::connect(&db, postgres::NoTls).is_ok()) {
        return;
    }
    // One row per commit: the sessions spend their time committing.
    let out = run_ok(json!({
        "db": db, "steps": ["l.i0", "l.i1"], "rows_l_i0": 2000, "rows_l_i1": 3000, "rows_per_commit_l_i1": 1,
        "profile": "waits", "wait_sampling_hz": 50,
    }));
    let waits = waits_of(&out, "l.i1");
    assert!(!waits.is_empty(), "{:?}", out.results.waits);
    assert!(waits
        .iter()
        .all(|w| w.source == "pg_stat_activity" && w.samples.unwrap() > 0));
    // Commits wait on the WAL (or run: CPU); estimated time is samples ÷ rate.
    let wal: u64 = waits
        .iter()
        .filter(|w| w.event.contains("WAL"))
        .map(|w| w.samples.unwrap())
        .sum();
    assert!(wal > 0, "{waits:?}");
    for w in &waits {
        assert!((w.wait_s - w.samples.unwrap() as f64 / 50.0).abs() < 1e-9);
    }
    // The file holds them, with the step's operations beside them.
    let batch = out.results.waits_batch().unwrap();
    assert_eq!(batch.num_rows(), out.results.waits.len());
}

#[test]
fn a_server_without_performance_schema_says_so_and_one_with_it_reports_its_waits() {
    let off = ibench::connect::open("mysql://root@127.0.0.1:3306/test");
    if !reachable("MariaDB", off.is_ok()) {
        return;
    }
    let out = run_ok(json!({
        "db": "mysql://root@127.0.0.1:3306/test", "steps": ["l.i0"], "rows_l_i0": 1000, "profile": "waits",
    }));
    let on: Option<String> = {
        use mysql::prelude::Queryable;
        let mut c = mysql::Conn::new(mysql::Opts::from_url(&common::mysql_admin()).unwrap()).unwrap();
        c.query_first("SELECT CAST(@@performance_schema AS CHAR)").unwrap()
    };
    if matches!(on.as_deref(), Some("0" | "OFF")) {
        assert!(
            out.results
                .run
                .warnings
                .iter()
                .any(|w| w.contains("performance_schema is off")),
            "{:?}",
            out.results.run.warnings
        );
        assert!(out.results.waits.is_empty());
    }
    // A fresh MariaDB with performance_schema on.
    let spec = ibench::server::ServerSpec {
        kind: ibench::server::Kind::Mariadb,
        bin: None,
        config: "performance_schema = ON\n".into(),
        work_dir: std::env::temp_dir(),
        keep_data: false,
    };
    let server = ibench::server::Managed::start(&spec).unwrap();
    let out = run_ok(json!({
        "db": server.dsn(), "steps": ["l.i0", "l.i1"], "rows_l_i0": 2000, "rows_l_i1": 2000,
        "rows_per_commit_l_i1": 1, "profile": "waits",
    }));
    server.stop(None).unwrap();
    let waits = waits_of(&out, "l.i1");
    assert!(waits
        .iter()
        .all(|w| w.source == "performance_schema" && w.count.is_some()));
    assert!(
        waits
            .iter()
            .any(|w| w.event.starts_with("wait/io/file/innodb/") && w.wait_s > 0.0),
        "{waits:?}"
    );
}

#[cfg(feature = "rocksdb")]
#[test]
fn embedded_rocksdb_reports_the_statistics_that_time_waits() {
    let dir = tempfile::tempdir().unwrap();
    let out = run_ok(json!({
        "db": format!("rocksdb:{}", dir.path().join("db").display()), "steps": ["fillseq", "flush", "readrandom"],
        "num": 20000, "profile": "waits",
    }));
    let waits = waits_of(&out, "readrandom");
    assert!(waits.iter().all(|w| w.source == "rocksdb"));
    let read = waits
        .iter()
        .find(|w| w.event == "sst read")
        .expect("reads after a flush read SSTs");
    assert!(read.count.unwrap() > 0 && read.wait_s > 0.0, "{read:?}");
}
