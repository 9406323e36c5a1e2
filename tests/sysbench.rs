//! The sysbench suite against real databases: the whole suite on SQLite,
//! PostgreSQL and MariaDB (InnoDB and MyRocks), each microbenchmark's
//! statements per event and rows per statement checked against the
//! server's own counters (pg_stat_statements; Com_* and Rows_sent), the
//! pauses leaving every setting as it was, the same bytes from the same
//! seed on every engine, and bad input refused by name. Outside CI a
//! missing server skips a test with a note; in CI (CI=true) it fails.

mod common;

use common::{config, mysql_db, postgres_db, private_server, reachable, run, step};
use ibench::metrics::CounterRow;
use ibench::results::{RunStatus, StepRow, StepStatus};
use ibench::server::Kind;
use ibench::workload::sysbench::{self, SbStep};
use serde_json::{json, Value};
use std::collections::HashMap;

/// The whole current suite, small and short: `extra` overlaid.
fn suite(db: &str, extra: Value) -> ibench::workload::Config {
    let mut params = json!({
        "db": db, "steps": ["sysbench"], "tables": 2, "table_size": 3000, "clients": 2,
        "read_seconds": 0.3, "write_seconds": 0.3, "insert_seconds": 0.3, "scan_warm_seconds": 0.2,
        "postwrite_seconds": 0.2, "verify": "full",
    });
    for (k, v) in extra.as_object().unwrap() {
        params[k] = v.clone();
    }
    config(params)
}

/// Every step ran its course, every check passed; the steps' rows by name.
fn all_ok(out: &ibench::exec::RunOutcome) -> HashMap<String, StepRow> {
    assert_eq!(out.results.run.status, RunStatus::Ok, "{:?}", out.results.run.error);
    assert_eq!(
        out.results.run.verified,
        Some(true),
        "{:?}",
        out.results.run.verify_error
    );
    let mut steps = HashMap::new();
    for s in &out.results.steps {
        assert_eq!(s.status, StepStatus::Ok, "{}: {:?}", s.step, s.error);
        assert_ne!(s.verified, Some(false), "{}: {:?}", s.step, s.verify_error);
        steps.insert(s.step.clone(), s.clone());
    }
    assert_eq!(steps.len(), sysbench::SUITE.len());
    steps
}

/// The microbenchmark of step row `s` and its statements per event.
fn per_event(s: &StepRow) -> Option<(sysbench::Microbenchmark, u64)> {
    let m = sysbench::parse(&s.step)?.ok()?.microbenchmark()?;
    Some((m, m.test.event(m.range).statements() as u64))
}

/// Each microbenchmark ran events, each `statements per event` statements
/// (a restarted event's attempts aside).
fn check_statements_per_event(steps: &HashMap<String, StepRow>) {
    for s in steps.values() {
        let Some((_, n)) = per_event(s) else { continue };
        let events = s.events.expect("a microbenchmark counts its events");
        assert!(events > 0, "{}: no events", s.step);
        assert_eq!(s.queries, events * n, "{}: {n} statements per event", s.step);
        assert!(s.latency(ibench::metrics::Op::Event, false, 2).is_some(), "{}", s.step);
        assert!(
            s.latency(ibench::metrics::Op::Statement, false, 2).is_some(),
            "{}",
            s.step
        );
    }
}

/// The delta of counter `name` of `source` over step `step`.
fn delta(counters: &[CounterRow], step: &str, source: &str, name: &str) -> f64 {
    counters
        .iter()
        .find(|c| c.step == step && c.source == source && c.name == name)
        .and_then(|c| c.delta())
        .unwrap_or(0.0)
}

#[test]
fn the_whole_suite_runs_on_sqlite_and_every_table_is_verified() {
    let dir = tempfile::tempdir().unwrap();
    let db = format!("sqlite:{}", dir.path().join("sb.db").display());
    let out = run(&suite(&db, json!({})), dir.path());
    let steps = all_ok(&out);
    check_statements_per_event(&steps);
    assert_eq!(steps["load"].inserts, 6000);
    assert_eq!(steps["load"].verified, Some(true));
    assert_eq!(steps["create-index"].indexed_rows, Some(6000));
    // Reads return rows; a covered range reads 101 (x .. x + 100).
    let rows_per = |name: &str| steps[name].statement_rows.unwrap() as f64 / steps[name].queries as f64;
    assert!(rows_per("point-query") > 0.9, "{}", rows_per("point-query"));
    assert!(rows_per("range-covered-pk") > 90.0 && rows_per("range-covered-pk") <= 101.0);
    assert!((rows_per("random-points_range=10") - 10.0).abs() < 1.0);
    // delete removed rows, insert added some: the final count checked them.
    assert!(steps["delete"].deletes > 0 && steps["insert"].inserts > 0);
}

#[test]
fn the_whole_suite_runs_on_postgres_with_pg_stat_statements_counting_each_statement() {
    if !reachable(
        "PostgreSQL",
        postgres_db("ibench_sb_probe").is_some_and(|d| !d.is_empty()),
    ) {
        return;
    }
    let server = private_server(Kind::Postgres, "shared_preload_libraries = 'pg_stat_statements'".into());
    let mut admin = postgres::Client::connect(&server.dsn(), postgres::NoTls).unwrap();
    admin.batch_execute("CREATE EXTENSION pg_stat_statements").unwrap();
    let dir = tempfile::tempdir().unwrap();
    let out = run(&suite(&server.dsn(), json!({})), dir.path());
    let steps = all_ok(&out);
    check_statements_per_event(&steps);
    let counters = &out.results.counters;
    // pg_stat_statements counts a prepared BEGIN or COMMIT once per session
    // (PostgreSQL 15 and 18 alike): transactions are pg_stat_database's commits.
    let kinds = ["select", "update", "insert", "delete"];
    for s in steps.values() {
        let Some((m, _)) = per_event(s) else { continue };
        let stat = |name: String| delta(counters, &s.step, "pg_stat_statements", &name);
        let calls: f64 = kinds.iter().map(|k| stat(format!("{k}.calls"))).sum();
        let events = s.events.unwrap() as f64;
        let trx = m.test.event(m.range).trx;
        let inner = s.queries as f64 - if trx { 2.0 * events } else { 0.0 };
        // Restarted events' statements before the failure count on the server, not here.
        let restarted = s.retries as f64 * per_event(s).unwrap().1 as f64;
        assert!(
            calls >= inner && calls <= inner + restarted,
            "{}: pg_stat_statements counted {calls} statements, ibench {inner} (+{restarted} restarted)",
            s.step
        );
        // A transaction's statements commit together: one commit per event,
        // against one per statement in autocommit (autovacuum and the
        // counter reader commit some more of their own).
        let commits = delta(counters, &s.step, "pg_stat_database", "xact_commit");
        let in_trx = commits >= events && commits < events + (inner - events) / 2.0;
        let autocommit = commits >= inner;
        assert!(
            if trx { in_trx } else { autocommit },
            "{}: {commits} commits for {events} events of {inner} statements",
            s.step
        );
        if s.retries == 0 {
            let rows: f64 = kinds.iter().map(|k| stat(format!("{k}.rows"))).sum();
            assert_eq!(rows, s.statement_rows.unwrap() as f64, "{}: rows", s.step);
        }
    }
    server.stop(None).unwrap();
}

/// The whole suite on a private MariaDB with `engine`: statements per
/// event from Com_*, rows from Rows_sent, and the pauses' settings back.
fn mariadb_suite(engine: &str, config: &str) {
    if !reachable(
        "MariaDB",
        mysql_db(&format!("ibench_sb_{engine}")).is_some_and(|d| !d.is_empty()),
    ) {
        return;
    }
    use mysql::prelude::Queryable;
    let server = private_server(Kind::Mariadb, config.into());
    let settings = |server: &ibench::server::Managed| -> Vec<(String, String)> {
        let mut c = mysql::Conn::new(mysql::Opts::from_url(&server.dsn()).unwrap()).unwrap();
        c.query("SHOW GLOBAL VARIABLES WHERE Variable_name LIKE 'innodb_max_dirty_pages_pct%' OR Variable_name LIKE 'rocksdb_%'")
            .unwrap()
    };
    let before = settings(&server);
    let dir = tempfile::tempdir().unwrap();
    let dsn = format!("{}?engine={engine}", server.dsn());
    let out = run(&suite(&dsn, json!({})), dir.path());
    let steps = all_ok(&out);
    check_statements_per_event(&steps);
    assert_eq!(settings(&server), before, "the pauses left every setting as it was");
    let counters = &out.results.counters;
    for s in steps.values() {
        let Some((m, _)) = per_event(s) else { continue };
        let com = |name: &str| delta(counters, &s.step, "global_status", name);
        let event = m.test.event(m.range);
        let events = s.events.unwrap() as f64;
        // What each event sends, by kind; the selects of ibench's own
        // counter and gauge readers count too (a few per second).
        let mut expected: HashMap<&str, f64> = HashMap::new();
        for g in &event.groups {
            let (kinds, n): (&[&str], u32) = match g {
                sysbench::SbGroup::Each(stmt, n) => (&[com_of(*stmt)], *n),
                sysbench::SbGroup::DeleteInsert => (&["Com_delete", "Com_insert"], 1),
            };
            for k in kinds {
                *expected.entry(k).or_default() += n as f64 * events;
            }
        }
        if event.trx {
            expected.insert("Com_begin", events);
            expected.insert("Com_commit", events);
        }
        let restarted = s.retries as f64 * per_event(s).unwrap().1 as f64;
        for kind in [
            "Com_select",
            "Com_update",
            "Com_insert",
            "Com_delete",
            "Com_begin",
            "Com_commit",
        ] {
            let (found, want) = (com(kind), expected.get(kind).copied().unwrap_or(0.0));
            let slack = restarted
                + if kind == "Com_select" {
                    8.0 * (2.0 + s.elapsed_s)
                } else {
                    0.0
                };
            assert!(
                found >= want && found <= want + slack,
                "{}: {kind} {found}, expected {want} for {events} events",
                s.step
            );
        }
        if !m.test.writes() {
            // Rows_sent counts every row a statement returned to a client
            // (the readers' few rows aside).
            let (found, want) = (com("Rows_sent"), s.statement_rows.unwrap() as f64);
            assert!(
                found >= want && found <= want + 2000.0,
                "{}: {found} rows sent, {want} read",
                s.step
            );
        }
    }
    server.stop(None).unwrap();
}

#[test]
fn the_whole_suite_runs_on_mariadb_innodb_with_com_counters_counting_each_statement() {
    mariadb_suite("innodb", "");
}

#[test]
fn the_whole_suite_runs_on_mariadb_myrocks_with_com_counters_counting_each_statement() {
    mariadb_suite("rocksdb", "plugin-load-add = ha_rocksdb.so");
}

/// The tables `db` holds after a load of seed `seed`: every row, in id order.
fn loaded_rows(db: &str, seed: u64) -> Vec<(u64, i64, String, String)> {
    let dir = tempfile::tempdir().unwrap();
    let c = config(json!({"db": db, "steps": ["load"], "tables": 2, "table_size": 1500, "seed": seed}));
    let out = run(&c, dir.path());
    assert_eq!(step(&out, "load").verified, Some(true));
    let connector = ibench::connect::open(db).unwrap();
    let mut s = connector.sb_session().unwrap();
    let mut rows = Vec::new();
    for table in 1..=2 {
        let ids: Vec<u64> = (1..=1500).collect();
        for r in s.sb_rows(table, &ids).unwrap() {
            rows.push((r.id + 10_000 * table as u64, r.k, r.c, r.pad));
        }
    }
    rows
}

#[test]
fn the_same_seed_loads_the_same_bytes_on_every_engine() {
    let dir = tempfile::tempdir().unwrap();
    let sqlite = format!("sqlite:{}", dir.path().join("a.db").display());
    let reference = loaded_rows(&sqlite, 7);
    assert_eq!(reference.len(), 3000);
    let other_seed = loaded_rows(&format!("sqlite:{}", dir.path().join("b.db").display()), 8);
    assert_ne!(reference, other_seed, "another seed, other rows");
    let generated = ibench::gen::SbRowGen::new(&ibench::gen::SbRowSpec {
        seed: 7,
        table: 1,
        size: 1500,
        k: ibench::gen::KeyKind::Uniform,
        theta: 0.8,
    })
    .unwrap()
    .row(77)
    .unwrap();
    assert_eq!(reference[76].2.as_bytes(), generated.c(0));
    if let Some(pg) = postgres_db("ibench_sb_seed").filter(|d| !d.is_empty()) {
        assert_eq!(loaded_rows(&pg, 7), reference, "PostgreSQL");
    }
    if let Some(my) = mysql_db("ibench_sb_seed").filter(|d| !d.is_empty()) {
        assert_eq!(loaded_rows(&format!("{my}?engine=innodb"), 7), reference, "InnoDB");
        assert_eq!(loaded_rows(&format!("{my}?engine=rocksdb"), 7), reference, "MyRocks");
    }
}

/// The error resolving or running `params`, as text.
fn refused(params: Value) -> String {
    let dir = tempfile::tempdir().unwrap();
    let c = match ibench::workload::Config::resolve(&[params.as_object().unwrap().clone()]) {
        Ok(c) => c,
        Err(e) => return e.to_string(),
    };
    match ibench::exec::run(&c, dir.path(), &ibench::exec::Silent, &ibench::Stop::new()) {
        Ok(out) => out.results.run.error.unwrap_or_default(),
        Err(e) => e.to_string(),
    }
}

#[test]
fn bad_input_is_refused_naming_it() {
    let e = refused(json!({"steps": ["load", "point-querry"]}));
    assert!(e.starts_with("invalid steps:") && e.contains("point-querry"), "{e}");
    let e = refused(json!({"steps": ["load", "read-only_range=0"]}));
    assert!(e.contains("range size must be at least 1"), "{e}");
    let e = refused(json!({"steps": ["load"], "tables": 0}));
    assert!(e.starts_with("invalid tables:"), "{e}");
    let e = refused(json!({"steps": ["load", "points-covered-si"]}));
    assert!(e.contains("reads the index on k") && e.contains("create-index"), "{e}");
    let e = refused(json!({"steps": ["create-index", "load"]}));
    assert!(e.contains("create-index runs before load"), "{e}");
    let e = refused(json!({"steps": ["load"], "db": "null:", "table_size": 0}));
    assert!(e.starts_with("invalid table_size:"), "{e}");
}

#[test]
fn a_suite_step_against_tables_without_the_schema_or_index_is_refused_before_any_step() {
    let dir = tempfile::tempdir().unwrap();
    let db = format!("sqlite:{}", dir.path().join("sb.db").display());
    let e = refused(json!({"db": db, "steps": ["point-query"]}));
    assert!(e.contains("sbtest1") && e.contains("run load first"), "{e}");
    // Loaded without the index: a step that reads it is refused, naming it.
    let c = config(json!({"db": db, "steps": ["load"], "table_size": 100}));
    assert_eq!(run(&c, dir.path()).results.run.status, RunStatus::Ok);
    let e = refused(json!({"db": db, "steps": ["point-query", "range-covered-si"], "table_size": 100}));
    assert!(e.contains("range-covered-si reads the index on k"), "{e}");
    // With the index built first it runs.
    let c = config(
        json!({"db": db, "steps": ["create-index", "range-covered-si"], "table_size": 100, "read_seconds": 0.2}),
    );
    assert_eq!(run(&c, dir.path()).results.run.status, RunStatus::Ok);
    // Another family's database cannot hold the tables.
    let e = refused(json!({"db": format!("rocksdb:{}", dir.path().join("kv").display()), "steps": ["load"]}));
    assert!(
        e.contains("load is a sysbench step") && e.contains("key/value steps only"),
        "{e}"
    );
}

#[test]
fn a_paced_step_counts_response_time_from_each_events_intended_start() {
    let dir = tempfile::tempdir().unwrap();
    // null's simulated time: 2 clients at 100 events/s in all, 10 ms each.
    let c = config(json!({
        "db": "null:?latency=fixed:10ms&time=simulated", "steps": ["load", "point-query"],
        "clients": 2, "read_seconds": 5.0, "events_per_second": 100.0, "table_size": 100,
    }));
    let out = run(&c, dir.path());
    let s = step(&out, "point-query");
    assert_eq!(s.status, StepStatus::Ok, "{:?}", s.error);
    let events = s.events.unwrap();
    assert!((495..=505).contains(&events), "{events} events in 5 s at 100/s");
    let p50 = s.latency(ibench::metrics::Op::Event, false, 0).unwrap();
    assert!((9_900.0..=10_100.0).contains(&p50), "{p50} µs");
    assert!(
        s.lag(ibench::metrics::Op::Event, 1).is_some(),
        "a paced step's lag is recorded"
    );
}

#[test]
fn the_suites_steps_are_ordinary_steps_of_a_list() {
    let c = config(json!({"steps": "sysbench-long"}));
    assert_eq!(c.steps.len(), sysbench::LONG_SUITE.len());
    let c = config(json!({"steps": "l.i0,load,point-query,fillseq"}));
    assert_eq!(c.steps[1].sb(), Some(SbStep::Load));
    assert_eq!(c.steps[2].to_string(), "point-query");
}

/// The Com_* counter a statement of the suite increments.
fn com_of(stmt: ibench::gen::SbStatement) -> &'static str {
    use ibench::gen::SbStatement as S;
    match stmt {
        S::IndexUpdate | S::NonIndexUpdate | S::InlistUpdate(_) => "Com_update",
        S::Delete => "Com_delete",
        S::Insert | S::InsertNew => "Com_insert",
        S::Begin => "Com_begin",
        S::Commit => "Com_commit",
        _ => "Com_select",
    }
}
