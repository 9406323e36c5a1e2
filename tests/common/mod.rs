//! Helpers shared by the run tests.
#![allow(dead_code)]

use ibench::exec::{self, RunOutcome, Silent};
use ibench::results::StepRow;
use ibench::workload::Config;
use serde_json::Value;
use std::path::Path;

/// A configuration: the quick preset overlaid by `params` (a JSON object).
pub fn config(params: Value) -> Config {
    Config::resolve(&[params.as_object().expect("an object").clone()]).expect("a valid config")
}

/// Runs `config` with results under `out`.
pub fn run(config: &Config, out: &Path) -> RunOutcome {
    exec::run(config, out, &Silent, &ibench::Stop::new()).expect("the run starts")
}

/// The step named `name`.
pub fn step<'a>(outcome: &'a RunOutcome, name: &str) -> &'a StepRow {
    outcome
        .results
        .steps
        .iter()
        .find(|s| s.step == name)
        .unwrap_or_else(|| panic!("no step {name}"))
}

/// A percentile column of a step (µs): `op` insert/delete/query, `service` or response, index into PERCENTILES.
pub fn latency(step: &StepRow, op: ibench::metrics::Op, service: bool, index: usize) -> f64 {
    step.latency(op, service, index).expect("the op ran")
}

/// The servers: IBENCH_POSTGRES / IBENCH_MYSQL (DSNs of an admin account) or the local ones.
pub fn postgres_admin() -> String {
    std::env::var("IBENCH_POSTGRES").unwrap_or_else(|_| "postgres://postgres@127.0.0.1:5432/postgres".into())
}

pub fn mysql_admin() -> String {
    std::env::var("IBENCH_MYSQL").unwrap_or_else(|_| "mysql://root@127.0.0.1:3306/test".into())
}

/// None (skip) when the server is down outside CI; a failure in CI.
pub fn reachable(what: &str, ok: bool) -> bool {
    if !ok {
        assert!(
            std::env::var("CI").as_deref() != Ok("true"),
            "{what} is not reachable, and CI=true: failing"
        );
        eprintln!("note: {what} is not reachable; skipping (CI would fail)");
    }
    ok
}

/// A fresh PostgreSQL database `name`; returns its DSN.
pub fn postgres_db(name: &str) -> Option<String> {
    let admin = postgres_admin();
    let mut client = match postgres::Client::connect(&admin, postgres::NoTls) {
        Ok(c) => c,
        Err(_) => return reachable("PostgreSQL", false).then(String::new),
    };
    client
        .batch_execute(&format!("DROP DATABASE IF EXISTS {name} WITH (FORCE)"))
        .unwrap();
    client.batch_execute(&format!("CREATE DATABASE {name}")).unwrap();
    let base = admin.rsplit_once('/').unwrap().0;
    Some(format!("{base}/{name}"))
}

/// A fresh MySQL/MariaDB database `name`; returns its DSN (no engine yet).
pub fn mysql_db(name: &str) -> Option<String> {
    use mysql::prelude::Queryable;
    let admin = mysql_admin();
    let mut conn = match mysql::Conn::new(mysql::Opts::from_url(&admin).unwrap()) {
        Ok(c) => c,
        Err(_) => return reachable("MariaDB", false).then(String::new),
    };
    conn.query_drop(format!("DROP DATABASE IF EXISTS {name}")).unwrap();
    conn.query_drop(format!("CREATE DATABASE {name}")).unwrap();
    let base = admin.rsplit_once('/').unwrap().0;
    Some(format!("{base}/{name}"))
}

/// Every byte of every file under `dir`.
pub fn all_bytes(dir: &Path) -> Vec<u8> {
    let mut out = Vec::new();
    for entry in std::fs::read_dir(dir).unwrap() {
        let p = entry.unwrap().path();
        if p.is_dir() {
            out.extend(all_bytes(&p));
        } else {
            out.extend(std::fs::read(&p).unwrap());
        }
    }
    out
}

pub fn contains(haystack: &[u8], needle: &str) -> bool {
    haystack.windows(needle.len()).any(|w| w == needle.as_bytes())
}

/// Every value of every Parquet file of the run directories under `dir`, as text.
pub fn decoded(dir: &Path) -> String {
    let mut text = String::new();
    for run in std::fs::read_dir(dir).unwrap() {
        let run = run.unwrap().path();
        for file in std::fs::read_dir(&run).unwrap() {
            let path = file.unwrap().path();
            if path.extension().is_some_and(|e| e == "parquet") {
                let reader = parquet::arrow::arrow_reader::ParquetRecordBatchReaderBuilder::try_new(
                    std::fs::File::open(&path).unwrap(),
                )
                .unwrap()
                .build()
                .unwrap();
                for batch in reader {
                    for col in batch.unwrap().columns() {
                        text += &format!("{col:?}");
                    }
                }
            }
        }
    }
    text
}

/// A server of the test's own (a fresh data directory, a free port), with
/// `config` appended to its configuration; it stops on drop.
pub fn private_server(kind: ibench::server::Kind, config: String) -> ibench::server::Managed {
    let spec = ibench::server::ServerSpec {
        kind,
        bin: None,
        config,
        work_dir: std::env::temp_dir(),
        keep_data: false,
    };
    ibench::server::Managed::start(&spec).unwrap_or_else(|e| panic!("a private {kind:?}: {e}"))
}

/// A `pg_hba.conf` holding `lines`, readable by a server's own account
/// (for `hba_file = '...'`); the directory lives as long as the handle.
pub fn pg_hba(lines: &str) -> (tempfile::TempDir, std::path::PathBuf) {
    use std::os::unix::fs::PermissionsExt;
    let dir = tempfile::tempdir().unwrap();
    let file = dir.path().join("pg_hba.conf");
    std::fs::write(&file, lines).unwrap();
    std::fs::set_permissions(dir.path(), std::fs::Permissions::from_mode(0o755)).unwrap();
    std::fs::set_permissions(&file, std::fs::Permissions::from_mode(0o644)).unwrap();
    (dir, file)
}

/// The value of the recorded setting `name` (config.parquet) of the runs under `dir`.
pub fn recorded_setting(dir: &Path, name: &str) -> Option<String> {
    use arrow::array::{Array, StringArray};
    for run in std::fs::read_dir(dir).unwrap() {
        let Ok(file) = std::fs::File::open(run.unwrap().path().join("config.parquet")) else {
            continue;
        };
        let reader = parquet::arrow::arrow_reader::ParquetRecordBatchReaderBuilder::try_new(file)
            .unwrap()
            .build()
            .unwrap();
        for batch in reader {
            let batch = batch.unwrap();
            let column = |c: &str| {
                batch
                    .column_by_name(c)
                    .and_then(|a| a.as_any().downcast_ref::<StringArray>().cloned())
                    .unwrap_or_else(|| panic!("config.parquet has no text column {c}"))
            };
            let (names, values) = (column("name"), column("value"));
            if let Some(i) = (0..names.len()).find(|&i| names.value(i) == name) {
                return Some(values.value(i).to_string());
            }
        }
    }
    None
}
