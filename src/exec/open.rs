//! Opening a run, in phases: its id and directory, its database (the
//! default one in the run directory when none is named), and its first
//! record (what it runs, where, and the host's facts).

use super::facts;
use super::plan::Probe;
use crate::connect::{self, Connector, SessionSpec};
use crate::error::{Error, Result};
use crate::metrics::unix_micros;
use crate::results::{RunResults, RunRow, RunStatus};
use crate::workload::{param, Config, Statements};
use std::path::Path;

/// A run id that sorts by start time: `20261129T233000Z-1a2b3c`.
pub(super) fn run_id() -> String {
    run_id_at(unix_micros(), std::process::id())
}

/// The run id of a run started at `micros` (Unix µs) by process `pid`: the
/// UTC second, then 6 hex digits: the millisecond (3 digits, so ids started
/// in the same second still sort by start time) and 3 digits mixed from the
/// time and the pid, which tell apart runs started in the same millisecond.
fn run_id_at(micros: i64, pid: u32) -> String {
    let t = crate::metrics::utc(micros);
    let stamp = format!(
        "{:04}{:02}{:02}T{:02}{:02}{:02}Z",
        t.year(),
        t.month() as u8,
        t.day(),
        t.hour(),
        t.minute(),
        t.second()
    );
    let ms = micros.rem_euclid(1_000_000) / 1000;
    let tag = (micros as u64 ^ (pid as u64).rotate_left(20)).wrapping_mul(0x9e37_79b9_7f4a_7c15) >> 52;
    format!("{stamp}-{ms:03x}{tag:03x}")
}

/// The benchmark's tables: the Insert Benchmark's `pi1`, `pi2`, ... and,
/// when a sysbench step runs, `sbtest1`, `sbtest2`, ...
pub(super) fn table_names(c: &Config) -> Vec<String> {
    let ib = (0..c.ib_tables()).map(|t| format!("pi{}", t + 1));
    let sb = c.steps.iter().any(|s| s.sb().is_some());
    let sysbench = (1..=c.tables).filter(move |_| sb).map(crate::connect::sb_table_name);
    ib.chain(sysbench).collect()
}

/// How the connector's sessions write the tables, from the statement choices.
pub(super) fn session_spec(c: &Config) -> SessionSpec {
    SessionSpec {
        server_keys: c.server_keys,
        literal: c.statements == Statements::Literal,
    }
}

/// Creates the run's own directory under `out`: it is new, so a run never
/// writes into another's.
fn make_dir(out: &Path, dir: &Path) -> Result<()> {
    std::fs::create_dir_all(out)
        .and_then(|()| std::fs::create_dir(dir))
        .map_err(|source| Error::Io {
            action: "cannot create the output directory",
            path: dir.to_path_buf(),
            source,
        })
}

/// A key/value store cannot run table steps: refused before any work.
fn refuse_table_steps(config: &Config, connector: &dyn Connector) -> Result<()> {
    match config.steps.iter().find(|s| s.kv().is_none()) {
        Some(table_step) if connector.kv_only() => Err(Error::config(
            param!(steps),
            format!(
                "{table_step} is {} step; {} runs the key/value steps only (fillseq, overwrite, readrandom, ...)",
                if table_step.sb().is_some() {
                    "a sysbench"
                } else {
                    "an Insert Benchmark"
                },
                connector.dbms()
            ),
        )),
        _ => Ok(()),
    }
}

/// Opens `config`'s database and creates the run directory `dir` (after the
/// database opened, so a bad DSN leaves no directory behind). With no
/// database named, the default one in the run directory: embedded RocksDB
/// for key/value steps alone (when built in), else a SQLite file; `config.db`
/// then names it.
pub(super) fn open_database(config: &mut Config, out: &Path, dir: &Path) -> Result<Box<dyn Connector>> {
    let password = config
        .password_file
        .as_deref()
        .map(connect::read_password_file)
        .transpose()?;
    let mut connector = if config.db.is_empty() {
        make_dir(out, dir)?;
        config.db = if cfg!(feature = "rocksdb") && config.kv_only() {
            format!("rocksdb:{}", dir.join("rocksdb").display())
        } else {
            format!("sqlite:{}", dir.join("ibench.sqlite").display())
        };
        connect::open(&config.db)?
    } else {
        let c = connect::open_with_password(&config.db, password.as_deref())?;
        refuse_table_steps(config, c.as_ref())?;
        make_dir(out, dir)?;
        c
    };
    connector.set_spec(session_spec(config));
    Ok(connector)
}

/// The file a live run holds locked (`flock`), so a reader can tell a run
/// whose process died (a SIGKILL, an OOM kill, a power loss) from one under
/// way: `ibench.load` says `killed` for a run that says `running` and whose
/// lock nobody holds.
pub(super) const LOCK: &str = ".lock";

/// Takes run directory `dir`'s lock, held until the returned file closes.
pub(super) fn hold(dir: &Path) -> Result<std::fs::File> {
    let path = dir.join(LOCK);
    let io = |source| Error::Io {
        action: "cannot lock",
        path: path.clone(),
        source,
    };
    let file = std::fs::File::create(&path).map_err(io)?;
    file.lock().map_err(io)?;
    Ok(file)
}

/// The run's first record: what it runs and where, the host's facts and the
/// server's settings, and where its host counters come from.
pub(super) fn first_record(id: String, config: &Config, connector: &dyn Connector) -> Result<(RunResults, Probe)> {
    let settings: serde_json::Map<String, serde_json::Value> =
        connector.settings().into_iter().map(|(k, v)| (k, v.into())).collect();
    let (config_rows, warnings, mut probe) = facts::environment(connector);
    if config.shard.is_some() {
        // A shard is one of several clients of the server: the server's
        // processes are measured once, on the server's host (docs/distributed.md).
        probe.servers = Default::default();
    }
    let run = RunRow {
        run_id: id,
        started_at_us: unix_micros(),
        ibench_version: env!("CARGO_PKG_VERSION").into(),
        build_profile: if cfg!(debug_assertions) { "debug" } else { "release" }.into(),
        seed: config.seed,
        dbms: connector.dbms().into(),
        dbms_version: connector.version()?,
        label: config.label.clone(),
        target: connector.target(),
        host: facts::host_name(),
        cpus: std::thread::available_parallelism()
            .map(|n| n.get() as u32)
            .unwrap_or(1),
        // The recorded configuration names the database as its target: no password.
        config: serde_json::to_string(&Config {
            db: connector.target(),
            ..config.clone()
        })
        .expect("a config serializes"),
        settings: serde_json::Value::Object(settings).to_string(),
        status: RunStatus::Running,
        error: None,
        warnings,
        verified: None,
        verify_error: None,
    };
    let results = RunResults {
        run,
        config: config_rows,
        ..RunResults::default()
    };
    Ok((results, probe))
}

#[cfg(test)]
mod tests {
    use super::run_id_at;

    #[test]
    fn run_ids_sort_by_start_time_within_a_second_and_differ_between_processes() {
        // Every millisecond across a second's boundary, and a few µs apart.
        let start = 1_764_806_399_000_000i64; // 2025-12-03T23:59:59Z
        let times: Vec<i64> = (0..2_000).map(|i| start + i * 1_000 + (i % 7)).collect();
        let ids: Vec<String> = times.iter().map(|&t| run_id_at(t, 4242)).collect();
        let mut sorted = ids.clone();
        sorted.sort();
        assert_eq!(sorted, ids, "ids must sort in start order");
        assert!(ids[0].starts_with("20251203T235959Z-000"), "{}", ids[0]);
        assert!(ids[1_999].starts_with("20251204T000000Z-3e7"), "{}", ids[1_999]);
        assert!(ids.iter().all(|id| id.len() == "20251203T235959Z-000000".len()));
        // Two processes starting in the same microsecond get different ids.
        assert_ne!(run_id_at(start, 100), run_id_at(start, 101));
    }
}
