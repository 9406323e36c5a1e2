//! The result files keep their layout: every column's name, Arrow type and
//! nullability, per file, as recorded in tests/data/results-schema.txt (the
//! layout docs/results.md documents). A change to it is deliberate: rewrite
//! the file with `IBENCH_UPDATE_SCHEMA=1 cargo test --test results_schema`,
//! bump `SCHEMA_VERSION` if the change is incompatible, and update the docs.

mod common;

use common::{config, run};
use serde_json::json;
use std::fmt::Write;

const SNAPSHOT: &str = concat!(env!("CARGO_MANIFEST_DIR"), "/tests/data/results-schema.txt");

#[test]
fn the_result_files_keep_their_columns_types_and_nullability() {
    let dir = tempfile::tempdir().unwrap();
    let out = run(
        &config(json!({
            "db": "null:", "steps": ["l.i0", "l.x", "l.i1", "wait", "qr100", "fillseq"],
            "rows_l_i0": 100, "rows_l_i1": 100, "query_seconds": 0.2, "wait_seconds": 0, "num": 100,
        })),
        dir.path(),
    );
    let mut text = format!("schema_version {}\n", ibench::results::SCHEMA_VERSION);
    for name in [
        "runs",
        "steps",
        "intervals",
        "histograms",
        "config",
        "counters",
        "gauges",
        "disks",
        "waits",
        "profiles",
        "profiled",
    ] {
        let file = std::fs::File::open(out.dir.join(format!("{name}.parquet"))).unwrap();
        let reader = parquet::arrow::arrow_reader::ParquetRecordBatchReaderBuilder::try_new(file).unwrap();
        writeln!(text, "\n[{name}]").unwrap();
        for f in reader.schema().fields() {
            let null = if f.is_nullable() { "null" } else { "not null" };
            writeln!(text, "{} {} {null}", f.name(), f.data_type()).unwrap();
        }
    }
    if std::env::var("IBENCH_UPDATE_SCHEMA").is_ok() {
        std::fs::write(SNAPSHOT, &text).unwrap();
    }
    let recorded = std::fs::read_to_string(SNAPSHOT).expect("tests/data/results-schema.txt");
    assert_eq!(
        text, recorded,
        "the result files' layout changed (see this file's comment)"
    );
}
