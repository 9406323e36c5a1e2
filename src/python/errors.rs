//! The Python exception hierarchy, mirroring [`crate::Error`], mapped in one place.

use pyo3::create_exception;
use pyo3::exceptions::PyException;
use pyo3::prelude::*;

create_exception!(ibench, Error, PyException, "Base class of every error ibench raises.");
create_exception!(
    ibench,
    ConfigError,
    Error,
    "A parameter is out of range or inconsistent."
);
create_exception!(ibench, IoError, Error, "Reading or writing a file failed.");
create_exception!(ibench, FormatError, Error, "Arrow or Parquet rejected data or a file.");
create_exception!(
    ibench,
    DatabaseError,
    Error,
    "The database refused or failed an operation."
);

impl From<crate::Error> for PyErr {
    fn from(e: crate::Error) -> PyErr {
        let message = e.to_string();
        match e {
            crate::Error::Config { .. } => ConfigError::new_err(message),
            crate::Error::Io { .. } => IoError::new_err(message),
            crate::Error::Format { .. } => FormatError::new_err(message),
            crate::Error::Database { .. } | crate::Error::Step { .. } => DatabaseError::new_err(message),
            crate::Error::Interrupted => pyo3::exceptions::PyKeyboardInterrupt::new_err(message),
        }
    }
}

pub(super) fn register(m: &Bound<'_, PyModule>) -> PyResult<()> {
    let py = m.py();
    m.add("Error", py.get_type::<Error>())?;
    m.add("ConfigError", py.get_type::<ConfigError>())?;
    m.add("IoError", py.get_type::<IoError>())?;
    m.add("FormatError", py.get_type::<FormatError>())?;
    m.add("DatabaseError", py.get_type::<DatabaseError>())?;
    Ok(())
}
