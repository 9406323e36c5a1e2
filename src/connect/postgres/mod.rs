//! `postgres://user:pass@host:port/db?sslmode=disable` (or the key=value
//! form `host=... user=... dbname=...`) — PostgreSQL through the `postgres`
//! crate, with what the DSN leaves unset resolved as libpq does
//! (`options.rs`: a service, the environment, libpq's defaults) and TLS as
//! `sslmode` asks (`tls.rs`); `dial.rs` opens connections.
//!
//! The table has BIGINT (BIGSERIAL caching 1000 values with server keys)
//! primary key, TIMESTAMP and VARCHAR(4000); the three indexes are CREATE
//! INDEX. `session.rs` runs the benchmark's statements, prepared (binary
//! parameters) or as text, through the sessions' own client (`wire.rs`);
//! `maintain.rs` the wait step; `kv.rs` the key/value steps; `stats.rs`
//! reads the server's counters; `error.rs` maps its errors.

mod dial;
mod error;
mod kv;
mod maintain;
mod options;
mod session;
mod stats;
mod sysbench;
mod tls;
mod wire;

use super::sql::{Dialect, SessionSql};
use super::{Connector, KvSession, ServerCounters, Session, SessionSpec, Sizes};
use crate::error::Result;
use crate::metrics::Setting;
use dial::Dial;
use error::pg_err;
use postgres::config::Host;
use postgres::Client;
use session::PostgresSession;
use std::path::PathBuf;
use std::sync::OnceLock;

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

impl PostgresConnector {
    /// Parses `dsn` (URL or key=value form) and checks that the server answers.
    pub fn new(dsn: &str) -> Result<Self> {
        Self::with_password(dsn, None)
    }

    /// As [`PostgresConnector::new`], with a password given apart from the
    /// DSN (a password file), used when the DSN has none.
    pub fn with_password(dsn: &str, password: Option<&str>) -> Result<Self> {
        let password = password.map(super::dsn::Password::new);
        let resolved = options::resolve(dsn, password.as_ref())?;
        let connector = PostgresConnector {
            dial: Dial::new(&resolved)?,
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
            sb: Default::default(),
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
    fn sb_session(&self) -> Result<Box<dyn crate::connect::SbSession>> {
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
    fn configuration(&self) -> Result<Vec<Setting>> {
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
                Setting::server(name, value, source)
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
