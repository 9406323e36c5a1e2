//! The Insert Benchmark against real servers: PostgreSQL, MariaDB with
//! InnoDB and with MyRocks (the RocksDB engine). Servers come from
//! IBENCH_POSTGRES / IBENCH_MYSQL (DSNs of an admin account) or default to
//! the local ones. Outside CI a missing server skips a test with a note; in
//! CI (CI=true) it fails.

mod common;

use common::{config, mysql_admin, mysql_db, postgres_admin, postgres_db, reachable, run, step};
use ibench::results::{RunStatus, StepStatus};
use serde_json::json;
use std::time::{Duration, Instant};

/// The quick sequence, small, 2 clients, delete_per_insert: every step ok and verified.
fn quick_sequence(db: &str) {
    let dir = tempfile::tempdir().unwrap();
    let c = config(json!({
        "db": db, "clients": 2, "delete_per_insert": true,
        "rows_l_i0": 5000, "rows_l_i1": 1000, "rows_l_i2": 200,
        "query_seconds": 1.0, "wait_seconds": 0.5,
    }));
    let out = run(&c, dir.path());
    assert_eq!(out.results.run.status, RunStatus::Ok, "{:?}", out.results.run.error);
    for s in &out.results.steps {
        assert_eq!(s.status, StepStatus::Ok, "{}: {:?}", s.step, s.error);
        if s.step != "l.x" && s.step != "wait" {
            assert_eq!(s.verified, Some(true), "{}: {:?}", s.step, s.verify_error);
        }
    }
    assert_eq!(
        step(&out, "qp1000").live_rows,
        10_000,
        "deletes kept the tables at their l.i0 size"
    );
    assert!(!out.results.run.dbms_version.is_empty());
    assert!(out.results.steps.iter().all(|s| s.db_size_bytes.is_some()));
}

#[test]
fn postgres_runs_the_quick_sequence_with_verify_passing() {
    if let Some(db) = postgres_db("ibench_seq").filter(|d| !d.is_empty()) {
        quick_sequence(&db);
    }
}

#[test]
fn mariadb_innodb_runs_the_quick_sequence_with_verify_passing() {
    if let Some(db) = mysql_db("ibench_innodb").filter(|d| !d.is_empty()) {
        quick_sequence(&format!("{db}?engine=innodb"));
    }
}

#[test]
fn mariadb_myrocks_runs_the_quick_sequence_with_verify_passing() {
    if let Some(db) = mysql_db("ibench_rocksdb").filter(|d| !d.is_empty()) {
        quick_sequence(&format!("{db}?engine=rocksdb"));
    }
}

#[test]
fn an_unreachable_server_is_an_error_within_seconds_naming_host_and_port() {
    for dsn in ["postgres://postgres@127.0.0.1:1/x", "mysql://root@127.0.0.1:1/x"] {
        let started = Instant::now();
        let e = ibench::connect::open(dsn).err().expect("an error").to_string();
        assert!(
            started.elapsed() < Duration::from_secs(6),
            "{dsn}: {:?}",
            started.elapsed()
        );
        assert!(e.contains("127.0.0.1:1"), "{dsn}: {e}");
    }
}

#[test]
fn bad_credentials_name_the_user_and_never_the_password() {
    let pg = postgres_admin();
    let host = pg.split('@').nth(1).unwrap();
    if reachable("PostgreSQL", postgres::Client::connect(&pg, postgres::NoTls).is_ok()) {
        let e = ibench::connect::open(&format!("postgres://no_such_user:s3cret-pw@{host}"))
            .err()
            .unwrap()
            .to_string();
        assert!(e.contains("no_such_user") && !e.contains("s3cret-pw"), "{e}");
    }
    let my = mysql_admin();
    let (scheme_user, rest) = my.split_once('@').unwrap();
    let user = scheme_user.trim_start_matches("mysql://").split(':').next().unwrap();
    if reachable("MariaDB", mysql::Conn::new(mysql::Opts::from_url(&my).unwrap()).is_ok()) {
        let e = ibench::connect::open(&format!("mysql://{user}:s3cret-pw@{rest}"))
            .err()
            .unwrap()
            .to_string();
        assert!(e.contains(user) && !e.contains("s3cret-pw"), "{e}");
    }
}

/// Starts a long l.i0 in the background, kills its insert connection with
/// `kill`, and checks the step ended in error with the server's message.
fn killed_connection_ends_the_step(db: String, kill: impl Fn() -> bool) {
    let dir = tempfile::tempdir().unwrap();
    let out_dir = dir.path().to_owned();
    let c = config(json!({"db": db, "steps": ["l.i0", "l.i1"], "rows_l_i0": 50_000_000, "rows_per_commit_l_i0": 10}));
    let runner = std::thread::spawn(move || run(&c, &out_dir));
    let started = Instant::now();
    // Not the very first insert: the step must have inserted something before the kill.
    std::thread::sleep(Duration::from_millis(500));
    while !kill() {
        assert!(
            started.elapsed() < Duration::from_secs(30),
            "never saw the insert connection"
        );
        std::thread::sleep(Duration::from_millis(100));
    }
    let out = runner.join().unwrap();
    assert!(started.elapsed() < Duration::from_secs(60), "a thread hung");
    assert_eq!(out.results.run.status, RunStatus::Error);
    let s = step(&out, "l.i0");
    assert_eq!(s.status, StepStatus::Error);
    assert!(s.inserts > 0);
    assert!(s.error.as_deref().unwrap_or("").len() > 10, "{:?}", s.error);
    assert!(out.dir.join("steps.parquet").is_file());
}

#[test]
fn a_postgres_connection_killed_mid_step_ends_the_step_with_the_servers_message() {
    let Some(db) = postgres_db("ibench_kill").filter(|d| !d.is_empty()) else {
        return;
    };
    let admin = postgres_admin();
    killed_connection_ends_the_step(db, move || {
        let mut c = postgres::Client::connect(&admin, postgres::NoTls).unwrap();
        let killed = c
            .query(
                "SELECT pg_terminate_backend(pid) FROM pg_stat_activity
                 WHERE datname = 'ibench_kill' AND application_name LIKE 'ibench %' AND query LIKE 'INSERT%'",
                &[],
            )
            .unwrap();
        !killed.is_empty()
    });
}

#[test]
fn a_mariadb_connection_killed_mid_step_ends_the_step_with_the_servers_message() {
    use mysql::prelude::Queryable;
    let Some(db) = mysql_db("ibench_kill").filter(|d| !d.is_empty()) else {
        return;
    };
    let admin = mysql_admin();
    killed_connection_ends_the_step(db, move || {
        let mut c = mysql::Conn::new(mysql::Opts::from_url(&admin).unwrap()).unwrap();
        let ids: Vec<u64> = c
            .query("SELECT id FROM information_schema.processlist WHERE db = 'ibench_kill' AND info LIKE 'INSERT%'")
            .unwrap();
        for id in &ids {
            let _ = c.query_drop(format!("KILL CONNECTION {id}"));
        }
        !ids.is_empty()
    });
}

#[test]
fn postgres_accepts_the_key_value_dsn_form() {
    if !reachable(
        "PostgreSQL",
        postgres::Client::connect(&postgres_admin(), postgres::NoTls).is_ok(),
    ) {
        return;
    }
    let c = ibench::connect::open("host=127.0.0.1 port=5432 user=postgres password=kv-secret dbname=postgres").unwrap();
    assert_eq!(c.dbms(), "postgres");
    assert!(!c.target().contains("kv-secret"), "{}", c.target());
    assert!(c.version().unwrap().starts_with(|ch: char| ch.is_ascii_digit()));
    // Any keyword may come first, as in libpq (only eight were recognised).
    let c =
        ibench::connect::open("connect_timeout=10 application_name=kv host=127.0.0.1 user=postgres dbname=postgres")
            .unwrap_or_else(|e| panic!("{e}"));
    assert_eq!(c.dbms(), "postgres");
}

/// l.i0 on a local server: its CPU is measured, non-zero, and not the client's.
fn server_cpu_is_attributed_to_the_server(db: &str) {
    let dir = tempfile::tempdir().unwrap();
    let c = config(json!({"db": db, "steps": ["l.i0"], "rows_l_i0": 100_000}));
    let out = run(&c, dir.path());
    let s = step(&out, "l.i0");
    let costs = s.costs();
    let (client, server) = (costs[1].unwrap(), costs[2].expect("the local server's CPU is measured"));
    assert!(server > 0.0 && client > 0.0, "client {client} server {server}");
    assert!(
        server > client,
        "{db}: the server's {server} µs per insert is not counted as the client's {client}"
    );
    assert!(s.system.server_rss.unwrap() > 1_000_000, "server RSS");
}

#[test]
fn postgres_server_cpu_is_measured_apart_from_the_client() {
    if let Some(db) = postgres_db("ibench_cpu").filter(|d| !d.is_empty()) {
        server_cpu_is_attributed_to_the_server(&db);
    }
}

#[test]
fn mariadb_server_cpu_is_measured_apart_from_the_client() {
    if let Some(db) = mysql_db("ibench_cpu").filter(|d| !d.is_empty()) {
        server_cpu_is_attributed_to_the_server(&db);
    }
}

/// The server's main process, as its own pid file names it (read as root,
/// as CI runs): the PostgreSQL connector finds it from its backend's parent,
/// the MySQL one from `@@pid_file`, or else from the server's uptime.
#[test]
fn the_servers_main_process_is_found() {
    use ibench::metrics::{started_ago, ServerProcesses};
    use mysql::prelude::Queryable;
    let first_line = |path: &str| -> i32 {
        let text = std::fs::read_to_string(path).unwrap_or_else(|e| panic!("{path}: {e}"));
        text.lines().next().unwrap().trim().parse().unwrap()
    };
    let admin = postgres_admin();
    if let Ok(mut pg) = postgres::Client::connect(&admin, postgres::NoTls) {
        let dir: String = pg.query_one("SHOW data_directory", &[]).unwrap().get(0);
        let postmaster = first_line(&format!("{dir}/postmaster.pid"));
        assert_eq!(ibench::connect::open(&admin).unwrap().server_pid(), Some(postmaster));
        let server = ServerProcesses {
            names: vec!["postgres"],
            root: Some(postmaster),
        };
        assert!(server.read().0.unwrap() > 0.0);
    } else {
        reachable("PostgreSQL", false);
    }
    let admin = mysql_admin();
    if let Ok(mut my) = mysql::Conn::new(mysql::Opts::from_url(&admin).unwrap()) {
        let file: String = my.query_first("SELECT @@pid_file").unwrap().unwrap();
        let mysqld = first_line(&file);
        assert_eq!(ibench::connect::open(&admin).unwrap().server_pid(), Some(mysqld));
        let (_, uptime): (String, String) = my.query_first("SHOW GLOBAL STATUS LIKE 'Uptime'").unwrap().unwrap();
        assert_eq!(
            started_ago(&["mariadbd", "mysqld"], uptime.parse().unwrap()),
            Some(mysqld)
        );
    } else {
        reachable("MariaDB", false);
    }
}

/// A short run on `db` and the server setting `name` it recorded.
fn recorded_setting(db: &str, name: &str) -> (ibench::exec::RunOutcome, Option<ibench::metrics::Setting>) {
    let dir = tempfile::tempdir().unwrap();
    let out = run(
        &config(json!({"db": db, "steps": ["l.i0"], "rows_l_i0": 100})),
        dir.path(),
    );
    let found = out
        .results
        .config
        .iter()
        .find(|s| s.scope == "server" && s.name == name)
        .cloned();
    (out, found)
}

#[test]
fn server_settings_are_captured_with_the_run() {
    let mut checked = 0;
    if let Some(db) = postgres_db("ibench_cfg").filter(|d| !d.is_empty()) {
        let (out, shared) = recorded_setting(&db, "shared_buffers");
        let shared = shared.expect("shared_buffers captured");
        assert!(
            shared.value.ends_with("8kB") && shared.source.starts_with("pg_settings"),
            "{shared:?}"
        );
        let few_cpus = std::thread::available_parallelism().unwrap().get() <= 4;
        assert_eq!(out.results.run.warnings.iter().any(|w| w.contains("share")), few_cpus);
        checked += 1;
    }
    if let Some(db) = mysql_db("ibench_cfg").filter(|d| !d.is_empty()) {
        let (out, pool) = recorded_setting(&db, "innodb_buffer_pool_size");
        assert!(pool.unwrap().value.parse::<u64>().unwrap() > 0);
        let flush = out
            .results
            .config
            .iter()
            .find(|s| s.name == "innodb_flush_method")
            .expect("captured");
        assert!(!flush.value.is_empty());
        assert!(
            out.results
                .config
                .iter()
                .any(|s| s.name == "data_device" && !s.value.is_empty()),
            "datadir located"
        );
        checked += 1;
    }
    assert!(checked > 0 || std::env::var("CI").as_deref() != Ok("true"));
}
