//! SQLite's errors as ibench's: the one table of kinds (an interrupted
//! statement is a cancelled one; nothing else has a kind of its own).

use crate::error::{DbErrorKind, Error};

/// The kind of a SQLite error code.
fn kind(code: Option<rusqlite::ErrorCode>) -> DbErrorKind {
    match code {
        Some(rusqlite::ErrorCode::OperationInterrupted) => DbErrorKind::Canceled,
        _ => DbErrorKind::Other,
    }
}

/// A SQLite error as ibench's, naming what failed.
pub(super) fn db_err(target: &str, what: &str, e: rusqlite::Error) -> Error {
    Error::database_kind(target, format!("{what}: {e}"), kind(e.sqlite_error_code()))
}
