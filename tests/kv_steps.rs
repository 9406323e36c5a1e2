//! The key/value steps on every engine: each step writes exactly the keys it
//! should, with the values regenerated independently from the documented
//! streams (workload/kv.rs), and the read steps find what is there.
//! SQLite always; embedded RocksDB with the `rocksdb` feature; PostgreSQL and
//! MariaDB (InnoDB, MyRocks) when reachable (in CI they must be).

mod common;

use common::{config, mysql_db, postgres_db, run, step};
use ibench::connect::{self, KV_TABLE};
use ibench::exec::RunOutcome;
use ibench::gen::{
    decode_key, Compressible, KeyGen, KeyKind, KeySpec, KvBatch, KvValues, Length, Pool, Purpose, Stream,
};
use ibench::results::{RunStatus, StepStatus};
use ibench::workload::Config;
use serde_json::{json, Value};
use std::collections::BTreeMap;

/// Share `t` of `n` over `threads` (the documented split).
fn share(n: u64, t: u64, threads: u64) -> (u64, u64) {
    let at = |i: u64| ((n as u128 * i as u128) / threads as u128) as u64;
    (at(t), at(t + 1) - at(t))
}

/// Draws `0..count` of `kind` of thread `t` in step `ordinal`.
fn drawn(c: &Config, kind: KeyKind, ordinal: u64, t: u64, count: u64) -> Vec<u64> {
    let spec = KeySpec {
        space: Some(c.num),
        seed: c.seed,
        table: (1u64 << 40) + ordinal * 4096 + t,
        theta: c.zipf_theta,
        ..KeySpec::new(kind)
    };
    KeyGen::new(&spec).unwrap().generate(0, count as usize).unwrap()
}

/// The keys of the reads and overwrites: the configured distribution.
fn picked(c: &Config, ordinal: u64, t: u64, count: u64) -> Vec<u64> {
    drawn(c, c.distribution.kind(), ordinal, t, count)
}

/// Uniform draws `0..count` of thread `t` in step `ordinal` (fillrandom).
fn uniform(c: &Config, ordinal: u64, t: u64, count: u64) -> Vec<u64> {
    drawn(c, KeyKind::Uniform, ordinal, t, count)
}

/// What the table must hold after `outcome`'s steps: key → the step number that last wrote it.
fn expected(c: &Config, outcome: &RunOutcome) -> BTreeMap<u64, u64> {
    let mut map = BTreeMap::new();
    let threads = c.threads as u64;
    for (ordinal, s) in outcome.results.steps.iter().enumerate() {
        let o = ordinal as u64;
        match s.step.as_str() {
            "fillseq" | "filluniquerandom" => {
                map = (0..c.num).map(|k| (k, o)).collect();
            }
            "deleteseq" => map.clear(),
            "deleterandom" => {
                for t in 0..threads {
                    for k in picked(c, o, t, share(c.writes.unwrap_or(c.num), t, threads).1) {
                        map.remove(&k);
                    }
                }
            }
            "fillrandom" | "overwrite" | "overwritesome" | "overwriteandwait" | "updaterandom" | "mergerandom" => {
                if s.step == "fillrandom" {
                    map.clear();
                }
                let total = match s.step.as_str() {
                    "overwritesome" => c.overwritesome_writes.unwrap_or(c.num / 10),
                    _ => c.writes.unwrap_or(c.num),
                };
                for t in 0..threads {
                    let n = share(total, t, threads).1;
                    let keys = if s.step == "fillrandom" {
                        uniform(c, o, t, n)
                    } else {
                        picked(c, o, t, n)
                    };
                    for k in keys {
                        map.insert(k, o);
                    }
                }
            }
            // One writer, thread `threads`, for as long as the readers read.
            "readwhilewriting" => {
                for k in picked(c, o, threads, s.inserts) {
                    map.insert(k, o);
                }
            }
            _ => {}
        }
    }
    map
}

/// Reads the whole table back and compares it with `expected`, value by value.
fn check_contents(c: &Config, dsn: &str, outcome: &RunOutcome) {
    let want = expected(c, outcome);
    let connector = connect::open(dsn).unwrap();
    let mut session = connector.kv_session().unwrap();
    let mut got = KvBatch::new(c.key_size as usize);
    let n = session
        .scan(KV_TABLE, &vec![0u8; c.key_size as usize], c.num as usize + 10, &mut got)
        .unwrap();
    assert_eq!(n as u64, session.count(KV_TABLE).unwrap());
    assert_eq!(n, want.len(), "{dsn}: pairs");
    let length = c.kv_length();
    let mut value = Vec::new();
    for ((key, val), (&k, &version)) in got.pairs().zip(&want) {
        assert_eq!(key.len(), c.key_size as usize);
        assert_eq!(decode_key(key), k, "{dsn}: keys in order");
        KvValues::new(c.seed, version, length, c.ratio, c.value_alphabet, c.value_source)
            .unwrap()
            .value_into(k, &mut value);
        assert_eq!(val, &value[..], "{dsn}: key {k} holds step {version}'s value");
    }
}

fn kv_config(db: &str, params: Value) -> Config {
    let mut base = json!({
        "preset": "kv-quick",
        "db": db,
        "num": 3000,
        "threads": 2,
        "batch_size": 5,
        "value_size": [20, 60],
        "writes": 2000,
        "overwritesome_writes": 500,
        "reads": 1000,
        "writer_rate": 4000,
        "seed": 11,
        "verify_sample": 50,
    });
    base.as_object_mut()
        .unwrap()
        .extend(params.as_object().unwrap().clone());
    config(base)
}

/// Every key/value step on `dsn`; contents checked after each run.
fn every_step(dsn: &str) {
    let dir = tempfile::tempdir().unwrap();
    // Random writes, reads, maintenance.
    // Enough reads that readwhilewriting's readers outlast the writer
    // thread's first wake-up on a busy 2-core host (with 1000 they can be
    // done before it is scheduled, and the step has no write).
    const READS: u64 = 30_000;
    let c = kv_config(
        dsn,
        json!({"steps": ["fillrandom", "overwrite", "overwritesome", "readwhilewriting",
                         "readrandom", "seekrandom", "flush", "waitforcompaction"], "reads": READS}),
    );
    let out = run(&c, dir.path());
    assert_eq!(
        out.results.run.status,
        RunStatus::Ok,
        "{dsn}: {:?}",
        out.results.run.error
    );
    for s in &out.results.steps {
        assert_eq!(s.status, StepStatus::Ok, "{dsn} {}: {:?}", s.step, s.error);
        if ["fillrandom", "overwrite", "overwritesome", "readwhilewriting"].contains(&s.step.as_str()) {
            assert_eq!(s.verified, Some(true), "{dsn} {}: {:?}", s.step, s.verify_error);
        }
    }
    assert_eq!(step(&out, "fillrandom").inserts, 2000);
    assert_eq!(step(&out, "overwrite").inserts, 2000);
    assert_eq!(step(&out, "overwritesome").inserts, 500);
    assert_eq!(step(&out, "fillrandom").rows_per_commit, Some(5));
    let rww = step(&out, "readwhilewriting");
    assert_eq!(rww.queries, READS);
    assert!(rww.inserts > 0, "{dsn}: the writer wrote");
    // readrandom finds exactly the drawn keys that the table holds (the
    // state after readwhilewriting).
    let want = expected(&c, &out);
    let o = out.results.steps.iter().position(|s| s.step == "readrandom").unwrap() as u64;
    let hits: u64 = (0..2)
        .map(|t| {
            let keys = uniform(&c, o, t, share(READS, t, 2).1);
            keys.iter().filter(|k| want.contains_key(k)).count() as u64
        })
        .sum();
    let rr = step(&out, "readrandom");
    assert_eq!((rr.queries, rr.found), (READS, Some(hits)), "{dsn}");
    let max = *want.keys().last().unwrap();
    let o = o + 1;
    let seeks: u64 = (0..2)
        .map(|t| {
            uniform(&c, o, t, share(READS, t, 2).1)
                .iter()
                .filter(|&&k| k <= max)
                .count() as u64
        })
        .sum();
    assert_eq!(
        step(&out, "seekrandom").found,
        Some(seeks),
        "{dsn}: seeks that found a key"
    );
    check_contents(&c, dsn, &out);

    newer_steps(dsn);

    // Fills with several threads: disjoint streams covering [0, num).
    for steps in [json!(["fillseq"]), json!(["filluniquerandom", "overwrite"])] {
        let c = kv_config(dsn, json!({"steps": steps, "threads": 3, "num": 3001}));
        let out = run(&c, dir.path());
        assert_eq!(
            out.results.run.status,
            RunStatus::Ok,
            "{dsn}: {:?}",
            out.results.run.error
        );
        assert_eq!(out.results.steps[0].inserts, 3001);
        assert_eq!(out.results.steps[0].verified, Some(true));
        check_contents(&c, dsn, &out);
    }
}

/// Reads of step `name` by thread `t`: the distribution's draws.
fn reads_of(c: &Config, out: &RunOutcome, name: &str, t: u64, reads: u64) -> Vec<u64> {
    let o = out.results.steps.iter().position(|s| s.step == name).unwrap() as u64;
    picked(c, o, t, share(reads, t, c.threads as u64).1)
}

/// The steps after db_bench's first ones: read-modify-writes, merges and
/// deletes change exactly their keys; the table read in order and in
/// reverse, MultiGet and the range reads find exactly what it holds.
fn newer_steps(dsn: &str) {
    let dir = tempfile::tempdir().unwrap();
    const READS: u64 = 1000;
    let writes = ["fillseq", "updaterandom", "mergerandom", "deleterandom"];
    let reads = ["readseq", "readreverse", "multireadrandom", "fwdrange", "revrange"];
    let steps: Vec<&str> = writes.iter().chain(&reads).copied().collect();
    let c = kv_config(dsn, json!({"steps": steps, "reads": READS, "writes": 600}));
    let out = run(&c, dir.path());
    assert_eq!(
        out.results.run.status,
        RunStatus::Ok,
        "{dsn}: {:?}",
        out.results.run.error
    );
    for s in &out.results.steps {
        assert_eq!(s.status, StepStatus::Ok, "{dsn} {}: {:?}", s.step, s.error);
        if writes.contains(&s.step.as_str()) {
            assert_eq!(s.verified, Some(true), "{dsn} {}: {:?}", s.step, s.verify_error);
        }
    }
    assert_eq!(step(&out, "updaterandom").inserts, 600);
    assert_eq!(step(&out, "updaterandom").rows_per_commit, Some(1));
    assert_eq!(step(&out, "mergerandom").inserts, 600);
    let del = step(&out, "deleterandom");
    assert_eq!(
        (del.deletes, del.inserts),
        (600, 0),
        "{dsn}: deletes are counted as deletes"
    );
    check_contents(&c, dsn, &out);

    let want = expected(&c, &out);
    let (min, max) = (*want.keys().next().unwrap(), *want.keys().last().unwrap());
    for name in reads {
        assert_eq!(step(&out, name).queries, READS, "{dsn} {name}");
    }
    // readseq / readreverse: thread t from the start (end) of its share of
    // the keys, the pairs the table holds from there, at most its reads.
    let in_order: u64 = (0..2)
        .map(|t| {
            let (from, _) = share(c.num, t, 2);
            (want.range(from..).count() as u64).min(share(READS, t, 2).1)
        })
        .sum();
    assert_eq!(step(&out, "readseq").found, Some(in_order), "{dsn}");
    let reversed: u64 = (0..2)
        .map(|t| {
            let (from, len) = share(c.num, t, 2);
            (want.range(..from + len).count() as u64).min(share(READS, t, 2).1)
        })
        .sum();
    assert_eq!(step(&out, "readreverse").found, Some(reversed), "{dsn}");
    let count = |name: &str, hit: &dyn Fn(u64) -> bool| -> u64 {
        (0..2)
            .map(|t| {
                reads_of(&c, &out, name, t, READS)
                    .into_iter()
                    .filter(|&k| hit(k))
                    .count() as u64
            })
            .sum()
    };
    assert_eq!(
        step(&out, "multireadrandom").found,
        Some(count("multireadrandom", &|k| want.contains_key(&k))),
        "{dsn}: MultiGet finds the keys present"
    );
    assert_eq!(
        step(&out, "fwdrange").found,
        Some(count("fwdrange", &|k| k <= max)),
        "{dsn}"
    );
    assert_eq!(
        step(&out, "revrange").found,
        Some(count("revrange", &|k| k >= min)),
        "{dsn}"
    );

    // deleteseq empties the table, and verify agrees.
    let c = kv_config(dsn, json!({"steps": ["fillseq", "deleteseq"], "threads": 3}));
    let out = run(&c, dir.path());
    let del = step(&out, "deleteseq");
    assert_eq!(
        (del.status.as_str(), del.deletes, del.verified),
        ("ok", 3000, Some(true)),
        "{dsn}"
    );
    let connector = connect::open(dsn).unwrap();
    assert_eq!(connector.kv_session().unwrap().count(KV_TABLE).unwrap(), 0, "{dsn}");
}

#[test]
fn every_step_on_sqlite() {
    let dir = tempfile::tempdir().unwrap();
    every_step(&format!("sqlite:{}", dir.path().join("kv.sqlite").display()));
}

#[cfg(feature = "rocksdb")]
#[test]
fn every_step_on_rocksdb() {
    let dir = tempfile::tempdir().unwrap();
    every_step(&format!(
        "rocksdb:{}?write_buffer_size=64K&compaction_style=universal",
        dir.path().join("db").display()
    ));
}

#[test]
fn every_step_on_postgres() {
    if let Some(dsn) = postgres_db("ibench_kv") {
        every_step(&dsn);
    }
}

#[test]
fn every_step_on_mariadb_innodb_and_myrocks() {
    if let Some(base) = mysql_db("ibench_kv") {
        every_step(&format!("{base}?engine=innodb"));
        every_step(&format!("{base}?engine=rocksdb"));
    }
}

#[test]
fn the_value_lengths_and_content_follow_the_parameters() {
    let c = kv_config("sqlite::memory:", json!({"value_size": 400, "ratio": 0.25}));
    assert_eq!(c.value_size, [400, 400]);
    assert_eq!(c.kv_length(), Length::Fixed(400));
    let mut v = Vec::new();
    c.kv_values(3).unwrap().value_into(9, &mut v);
    assert_eq!(v.len(), 400);
    assert_eq!(v[..100], v[100..200], "100 random bytes, repeated");
}

#[test]
fn bad_key_value_parameters_name_themselves() {
    for (params, name) in [
        (json!({"key_size": 4}), "key_size"),
        (json!({"value_size": [10, 5]}), "value_size"),
        (json!({"batch_size": 0}), "batch_size"),
        (json!({"threads": 0}), "threads"),
        (json!({"num": 0}), "num"),
        (json!({"writes": 0}), "writes"),
        (json!({"duration": -1.0}), "duration"),
        (json!({"steps": ["fillseq", "compactrange"]}), "steps"),
        (json!({"value_source": "shared"}), "value_source"),
    ] {
        let mut layer = json!({"preset": "kv-quick"});
        layer
            .as_object_mut()
            .unwrap()
            .extend(params.as_object().unwrap().clone());
        let e = Config::resolve(&[layer.as_object().unwrap().clone()])
            .unwrap_err()
            .to_string();
        assert!(e.starts_with(&format!("invalid {name}")), "{e}");
    }
}

/// fillseq, overwrite and mergerandom with db_bench's value pool on `dsn`:
/// each value is a slice of its step's pool, and verify and a full read-back
/// regenerate them.
fn pooled_values(dsn: &str) {
    let dir = tempfile::tempdir().unwrap();
    let c = kv_config(
        dsn,
        json!({"steps": ["fillseq", "overwrite", "mergerandom"], "value_source": "pool",
               "value_alphabet": "printable", "verify": "full"}),
    );
    let out = run(&c, dir.path());
    assert_eq!(
        out.results.run.status,
        RunStatus::Ok,
        "{dsn}: {:?}",
        out.results.run.error
    );
    for s in &out.results.steps {
        assert_eq!(s.verified, Some(true), "{dsn} {}: {:?}", s.step, s.verify_error);
    }
    check_contents(&c, dsn, &out);
    // A few keys' values found in their step's pool, built from its documented stream.
    let content = Compressible::new(c.ratio, c.value_alphabet, "ratio").unwrap();
    let want = expected(&c, &out);
    let connector = connect::open(dsn).unwrap();
    let mut session = connector.kv_session().unwrap();
    let (mut key, mut value) = (vec![0u8; c.key_size as usize], Vec::new());
    for (&k, &version) in want.iter().step_by(want.len() / 5) {
        let pool = Pool::new(Stream::new(c.seed, version, Purpose::KvValuePool), &content, 60);
        ibench::gen::encode_key(k, &mut key);
        assert!(session.get(KV_TABLE, &key, &mut value).unwrap());
        assert!(
            pool.bytes().windows(value.len()).any(|w| w == &value[..]),
            "{dsn}: key {k}'s value is not in step {version}'s pool"
        );
    }
}

#[test]
fn pooled_values_on_sqlite() {
    let dir = tempfile::tempdir().unwrap();
    pooled_values(&format!("sqlite:{}", dir.path().join("kv.sqlite").display()));
}

#[cfg(feature = "rocksdb")]
#[test]
fn pooled_values_on_rocksdb() {
    let dir = tempfile::tempdir().unwrap();
    pooled_values(&format!(
        "rocksdb:{}?write_buffer_size=64K",
        dir.path().join("db").display()
    ));
}

#[test]
fn zipfian_and_latest_overwrites_write_their_hot_keys_and_verify() {
    let dir = tempfile::tempdir().unwrap();
    let mut distinct = BTreeMap::new();
    for dist in ["uniform", "zipfian", "latest"] {
        let db = format!("sqlite:{}", dir.path().join(format!("{dist}.db")).display());
        let c = kv_config(
            &db,
            json!({"steps": ["fillseq", "overwrite"], "distribution": dist, "threads": 1}),
        );
        let out = run(&c, dir.path());
        assert_eq!(
            out.results.run.status,
            RunStatus::Ok,
            "{dist}: {:?}",
            out.results.run.error
        );
        assert_eq!(step(&out, "overwrite").verified, Some(true), "{dist}");
        check_contents(&c, &db, &out);
        let keys = picked(&c, 1, 0, 2000);
        let unique: std::collections::BTreeSet<u64> = keys.iter().copied().collect();
        distinct.insert(dist, unique.len());
        if dist == "latest" {
            // The highest keys are the hottest.
            let top = keys.iter().filter(|&&k| k >= c.num - 30).count();
            assert!(top > 2000 / 10, "{top} of 2000 draws in the top 1% of keys");
        }
    }
    // 2000 uniform draws of 3000 keys hit ~1460 keys; zipfian draws repeat hot ones.
    assert!(distinct["uniform"] > 1300, "{distinct:?}");
    assert!(distinct["zipfian"] < distinct["uniform"] * 2 / 3, "{distinct:?}");
    assert!(distinct["latest"] < distinct["uniform"] * 2 / 3, "{distinct:?}");
}
