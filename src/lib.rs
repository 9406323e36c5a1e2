//! ibench: deterministic database benchmarking.
//!
//! The architecture is described in `DESIGN.md` of the project; data flows
//! one way: [`gen`] (what each key, value, row and query is) → workload →
//! exec → metrics → results → Python.

pub mod cli;
pub mod error;
pub mod gen;
#[cfg(feature = "python")]
mod python;
pub mod results;

pub use error::{Error, Result};
