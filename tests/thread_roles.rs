//! Each step's CPU by thread role, on real servers: the database's
//! foreground (the threads serving ibench's connections) and its named
//! background roles add up to its measured CPU within 3% (threads.parquet,
//! steps' fg_cpu_s and bg_cpu_s), and with `profile = "perf"` so does the
//! profile, whose stacks carry their threads' roles: PostgreSQL, MariaDB
//! with and without performance_schema, MySQL 9.7, embedded RocksDB.

mod common;

use common::{config, private_server, reachable, run, step};
use ibench::exec::RunOutcome;
use ibench::metrics::{Side, ThreadKind, ThreadRow};
use ibench::results::RunStatus;
use serde_json::{json, Value};
use std::path::Path;

/// One measured run at a time: the machine has two cores.
static SERIAL: std::sync::Mutex<()> = std::sync::Mutex::new(());

/// Whether perf can sample here; outside CI a test without it is skipped.
fn perf_samples() -> bool {
    match ibench::profile::Profiler::check() {
        Ok(_) => true,
        Err(e) => reachable(&format!("perf ({e})"), false),
    }
}

/// A run of `params` on `db`, which must end ok.
fn run_ok(db: &str, params: Value) -> (tempfile::TempDir, RunOutcome) {
    let dir = tempfile::tempdir().unwrap();
    let mut params = params;
    params["db"] = json!(db);
    let out = run(&config(params), dir.path());
    assert_eq!(out.results.run.status, RunStatus::Ok, "{:?}", out.results.run.error);
    (dir, out)
}

/// `step`'s thread rows.
fn threads<'a>(out: &'a RunOutcome, name: &str) -> Vec<&'a ThreadRow> {
    out.results
        .threads
        .iter()
        .filter(|(s, _)| s == name)
        .map(|(_, t)| t)
        .collect()
}

/// The step's `side` threads of a known role (everything but `ended`)
/// against the side's measured CPU: within 3%, with its foreground doing
/// at least `fg_share` of it. Returns the roles seen, by kind.
fn adds_up(out: &RunOutcome, name: &str, side: Side, fg_share: f64) -> Vec<(ThreadKind, String, f64)> {
    let row = step(out, name);
    let measured = match side {
        Side::Server => row.system.server_cpu_s,
        Side::Client => row.system.client_cpu_s,
    }
    .expect("the side's CPU is measured");
    let rows: Vec<&ThreadRow> = threads(out, name).into_iter().filter(|t| t.side == side).collect();
    let named: f64 = rows
        .iter()
        .filter(|t| t.kind != ThreadKind::Ended)
        .map(|t| t.cpu_s)
        .sum();
    let table: String = rows
        .iter()
        .map(|t| {
            format!(
                "  {:10} {:40} {:3} {:.3} s\n",
                t.kind.name(),
                t.role,
                t.threads,
                t.cpu_s
            )
        })
        .collect();
    eprintln!("{name} {side:?}: measured {measured:.3} s, named threads {named:.3} s\n{table}");
    assert!(
        measured > 1.0,
        "too little CPU to compare at 3%: {measured:.3} s\n{table}"
    );
    assert!(
        (named / measured - 1.0).abs() < 0.03,
        "{name}: threads {named:.3} s against the measured {measured:.3} s\n{table}"
    );
    let all: f64 = rows.iter().map(|t| t.cpu_s).sum();
    assert!((all - measured).abs() < 1e-6, "with `ended` the rows add up exactly");
    let fg: f64 = rows
        .iter()
        .filter(|t| t.kind == ThreadKind::Foreground)
        .map(|t| t.cpu_s)
        .sum();
    assert!(fg > fg_share * measured, "{name}: the foreground's share\n{table}");
    if side == Side::Server {
        let (f, b) = (row.fg_cpu_s.unwrap(), row.bg_cpu_s.unwrap());
        assert!((f - fg).abs() < 1e-9, "steps.fg_cpu_s is the foreground's");
        let bg: f64 = rows
            .iter()
            .filter(|t| t.kind == ThreadKind::Background)
            .map(|t| t.cpu_s)
            .sum();
        assert!((b - bg).abs() < 1e-9, "steps.bg_cpu_s is the background's");
    }
    rows.iter().map(|t| (t.kind, t.role.clone(), t.cpu_s)).collect()
}

/// The step's `role` (`server`, `client`) profile: its stacks' CPU adds up
/// to the side's measured CPU within 3%, each stack carries its threads'
/// kind, and the foreground's stacks are at least `fg_share` of it.
fn profile_adds_up(out: &RunOutcome, name: &str, role: &str, measured: f64, fg_share: f64) {
    let p = out.results.profiles.iter().find(|p| p.step == name && p.role == role);
    let p = p.unwrap_or_else(|| panic!("no {role} profile of {name}: {:?}", out.results.run.warnings));
    let profiled: f64 = p.stacks.iter().map(|s| s.cpu_s).sum();
    let coverage = p.sample_coverage().unwrap();
    eprintln!(
        "{name} {role} profile: {} samples, {profiled:.3} s against {measured:.3} s; the samples saw {:.1}% of their threads' CPU",
        p.profile.samples,
        100.0 * coverage
    );
    assert!(p.profile.samples > 1000, "enough samples for 3%: {}", p.profile.samples);
    assert!(
        (profiled / measured - 1.0).abs() < 0.03,
        "{name}: the profile's {profiled:.3} s against the measured {measured:.3} s"
    );
    let fg = p.cpu_of(ThreadKind::Foreground);
    assert!(
        fg > fg_share * profiled,
        "the foreground's stacks: {fg:.3} of {profiled:.3} s"
    );
    assert!((0.8..1.2).contains(&coverage), "{coverage}");
}

/// The roles of `kind` seen with CPU.
fn busy(roles: &[(ThreadKind, String, f64)], kind: ThreadKind) -> Vec<String> {
    roles
        .iter()
        .filter(|r| r.0 == kind && r.2 > 0.0)
        .map(|r| r.1.clone())
        .collect()
}

/// sysbench's load, then `step` on `db` for `seconds`, profiled at 999 Hz.
fn sysbench(db: &str, step: &str, seconds: u32) -> (tempfile::TempDir, RunOutcome) {
    run_ok(
        db,
        json!({
            "preset": "sysbench-quick", "steps": ["load", step], "table_size": 20_000,
            "read_seconds": seconds, "write_seconds": seconds,
            "profile": "perf", "profile_frequency": 999,
        }),
    )
}

#[test]
fn postgresql_backends_and_its_named_processes_add_up_to_the_server_s_cpu() {
    let Some(db) = common::postgres_db("ibench_threads") else {
        return;
    };
    if !perf_samples() {
        return;
    }
    let _serial = SERIAL.lock().unwrap_or_else(|p| p.into_inner());
    // A commit per event: the WAL writer and the backends' WAL flushes busy.
    let (_dir, out) = sysbench(&db, "update-index", 8);
    let roles = adds_up(&out, "update-index", Side::Server, 0.8);
    assert_eq!(busy(&roles, ThreadKind::Foreground), ["client backend"], "{roles:?}");
    let background: Vec<String> = roles
        .iter()
        .filter(|r| r.0 == ThreadKind::Background)
        .map(|r| r.1.clone())
        .collect();
    for named in ["checkpointer", "walwriter", "background writer"] {
        assert!(background.iter().any(|r| r == named), "{named} in {background:?}");
    }
    assert_eq!(busy(&roles, ThreadKind::Monitor), ["ibench monitor"], "{roles:?}");
    let measured = step(&out, "update-index").system.server_cpu_s.unwrap();
    profile_adds_up(&out, "update-index", "server", measured, 0.8);
    let p = out.results.profiles.iter().find(|p| p.step == "update-index").unwrap();
    let backends = p.stacks.iter().filter(|s| s.role == "client backend");
    assert!(
        backends.clone().all(|s| s.stack.starts_with("postgres;")),
        "stacks start at the thread's name"
    );
    let flushing: u64 = backends
        .filter(|s| s.stack.contains("XLogFlush"))
        .map(|s| s.samples)
        .sum();
    assert!(flushing > 0, "the backends flush the WAL at each commit");
}

/// A private MariaDB with `config`, on InnoDB.
fn mariadb(config: &str) -> Option<ibench::server::Managed> {
    let ok = std::path::Path::new("/usr/sbin/mariadbd").exists();
    reachable("mariadbd (/usr/sbin/mariadbd)", ok).then(|| private_server(ibench::server::Kind::Mariadb, config.into()))
}

fn innodb(server: &ibench::server::Managed) -> String {
    format!("{}?engine=innodb", server.dsn())
}

#[test]
fn mariadb_connections_and_innodb_s_named_threads_add_up_with_performance_schema() {
    if !perf_samples() {
        return;
    }
    let Some(server) = mariadb("performance_schema = ON\ninnodb_flush_log_at_trx_commit = 1\n") else {
        return;
    };
    let _serial = SERIAL.lock().unwrap_or_else(|p| p.into_inner());
    let (_dir, out) = sysbench(&innodb(&server), "update-index", 8);
    let roles = adds_up(&out, "update-index", Side::Server, 0.8);
    assert_eq!(busy(&roles, ThreadKind::Foreground), ["connection"], "{roles:?}");
    let background: Vec<String> = roles
        .iter()
        .filter(|r| r.0 == ThreadKind::Background)
        .map(|r| r.1.clone())
        .collect();
    assert!(
        background.iter().any(|r| r.starts_with("innodb/")),
        "InnoDB's threads by name: {background:?}"
    );
    assert_eq!(busy(&roles, ThreadKind::Monitor), ["ibench monitor"], "{roles:?}");
    let measured = step(&out, "update-index").system.server_cpu_s.unwrap();
    profile_adds_up(&out, "update-index", "server", measured, 0.8);
}

#[test]
fn mariadb_without_performance_schema_still_tells_its_connections_from_the_rest() {
    if !perf_samples() {
        return;
    }
    let Some(server) = mariadb("performance_schema = OFF\n") else {
        return;
    };
    let _serial = SERIAL.lock().unwrap_or_else(|p| p.into_inner());
    let (_dir, out) = sysbench(&innodb(&server), "point-query", 6);
    let roles = adds_up(&out, "point-query", Side::Server, 0.8);
    // The processlist's thread ids: the connections, and ibench's own.
    assert_eq!(busy(&roles, ThreadKind::Foreground), ["connection"], "{roles:?}");
    assert_eq!(busy(&roles, ThreadKind::Monitor), ["ibench monitor"], "{roles:?}");
    let measured = step(&out, "point-query").system.server_cpu_s.unwrap();
    profile_adds_up(&out, "point-query", "server", measured, 0.8);
}

/// MySQL 9.7 as ../shared/tools/db-versions.sh installs it (.ci/services).
const MYSQL97: &str = "/opt/myversions/9.7/sbin";

#[test]
fn mysql_9_7_connections_and_its_named_threads_add_up() {
    let installed = Path::new(MYSQL97).is_dir();
    if !reachable(
        &format!("MySQL 9.7 ({MYSQL97}, ../shared/tools/db-versions.sh)"),
        installed,
    ) || !perf_samples()
    {
        return;
    }
    let spec = ibench::server::ServerSpec {
        kind: ibench::server::Kind::Mysql,
        bin: Some(MYSQL97.into()),
        config: String::new(),
        work_dir: std::env::temp_dir(),
        keep_data: false,
    };
    let server = ibench::server::Managed::start(&spec).expect("a private MySQL 9.7");
    let _serial = SERIAL.lock().unwrap_or_else(|p| p.into_inner());
    let (_dir, out) = sysbench(&innodb(&server), "update-index", 8);
    let roles = adds_up(&out, "update-index", Side::Server, 0.8);
    assert_eq!(busy(&roles, ThreadKind::Foreground), ["connection"], "{roles:?}");
    let background: Vec<String> = busy(&roles, ThreadKind::Background);
    assert!(
        background.iter().any(|r| r == "innodb/srv_purge_thread"),
        "InnoDB's purge (of the index entries update-index leaves behind), by name: {background:?}"
    );
    let measured = step(&out, "update-index").system.server_cpu_s.unwrap();
    profile_adds_up(&out, "update-index", "server", measured, 0.8);
}

#[cfg(feature = "rocksdb")]
#[test]
fn embedded_rocksdb_s_writers_and_its_pools_add_up_to_ibench_s_cpu() {
    if !perf_samples() {
        return;
    }
    let _serial = SERIAL.lock().unwrap_or_else(|p| p.into_inner());
    let dir = tempfile::tempdir().unwrap();
    // Small memtables and L0 files: flushes and compactions all along, and
    // after the writes the compaction overwriteandwait waits for, which its
    // profile covers as its threads' CPU does (the samples then see all of it).
    let db = format!(
        "rocksdb:{}?write_buffer_size=1M&target_file_size_base=1M&max_bytes_for_level_base=4M",
        dir.path().join("db").display()
    );
    let (_out_dir, out) = run_ok(
        &db,
        json!({
            "preset": "kv-quick", "steps": ["fillrandom", "overwriteandwait"], "num": 100_000, "duration": 5,
            "value_size": 400, "profile": "perf", "profile_client": true, "profile_frequency": 999,
        }),
    );
    let roles = adds_up(&out, "overwriteandwait", Side::Client, 0.1);
    assert_eq!(busy(&roles, ThreadKind::Foreground), ["ibench workers"], "{roles:?}");
    let pools = busy(&roles, ThreadKind::Background);
    assert!(
        pools.iter().any(|r| r == "rocksdb:low"),
        "compactions on the low pool: {pools:?}"
    );
    assert!(
        pools.iter().any(|r| r == "rocksdb:high"),
        "flushes on the high pool: {pools:?}"
    );
    let row = step(&out, "overwriteandwait");
    let (f, b) = (row.fg_cpu_s.unwrap(), row.bg_cpu_s.unwrap());
    assert!(
        f > 0.0 && b > 0.0,
        "an embedded engine's split is ibench's own threads': {f} {b}"
    );
    profile_adds_up(
        &out,
        "overwriteandwait",
        "client",
        row.system.client_cpu_s.unwrap(),
        0.1,
    );
    let compacting = out
        .results
        .profiles
        .iter()
        .find(|p| p.step == "overwriteandwait")
        .unwrap();
    let low: f64 = compacting
        .stacks
        .iter()
        .filter(|s| s.role == "rocksdb:low")
        .map(|s| s.cpu_s)
        .sum();
    assert!(
        low > 0.2 * b,
        "the low pool's stacks carry its CPU: {low:.3} of {b:.3} s"
    );
}
