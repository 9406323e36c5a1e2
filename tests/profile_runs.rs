//! `profile = "perf"` in runs: each step's CPU profiles in profiles.parquet
//! (and what was sampled in profiled.parquet), whose CPU per operation
//! matches the step's measured CPU per operation; the null connector's burn
//! as a known answer (`profile_client`); PostgreSQL's and MariaDB's
//! functions resolved; and a run without perf that warns once and goes on.

mod common;

use common::{config, reachable, run, step};
use ibench::results::{ProfileRow, RunStatus};
use serde_json::json;

/// One profiled run at a time: ibench profiles its own process, this test
/// binary, and the machine has two cores.
static SERIAL: std::sync::Mutex<()> = std::sync::Mutex::new(());

/// Whether perf can sample here; outside CI a test without it is skipped.
fn perf_samples() -> bool {
    match ibench::profile::Profiler::check() {
        Ok(_) => true,
        Err(e) => reachable(&format!("perf ({e})"), false),
    }
}

fn run_ok(params: serde_json::Value) -> (tempfile::TempDir, ibench::exec::RunOutcome) {
    let dir = tempfile::tempdir().unwrap();
    let out = run(&config(params), dir.path());
    assert_eq!(out.results.run.status, RunStatus::Ok, "{:?}", out.results.run.error);
    (dir, out)
}

fn profile<'a>(out: &'a ibench::exec::RunOutcome, step: &str, role: &str) -> &'a ProfileRow {
    let found = out.results.profiles.iter().find(|p| p.step == step && p.role == role);
    found.unwrap_or_else(|| panic!("no {role} profile of {step}; warnings: {:?}", out.results.run.warnings))
}

/// The profile's CPU µs per operation (samples ÷ frequency ÷ ops) against
/// the measured `cpu_s` per operation: their ratio, and the ratio's sampling
/// error (a count of n samples is off by about √n).
fn per_op_ratio(p: &ProfileRow, ops: u64, cpu_s: f64) -> (f64, f64) {
    let profiled = p.profile.samples as f64 / p.profile.frequency_hz as f64 / ops as f64;
    let measured = cpu_s / ops as f64;
    let ratio = profiled / measured;
    eprintln!(
        "{} {}: {} samples, {:.1} µs/op profiled, {:.1} µs/op measured: {ratio:.3}; unresolved {:.1}%, perf {:.3}% of the CPU",
        p.step,
        p.role,
        p.profile.samples,
        profiled * 1e6,
        measured * 1e6,
        100.0 * p.profile.unresolved_frames_share,
        100.0 * p.profile.perf_share().unwrap_or(f64::NAN),
    );
    (ratio, 1.0 / (p.profile.samples.max(1) as f64).sqrt())
}

fn top(p: &ProfileRow) -> String {
    let stacks = p.stacks.iter().take(8);
    stacks
        .map(|s| format!("{:6} {} {}\n", s.samples, s.role, s.stack))
        .collect()
}

#[test]
fn the_null_connector_s_burn_dominates_the_client_profile_and_sums_to_the_measured_cpu() {
    if !perf_samples() {
        return;
    }
    let _serial = SERIAL.lock().unwrap_or_else(|p| p.into_inner());
    let (_dir, out) = run_ok(json!({
        "db": "null:?cpu=1ms", "steps": ["l.i0"], "rows_l_i0": 2500, "rows_per_commit_l_i0": 1,
        "profile": "perf", "profile_client": true,
    }));
    let p = profile(&out, "l.i0", "client");
    let row = step(&out, "l.i0");
    assert_eq!(p.profile.pids, [std::process::id() as i32]);
    assert_eq!(p.profile.frequency_hz, 99);
    let burning = p.samples_with(|f| f.ends_with("burn_cpu")) as f64 / p.profile.samples as f64;
    assert!(burning > 0.8, "burn_cpu in {burning:.2} of samples\n{}", top(p));
    let (ratio, error) = per_op_ratio(p, row.cost_ops.unwrap(), row.system.client_cpu_s.unwrap());
    assert!((ratio - 1.0).abs() < 3.0 * error + 0.03, "{ratio:.3} ± {error:.3}");
    // The files hold it: a row per stack, and what was sampled.
    let stacks = out.results.profiles_batch().unwrap();
    assert_eq!(stacks.num_rows(), p.stacks.len());
    let sampled = out.results.profiled_batch().unwrap();
    assert_eq!(sampled.num_rows(), 1);
    assert!(out.dir.join("profiles.parquet").is_file() && out.dir.join("profiled.parquet").is_file());
}

/// An l.i0 of `rows` rows on `db` with `profile = "perf"`: the server's
/// profile names each of `functions` and sums to the server's measured CPU
/// per operation within the sampling error. None (skipped) without perf
/// or the server, outside CI.
fn server_profile_resolves(db: Option<String>, rows: u64, functions: &[&str]) -> Option<ibench::exec::RunOutcome> {
    if !perf_samples() {
        return None;
    }
    let db = db?;
    let _serial = SERIAL.lock().unwrap_or_else(|p| p.into_inner());
    let (_dir, out) = run_ok(json!({"db": db, "steps": ["l.i0"], "rows_l_i0": rows, "profile": "perf"}));
    let p = profile(&out, "l.i0", "server");
    for function in functions {
        let n = p.samples_with(|f| f == *function);
        assert!(n > 0, "{function} not in the stacks\n{}", top(p));
    }
    let row = step(&out, "l.i0");
    let (ratio, error) = per_op_ratio(p, row.cost_ops.unwrap(), row.system.server_cpu_s.unwrap());
    // /proc counts the server's CPU in 10 ms ticks per process.
    assert!((ratio - 1.0).abs() < 3.0 * error + 0.05, "{ratio:.3} ± {error:.3}");
    Some(out)
}

#[test]
fn a_postgresql_run_profiles_the_server_whose_functions_resolve_and_sum_to_its_cpu() {
    // Debian's server is stripped: its exported functions resolve (its
    // static ones, ExecInsert among them, do not).
    let functions = [
        "standard_ExecutorRun",
        "heap_insert",
        "ExecInsertIndexTuples",
        "XLogInsert",
    ];
    let db = common::postgres_db("ibench_profile");
    if let Some(out) = server_profile_resolves(db, 500_000, &functions) {
        let roles: Vec<&str> = out.results.profiles.iter().map(|p| p.role).collect();
        assert!(
            roles.iter().all(|r| *r == "server"),
            "no client profile without profile_client: {roles:?}"
        );
    }
}

#[test]
fn a_mariadb_run_profiles_the_server_whose_functions_resolve() {
    let functions = [
        "dispatch_command",
        "mysql_execute_command",
        "mysql_insert",
        "handler::ha_write_row",
    ];
    let db = common::mysql_db("ibench_profile").map(|db| format!("{db}?engine=innodb"));
    server_profile_resolves(db, 200_000, &functions);
}

#[test]
fn without_perf_a_run_warns_once_before_its_first_step_and_goes_on() {
    let dir = tempfile::tempdir().unwrap();
    let out = std::process::Command::new(env!("CARGO_BIN_EXE_ibench"))
        .current_dir(dir.path())
        .env("PATH", dir.path()) // no perf there
        .args(["run", "--db", "null:", "--steps", "l.i0,l.i1", "--rows-l-i0", "200"])
        .args(["--rows-l-i1", "200", "--profile", "perf", "--profile-client", "--quiet"])
        .output()
        .unwrap();
    let said = String::from_utf8_lossy(&out.stderr);
    assert!(out.status.success(), "{said}");
    let warning =
        "profile = perf: no CPU profile: perf is not on PATH; install it (Debian: apt-get install linux-perf)";
    assert_eq!(said.matches(warning).count(), 1, "{said}");
}
