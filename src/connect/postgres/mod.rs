//! `postgres://user:pass@host:port/db?sslmode=disable` (or the key=value
//! form `host=... user=... dbname=...`) — PostgreSQL through the `postgres`
//! crate, with what the DSN leaves unset resolved as libpq does
//! (`options.rs`: a service, the environment, libpq's defaults) and TLS as
//! `sslmode` asks (`tls.rs`).
//!
//! The table has BIGINT (BIGSERIAL caching 1000 values with server keys)
//! primary key, TIMESTAMP and VARCHAR(4000); the three indexes are CREATE
//! INDEX. `session.rs` runs the benchmark's statements, prepared (binary
//! parameters) or as text; `maintain.rs` the wait step; `kv.rs` the
//! key/value steps.

mod kv;
mod maintain;
mod options;
mod session;
mod stats;
mod tls;
mod wire;

use super::sql::{Dialect, SessionSql};
use super::{Connector, KvSession, ServerCounters, Session, SessionSpec, Sizes};
use crate::error::{DbErrorKind, Error, Result};
use postgres::config::Host;
use postgres::error::SqlState;
use postgres::{Client, Config, NoTls};
use session::PostgresSession;
use std::path::PathBuf;
use std::sync::OnceLock;

/// Connect timeout when none is given: an unreachable server is reported
/// within seconds.
/// How to open a connection: the driver's settings and the TLS connector
/// (None: plain). Sessions keep one to open more (the reference's parallel
/// VACUUMs) and to cancel statements over the same kind of connection.
#[derive(Clone)]
pub(super) struct Dial {
    pub(super) config: Config,
    tls: Option<tokio_postgres_rustls::MakeRustlsConnect>,
    /// The same TLS settings for the sessions' own client, and whether
    /// TLS is required (every sslmode but prefer).
    wire_tls: Option<(std::sync::Arc<rustls::ClientConfig>, bool)>,
    /// The sslmode in effect (disable over a Unix socket), named by connect errors.
    sslmode: tls::SslMode,
    pub(super) target: String,
}

impl Dial {
    /// A new connection; errors name the user and the cause.
    pub(super) fn connect(&self) -> Result<Client> {
        let connected = match &self.tls {
            Some(tls) => self.config.connect(tls.clone()),
            None => self.config.connect(NoTls),
        };
        connected.map_err(|e| self.connect_error(e))
    }

    /// A connection of the sessions' own synchronous client ([`wire`]).
    pub(super) fn wire(&self) -> Result<wire::Wire> {
        let tls = self.wire_tls.as_ref().map(|(c, required)| (c, *required));
        wire::Wire::connect(&self.config, tls).map_err(|e| self.login_error(e.to_string()))
    }

    /// Why the driver's connection failed, naming the user and the cause.
    fn connect_error(&self, e: postgres::Error) -> Error {
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
        self.login_error(cause)
    }

    /// A failed login, naming the user and the sslmode when TLS was asked
    /// for; `cause` with the password masked.
    fn login_error(&self, cause: String) -> Error {
        let config = &self.config;
        let user = config.get_user().unwrap_or("");
        // A server may echo what it was sent; never the password.
        let cause = match config.get_password().map(String::from_utf8_lossy) {
            Some(p) if !p.is_empty() => cause.replace(p.as_ref(), "***"),
            _ => cause,
        };
        let mode = (self.sslmode != tls::SslMode::Disable).then(|| format!("sslmode {}", self.sslmode.name()));
        Error::login(&self.target, user, mode, cause)
    }

    /// Cancels the statement `token`'s connection runs.
    pub(super) fn cancel(&self, token: &postgres::CancelToken) {
        let _ = match &self.tls {
            Some(tls) => token.cancel_query(tls.clone()),
            None => token.cancel_query(NoTls),
        };
    }
}

/// The PostgreSQL connector.
pub struct PostgresConnector {
    dial: Dial,
    /// Where the password came from (dsn, PGPASSWORD, pgpass, ...).
    password_source: &'static str,
    sslmode: tls::SslMode,
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

/// As [`pg_err`], for the sessions' own client.
pub(super) fn wire_err(target: &str, what: &str, e: wire::WireError) -> Error {
    // SQLSTATEs: deadlock_detected, serialization_failure, insufficient_privilege, query_canceled.
    let kind = match e.code.as_deref() {
        Some("40P01" | "40001") => DbErrorKind::Retryable,
        Some("42501") => DbErrorKind::Privilege,
        Some("57014") => DbErrorKind::Canceled,
        _ => DbErrorKind::Other,
    };
    Error::database_kind(target, format!("{what}: {e}"), kind)
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
        Self::with_password(dsn, None)
    }

    /// As [`PostgresConnector::new`], with a password given apart from the
    /// DSN (a password file), used when the DSN has none.
    pub fn with_password(dsn: &str, password: Option<&str>) -> Result<Self> {
        let resolved = options::resolve(dsn, password)?;
        let mut config = resolved.config;
        // PostgreSQL does no TLS over a Unix socket: libpq then connects in
        // plain text whatever sslmode says (the run records tls none).
        let sslmode = if options::only_sockets(&config) {
            tls::SslMode::Disable
        } else {
            resolved.sslmode
        };
        config.ssl_mode(sslmode.driver());
        let (tls, wire_tls) =
            match tls::connector(sslmode, resolved.sslrootcert.as_deref(), resolved.identity.as_ref())? {
                Some((driver, own)) => (Some(driver), Some((own, sslmode != tls::SslMode::Prefer))),
                None => (None, None),
            };
        // A name of this connector's own, so a step's end can tell when its
        // sessions are gone (and their statistics flushed).
        static CONNECTORS: std::sync::atomic::AtomicU32 = std::sync::atomic::AtomicU32::new(0);
        let n = CONNECTORS.fetch_add(1, std::sync::atomic::Ordering::Relaxed);
        if config.get_application_name().is_none() {
            config.application_name(&format!("ibench {}.{n}", std::process::id()));
        }
        let target = describe(&config);
        let connector = PostgresConnector {
            dial: Dial {
                config,
                tls,
                wire_tls,
                sslmode,
                target,
            },
            password_source: resolved.password_source,
            sslmode: resolved.sslmode,
            data_dir: OnceLock::new(),
            spec: SessionSpec::default(),
        };
        // Connect once now: an unreachable server or a bad login fails before any work.
        connector.connect()?;
        Ok(connector)
    }

    fn connect(&self) -> Result<Client> {
        self.dial.connect()
    }

    fn open_session(&self) -> Result<PostgresSession> {
        Ok(PostgresSession {
            client: self.dial.wire()?,
            dial: self.dial.clone(),
            target: self.dial.target.clone(),
            sql: SessionSql::new(Dialect::Postgres),
            spec: self.spec,
            statements: Default::default(),
            writes: Default::default(),
            next_key: None,
            reference_queries: None,
        })
    }
}

impl Connector for PostgresConnector {
    fn dbms(&self) -> &'static str {
        "postgres"
    }
    fn target(&self) -> String {
        self.dial.target.clone()
    }
    fn version(&self) -> Result<String> {
        let mut c = self.connect()?;
        let row = c
            .query_one("SHOW server_version", &[])
            .map_err(|e| pg_err(&self.dial.target, "version", e))?;
        Ok(row.get(0))
    }
    fn settings(&self) -> Vec<(String, String)> {
        // What the server says of this connection: whether TLS is on, its
        // version and cipher, and whether it came over TCP or a Unix socket.
        let mut conn = self.connect().ok();
        let transport = conn
            .as_mut()
            .and_then(|c| {
                c.query_one(
                    "SELECT COALESCE(host(client_addr), '') FROM pg_stat_activity WHERE pid = pg_backend_pid()",
                    &[],
                )
                .ok()
            })
            .map(|r| match r.get::<_, String>(0) {
                addr if addr.is_empty() => "unix socket".to_string(),
                addr => format!("tcp {addr}"),
            })
            .unwrap_or_else(|| "unknown".into());
        let tls = conn
            .and_then(|mut c| {
                c.query_opt(
                    "SELECT ssl, COALESCE(version, ''), COALESCE(cipher, '') FROM pg_stat_ssl WHERE pid = pg_backend_pid()",
                    &[],
                )
                .ok()
                .flatten()
            })
            .map(|r| match r.get::<_, bool>(0) {
                true => format!("{} {}", r.get::<_, String>(1), r.get::<_, String>(2)),
                false => "none".into(),
            })
            .unwrap_or_else(|| "unknown".into());
        vec![
            ("tls".into(), tls),
            ("sslmode".into(), self.sslmode.name().into()),
            ("transport".into(), transport),
            ("password_source".into(), self.password_source.into()),
        ]
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
    fn counters(&self, tables: &[String]) -> Result<Option<Box<dyn ServerCounters>>> {
        let sessions = self.dial.config.get_application_name().unwrap_or("ibench").to_string();
        let stats = stats::PostgresStats::new(self.connect()?, self.dial.target.clone(), sessions, tables)?;
        Ok(Some(Box::new(stats)))
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
            .map_err(|e| pg_err(&self.dial.target, "pg_settings", e))?;
        Ok(rows
            .iter()
            .map(|r| {
                let (setting, unit): (String, String) = (r.get(1), r.get(2));
                let value = if unit.is_empty() {
                    setting
                } else {
                    format!("{setting} {unit}")
                };
                let name: String = r.get(0);
                // The connection's own name differs per run by design: not configuration.
                let source = if name == "application_name" {
                    "sampled".to_string()
                } else {
                    format!("pg_settings: {}", r.get::<_, String>(3))
                };
                (name, value, source)
            })
            .collect())
    }
    fn server_processes(&self) -> Vec<&'static str> {
        let local = self.dial.config.get_hosts().iter().all(|h| match h {
            Host::Tcp(name) => super::is_local(name),
            Host::Unix(_) => true,
        });
        if local {
            vec!["postgres"]
        } else {
            Vec::new()
        }
    }
    fn over_network(&self) -> bool {
        true
    }
    fn server_pid(&self) -> Option<i32> {
        // This connection's backend is a child of the postmaster.
        let mut c = self.connect().ok()?;
        let backend: i32 = c.query_one("SELECT pg_backend_pid()", &[]).ok()?.get(0);
        crate::metrics::parent_named(backend, &self.server_processes())
    }
}
