//! What a MySQL/MariaDB DSN leaves to the client's conventions, resolved as
//! the `mysql` client does: `ssl-mode` and `ssl-ca`, the `[client]` group
//! of an option file (`defaults-file=PATH` in the DSN, else `~/.my.cnf`),
//! and the password from the DSN, a password file ibench was given, the
//! option file or `MYSQL_PWD`, in that order.

use crate::connect::tls::{client_config, Check};
use crate::error::{Error, Result};
use rustls::ClientConfig;
use std::path::{Path, PathBuf};
use std::sync::Arc;

/// The `mysql` client's `--ssl-mode`.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
pub(crate) enum SslMode {
    /// Plain connections: ibench's default, so a run measures the database
    /// and not the encryption unless asked (the client's is PREFERRED).
    #[default]
    Disabled,
    Preferred,
    Required,
    VerifyCa,
    VerifyIdentity,
}

impl SslMode {
    pub(crate) fn parse(text: &str) -> Result<SslMode> {
        Ok(match text.to_ascii_uppercase().replace('-', "_").as_str() {
            "DISABLED" => SslMode::Disabled,
            "PREFERRED" => SslMode::Preferred,
            "REQUIRED" => SslMode::Required,
            "VERIFY_CA" => SslMode::VerifyCa,
            "VERIFY_IDENTITY" => SslMode::VerifyIdentity,
            _ => {
                return Err(Error::config(
                    "db",
                    format!("ssl-mode {text:?}: expected DISABLED, PREFERRED, REQUIRED, VERIFY_CA or VERIFY_IDENTITY"),
                ))
            }
        })
    }

    /// Its name, as the client spells it.
    pub(crate) fn name(self) -> &'static str {
        match self {
            SslMode::Disabled => "DISABLED",
            SslMode::Preferred => "PREFERRED",
            SslMode::Required => "REQUIRED",
            SslMode::VerifyCa => "VERIFY_CA",
            SslMode::VerifyIdentity => "VERIFY_IDENTITY",
        }
    }

    /// The sessions' own client's TLS for this mode, and whether it is
    /// required (None: plain). As the driver's options below.
    pub(crate) fn rustls(self, ca: Option<&Path>) -> Result<Option<(Arc<ClientConfig>, bool)>> {
        let (check, ca) = match self {
            SslMode::Disabled => return Ok(None),
            SslMode::Preferred => (Check::Encrypt, None),
            SslMode::Required => (Check::Encrypt, ca),
            SslMode::VerifyCa => (Check::Chain, ca),
            SslMode::VerifyIdentity => (Check::Full, ca),
        };
        Ok(Some((client_config(check, ca, "ssl-ca")?, self != SslMode::Preferred)))
    }

    /// The driver's TLS options for this mode (None: plain).
    pub(crate) fn ssl_opts(self, ca: Option<&Path>) -> Result<Option<mysql::SslOpts>> {
        let verify_chain = match (self, ca) {
            (SslMode::Disabled, _) => return Ok(None),
            (SslMode::VerifyCa | SslMode::VerifyIdentity, None) => {
                return Err(Error::config(
                    "db",
                    "ssl-mode VERIFY_CA and VERIFY_IDENTITY need ssl-ca=PATH (the certificate authority to trust)",
                ))
            }
            // As the client does: a CA given to REQUIRED is checked.
            (SslMode::Preferred, _) | (SslMode::Required, None) => false,
            _ => true,
        };
        if let Some(ca) = ca.filter(|_| verify_chain) {
            if !ca.is_file() {
                return Err(Error::config("db", format!("ssl-ca {}: no such file", ca.display())));
            }
        }
        Ok(Some(
            mysql::SslOpts::default()
                .with_root_cert_path(ca.filter(|_| verify_chain).map(|p| p.to_path_buf()))
                .with_danger_accept_invalid_certs(!verify_chain)
                .with_danger_skip_domain_validation(self != SslMode::VerifyIdentity),
        ))
    }
}

/// The `[client]` settings of an option file (`[client-mariadb]` and
/// `[mariadb-client]` too): key → value, keys with `_` as `-`, quotes removed.
pub(crate) fn option_file(path: &Path) -> Result<Vec<(String, String)>> {
    let text = std::fs::read_to_string(path)
        .map_err(|e| Error::config("db", format!("defaults-file {}: {e}", path.display())))?;
    Ok(crate::connect::dsn::ini(&text)
        .into_iter()
        .filter(|(group, _, _)| {
            ["client", "client-mariadb", "mariadb-client"].contains(&group.to_ascii_lowercase().as_str())
        })
        .map(|(_, key, value)| {
            let unquoted = value
                .strip_prefix('"')
                .and_then(|v| v.strip_suffix('"'))
                .or_else(|| value.strip_prefix('\'').and_then(|v| v.strip_suffix('\'')))
                .unwrap_or(&value);
            (key.replace('_', "-").to_ascii_lowercase(), unquoted.to_string())
        })
        .collect())
}

/// The option file to read: the DSN's `defaults-file`, else `~/.my.cnf` when it exists.
pub(crate) fn option_file_path(given: Option<&str>) -> Option<PathBuf> {
    match given {
        Some(p) => Some(PathBuf::from(p)),
        None => std::env::var_os("HOME")
            .map(|h| PathBuf::from(h).join(".my.cnf"))
            .filter(|p| p.is_file()),
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn option_files_give_the_client_group() {
        let dir = tempfile::tempdir().unwrap();
        let f = dir.path().join("my.cnf");
        std::fs::write(
            &f,
            "[mysqld]\npassword=server\n[client]\nuser = bob\npassword=\"s3 cret\"\nssl_mode=REQUIRED\n[mysql]\npassword=other\n",
        )
        .unwrap();
        let o = option_file(&f).unwrap();
        assert_eq!(
            o,
            [
                ("user".to_string(), "bob".to_string()),
                ("password".into(), "s3 cret".into()),
                ("ssl-mode".into(), "REQUIRED".into())
            ]
        );
        let e = option_file(&dir.path().join("nope")).unwrap_err().to_string();
        assert!(e.contains("defaults-file"), "{e}");
    }

    #[test]
    fn ssl_modes_parse_and_verification_needs_a_ca() {
        assert_eq!(SslMode::parse("verify-identity").unwrap(), SslMode::VerifyIdentity);
        assert!(SslMode::parse("sometimes")
            .unwrap_err()
            .to_string()
            .contains("ssl-mode"));
        assert!(SslMode::VerifyCa.ssl_opts(None).is_err());
        assert!(SslMode::Disabled.ssl_opts(None).unwrap().is_none());
        let required = SslMode::Required.ssl_opts(None).unwrap().unwrap();
        assert!(required.accept_invalid_certs());
    }
}
