//! `compat = "iibench"`: the reference client's workload on every DBMS. The
//! statements it sends (SQLite's statement trace is in the connector's unit
//! tests; here PostgreSQL's statement log of a server of the test's own, and
//! MySQL's statement counters), keys the server assigns, a table size that
//! l.i1's deletes keep constant, verify passing through the sequence's key
//! gaps, and the wait step of each DBMS: its length X, the settings it
//! changes and restores, and MyRocks' wait for compaction.

mod common;

use common::{config, mysql_admin, mysql_db, postgres_db, reachable, run, step};
use ibench::exec::RunOutcome;
use ibench::results::RunStatus;
use ibench::server::{Kind, Managed, ServerSpec};
use mysql::prelude::Queryable;
use serde_json::{json, Value};
use std::sync::Mutex;
use std::time::{Duration, Instant};

/// The tests that read or change the shared MariaDB's global counters and
/// settings run one at a time.
static MARIADB_GLOBALS: Mutex<()> = Mutex::new(());

/// A compat run of `steps` on `db`, small: l.i0 1500 rows (a PostgreSQL
/// sequence caches 1000 values per session, so l.x's rows come after a gap),
/// l.i1 1000 with deletes, 1 s q steps; `extra` overrides.
fn compat_run(db: &str, steps: &[&str], extra: Value) -> (tempfile::TempDir, RunOutcome) {
    let dir = tempfile::tempdir().unwrap();
    let mut params = json!({
        "db": db, "compat": "iibench", "steps": steps,
        "rows_l_i0": 1500, "rows_l_i1": 1000, "rows_l_i2": 100,
        "query_seconds": 1.0, "wait_seconds": 1.0,
    });
    for (k, v) in extra.as_object().unwrap() {
        params[k] = v.clone();
    }
    let out = run(&config(params), dir.path());
    assert_eq!(out.results.run.status, RunStatus::Ok, "{:?}", out.results.run.error);
    assert_eq!(
        out.results.run.verified,
        Some(true),
        "{:?}",
        out.results.run.verify_error
    );
    (dir, out)
}

/// Every write step verified, and l.i1's deletes kept the table at its size after l.x.
fn constant_size_and_verified(out: &RunOutcome) {
    for s in out
        .results
        .steps
        .iter()
        .filter(|s| s.step.starts_with("l.i") || s.step.starts_with('q'))
    {
        assert_eq!(s.verified, Some(true), "{}: {:?}", s.step, s.verify_error);
    }
    let loaded = step(out, "l.x").live_rows;
    assert_eq!(loaded, 1600, "l.i0's rows and l.x's 100");
    assert_eq!(step(out, "l.i1").live_rows, loaded, "as many deleted as inserted");
    assert_eq!(step(out, "l.i1").deletes, 1000);
    assert!(
        step(out, "l.i1").live_rows_max <= loaded + 8 * 50,
        "the deleter kept up"
    );
}

const SEQUENCE: [&str; 5] = ["l.i0", "l.x", "l.i1", "qr100", "qp100"];

#[test]
fn sqlite_compat_keeps_the_table_size_and_verifies() {
    let dir = tempfile::tempdir().unwrap();
    let db = format!("sqlite:{}", dir.path().join("c.db").display());
    let (_out_dir, out) = compat_run(&db, &SEQUENCE, json!({}));
    constant_size_and_verified(&out);
    let config: Value = serde_json::from_str(&out.results.run.config).unwrap();
    for (k, v) in [
        ("server_keys", json!(true)),
        ("statements", json!("literal")),
        ("data", json!("iibench")),
        ("lx_rows", json!(100)),
        ("maintenance", json!("iibench")),
    ] {
        assert_eq!(config[k], v, "the bundle sets {k}");
    }
}

#[test]
fn an_explicit_choice_overrides_the_bundle() {
    let c = config(json!({"compat": "iibench", "statements": "prepared", "lx_rows": 0}));
    assert_eq!(serde_json::to_value(c.statements).unwrap(), json!("prepared"));
    assert_eq!(c.lx_rows, 0);
    assert!(c.server_keys, "the rest of the bundle stays");
}

/// The lines of a PostgreSQL log that carry a logged statement's text.
fn logged_statements(log: &str) -> Vec<&str> {
    log.lines()
        .filter_map(|l| l.split_once("LOG:  ").map(|(_, s)| s))
        .filter(|s| s.starts_with("statement: ") || s.starts_with("execute "))
        .collect()
}

#[test]
fn postgres_compat_sends_the_reference_statements_and_the_server_assigns_keys() {
    if !reachable("initdb", std::path::Path::new("/usr/lib/postgresql").exists()) {
        return;
    }
    let server = Managed::start(&ServerSpec {
        kind: Kind::Postgres,
        bin: None,
        config: "log_statement = 'all'".into(),
        work_dir: std::env::temp_dir(),
        keep_data: false,
    })
    .unwrap();
    let (_dir, out) = compat_run(
        &server.dsn(),
        &["l.i0", "l.x", "l.i1", "wait", "qr100", "qp100"],
        json!({}),
    );
    constant_size_and_verified(&out);
    let log = std::fs::read_to_string(server.log()).unwrap();
    let statements = logged_statements(&log);
    let has = |prefix: &str| {
        assert!(
            statements.iter().any(|s| s.starts_with(prefix)),
            "no statement starting {prefix:?} in the server's log"
        )
    };
    // The batch's dateandtime is the wall clock, as the reference's.
    let today = ibench::metrics::utc(ibench::metrics::unix_micros()).date();
    has(&format!(
        "statement: insert into pi1 (dateandtime,cashregisterid,customerid,productid,price,data) values ('{today} "
    ));
    has("statement: delete from pi1 where transactionid in (select transactionid from pi1 where transactionid >= ");
    has("statement: select min(transactionid) from pi1");
    has("statement: select max(transactionid) from pi1");
    has("statement: PREPARE market_query_ps (int) as SELECT productid, customerid, price FROM pi1 WHERE (productid >= $1)");
    has("statement: PREPARE pk_query_ps (int,int,int,int,int,int,int,int,int,int) as SELECT transactionid, productid, data FROM pi1");
    has("statement: execute market_query_ps (");
    has("statement: execute pk_query_ps (");
    has("statement: VACUUM (VERBOSE, ANALYZE, INDEX_CLEANUP ON) pi1");
    has("statement: CHECKPOINT");
    // No insert, delete or query went through the extended protocol (binary parameters).
    let extended: Vec<&&str> = statements
        .iter()
        .filter(|s| s.starts_with("execute ") && ["INSERT", "DELETE", "pi1 WHERE"].iter().any(|w| s.contains(w)))
        .collect();
    assert!(extended.is_empty(), "prepared statements in compat mode: {extended:?}");

    // The server assigned the keys: a BIGSERIAL caching 1000, and l.x's rows
    // after the gap the first session's unused cache left.
    let mut c = postgres::Client::connect(&server.dsn(), postgres::NoTls).unwrap();
    let cache: i64 = c
        .query_one(
            "SELECT seqcache FROM pg_sequence WHERE seqrelid = 'pi1_transactionid_seq'::regclass",
            &[],
        )
        .unwrap()
        .get(0);
    assert_eq!(cache, 1000);
    let row = c
        .query_one("SELECT min(transactionid), max(transactionid), count(*) FROM pi1", &[])
        .unwrap();
    let (min, max, count): (i64, i64, i64) = (row.get(0), row.get(1), row.get(2));
    assert!(max - min + 1 > count, "keys with gaps: [{min}, {max}] holds {count}");

    // The control: ibench's own statements are prepared, with parameters.
    let before = std::fs::read_to_string(server.log()).unwrap().len();
    let dir = tempfile::tempdir().unwrap();
    let out = run(
        &config(json!({"db": server.dsn(), "steps": ["l.i0"], "rows_l_i0": 200})),
        dir.path(),
    );
    assert_eq!(out.results.run.status, RunStatus::Ok);
    let log = std::fs::read_to_string(server.log()).unwrap();
    assert!(
        logged_statements(&log[before..])
            .iter()
            .any(|s| s.starts_with("execute ") && s.contains("INSERT INTO pi1")),
        "the default inserts are prepared"
    );
    server.stop(None).unwrap();
}

fn mysql_status(name: &str) -> u64 {
    let mut c = mysql::Conn::new(mysql::Opts::from_url(&mysql_admin()).unwrap()).unwrap();
    let row: Option<(String, u64)> = c.query_first(format!("SHOW GLOBAL STATUS LIKE '{name}'")).unwrap();
    row.map(|r| r.1).unwrap_or(0)
}

#[test]
fn mariadb_compat_prepares_nothing_and_the_server_assigns_keys() {
    let _globals = MARIADB_GLOBALS.lock().unwrap_or_else(|p| p.into_inner());
    for engine in ["innodb", "rocksdb"] {
        let Some(base) = mysql_db(&format!("ibench_compat_{engine}")).filter(|d| !d.is_empty()) else {
            return;
        };
        let db = format!("{base}?engine={engine}");
        let prepared = mysql_status("Com_stmt_prepare");
        let (_dir, out) = compat_run(&db, &SEQUENCE, json!({}));
        assert_eq!(
            mysql_status("Com_stmt_prepare") - prepared,
            0,
            "{engine}: compat mode prepared statements"
        );
        constant_size_and_verified(&out);
        let mut c = mysql::Conn::new(mysql::Opts::from_url(&base).unwrap()).unwrap();
        let (_, ddl): (String, String) = c.query_first("SHOW CREATE TABLE pi1").unwrap().unwrap();
        assert!(ddl.contains("AUTO_INCREMENT"), "{engine}: {ddl}");
        // The control: ibench's own statements are prepared.
        let prepared = mysql_status("Com_stmt_prepare");
        let dir = tempfile::tempdir().unwrap();
        let out = run(
            &config(json!({"db": db, "steps": ["l.i0"], "rows_l_i0": 200})),
            dir.path(),
        );
        assert_eq!(out.results.run.status, RunStatus::Ok);
        assert!(
            mysql_status("Com_stmt_prepare") > prepared,
            "{engine}: the default prepares"
        );
    }
}

#[test]
fn postgres_compat_wait_lasts_x_in_all_and_ibenchs_waits_after_maintenance() {
    let Some(db) = postgres_db("ibench_compat_wait").filter(|d| !d.is_empty()) else {
        return;
    };
    let (_dir, out) = compat_run(&db, &["l.i0", "wait"], json!({"wait_seconds": 3.0}));
    let wait = step(&out, "wait");
    assert!(
        (3.0..3.5).contains(&wait.elapsed_s),
        "the step lasted {} s",
        wait.elapsed_s
    );
    let (_dir, out) = compat_run(
        &db,
        &["l.i0", "wait"],
        json!({"wait_seconds": 3.0, "maintenance": "ibench"}),
    );
    assert!(step(&out, "wait").elapsed_s >= 3.0);
}

/// A global of the shared MariaDB as text.
fn global(c: &mut mysql::Conn, name: &str) -> String {
    c.query_first::<String, _>(format!("SELECT CAST(@@GLOBAL.{name} AS CHAR)"))
        .unwrap()
        .unwrap()
}

/// Puts the shared server's dirty-page settings back as they were when
/// dropped, even if the test fails: the limit first, as its low-water mark
/// may not exceed it.
struct DirtyPages(Vec<(&'static str, String)>);

impl Drop for DirtyPages {
    fn drop(&mut self) {
        if let Ok(mut c) = mysql::Conn::new(mysql::Opts::from_url(&mysql_admin()).unwrap()) {
            for (name, value) in &self.0 {
                let _ = c.query_drop(format!("SET GLOBAL {name} = {value}"));
            }
        }
    }
}

#[test]
fn innodb_compat_wait_lowers_the_dirty_page_limits_for_x_then_restores_them() {
    let _globals = MARIADB_GLOBALS.lock().unwrap_or_else(|p| p.into_inner());
    let Some(base) = mysql_db("ibench_compat_innodb_wait").filter(|d| !d.is_empty()) else {
        return;
    };
    let mut c = mysql::Conn::new(mysql::Opts::from_url(&mysql_admin()).unwrap()).unwrap();
    let names = ["innodb_max_dirty_pages_pct", "innodb_max_dirty_pages_pct_lwm"];
    let _restore = DirtyPages(names.iter().map(|n| (*n, global(&mut c, n))).collect());
    let db = format!("{base}?engine=innodb");
    // From the server's settings, and from a limit of 0: set in the
    // reference's order (the low-water mark first), the mark could not
    // exceed the limit of 0 and stayed there.
    for start in [None, Some("0")] {
        if let Some(v) = start {
            for n in names {
                c.query_drop(format!("SET GLOBAL {n} = {v}")).unwrap();
            }
        }
        let before: Vec<String> = names.iter().map(|n| global(&mut c, n)).collect();
        // Watch the settings while the step runs.
        let seen = std::thread::scope(|s| {
            let watcher = s.spawn(|| {
                let mut c = mysql::Conn::new(mysql::Opts::from_url(&mysql_admin()).unwrap()).unwrap();
                let start = Instant::now();
                let mut seen = Vec::new();
                while start.elapsed() < Duration::from_secs(20) && seen.len() < 2 {
                    let now: Vec<String> = names.iter().map(|n| global(&mut c, n)).collect();
                    // First the reference's limits, then the settings as they were.
                    let lowered = seen.is_empty() && now.iter().all(|v| v.starts_with("1."));
                    if lowered || (!seen.is_empty() && now == before) {
                        seen.push(now);
                    }
                    std::thread::sleep(Duration::from_millis(20));
                }
                seen
            });
            let (_dir, out) = compat_run(&db, &["l.i0", "wait"], json!({"wait_seconds": 3.0}));
            let wait = step(&out, "wait");
            assert!(
                (3.0..4.0).contains(&wait.elapsed_s),
                "the step lasted {} s",
                wait.elapsed_s
            );
            watcher.join().unwrap()
        });
        assert_eq!(
            seen.len(),
            2,
            "from {before:?}: the limits went to 1 during the wait, then back: {seen:?}"
        );
        let after: Vec<String> = names.iter().map(|n| global(&mut c, n)).collect();
        assert_eq!(after, before, "restored");
    }
}

/// Sum of MyRocks' compactions done (every level of every column family).
fn compactions(c: &mut mysql::Conn) -> f64 {
    c.query_first::<f64, _>(
        "SELECT COALESCE(SUM(value), 0) FROM information_schema.ROCKSDB_COMPACTION_STATS WHERE type = 'CompCount' AND level = 'Sum'",
    )
    .unwrap()
    .unwrap_or(0.0)
}

#[test]
fn myrocks_wait_ends_only_when_no_compaction_is_running() {
    if !reachable("mariadbd", std::path::Path::new("/usr/sbin/mariadbd").exists()) {
        return;
    }
    // Small memtables and files: loading makes compactions, and a full
    // manual compaction takes seconds.
    let server = Managed::start(&ServerSpec {
        kind: Kind::Mariadb,
        bin: None,
        config: "plugin-load-add = ha_rocksdb.so\nrocksdb_default_cf_options = write_buffer_size=256k;level0_file_num_compaction_trigger=2;target_file_size_base=256k;max_bytes_for_level_base=1m".into(),
        work_dir: std::env::temp_dir(),
        keep_data: false,
    })
    .unwrap();
    let db = format!("{}?engine=rocksdb", server.dsn());
    let dir = tempfile::tempdir().unwrap();
    let load = config(json!({"db": db, "steps": ["l.i0"], "rows_l_i0": 400_000, "data_length": [100, 200]}));
    let loaded = run(&load, dir.path());
    assert_eq!(loaded.results.run.status, RunStatus::Ok);
    eprintln!("load {:.1} s", step(&loaded, "l.i0").elapsed_s);
    let mut c = mysql::Conn::new(mysql::Opts::from_url(&server.dsn()).unwrap()).unwrap();
    for maintenance in ["ibench", "iibench"] {
        // A full compaction of the column family, running when the wait step starts.
        let dsn = server.dsn();
        let compacting = std::thread::spawn(move || {
            let mut c = mysql::Conn::new(mysql::Opts::from_url(&dsn).unwrap()).unwrap();
            c.query_drop("SET GLOBAL rocksdb_compact_cf = 'default'").unwrap();
            ibench::metrics::unix_micros()
        });
        std::thread::sleep(Duration::from_millis(300));
        let dir = tempfile::tempdir().unwrap();
        let wait = config(json!({
            "db": db, "steps": ["wait"], "maintenance": maintenance, "wait_seconds": 0.0, "verify": "off",
        }));
        let out = run(&wait, dir.path());
        assert_eq!(out.results.run.status, RunStatus::Ok, "{:?}", out.results.run.error);
        let step = step(&out, "wait");
        eprintln!(
            "{maintenance}: wait {:.1} s, warnings {:?}",
            step.elapsed_s, out.results.run.warnings
        );
        let ended = step.started_at_us + (step.elapsed_s * 1e6) as i64;
        let compacted = compacting.join().unwrap();
        assert!(
            compacted <= ended,
            "{maintenance}: the wait ended {} ms before the compaction did",
            (compacted - ended) / 1000
        );
        // Nothing still running: no compaction completes in the next seconds.
        let done = compactions(&mut c);
        std::thread::sleep(Duration::from_secs(2));
        assert_eq!(
            compactions(&mut c),
            done,
            "{maintenance}: a compaction was still running"
        );
    }
    server.stop(None).unwrap();
}
