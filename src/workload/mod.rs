//! What to run: steps, presets, configuration. Knows nothing of databases or timing.
//!
//! `config.rs` declares every run parameter once (`params.rs` makes each
//! declaration a field, a flag, a layer key and a listed parameter);
//! `presets.rs` holds the presets as overlays of the defaults; `choices.rs`
//! the choice-valued parameters' types; `step.rs` the steps; `kv.rs` what a
//! key/value step's threads do; `sysbench.rs` the sysbench suite's
//! microbenchmarks as data.

mod choices;
mod config;
mod kv;
pub(crate) mod params;
mod presets;
mod step;
pub mod sysbench;

pub use choices::{
    Compat, DataMode, Distribution, MaintenanceStyle, Pacing, Profile, Shard, Statements, StepList, StepOptions,
    VerifyMode,
};
pub(crate) use config::param;
pub use config::{Config, Flags, Overrides, PARAMETERS};
pub use kv::{kv_stream, share, KvThreadWork, KV_STREAMS};
pub use params::Parameter;
pub use presets::{BENCHMARK_SH_STEP_OPTIONS, PRESETS};
pub use step::{KvOp, QueryKind, Step, Writes, SCAN_CHUNK, STANDARD_STEPS};
pub use sysbench::{Microbenchmark, SbStep, SbTest};
