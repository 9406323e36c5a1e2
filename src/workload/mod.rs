//! What to run: steps, presets, configuration. Knows nothing of databases or timing.

mod config;
mod kv;
mod step;

pub use config::{
    Compat, Config, DataMode, Distribution, MaintenanceStyle, Pacing, Shard, Statements, VerifyMode,
    BENCHMARK_SH_STEP_OPTIONS, PRESETS,
};
pub use kv::{kv_stream, share, KvThreadWork, KV_STREAMS};
pub use step::{KvOp, QueryKind, Step, Writes, SCAN_CHUNK, STANDARD_STEPS};
