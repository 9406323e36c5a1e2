//! MySQL's and MariaDB's errors as ibench's, from either client (the
//! driver's, the sessions' own): the one table of kinds by error number.

use super::wire::WireError;
use crate::error::{DbErrorKind, Error};

/// Error numbers with a kind of their own; any other is `Other`.
const KINDS: [(u16, DbErrorKind); 11] = [
    // ER_LOCK_DEADLOCK, ER_LOCK_WAIT_TIMEOUT, ER_CHECKREAD (a record changed
    // since read): the transaction can be retried (sysbench's default
    // --mysql-ignore-errors).
    (1213, DbErrorKind::Retryable),
    (1205, DbErrorKind::Retryable),
    (1020, DbErrorKind::Retryable),
    // ER_DUP_ENTRY.
    (1062, DbErrorKind::DuplicateKey),
    // ER_SPECIFIC_ACCESS_DENIED_ERROR (SUPER and the like), ER_TABLEACCESS_DENIED_ERROR,
    // ER_DBACCESS_DENIED_ERROR, ER_PROCACCESS_DENIED_ERROR: skipped by maintenance.
    (1227, DbErrorKind::Privilege),
    (1142, DbErrorKind::Privilege),
    (1044, DbErrorKind::Privilege),
    (1370, DbErrorKind::Privilege),
    // ER_QUERY_INTERRUPTED (`KILL QUERY`: a stop request), MySQL's
    // ER_QUERY_TIMEOUT, MariaDB's ER_STATEMENT_TIMEOUT.
    (1317, DbErrorKind::Canceled),
    (3024, DbErrorKind::Canceled),
    (1969, DbErrorKind::Canceled),
];

/// The kind of error number `code`.
fn kind(code: u16) -> DbErrorKind {
    crate::connect::kind_of(&KINDS, &code)
}

/// A server's error by its number, from either client.
pub(super) fn server_error(target: &str, what: &str, code: u16, message: &str) -> Error {
    Error::database_kind(target, format!("{what}: {message} ({code})"), kind(code))
}

/// A driver error as ibench's, kinds as [`server_error`] gives them.
pub(super) fn my_err(target: &str, what: &str, e: mysql::Error) -> Error {
    match e {
        mysql::Error::MySqlError(m) => server_error(target, what, m.code, &m.message),
        other => Error::database(target, format!("{what}: {other}")),
    }
}

/// A session client's error as ibench's, kinds as [`server_error`] gives them.
pub(super) fn wire_err(target: &str, what: &str, e: WireError) -> Error {
    match e.code {
        Some(code) => server_error(target, what, code, &e.message),
        None => Error::database(target, format!("{what}: {}", e.message)),
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn error_numbers_have_their_kinds() {
        assert_eq!(kind(1213), DbErrorKind::Retryable);
        assert_eq!(kind(1142), DbErrorKind::Privilege);
        assert_eq!(kind(1317), DbErrorKind::Canceled);
        assert_eq!(kind(1062), DbErrorKind::DuplicateKey);
        assert_eq!(kind(1020), DbErrorKind::Retryable);
        assert_eq!(kind(1064), DbErrorKind::Other);
        let e = server_error("t", "insert", 1205, "Lock wait timeout exceeded");
        assert!(
            e.to_string().contains("insert: Lock wait timeout exceeded (1205)"),
            "{e}"
        );
    }
}
