//! Benchmarks are often run by a user who owns the test database but is no
//! administrator: maintenance needing a privilege the user lacks is skipped
//! with a warning saying what and why, and the run goes on.

mod common;

use common::{config, mysql_admin, postgres_admin, reachable, run};
use ibench::results::{RunStatus, StepStatus};
use serde_json::json;

/// The quick sequence, small, on `db`: every step ok.
fn quick(db: &str) -> ibench::exec::RunOutcome {
    let dir = tempfile::tempdir().unwrap();
    let out = run(
        &config(json!({
            "db": db, "rows_l_i0": 3000, "rows_l_i1": 500, "rows_l_i2": 100, "query_seconds": 0.5,
            "wait_seconds": 0.1, "steps": ["l.i0", "l.x", "l.i1", "wait", "qr100"],
        })),
        dir.path(),
    );
    assert_eq!(out.results.run.status, RunStatus::Ok, "{:?}", out.results.run.error);
    assert!(out.results.steps.iter().all(|s| s.status == StepStatus::Ok));
    out
}

#[test]
fn a_postgres_user_without_checkpoint_privileges_runs_with_a_warning() {
    let admin = postgres_admin();
    let Ok(mut c) = postgres::Client::connect(&admin, postgres::NoTls) else {
        reachable("PostgreSQL", false);
        return;
    };
    for sql in [
        "DROP DATABASE IF EXISTS ibench_limited WITH (FORCE)",
        "DROP ROLE IF EXISTS ibench_limited",
        "CREATE ROLE ibench_limited LOGIN",
        "CREATE DATABASE ibench_limited OWNER ibench_limited",
    ] {
        c.batch_execute(sql).unwrap();
    }
    let host = admin.split('@').nth(1).unwrap().rsplit_once('/').unwrap().0;
    let out = quick(&format!("postgres://ibench_limited@{host}/ibench_limited"));
    let w = &out.results.run.warnings;
    assert!(
        w.iter()
            .any(|w| w.starts_with("wait: CHECKPOINT skipped") && w.contains("42501")),
        "{w:?}"
    );
    c.batch_execute("DROP DATABASE ibench_limited WITH (FORCE)").unwrap();
    c.batch_execute("DROP ROLE ibench_limited").unwrap();
}

#[test]
fn a_mariadb_user_without_super_runs_with_a_warning_and_the_setting_untouched() {
    use mysql::prelude::Queryable;
    let Ok(mut c) = mysql::Conn::new(mysql::Opts::from_url(&mysql_admin()).unwrap()) else {
        reachable("MariaDB", false);
        return;
    };
    c.query_drop("DROP DATABASE IF EXISTS ibench_limited").unwrap();
    c.query_drop("DROP USER IF EXISTS 'ibench_limited'@'%'").unwrap();
    c.query_drop("CREATE DATABASE ibench_limited").unwrap();
    c.query_drop("CREATE USER 'ibench_limited'@'%'").unwrap();
    c.query_drop("GRANT ALL ON ibench_limited.* TO 'ibench_limited'@'%'")
        .unwrap();
    let before: Option<f64> = c.query_first("SELECT @@GLOBAL.innodb_max_dirty_pages_pct").unwrap();
    let host = mysql_admin()
        .split('@')
        .nth(1)
        .unwrap()
        .rsplit_once('/')
        .unwrap()
        .0
        .to_string();
    let out = quick(&format!("mysql://ibench_limited@{host}/ibench_limited?engine=innodb"));
    let w = &out.results.run.warnings;
    assert!(
        w.iter().any(
            |w| w.starts_with("wait: SET GLOBAL innodb_max_dirty_pages_pct = 0 skipped")
                // 1044: no access to the ledger's database (recorded before any
                // change); 1227: no SUPER for the change itself.
                && (w.contains("(1044)") || w.contains("(1227)"))
        ),
        "{w:?}"
    );
    let after: Option<f64> = c.query_first("SELECT @@GLOBAL.innodb_max_dirty_pages_pct").unwrap();
    assert_eq!(before, after);
    c.query_drop("DROP DATABASE ibench_limited").unwrap();
    c.query_drop("DROP USER 'ibench_limited'@'%'").unwrap();
}
