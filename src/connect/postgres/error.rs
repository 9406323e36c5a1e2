//! PostgreSQL's errors as ibench's, from either client (the driver's, the
//! sessions' own): the one table of kinds by SQLSTATE.

use super::wire::WireError;
use crate::error::{DbErrorKind, Error};

/// SQLSTATEs with a kind of their own; any other is `Other`.
const KINDS: [(&str, DbErrorKind); 5] = [
    // deadlock_detected, serialization_failure: the transaction can be retried.
    ("40P01", DbErrorKind::Retryable),
    ("40001", DbErrorKind::Retryable),
    // insufficient_privilege: skipped by maintenance.
    ("42501", DbErrorKind::Privilege),
    // query_canceled: a cancel request (a stop).
    ("57014", DbErrorKind::Canceled),
    // unique_violation.
    ("23505", DbErrorKind::DuplicateKey),
];

/// The kind of SQLSTATE `code` (none: a client's error).
fn kind(code: Option<&str>) -> DbErrorKind {
    code.map_or(DbErrorKind::Other, |c| crate::connect::kind_of(&KINDS, &c))
}

/// A driver error as ibench's, naming what failed.
pub(super) fn pg_err(target: &str, what: &str, e: postgres::Error) -> Error {
    let kind = kind(e.code().map(|c| c.code()));
    let message = match e.as_db_error() {
        Some(db) => format!("{what}: {} ({})", db.message(), db.code().code()),
        None => format!("{what}: {e}"),
    };
    Error::database_kind(target, message, kind)
}

/// A session client's error as ibench's, kinds as [`pg_err`] gives them.
pub(super) fn wire_err(target: &str, what: &str, e: WireError) -> Error {
    let kind = kind(e.code.as_deref());
    Error::database_kind(target, format!("{what}: {e}"), kind)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn sqlstates_have_their_kinds() {
        assert_eq!(kind(Some("40P01")), DbErrorKind::Retryable);
        assert_eq!(kind(Some("42501")), DbErrorKind::Privilege);
        assert_eq!(kind(Some("57014")), DbErrorKind::Canceled);
        assert_eq!(kind(Some("23505")), DbErrorKind::DuplicateKey);
        assert_eq!(kind(Some("23503")), DbErrorKind::Other);
        assert_eq!(kind(None), DbErrorKind::Other);
        let e = wire_err(
            "t",
            "insert",
            WireError {
                code: Some("40001".into()),
                message: "could not serialize".into(),
            },
        );
        assert!(
            e.is_retryable() && e.to_string().contains("insert: could not serialize (40001)"),
            "{e}"
        );
    }
}
