//! `ibench campaign` never leaves a server behind: a server that refuses its
//! configuration is recorded with its log's tail and the others still run;
//! SIGTERM ends the running run (its results written), stops its server and
//! ends the campaign with 128 + 15.

use std::path::{Path, PathBuf};
use std::process::{Child, Command};
use std::time::{Duration, Instant};

/// The servers' directories a campaign process `pid` made under the temp dir.
fn server_dirs(pid: u32) -> Vec<PathBuf> {
    let prefix = format!("-{pid}-");
    std::fs::read_dir(std::env::temp_dir())
        .unwrap()
        .flatten()
        .map(|e| e.path())
        .filter(|p| {
            let name = p.file_name().unwrap().to_string_lossy().into_owned();
            name.starts_with("ibench-") && name.contains(&prefix)
        })
        .collect()
}

/// Processes whose command line names one of `dirs` (a server ibench started there).
fn servers_running(dirs: &[PathBuf]) -> Vec<String> {
    let mut found = Vec::new();
    for entry in std::fs::read_dir("/proc").unwrap().flatten() {
        let Ok(cmdline) = std::fs::read(entry.path().join("cmdline")) else {
            continue;
        };
        let text = String::from_utf8_lossy(&cmdline).replace('\0', " ");
        if dirs.iter().any(|d| text.contains(&*d.to_string_lossy())) {
            found.push(text);
        }
    }
    found
}

fn campaign_file(dir: &Path, body: &str) -> PathBuf {
    let f = dir.join("campaign.toml");
    std::fs::write(&f, format!("out = \"{}\"\n{body}", dir.join("out").display())).unwrap();
    f
}

fn start(file: &Path) -> Child {
    Command::new(env!("CARGO_BIN_EXE_ibench"))
        .args(["campaign", "--quiet", "--no-report"])
        .arg(file)
        .spawn()
        .unwrap()
}

fn record(dir: &Path) -> serde_json::Value {
    serde_json::from_str(&std::fs::read_to_string(dir.join("out/campaign.json")).unwrap()).unwrap()
}

#[test]
fn a_server_that_refuses_its_configuration_is_recorded_and_the_others_run() {
    let dir = tempfile::tempdir().unwrap();
    std::fs::write(dir.path().join("bad.conf"), "no_such_setting = 1\n").unwrap();
    let file = campaign_file(
        dir.path(),
        "[run]\nsteps = [\"l.i0\"]\nrows_l_i0 = 2000\n\
         [[server]]\nlabel = \"bad\"\nkind = \"postgres\"\nconfig = \"bad.conf\"\n\
         [[server]]\nlabel = \"good\"\nkind = \"postgres\"\n",
    );
    let mut child = start(&file);
    let pid = child.id();
    let status = child.wait().unwrap();
    assert_eq!(status.code(), Some(1), "a server that did not start fails the campaign");
    let runs = record(dir.path())["runs"].as_array().unwrap().clone();
    assert_eq!(runs.len(), 2, "{runs:?}");
    assert_eq!(runs[0]["status"], "server error");
    let error = runs[0]["error"].as_str().unwrap();
    assert!(error.contains("no_such_setting"), "the log's tail says why: {error}");
    assert_eq!(runs[1]["status"], "ok", "{runs:?}");
    let run_dir = dir.path().join("out").join(runs[1]["run_id"].as_str().unwrap());
    assert!(std::fs::read_to_string(run_dir.join("server.log"))
        .unwrap()
        .contains("ready to accept connections"));
    assert!(run_dir.join("server.conf").is_file());
    let dirs = server_dirs(pid);
    assert!(dirs.is_empty(), "data directories left: {dirs:?}");
}

#[test]
fn sigterm_ends_the_running_run_stops_its_server_and_the_campaign() {
    a_signal_ends_the_running_run_stops_its_server_and_the_campaign(libc::SIGTERM);
}

#[test]
fn ctrl_c_ends_the_running_run_stops_its_server_and_the_campaign() {
    a_signal_ends_the_running_run_stops_its_server_and_the_campaign(libc::SIGINT);
}

fn a_signal_ends_the_running_run_stops_its_server_and_the_campaign(signal: i32) {
    let dir = tempfile::tempdir().unwrap();
    let file = campaign_file(
        dir.path(),
        "[run]\nsteps = [\"l.i0\"]\nrows_l_i0 = 50000000\nrepeats = 2\n\
         [[server]]\nlabel = \"a\"\nkind = \"postgres\"\n[[server]]\nlabel = \"b\"\nkind = \"mariadb\"\n",
    );
    let mut child = start(&file);
    let pid = child.id();
    // Wait until the first run is loading its table.
    let started = Instant::now();
    let out = dir.path().join("out");
    loop {
        let loading = std::fs::read_dir(&out)
            .map(|d| d.flatten().any(|e| e.path().join("runs.parquet").is_file()))
            .unwrap_or(false);
        if loading {
            break;
        }
        assert!(
            started.elapsed() < Duration::from_secs(60),
            "the first run never started"
        );
        std::thread::sleep(Duration::from_millis(100));
    }
    std::thread::sleep(Duration::from_secs(1));
    let dirs = server_dirs(pid);
    assert_eq!(dirs.len(), 1, "one server at a time: {dirs:?}");
    assert!(!servers_running(&dirs).is_empty(), "the server runs");
    // SAFETY: kill with the pid of our own child.
    unsafe { libc::kill(pid as libc::pid_t, signal) };
    let status = child.wait().unwrap();
    assert_eq!(status.code(), Some(128 + signal));
    let runs = record(dir.path())["runs"].as_array().unwrap().clone();
    assert_eq!(runs.len(), 1, "no run after the stop: {runs:?}");
    assert_eq!(runs[0]["status"], "interrupted");
    assert!(servers_running(&dirs).is_empty(), "a server still runs");
    assert!(server_dirs(pid).is_empty(), "data directories left");
}

/// Even SIGKILL, which ibench cannot catch, leaves no server running: the
/// kernel sends each server ibench started its shutdown signal when ibench
/// dies (the parent-death signal). Only the data directory stays behind,
/// for nobody is left to remove it.
#[test]
fn a_killed_campaign_leaves_no_server_running() {
    for kind in ["postgres", "mariadb"] {
        let dir = tempfile::tempdir().unwrap();
        let file = campaign_file(
            dir.path(),
            &format!("[run]\nsteps = [\"l.i0\"]\nrows_l_i0 = 50000000\n[[server]]\nlabel = \"a\"\nkind = \"{kind}\"\n"),
        );
        let mut child = start(&file);
        let pid = child.id();
        let started = Instant::now();
        let out = dir.path().join("out");
        while !std::fs::read_dir(&out)
            .map(|d| d.flatten().any(|e| e.path().join("runs.parquet").is_file()))
            .unwrap_or(false)
        {
            assert!(
                started.elapsed() < Duration::from_secs(60),
                "{kind}: the run never started"
            );
            std::thread::sleep(Duration::from_millis(100));
        }
        let dirs = server_dirs(pid);
        assert_eq!(dirs.len(), 1, "{kind}: {dirs:?}");
        assert!(!servers_running(&dirs).is_empty(), "{kind}: the server runs");
        child.kill().unwrap(); // SIGKILL
        child.wait().unwrap();
        let killed = Instant::now();
        while !servers_running(&dirs).is_empty() {
            assert!(
                killed.elapsed() < Duration::from_secs(60),
                "{kind}: the server outlived ibench: {:?}",
                servers_running(&dirs)
            );
            std::thread::sleep(Duration::from_millis(100));
        }
        for d in dirs {
            let _ = std::fs::remove_dir_all(d);
        }
    }
}

/// A kept data directory is named in campaign.json and is still there; a
/// server ibench does not manage (`db`) runs as it is; the cooldown is
/// waited between runs.
#[test]
fn kept_data_a_given_server_and_the_cooldown() {
    let dir = tempfile::tempdir().unwrap();
    let file = campaign_file(
        dir.path(),
        "[run]\nsteps = [\"l.i0\"]\nrows_l_i0 = 2000\ncooldown_seconds = 3\n\
         [[server]]\nlabel = \"kept\"\nkind = \"postgres\"\nkeep_data = true\n\
         [[server]]\nlabel = \"given\"\ndb = \"postgres://postgres@127.0.0.1:5432/test\"\n",
    );
    let mut child = start(&file);
    let status = child.wait().unwrap();
    let runs = record(dir.path())["runs"].as_array().unwrap().clone();
    assert_eq!(status.code(), Some(0), "{runs:?}");
    assert_eq!(
        runs.iter().map(|r| r["status"].as_str().unwrap()).collect::<Vec<_>>(),
        ["ok", "ok"]
    );
    let kept = PathBuf::from(runs[0]["data_dir"].as_str().expect("the kept directory is named"));
    assert!(
        kept.join("data/PG_VERSION").is_file(),
        "{} holds the cluster",
        kept.display()
    );
    assert!(
        servers_running(std::slice::from_ref(&kept)).is_empty(),
        "kept, but stopped"
    );
    std::fs::remove_dir_all(&kept).unwrap();
    assert!(runs[1]["data_dir"].is_null());
    // The given server's run starts no sooner than the cooldown after the first run ended.
    let step = |i: usize| {
        let run = dir.path().join("out").join(runs[i]["run_id"].as_str().unwrap());
        let file = std::fs::File::open(run.join("steps.parquet")).unwrap();
        let batch = parquet::arrow::arrow_reader::ParquetRecordBatchReaderBuilder::try_new(file)
            .unwrap()
            .build()
            .unwrap()
            .next()
            .unwrap()
            .unwrap();
        let first_value = |name: &str| -> arrow::array::ArrayRef { batch.column_by_name(name).unwrap().slice(0, 1) };
        let started = arrow::array::cast::as_primitive_array::<arrow::datatypes::TimestampMicrosecondType>(
            &first_value("started_at"),
        )
        .value(0);
        let elapsed =
            arrow::array::cast::as_primitive_array::<arrow::datatypes::Float64Type>(&first_value("elapsed_s")).value(0);
        (started as f64 / 1e6, elapsed)
    };
    let ((first, took), (second, _)) = (step(0), step(1));
    assert!(
        second - (first + took) >= 3.0,
        "{:.2} s between the runs",
        second - (first + took)
    );
}

fn resume(file: &Path) -> std::process::Output {
    Command::new(env!("CARGO_BIN_EXE_ibench"))
        .args(["campaign", "--quiet", "--no-report", "--resume"])
        .arg(file)
        .output()
        .unwrap()
}

/// The (label, repeat, run id, status) of each run `campaign.json` records.
fn recorded_runs(dir: &Path) -> Vec<(String, u64, Option<String>, String)> {
    record(dir)["runs"]
        .as_array()
        .unwrap()
        .iter()
        .map(|r| {
            (
                r["label"].as_str().unwrap().to_string(),
                r["repeat"].as_u64().unwrap(),
                r["run_id"].as_str().map(str::to_string),
                r["status"].as_str().unwrap().to_string(),
            )
        })
        .collect()
}

/// A campaign of 2 servers × 2 repeats SIGKILLed during its third run,
/// then resumed: the first two runs keep their run ids, only the third and
/// fourth run again; then a repeat added to the file runs alone, and a
/// changed run parameter or a missing record is refused, naming it.
#[test]
fn a_killed_campaign_resumes_keeping_the_runs_that_ended_ok() {
    let dir = tempfile::tempdir().unwrap();
    // Databases of its own: the other tests of this file run at the same time.
    let databases = ResumeDatabases::create();
    let servers = "[[server]]\nlabel = \"pg\"\ndb = \"postgres://postgres@127.0.0.1:5432/ib_resume\"\n\
                   [[server]]\nlabel = \"maria\"\ndb = \"mysql://root@127.0.0.1:3306/ib_resume\"\n";
    let run = |repeats: u32, rows: u32| {
        format!("[run]\nsteps = [\"l.i0\", \"qr100\"]\nrows_l_i0 = {rows}\nquery_seconds = 4\nrepeats = {repeats}\n{servers}")
    };
    let file = campaign_file(dir.path(), &run(2, 2000));
    let mut child = start(&file);
    let out = dir.path().join("out");
    let started = Instant::now();
    // The third run is under way once two are recorded and a third directory exists.
    while !(std::fs::read_to_string(out.join("campaign.json")).is_ok_and(|t| t.matches("\"run_id\"").count() == 2)
        && std::fs::read_dir(&out)
            .unwrap()
            .flatten()
            .filter(|e| e.path().join("runs.parquet").is_file())
            .count()
            == 3)
    {
        assert!(
            started.elapsed() < Duration::from_secs(120),
            "the third run never started"
        );
        std::thread::sleep(Duration::from_millis(50));
    }
    child.kill().unwrap(); // SIGKILL
    child.wait().unwrap();
    let before = recorded_runs(dir.path());
    assert_eq!(before.len(), 2, "{before:?}");
    let o = resume(&file);
    assert!(o.status.success(), "{}", String::from_utf8_lossy(&o.stderr));
    let after = recorded_runs(dir.path());
    let plan: Vec<(&str, u64)> = after.iter().map(|r| (r.0.as_str(), r.1)).collect();
    assert_eq!(plan, [("pg", 1), ("maria", 1), ("pg", 2), ("maria", 2)]);
    assert_eq!(after[..2], before[..], "the first two runs are kept as they were");
    assert!(after.iter().all(|r| r.3 == "ok" && r.2.is_some()), "{after:?}");
    let ids: std::collections::HashSet<_> = after.iter().map(|r| r.2.clone()).collect();
    assert_eq!(ids.len(), 4, "runs 3 and 4 ran afresh: {after:?}");

    // A repeat added to the file: only its runs run.
    std::fs::write(&file, format!("out = \"{}\"\n{}", out.display(), run(3, 2000))).unwrap();
    let o = resume(&file);
    assert!(o.status.success(), "{}", String::from_utf8_lossy(&o.stderr));
    let grown = recorded_runs(dir.path());
    assert_eq!(grown.len(), 6);
    assert_eq!(grown[..4], after[..]);

    // A changed run parameter is refused, naming it; so is a resume with no record.
    std::fs::write(&file, format!("out = \"{}\"\n{}", out.display(), run(3, 3000))).unwrap();
    let o = resume(&file);
    let stderr = String::from_utf8_lossy(&o.stderr);
    assert_eq!(o.status.code(), Some(2), "{stderr}");
    assert!(
        stderr.contains("run parameter rows_l_i0 changed (2000 → 3000)"),
        "{stderr}"
    );
    assert_eq!(recorded_runs(dir.path()), grown, "a refused resume changes nothing");
    let elsewhere = tempfile::tempdir().unwrap();
    let o = resume(&campaign_file(elsewhere.path(), &run(1, 2000)));
    let stderr = String::from_utf8_lossy(&o.stderr);
    assert_eq!(o.status.code(), Some(2), "{stderr}");
    assert!(
        stderr.contains("campaign.json") && stderr.contains("no campaign to resume"),
        "{stderr}"
    );
    drop(databases);
}

/// Database `ib_resume` on the local PostgreSQL and MariaDB, dropped when dropped.
struct ResumeDatabases;

impl ResumeDatabases {
    fn create() -> Self {
        let mut pg = postgres::Client::connect("postgres://postgres@127.0.0.1:5432/postgres", postgres::NoTls).unwrap();
        pg.batch_execute("DROP DATABASE IF EXISTS ib_resume WITH (FORCE)")
            .unwrap();
        pg.batch_execute("CREATE DATABASE ib_resume").unwrap();
        let mut my = mysql::Conn::new(mysql::Opts::from_url("mysql://root@127.0.0.1:3306/test").unwrap()).unwrap();
        mysql::prelude::Queryable::query_drop(&mut my, "CREATE DATABASE IF NOT EXISTS ib_resume").unwrap();
        ResumeDatabases
    }
}

impl Drop for ResumeDatabases {
    fn drop(&mut self) {
        if let Ok(mut pg) = postgres::Client::connect("postgres://postgres@127.0.0.1:5432/postgres", postgres::NoTls) {
            let _ = pg.batch_execute("DROP DATABASE IF EXISTS ib_resume WITH (FORCE)");
        }
        if let Ok(mut my) = mysql::Conn::new(mysql::Opts::from_url("mysql://root@127.0.0.1:3306/test").unwrap()) {
            let _ = mysql::prelude::Queryable::query_drop(&mut my, "DROP DATABASE IF EXISTS ib_resume");
        }
    }
}
