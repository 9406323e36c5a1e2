//! Argument conversion shared by the bindings.

use crate::error::{Error, Result};
use crate::gen::Length;
use pyo3::prelude::*;

/// A Python int that must fit a u64; `name` names it in the error.
pub(super) fn non_negative(name: &str, value: i128) -> Result<u64> {
    u64::try_from(value).map_err(|_| Error::config(name, format!("must be an integer in [0, 2^64), got {value}")))
}

/// A count that must also fit in memory indexes.
pub(super) fn count(value: i128) -> Result<usize> {
    let n = non_negative("count", value)?;
    usize::try_from(n).map_err(|_| Error::config("count", format!("{n} is too large for this machine")))
}

/// `length=100` or `length=(min, max)`.
#[derive(FromPyObject)]
pub(super) enum LengthArg {
    Fixed(i128),
    Range((i128, i128)),
}

impl LengthArg {
    pub(super) fn resolve(self, name: &str) -> Result<Length> {
        let part =
            |v: i128| u32::try_from(v).map_err(|_| Error::config(name, format!("{v} is not a length in [0, 2^31)")));
        let length = match self {
            LengthArg::Fixed(n) => Length::Fixed(part(n)?),
            LengthArg::Range((min, max)) => Length::Uniform {
                min: part(min)?,
                max: part(max)?,
            },
        };
        length.check(name)?;
        Ok(length)
    }
}

/// Runs `work` without the GIL, on `threads` rayon threads (the global pool
/// when `None`), and maps its error.
pub(super) fn detached<T: Send>(
    py: Python<'_>,
    threads: Option<i128>,
    work: impl FnOnce() -> Result<T> + Send,
) -> PyResult<T> {
    let pool = match threads {
        Some(n) if !(1..=1024).contains(&n) => {
            return Err(Error::config("threads", format!("must be in [1, 1024], got {n}")).into())
        }
        Some(n) => Some(
            rayon::ThreadPoolBuilder::new()
                .num_threads(n as usize)
                .build()
                .map_err(|e| Error::config("threads", e.to_string()))?,
        ),
        None => None,
    };
    let out = py.detach(|| match pool {
        Some(p) => p.install(work),
        None => work(),
    });
    Ok(out?)
}
