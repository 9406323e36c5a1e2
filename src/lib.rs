//! ibench: deterministic database benchmarking.
//!
//! The architecture is described in `ARCHITECTURE.md`; data flows
//! one way: [`gen`] (what each key, value, row and query is) → [`workload`]
//! (which operations a step performs) → [`exec`] (when, on which thread,
//! against which [`connect`] session) → [`metrics`] → [`results`] → Python.

pub mod campaign;
pub mod cli;
pub mod clock;
pub mod connect;
pub mod error;
pub mod exec;
pub mod gen;
pub mod metrics;
pub mod profile;
#[cfg(feature = "python")]
mod python;
pub mod results;
pub mod server;
pub mod stop;
pub mod workload;

pub use error::{DbErrorKind, Error, Result};
pub use stop::Stop;
