//! RocksDB fillseq through ibench against a minimal hand-written rust-rocksdb
//! loop writing the same batches (`cargo bench --bench kv`).
//!
//! Both open the database with the same options (RocksDB's defaults,
//! statistics on, pairs in the `kv` column family) and write keys 0..N in
//! order, 16-byte keys and 100-byte values compressible to 0.5, in batches
//! of B pairs; the loop generates the same values with the same generator.
//! Runs alternate, each on a fresh database; figures are medians.

use ibench::exec::{self, Silent};
use ibench::gen::{Alphabet, KvBatch, KvValues, Length, ValueSource};
use ibench::results::StepStatus;
use ibench::workload::Config;
use rocksdb::{ColumnFamilyDescriptor, DBWithThreadMode, MultiThreaded, Options, WriteBatch, WriteOptions};
use serde_json::json;
use std::time::Instant;

const KEYS: u64 = 2_000_000;
const RUNS: usize = 5;

fn median(mut v: Vec<f64>) -> f64 {
    v.sort_by(|a, b| a.partial_cmp(b).unwrap());
    v[v.len() / 2]
}

fn ibench_fillseq(batch: u32) -> f64 {
    let dir = tempfile::tempdir().unwrap();
    let c = Config::resolve(&[json!({
        "preset": "kv-quick",
        "db": format!("rocksdb:{}", dir.path().join("db").display()),
        "steps": ["fillseq"],
        "num": KEYS,
        "batch_size": batch,
        "key_size": 16,
        "value_size": 100,
        "ratio": 0.5,
        "verify_sample": 0,
    })
    .as_object()
    .unwrap()
    .clone()])
    .unwrap();
    let run = exec::run(&c, dir.path(), &Silent, &ibench::Stop::new()).unwrap();
    let s = &run.results.steps[0];
    assert_eq!(s.status, StepStatus::Ok);
    s.ips()
}

fn hand_written_fillseq(batch: u64) -> f64 {
    let dir = tempfile::tempdir().unwrap();
    let mut opts = Options::default();
    opts.create_if_missing(true);
    opts.create_missing_column_families(true);
    opts.enable_statistics();
    let cf = ColumnFamilyDescriptor::new("kv", opts.clone());
    let db = DBWithThreadMode::<MultiThreaded>::open_cf_descriptors(&opts, dir.path().join("db"), [cf]).unwrap();
    let values = KvValues::new(0, 0, Length::Fixed(100), 0.5, Alphabet::Binary, ValueSource::PerKey).unwrap();
    let write = WriteOptions::default();
    let handle = db.cf_handle("kv").unwrap();
    let mut pairs = KvBatch::new(16);
    let start = Instant::now();
    let mut key = 0;
    while key < KEYS {
        let n = batch.min(KEYS - key);
        pairs.clear();
        for k in key..key + n {
            pairs.push_generated(k, &values);
        }
        let mut wb = WriteBatch::default();
        for (k, v) in pairs.pairs() {
            wb.put_cf(&handle, k, v);
        }
        db.write_opt(wb, &write).unwrap();
        key += n;
    }
    KEYS as f64 / start.elapsed().as_secs_f64()
}

fn main() {
    println!("RocksDB fillseq, {KEYS} keys, 16-byte keys, 100-byte values (ratio 0.5), median of {RUNS} runs:");
    println!("| batch | ibench keys/s | hand-written loop keys/s | ratio |");
    println!("|---|---|---|---|");
    for batch in [1u32, 100] {
        let (mut ours, mut theirs) = (Vec::new(), Vec::new());
        for _ in 0..RUNS {
            ours.push(ibench_fillseq(batch));
            theirs.push(hand_written_fillseq(batch as u64));
        }
        let (ours, theirs) = (median(ours), median(theirs));
        println!("| {batch} | {ours:.0} | {theirs:.0} | {:.3} |", ours / theirs);
    }
}
