//! Generator throughput: one core per key kind, value bytes/s, Insert
//! Benchmark rows/s, and the speed-up of rayon on 2 threads.
//!
//! Run: `cargo bench --bench gen`. Figures are recorded in docs/generators.md.

use criterion::{criterion_group, criterion_main, BenchmarkId, Criterion, Throughput};
use ibench::gen::{KeyGen, KeyKind, KeySpec, Length, RowGen, RowSpec, Rows, ValueGen, ValueSpec, Values};
use std::hint::black_box;
use std::time::Duration;

const KEYS: usize = 1 << 20;
const VALUES: usize = 1 << 17;
const ROWS: usize = 1 << 20;

fn pool(threads: usize) -> rayon::ThreadPool {
    rayon::ThreadPoolBuilder::new().num_threads(threads).build().unwrap()
}

fn keys(c: &mut Criterion) {
    let mut g = c.benchmark_group("keys");
    g.throughput(Throughput::Elements(KEYS as u64));
    let mut out = vec![0u64; KEYS];
    for kind in KeyKind::ALL {
        let spec = KeySpec {
            space: Some(1_000_000_007),
            ..KeySpec::new(kind)
        };
        let keys = KeyGen::new(&spec).unwrap();
        // One core: fill a preallocated buffer on this thread.
        g.bench_function(BenchmarkId::new("one_core", kind.name()), |b| {
            let mut start = 0;
            b.iter(|| {
                keys.fill(start, &mut out);
                start += KEYS as u64;
                black_box(&out);
            })
        });
    }
    g.finish();
}

fn values(c: &mut Criterion) {
    let mut g = c.benchmark_group("values");
    for len in [100u32, 400] {
        let spec = ValueSpec {
            length: Length::Fixed(len),
            ratio: 0.5,
            ..ValueSpec::default()
        };
        let values = ValueGen::new(&spec).unwrap();
        g.throughput(Throughput::Bytes(VALUES as u64 * len as u64));
        let one = pool(1);
        let mut out = Values::default();
        g.bench_function(BenchmarkId::new("one_core_r0.5", len), |b| {
            let mut start = 0;
            b.iter(|| {
                one.install(|| values.generate_into(start, VALUES, &mut out).unwrap());
                start += VALUES as u64;
                black_box(&out);
            })
        });
    }
    g.finish();
}

fn rows(c: &mut Criterion) {
    let mut g = c.benchmark_group("rows");
    g.throughput(Throughput::Elements(ROWS as u64));
    let rows = RowGen::new(&RowSpec::default()).unwrap();
    let one = pool(1);
    let mut out = Rows::default();
    g.bench_function("one_core", |b| {
        let mut start = 0;
        b.iter(|| {
            one.install(|| rows.generate_into(start, ROWS, &mut out).unwrap());
            start += ROWS as u64;
            black_box(&out);
        })
    });
    // The same with a fresh batch each time: page faults on new memory included.
    g.bench_function("one_core_fresh_allocation", |b| {
        let mut start = 0;
        b.iter(|| {
            let r = one.install(|| rows.generate(start, ROWS).unwrap());
            start += ROWS as u64;
            black_box(r)
        })
    });
    g.finish();
}

/// The same work on 1 and on 2 rayon threads: the ratio is the speed-up.
fn speedup(c: &mut Criterion) {
    let mut g = c.benchmark_group("threads");
    let keys = KeyGen::new(&KeySpec {
        space: Some(1_000_000_007),
        ..KeySpec::new(KeyKind::Unique)
    })
    .unwrap();
    let values = ValueGen::new(&ValueSpec {
        length: Length::Fixed(400),
        ..ValueSpec::default()
    })
    .unwrap();
    let rows = RowGen::new(&RowSpec::default()).unwrap();
    let (mut k, mut v, mut r) = (Vec::new(), Values::default(), Rows::default());
    for threads in [1usize, 2] {
        let p = pool(threads);
        g.throughput(Throughput::Elements(4 * KEYS as u64));
        g.bench_function(BenchmarkId::new("unique_keys", threads), |b| {
            b.iter(|| p.install(|| keys.generate_into(0, 4 * KEYS, &mut k).unwrap()))
        });
        g.throughput(Throughput::Bytes(VALUES as u64 * 400));
        g.bench_function(BenchmarkId::new("values_400", threads), |b| {
            b.iter(|| p.install(|| values.generate_into(0, VALUES, &mut v).unwrap()))
        });
        g.throughput(Throughput::Elements(ROWS as u64));
        g.bench_function(BenchmarkId::new("rows", threads), |b| {
            b.iter(|| p.install(|| rows.generate_into(0, ROWS, &mut r).unwrap()))
        });
    }
    g.finish();
}

fn config() -> Criterion {
    Criterion::default()
        .warm_up_time(Duration::from_millis(500))
        .measurement_time(Duration::from_secs(2))
        .sample_size(20)
}

criterion_group! {
    name = benches;
    config = config();
    targets = keys, values, rows, speedup
}
criterion_main!(benches);
