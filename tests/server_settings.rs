//! A server is never left changed: the global settings ibench changes on a
//! MariaDB/MySQL server go through a ledger on the server, so two ibench
//! runs at once on one server put the original back (the second never takes
//! the first one's temporary value for the original), and a change a kill
//! left behind is put back by the next ibench that connects (or `ibench
//! restore`), which says so. Real `ibench run` processes, SIGKILL included.

mod common;

use common::{mysql_admin, reachable};
use mysql::prelude::Queryable;
use std::path::Path;
use std::process::{Child, Command, Output};
use std::time::{Duration, Instant};

/// The setting ibench's wait step changes on InnoDB (the reference's
/// maintenance sets it to 1 for the whole wait).
const SETTING: &str = "innodb_max_dirty_pages_pct";

fn admin() -> Option<mysql::Conn> {
    let conn = mysql::Conn::new(mysql::Opts::from_url(&mysql_admin()).unwrap()).ok();
    reachable("MariaDB", conn.is_some()).then(|| conn.unwrap())
}

fn value(c: &mut mysql::Conn) -> f64 {
    c.query_first::<f64, _>(format!("SELECT @@GLOBAL.{SETTING}"))
        .unwrap()
        .unwrap()
}

/// `ibench run` of a small load and the reference's wait step (the setting
/// changed for all of its `wait` seconds) on database `db` of the local MariaDB.
fn start(out: &Path, db: &str, wait: u32) -> Child {
    Command::new(env!("CARGO_BIN_EXE_ibench"))
        .args(["run", "--db", &format!("mysql://root@127.0.0.1:3306/{db}")])
        .args([
            "--steps",
            "l.i0,l.x,l.i1,wait",
            "--rows-l-i0",
            "5000",
            "--rows-l-i1",
            "1000",
        ])
        .args([
            "--maintenance",
            "iibench",
            "--wait-seconds",
            &wait.to_string(),
            "--quiet",
            "--out",
        ])
        .arg(out)
        .stdout(std::process::Stdio::piped())
        .stderr(std::process::Stdio::piped())
        .spawn()
        .unwrap()
}

fn finished(child: Child) -> Output {
    let o = child.wait_with_output().unwrap();
    assert!(o.status.success(), "{}", String::from_utf8_lossy(&o.stderr));
    o
}

/// Waits until the server's setting reads `wanted`.
fn until_value(c: &mut mysql::Conn, wanted: f64) {
    let started = Instant::now();
    while value(c) != wanted {
        assert!(
            started.elapsed() < Duration::from_secs(120),
            "{SETTING} never became {wanted}"
        );
        std::thread::sleep(Duration::from_millis(100));
    }
}

#[test]
fn two_runs_at_once_on_one_server_put_the_original_back_and_a_killed_runs_change_is_put_back() {
    let Some(mut c) = admin() else { return };
    c.query_drop("CREATE DATABASE IF NOT EXISTS ib_settings_a").unwrap();
    c.query_drop("CREATE DATABASE IF NOT EXISTS ib_settings_b").unwrap();
    let original = value(&mut c);
    assert_ne!(original, 1.0, "the test needs {SETTING} other than the wait step's 1");
    let dir = tempfile::tempdir().unwrap();

    // Two runs whose wait steps overlap: the second starts while the first waits.
    let first = start(dir.path(), "ib_settings_a", 12);
    until_value(&mut c, 1.0);
    let second = start(dir.path(), "ib_settings_b", 4);
    let (a, b) = (finished(first), finished(second));
    assert_eq!(value(&mut c), original, "both runs ended: the original is back");
    for o in [a, b] {
        assert!(
            String::from_utf8_lossy(&o.stdout).contains("wait"),
            "each ran its wait step"
        );
    }

    // A run killed in its wait step leaves the setting changed...
    let mut killed = start(dir.path(), "ib_settings_a", 60);
    until_value(&mut c, 1.0);
    killed.kill().unwrap(); // SIGKILL
    killed.wait().unwrap();
    std::thread::sleep(Duration::from_millis(500));
    assert_eq!(value(&mut c), 1.0, "a SIGKILL cannot restore anything itself");
    // ...and the next ibench that connects puts it back, saying so.
    let next = Command::new(env!("CARGO_BIN_EXE_ibench"))
        .args([
            "run",
            "--db",
            "mysql://root@127.0.0.1:3306/ib_settings_b",
            "--steps",
            "l.i0",
        ])
        .args(["--rows-l-i0", "100", "--out"])
        .arg(dir.path())
        .output()
        .unwrap();
    let stderr = String::from_utf8_lossy(&next.stderr);
    assert!(next.status.success(), "{stderr}");
    assert!(
        stderr.contains(&format!("{SETTING} was 1"))
            && stderr.contains(&format!("put back to its original {original}")),
        "{stderr}"
    );
    assert_eq!(value(&mut c), original);

    // ibench restore does the same, and says when there is nothing to do.
    let mut killed = start(dir.path(), "ib_settings_a", 60);
    until_value(&mut c, 1.0);
    killed.kill().unwrap();
    killed.wait().unwrap();
    std::thread::sleep(Duration::from_millis(500));
    let restore = || {
        Command::new(env!("CARGO_BIN_EXE_ibench"))
            .args(["restore", "mysql://root@127.0.0.1:3306/test"])
            .output()
            .unwrap()
    };
    let o = restore();
    let stdout = String::from_utf8_lossy(&o.stdout);
    assert!(
        o.status.success() && stdout.contains(&format!("{SETTING} was 1")),
        "{stdout}"
    );
    assert_eq!(value(&mut c), original);
    assert!(String::from_utf8_lossy(&restore().stdout).contains("no setting left changed"));
    // Nothing of the ledger stays on the server once nothing is changed.
    let schemas: Vec<String> = c.query("SHOW DATABASES LIKE 'ibench'").unwrap();
    assert!(schemas.is_empty(), "{schemas:?}");
    for db in ["ib_settings_a", "ib_settings_b"] {
        c.query_drop(format!("DROP DATABASE {db}")).unwrap();
    }
}
