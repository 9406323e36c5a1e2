//! CPU profiles with perf (`ibench::profile`): known programs whose burning
//! function must dominate, real servers whose functions must resolve, and
//! the paths where perf is missing or a profile is abandoned.

mod common;

use common::{mysql_admin, postgres_admin, reachable};
use ibench::profile::{CallGraph, Profile, ProfileOptions, Profiler, Running, Unavailable};
use std::path::{Path, PathBuf};
use std::process::{Child, Command};
use std::time::{Duration, Instant};

/// One profile at a time: each is also a measurement of perf's cost, and the
/// machine has two cores.
static SERIAL: std::sync::Mutex<()> = std::sync::Mutex::new(());

/// The profiler, or None (skip) when perf cannot sample here outside CI; in
/// CI (.ci/services installs perf) a failure.
fn profiler() -> Option<Profiler> {
    match Profiler::check() {
        Ok(p) => Some(p),
        Err(e) => {
            reachable(&format!("perf ({e})"), false);
            None
        }
    }
}

/// A C program whose time goes to `burn`, called from `work` from `main`,
/// for the seconds its argument gives; 40 more functions make its symbol
/// table tell how it was compiled, as a real program's does. Each function
/// first calls `tick`: gcc sets up no frame in a function that calls none,
/// even with -fno-omit-frame-pointer.
const BURNER: &str = r#"
#include <stdlib.h>
#include <time.h>
volatile unsigned long sink;
__attribute__((noinline)) void tick(void) { sink++; }
#define F(n) __attribute__((noinline)) unsigned long f##n(unsigned long x) { tick(); \
    for (unsigned long i = 0; i < x; i++) sink += i * n + (sink >> 3); return sink; }
#define F10(n) F(n##0) F(n##1) F(n##2) F(n##3) F(n##4) F(n##5) F(n##6) F(n##7) F(n##8) F(n##9)
F10(1) F10(2) F10(3) F10(4)
__attribute__((noinline)) void burn(void) {
    tick();
    for (unsigned long i = 0; i < 1000000; i++) sink += i * i + (sink >> 7);
}
__attribute__((noinline)) void work(double seconds) {
    struct timespec t0, t;
    clock_gettime(CLOCK_MONOTONIC, &t0);
    do { burn(); clock_gettime(CLOCK_MONOTONIC, &t); }
    while ((t.tv_sec - t0.tv_sec) + (t.tv_nsec - t0.tv_nsec) / 1e9 < seconds);
}
int main(int argc, char **argv) {
    if (argc > 2) { f10(1); f11(1); f12(1); f13(1); f14(1); f15(1); f16(1); f17(1); f18(1); f19(1);
        f20(1); f21(1); f22(1); f23(1); f24(1); f25(1); f26(1); f27(1); f28(1); f29(1);
        f30(1); f31(1); f32(1); f33(1); f34(1); f35(1); f36(1); f37(1); f38(1); f39(1);
        f40(1); f41(1); f42(1); f43(1); f44(1); f45(1); f46(1); f47(1); f48(1); f49(1); }
    work(atof(argv[1]));
    return 0;
}
"#;

/// The burner compiled with `flag` (`-fno-omit-frame-pointer` or `-fomit-frame-pointer`).
fn burner(dir: &Path, flag: &str) -> PathBuf {
    let (src, exe) = (dir.join("burner.c"), dir.join(format!("burner{flag}")));
    std::fs::write(&src, BURNER).unwrap();
    let built = Command::new("gcc")
        .args(["-O2", flag, "-o"])
        .arg(&exe)
        .arg(&src)
        .status()
        .expect("gcc runs");
    assert!(built.success(), "the burner compiles");
    exe
}

/// Runs `exe` burning for `seconds`; waits until it is in `main` (its /proc
/// exe is itself, not the shell's).
fn spawn(exe: &Path, seconds: f64) -> Child {
    let child = Command::new(exe).arg(seconds.to_string()).spawn().unwrap();
    let exe_link = format!("/proc/{}/exe", child.id());
    let start = Instant::now();
    while std::fs::read_link(&exe_link).ok().as_deref() != Some(exe) {
        assert!(start.elapsed() < Duration::from_secs(10), "the burner started");
        std::thread::sleep(Duration::from_millis(5));
    }
    child
}

fn start(profiler: &Profiler, pid: u32) -> Running {
    profiler
        .start(&[pid as i32], &ProfileOptions::default())
        .expect("perf starts")
}

/// The share of samples whose stack has a frame that `matches`.
fn share(p: &Profile, matches: impl Fn(&str) -> bool) -> f64 {
    p.samples_with(matches) as f64 / p.samples.max(1) as f64
}

fn top(p: &Profile) -> String {
    p.stacks.iter().take(8).map(|(s, n)| format!("{n:6} {s}\n")).collect()
}

#[test]
fn a_known_burning_function_dominates_with_frame_pointers_and_without() {
    let Some(profiler) = profiler() else { return };
    let _serial = SERIAL.lock().unwrap_or_else(|p| p.into_inner());
    let dir = tempfile::tempdir().unwrap();
    for (flag, graph) in [
        ("-fno-omit-frame-pointer", CallGraph::FramePointer),
        ("-fomit-frame-pointer", CallGraph::DWARF),
    ] {
        let exe = burner(dir.path(), flag);
        let mut child = spawn(&exe, 1.5);
        let running = start(&profiler, child.id());
        // The burner exits before the profile is stopped: perf ends with it,
        // and its samples are kept.
        child.wait().unwrap();
        let p = running.stop().unwrap();
        assert_eq!(p.call_graph, graph, "{flag}: {:?}", p.executables);
        assert!(p.samples >= 50, "{flag}: ~1.5 s at 99 Hz: {}", p.samples);
        let in_burn = share(&p, |f| f == "burn");
        assert!(in_burn > 0.9, "{flag}: burn in {in_burn:.2} of samples\n{}", top(&p));
        let whole = share(&p, |f| f == "main");
        assert!(
            whole > 0.9,
            "{flag}: stacks reach main in {whole:.2} of samples\n{}",
            top(&p)
        );
        assert!(p.stacks[0].0.ends_with("main;work;burn"), "{flag}:\n{}", top(&p));
        assert!(p.unresolved_frames_share < 0.1, "{flag}: {}", p.unresolved_frames_share);
    }
}

#[test]
fn ibench_s_null_connector_burn_dominates_a_profile_of_the_ibench_process() {
    let Some(profiler) = profiler() else { return };
    let _serial = SERIAL.lock().unwrap_or_else(|p| p.into_inner());
    let dir = tempfile::tempdir().unwrap();
    let mut child = Command::new(env!("CARGO_BIN_EXE_ibench"))
        .current_dir(dir.path())
        .args(["run", "--db", "null:?cpu=1ms", "--steps", "l.i0", "--rows-l-i0", "4000"])
        .args(["--rows-per-commit-l-i0", "1", "--quiet"])
        .stdout(std::process::Stdio::null())
        .spawn()
        .unwrap();
    std::thread::sleep(Duration::from_millis(700)); // past start-up, into the step
    let running = start(&profiler, child.id());
    std::thread::sleep(Duration::from_millis(1500));
    let p = running.stop().unwrap();
    child.kill().ok();
    child.wait().unwrap();
    assert!(
        matches!(p.call_graph, CallGraph::Dwarf { .. }),
        "Rust builds omit frame pointers: {:?}",
        p.executables
    );
    // burn_cpu is never inlined, so it has a frame of its own.
    let burning = share(&p, |f| f.ends_with("burn_cpu"));
    assert!(burning > 0.8, "burn_cpu in {burning:.2} of samples\n{}", top(&p));
    assert!(
        p.unresolved_frames_share < 0.2,
        "{}\n{}",
        p.unresolved_frames_share,
        top(&p)
    );
}

/// Runs a body (a query on a connection of its own) again and again on a
/// thread of its own until dropped.
struct Load {
    done: std::sync::Arc<std::sync::atomic::AtomicBool>,
    thread: Option<std::thread::JoinHandle<()>>,
}

impl Load {
    fn new(body: impl FnMut() + Send + 'static) -> Load {
        let done = std::sync::Arc::new(std::sync::atomic::AtomicBool::new(false));
        let stop = done.clone();
        let mut body = body;
        let thread = std::thread::spawn(move || {
            while !stop.load(std::sync::atomic::Ordering::Relaxed) {
                body();
            }
        });
        Load {
            done,
            thread: Some(thread),
        }
    }
}

impl Drop for Load {
    fn drop(&mut self) {
        self.done.store(true, std::sync::atomic::Ordering::Relaxed);
        if let Some(t) = self.thread.take() {
            let _ = t.join();
        }
    }
}

/// Profiles `pid` for `seconds` while `load` runs.
fn profile_under(profiler: &Profiler, pid: i32, seconds: f64, load: Load) -> Profile {
    std::thread::sleep(Duration::from_millis(300));
    let running = profiler.start(&[pid], &ProfileOptions::default()).expect("perf starts");
    std::thread::sleep(Duration::from_secs_f64(seconds));
    let p = running.stop().unwrap();
    drop(load);
    eprintln!(
        "{:?}: {} samples in {:.2} s, {:.1}% of frames unresolved; perf {:.3} s CPU ({:.3} s in all) = {:.2}% of the profiled {:?} s; script {:.3} s",
        p.call_graph,
        p.samples,
        p.duration_s,
        100.0 * p.unresolved_frames_share,
        p.perf_cpu_s,
        p.perf_total_cpu_s,
        100.0 * p.perf_share().unwrap_or(f64::NAN),
        p.profiled_cpu_s,
        p.script_cpu_s
    );
    p
}

fn assert_reported(p: &Profile) {
    let again = ibench::profile::unresolved_share(&p.stacks);
    assert!((p.unresolved_frames_share - again).abs() < 1e-12);
    assert!(
        (0.0..1.0).contains(&p.unresolved_frames_share),
        "{}",
        p.unresolved_frames_share
    );
    assert!(p.profiled_cpu_s.is_some_and(|s| s > 0.5), "{:?}", p.profiled_cpu_s);
    assert!(p.perf_share().is_some());
}

#[test]
fn a_postgresql_backend_under_a_query_loop_shows_resolved_server_functions() {
    let Some(profiler) = profiler() else { return };
    let Ok(mut client) = postgres::Client::connect(&postgres_admin(), postgres::NoTls) else {
        reachable("PostgreSQL", false);
        return;
    };
    let _serial = SERIAL.lock().unwrap_or_else(|p| p.into_inner());
    let pid: i32 = client.query_one("SELECT pg_backend_pid()", &[]).unwrap().get(0);
    let load = Load::new(move || {
        client
            .simple_query("SELECT sum(i) FROM generate_series(1, 20000) i")
            .unwrap();
    });
    let p = profile_under(&profiler, pid, 2.0, load);
    for function in ["PostgresMain", "ExecutorRun"] {
        let found = share(&p, |f| f.contains(function));
        assert!(found > 0.5, "{function} in {found:.2} of samples\n{}", top(&p));
    }
    assert_eq!(
        p.call_graph,
        CallGraph::FramePointer,
        "Debian builds PostgreSQL with frame pointers"
    );
    assert_reported(&p);
}

#[test]
fn a_mariadb_server_under_a_query_loop_shows_resolved_server_functions() {
    use mysql::prelude::Queryable;
    let Some(profiler) = profiler() else { return };
    let Ok(mut conn) = mysql::Conn::new(mysql::Opts::from_url(&mysql_admin()).unwrap()) else {
        reachable("MariaDB", false);
        return;
    };
    let _serial = SERIAL.lock().unwrap_or_else(|p| p.into_inner());
    let Some(pid) = process_named(&["mariadbd", "mysqld"]) else {
        eprintln!("note: the MariaDB server is not a process on this host; skipping");
        return;
    };
    let load = Load::new(move || {
        // A scan in the server's own code (MD5 would run in libcrypto,
        // built without frame pointers: its callers are lost).
        conn.query_drop(SEQUENCE_SCAN).unwrap();
    });
    let p = profile_under(&profiler, pid, 2.0, load);
    for function in ["dispatch_command", "mysql_execute_command"] {
        let found = share(&p, |f| f.contains(function));
        assert!(found > 0.5, "{function} in {found:.2} of samples\n{}", top(&p));
    }
    assert_reported(&p);
}

/// A query MariaDB spends its time on in its own code: a scan of the
/// SEQUENCE engine's table with a filter (the sum alone it would compute
/// without scanning).
const SEQUENCE_SCAN: &str = "SELECT COUNT(*) FROM seq_1_to_200000 WHERE seq % 7 = 3";

/// The one process on this host running as one of `names`.
fn process_named(names: &[&str]) -> Option<i32> {
    std::fs::read_dir("/proc").ok()?.flatten().find_map(|e| {
        let pid = e.file_name().to_str()?.parse::<i32>().ok()?;
        let comm = std::fs::read_to_string(format!("/proc/{pid}/comm")).ok()?;
        names.contains(&comm.trim()).then_some(pid)
    })
}

#[test]
fn without_perf_on_the_search_path_the_check_says_how_to_install_it() {
    let dir = tempfile::tempdir().unwrap();
    let e = Profiler::check_path(dir.path().as_os_str()).unwrap_err();
    assert_eq!(e, Unavailable::NotInstalled);
    assert_eq!(
        e.to_string(),
        "no CPU profile: perf is not on PATH; install it (Debian: apt-get install linux-perf)"
    );
}

#[test]
fn a_perf_that_does_not_run_is_named_with_what_it_said() {
    use std::os::unix::fs::PermissionsExt;
    let dir = tempfile::tempdir().unwrap();
    let fake = dir.path().join("perf");
    std::fs::write(
        &fake,
        "#!/bin/sh\necho 'E: linux-perf-5.10 is not installed.' >&2\nexit 1\n",
    )
    .unwrap();
    std::fs::set_permissions(&fake, std::fs::Permissions::from_mode(0o755)).unwrap();
    let e = Profiler::check_path(dir.path().as_os_str()).unwrap_err();
    assert!(matches!(e, Unavailable::Broken { .. }), "{e:?}");
    assert!(e.to_string().contains("E: linux-perf-5.10 is not installed."), "{e}");
}

#[test]
fn a_process_that_does_not_exist_is_refused_by_pid() {
    let Some(profiler) = profiler() else { return };
    let e = profiler.start(&[i32::MAX], &ProfileOptions::default()).unwrap_err();
    assert!(e.to_string().contains("process 2147483647 does not exist"), "{e}");
}

#[test]
fn a_profile_dropped_unstopped_leaves_no_perf_and_no_files() {
    let Some(profiler) = profiler() else { return };
    let mut sleeper = Command::new("sleep").arg("30").spawn().unwrap();
    let running = start(&profiler, sleeper.id());
    let perf = running.perf_pid().expect("perf runs");
    let dir = running.data_file().parent().unwrap().to_path_buf();
    assert!(dir.exists());
    drop(running);
    sleeper.kill().unwrap();
    sleeper.wait().unwrap();
    assert!(
        !Path::new(&format!("/proc/{perf}")).exists(),
        "perf {perf} was stopped and reaped"
    );
    assert!(!dir.exists(), "{} was removed", dir.display());
}

/// The perf processes whose parent is `pid`.
fn perf_children(pid: u32) -> Vec<u32> {
    let mut found = Vec::new();
    for entry in std::fs::read_dir("/proc").unwrap().flatten() {
        let Ok(stat) = std::fs::read_to_string(entry.path().join("stat")) else {
            continue;
        };
        // pid (comm) state ppid ...: comm may hold spaces, so split after its ')'.
        let Some((head, rest)) = stat.rsplit_once(')') else {
            continue;
        };
        let parent = rest.split_whitespace().nth(1).and_then(|p| p.parse::<u32>().ok());
        if head.ends_with("(perf") && parent == Some(pid) {
            found.extend(entry.file_name().to_str().and_then(|n| n.parse::<u32>().ok()));
        }
    }
    found
}

#[test]
fn perf_ends_with_an_ibench_killed_mid_step() {
    let Some(_) = profiler() else { return };
    // A server outlives ibench, so perf sampling it would run on but for
    // its parent-death signal.
    let Some(db) = common::mysql_db("ibench_perf_kill") else {
        return;
    };
    let _serial = SERIAL.lock().unwrap_or_else(|p| p.into_inner());
    let dir = tempfile::tempdir().unwrap();
    let mut child = Command::new(env!("CARGO_BIN_EXE_ibench"))
        .current_dir(dir.path())
        .args(["run", "--db", &db, "--steps", "l.i0", "--rows-l-i0", "10000000"])
        .args(["--profile", "perf", "--quiet"])
        .stdout(std::process::Stdio::null())
        .spawn()
        .unwrap();
    let deadline = Instant::now() + Duration::from_secs(30);
    let perf = loop {
        if let Some(&perf) = perf_children(child.id()).first() {
            break perf;
        }
        assert!(Instant::now() < deadline, "no perf started under ibench");
        std::thread::sleep(Duration::from_millis(50));
    };
    child.kill().unwrap(); // SIGKILL: ibench cleans nothing up itself
    child.wait().unwrap();
    let gone = Instant::now() + Duration::from_secs(10);
    // perf's parent-death signal ends it (it is then reaped by init).
    while std::fs::read_to_string(format!("/proc/{perf}/stat")).is_ok_and(|s| !s.contains(") Z ")) {
        assert!(Instant::now() < gone, "perf {perf} still runs after ibench was killed");
        std::thread::sleep(Duration::from_millis(50));
    }
}

/// What perf costs, for docs/profiling.md: a PostgreSQL backend and the
/// MariaDB server, each under a query loop, profiled 20 s with frame
/// pointers and 20 s with DWARF; prints perf's CPU as a share of theirs. A
/// measurement, not a check: `cargo test --release --test profile --
/// --ignored --nocapture perf_s_cost`.
#[test]
#[ignore]
fn perf_s_cost_at_99_hz() {
    use mysql::prelude::Queryable;
    let profiler = profiler().expect("perf samples here");
    let _serial = SERIAL.lock().unwrap_or_else(|p| p.into_inner());
    for graph in [CallGraph::FramePointer, CallGraph::DWARF] {
        let opts = ProfileOptions {
            call_graph: graph,
            ..ProfileOptions::default()
        };
        let mut client = postgres::Client::connect(&postgres_admin(), postgres::NoTls).unwrap();
        let pid: i32 = client.query_one("SELECT pg_backend_pid()", &[]).unwrap().get(0);
        let load = Load::new(move || {
            client
                .simple_query("SELECT sum(i) FROM generate_series(1, 20000) i")
                .unwrap();
        });
        measure("PostgreSQL backend", &profiler, pid, &opts, load);
        let mut conn = mysql::Conn::new(mysql::Opts::from_url(&mysql_admin()).unwrap()).unwrap();
        let load = Load::new(move || conn.query_drop(SEQUENCE_SCAN).unwrap());
        let pid = process_named(&["mariadbd", "mysqld"]).unwrap();
        measure("MariaDB server", &profiler, pid, &opts, load);
    }
}

fn measure(what: &str, profiler: &Profiler, pid: i32, opts: &ProfileOptions, load: Load) {
    std::thread::sleep(Duration::from_millis(500));
    let running = profiler.start(&[pid], opts).unwrap();
    std::thread::sleep(Duration::from_secs(20));
    let p = running.stop().unwrap();
    drop(load);
    let data = p.samples as f64 / p.duration_s;
    println!(
        "{what}, {}: {} samples ({data:.0}/s) over {:.1} s; server {:.2} s CPU; perf record {:.3} s while sampling = {:.2}%, \
         {:.3} s in all; perf script + folding {:.3} s afterwards; unresolved frames {:.1}%",
        p.call_graph.name(),
        p.samples,
        p.duration_s,
        p.profiled_cpu_s.unwrap_or(f64::NAN),
        p.perf_cpu_s,
        100.0 * p.perf_share().unwrap_or(f64::NAN),
        p.perf_total_cpu_s,
        p.script_cpu_s,
        100.0 * p.unresolved_frames_share
    );
}
