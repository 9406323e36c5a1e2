//! TLS for PostgreSQL with rustls, as libpq's `sslmode` asks:
//! `disable` (plain), `prefer` (TLS when the server offers it, unverified),
//! `require` (TLS, unverified; verified like `verify-ca` when a root
//! certificate is given, as libpq does), `verify-ca` (the server's chain
//! against `sslrootcert`), `verify-full` (that and the host name).

use crate::connect::tls::{client_config, Check, Identity};
use crate::error::{Error, Result};
use rustls::ClientConfig;
use std::path::Path;
use std::sync::Arc;
use tokio_postgres_rustls::MakeRustlsConnect;

/// libpq's `sslmode` values.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
pub(crate) enum SslMode {
    /// Plain connections: ibench's default, so a run measures the database
    /// and not the encryption unless asked (libpq's default is `prefer`).
    #[default]
    Disable,
    Prefer,
    Require,
    VerifyCa,
    VerifyFull,
}

impl SslMode {
    pub(crate) fn parse(text: &str) -> Result<SslMode> {
        Ok(match text {
            "disable" => SslMode::Disable,
            "allow" | "prefer" => SslMode::Prefer,
            "require" => SslMode::Require,
            "verify-ca" => SslMode::VerifyCa,
            "verify-full" => SslMode::VerifyFull,
            other => {
                return Err(Error::config(
                    "db",
                    format!("sslmode {other:?}: expected disable, prefer, require, verify-ca or verify-full"),
                ))
            }
        })
    }

    /// libpq's name for it.
    pub(crate) fn name(self) -> &'static str {
        match self {
            SslMode::Disable => "disable",
            SslMode::Prefer => "prefer",
            SslMode::Require => "require",
            SslMode::VerifyCa => "verify-ca",
            SslMode::VerifyFull => "verify-full",
        }
    }

    /// What tokio-postgres is told (it verifies nothing itself).
    pub(crate) fn driver(self) -> postgres::config::SslMode {
        match self {
            SslMode::Disable => postgres::config::SslMode::Disable,
            SslMode::Prefer => postgres::config::SslMode::Prefer,
            _ => postgres::config::SslMode::Require,
        }
    }
}

/// The TLS connector for `mode` (None for `disable`), for the driver and
/// for the sessions' own client; `root` is `sslrootcert` (or libpq's
/// default `~/.postgresql/root.crt`), which `verify-ca` and `verify-full`
/// need; `identity` the client certificate (`sslcert`/`sslkey`).
pub(crate) fn connector(
    mode: SslMode,
    root: Option<&Path>,
    identity: Option<&Identity>,
) -> Result<Option<(MakeRustlsConnect, Arc<ClientConfig>)>> {
    let check = match mode {
        SslMode::Disable => return Ok(None),
        // As libpq: prefer checks nothing, even given a root.
        SslMode::Prefer => {
            return Ok(Some(for_both(client_config(
                Check::Encrypt,
                None,
                "sslrootcert",
                identity,
            )?)))
        }
        SslMode::Require => Check::Encrypt,
        SslMode::VerifyCa => Check::Chain,
        SslMode::VerifyFull => Check::Full,
    };
    if root.is_none() && check != Check::Encrypt {
        return Err(Error::config(
            "db",
            "sslmode verify-ca and verify-full need sslrootcert=PATH (the certificate authority to trust)",
        ));
    }
    Ok(Some(for_both(client_config(check, root, "sslrootcert", identity)?)))
}

/// The one configuration, for the driver and for the sessions' own client.
fn for_both(config: Arc<ClientConfig>) -> (MakeRustlsConnect, Arc<ClientConfig>) {
    (MakeRustlsConnect::new((*config).clone()), config)
}
