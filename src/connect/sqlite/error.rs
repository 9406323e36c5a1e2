//! SQLite's errors as ibench's: the one table of kinds (an interrupted
//! statement is a cancelled one; a busy database, which SQLite reports at
//! once where waiting could not help (a read transaction that must write
//! after another connection wrote), a transaction to run again; a unique
//! key already holding the value, a duplicate key).

use crate::error::{DbErrorKind, Error};

/// The kind of a SQLite error code.
fn kind(code: Option<rusqlite::ErrorCode>) -> DbErrorKind {
    match code {
        Some(rusqlite::ErrorCode::OperationInterrupted) => DbErrorKind::Canceled,
        Some(rusqlite::ErrorCode::DatabaseBusy | rusqlite::ErrorCode::DatabaseLocked) => DbErrorKind::Retryable,
        Some(rusqlite::ErrorCode::ConstraintViolation) => DbErrorKind::DuplicateKey,
        _ => DbErrorKind::Other,
    }
}

/// A SQLite error as ibench's, naming what failed.
pub(super) fn db_err(target: &str, what: &str, e: rusqlite::Error) -> Error {
    Error::database_kind(target, format!("{what}: {e}"), kind(e.sqlite_error_code()))
}
