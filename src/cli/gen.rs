//! `ibench gen`: generated data into Parquet, in bounded memory.

use crate::error::{Error, Result};
use crate::gen::{
    check_key_size, encode_keys, Alphabet, KeyGen, KeyKind, KeySpec, Length, RowGen, RowSpec, ValueGen, ValueSpec,
};
use crate::results::{binary_array, encoded_keys_array, keys_array, rows_batch, rows_schema, text_array, ParquetFile};
use arrow::array::{Array, ArrayRef, RecordBatch};
use arrow::datatypes::{Field, Schema};
use clap::{Args, Subcommand};
use std::path::{Path, PathBuf};
use std::sync::Arc;
use std::time::Instant;

/// Elements per record batch (and row group chunk): bounds memory for any count.
const BATCH: u64 = 1 << 20;

#[derive(Debug, Subcommand)]
pub(super) enum GenCommand {
    /// Keys from a distribution, as uint64 or as fixed-size big-endian binary.
    Keys(KeysArgs),
    /// Values that compress to a chosen ratio, as binary (or text).
    Values(ValuesArgs),
    /// Insert Benchmark rows (transactionid, dateandtime, cashregisterid,
    /// customerid, productid, price, data) of one table.
    Rows(RowsArgs),
}

#[derive(Debug, Args)]
struct Common {
    /// How many to generate.
    #[arg(long, short = 'n')]
    count: u64,
    /// The seed: the same seed gives the same bytes on any machine and thread count.
    #[arg(long, default_value_t = 0)]
    seed: u64,
    /// The Parquet file to write.
    #[arg(long, short = 'o')]
    output: PathBuf,
}

#[derive(Debug, Args)]
pub(super) struct KeysArgs {
    /// sequential, uniform, unique, zipfian or latest.
    #[arg(long, short = 'k', value_parser = parse_kind)]
    kind: KeyKind,
    #[command(flatten)]
    common: Common,
    /// Keys are in [0, SPACE); required for all kinds but sequential.
    #[arg(long)]
    space: Option<u64>,
    /// Index of the first draw (generate a stream in pieces with the same seed).
    #[arg(long, default_value_t = 0)]
    offset: u64,
    /// Write keys as KEY_SIZE-byte big-endian binary (≥ 8) instead of uint64.
    #[arg(long)]
    key_size: Option<usize>,
    /// Zipf exponent for zipfian and latest.
    #[arg(long, default_value_t = 0.99)]
    theta: f64,
}

#[derive(Debug, Args)]
pub(super) struct ValuesArgs {
    #[command(flatten)]
    common: Common,
    /// Value length: N, or MIN..MAX (both included).
    #[arg(long, default_value = "100", value_parser = parse_length)]
    length: Length,
    /// Target compressed/raw ratio in (0, 1].
    #[arg(long, default_value_t = 0.5)]
    ratio: f64,
    /// Printable ASCII values (a string column) instead of binary.
    #[arg(long)]
    text: bool,
    /// Index of the first value.
    #[arg(long, default_value_t = 0)]
    offset: u64,
}

#[derive(Debug, Args)]
pub(super) struct RowsArgs {
    #[command(flatten)]
    common: Common,
    /// Table number: each table has its own streams.
    #[arg(long, default_value_t = 0)]
    table: u64,
    /// The first primary key.
    #[arg(long, default_value_t = 0)]
    start: u64,
    /// Length of the data column: N, or MIN..MAX (both included).
    #[arg(long, default_value = "10..20", value_parser = parse_length)]
    data_length: Length,
    /// Target compressed/raw ratio of the data column, in (0, 1].
    #[arg(long, default_value_t = 0.5)]
    ratio: f64,
    /// Consecutive keys that share one dateandtime second.
    #[arg(long, default_value_t = 1000)]
    rows_per_second: u64,
}

fn parse_kind(s: &str) -> Result<KeyKind, String> {
    s.parse().map_err(|e: Error| e.to_string())
}

/// Parses `N` or `MIN..MAX`.
pub(crate) fn parse_length(s: &str) -> Result<Length, String> {
    s.parse()
}

pub(super) fn run(cmd: GenCommand) -> Result<()> {
    let started = Instant::now();
    let (what, common) = match &cmd {
        GenCommand::Keys(a) => ("keys", &a.common),
        GenCommand::Values(a) => ("values", &a.common),
        GenCommand::Rows(a) => ("rows", &a.common),
    };
    match &cmd {
        GenCommand::Keys(a) => gen_keys(a)?,
        GenCommand::Values(a) => gen_values(a)?,
        GenCommand::Rows(a) => gen_rows(a)?,
    }
    let secs = started.elapsed().as_secs_f64();
    let bytes = std::fs::metadata(&common.output).map(|m| m.len()).unwrap_or(0);
    println!(
        "wrote {} {what} to {} ({:.1} MB) in {secs:.2} s ({:.2} M/s)",
        common.count,
        common.output.display(),
        bytes as f64 / 1e6,
        common.count as f64 / secs / 1e6
    );
    Ok(())
}

/// Writes `count` elements in batches: `make(first, n)` returns one column.
fn write_column(
    path: &Path,
    name: &str,
    start: u64,
    count: u64,
    make: impl Fn(u64, usize) -> Result<ArrayRef>,
) -> Result<()> {
    // Build the first batch before creating the file so bad parameters leave no file behind.
    let first = make(start, count.min(BATCH) as usize)?;
    let schema = Arc::new(Schema::new(vec![Field::new(name, first.data_type().clone(), false)]));
    let mut file = ParquetFile::create(path, schema.clone())?;
    let mut done = 0;
    let mut column = Some(first);
    while done < count {
        let n = (count - done).min(BATCH);
        let array = match column.take() {
            Some(a) => a,
            None => make(start + done, n as usize)?,
        };
        let batch =
            RecordBatch::try_new(schema.clone(), vec![array]).map_err(|e| Error::format("building a batch", e))?;
        file.write(&batch)?;
        done += n;
    }
    file.finish()
}

fn gen_keys(a: &KeysArgs) -> Result<()> {
    let spec = KeySpec {
        kind: a.kind,
        space: a.space,
        theta: a.theta,
        seed: a.common.seed,
        table: 0,
    };
    let keys = KeyGen::new(&spec)?;
    keys.check_range(a.offset, a.common.count)?;
    if let Some(size) = a.key_size {
        check_key_size(size)?;
    }
    write_column(&a.common.output, "key", a.offset, a.common.count, |s, n| {
        let k = keys.generate(s, n)?;
        Ok(match a.key_size {
            Some(size) => Arc::new(encoded_keys_array(encode_keys(&k, size)?, size)?) as ArrayRef,
            None => Arc::new(keys_array(k)),
        })
    })
}

fn gen_values(a: &ValuesArgs) -> Result<()> {
    let spec = ValueSpec {
        length: a.length,
        ratio: a.ratio,
        alphabet: if a.text { Alphabet::Text } else { Alphabet::Binary },
        seed: a.common.seed,
        table: 0,
    };
    let values = ValueGen::new(&spec)?;
    a.offset
        .checked_add(a.common.count)
        .ok_or_else(|| Error::config("count", "offset + count overflows a 64-bit index"))?;
    write_column(&a.common.output, "value", a.offset, a.common.count, |s, n| {
        let v = values.generate(s, n)?;
        Ok(if a.text {
            Arc::new(text_array(v)?) as ArrayRef
        } else {
            Arc::new(binary_array(v))
        })
    })
}

fn gen_rows(a: &RowsArgs) -> Result<()> {
    let spec = RowSpec {
        seed: a.common.seed,
        table: a.table,
        data_length: a.data_length,
        ratio: a.ratio,
        rows_per_second: a.rows_per_second,
        ..RowSpec::default()
    };
    let rows = RowGen::new(&spec)?;
    let first = rows.generate(a.start, a.common.count.min(BATCH) as usize)?;
    a.start
        .checked_add(a.common.count)
        .filter(|&end| end <= i64::MAX as u64)
        .ok_or_else(|| Error::config("count", "start + count exceeds the largest BIGINT key"))?;
    let mut file = ParquetFile::create(&a.common.output, rows_schema())?;
    let mut pending = Some(first);
    let mut done = 0;
    while done < a.common.count {
        let n = (a.common.count - done).min(BATCH);
        let batch = match pending.take() {
            Some(r) => r,
            None => rows.generate(a.start + done, n as usize)?,
        };
        file.write(&rows_batch(batch)?)?;
        done += n;
    }
    file.finish()
}
