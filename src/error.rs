//! The crate's one error type.
//!
//! Every variant names the input that caused it, so a message can be shown to a
//! user as it is. The Python bindings map each variant to an `ibench.Error`
//! subclass in one place (`python/errors.rs`).

use std::path::PathBuf;

/// Result with the crate's [`Error`].
pub type Result<T, E = Error> = std::result::Result<T, E>;

/// The kind of a database error, as the harness acts on it.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum DbErrorKind {
    /// Any other failure.
    Other,
    /// A deadlock or serialization failure: running the operation again may succeed.
    Retryable,
    /// The user lacks a privilege the statement needs (PostgreSQL 42501,
    /// MySQL 1227/1142/1044): maintenance that needs it is skipped with a warning.
    Privilege,
    /// The statement was cancelled (a stop request): the step is interrupted, not failed.
    Canceled,
    /// A unique key already holds the value (PostgreSQL 23505, MySQL 1062,
    /// SQLite's constraint): a sysbench event that met it is restarted, as
    /// sysbench restarts it.
    DuplicateKey,
}

/// Everything that can go wrong in ibench.
#[derive(Debug, thiserror::Error)]
pub enum Error {
    /// A parameter is out of range or inconsistent; `name` is the parameter as
    /// the user spelled it (`key_size`, `ratio`, `length`, ...).
    #[error("invalid {name}: {message}")]
    Config {
        /// The parameter's name.
        name: String,
        /// What is wrong and, where it helps, how to fix it.
        message: String,
    },
    /// Reading or writing a file failed.
    #[error("{action} {path}: {source}")]
    Io {
        /// What was being done ("cannot create", "cannot write").
        action: &'static str,
        /// The file or directory.
        path: PathBuf,
        /// The operating system's error.
        #[source]
        source: std::io::Error,
    },
    /// The database refused or failed an operation. `target` never holds a password.
    #[error("{target}: {message}")]
    Database {
        /// The database, as `dbms://host:port/db` or a path, without password.
        target: String,
        /// What failed, with the server's message.
        message: String,
        /// What kind of failure: the harness retries, skips or stops by kind,
        /// the same way for every database.
        kind: DbErrorKind,
    },
    /// A step failed; the message says how (it names the database).
    #[error("step {step} failed: {message}")]
    Step {
        /// The step.
        step: String,
        /// What went wrong.
        message: String,
    },
    /// The run was stopped (Ctrl-C) before it finished.
    #[error("interrupted")]
    Interrupted,
    /// Arrow or Parquet rejected data or a file.
    #[error("{context}: {message}")]
    Format {
        /// What was being done.
        context: String,
        /// The library's message.
        message: String,
    },
}

impl Error {
    /// A [`Error::Config`] for parameter `name`.
    ///
    /// ```
    /// let e = ibench::Error::config("key_size", "must be at least 8, got 4");
    /// assert_eq!(e.to_string(), "invalid key_size: must be at least 8, got 4");
    /// ```
    pub fn config(name: impl Into<String>, message: impl Into<String>) -> Self {
        Error::Config {
            name: name.into(),
            message: message.into(),
        }
    }

    /// A [`Error::Database`] for `target`.
    pub fn database(target: impl Into<String>, message: impl std::fmt::Display) -> Self {
        Self::database_kind(target, message, DbErrorKind::Other)
    }

    /// A failed login to `target`: names the user and, when TLS was asked
    /// for, its mode as the DBMS's own option spells it (`sslmode
    /// verify-full`, `ssl-mode REQUIRED`), since the target names only the
    /// server. `cause` must not hold a password.
    pub fn login(
        target: impl Into<String>,
        user: &str,
        tls_mode: Option<String>,
        cause: impl std::fmt::Display,
    ) -> Self {
        let mode = tls_mode.map(|m| format!(" with {m}")).unwrap_or_default();
        Self::database(target, format!("cannot connect as user {user:?}{mode}: {cause}"))
    }

    /// A [`Error::Database`] of `kind` for `target`.
    pub fn database_kind(target: impl Into<String>, message: impl std::fmt::Display, kind: DbErrorKind) -> Self {
        Error::Database {
            target: target.into(),
            message: message.to_string(),
            kind,
        }
    }

    /// A deadlock or serialization failure of `target`: worth running again.
    pub fn retryable(target: impl Into<String>, message: impl std::fmt::Display) -> Self {
        Self::database_kind(target, message, DbErrorKind::Retryable)
    }

    /// The database error's kind, if this is one.
    pub fn db_kind(&self) -> Option<DbErrorKind> {
        match self {
            Error::Database { kind, .. } => Some(*kind),
            _ => None,
        }
    }

    /// True for deadlocks and serialization failures.
    pub fn is_retryable(&self) -> bool {
        self.db_kind() == Some(DbErrorKind::Retryable)
    }

    /// True when the user lacks a privilege the statement needs.
    pub fn is_privilege(&self) -> bool {
        self.db_kind() == Some(DbErrorKind::Privilege)
    }

    /// True when a unique key already held the value written.
    pub fn is_duplicate_key(&self) -> bool {
        self.db_kind() == Some(DbErrorKind::DuplicateKey)
    }

    /// True when the statement was cancelled on request.
    pub fn is_canceled(&self) -> bool {
        self.db_kind() == Some(DbErrorKind::Canceled)
    }

    /// A [`Error::Format`] while doing `context`.
    pub fn format(context: impl Into<String>, message: impl std::fmt::Display) -> Self {
        Error::Format {
            context: context.into(),
            message: message.to_string(),
        }
    }
}
