//! Arrow schemas, record batches, and Parquet files.

mod generated;
mod parquet_file;
mod run_tables;

pub use generated::{binary_array, encoded_keys_array, keys_array, rows_batch, rows_schema, text_array};
pub use parquet_file::ParquetFile;
pub use run_tables::{
    EngineValue, HistogramRow, RunResults, RunRow, StepRow, COST_COLUMNS, ENGINE_COLUMNS, PERCENTILES, SCHEMA_VERSION,
    STEP_OPS,
};
