//! `postgres://user:pass@host:port/db?sslmode=disable` (or the key=value
//! form `host=... user=... dbname=...`) — PostgreSQL through the `postgres`
//! crate, without TLS.
//!
//! The table has BIGINT (BIGSERIAL caching 1000 values with server keys)
//! primary key, TIMESTAMP and VARCHAR(4000); the three indexes are CREATE
//! INDEX. `session.rs` runs the benchmark's statements, prepared (binary
//! parameters) or as text; `maintain.rs` the wait step; `kv.rs` the
//! key/value steps.

mod kv;
mod maintain;
mod session;

use super::sql::{Dialect, SessionSql};
use super::{Connector, KvSession, Session, SessionSpec, Sizes};
use crate::error::{DbErrorKind, Error, Result};
use postgres::config::Host;
use postgres::error::SqlState;
use postgres::{Client, Config, NoTls};
use session::PostgresSession;
use std::collections::HashMap;
use std::path::PathBuf;
use std::str::FromStr;
use std::sync::OnceLock;
use std::time::Duration;

/// Connect timeout: an unreachable server is reported within seconds.
const CONNECT_TIMEOUT: Duration = Duration::from_secs(5);

/// The PostgreSQL connector.
pub struct PostgresConnector {
    config: Config,
    target: String,
    /// `data_directory`, read once (superusers and pg_read_all_settings only).
    data_dir: OnceLock<Option<PathBuf>>,
    spec: SessionSpec,
}

fn describe(config: &Config) -> String {
    let host = config
        .get_hosts()
        .first()
        .map(|h| match h {
            Host::Tcp(name) => name.clone(),
            Host::Unix(path) => path.display().to_string(),
        })
        .unwrap_or_else(|| "localhost".into());
    let port = config.get_ports().first().copied().unwrap_or(5432);
    let user = config.get_user().unwrap_or("");
    let db = config.get_dbname().unwrap_or(user);
    format!("postgres://{user}@{host}:{port}/{db}")
}

/// Maps a server error to its kind: deadlocks and serialization failures
/// are retryable, 42501 a missing privilege, 57014 a cancelled statement.
pub(super) fn pg_err(target: &str, what: &str, e: postgres::Error) -> Error {
    let kind = match e.code() {
        Some(c) if *c == SqlState::T_R_DEADLOCK_DETECTED || *c == SqlState::T_R_SERIALIZATION_FAILURE => {
            DbErrorKind::Retryable
        }
        Some(c) if *c == SqlState::INSUFFICIENT_PRIVILEGE => DbErrorKind::Privilege,
        Some(c) if *c == SqlState::QUERY_CANCELED => DbErrorKind::Canceled,
        _ => DbErrorKind::Other,
    };
    let message = match e.as_db_error() {
        Some(db) => format!("{what}: {} ({})", db.message(), db.code().code()),
        None => format!("{what}: {e}"),
    };
    Error::database_kind(target, message, kind)
}

/// Runs a privileged maintenance statement: a missing privilege is a note
/// of what was skipped, not a failure.
pub(super) fn privileged(what: &str, result: Result<()>, notes: &mut Vec<String>) -> Result<()> {
    match result {
        Err(e) if e.is_privilege() => {
            notes.push(format!("{what} skipped: {e}"));
            Ok(())
        }
        other => other,
    }
}

impl PostgresConnector {
    /// Parses `dsn` (URL or key=value form) and checks that the server answers.
    pub fn new(dsn: &str) -> Result<Self> {
        let mut config = Config::from_str(dsn)
            .map_err(|e| Error::config("db", format!("{:?} is not a PostgreSQL DSN: {e}", super::redact(dsn))))?;
        config.connect_timeout(CONNECT_TIMEOUT).application_name("ibench");
        let connector = PostgresConnector {
            target: describe(&config),
            config,
            data_dir: OnceLock::new(),
            spec: SessionSpec::default(),
        };
        // Connect once now: an unreachable server or a bad login fails before any work.
        connector.connect()?;
        Ok(connector)
    }

    fn connect(&self) -> Result<Client> {
        connect(&self.config, &self.target)
    }

    fn open_session(&self) -> Result<PostgresSession> {
        Ok(PostgresSession {
            client: self.connect()?,
            config: self.config.clone(),
            target: self.target.clone(),
            sql: SessionSql::new(Dialect::Postgres),
            spec: self.spec,
            statements: HashMap::new(),
            inserts: (String::new(), HashMap::new()),
            next_key: None,
            reference_queries: None,
        })
    }
}

/// A new connection with `config`; errors name the user and the cause.
pub(super) fn connect(config: &Config, target: &str) -> Result<Client> {
    config.connect(NoTls).map_err(|e| {
        let user = config.get_user().unwrap_or("");
        let cause = match e.as_db_error() {
            Some(db) => format!("{} ({})", db.message(), db.code().code()),
            None => {
                let mut text = e.to_string();
                let mut source = std::error::Error::source(&e);
                while let Some(s) = source {
                    text = format!("{text}: {s}");
                    source = s.source();
                }
                text
            }
        };
        Error::database(target, format!("cannot connect as user {user:?}: {cause}"))
    })
}

impl Connector for PostgresConnector {
    fn dbms(&self) -> &'static str {
        "postgres"
    }
    fn target(&self) -> String {
        self.target.clone()
    }
    fn version(&self) -> Result<String> {
        let mut c = self.connect()?;
        let row = c
            .query_one("SHOW server_version", &[])
            .map_err(|e| pg_err(&self.target, "version", e))?;
        Ok(row.get(0))
    }
    fn settings(&self) -> Vec<(String, String)> {
        vec![("tls".into(), "none".into())]
    }
    fn session(&self) -> Result<Box<dyn Session>> {
        Ok(Box::new(self.open_session()?))
    }
    fn set_spec(&mut self, spec: SessionSpec) {
        self.spec = spec;
    }
    fn kv_session(&self) -> Result<Box<dyn KvSession>> {
        Ok(Box::new(self.open_session()?))
    }
    fn sizes(&self, tables: &[String]) -> Sizes {
        let Ok(mut c) = self.connect() else {
            return Sizes::default();
        };
        let database = c
            .query_one("SELECT pg_database_size(current_database())", &[])
            .ok()
            .map(|r| r.get::<_, i64>(0) as u64);
        // Every relation of the tables: heap, indexes, TOAST, free-space and visibility maps.
        let tables = c
            .query_one(
                "SELECT COALESCE(SUM(pg_total_relation_size(c.oid)), 0)::BIGINT FROM pg_class c
                 WHERE c.relkind = 'r' AND c.relname = ANY($1) AND pg_table_is_visible(c.oid)",
                &[&tables],
            )
            .ok()
            .map(|r| r.get::<_, i64>(0) as u64);
        let datadir = self.data_path().and_then(|p| super::files_size(&p));
        Sizes {
            database,
            tables,
            datadir,
            note: None,
        }
    }
    fn data_path(&self) -> Option<PathBuf> {
        if self.server_processes().is_empty() {
            return None;
        }
        self.data_dir
            .get_or_init(|| {
                let mut c = self.connect().ok()?;
                let row = c.query_one("SHOW data_directory", &[]).ok()?;
                Some(PathBuf::from(row.get::<_, String>(0)))
            })
            .clone()
    }
    fn configuration(&self) -> Result<Vec<(String, String, String)>> {
        let mut c = self.connect()?;
        let rows = c
            .query(
                "SELECT name, setting, COALESCE(unit, ''), source FROM pg_settings ORDER BY name",
                &[],
            )
            .map_err(|e| pg_err(&self.target, "pg_settings", e))?;
        Ok(rows
            .iter()
            .map(|r| {
                let (setting, unit): (String, String) = (r.get(1), r.get(2));
                let value = if unit.is_empty() {
                    setting
                } else {
                    format!("{setting} {unit}")
                };
                (r.get(0), value, format!("pg_settings: {}", r.get::<_, String>(3)))
            })
            .collect())
    }
    fn server_processes(&self) -> Vec<&'static str> {
        let local = self.config.get_hosts().iter().all(|h| match h {
            Host::Tcp(name) => super::is_local(name),
            Host::Unix(_) => true,
        });
        if local {
            vec!["postgres"]
        } else {
            Vec::new()
        }
    }
}
