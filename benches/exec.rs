//! Harness benchmarks (`cargo bench --bench exec`):
//!
//! 1. Harness overhead on the null connector: ns per operation (one-row
//!    inserts, so row generation, key allocation, two clock reads and
//!    three histogram records are all in it), for 1, 2 and 4 clients.
//! 2. SQLite l.i0 through ibench against a minimal hand-written rusqlite loop
//!    executing the same statements on the same kind of file with the same
//!    pragmas (its rows generated before the clock starts, so it is an upper
//!    bound).
//!
//! Each figure is the median of several runs; figures are recorded in docs/.

use ibench::exec::{self, Silent};
use ibench::gen::{RowGen, RowSpec};
use ibench::results::StepStatus;
use ibench::workload::Config;
use serde_json::json;
use std::time::Instant;

fn config(v: serde_json::Value) -> Config {
    Config::resolve(&[v.as_object().unwrap().clone()]).unwrap()
}

fn median(mut v: Vec<f64>) -> f64 {
    v.sort_by(|a, b| a.partial_cmp(b).unwrap());
    v[v.len() / 2]
}

fn ibench_load(db: &str, rows: u64, rows_per_commit: u32, clients: u32) -> (f64, f64) {
    let out = tempfile::tempdir().unwrap();
    let c = config(json!({
        "db": db, "steps": ["l.i0"], "rows_l_i0": rows, "rows_per_commit_l_i0": rows_per_commit, "clients": clients,
    }));
    let run = exec::run(&c, out.path(), &Silent, &ibench::Stop::new()).unwrap();
    let s = &run.results.steps[0];
    assert_eq!(s.status, StepStatus::Ok);
    (s.elapsed_s, s.ips())
}

fn harness_overhead() {
    println!("harness overhead, null connector, one-row inserts (median of 5 runs):");
    println!("| clients | ops per client | ns per op per thread | ops/s total |");
    println!("|---|---|---|---|");
    let ops = 1_000_000u64;
    for clients in [1u32, 2, 4] {
        let mut ns = Vec::new();
        let mut total = Vec::new();
        for _ in 0..5 {
            let (elapsed, ips) = ibench_load("null:", ops, 1, clients);
            ns.push(elapsed * 1e9 / ops as f64);
            total.push(ips);
        }
        println!(
            "| {clients} | {ops} | {:.0} | {:.2} M |",
            median(ns),
            median(total) / 1e6
        );
    }
}

/// The same l.i0 by hand: same table, pragmas and 100-row INSERT statement.
#[allow(clippy::needless_range_loop)] // the plain loop is the point: the least a client can do
fn hand_written_sqlite(path: &std::path::Path, rows: u64) -> f64 {
    let conn = rusqlite::Connection::open(path).unwrap();
    for (k, v) in [
        ("journal_mode", "WAL"),
        ("synchronous", "NORMAL"),
        ("busy_timeout", "60000"),
    ] {
        conn.pragma_update(None, k, v).unwrap();
    }
    conn.execute_batch(
        "DROP TABLE IF EXISTS pi1; CREATE TABLE pi1 (transactionid INTEGER PRIMARY KEY, dateandtime INTEGER NOT NULL,
         cashregisterid INTEGER NOT NULL, customerid INTEGER NOT NULL, productid INTEGER NOT NULL,
         price INTEGER NOT NULL, data TEXT NOT NULL)",
    )
    .unwrap();
    let batch = 100usize;
    let one = "(?,?,?,?,?,?,?)";
    let sql = format!(
        "INSERT INTO pi1 (transactionid, dateandtime, cashregisterid, customerid, productid, price, data) VALUES {}",
        vec![one; batch].join(",")
    );
    let all = RowGen::new(&RowSpec::default())
        .unwrap()
        .generate(0, rows as usize)
        .unwrap();
    let data: Vec<&str> = (0..all.len())
        .map(|i| {
            std::str::from_utf8(&all.data[all.data_offsets[i] as usize..all.data_offsets[i + 1] as usize]).unwrap()
        })
        .collect();
    let mut stmt = conn.prepare(&sql).unwrap();
    let start = Instant::now();
    for b in 0..(rows as usize / batch) {
        let mut p = 1;
        for i in b * batch..(b + 1) * batch {
            stmt.raw_bind_parameter(p, all.transactionid[i]).unwrap();
            stmt.raw_bind_parameter(p + 1, all.dateandtime[i]).unwrap();
            stmt.raw_bind_parameter(p + 2, all.cashregisterid[i]).unwrap();
            stmt.raw_bind_parameter(p + 3, all.customerid[i]).unwrap();
            stmt.raw_bind_parameter(p + 4, all.productid[i]).unwrap();
            stmt.raw_bind_parameter(p + 5, all.price[i]).unwrap();
            stmt.raw_bind_parameter(p + 6, data[i]).unwrap();
            p += 7;
        }
        stmt.raw_execute().unwrap();
    }
    rows as f64 / start.elapsed().as_secs_f64()
}

fn sqlite_vs_hand_written() {
    let rows = 1_000_000u64;
    let (mut ours, mut theirs) = (Vec::new(), Vec::new());
    for _ in 0..5 {
        let dir = tempfile::tempdir().unwrap();
        theirs.push(hand_written_sqlite(&dir.path().join("hand.sqlite"), rows));
        let db = format!("sqlite:{}", dir.path().join("ibench.sqlite").display());
        ours.push(ibench_load(&db, rows, 100, 1).1);
    }
    let (ours, theirs) = (median(ours), median(theirs));
    println!("\nSQLite l.i0, {rows} rows, 100 rows per commit, WAL, synchronous=NORMAL (median of 5 runs):");
    println!("| client | rows/s |");
    println!("|---|---|");
    println!("| ibench run --steps l.i0 | {ours:.0} |");
    println!("| hand-written rusqlite loop | {theirs:.0} |");
    println!("| ratio | {:.3} |", ours / theirs);
}

fn main() {
    // `cargo bench` passes --bench; a filter selects one part.
    let filter = std::env::args()
        .skip(1)
        .find(|a| !a.starts_with("--"))
        .unwrap_or_default();
    if "harness".contains(filter.as_str()) || filter.is_empty() {
        harness_overhead();
    }
    if "sqlite".contains(filter.as_str()) || filter.is_empty() {
        sqlite_vs_hand_written();
    }
}
