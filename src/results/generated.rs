//! Generated data as Arrow arrays. Every conversion takes ownership of the
//! generator's buffers and wraps them without copying.

use crate::error::{Error, Result};
use crate::gen::{Rows, Values};
use arrow::array::{
    ArrayRef, BinaryArray, FixedSizeBinaryArray, Int32Array, Int64Array, RecordBatch, StringArray,
    TimestampMicrosecondArray, UInt64Array,
};
use arrow::buffer::{Buffer, OffsetBuffer, ScalarBuffer};
use arrow::datatypes::{DataType, Field, Schema, SchemaRef, TimeUnit};
use std::sync::{Arc, LazyLock};

/// Keys as `uint64`.
pub fn keys_array(keys: Vec<u64>) -> UInt64Array {
    UInt64Array::from(keys)
}

/// Encoded keys (consecutive `key_size`-byte strings) as `fixed_size_binary(key_size)`.
pub fn encoded_keys_array(bytes: Vec<u8>, key_size: usize) -> Result<FixedSizeBinaryArray> {
    let size = i32::try_from(key_size).map_err(|_| Error::config("key_size", format!("{key_size} is too large")))?;
    FixedSizeBinaryArray::try_new(size, Buffer::from_vec(bytes), None).map_err(|e| Error::format("building keys", e))
}

fn offsets(values: Vec<i32>) -> OffsetBuffer<i32> {
    // The generators produce monotone offsets starting at 0.
    OffsetBuffer::new(ScalarBuffer::from(values))
}

/// Values as `binary`.
pub fn binary_array(values: Values) -> BinaryArray {
    BinaryArray::new(offsets(values.offsets), Buffer::from_vec(values.data), None)
}

/// Text values as `string` (the bytes are checked to be UTF-8, which ASCII is).
pub fn text_array(values: Values) -> Result<StringArray> {
    StringArray::try_new(offsets(values.offsets), Buffer::from_vec(values.data), None)
        .map_err(|e| Error::format("building text values", e))
}

static ROWS_SCHEMA: LazyLock<SchemaRef> = LazyLock::new(|| {
    Arc::new(Schema::new(vec![
        Field::new("transactionid", DataType::Int64, false),
        Field::new("dateandtime", DataType::Timestamp(TimeUnit::Microsecond, None), false),
        Field::new("cashregisterid", DataType::Int32, false),
        Field::new("customerid", DataType::Int32, false),
        Field::new("productid", DataType::Int32, false),
        Field::new("price", DataType::Int32, false),
        Field::new("data", DataType::Utf8, false),
    ]))
});

/// The Insert Benchmark table's seven columns.
pub fn rows_schema() -> SchemaRef {
    ROWS_SCHEMA.clone()
}

/// Rows as a record batch with [`rows_schema`].
pub fn rows_batch(rows: Rows) -> Result<RecordBatch> {
    let data = text_array(Values {
        offsets: rows.data_offsets,
        data: rows.data,
    })?;
    let columns: Vec<ArrayRef> = vec![
        Arc::new(Int64Array::from(rows.transactionid)),
        Arc::new(TimestampMicrosecondArray::from(rows.dateandtime)),
        Arc::new(Int32Array::from(rows.cashregisterid)),
        Arc::new(Int32Array::from(rows.customerid)),
        Arc::new(Int32Array::from(rows.productid)),
        Arc::new(Int32Array::from(rows.price)),
        Arc::new(data),
    ];
    RecordBatch::try_new(rows_schema(), columns).map_err(|e| Error::format("building rows", e))
}
