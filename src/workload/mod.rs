//! What to run: steps, presets, configuration. Knows nothing of databases or timing.

mod config;
mod step;

pub use config::{Config, PRESETS};
pub use step::{QueryKind, Step, STANDARD_STEPS};
