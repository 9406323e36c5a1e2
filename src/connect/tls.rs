//! TLS with rustls for the SQL servers' clients, as their verification
//! modes ask: nothing checked (encrypted, the server unauthenticated), the
//! certificate chain against a given root, or the chain and the host name.
//! PostgreSQL's `sslmode` and MySQL's `ssl-mode` map onto [`Check`].

use crate::error::{Error, Result};
use rustls::client::danger::{HandshakeSignatureValid, ServerCertVerified, ServerCertVerifier};
use rustls::client::WebPkiServerVerifier;
use rustls::crypto::{verify_tls12_signature, verify_tls13_signature, CryptoProvider};
use rustls::pki_types::pem::PemObject;
use rustls::pki_types::{CertificateDer, ServerName, UnixTime};
use rustls::{CertificateError, ClientConfig, DigitallySignedStruct, RootCertStore, SignatureScheme};
use std::path::Path;
use std::sync::Arc;

/// What a TLS connection checks of the server's certificate.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub(crate) enum Check {
    /// Nothing, unless a root is given: then the chain (libpq's `require`,
    /// MySQL's `REQUIRED`, as their clients do).
    Encrypt,
    /// The chain against the root, not the host name.
    Chain,
    /// The chain and the host name.
    Full,
}

fn provider() -> Arc<CryptoProvider> {
    Arc::new(rustls::crypto::ring::default_provider())
}

/// The certificates of a PEM file (`sslrootcert`, `ssl-ca`).
fn roots(path: &Path, param: &str) -> Result<RootCertStore> {
    let bad = |why: String| Error::config("db", format!("{param} {}: {why}", path.display()));
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

/// What the clients check short of the host name: with a root the chain;
/// without one nothing, so the connection is encrypted and the server
/// unauthenticated. Handshake signatures are checked either way.
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

/// The rustls configuration for `check`; `root` is the certificate
/// authority to trust (named `param` in errors: `sslrootcert`, `ssl-ca`),
/// which [`Check::Chain`] and [`Check::Full`] need.
pub(crate) fn client_config(check: Check, root: Option<&Path>, param: &str) -> Result<Arc<ClientConfig>> {
    let provider = provider();
    let builder = ClientConfig::builder_with_provider(provider.clone())
        .with_safe_default_protocol_versions()
        .map_err(|e| Error::config("db", format!("TLS: {e}")))?;
    let verified = |root: &Path| -> Result<Arc<WebPkiServerVerifier>> {
        WebPkiServerVerifier::builder_with_provider(Arc::new(roots(root, param)?), provider.clone())
            .build()
            .map_err(|e| Error::config("db", format!("{param} {}: {e}", root.display())))
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
    let config = match (check, root) {
        (Check::Full, Some(root)) => builder.with_webpki_verifier(verified(root)?).with_no_client_auth(),
        (Check::Chain | Check::Encrypt, Some(root)) => relaxed(Some(verified(root)?)),
        (Check::Chain | Check::Full, None) => {
            return Err(Error::config(
                "db",
                format!("verifying the server's certificate needs {param}=PATH (the certificate authority to trust)"),
            ))
        }
        (Check::Encrypt, None) => relaxed(None),
    };
    Ok(Arc::new(config))
}
