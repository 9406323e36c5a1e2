//! A password never reaches a file, an output line or an error, whatever
//! form it takes: URL userinfo, a URL's `?password=`, a quoted libpq
//! key=value word, or a server setting that embeds a connection string
//! (PostgreSQL's primary_conninfo).

mod common;

use common::{all_bytes, contains, decoded, mysql_admin, mysql_db, postgres_admin, postgres_db};

/// Runs a short sequence on `dsn` with the CLI and checks that `password`
/// is in none of its output, files (raw and decoded) or in the error about
/// `bad` (a DSN of a database that does not exist).
fn nothing_leaks(dsn: &str, bad: &str, password: &str) {
    let dir = tempfile::tempdir().unwrap();
    let out = std::process::Command::new(env!("CARGO_BIN_EXE_ibench"))
        .args([
            "run",
            "--db",
            dsn,
            "--steps",
            "l.i0,l.x,qp100",
            "--rows-l-i0",
            "1000",
            "--query-seconds",
            "0.5",
        ])
        .arg("--out")
        .arg(dir.path())
        .output()
        .unwrap();
    assert!(out.status.success(), "{}", String::from_utf8_lossy(&out.stderr));
    assert!(
        !contains(&out.stdout, password) && !contains(&out.stderr, password),
        "in the output of {dsn}"
    );
    assert!(!contains(&all_bytes(dir.path()), password), "in the files of {dsn}");
    assert!(
        !decoded(dir.path()).contains(password),
        "in the decoded Parquet files of {dsn}"
    );
    let e = ibench::connect::open(bad)
        .err()
        .map(|e| e.to_string())
        .unwrap_or_default();
    assert!(!e.is_empty(), "{bad} should fail");
    assert!(!e.contains(password), "{e}");
}

#[test]
fn a_mariadb_password_in_the_dsn_reaches_no_file_output_or_error() {
    use mysql::prelude::Queryable;
    let password = "Pw-9f3k2-secret";
    let Some(db) = mysql_db("ibench_pw").filter(|d| !d.is_empty()) else {
        return;
    };
    let mut admin = mysql::Conn::new(mysql::Opts::from_url(&mysql_admin()).unwrap()).unwrap();
    admin.query_drop("DROP USER IF EXISTS 'ibench_pw'@'%'").unwrap();
    admin
        .query_drop(format!("CREATE USER 'ibench_pw'@'%' IDENTIFIED BY '{password}'"))
        .unwrap();
    admin.query_drop("GRANT ALL ON ibench_pw.* TO 'ibench_pw'@'%'").unwrap();
    let host = db.split('@').nth(1).unwrap();
    nothing_leaks(
        &format!("mysql://ibench_pw:{password}@{host}"),
        &format!("mysql://ibench_pw:{password}@{host}_missing"),
        password,
    );
    admin.query_drop("DROP USER 'ibench_pw'@'%'").unwrap();
}

#[test]
fn a_postgres_password_in_any_dsn_form_reaches_no_file_output_or_error() {
    let Some(db) = postgres_db("ibench_pw").filter(|d| !d.is_empty()) else {
        return;
    };
    // Trust authentication ignores the password, but it must not leak either.
    let (base, name) = db.rsplit_once('/').unwrap();
    let host = base.split('@').nth(1).unwrap();
    let (h, port) = host.split_once(':').unwrap();
    let password = "Pg-7q2v-secret";
    let spaced = "Pg 7q2v secret";
    for (dsn, bad, pw) in [
        (
            db.replacen("postgres@", &format!("postgres:{password}@"), 1),
            format!("postgres://postgres:{password}@{host}/{name}_missing"),
            password,
        ),
        (
            format!("{db}?password={password}"),
            format!("{base}/{name}_missing?password={password}"),
            password,
        ),
        (
            format!("host={h} port={port} user=postgres password='{spaced}' dbname={name}"),
            format!("host={h} port={port} user=postgres password='{spaced}' dbname={name}_missing"),
            spaced,
        ),
    ] {
        nothing_leaks(&dsn, &bad, pw);
    }
}

/// Sets a server setting with ALTER SYSTEM and reloads; resets it when dropped.
struct SystemSetting(&'static str);

impl SystemSetting {
    fn set(name: &'static str, value: &str) -> SystemSetting {
        let mut c = postgres::Client::connect(&postgres_admin(), postgres::NoTls).unwrap();
        c.batch_execute(&format!("ALTER SYSTEM SET {name} = '{value}'"))
            .unwrap();
        c.batch_execute("SELECT pg_reload_conf()").unwrap();
        SystemSetting(name)
    }
}

impl Drop for SystemSetting {
    fn drop(&mut self) {
        if let Ok(mut c) = postgres::Client::connect(&postgres_admin(), postgres::NoTls) {
            let _ = c.batch_execute(&format!("ALTER SYSTEM RESET {}", self.0));
            let _ = c.batch_execute("SELECT pg_reload_conf()");
        }
    }
}

#[test]
fn a_password_in_a_server_setting_is_not_recorded() {
    let Some(db) = postgres_db("ibench_pw_setting").filter(|d| !d.is_empty()) else {
        return;
    };
    let password = "Repl-4x8z-secret";
    let setting = SystemSetting::set(
        "primary_conninfo",
        &format!("host=primary port=5432 user=replicator password={password} application_name=x"),
    );
    std::thread::sleep(std::time::Duration::from_millis(300));
    let dir = tempfile::tempdir().unwrap();
    let out = common::run(
        &common::config(serde_json::json!({"db": db, "steps": ["l.i0"], "rows_l_i0": 100})),
        dir.path(),
    );
    drop(setting);
    let recorded = out
        .results
        .config
        .iter()
        .find(|s| s.name == "primary_conninfo")
        .expect("recorded");
    assert!(recorded.value.contains("user=replicator password=***"), "{recorded:?}");
    assert!(!decoded(dir.path()).contains(password));
    assert!(!contains(&all_bytes(dir.path()), password));
}

#[test]
fn no_part_of_a_key_value_password_with_an_escaped_space_reaches_an_error() {
    // libpq reads `a\ b` as "a b"; a failed connection (nothing listens on
    // port 1) must not quote the part after the space.
    let dsn = r"host=127.0.0.1 port=1 user=u dbname=d password=Pw-4\ leak-test";
    let out = std::process::Command::new(env!("CARGO_BIN_EXE_ibench"))
        .args(["run", "--db", dsn, "--steps", "l.i0"])
        .arg("--out")
        .arg(tempfile::tempdir().unwrap().path())
        .output()
        .unwrap();
    let text = format!(
        "{}{}",
        String::from_utf8_lossy(&out.stdout),
        String::from_utf8_lossy(&out.stderr)
    );
    assert!(!out.status.success(), "{text}");
    assert!(text.contains("cannot connect"), "parsed as libpq does: {text}");
    assert!(!text.contains("leak-test") && !text.contains("Pw-4"), "{text}");
}
