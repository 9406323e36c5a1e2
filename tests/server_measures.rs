//! What ibench measures on real servers is what happens there: range
//! queries run on the indexes that exist (the servers' scan counters), sizes
//! follow the rows written (files on disk), and verify reads a few rows per
//! step, not whole tables. Server-wide counters are read here, so this file
//! holds one test per server and nothing else writes to it meanwhile.

mod common;

use common::{config, mysql_admin, mysql_db, postgres_db, run, step};
use ibench::results::{RunStatus, StepStatus};
use serde_json::json;

fn pg_query_i64(db: &str, sql: &str) -> i64 {
    let mut c = postgres::Client::connect(db, postgres::NoTls).unwrap();
    c.query_one(sql, &[]).unwrap().get::<_, i64>(0)
}

/// Scans of pi1 so far: (sequential scans, scans of its marketsegment index).
fn pg_scans(db: &str) -> (i64, i64) {
    // Counters are flushed when sessions end; ibench's have.
    std::thread::sleep(std::time::Duration::from_millis(700));
    let seq = pg_query_i64(
        db,
        "SELECT COALESCE(seq_scan, 0) FROM pg_stat_user_tables WHERE relname = 'pi1'",
    );
    let idx = pg_query_i64(
        db,
        "SELECT COALESCE(idx_scan, 0) FROM pg_stat_user_indexes WHERE indexrelname = 'pi1_marketsegment'",
    );
    (seq, idx)
}

/// Tuples read from pi1 so far, by sequential scans and through its indexes.
fn pg_tuples_read(db: &str) -> i64 {
    std::thread::sleep(std::time::Duration::from_millis(700));
    pg_query_i64(
        db,
        "SELECT COALESCE(seq_tup_read, 0) FROM pg_stat_user_tables WHERE relname = 'pi1'",
    ) + pg_query_i64(
        db,
        "SELECT COALESCE(SUM(idx_tup_read), 0)::BIGINT FROM pg_stat_user_indexes WHERE relname = 'pi1'",
    )
}

#[test]
fn postgres_range_queries_use_the_one_index_sizes_follow_the_rows_and_verify_reads_little() {
    let Some(db) = postgres_db("ibench_measures").filter(|d| !d.is_empty()) else {
        return;
    };
    let dir = tempfile::tempdir().unwrap();
    // One secondary index: every range query must go through it.
    let load = run(
        &config(json!({"db": db, "steps": ["l.i0", "l.x"], "rows_l_i0": 20_000, "secondary_indexes": 1})),
        dir.path(),
    );
    assert_eq!(load.results.run.status, RunStatus::Ok);
    let (seq0, idx0) = pg_scans(&db);
    let q = run(
        &config(json!({"db": db, "steps": ["qr100"], "query_seconds": 2.0, "secondary_indexes": 1, "verify": "off"})),
        dir.path(),
    );
    let s = step(&q, "qr100");
    assert_eq!(s.status, StepStatus::Ok);
    let (seq1, idx1) = pg_scans(&db);
    assert_eq!(seq1 - seq0, 0, "a range query on a missing index scans the table");
    assert!(
        idx1 - idx0 >= s.queries as i64,
        "{} scans of pi1_marketsegment for {} queries",
        idx1 - idx0,
        s.queries
    );

    // Sizes: about the rows written, and growing with them (no deletes).
    let sized = run(
        &config(json!({
            "db": db, "steps": ["l.i0", "l.i1"], "rows_l_i0": 50_000, "rows_l_i1": 50_000,
            "delete_per_insert": false, "verify": "off",
        })),
        dir.path(),
    );
    let (a, b) = (step(&sized, "l.i0"), step(&sized, "l.i1"));
    let tables = a.tables_size_bytes.unwrap();
    // A heap tuple of about 75 bytes and a primary-key entry of about 20, with page overheads.
    assert!(
        (50_000 * 60..50_000 * 300).contains(&tables),
        "{tables} bytes for 50,000 rows"
    );
    assert!(b.tables_size_bytes.unwrap() as f64 > 1.6 * tables as f64, "{b:?}");
    assert!(a.db_size_bytes.unwrap() >= tables);
    assert!(
        a.datadir_size_bytes.unwrap() > a.db_size_bytes.unwrap(),
        "the data directory holds every database and the WAL"
    );

    // Verify: bounds and samples per step, one count at the end. Each run
    // recreates pi1 (l.i0), so its counters start from zero.
    for (mode, most, least) in [("quick", 40_000, 0), ("full", i64::MAX, 3 * 20_000)] {
        let verified = run(
            &config(json!({
                "db": db, "steps": ["l.i0", "l.i1", "l.i2"], "rows_l_i0": 20_000, "rows_l_i1": 2000,
                "rows_l_i2": 500, "verify": mode,
            })),
            dir.path(),
        );
        assert_eq!(verified.results.run.verified, Some(true), "{mode}");
        let read = pg_tuples_read(&db);
        // The final count reads 20,000 rows, deletes 2,500 through the primary key, the
        // bounds skip the dead entries at the tail (4,500), and the samples ~300 rows.
        assert!((least..most).contains(&read), "{mode}: {read} tuples read");
    }
}

fn my_status(name: &str) -> u64 {
    use mysql::prelude::Queryable;
    let mut c = mysql::Conn::new(mysql::Opts::from_url(&mysql_admin()).unwrap()).unwrap();
    let row: Option<(String, String)> = c.query_first(format!("SHOW GLOBAL STATUS LIKE '{name}'")).unwrap();
    row.unwrap().1.parse().unwrap()
}

#[test]
fn mariadb_range_queries_use_the_one_index_and_sizes_come_from_the_files() {
    let Some(base) = mysql_db("ibench_measures").filter(|d| !d.is_empty()) else {
        return;
    };
    let db = format!("{base}?engine=innodb");
    let dir = tempfile::tempdir().unwrap();
    let load = run(
        &config(json!({"db": db, "steps": ["l.i0", "l.x"], "rows_l_i0": 20_000, "secondary_indexes": 1})),
        dir.path(),
    );
    assert_eq!(load.results.run.status, RunStatus::Ok);
    let scanned = my_status("Handler_read_rnd_next");
    let q = run(
        &config(json!({"db": db, "steps": ["qr100"], "query_seconds": 2.0, "secondary_indexes": 1, "verify": "off"})),
        dir.path(),
    );
    let s = step(&q, "qr100");
    assert_eq!(s.status, StepStatus::Ok);
    // A range query on a missing index would read the table's 20,000 rows: none did.
    let rows_scanned = my_status("Handler_read_rnd_next") - scanned;
    assert!(
        rows_scanned < 5_000,
        "{rows_scanned} rows read by full scans during {} range queries",
        s.queries
    );

    for engine in ["innodb", "rocksdb"] {
        let db = format!("{base}?engine={engine}");
        let sized = run(
            &config(json!({
                "db": db, "steps": ["l.i0", "l.i1"], "rows_l_i0": 50_000, "rows_l_i1": 50_000,
                "delete_per_insert": false, "verify": "off",
            })),
            dir.path(),
        );
        let (a, b) = (step(&sized, "l.i0"), step(&sized, "l.i1"));
        // InnoDB: the table's .ibd file; MyRocks: what its files (WAL and SSTs) gained.
        let written = match engine {
            "innodb" => a.tables_size_bytes.unwrap(),
            _ => a.db_size_bytes.unwrap() - a.db_size_before_bytes.unwrap(),
        };
        assert!(
            (50_000 * 20..50_000 * 400).contains(&written),
            "{engine}: {written} bytes for 50,000 rows"
        );
        if engine == "innodb" {
            assert!(b.tables_size_bytes.unwrap() > written, "{engine}: {b:?}");
        }
        assert!(
            b.db_size_bytes.unwrap() > a.db_size_bytes.unwrap(),
            "{engine}: the files grow"
        );
        assert!(a.datadir_size_bytes.unwrap() >= a.db_size_bytes.unwrap(), "{engine}");
        assert!(
            !sized.results.run.warnings.iter().any(|w| w.contains("estimates")),
            "{engine}: measured on disk, not estimated"
        );
    }
}
