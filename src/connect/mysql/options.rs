//! A MySQL/MariaDB DSN's options, parsed without I/O ([`MysqlOptions`]),
//! and what the DSN leaves to the client's conventions, resolved as the
//! `mysql` client does: `ssl-mode` and `ssl-ca`, the option files' settings
//! (option_files.rs), `MYSQL_HOST`, `MYSQL_TCP_PORT` and `MYSQL_UNIX_PORT`,
//! and the password from the DSN, a password file ibench was given, the
//! option files or `MYSQL_PWD`, in that order.

use super::option_files::{self, FileOption};
use super::wire;
use crate::connect::dsn::{self, DsnText, Password};
use crate::connect::sql::Engine;
use crate::connect::tls::{client_config, Check, Identity};
use crate::error::{Error, Result};
use mysql::{Opts, OptsBuilder};
use rustls::ClientConfig;
use std::path::{Path, PathBuf};
use std::str::FromStr;
use std::sync::Arc;
use std::time::Duration;

/// The options of a `mysql://user:pass@host:port/db?...` DSN: ibench's own
/// and the client's taken out, the rest left for the driver.
#[derive(Clone, Debug)]
pub(crate) struct MysqlOptions {
    /// The DSN as the driver takes it: its own options only, encoded again.
    pub(super) driver: DsnText,
    pub(super) engine: Engine,
    /// `socket=PATH`: the Unix socket instead of host and port.
    pub(super) socket: Option<String>,
    /// Table options of CREATE TABLE (`engine_options=ROW_FORMAT=...`).
    pub(super) engine_options: String,
    /// `ssl-mode`, `ssl-ca`, `ssl-cert`, `ssl-key`, as the DSN gives them.
    pub(super) tls: TlsOptions,
    /// `defaults-file` (the only option file read) and
    /// `defaults-extra-file` (read after the global ones).
    pub(super) files: (Option<PathBuf>, Option<PathBuf>),
    /// The DSN gave the driver `prefer_socket`: it may pick the socket.
    pub(super) prefer_socket: bool,
}

/// The TLS options of a DSN or an option file: the client's `ssl-mode`,
/// the certificate authority, the client's certificate and key.
#[derive(Clone, Debug, Default)]
pub(crate) struct TlsOptions {
    pub(super) mode: Option<SslMode>,
    pub(super) ca: Option<PathBuf>,
    pub(super) cert: Option<PathBuf>,
    pub(super) key: Option<PathBuf>,
}

impl FromStr for MysqlOptions {
    type Err = Error;

    fn from_str(dsn: &str) -> Result<MysqlOptions> {
        let (base, query) = dsn::split(dsn);
        let mut o = MysqlOptions {
            driver: DsnText::new(base),
            engine: Engine::InnoDb,
            socket: None,
            engine_options: String::new(),
            tls: TlsOptions::default(),
            files: (None, None),
            prefer_socket: false,
        };
        let mut rest = Vec::new();
        for (name, v) in query {
            match name.as_str() {
                // The client's options, spelled with - or _ as in option files.
                "ssl-mode" | "ssl_mode" => o.tls.mode = Some(SslMode::parse(&v)?),
                "ssl-ca" | "ssl_ca" => o.tls.ca = Some(PathBuf::from(v)),
                "ssl-cert" | "ssl_cert" => o.tls.cert = Some(PathBuf::from(v)),
                "ssl-key" | "ssl_key" => o.tls.key = Some(PathBuf::from(v)),
                "defaults-file" | "defaults_file" => o.files.0 = Some(PathBuf::from(v)),
                "defaults-extra-file" | "defaults_extra_file" => o.files.1 = Some(PathBuf::from(v)),
                "engine" => o.engine = engine(dsn, &v)?,
                "socket" => o.socket = Some(v),
                "engine_options" => o.engine_options = v,
                _ => rest.push((name, v)),
            }
        }
        o.prefer_socket = rest.iter().any(|(k, _)| k == "prefer_socket");
        // The driver's own options go back to it, encoded again.
        if !rest.is_empty() {
            let query: String = url::form_urlencoded::Serializer::new(String::new())
                .extend_pairs(&rest)
                .finish();
            o.driver = DsnText::new(format!("{base}?{query}"));
        }
        Ok(o)
    }
}

/// The engine a DSN's `engine=` names.
fn engine(dsn: &str, v: &str) -> Result<Engine> {
    match v.to_ascii_lowercase().as_str() {
        "innodb" => Ok(Engine::InnoDb),
        "rocksdb" | "myrocks" => Ok(Engine::RocksDb),
        _ => Err(bad_dsn(dsn, format!("engine {v:?}: expected innodb or rocksdb"))),
    }
}

/// An error in `dsn`, named with its password hidden.
fn bad_dsn(dsn: &str, why: String) -> Error {
    Error::config("db", format!("{:?}: {why}", crate::connect::redact(dsn)))
}

impl MysqlOptions {
    /// What the option files the DSN names (or the client's defaults) say
    /// beside the DSN, and the TLS settings both give.
    pub(crate) fn client_settings(&self) -> Result<ClientSettings> {
        let file = option_files::read(self.files.0.as_deref(), self.files.1.as_deref())?;
        ClientSettings::resolve(file, &self.tls)
    }
}

/// How long a connection may take to open.
const CONNECT_TIMEOUT: Duration = Duration::from_secs(5);

/// Prepared statements the driver keeps per connection.
const STATEMENT_CACHE: usize = 1024;

/// The driver's options for a DSN, resolved as the client resolves them,
/// and where the password came from.
pub(super) struct Resolved {
    pub(super) opts: Opts,
    pub(super) password_source: &'static str,
}

/// The driver's options: the DSN's, what it leaves out filled in from the
/// option files and the environment, as the client does.
pub(super) fn resolve(
    dsn: &str,
    options: &MysqlOptions,
    client: &ClientSettings,
    password: Option<&Password>,
) -> Result<Resolved> {
    let bad = |why: String| bad_dsn(dsn, why);
    // A DSN without a host (`mysql://root@/test`, `mysql:///test`)
    // connects where the client would: the files' host, else MYSQL_HOST,
    // else localhost (the Unix socket).
    let url = options.driver.expose();
    let url = with_host(url, &client.host()).unwrap_or_else(|| url.to_string());
    let (base, _) = dsn::split(&url);
    let opts = Opts::from_url(&url).map_err(|e| bad(format!("not a MySQL DSN: {e}")))?;
    let explicit_port = url::Url::parse(base).ok().and_then(|u| u.port());
    let port = match explicit_port {
        Some(p) => p,
        None => client.port()?.unwrap_or(3306),
    };
    let mut builder = OptsBuilder::from_opts(opts.clone()).tcp_port(port);
    if opts.get_user().is_none() {
        builder = builder.user(client.get("user"));
    }
    if opts.get_db_name().is_none() {
        builder = builder.db_name(client.get("database"));
    }
    let mut password_source = "dsn";
    if opts.get_pass().is_none() {
        let found = client.password(password);
        password_source = found.as_ref().map_or("none", |f| f.1);
        builder = builder.pass(found.map(|f| f.0.expose().to_string()));
    }
    let socket = socket(options, client, &opts, explicit_port.is_none()).map_err(bad)?;
    // The driver would quietly switch a 127.0.0.1 connection to the Unix
    // socket: the DSN says which transport is measured (socket=PATH, or
    // prefer_socket=true to let the driver choose).
    if !options.prefer_socket {
        builder = builder.prefer_socket(false);
    }
    let ssl = client
        .ssl_mode
        .ssl_opts(client.ssl_ca.as_deref(), client.identity.as_ref())?;
    // Sessions hold their prepared statements; the driver closes the one
    // its cache evicts, so the cache must hold every statement a session
    // prepares (a few dozen at most; the default is 32).
    let opts: Opts = builder
        .ssl_opts(ssl)
        .tcp_connect_timeout(Some(CONNECT_TIMEOUT))
        .socket(socket)
        .stmt_cache_size(STATEMENT_CACHE)
        .into();
    Ok(Resolved { opts, password_source })
}

/// The Unix socket to connect through, if any: the DSN's `socket`, else,
/// as the client, the option files', MYSQL_UNIX_PORT's or the usual path
/// for `localhost`, unless the DSN gives a port (the client would ignore
/// it and reach another server) or TLS is required (ibench encrypts TCP
/// only, and refuses a socket with it).
fn socket(
    options: &MysqlOptions,
    client: &ClientSettings,
    opts: &Opts,
    default_port: bool,
) -> std::result::Result<Option<String>, String> {
    let ssl_mode = client.ssl_mode;
    let socket = options.socket.clone().or_else(|| {
        (opts.get_ip_or_hostname() == "localhost" && default_port && !ssl_mode.required())
            .then(|| client.socket())
            .flatten()
    });
    match (&socket, ssl_mode.required()) {
        (Some(path), true) => Err(format!(
            "ssl-mode {} over the Unix socket {path}: ibench encrypts TCP connections only \
             (connect to the server's address, or use ssl-mode PREFERRED)",
            ssl_mode.name()
        )),
        _ => Ok(socket),
    }
}

/// How the sessions' own client reaches the server the driver's options name.
pub(super) fn dial(opts: &Opts, client: &ClientSettings) -> Result<wire::Dial> {
    Ok(wire::Dial {
        host: opts.get_ip_or_hostname().to_string(),
        port: opts.get_tcp_port(),
        socket: opts.get_socket().map(PathBuf::from),
        user: opts.get_user().unwrap_or("").to_string(),
        password: opts.get_pass().map(Password::new),
        database: opts.get_db_name().map(str::to_string),
        tls: client
            .ssl_mode
            .rustls(client.ssl_ca.as_deref(), client.identity.as_ref())?,
        timeout: CONNECT_TIMEOUT,
        init: opts.get_init(),
    })
}

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
    /// Whether the connection must be encrypted (REQUIRED and the VERIFY modes).
    pub(crate) fn required(self) -> bool {
        !matches!(self, SslMode::Disabled | SslMode::Preferred)
    }

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
    pub(crate) fn rustls(
        self,
        ca: Option<&Path>,
        identity: Option<&Identity>,
    ) -> Result<Option<(Arc<ClientConfig>, bool)>> {
        let (check, ca) = match self {
            SslMode::Disabled => return Ok(None),
            // As the client: a CA given to PREFERRED or REQUIRED is checked.
            SslMode::Preferred | SslMode::Required => (Check::Encrypt, ca),
            SslMode::VerifyCa => (Check::Chain, ca),
            SslMode::VerifyIdentity => (Check::Full, ca),
        };
        Ok(Some((
            client_config(check, ca, "ssl-ca", identity)?,
            self != SslMode::Preferred,
        )))
    }

    /// The driver's TLS options for this mode (None: plain).
    pub(crate) fn ssl_opts(self, ca: Option<&Path>, identity: Option<&Identity>) -> Result<Option<mysql::SslOpts>> {
        let verify_chain = match (self, ca) {
            (SslMode::Disabled, _) => return Ok(None),
            (SslMode::VerifyCa | SslMode::VerifyIdentity, None) => {
                return Err(Error::config(
                    "db",
                    "ssl-mode VERIFY_CA and VERIFY_IDENTITY need ssl-ca=PATH (the certificate authority to trust)",
                ))
            }
            // As the client does: a CA given to PREFERRED or REQUIRED is checked.
            (SslMode::Preferred | SslMode::Required, None) => false,
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
                .with_danger_skip_domain_validation(self != SslMode::VerifyIdentity)
                .with_client_identity(identity.map(|id| mysql::ClientIdentity::new(id.cert.clone(), id.key.clone()))),
        ))
    }
}

/// What the option files and the environment say of a connection, beside
/// what the DSN says: the client's precedence is the DSN, then the files
/// (the last setting of a name wins), then the environment.
pub(crate) struct ClientSettings {
    file: Vec<FileOption>,
    /// The DSN's ssl-mode, else the files' (`ssl-mode`, MariaDB's
    /// `ssl-verify-server-cert` and `ssl`/`skip-ssl`), else VERIFY_CA when a
    /// CA is given (as MySQL's client), else DISABLED.
    pub(crate) ssl_mode: SslMode,
    pub(crate) ssl_ca: Option<PathBuf>,
    /// The client certificate and key (`ssl-cert`, `ssl-key`).
    pub(crate) identity: Option<Identity>,
}

impl ClientSettings {
    /// Resolves the TLS settings of `file` under the DSN's own.
    pub(crate) fn resolve(file: Vec<FileOption>, dsn: &TlsOptions) -> Result<Self> {
        let s = ClientSettings {
            file,
            ssl_mode: SslMode::Disabled,
            ssl_ca: None,
            identity: None,
        };
        let cert = dsn.cert.clone().or_else(|| s.get("ssl-cert").map(PathBuf::from));
        let key = dsn.key.clone().or_else(|| s.get("ssl-key").map(PathBuf::from));
        let identity = match (cert, key) {
            (Some(cert), Some(key)) => Some(Identity {
                cert,
                key,
                params: ("ssl-cert", "ssl-key"),
            }),
            (Some(cert), None) => {
                return Err(Error::config(
                    "db",
                    format!("ssl-cert {} needs its private key: ssl-key=PATH", cert.display()),
                ))
            }
            (None, _) => None,
        };
        let ssl_ca = dsn.ca.clone().or_else(|| s.get("ssl-ca").map(PathBuf::from));
        let ssl_mode = match dsn.mode {
            Some(m) => m,
            None => match (s.get("ssl-mode"), s.flag("ssl-verify-server-cert")?, s.ssl()?) {
                (Some(m), _, _) => SslMode::parse(&m)?,
                (None, Some(true), _) => SslMode::VerifyIdentity,
                (None, _, Some(true)) => SslMode::Required,
                (None, _, Some(false)) => SslMode::Disabled,
                _ if ssl_ca.is_some() => SslMode::VerifyCa,
                _ => SslMode::Disabled,
            },
        };
        Ok(ClientSettings {
            ssl_mode,
            ssl_ca,
            identity,
            ..s
        })
    }

    /// The files' last value of `name` (None when absent or given bare).
    pub(crate) fn get(&self, name: &str) -> Option<String> {
        self.last(name).and_then(|v| v.clone())
    }

    fn last(&self, name: &str) -> Option<&Option<String>> {
        self.file.iter().rev().find(|(k, _)| k == name).map(|(_, v)| v)
    }

    /// A boolean option: bare or 1/on/true is on, 0/off/false is off.
    fn flag(&self, name: &str) -> Result<Option<bool>> {
        self.last(name)
            .map(|v| match v.as_deref().map(str::to_ascii_lowercase).as_deref() {
                None | Some("1" | "on" | "true" | "yes") => Ok(true),
                Some("0" | "off" | "false" | "no") => Ok(false),
                Some(other) => Err(Error::config(
                    "db",
                    format!("option file: {name}={other:?} is not a boolean (expected 1 or 0)"),
                )),
            })
            .transpose()
    }

    /// MariaDB's `ssl` (or `skip-ssl`), whichever the files give last.
    fn ssl(&self) -> Result<Option<bool>> {
        let at = |name: &str| self.file.iter().rposition(|(k, _)| k == name);
        match (at("ssl"), at("skip-ssl")) {
            (Some(a), Some(b)) if b > a => Ok(Some(false)),
            (None, Some(_)) => Ok(Some(false)),
            _ => self.flag("ssl"),
        }
    }

    /// The password when the DSN has none, and where it came from: a
    /// password file ibench was given, the files', else `MYSQL_PWD`.
    pub(crate) fn password(&self, given: Option<&Password>) -> Option<(Password, &'static str)> {
        given
            .map(|p| (p.clone(), "password file"))
            .or_else(|| self.get("password").map(|p| (Password::new(p), "option file")))
            .or_else(|| std::env::var("MYSQL_PWD").ok().map(|p| (Password::new(p), "MYSQL_PWD")))
    }

    /// The host for a DSN that names none: the files', else `MYSQL_HOST`,
    /// else `localhost`, as the client's.
    pub(crate) fn host(&self) -> String {
        self.get("host")
            .or_else(|| std::env::var("MYSQL_HOST").ok())
            .filter(|h| !h.trim().is_empty())
            .unwrap_or_else(|| "localhost".to_string())
    }

    /// The port of the files, else `MYSQL_TCP_PORT`.
    pub(crate) fn port(&self) -> Result<Option<u16>> {
        let (value, from) = match self.get("port") {
            Some(p) => (p, "option file port"),
            None => match std::env::var("MYSQL_TCP_PORT") {
                Ok(p) => (p, "MYSQL_TCP_PORT"),
                Err(_) => return Ok(None),
            },
        };
        value
            .trim()
            .parse()
            .map(Some)
            .map_err(|_| Error::config("db", format!("{from} {value:?} is not a port number")))
    }

    /// The Unix socket for `localhost`: the files', else `MYSQL_UNIX_PORT`,
    /// else the first of the usual paths that exists.
    pub(crate) fn socket(&self) -> Option<String> {
        self.get("socket")
            .or_else(|| std::env::var("MYSQL_UNIX_PORT").ok())
            .or_else(|| {
                [
                    "/run/mysqld/mysqld.sock",
                    "/var/run/mysqld/mysqld.sock",
                    "/tmp/mysql.sock",
                ]
                .into_iter()
                .find(|p| Path::new(p).exists())
                .map(str::to_string)
            })
    }
}

/// `dsn` (`scheme://[user[:password]@][host][:port][/db][?options]`) with
/// `host` put in, when it names no host; None when it names one.
pub(crate) fn with_host(dsn: &str, host: &str) -> Option<String> {
    let (scheme, rest) = dsn.split_once("://")?;
    let end = rest.find(['/', '?', '#']).unwrap_or(rest.len());
    let (authority, tail) = rest.split_at(end);
    let (user, host_port) = match authority.rfind('@') {
        Some(at) => authority.split_at(at + 1),
        None => ("", authority),
    };
    // No host: nothing, or a port alone.
    if !(host_port.is_empty() || host_port.starts_with(':')) {
        return None;
    }
    // An IPv6 address goes in brackets, as in any URL.
    let host = if host.contains(':') && !host.starts_with('[') {
        format!("[{host}]")
    } else {
        host.to_string()
    };
    Some(format!("{scheme}://{user}{host}{host_port}{tail}"))
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_dsn_without_a_host_gets_one_and_a_dsn_with_one_keeps_it() {
        let fill = |dsn| with_host(dsn, "db.example");
        assert_eq!(
            fill("mysql://root@/test").as_deref(),
            Some("mysql://root@db.example/test")
        );
        assert_eq!(fill("mysql:///test").as_deref(), Some("mysql://db.example/test"));
        assert_eq!(fill("mysql://").as_deref(), Some("mysql://db.example"));
        assert_eq!(
            fill("mysql://u:p%40w@:3307/test?engine=rocksdb").as_deref(),
            Some("mysql://u:p%40w@db.example:3307/test?engine=rocksdb")
        );
        assert_eq!(
            with_host("mysql://root@/t", "::1").as_deref(),
            Some("mysql://root@[::1]/t")
        );
        for named in [
            "mysql://root@127.0.0.1/test",
            "mysql://h:3306",
            "mysql://u@[::1]:3306/t",
            "mysql://localhost",
        ] {
            assert_eq!(fill(named), None, "{named}");
        }
    }

    #[test]
    fn ssl_modes_parse_and_verification_needs_a_ca() {
        assert_eq!(SslMode::parse("verify-identity").unwrap(), SslMode::VerifyIdentity);
        assert!(SslMode::parse("sometimes")
            .unwrap_err()
            .to_string()
            .contains("ssl-mode"));
        assert!(SslMode::VerifyCa.ssl_opts(None, None).is_err());
        assert!(SslMode::Disabled.ssl_opts(None, None).unwrap().is_none());
        let required = SslMode::Required.ssl_opts(None, None).unwrap().unwrap();
        assert!(required.accept_invalid_certs());
    }
}
