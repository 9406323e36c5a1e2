//! Result tables (docs/results.md), their Arrow schemas and record batches,
//! Parquet files, and generated data as Arrow arrays. Each table's columns
//! are declared once, in its own file.

mod columns;
mod disks;
mod generated;
mod histograms;
mod intervals;
mod parquet_file;
mod profiles;
mod run_results;
mod runs;
mod server;
mod status;
mod steps;
mod threads;

pub use generated::{binary_array, encoded_keys_array, keys_array, rows_batch, rows_schema, text_array};
pub use histograms::HistogramRow;
pub use parquet_file::ParquetFile;
pub use profiles::{ProfileRow, RoleStack};
pub use run_results::RunResults;
pub use runs::{RunRow, SCHEMA_VERSION};
pub use status::{CampaignRunStatus, RunStatus, StepStatus};
pub use steps::{OpLag, OpLatency, StepRow, LAG_STATS, PACED_OPS, PERCENTILES, STEP_OPS};
