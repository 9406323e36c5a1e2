//! `ibench.gen`: generators returning pyarrow arrays without copying.

use super::convert::{detached, non_negative, LengthArg};
use crate::gen::{check_key_size, encode_keys, Alphabet, KeyGen, KeySpec, RowGen, RowSpec, ValueGen, ValueSpec};
use crate::results::{binary_array, encoded_keys_array, keys_array, rows_batch, text_array};
use arrow::array::{Array, ArrayData};
use arrow::pyarrow::ToPyArrow;
use pyo3::prelude::*;

#[pyfunction]
#[pyo3(signature = (kind, count, *, space=None, seed=0, offset=0, key_size=None, theta=0.99, table=0, threads=None))]
#[allow(clippy::too_many_arguments)]
fn keys<'py>(
    py: Python<'py>,
    kind: &str,
    count: i128,
    space: Option<i128>,
    seed: i128,
    offset: i128,
    key_size: Option<i128>,
    theta: f64,
    table: i128,
    threads: Option<i128>,
) -> PyResult<Bound<'py, PyAny>> {
    let spec = KeySpec {
        kind: kind.parse()?,
        space: space.map(|s| non_negative("space", s)).transpose()?,
        theta,
        seed: non_negative("seed", seed)?,
        table: non_negative("table", table)?,
    };
    let n = super::convert::count(count)?;
    let offset = non_negative("offset", offset)?;
    let key_size = key_size
        .map(|k| {
            let k = usize::try_from(k)
                .map_err(|_| crate::Error::config("key_size", format!("must be at least 8, got {k}")))?;
            check_key_size(k).map(|_| k)
        })
        .transpose()?;
    let generator = KeyGen::new(&spec)?;
    let data: ArrayData = detached(py, threads, || {
        let k = generator.generate(offset, n)?;
        Ok(match key_size {
            Some(size) => encoded_keys_array(encode_keys(&k, size)?, size)?.into_data(),
            None => keys_array(k).into_data(),
        })
    })?;
    data.to_pyarrow(py)
}

#[pyfunction]
#[pyo3(
    signature = (count, *, length=LengthArg::Fixed(100), ratio=0.5, seed=0, offset=0, text=false, table=0, threads=None),
    text_signature = "(count, *, length=100, ratio=0.5, seed=0, offset=0, text=False, table=0, threads=None)"
)]
#[allow(clippy::too_many_arguments)]
fn values<'py>(
    py: Python<'py>,
    count: i128,
    length: LengthArg,
    ratio: f64,
    seed: i128,
    offset: i128,
    text: bool,
    table: i128,
    threads: Option<i128>,
) -> PyResult<Bound<'py, PyAny>> {
    let spec = ValueSpec {
        length: length.resolve("length")?,
        ratio,
        alphabet: if text { Alphabet::Text } else { Alphabet::Binary },
        seed: non_negative("seed", seed)?,
        table: non_negative("table", table)?,
    };
    let n = super::convert::count(count)?;
    let offset = non_negative("offset", offset)?;
    let generator = ValueGen::new(&spec)?;
    let data: ArrayData = detached(py, threads, || {
        let v = generator.generate(offset, n)?;
        Ok(if text {
            text_array(v)?.into_data()
        } else {
            binary_array(v).into_data()
        })
    })?;
    data.to_pyarrow(py)
}

#[pyfunction]
#[pyo3(
    signature = (count, *, table=0, start=0, seed=0, data_length=LengthArg::Range((10, 20)), ratio=0.5, rows_per_second=1000, data_random_pct=None, threads=None),
    text_signature = "(count, *, table=0, start=0, seed=0, data_length=(10, 20), ratio=0.5, rows_per_second=1000, data_random_pct=None, threads=None)"
)]
#[allow(clippy::too_many_arguments)]
fn rows<'py>(
    py: Python<'py>,
    count: i128,
    table: i128,
    start: i128,
    seed: i128,
    data_length: LengthArg,
    ratio: f64,
    rows_per_second: i128,
    data_random_pct: Option<i128>,
    threads: Option<i128>,
) -> PyResult<Bound<'py, PyAny>> {
    let data_random_pct = match data_random_pct {
        Some(p) => Some(u32::try_from(non_negative("data_random_pct", p)?).unwrap_or(u32::MAX)),
        None => None,
    };
    let spec = RowSpec {
        seed: non_negative("seed", seed)?,
        table: non_negative("table", table)?,
        data_length: data_length.resolve("data_length")?,
        ratio,
        rows_per_second: non_negative("rows_per_second", rows_per_second)?,
        data_random_pct,
        ..RowSpec::default()
    };
    let n = super::convert::count(count)?;
    let start = non_negative("start", start)?;
    let generator = RowGen::new(&spec)?;
    let batch = detached(py, threads, || rows_batch(generator.generate(start, n)?))?;
    batch.to_pyarrow(py)
}

pub(super) fn register(m: &Bound<'_, PyModule>) -> PyResult<()> {
    m.add_function(wrap_pyfunction!(keys, m)?)?;
    m.add_function(wrap_pyfunction!(values, m)?)?;
    m.add_function(wrap_pyfunction!(rows, m)?)?;
    Ok(())
}
