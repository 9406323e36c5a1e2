//! TLS with rustls for the SQL servers' clients, as their verification
//! modes ask: nothing checked (encrypted, the server unauthenticated), the
//! certificate chain against a given root, or the chain and the host name.
//! PostgreSQL's `sslmode` and MySQL's `ssl-mode` map onto [`Check`].

use crate::error::{Error, Result};
use rustls::client::danger::{HandshakeSignatureValid, ServerCertVerified, ServerCertVerifier};
use rustls::client::WebPkiServerVerifier;
use rustls::crypto::{verify_tls12_signature, verify_tls13_signature, CryptoProvider};
use rustls::pki_types::pem::PemObject;
use rustls::pki_types::{CertificateDer, PrivateKeyDer, ServerName, UnixTime};
use rustls::sign::{CertifiedKey, SingleCertAndKey};
use rustls::{CertificateError, ClientConfig, DigitallySignedStruct, RootCertStore, SignatureScheme};
use std::net::IpAddr;
use std::path::{Path, PathBuf};
use std::sync::Arc;
use x509_cert::der::asn1::{Ia5String, PrintableString};
use x509_cert::der::oid::{AssociatedOid, ObjectIdentifier};
use x509_cert::der::Decode;
use x509_cert::ext::pkix::name::GeneralName;
use x509_cert::ext::pkix::SubjectAltName;
use x509_cert::Certificate;

/// The subject attribute `commonName` (RFC 4519).
const COMMON_NAME: ObjectIdentifier = ObjectIdentifier::new_unwrap("2.5.4.3");

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

/// The certificates of a PEM file, named `param` in errors.
fn certificates(path: &Path, param: &str) -> Result<Vec<CertificateDer<'static>>> {
    let bad = |why: String| Error::config("db", format!("{param} {}: {why}", path.display()));
    let certs: Vec<CertificateDer<'static>> = CertificateDer::pem_file_iter(path)
        .map_err(|e| bad(e.to_string()))?
        .collect::<std::result::Result<_, _>>()
        .map_err(|e| bad(e.to_string()))?;
    if certs.is_empty() {
        return Err(bad("no certificate in it".into()));
    }
    Ok(certs)
}

/// The certificates of a root file (`sslrootcert`, `ssl-ca`), as a store
/// and as given.
fn roots(path: &Path, param: &str) -> Result<(RootCertStore, Vec<CertificateDer<'static>>)> {
    let bad = |why: String| Error::config("db", format!("{param} {}: {why}", path.display()));
    let certs = certificates(path, param)?;
    let mut store = RootCertStore::empty();
    for c in &certs {
        store.add(c.clone()).map_err(|e| bad(e.to_string()))?;
    }
    Ok((store, certs))
}

/// The server's certificate checked as libpq and the mysql clients check
/// it: nothing without a root; with one, the chain (webpki's, or the
/// certificate is itself one of the trusted roots, as a self-signed server
/// certificate made by PostgreSQL's own recipe is: webpki refuses a CA
/// certificate as an end entity) and, for [`Check::Full`], the host name
/// (the subjectAltName's names, else the subject's common name, which
/// webpki does not read). Handshake signatures are checked either way.
#[derive(Debug)]
struct Verifier {
    chain: Option<Arc<WebPkiServerVerifier>>,
    /// The root file's certificates, as given.
    roots: Vec<CertificateDer<'static>>,
    names: bool,
    provider: Arc<CryptoProvider>,
}

impl ServerCertVerifier for Verifier {
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
        let name_error = match chain.verify_server_cert(end_entity, intermediates, server_name, ocsp, now) {
            Ok(v) => return Ok(v),
            // The chain holds; webpki read the subjectAltName only.
            Err(
                e @ rustls::Error::InvalidCertificate(
                    CertificateError::NotValidForName | CertificateError::NotValidForNameContext { .. },
                ),
            ) => e,
            Err(_) if self.roots.iter().any(|r| r.as_ref() == end_entity.as_ref()) => {
                within_validity(end_entity, now)?;
                rustls::Error::InvalidCertificate(CertificateError::NotValidForName)
            }
            Err(e) => return Err(e),
        };
        if !self.names || names_of(end_entity).is_some_and(|n| n.valid_for(server_name)) {
            return Ok(ServerCertVerified::assertion());
        }
        Err(match name_error {
            rustls::Error::InvalidCertificate(CertificateError::NotValidForName) => {
                rustls::Error::InvalidCertificate(CertificateError::NotValidForNameContext {
                    expected: server_name.to_owned(),
                    presented: names_of(end_entity).map(|n| n.presented()).unwrap_or_default(),
                })
            }
            other => other,
        })
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

/// A trusted self-signed certificate still has to be in its validity period.
fn within_validity(cert: &CertificateDer<'_>, now: UnixTime) -> std::result::Result<(), rustls::Error> {
    let bad = || rustls::Error::InvalidCertificate(CertificateError::BadEncoding);
    let parsed = Certificate::from_der(cert.as_ref()).map_err(|_| bad())?;
    let validity = &parsed.tbs_certificate.validity;
    let now = now.as_secs();
    if now < validity.not_before.to_unix_duration().as_secs() {
        return Err(rustls::Error::InvalidCertificate(CertificateError::NotValidYet));
    }
    if now > validity.not_after.to_unix_duration().as_secs() {
        return Err(rustls::Error::InvalidCertificate(CertificateError::Expired));
    }
    Ok(())
}

/// The names a server certificate is valid for.
#[derive(Debug, Default, PartialEq)]
struct CertNames {
    dns: Vec<String>,
    ips: Vec<IpAddr>,
    common_name: Option<String>,
}

/// `cert`'s subjectAltName DNS names and IP addresses and its subject's
/// common name (None: not a certificate).
fn names_of(cert: &CertificateDer<'_>) -> Option<CertNames> {
    let parsed = Certificate::from_der(cert.as_ref()).ok()?;
    let tbs = &parsed.tbs_certificate;
    let mut names = CertNames::default();
    let san = tbs
        .extensions
        .iter()
        .flatten()
        .find(|e| e.extn_id == SubjectAltName::OID);
    if let Some(san) = san {
        let SubjectAltName(general) = SubjectAltName::from_der(san.extn_value.as_bytes()).ok()?;
        for name in general {
            match name {
                GeneralName::DnsName(d) => names.dns.push(d.to_string()),
                GeneralName::IpAddress(ip) => match ip.as_bytes().len() {
                    4 => names.ips.push(IpAddr::from(<[u8; 4]>::try_from(ip.as_bytes()).ok()?)),
                    16 => names.ips.push(IpAddr::from(<[u8; 16]>::try_from(ip.as_bytes()).ok()?)),
                    _ => {}
                },
                _ => {}
            }
        }
    }
    names.common_name = tbs
        .subject
        .0
        .iter()
        .flat_map(|rdn| rdn.0.iter())
        .filter(|atv| atv.oid == COMMON_NAME)
        .find_map(|atv| {
            atv.value
                .decode_as::<String>()
                .ok()
                .or_else(|| atv.value.decode_as::<PrintableString>().ok().map(|p| p.to_string()))
                .or_else(|| atv.value.decode_as::<Ia5String>().ok().map(|p| p.to_string()))
        });
    Some(names)
}

impl CertNames {
    /// Whether `server` is one of the names: as libpq does, the
    /// subjectAltName's when it has any, else the common name; a `*` is
    /// a whole leftmost label.
    fn valid_for(&self, server: &ServerName<'_>) -> bool {
        let has_san = !self.dns.is_empty() || !self.ips.is_empty();
        match server {
            ServerName::IpAddress(ip) => {
                let ip = IpAddr::from(*ip);
                if has_san {
                    self.ips.contains(&ip)
                } else {
                    self.common_name.as_deref() == Some(ip.to_string().as_str())
                }
            }
            ServerName::DnsName(host) => {
                let host = host.as_ref();
                if has_san {
                    self.dns.iter().any(|d| dns_matches(d, host))
                } else {
                    self.common_name.as_deref().is_some_and(|cn| dns_matches(cn, host))
                }
            }
            _ => false,
        }
    }

    fn presented(&self) -> Vec<String> {
        let mut out: Vec<String> = self.dns.iter().map(|d| format!("DnsName({d:?})")).collect();
        out.extend(self.ips.iter().map(|ip| format!("IpAddress({ip})")));
        if out.is_empty() {
            out.extend(self.common_name.iter().map(|cn| format!("CommonName({cn:?})")));
        }
        out
    }
}

/// A certificate's name `pattern` against `host`, case-insensitively; a
/// leading `*.` stands for exactly one label.
fn dns_matches(pattern: &str, host: &str) -> bool {
    let (pattern, host) = (pattern.trim_end_matches('.'), host.trim_end_matches('.'));
    match pattern.strip_prefix("*.") {
        Some(rest) => host
            .split_once('.')
            .is_some_and(|(label, tail)| !label.is_empty() && tail.eq_ignore_ascii_case(rest)),
        None => pattern.eq_ignore_ascii_case(host),
    }
}

/// A client certificate and its private key (PEM files), for servers that
/// ask for one (PostgreSQL's `cert` authentication, MySQL's `REQUIRE X509`):
/// `sslcert`/`sslkey`, `ssl-cert`/`ssl-key`, named so in errors.
#[derive(Clone, Debug, PartialEq, Eq)]
pub(crate) struct Identity {
    pub cert: PathBuf,
    pub key: PathBuf,
    pub params: (&'static str, &'static str),
}

impl Identity {
    /// The certificate chain and the key, read.
    fn load(&self) -> Result<(Vec<CertificateDer<'static>>, PrivateKeyDer<'static>)> {
        let (cert_param, key_param) = self.params;
        let certs = certificates(&self.cert, cert_param)?;
        let key = PrivateKeyDer::from_pem_file(&self.key)
            .map_err(|e| Error::config("db", format!("{key_param} {}: {e}", self.key.display())))?;
        Ok((certs, key))
    }
}

/// The rustls configuration for `check`; `root` is the certificate
/// authority to trust (named `param` in errors: `sslrootcert`, `ssl-ca`),
/// which [`Check::Chain`] and [`Check::Full`] need.
pub(crate) fn client_config(
    check: Check,
    root: Option<&Path>,
    param: &str,
    identity: Option<&Identity>,
) -> Result<Arc<ClientConfig>> {
    let provider = provider();
    let builder = ClientConfig::builder_with_provider(provider.clone())
        .with_safe_default_protocol_versions()
        .map_err(|e| Error::config("db", format!("TLS: {e}")))?;
    let root = match (check, root) {
        (Check::Chain | Check::Full, None) => {
            return Err(Error::config(
                "db",
                format!("verifying the server's certificate needs {param}=PATH (the certificate authority to trust)"),
            ))
        }
        (_, root) => root,
    };
    let (chain, roots) = match root {
        Some(root) => {
            let (store, certs) = roots(root, param)?;
            let chain = WebPkiServerVerifier::builder_with_provider(Arc::new(store), provider.clone())
                .build()
                .map_err(|e| Error::config("db", format!("{param} {}: {e}", root.display())))?;
            (Some(chain), certs)
        }
        None => (None, Vec::new()),
    };
    let verifier = Verifier {
        chain,
        roots,
        names: check == Check::Full,
        provider: provider.clone(),
    };
    let builder = builder.dangerous().with_custom_certificate_verifier(Arc::new(verifier));
    let config = match identity {
        Some(id) => {
            // Not with_client_auth_cert: its check of the certificate
            // refuses an X.509 v1 one, which `openssl x509 -req` makes by
            // default (PostgreSQL's own recipe for a client certificate).
            let (certs, key) = id.load()?;
            let signer = provider
                .key_provider
                .load_private_key(key)
                .map_err(|e| Error::config("db", format!("{} {}: {e}", id.params.1, id.key.display())))?;
            builder.with_client_cert_resolver(Arc::new(SingleCertAndKey::from(CertifiedKey::new(certs, signer))))
        }
        None => builder.with_no_client_auth(),
    };
    Ok(Arc::new(config))
}

#[cfg(test)]
mod tests {
    use super::*;

    fn name(host: &str) -> ServerName<'static> {
        ServerName::try_from(host.to_string()).unwrap()
    }

    #[test]
    fn names_match_as_libpq_matches_them() {
        assert!(dns_matches("*.example.com", "db.example.com"));
        assert!(dns_matches("DB.Example.com.", "db.example.COM"));
        assert!(!dns_matches("*.example.com", "a.db.example.com"));
        assert!(!dns_matches("*.example.com", "example.com"));
        assert!(!dns_matches("db.example.com", "db2.example.com"));

        let cn_only = CertNames {
            common_name: Some("localhost".into()),
            ..CertNames::default()
        };
        assert!(cn_only.valid_for(&name("localhost")));
        assert!(!cn_only.valid_for(&name("127.0.0.1")));
        assert_eq!(cn_only.presented(), ["CommonName(\"localhost\")"]);
        // With a subjectAltName, the common name is not read.
        let san = CertNames {
            dns: vec!["db.example.com".into()],
            ips: vec!["127.0.0.1".parse().unwrap()],
            common_name: Some("localhost".into()),
        };
        assert!(san.valid_for(&name("db.example.com")));
        assert!(san.valid_for(&name("127.0.0.1")));
        assert!(!san.valid_for(&name("localhost")));
        assert!(!san.valid_for(&name("::1")));
    }
}
