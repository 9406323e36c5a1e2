//! Servers ibench starts itself: a fresh data directory with the given
//! configuration, a free port, a clean stop that leaves no process and no
//! data directory behind, and a clear error (with the log) for a
//! configuration the server refuses.

use ibench::server::{Kind, Managed, ServerSpec};
use mysql::prelude::Queryable;
use std::path::{Path, PathBuf};

fn spec(kind: Kind, config: &str) -> ServerSpec {
    ServerSpec {
        kind,
        bin: None,
        config: config.into(),
        work_dir: std::env::temp_dir(),
        keep_data: false,
    }
}

/// True while process `pid` exists.
fn alive(pid: u32) -> bool {
    Path::new(&format!("/proc/{pid}")).exists()
        && !std::fs::read_to_string(format!("/proc/{pid}/stat"))
            .unwrap_or_default()
            .contains(") Z ")
}

fn stopped_and_removed(pid: u32, dir: PathBuf) {
    assert!(!alive(pid), "server process {pid} still runs");
    assert!(!dir.exists(), "{} was not removed", dir.display());
}

#[test]
fn postgres_starts_with_its_configuration_and_stops_clean() {
    let server = Managed::start(&spec(Kind::Postgres, "synchronous_commit = off\nlog_statement = 'all'")).unwrap();
    let (pid, dir) = (server.pid().unwrap(), server.dir().to_path_buf());
    let mut c = postgres::Client::connect(&server.dsn(), postgres::NoTls).unwrap();
    let get =
        |c: &mut postgres::Client, name: &str| c.query_one(&format!("SHOW {name}"), &[]).unwrap().get::<_, String>(0);
    assert_eq!(get(&mut c, "synchronous_commit"), "off");
    assert_eq!(get(&mut c, "log_statement"), "all");
    assert_eq!(get(&mut c, "port"), server.port().to_string());
    assert!(server.version().contains("PostgreSQL"), "{}", server.version());
    drop(c);
    let kept = std::env::temp_dir().join(format!("ibench-pg-log-{}", std::process::id()));
    server.stop(Some(&kept)).unwrap();
    assert!(std::fs::read_to_string(&kept)
        .unwrap()
        .contains("database system is ready"));
    std::fs::remove_file(kept).unwrap();
    stopped_and_removed(pid, dir);
}

#[test]
fn mariadb_starts_with_its_configuration_and_stops_clean() {
    let server = Managed::start(&spec(Kind::Mariadb, "innodb_flush_log_at_trx_commit = 2")).unwrap();
    let (pid, dir) = (server.pid().unwrap(), server.dir().to_path_buf());
    let mut c = mysql::Conn::new(mysql::Opts::from_url(&server.dsn()).unwrap()).unwrap();
    let v: Option<u64> = c.query_first("SELECT @@innodb_flush_log_at_trx_commit").unwrap();
    assert_eq!(v, Some(2));
    drop(c);
    drop(server); // dropping stops it too
    stopped_and_removed(pid, dir);
}

/// A MariaDB ibench starts deletes no other server's temporary tables: at
/// each start (and in mariadb-install-db) the server removes every `#sql*`
/// file it may in its tmpdir, which was the shared /tmp, and two servers
/// starting at once broke each other's install ("Unknown table
/// 'mysql.tmp_user_sys'"). A tmpdir a configuration names still wins.
#[test]
fn a_mariadb_it_starts_keeps_its_temporary_files_to_itself() {
    // Another server's temporary table, as the server's account could delete it.
    let probe = std::env::temp_dir().join(format!("#sql-temptable-ibench-probe-{}.MAI", std::process::id()));
    std::fs::write(&probe, b"").unwrap();
    // SAFETY: geteuid has no preconditions.
    if unsafe { libc::geteuid() } == 0 {
        let chown = std::process::Command::new("chown")
            .arg("mysql:mysql")
            .arg(&probe)
            .status();
        assert!(chown.unwrap().success(), "chown mysql {}", probe.display());
    }
    // The probe goes before anything can panic: /tmp keeps nothing of the test.
    let started = Managed::start(&spec(Kind::Mariadb, ""));
    let kept = probe.exists();
    let _ = std::fs::remove_file(&probe);
    let server = started.unwrap();
    assert!(kept, "starting a MariaDB deleted {}", probe.display());
    let mut c = mysql::Conn::new(mysql::Opts::from_url(&server.dsn()).unwrap()).unwrap();
    let tmpdir: Option<String> = c.query_first("SELECT @@tmpdir").unwrap();
    assert!(
        tmpdir
            .as_deref()
            .is_some_and(|t| Path::new(t).starts_with(server.dir())),
        "tmpdir {tmpdir:?} is not in {}",
        server.dir().display()
    );
    drop(c);
    server.stop(None).unwrap();

    let own = tempfile::tempdir().unwrap();
    std::fs::set_permissions(own.path(), std::os::unix::fs::PermissionsExt::from_mode(0o1777)).unwrap();
    let server = Managed::start(&spec(Kind::Mariadb, &format!("tmpdir = {}", own.path().display()))).unwrap();
    let mut c = mysql::Conn::new(mysql::Opts::from_url(&server.dsn()).unwrap()).unwrap();
    let tmpdir: Option<String> = c.query_first("SELECT @@tmpdir").unwrap();
    assert_eq!(
        tmpdir.as_deref().map(Path::new),
        Some(own.path()),
        "the configuration's tmpdir"
    );
    drop(c);
    server.stop(None).unwrap();
}

#[test]
fn a_refused_configuration_is_an_error_with_the_servers_log() {
    for (kind, bad) in [
        (Kind::Postgres, "shared_buffers = lots"),
        (Kind::Mariadb, "innodb_no_such_option = 1"),
    ] {
        // A work directory of its own: what the failed start leaves is all in it.
        let work = std::env::temp_dir().join(format!("ibench-refused-{}-{kind:?}", std::process::id()));
        let e = Managed::start(&ServerSpec {
            work_dir: work.clone(),
            ..spec(kind, bad)
        })
        .expect_err("refused")
        .to_string();
        let word = if kind == Kind::Postgres {
            "shared_buffers"
        } else {
            "innodb_no_such_option"
        };
        assert!(
            e.contains(word) && (e.contains("ERROR") || e.contains("FATAL")),
            "{kind:?}: {e}"
        );
        let left: Vec<_> = std::fs::read_dir(&work).unwrap().flatten().map(|e| e.path()).collect();
        assert!(left.is_empty(), "left behind: {left:?}");
        std::fs::remove_dir(&work).unwrap();
    }
}
