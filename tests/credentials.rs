//! Passwords kept where people keep them: PGPASSWORD, ~/.pgpass, a
//! pg_service.conf service; MYSQL_PWD, ~/.my.cnf, a defaults-file; and
//! ibench's --password-file. Each logs in to a server of its own that asks
//! for the password, and none lets the password reach a result file, an
//! output line or an error.

mod common;

use common::{all_bytes, contains, decoded, private_server};
use ibench::server::Kind;
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
        .env_remove("MYSQL_PWD");
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
    let hba = tempfile::tempdir().unwrap();
    let hba_file = hba.path().join("pg_hba.conf");
    std::fs::write(
        &hba_file,
        "local all all trust\nhost all postgres 127.0.0.1/32 trust\nhost all bob 127.0.0.1/32 scram-sha-256\n",
    )
    .unwrap();
    use std::os::unix::fs::PermissionsExt;
    std::fs::set_permissions(hba.path(), std::fs::Permissions::from_mode(0o755)).unwrap();
    std::fs::set_permissions(&hba_file, std::fs::Permissions::from_mode(0o644)).unwrap();
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
        use std::os::unix::fs::PermissionsExt;
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
