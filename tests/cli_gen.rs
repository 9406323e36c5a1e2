//! `ibench gen` writes exactly what the library generates, and refuses bad
//! arguments before creating any file.

use arrow::array::{Array, FixedSizeBinaryArray, RecordBatch, UInt64Array};
use ibench::gen::{encode_keys, KeyGen, KeyKind, KeySpec, RowGen, RowSpec};
use ibench::results::rows_batch;
use parquet::arrow::arrow_reader::ParquetRecordBatchReaderBuilder;
use std::path::Path;
use std::process::Command;

fn ibench(args: &[&str]) -> std::process::Output {
    Command::new(env!("CARGO_BIN_EXE_ibench")).args(args).output().unwrap()
}

fn read(path: &Path) -> Vec<RecordBatch> {
    let file = std::fs::File::open(path).unwrap();
    ParquetRecordBatchReaderBuilder::try_new(file)
        .unwrap()
        .build()
        .unwrap()
        .map(|b| b.unwrap())
        .collect()
}

#[test]
fn gen_rows_writes_the_generated_rows_to_parquet() {
    let dir = tempfile::tempdir().unwrap();
    let out = dir.path().join("rows.parquet");
    let o = ibench(&[
        "gen",
        "rows",
        "-n",
        "3000",
        "--table",
        "2",
        "--start",
        "100",
        "--seed",
        "9",
        "-o",
        out.to_str().unwrap(),
    ]);
    assert!(o.status.success(), "{}", String::from_utf8_lossy(&o.stderr));
    assert!(String::from_utf8_lossy(&o.stdout).contains("wrote 3000 rows"));
    let spec = RowSpec {
        seed: 9,
        table: 2,
        ..RowSpec::default()
    };
    let expected = rows_batch(RowGen::new(&spec).unwrap().generate(100, 3000).unwrap()).unwrap();
    let got = read(&out);
    let got = arrow::compute::concat_batches(&got[0].schema(), &got).unwrap();
    assert_eq!(got, expected);
}

#[test]
fn gen_keys_writes_uint64_or_fixed_size_binary_keys() {
    let dir = tempfile::tempdir().unwrap();
    let spec = KeySpec {
        space: Some(1000),
        seed: 3,
        ..KeySpec::new(KeyKind::Zipfian)
    };
    let expected = KeyGen::new(&spec).unwrap().generate(50, 500).unwrap();
    let plain = dir.path().join("k.parquet");
    let args = [
        "gen", "keys", "-k", "zipfian", "-n", "500", "--offset", "50", "--space", "1000", "--seed", "3",
    ];
    let o = ibench(&[&args[..], &["-o", plain.to_str().unwrap()]].concat());
    assert!(o.status.success(), "{}", String::from_utf8_lossy(&o.stderr));
    let col = read(&plain)[0]
        .column(0)
        .as_any()
        .downcast_ref::<UInt64Array>()
        .unwrap()
        .values()
        .to_vec();
    assert_eq!(col, expected);

    let encoded = dir.path().join("k16.parquet");
    let o = ibench(&[&args[..], &["--key-size", "16", "-o", encoded.to_str().unwrap()]].concat());
    assert!(o.status.success(), "{}", String::from_utf8_lossy(&o.stderr));
    let batch = &read(&encoded)[0];
    let col = batch.column(0).as_any().downcast_ref::<FixedSizeBinaryArray>().unwrap();
    assert_eq!(col.value_length(), 16);
    assert_eq!(col.value_data(), encode_keys(&expected, 16).unwrap().as_slice());
}

#[test]
fn gen_writes_large_counts_in_batches() {
    let dir = tempfile::tempdir().unwrap();
    let out = dir.path().join("v.parquet");
    let o = ibench(&[
        "gen",
        "values",
        "-n",
        "2500000",
        "--length",
        "8..12",
        "--text",
        "-o",
        out.to_str().unwrap(),
    ]);
    assert!(o.status.success(), "{}", String::from_utf8_lossy(&o.stderr));
    let batches = read(&out);
    assert_eq!(batches.iter().map(|b| b.num_rows()).sum::<usize>(), 2_500_000);
    assert!(batches.iter().all(|b| b.column(0).len() <= 1 << 20));
}

#[test]
fn bad_arguments_fail_with_the_argument_named_and_no_file_left() {
    let dir = tempfile::tempdir().unwrap();
    let out = dir.path().join("bad.parquet");
    let o = out.to_str().unwrap();
    let cases: [(&[&str], &str); 6] = [
        (&["gen", "keys", "-k", "uniform", "-n", "5", "-o", o], "space"),
        (&["gen", "keys", "-k", "nope", "-n", "5", "-o", o], "kind"),
        (
            &["gen", "keys", "-k", "sequential", "-n", "5", "--key-size", "4", "-o", o],
            "key_size",
        ),
        (&["gen", "values", "-n", "5", "--ratio", "1.5", "-o", o], "ratio"),
        (&["gen", "values", "-n", "5", "--length", "9..3", "-o", o], "length"),
        (&["gen", "rows", "-n", "-5", "-o", o], "-5"),
    ];
    for (args, named) in cases {
        let r = ibench(args);
        let stderr = String::from_utf8_lossy(&r.stderr);
        assert!(!r.status.success(), "{args:?} succeeded");
        assert!(
            stderr.contains(named),
            "{args:?}: stderr does not name {named}: {stderr}"
        );
        assert!(!out.exists(), "{args:?} left a file");
    }
}

#[test]
fn an_unwritable_output_path_is_named_in_the_error() {
    let o = ibench(&[
        "gen",
        "keys",
        "-k",
        "sequential",
        "-n",
        "5",
        "-o",
        "/nonexistent-dir/x.parquet",
    ]);
    assert_eq!(o.status.code(), Some(1));
    assert!(String::from_utf8_lossy(&o.stderr).contains("/nonexistent-dir/x.parquet"));
}
