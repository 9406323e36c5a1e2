//! TLS for PostgreSQL with rustls, as libpq's `sslmode` asks:
//! `disable` (plain), `prefer` (TLS when the server offers it, unverified),
//! `require` (TLS, unverified; verified like `verify-ca` when a root
//! certificate is given, as libpq does), `verify-ca` (the server's chain
//! against `sslrootcert`), `verify-full` (that and the host name).

use crate::error::{Error, Result};
use rustls::client::danger::{HandshakeSignatureValid, ServerCertVerified, ServerCertVerifier};
use rustls::client::WebPkiServerVerifier;
use rustls::crypto::{verify_tls12_signature, verify_tls13_signature, CryptoProvider};
use rustls::pki_types::pem::PemObject;
use rustls::pki_types::{CertificateDer, ServerName, UnixTime};
use rustls::{CertificateError, ClientConfig, DigitallySignedStruct, RootCertStore, SignatureScheme};
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

fn provider() -> Arc<CryptoProvider> {
    Arc::new(rustls::crypto::ring::default_provider())
}

/// The certificates of a PEM file (`sslrootcert`).
fn roots(path: &Path) -> Result<RootCertStore> {
    let bad = |why: String| Error::config("db", format!("sslrootcert {}: {why}", path.display()));
    let certs: Vec<CertificateDer<'static>> = CertificateDer::pem_file_iter(path)
        .map_err(|e| bad(e.to_string()))?
        .collect::<std::result::Result<_, _>>()
        .map_err(|e| bad(e.to_string()))?;
    if certs.is_empty() {
        return Err(bad("no certificate in it".into()));
    }
    let mut store = RootCertStore::empty();
    for c in certs {
        store.add(c).map_err(|e| bad(e.to_string()))?;
    }
    Ok(store)
}

/// What libpq checks short of `verify-full`: with a root (`verify-ca`, and
/// `require` given `sslrootcert`) the chain but not the host name; without
/// one (`prefer`, `require`) nothing, so the connection is encrypted and the
/// server unauthenticated. Handshake signatures are checked either way.
#[derive(Debug)]
struct Relaxed {
    chain: Option<Arc<WebPkiServerVerifier>>,
    provider: Arc<CryptoProvider>,
}

impl ServerCertVerifier for Relaxed {
    fn verify_server_cert(
        &self,
        end_entity: &CertificateDer<'_>,
        intermediates: &[CertificateDer<'_>],
        server_name: &ServerName<'_>,
        ocsp: &[u8],
        now: UnixTime,
    ) -> std::result::Result<ServerCertVerified, rustls::Error> {
        let Some(chain) = &self.chain else {
            return Ok(ServerCertVerified::assertion());
        };
        match chain.verify_server_cert(end_entity, intermediates, server_name, ocsp, now) {
            Err(rustls::Error::InvalidCertificate(
                CertificateError::NotValidForName | CertificateError::NotValidForNameContext { .. },
            )) => Ok(ServerCertVerified::assertion()),
            other => other,
        }
    }
    fn verify_tls12_signature(
        &self,
        message: &[u8],
        cert: &CertificateDer<'_>,
        dss: &DigitallySignedStruct,
    ) -> std::result::Result<HandshakeSignatureValid, rustls::Error> {
        verify_tls12_signature(message, cert, dss, &self.provider.signature_verification_algorithms)
    }
    fn verify_tls13_signature(
        &self,
        message: &[u8],
        cert: &CertificateDer<'_>,
        dss: &DigitallySignedStruct,
    ) -> std::result::Result<HandshakeSignatureValid, rustls::Error> {
        verify_tls13_signature(message, cert, dss, &self.provider.signature_verification_algorithms)
    }
    fn supported_verify_schemes(&self) -> Vec<SignatureScheme> {
        self.provider.signature_verification_algorithms.supported_schemes()
    }
}

/// The TLS connector for `mode` (None for `disable`), for the driver and
/// for the sessions' own client; `root` is `sslrootcert`, which
/// `verify-ca` and `verify-full` need.
pub(crate) fn connector(mode: SslMode, root: Option<&Path>) -> Result<Option<(MakeRustlsConnect, Arc<ClientConfig>)>> {
    let provider = provider();
    let builder = ClientConfig::builder_with_provider(provider.clone())
        .with_safe_default_protocol_versions()
        .map_err(|e| Error::config("db", format!("TLS: {e}")))?;
    let verified = |root: &Path| -> Result<Arc<WebPkiServerVerifier>> {
        WebPkiServerVerifier::builder_with_provider(Arc::new(roots(root)?), provider.clone())
            .build()
            .map_err(|e| Error::config("db", format!("sslrootcert {}: {e}", root.display())))
    };
    let relaxed = |chain| {
        let verifier = Relaxed {
            chain,
            provider: provider.clone(),
        };
        builder
            .clone()
            .dangerous()
            .with_custom_certificate_verifier(Arc::new(verifier))
            .with_no_client_auth()
    };
    let config = match (mode, root) {
        (SslMode::Disable, _) => return Ok(None),
        (SslMode::VerifyFull, Some(root)) => builder.with_webpki_verifier(verified(root)?).with_no_client_auth(),
        (SslMode::VerifyCa | SslMode::Require, Some(root)) => relaxed(Some(verified(root)?)),
        (SslMode::VerifyCa | SslMode::VerifyFull, None) => {
            return Err(Error::config(
                "db",
                "sslmode verify-ca and verify-full need sslrootcert=PATH (the certificate authority to trust)",
            ))
        }
        (SslMode::Prefer, _) | (SslMode::Require, None) => relaxed(None),
    };
    Ok(Some((MakeRustlsConnect::new(config.clone()), Arc::new(config))))
}
