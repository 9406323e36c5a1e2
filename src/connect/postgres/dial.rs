//! How a PostgreSQL connection is opened: the driver's settings and TLS
//! for the driver's connections (the counters, settings, sizes, the
//! reference's parallel VACUUMs) and the sessions' own client, and the
//! errors that name the user and the sslmode when a login fails.

use super::options::{self, Resolved};
use super::{tls, wire};
use crate::error::{Error, Result};
use postgres::config::Host;
use postgres::{Client, Config, NoTls};

/// The target as recorded: `postgres://user@host:port/db`, no password.
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

/// How to open a connection: the driver's settings and the TLS connector
/// (None: plain). Sessions keep one to open more (the reference's parallel
/// VACUUMs) and to cancel statements over the same kind of connection.
#[derive(Clone)]
pub(crate) struct Dial {
    pub(super) config: Config,
    pub(super) tls: Option<tokio_postgres_rustls::MakeRustlsConnect>,
    /// The same TLS settings for the sessions' own client, and whether
    /// TLS is required (every sslmode but prefer).
    pub(super) wire_tls: Option<(std::sync::Arc<rustls::ClientConfig>, bool)>,
    /// The sslmode in effect (disable over a Unix socket), named by connect errors.
    pub(super) sslmode: tls::SslMode,
    pub(super) target: String,
}

impl Dial {
    /// How to reach the server `resolved` names, over TLS as its sslmode
    /// asks with its root and client certificate; the connections carry a
    /// name of this connector's own unless the DSN names them.
    pub(super) fn new(resolved: &Resolved) -> Result<Dial> {
        let mut config = resolved.config.clone();
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
        Ok(Dial {
            config,
            tls,
            wire_tls,
            sslmode,
            target,
        })
    }

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
