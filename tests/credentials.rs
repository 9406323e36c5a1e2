//! Passwords kept where people keep them: PGPASSWORD, ~/.pgpass, a
//! pg_service.conf service; MYSQL_PWD, ~/.my.cnf, a defaults-file; and
//! ibench's --password-file. Each logs in to a server of its own that asks
//! for the password, and none lets the password reach a result file, an
//! output line or an error.

mod common;

use common::{all_bytes, contains, decoded, pg_hba, postgres_admin, postgres_db, private_server, recorded_setting};
use ibench::server::Kind;
use std::os::unix::fs::PermissionsExt;
use std::path::Path;
use std::process::{Command, Output};

const PASSWORD: &str = "Pw-4-leak-test";

/// `ibench run` of a small load with `env` set and HOME a fresh directory.
fn run(db: &str, home: &Path, env: &[(&str, String)], extra: &[&str]) -> (Output, tempfile::TempDir) {
    let out = tempfile::tempdir().unwrap();
    let mut cmd = Command::new(env!("CARGO_BIN_EXE_ibench"));
    cmd.args(["run", "--db", db, "--steps", "l.i0", "--rows-l-i0", "500", "--out"])
        .arg(out.path())
        .args(extra)
        .env("HOME", home)
        .env_remove("PGPASSWORD")
        .env_remove("PGSERVICE")
        .env_remove("PGSERVICEFILE")
        .env_remove("PGPASSFILE")
        .env_remove("MYSQL_PWD")
        .env_remove("MYSQL_HOST")
        .env_remove("MYSQL_TCP_PORT")
        .env_remove("MYSQL_UNIX_PORT");
    for libpq in [
        "PGHOST",
        "PGPORT",
        "PGUSER",
        "PGDATABASE",
        "PGSSLMODE",
        "PGSSLROOTCERT",
        "PGAPPNAME",
        "PGCONNECT_TIMEOUT",
        "PGOPTIONS",
    ] {
        cmd.env_remove(libpq);
    }
    for (k, v) in env {
        cmd.env(k, v);
    }
    (cmd.output().unwrap(), out)
}

/// The run logged in and nothing it wrote holds the password.
fn logged_in_without_leaking(what: &str, (o, out): (Output, tempfile::TempDir), source: &str) {
    let text = format!(
        "{}{}",
        String::from_utf8_lossy(&o.stdout),
        String::from_utf8_lossy(&o.stderr)
    );
    assert!(o.status.success(), "{what}: {text}");
    assert!(!text.contains(PASSWORD), "{what}: the password in the output");
    assert!(
        !contains(&all_bytes(out.path()), PASSWORD),
        "{what}: the password in a result file"
    );
    let values = decoded(out.path());
    assert!(!values.contains(PASSWORD), "{what}: the password in a result");
    assert!(
        values.contains("password_source") && values.contains(source),
        "{what}: password_source {source} not recorded"
    );
}

/// The run failed to log in, and its error does not hold the password.
fn refused(what: &str, (o, _out): (Output, tempfile::TempDir)) {
    let text = format!(
        "{}{}",
        String::from_utf8_lossy(&o.stdout),
        String::from_utf8_lossy(&o.stderr)
    );
    assert!(!o.status.success(), "{what}: logged in without the password");
    assert!(text.contains("cannot connect"), "{what}: {text}");
    assert!(
        !text.contains(PASSWORD) && !text.contains("wrong-pw"),
        "{what}: a password in the error"
    );
}

#[test]
fn postgres_takes_the_password_from_pgpassword_pgpass_a_service_and_a_password_file() {
    // bob must give his password over TCP; postgres (ibench's readiness check) needs none.
    let (_hba, hba_file) =
        pg_hba("local all all trust\nhost all postgres 127.0.0.1/32 trust\nhost all bob 127.0.0.1/32 scram-sha-256\n");
    let server = private_server(Kind::Postgres, format!("hba_file = '{}'", hba_file.display()));
    let port = server.port();
    let mut admin = postgres::Client::connect(&server.dsn(), postgres::NoTls).unwrap();
    admin
        .batch_execute(&format!("CREATE ROLE bob LOGIN PASSWORD '{PASSWORD}'"))
        .unwrap();
    admin.batch_execute("CREATE DATABASE bobdb OWNER bob").unwrap();
    let db = format!("postgres://bob@127.0.0.1:{port}/bobdb");
    let home = tempfile::tempdir().unwrap();

    refused("no password", run(&db, home.path(), &[], &[]));
    refused(
        "a wrong PGPASSWORD",
        run(&db, home.path(), &[("PGPASSWORD", "wrong-pw".into())], &[]),
    );
    logged_in_without_leaking(
        "PGPASSWORD",
        run(&db, home.path(), &[("PGPASSWORD", PASSWORD.into())], &[]),
        "PGPASSWORD",
    );

    let pgpass = home.path().join(".pgpass");
    std::fs::write(&pgpass, format!("127.0.0.1:{port}:bobdb:bob:{PASSWORD}\n")).unwrap();
    std::fs::set_permissions(&pgpass, std::fs::Permissions::from_mode(0o600)).unwrap();
    logged_in_without_leaking("~/.pgpass", run(&db, home.path(), &[], &[]), "pgpass");
    std::fs::remove_file(&pgpass).unwrap();

    let services = home.path().join("services.conf");
    std::fs::write(
        &services,
        format!("[bench]\nhost=127.0.0.1\nport={port}\nuser=bob\ndbname=bobdb\npassword={PASSWORD}\n"),
    )
    .unwrap();
    let service_env = [("PGSERVICEFILE", services.display().to_string())];
    logged_in_without_leaking(
        "service=",
        run("service=bench", home.path(), &service_env, &[]),
        "service file",
    );
    let with_pgservice = [service_env[0].clone(), ("PGSERVICE", "bench".to_string())];
    logged_in_without_leaking(
        "PGSERVICE",
        run(
            &format!("host=127.0.0.1 port={port}"),
            home.path(),
            &with_pgservice,
            &[],
        ),
        "service file",
    );

    let file = home.path().join("pw");
    std::fs::write(&file, format!("{PASSWORD}\n")).unwrap();
    let f = file.display().to_string();
    logged_in_without_leaking(
        "--password-file",
        run(&db, home.path(), &[], &["--password-file", &f]),
        "password file",
    );
    let missing = run(&db, home.path(), &[], &["--password-file", "/nonexistent/pw"]).0;
    let e = String::from_utf8_lossy(&missing.stderr);
    assert!(
        !missing.status.success() && e.contains("password_file") && e.contains("/nonexistent/pw"),
        "{e}"
    );
    drop(admin);
    server.stop(None).unwrap();
}

/// The OS user the tests run as (libpq's default user).
fn os_user() -> String {
    let out = Command::new("id").arg("-un").output().unwrap();
    String::from_utf8(out.stdout).unwrap().trim().to_string()
}

#[test]
fn postgres_defaults_to_the_os_user_and_its_database_and_finds_their_pgpass_line() {
    // The OS user must give a password over TCP; postgres (the readiness check) needs none.
    let me = os_user();
    let (_hba, hba_file) =
        pg_hba("local all all trust\nhost all postgres 127.0.0.1/32 trust\nhost all all 127.0.0.1/32 scram-sha-256\n");
    let server = private_server(Kind::Postgres, format!("hba_file = '{}'", hba_file.display()));
    let port = server.port();
    let mut admin = postgres::Client::connect(&server.dsn(), postgres::NoTls).unwrap();
    admin
        .batch_execute(&format!("CREATE ROLE \"{me}\" LOGIN PASSWORD '{PASSWORD}'"))
        .unwrap();
    admin
        .batch_execute(&format!("CREATE DATABASE \"{me}\" OWNER \"{me}\""))
        .unwrap();
    let home = tempfile::tempdir().unwrap();
    let pgpass = home.path().join(".pgpass");
    std::fs::write(&pgpass, format!("*:*:*:{me}:{PASSWORD}\n")).unwrap();
    std::fs::set_permissions(&pgpass, std::fs::Permissions::from_mode(0o600)).unwrap();
    // No user and no database: libpq's are the OS user and a database of
    // that name, for the probe, the pgpass line and the sessions alike.
    let db = format!("host=127.0.0.1 port={port}");
    logged_in_without_leaking("the OS user", run(&db, home.path(), &[], &[]), "pgpass");
    // An empty PGPASSWORD is unset: the pgpass line still counts.
    logged_in_without_leaking(
        "an empty PGPASSWORD",
        run(&db, home.path(), &[("PGPASSWORD", String::new())], &[]),
        "pgpass",
    );
    // A file others can read is ignored, and said so as libpq says it.
    std::fs::set_permissions(&pgpass, std::fs::Permissions::from_mode(0o644)).unwrap();
    let (o, out) = run(&db, home.path(), &[], &[]);
    let warning = format!(
        "WARNING: password file \"{}\" has group or world access; permissions should be u=rw (0600) or less",
        pgpass.display()
    );
    assert!(String::from_utf8_lossy(&o.stderr).contains(&warning), "{o:?}");
    refused("a pgpass others can read", (o, out));
    drop(admin);
    server.stop(None).unwrap();
}

#[test]
fn postgres_takes_what_the_dsn_leaves_unset_from_libpqs_environment_variables() {
    let Some(dsn) = postgres_db("ibench_libpq_env").filter(|d| !d.is_empty()) else {
        return;
    };
    let admin: postgres::Config = postgres_admin().parse().unwrap();
    let host = match &admin.get_hosts()[0] {
        postgres::config::Host::Tcp(h) => h.clone(),
        postgres::config::Host::Unix(p) => p.display().to_string(),
    };
    let port = admin.get_ports().first().copied().unwrap_or(5432);
    let user = admin.get_user().unwrap_or("postgres").to_string();
    let home = tempfile::tempdir().unwrap();
    let env = [
        ("PGHOST", host),
        ("PGPORT", port.to_string()),
        ("PGUSER", user),
        ("PGDATABASE", "ibench_libpq_env".to_string()),
        ("PGSSLMODE", "require".to_string()),
        ("PGAPPNAME", "ibench-from-pgappname".to_string()),
        ("PGOPTIONS", "-c work_mem=12345kB".to_string()),
        ("PGCONNECT_TIMEOUT", "9".to_string()),
    ];
    let (o, out) = run("postgres://", home.path(), &env, &[]);
    assert!(o.status.success(), "{}", String::from_utf8_lossy(&o.stderr));
    let values = decoded(out.path());
    assert!(values.contains("TLSv1"), "PGSSLMODE=require: no TLS recorded");
    let setting = |name: &str| recorded_setting(out.path(), name);
    assert_eq!(setting("application_name").as_deref(), Some("ibench-from-pgappname"));
    assert_eq!(setting("work_mem").as_deref(), Some("12345 kB"));
    // The DSN's own words win.
    let (o, out) = run(&format!("{dsn}?sslmode=disable"), home.path(), &env, &[]);
    assert!(o.status.success(), "{}", String::from_utf8_lossy(&o.stderr));
    assert!(
        !decoded(out.path()).contains("TLSv1"),
        "sslmode=disable in the DSN lost"
    );
}

#[test]
fn mysql_takes_the_password_from_mysql_pwd_my_cnf_a_defaults_file_and_a_password_file() {
    let server = private_server(Kind::Mariadb, String::new());
    let port = server.port();
    {
        use mysql::prelude::Queryable;
        let mut admin = mysql::Conn::new(mysql::Opts::from_url(&server.dsn()).unwrap()).unwrap();
        admin
            .query_drop(format!(
                "CREATE USER bob@'127.0.0.1' IDENTIFIED BY '{PASSWORD}'; GRANT ALL ON test.* TO bob@'127.0.0.1'"
            ))
            .unwrap();
    }
    let db = format!("mysql://bob@127.0.0.1:{port}/test");
    let home = tempfile::tempdir().unwrap();

    refused("no password", run(&db, home.path(), &[], &[]));
    // One failed login per start (it used to try twice): an account's
    // failed-login limits and the server's error counters see one.
    let denied = || -> u64 {
        use mysql::prelude::Queryable;
        let mut admin = mysql::Conn::new(mysql::Opts::from_url(&server.dsn()).unwrap()).unwrap();
        let row: Option<(String, u64)> = admin
            .query_first("SHOW GLOBAL STATUS LIKE 'Access_denied_errors'")
            .unwrap();
        row.unwrap().1
    };
    let before = denied();
    refused(
        "a wrong MYSQL_PWD",
        run(&db, home.path(), &[("MYSQL_PWD", "wrong-pw".into())], &[]),
    );
    assert_eq!(denied() - before, 1, "failed logins of one start");
    logged_in_without_leaking(
        "MYSQL_PWD",
        run(&db, home.path(), &[("MYSQL_PWD", PASSWORD.into())], &[]),
        "MYSQL_PWD",
    );

    let cnf = home.path().join(".my.cnf");
    std::fs::write(
        &cnf,
        format!("[mysqld]\npassword=nope\n[client]\npassword=\"{PASSWORD}\"\n"),
    )
    .unwrap();
    logged_in_without_leaking("~/.my.cnf", run(&db, home.path(), &[], &[]), "option file");
    // Anyone could have written a world-writable file: the client ignores it, as ibench.
    {
        std::fs::set_permissions(&cnf, std::fs::Permissions::from_mode(0o666)).unwrap();
        let (o, out) = run(&db, home.path(), &[], &[]);
        assert!(
            String::from_utf8_lossy(&o.stderr).contains("World-writable config file"),
            "no warning"
        );
        refused("a world-writable ~/.my.cnf", (o, out));
    }
    std::fs::remove_file(&cnf).unwrap();

    // The client's syntax: a group header with a comment, a quoted value
    // with a `#` and an escaped backslash, a comment after it.
    let carol = format!("{PASSWORD}#\\ q");
    {
        use mysql::prelude::Queryable;
        let mut admin = mysql::Conn::new(mysql::Opts::from_url(&server.dsn()).unwrap()).unwrap();
        admin
            .query_drop(format!(
                "CREATE USER carol@'127.0.0.1' IDENTIFIED BY '{}'; GRANT ALL ON test.* TO carol@'127.0.0.1'",
                carol.replace('\\', "\\\\")
            ))
            .unwrap();
    }
    std::fs::write(
        &cnf,
        format!(
            "[client]   # carol's\nuser = carol\npassword = \"{}\" # quoted\n",
            carol.replace('\\', "\\\\")
        ),
    )
    .unwrap();
    logged_in_without_leaking(
        "~/.my.cnf in the client's syntax",
        run(&format!("mysql://127.0.0.1:{port}/test"), home.path(), &[], &[]),
        "option file",
    );
    std::fs::remove_file(&cnf).unwrap();

    let defaults = home.path().join("bench.cnf");
    std::fs::write(&defaults, format!("[client]\nuser=bob\npassword={PASSWORD}\n")).unwrap();
    let with_file = format!("mysql://127.0.0.1:{port}/test?defaults-file={}", defaults.display());
    logged_in_without_leaking("defaults-file", run(&with_file, home.path(), &[], &[]), "option file");

    let file = home.path().join("pw");
    std::fs::write(&file, format!("{PASSWORD}\n")).unwrap();
    let f = file.display().to_string();
    logged_in_without_leaking(
        "--password-file",
        run(&db, home.path(), &[], &["--password-file", &f]),
        "password file",
    );
    server.stop(None).unwrap();
}

#[test]
fn mysql_takes_a_host_the_dsn_leaves_out_from_the_option_files_then_mysql_host() {
    let server = private_server(Kind::Mariadb, String::new());
    let port = server.port();
    let home = tempfile::tempdir().unwrap();
    let reached = |what: &str, (o, out): (Output, tempfile::TempDir)| -> String {
        assert!(o.status.success(), "{what}: {}", String::from_utf8_lossy(&o.stderr));
        decoded(out.path())
    };
    let there = format!("root@127.0.0.1:{port}/test");

    let env = [
        ("MYSQL_HOST", "127.0.0.1".to_string()),
        ("MYSQL_TCP_PORT", port.to_string()),
    ];
    let target = reached("MYSQL_HOST", run("mysql://root@/test", home.path(), &env, &[]));
    assert!(target.contains(&there), "MYSQL_HOST: {there} not the recorded target");

    // The option files come first, as the client's: MYSQL_HOST names a host
    // that does not resolve.
    std::fs::write(
        home.path().join(".my.cnf"),
        format!("[client]\nuser=root\nhost=127.0.0.1\nport={port}\n"),
    )
    .unwrap();
    let env = [("MYSQL_HOST", "no-such-host.invalid".to_string())];
    let target = reached("~/.my.cnf's host", run("mysql:///test", home.path(), &env, &[]));
    assert!(target.contains(&there), "~/.my.cnf: {there} not the recorded target");

    // A DSN's own host is never replaced.
    let (o, _out) = run("mysql://root@no-such-host.invalid/test", home.path(), &[], &[]);
    assert!(!o.status.success(), "the DSN's host was replaced by the file's");
}
