//! What a PostgreSQL DSN leaves to libpq's conventions, resolved as libpq
//! does, in libpq's order (the DSN, then a service, then the environment,
//! then the defaults):
//! - a `service` from `pg_service.conf` (`service=` or `PGSERVICE`);
//! - the environment: `PGHOST`, `PGPORT`, `PGUSER`, `PGDATABASE`,
//!   `PGAPPNAME`, `PGOPTIONS`, `PGCONNECT_TIMEOUT`, `PGSSLMODE`,
//!   `PGSSLROOTCERT`;
//! - libpq's defaults: the default socket directory as host, the OS user as
//!   user, the user as database; `~/.postgresql/root.crt` as `sslrootcert`
//!   (`sslrootcert=system`: OpenSSL's bundle, and `verify-full`);
//! - `sslmode` (with `verify-ca`/`verify-full`);
//! - the password from the DSN, a password file ibench was given,
//!   `PGPASSWORD` or `~/.pgpass` (`PGPASSFILE`, `passfile=`), in that order.

use super::tls::SslMode;
use crate::connect::dsn::{DsnText, Password};
use crate::connect::ini::{self, Line};
use crate::connect::tls::Identity;
use crate::error::{Error, Result};
use percent_encoding::percent_decode_str;
use postgres::config::Host;
use postgres::Config;
use std::path::{Path, PathBuf};
use std::str::FromStr;
use std::time::Duration;

/// The keys ibench takes out of the DSN before the driver parses it
/// (`connect_timeout`: the driver drops zero, libpq's "no limit").
const OURS: [&str; 7] = [
    "sslmode",
    "sslrootcert",
    "sslcert",
    "sslkey",
    "service",
    "passfile",
    "connect_timeout",
];

/// ibench's connect timeout where the DSN, the service and
/// `PGCONNECT_TIMEOUT` give none (libpq would wait without a limit).
pub(crate) const CONNECT_TIMEOUT: Duration = Duration::from_secs(5);

/// The socket directories libpq builds use by default: Debian's, then
/// upstream's; the first that exists is the default host.
const SOCKET_DIRS: [&str; 2] = ["/var/run/postgresql", "/tmp"];

/// A DSN's connection settings, resolved.
pub(crate) struct Resolved {
    pub config: Config,
    pub sslmode: SslMode,
    pub sslrootcert: Option<PathBuf>,
    /// The client certificate and key (`sslcert`, `sslkey`).
    pub identity: Option<Identity>,
    /// Where the password came from (recorded with the run; never the password).
    pub password_source: &'static str,
}

/// Where environment variables are read: the process's, or a test's own.
type Env<'a> = &'a dyn Fn(&str) -> Option<String>;

/// The process's environment variable `name`.
fn process_env(name: &str) -> Option<String> {
    std::env::var(name).ok()
}

/// libpq's key=value words: `key = value`, values bare or single-quoted;
/// in both a backslash takes the next character as it is (`a\ b` is "a b").
fn key_values(text: &str) -> Option<Vec<(String, String)>> {
    let mut out = Vec::new();
    let mut chars = text.chars().peekable();
    loop {
        while chars.peek().is_some_and(|c| c.is_whitespace()) {
            chars.next();
        }
        if chars.peek().is_none() {
            return Some(out);
        }
        let mut key = String::new();
        while let Some(&c) = chars.peek() {
            if c == '=' || c.is_whitespace() {
                break;
            }
            key.push(c);
            chars.next();
        }
        while chars.peek().is_some_and(|c| c.is_whitespace()) {
            chars.next();
        }
        if chars.next() != Some('=') {
            return None;
        }
        while chars.peek().is_some_and(|c| c.is_whitespace()) {
            chars.next();
        }
        let mut value = String::new();
        if chars.peek() == Some(&'\'') {
            chars.next();
            loop {
                match chars.next()? {
                    '\\' => value.push(chars.next()?),
                    '\'' => break,
                    c => value.push(c),
                }
            }
        } else {
            while let Some(&c) = chars.peek() {
                if c.is_whitespace() {
                    break;
                }
                chars.next();
                match c {
                    // As libpq: a trailing backslash is dropped.
                    '\\' => value.extend(chars.next()),
                    c => value.push(c),
                }
            }
        }
        out.push((key, value));
    }
}

/// `value` quoted for a key=value DSN.
fn quoted(value: &str) -> String {
    format!("'{}'", value.replace('\\', "\\\\").replace('\'', "\\'"))
}

/// `text` percent-decoded, as libpq decodes a URI ('+' stays '+').
fn decoded(text: &str) -> String {
    percent_decode_str(text).decode_utf8_lossy().into_owned()
}

/// Takes ibench's keys out of `dsn`: (the rest, for the driver; ours).
/// A URI's other query parameters pass through as written, so the driver
/// percent-decodes them itself (re-encoding them would turn `%20` into a
/// `+` it does not decode).
fn split(dsn: &str) -> Result<(String, Vec<(String, String)>)> {
    if dsn.contains("://") {
        let (base, query) = dsn.split_once('?').unwrap_or((dsn, ""));
        let mut ours = Vec::new();
        let mut rest = Vec::new();
        for pair in query.split('&').filter(|p| !p.is_empty()) {
            let (k, v) = pair.split_once('=').unwrap_or((pair, ""));
            let key = decoded(k);
            if OURS.contains(&key.as_str()) {
                ours.push((key, decoded(v)));
            } else {
                rest.push(pair);
            }
        }
        let rest = if rest.is_empty() {
            base.to_string()
        } else {
            format!("{base}?{}", rest.join("&"))
        };
        Ok((rest, ours))
    } else {
        let words = key_values(dsn).ok_or_else(|| {
            Error::config(
                "db",
                format!(
                    "{:?} is not a PostgreSQL DSN: expected key=value words",
                    crate::connect::redact(dsn)
                ),
            )
        })?;
        let (ours, rest): (Vec<_>, Vec<_>) = words.into_iter().partition(|(k, _)| OURS.contains(&k.as_str()));
        let text: Vec<String> = rest.iter().map(|(k, v)| format!("{k}={}", quoted(v))).collect();
        Ok((text.join(" "), ours))
    }
}

/// The byte range of a URI's host list when it names hosts and no port:
/// the driver would give each 5432, where libpq takes the service's port
/// or `PGPORT` first.
fn uri_hosts_without_port(uri: &str) -> Option<std::ops::Range<usize>> {
    let start = uri.find("://")? + 3;
    let end = uri[start..].find(['/', '?']).map_or(uri.len(), |e| start + e);
    let start = uri[start..end].rfind('@').map_or(start, |at| start + at + 1);
    let hosts = &uri[start..end];
    let has_port = |h: &str| match h.strip_prefix('[') {
        Some(v6) => v6.contains("]:"),
        None => h.contains(':'),
    };
    (!hosts.is_empty() && !hosts.split(',').any(has_port)).then_some(start..end)
}

/// `uri` with `ports` (a libpq port list) given to its hosts.
fn uri_with_ports(uri: &str, hosts: std::ops::Range<usize>, ports: &str) -> String {
    let ports: Vec<&str> = ports.split(',').map(str::trim).collect();
    let with: Vec<String> = uri[hosts.clone()]
        .split(',')
        .enumerate()
        .map(|(i, h)| format!("{h}:{}", ports.get(i).unwrap_or(&ports[0])))
        .collect();
    format!("{}{}{}", &uri[..hosts.start], with.join(","), &uri[hosts.end..])
}

/// Sets `config`'s hosts from a libpq host list (`a,/run/pg,b`).
fn set_hosts(config: &mut Config, list: &str) {
    for h in list.split(',') {
        config.host(h.trim());
    }
}

/// Sets `config`'s ports from a libpq port list; `from` names it in errors.
fn set_ports(config: &mut Config, list: &str, from: &str) -> Result<()> {
    for p in list.split(',') {
        let port = p
            .trim()
            .parse()
            .map_err(|_| Error::config("db", format!("{from} {p:?} is not a port")))?;
        config.port(port);
    }
    Ok(())
}

/// libpq's `connect_timeout` in seconds; zero or less is no limit (None).
fn timeout(text: &str, from: &str) -> Result<Option<Duration>> {
    let secs: i64 = text
        .trim()
        .parse()
        .map_err(|_| Error::config("db", format!("{from} {text:?} is not a number of seconds")))?;
    Ok((secs > 0).then(|| Duration::from_secs(secs as u64)))
}

/// The settings of `service` in the first service file that has it:
/// `PGSERVICEFILE` (or `~/.pg_service.conf`), then
/// `$PGSYSCONFDIR/pg_service.conf` (or Debian's `/etc/postgresql-common`).
fn service(name: &str, env: Env) -> Result<Vec<(String, String)>> {
    let user_file = env("PGSERVICEFILE")
        .map(PathBuf::from)
        .or_else(|| env("HOME").map(|h| Path::new(&h).join(".pg_service.conf")));
    let system = env("PGSYSCONFDIR")
        .map(PathBuf::from)
        .unwrap_or_else(|| PathBuf::from("/etc/postgresql-common"))
        .join("pg_service.conf");
    for file in user_file.into_iter().chain([system]) {
        let Ok(text) = std::fs::read_to_string(&file) else {
            continue;
        };
        let found = service_settings(&text, name);
        if !found.is_empty() {
            return Ok(found);
        }
    }
    Err(Error::config(
        "db",
        format!(
            "service {name:?} is in no service file (PGSERVICEFILE, ~/.pg_service.conf, PGSYSCONFDIR/pg_service.conf)"
        ),
    ))
}

/// The `key=value` lines of `service`'s group in a service file's `text`
/// (a key without `=` has an empty value).
fn service_settings(text: &str, service: &str) -> Vec<(String, String)> {
    let mut group = None;
    let mut found = Vec::new();
    for (_, line) in ini::lines(text, ini::Dialect::default()) {
        match line {
            Line::Group(name) => group = Some(name),
            Line::Entry(key, value) if group == Some(service) => {
                found.push((key.to_string(), value.unwrap_or("").to_string()))
            }
            _ => {}
        }
    }
    found
}

/// A `.pgpass` line's fields, split at unescaped `:` and de-escaped, each
/// with whether it is a wildcard: a bare `*` (`\*` is a literal star).
fn pgpass_fields(line: &str) -> Vec<(String, bool)> {
    let mut fields = Vec::new();
    let (mut field, mut escaped) = (String::new(), false);
    let mut chars = line.chars();
    while let Some(c) = chars.next() {
        match c {
            '\\' => {
                if let Some(n) = chars.next() {
                    field.push(n);
                    escaped = true;
                }
            }
            ':' => {
                let wildcard = field == "*" && !escaped;
                fields.push((std::mem::take(&mut field), wildcard));
                escaped = false;
            }
            c => field.push(c),
        }
    }
    let wildcard = field == "*" && !escaped;
    fields.push((field, wildcard));
    fields
}

/// The password `.pgpass` gives (host, port, database, user), as libpq
/// reads it: the first matching line; the password ends at an unescaped
/// `:`. A file others can read is ignored, with libpq's warning.
pub(crate) fn pgpass(file: &Path, host: &str, port: u16, db: &str, user: &str) -> Option<String> {
    use std::os::unix::fs::PermissionsExt;
    let meta = std::fs::metadata(file).ok()?;
    if meta.permissions().mode() & 0o077 != 0 {
        // libpq's words: otherwise the login just fails, with no hint why.
        eprintln!(
            "WARNING: password file \"{}\" has group or world access; permissions should be u=rw (0600) or less",
            file.display()
        );
        return None;
    }
    let text = std::fs::read_to_string(file).ok()?;
    let port = port.to_string();
    text.lines()
        .filter(|l| !l.trim_start().starts_with('#'))
        .map(pgpass_fields)
        .filter(|f| f.len() >= 5)
        .find(|f| {
            let matches = |(field, wildcard): &(String, bool), value: &str| *wildcard || field == value;
            matches(&f[0], host) && matches(&f[1], &port) && matches(&f[2], db) && matches(&f[3], user)
        })
        .map(|f| f[4].0.clone())
}

/// The default socket directory, libpq's default host.
fn default_socket_dir() -> &'static str {
    SOCKET_DIRS
        .into_iter()
        .find(|d| Path::new(d).is_dir())
        .unwrap_or(SOCKET_DIRS[1])
}

/// The host `.pgpass` lines are matched against, as libpq: the first host;
/// the default socket directory is `localhost` (another directory only its
/// path); with no host, the first `hostaddr`.
fn pgpass_host(config: &Config) -> String {
    match (config.get_hosts().first(), config.get_hostaddrs().first()) {
        (Some(Host::Tcp(h)), _) => h.clone(),
        (Some(Host::Unix(p)), _) if p.as_path() != Path::new(default_socket_dir()) => p.display().to_string(),
        (None, Some(addr)) => addr.to_string(),
        _ => "localhost".into(),
    }
}

/// Whether every host is a Unix socket directory: PostgreSQL does no TLS
/// there, so libpq connects in plain text whatever `sslmode` says.
pub(crate) fn only_sockets(config: &Config) -> bool {
    config.get_hostaddrs().is_empty()
        && !config.get_hosts().is_empty()
        && config.get_hosts().iter().all(|h| matches!(h, Host::Unix(_)))
}

/// Whether `config` has a password worth sending: libpq takes an empty
/// one as none and looks further.
fn has_password(config: &Config) -> bool {
    config.get_password().is_some_and(|p| !p.is_empty())
}

/// Sets on `config` what a service gives and the DSN did not.
fn apply_service(config: &mut Config, settings: &[(String, String)], ours: &mut Vec<(String, String)>) -> Result<()> {
    for (k, v) in settings {
        match k.as_str() {
            "host" if config.get_hosts().is_empty() && config.get_hostaddrs().is_empty() => set_hosts(config, v),
            "port" if config.get_ports().is_empty() => set_ports(config, v, "service port")?,
            "user" if config.get_user().is_none() => {
                config.user(v);
            }
            "dbname" if config.get_dbname().is_none() => {
                config.dbname(v);
            }
            "password" if !has_password(config) => {
                config.password(v);
            }
            "application_name" if config.get_application_name().is_none() => {
                config.application_name(v);
            }
            "options" if config.get_options().is_none() => {
                config.options(v);
            }
            "sslmode" | "sslrootcert" | "sslcert" | "sslkey" | "passfile" | "connect_timeout"
                if !ours.iter().any(|(o, _)| o == k) =>
            {
                if k == "connect_timeout" {
                    timeout(v, "service connect_timeout")?;
                }
                ours.push((k.clone(), v.clone()));
            }
            _ => {}
        }
    }
    Ok(())
}

/// Sets on `config` what libpq's environment variables give and neither
/// the DSN nor the service did.
fn apply_env(config: &mut Config, ours: &mut Vec<(String, String)>, env: Env) -> Result<()> {
    if config.get_hosts().is_empty() && config.get_hostaddrs().is_empty() {
        if let Some(hosts) = env("PGHOST") {
            set_hosts(config, &hosts);
        }
    }
    if config.get_ports().is_empty() {
        if let Some(ports) = env("PGPORT") {
            set_ports(config, &ports, "PGPORT")?;
        }
    }
    if let (None, Some(user)) = (config.get_user(), env("PGUSER")) {
        config.user(&user);
    }
    if let (None, Some(db)) = (config.get_dbname(), env("PGDATABASE")) {
        config.dbname(&db);
    }
    if let (None, Some(name)) = (config.get_application_name(), env("PGAPPNAME")) {
        config.application_name(&name);
    }
    if let (None, Some(options)) = (config.get_options(), env("PGOPTIONS")) {
        config.options(&options);
    }
    if let (false, Some(t)) = (
        ours.iter().any(|(o, _)| o == "connect_timeout"),
        env("PGCONNECT_TIMEOUT"),
    ) {
        timeout(&t, "PGCONNECT_TIMEOUT")?;
        ours.push(("connect_timeout".into(), t));
    }
    for (key, var) in [
        ("sslmode", "PGSSLMODE"),
        ("sslrootcert", "PGSSLROOTCERT"),
        ("sslcert", "PGSSLCERT"),
        ("sslkey", "PGSSLKEY"),
    ] {
        if let (false, Some(v)) = (ours.iter().any(|(o, _)| o == key), env(var)) {
            ours.push((key.into(), v));
        }
    }
    Ok(())
}

/// The OS user ibench runs as (libpq's default user): the effective
/// user's name from the password database, else `$USER`.
fn os_user() -> Option<String> {
    let mut buf = vec![0 as libc::c_char; 16384];
    // SAFETY: passwd is plain data that getpwuid_r fills; its strings point into buf, which outlives them.
    let name = unsafe {
        let mut pwd: libc::passwd = std::mem::zeroed();
        let mut found = std::ptr::null_mut();
        let rc = libc::getpwuid_r(libc::geteuid(), &mut pwd, buf.as_mut_ptr(), buf.len(), &mut found);
        (rc == 0 && !found.is_null() && !pwd.pw_name.is_null())
            .then(|| std::ffi::CStr::from_ptr(pwd.pw_name).to_string_lossy().into_owned())
    };
    name.or_else(|| process_env("USER").filter(|u| !u.is_empty()))
}

/// libpq's defaults for what is still unset: the default socket directory
/// as host, the OS user as user, and the user as database. Set here, so
/// the probe connection, the sessions' own client, `.pgpass` and the
/// recorded target all see the same.
fn apply_defaults(config: &mut Config) {
    if config.get_hosts().is_empty() && config.get_hostaddrs().is_empty() {
        config.host_path(default_socket_dir());
    }
    if config.get_user().is_none() {
        if let Some(user) = os_user() {
            config.user(&user);
        }
    }
    if config.get_dbname().is_none() {
        if let Some(user) = config.get_user().map(String::from) {
            config.dbname(&user);
        }
    }
}

/// The root certificate: `sslrootcert` as given, else libpq's default
/// `~/.postgresql/root.crt`, which `verify-ca` and `verify-full` need and
/// `require` uses when it exists (then verifying the chain, as libpq).
fn root_cert(given: Option<String>, sslmode: SslMode, tls: bool, env: Env) -> Result<Option<PathBuf>> {
    if let Some(path) = given {
        return Ok(Some(PathBuf::from(path)));
    }
    let Some(default) = env("HOME").map(|h| Path::new(&h).join(".postgresql/root.crt")) else {
        return Ok(None);
    };
    match sslmode {
        SslMode::VerifyCa | SslMode::VerifyFull if tls && !default.exists() => Err(Error::config(
            "db",
            format!(
                "root certificate file \"{}\" does not exist: give sslrootcert=PATH (the certificate authority to trust), \
                 or sslmode=require to check no certificate",
                default.display()
            ),
        )),
        SslMode::VerifyCa | SslMode::VerifyFull | SslMode::Require if default.exists() => Ok(Some(default)),
        _ => Ok(None),
    }
}

/// `sslrootcert=system`: the certificate bundle OpenSSL trusts, as libpq
/// loads it: `SSL_CERT_FILE`, else the distribution's bundle
/// (`/etc/ssl/certs/ca-certificates.crt` on Debian).
fn system_roots(env: Env) -> Result<PathBuf> {
    let (file, from) = match env("SSL_CERT_FILE") {
        Some(f) => (Some(PathBuf::from(f)), "SSL_CERT_FILE"),
        None => (openssl_probe::probe().cert_file, "the system's certificate bundle"),
    };
    match file {
        Some(f) if f.is_file() => Ok(f),
        Some(f) => Err(Error::config(
            "db",
            format!("sslrootcert=system: {from} \"{}\" is not a file", f.display()),
        )),
        None => Err(Error::config(
            "db",
            "sslrootcert=system: no certificate bundle found on this system (set SSL_CERT_FILE to one)",
        )),
    }
}

/// The client certificate, as libpq finds it: `sslcert` and `sslkey` as
/// given, else `~/.postgresql/postgresql.crt` and `postgresql.key` when
/// they exist. A certificate without a key is an error naming it.
fn client_identity(cert: Option<String>, key: Option<String>, env: Env) -> Result<Option<Identity>> {
    let default = |name: &str| {
        env("HOME")
            .map(|h| Path::new(&h).join(".postgresql").join(name))
            .filter(|p| p.exists())
    };
    let cert = cert.map(PathBuf::from).or_else(|| default("postgresql.crt"));
    let key = key.map(PathBuf::from).or_else(|| default("postgresql.key"));
    match (cert, key) {
        (Some(cert), Some(key)) => Ok(Some(Identity {
            cert,
            key,
            params: ("sslcert", "sslkey"),
        })),
        (Some(cert), None) => Err(Error::config(
            "db",
            format!("sslcert {} needs its private key: sslkey=PATH", cert.display()),
        )),
        (None, _) => Ok(None),
    }
}

/// A PostgreSQL DSN (URL or key=value form), parsed without I/O: ibench's
/// keys ([`OURS`]) taken out, the rest left for the driver.
#[derive(Clone, Debug)]
pub(crate) struct PgDsn {
    /// The DSN less ibench's keys, as the driver parses it.
    driver: DsnText,
    /// ibench's keys as given, in order.
    ours: Vec<(String, String)>,
}

impl FromStr for PgDsn {
    type Err = Error;

    fn from_str(dsn: &str) -> Result<PgDsn> {
        let (driver, ours) = split(dsn)?;
        Ok(PgDsn {
            driver: DsnText::new(driver),
            ours,
        })
    }
}

/// The value of ibench's key `k`, as given.
fn get(ours: &[(String, String)], k: &str) -> Option<String> {
    ours.iter().find(|(o, _)| o == k).map(|(_, v)| v.clone())
}

/// Parses `dsn` and resolves what it leaves open; `password` is one given
/// apart (a password file), used when the DSN has none.
pub(crate) fn resolve(dsn: &str, password: Option<&Password>) -> Result<Resolved> {
    resolve_in(dsn, password, &process_env)
}

/// As [`resolve`], with the environment `env`, in libpq's order: the DSN,
/// a service, the environment, libpq's defaults; then the timeout, TLS,
/// the client certificate and the password.
fn resolve_in(dsn: &str, password: Option<&Password>, env: Env) -> Result<Resolved> {
    // libpq takes an empty variable as unset.
    let env = &|name: &str| env(name).filter(|v| !v.is_empty());
    let PgDsn { driver, mut ours } = dsn.parse()?;
    let settings = match get(&ours, "service").or_else(|| env("PGSERVICE")) {
        Some(name) => service(&name, env)?,
        None => Vec::new(),
    };
    let mut config = driver_config(dsn, driver.expose(), &settings, env)?;
    let mut source = if has_password(&config) { "dsn" } else { "none" };
    apply_service(&mut config, &settings, &mut ours)?;
    if source == "none" && has_password(&config) {
        source = "service file";
    }
    apply_env(&mut config, &mut ours, env)?;
    apply_defaults(&mut config);
    apply_timeout(&mut config, &ours)?;
    let (sslmode, sslrootcert) = tls_settings(&ours, &config, env)?;
    let identity = client_identity(get(&ours, "sslcert"), get(&ours, "sslkey"), env)?;
    if !has_password(&config) {
        if let Some((p, from)) = find_password(&config, &ours, password, env) {
            config.password(p.expose());
            source = from;
        }
    }
    Ok(Resolved {
        config,
        sslmode,
        sslrootcert,
        identity,
        password_source: source,
    })
}

/// The driver's settings from the DSN's `text`: a URI's hosts without a
/// port get the service's port, else `PGPORT` (the driver would give each
/// 5432).
fn driver_config(dsn: &str, text: &str, settings: &[(String, String)], env: Env) -> Result<Config> {
    let mut text = text.to_string();
    if let Some(hosts) = uri_hosts_without_port(&text) {
        let fill = settings.iter().find(|(k, _)| k == "port").map(|(_, v)| v.clone());
        if let Some(ports) = fill.or_else(|| env("PGPORT")) {
            text = uri_with_ports(&text, hosts, &ports);
        }
    }
    Config::from_str(&text).map_err(|e| {
        Error::config(
            "db",
            format!("{:?} is not a PostgreSQL DSN: {e}", crate::connect::redact(dsn)),
        )
    })
}

/// The connect timeout: the first of the DSN, the service and
/// `PGCONNECT_TIMEOUT` decides, zero or less meaning no limit (libpq's);
/// none of them: ibench's default.
fn apply_timeout(config: &mut Config, ours: &[(String, String)]) -> Result<()> {
    let connect_timeout = match get(ours, "connect_timeout") {
        Some(t) => timeout(&t, "connect_timeout")?,
        None => Some(CONNECT_TIMEOUT),
    };
    if let Some(t) = connect_timeout {
        config.connect_timeout(t);
    }
    Ok(())
}

/// The sslmode and the root certificate: `sslrootcert=system` is OpenSSL's
/// bundle and verify-full (a weaker sslmode with it is an error, as in
/// libpq 16), else the given root or libpq's default file.
fn tls_settings(ours: &[(String, String)], config: &Config, env: Env) -> Result<(SslMode, Option<PathBuf>)> {
    let given_root = get(ours, "sslrootcert");
    let system = given_root.as_deref() == Some("system");
    let sslmode = match (get(ours, "sslmode").map(|m| SslMode::parse(&m)).transpose()?, system) {
        // As libpq 16: the system's roots verify the host name, always.
        (None, true) => SslMode::VerifyFull,
        (Some(weak), true) if weak != SslMode::VerifyFull => {
            return Err(Error::config(
                "db",
                format!(
                    "weak sslmode \"{}\" may not be used with sslrootcert=system (use \"verify-full\")",
                    weak.name()
                ),
            ))
        }
        (mode, _) => mode.unwrap_or_default(),
    };
    let sslrootcert = if system {
        Some(system_roots(env)?)
    } else {
        root_cert(given_root, sslmode, !only_sockets(config), env)?
    };
    Ok((sslmode, sslrootcert))
}

/// The password for a DSN that has none, and where it came from: a
/// password file ibench was given, `PGPASSWORD`, else the password file
/// (`passfile`, `PGPASSFILE` or `~/.pgpass`) line for this connection.
fn find_password(
    config: &Config,
    ours: &[(String, String)],
    given: Option<&Password>,
    env: Env,
) -> Option<(Password, &'static str)> {
    if let Some(p) = given {
        return Some((p.clone(), "password file"));
    }
    if let Some(p) = env("PGPASSWORD") {
        return Some((Password::new(p), "PGPASSWORD"));
    }
    let passfile = get(ours, "passfile")
        .or_else(|| env("PGPASSFILE"))
        .map(PathBuf::from)
        .or_else(|| env("HOME").map(|h| Path::new(&h).join(".pgpass")));
    let port = config.get_ports().first().copied().unwrap_or(5432);
    let user = config.get_user().unwrap_or("").to_string();
    let db = config.get_dbname().unwrap_or(&user).to_string();
    passfile
        .and_then(|f| pgpass(&f, &pgpass_host(config), port, &db, &user))
        .map(|p| (Password::new(p), "pgpass"))
}

#[cfg(test)]
mod tests {
    use super::*;
    use std::os::unix::fs::PermissionsExt;

    /// An environment of the test's own: `vars`, nothing else.
    fn env_of(vars: &[(&str, &str)]) -> impl Fn(&str) -> Option<String> {
        let vars: Vec<(String, String)> = vars.iter().map(|(k, v)| (k.to_string(), v.to_string())).collect();
        move |name| vars.iter().find(|(k, _)| k == name).map(|(_, v)| v.clone())
    }

    #[test]
    fn a_client_certificate_comes_from_the_dsn_the_environment_or_libpqs_default_files() {
        let home = tempfile::tempdir().unwrap();
        let h = home.path().display().to_string();
        assert_eq!(
            resolved("host=127.0.0.1 sslmode=require", &[("HOME", &h)]).identity,
            None
        );
        let given = resolved(
            "host=127.0.0.1 sslmode=require sslcert=/c.pem sslkey=/k.pem",
            &[("HOME", &h)],
        );
        assert_eq!(
            given.identity.map(|i| (i.cert, i.key)),
            Some((PathBuf::from("/c.pem"), PathBuf::from("/k.pem")))
        );
        let env = resolved(
            "host=127.0.0.1 sslmode=require",
            &[("HOME", &h), ("PGSSLCERT", "/e.pem"), ("PGSSLKEY", "/e.key")],
        );
        assert_eq!(env.identity.map(|i| i.cert), Some(PathBuf::from("/e.pem")));
        let pg = home.path().join(".postgresql");
        std::fs::create_dir(&pg).unwrap();
        std::fs::write(pg.join("postgresql.crt"), "").unwrap();
        std::fs::write(pg.join("postgresql.key"), "").unwrap();
        let default = resolved("host=127.0.0.1 sslmode=require", &[("HOME", &h)]);
        assert_eq!(default.identity.map(|i| i.key), Some(pg.join("postgresql.key")));
        std::fs::remove_file(pg.join("postgresql.key")).unwrap();
        let e = resolve_in("host=127.0.0.1 sslmode=require", None, &|n: &str| {
            (n == "HOME").then(|| h.clone())
        })
        .err()
        .expect("a certificate without a key")
        .to_string();
        assert!(e.contains("sslkey"), "{e}");
    }

    fn resolved(dsn: &str, vars: &[(&str, &str)]) -> Resolved {
        resolve_in(dsn, None, &env_of(vars)).unwrap_or_else(|e| panic!("{dsn}: {e}"))
    }

    fn host(config: &Config) -> String {
        match &config.get_hosts()[0] {
            Host::Tcp(h) => h.clone(),
            Host::Unix(p) => p.display().to_string(),
        }
    }

    #[test]
    fn key_value_words_keep_quotes_and_escapes() {
        assert_eq!(
            key_values("host=h  password = 'a b\\'c' sslmode=verify-full").unwrap(),
            [
                ("host".to_string(), "h".to_string()),
                ("password".into(), "a b'c".into()),
                ("sslmode".into(), "verify-full".into())
            ]
        );
        assert!(key_values("host").is_none());
        let (rest, ours) = split("host=h sslmode=verify-ca sslrootcert=/x/ca.pem user=u").unwrap();
        assert_eq!(rest, "host='h' user='u'");
        assert_eq!(ours.len(), 2);
        let (rest, ours) = split("postgres://u@h:5/d?sslmode=require&application_name=a%20b").unwrap();
        assert_eq!(rest, "postgres://u@h:5/d?application_name=a%20b");
        assert_eq!(ours, [("sslmode".to_string(), "require".to_string())]);
    }

    #[test]
    fn a_backslash_escapes_the_next_character_in_a_bare_value_as_in_libpq() {
        assert_eq!(
            key_values(r"password=a\\b\ c user=u").unwrap(),
            [
                ("password".to_string(), r"a\b c".to_string()),
                ("user".into(), "u".into())
            ]
        );
        let config = resolved(r"host=h user=u password=a\\b\ c", &[]).config;
        assert_eq!(config.get_password(), Some(&b"a\\b c"[..]));
    }

    #[test]
    fn uri_parameters_reach_the_driver_percent_decoded_and_a_plus_stays_a_plus() {
        let (rest, ours) =
            split("postgres://u@h/d?options=-c%20work_mem%3D8MB&sslrootcert=/c/a+b%20c.pem&application_name=a%20b+c")
                .unwrap();
        assert_eq!(ours, [("sslrootcert".to_string(), "/c/a+b c.pem".to_string())]);
        let config = Config::from_str(&rest).unwrap();
        assert_eq!(config.get_options(), Some("-c work_mem=8MB"));
        assert_eq!(config.get_application_name(), Some("a b+c"));
    }

    #[test]
    fn libpq_environment_variables_fill_what_the_dsn_leaves_unset() {
        let vars = [
            ("PGHOST", "envhost"),
            ("PGPORT", "6543"),
            ("PGUSER", "envuser"),
            ("PGDATABASE", "envdb"),
            ("PGSSLMODE", "require"),
            ("PGSSLROOTCERT", "/env/ca.pem"),
            ("PGAPPNAME", "env app"),
            ("PGOPTIONS", "-c work_mem=8MB"),
            ("PGCONNECT_TIMEOUT", "7"),
        ];
        let r = resolved("dbname=d", &vars);
        assert_eq!(host(&r.config), "envhost");
        assert_eq!(r.config.get_ports(), [6543]);
        assert_eq!(r.config.get_user(), Some("envuser"));
        assert_eq!(r.config.get_dbname(), Some("d"));
        assert_eq!(r.sslmode, SslMode::Require);
        assert_eq!(r.sslrootcert.as_deref(), Some(Path::new("/env/ca.pem")));
        assert_eq!(r.config.get_application_name(), Some("env app"));
        assert_eq!(r.config.get_options(), Some("-c work_mem=8MB"));
        assert_eq!(r.config.get_connect_timeout(), Some(&Duration::from_secs(7)));
        // The DSN wins, in either form.
        let r = resolved(
            "host=h port=1 user=u dbname=x sslmode=disable application_name=a options=-cx=1 connect_timeout=30",
            &vars,
        );
        assert_eq!((host(&r.config), r.config.get_ports()), ("h".to_string(), &[1][..]));
        assert_eq!((r.config.get_user(), r.config.get_dbname()), (Some("u"), Some("x")));
        assert_eq!(r.sslmode, SslMode::Disable);
        assert_eq!(r.config.get_application_name(), Some("a"));
        assert_eq!(r.config.get_connect_timeout(), Some(&Duration::from_secs(30)));
        // A URI's host without a port takes PGPORT, as in libpq; its own port wins.
        assert_eq!(resolved("postgres://u@h/d", &vars).config.get_ports(), [6543]);
        assert_eq!(resolved("postgres://u@h1,h2/d", &vars).config.get_ports(), [6543, 6543]);
        assert_eq!(resolved("postgres://u@h:5/d", &vars).config.get_ports(), [5]);
        assert_eq!(resolved("postgres://u@[::1]:5/d", &vars).config.get_ports(), [5]);
        let r = resolved("postgres://", &vars);
        assert_eq!(
            (host(&r.config), r.config.get_dbname()),
            ("envhost".to_string(), Some("envdb"))
        );
        // An empty variable is unset.
        assert_eq!(resolved("host=h", &[("PGSSLMODE", "")]).sslmode, SslMode::Disable);
        assert!(resolve_in("host=h", None, &env_of(&[("PGSSLMODE", "bogus")])).is_err());
    }

    #[test]
    fn a_connect_timeout_of_zero_or_less_is_no_limit_and_the_first_given_decides() {
        let secs = |dsn: &str, vars: &[(&str, &str)]| resolved(dsn, vars).config.get_connect_timeout().copied();
        // libpq: "zero, negative, or not specified means wait indefinitely";
        // the DSN's word is final, as for every other setting.
        assert_eq!(secs("host=h connect_timeout=0", &[("PGCONNECT_TIMEOUT", "7")]), None);
        assert_eq!(secs("postgres://u@h/d?connect_timeout=-1", &[]), None);
        assert_eq!(secs("host=h", &[("PGCONNECT_TIMEOUT", "0")]), None);
        assert_eq!(
            secs("host=h connect_timeout=3", &[("PGCONNECT_TIMEOUT", "7")]),
            Some(Duration::from_secs(3))
        );
        assert_eq!(
            secs("host=h", &[("PGCONNECT_TIMEOUT", "7")]),
            Some(Duration::from_secs(7))
        );
        // Nothing given: ibench's limit, not libpq's none.
        assert_eq!(secs("host=h", &[]), Some(CONNECT_TIMEOUT));
        for (dsn, vars, named) in [
            ("host=h connect_timeout=soon", &[][..], "connect_timeout \"soon\""),
            (
                "host=h",
                &[("PGCONNECT_TIMEOUT", "soon")][..],
                "PGCONNECT_TIMEOUT \"soon\"",
            ),
        ] {
            let e = resolve_in(dsn, None, &env_of(vars))
                .err()
                .expect("not a number")
                .to_string();
            assert!(e.contains(named), "{e}");
        }
    }

    #[test]
    fn a_service_comes_before_the_environment() {
        let dir = tempfile::tempdir().unwrap();
        let file = dir.path().join("services.conf");
        std::fs::write(&file, "[s]\nhost=svc\nport=7777\nsslmode=prefer\nconnect_timeout=9\n").unwrap();
        let file = file.display().to_string();
        let vars = [
            ("PGSERVICEFILE", file.as_str()),
            ("PGHOST", "envhost"),
            ("PGPORT", "6543"),
            ("PGUSER", "envuser"),
            ("PGSSLMODE", "require"),
            ("PGCONNECT_TIMEOUT", "7"),
        ];
        let r = resolved("service=s", &vars);
        assert_eq!(
            (host(&r.config), r.config.get_ports()),
            ("svc".to_string(), &[7777][..])
        );
        assert_eq!(r.config.get_user(), Some("envuser"));
        assert_eq!(r.sslmode, SslMode::Prefer);
        assert_eq!(r.config.get_connect_timeout(), Some(&Duration::from_secs(9)));
        assert_eq!(resolved("postgres://u@h/d?service=s", &vars).config.get_ports(), [7777]);
    }

    #[test]
    fn with_nothing_given_libpq_defaults_apply() {
        let r = resolved("dbname=x", &[]);
        assert_eq!(r.config.get_hosts(), [Host::Unix(PathBuf::from(default_socket_dir()))]);
        let me = os_user().expect("an OS user");
        assert_eq!(r.config.get_user(), Some(me.as_str()));
        assert_eq!(r.config.get_dbname(), Some("x"));
        let r = resolved("host=127.0.0.1", &[]);
        assert_eq!(
            (r.config.get_user(), r.config.get_dbname()),
            (Some(me.as_str()), Some(me.as_str()))
        );
        let r = resolved("postgres://", &[]);
        assert_eq!(r.config.get_dbname(), Some(me.as_str()));
        assert_eq!(r.password_source, "none");
    }

    #[test]
    fn sslrootcert_system_is_openssl_s_bundle_and_verify_full_as_libpq() {
        let dir = tempfile::tempdir().unwrap();
        let bundle = dir.path().join("bundle.pem");
        std::fs::write(&bundle, "").unwrap();
        let b = bundle.display().to_string();
        let vars = [("SSL_CERT_FILE", b.as_str())];
        let r = resolved("host=db.example sslrootcert=system", &vars);
        assert_eq!(
            (r.sslmode, r.sslrootcert.as_deref()),
            (SslMode::VerifyFull, Some(bundle.as_path()))
        );
        let r = resolved("postgres://u@h/d?sslrootcert=system&sslmode=verify-full", &vars);
        assert_eq!(r.sslmode, SslMode::VerifyFull);
        let error =
            |dsn: &str, vars: &[(&str, &str)]| resolve_in(dsn, None, &env_of(vars)).err().expect(dsn).to_string();
        for weak in ["disable", "prefer", "require", "verify-ca"] {
            let e = error(&format!("host=h sslrootcert=system sslmode={weak}"), &vars);
            assert!(
                e.contains(&format!("weak sslmode \"{weak}\"")) && e.contains("verify-full"),
                "{e}"
            );
        }
        let e = error("host=h sslrootcert=system", &[("SSL_CERT_FILE", "/no/such/bundle.pem")]);
        assert!(e.contains("SSL_CERT_FILE \"/no/such/bundle.pem\" is not a file"), "{e}");
        // Without SSL_CERT_FILE, the distribution's bundle (this Debian has one).
        let r = resolved("host=h sslrootcert=system", &[]);
        assert!(r.sslrootcert.is_some_and(|f| f.is_file()));
    }

    #[test]
    fn a_socket_host_needs_no_root_certificate_and_the_default_one_is_used() {
        let home = tempfile::tempdir().unwrap();
        let h = home.path().display().to_string();
        let vars = [("HOME", h.as_str())];
        let missing = resolve_in("host=127.0.0.1 sslmode=verify-full", None, &env_of(&vars))
            .err()
            .expect("no root.crt")
            .to_string();
        let default = home.path().join(".postgresql/root.crt");
        assert!(missing.contains(&default.display().to_string()), "{missing}");
        assert_eq!(resolved("host=127.0.0.1 sslmode=require", &vars).sslrootcert, None);
        let socket = resolved("host=/var/run/postgresql sslmode=verify-full", &vars);
        assert!(only_sockets(&socket.config));
        std::fs::create_dir(home.path().join(".postgresql")).unwrap();
        std::fs::write(&default, "").unwrap();
        for mode in ["require", "verify-ca", "verify-full"] {
            let r = resolved(&format!("host=127.0.0.1 sslmode={mode}"), &vars);
            assert_eq!(r.sslrootcert.as_deref(), Some(default.as_path()), "{mode}");
        }
        assert_eq!(resolved("host=127.0.0.1 sslmode=prefer", &vars).sslrootcert, None);
        let given = resolved("host=127.0.0.1 sslmode=require sslrootcert=/x.pem", &vars);
        assert_eq!(given.sslrootcert.as_deref(), Some(Path::new("/x.pem")));
        assert!(!only_sockets(&resolved("host=/tmp,127.0.0.1", &vars).config));
    }

    #[test]
    fn pgpass_matches_like_libpq() {
        let dir = tempfile::tempdir().unwrap();
        let f = dir.path().join("pgpass");
        std::fs::write(
            &f,
            "# comment\nother:5432:*:bob:wrong\n127.0.0.1:5432:db\\:1:bob:p\\:w\\\\d\n*:*:*:alice:a1\n\
             \\*:*:*:dave:star\n*:*:*:erin:pa:ss\n",
        )
        .unwrap();
        std::fs::set_permissions(&f, std::fs::Permissions::from_mode(0o600)).unwrap();
        assert_eq!(pgpass(&f, "127.0.0.1", 5432, "db:1", "bob").as_deref(), Some("p:w\\d"));
        assert_eq!(pgpass(&f, "127.0.0.1", 5433, "db:1", "bob"), None);
        assert_eq!(pgpass(&f, "anywhere", 1, "x", "alice").as_deref(), Some("a1"));
        // An escaped star is a star, not a wildcard; an unescaped ':' ends the password.
        assert_eq!(pgpass(&f, "anywhere", 1, "x", "dave"), None);
        assert_eq!(pgpass(&f, "*", 1, "x", "dave").as_deref(), Some("star"));
        assert_eq!(pgpass(&f, "h", 1, "x", "erin").as_deref(), Some("pa"));
        // Readable by others: ignored, as libpq does.
        std::fs::set_permissions(&f, std::fs::Permissions::from_mode(0o644)).unwrap();
        assert_eq!(pgpass(&f, "anywhere", 1, "x", "alice"), None);
    }

    #[test]
    fn pgpass_matches_localhost_only_for_the_default_socket_directory() {
        let dir = tempfile::tempdir().unwrap();
        let f = dir.path().join("pgpass");
        let other = dir.path().display().to_string();
        let default = default_socket_dir();
        std::fs::write(
            &f,
            format!("{default}:5432:*:u:SOCKDIR\nlocalhost:5432:*:u:LOCALHOST\n{other}:5432:*:u:OTHER\n"),
        )
        .unwrap();
        std::fs::set_permissions(&f, std::fs::Permissions::from_mode(0o600)).unwrap();
        let file = f.display().to_string();
        let password = |dsn: &str| {
            let r = resolved(&format!("{dsn} user=u passfile={file}"), &[]);
            (
                r.config.get_password().map(|p| String::from_utf8_lossy(p).into_owned()),
                r.password_source,
            )
        };
        assert_eq!(password(&format!("host={default}")).0.as_deref(), Some("LOCALHOST"));
        assert_eq!(password("dbname=x").0.as_deref(), Some("LOCALHOST"));
        assert_eq!(password(&format!("host={other}")).0.as_deref(), Some("OTHER"));
        std::fs::write(&f, "localhost:5432:*:u:LOCALHOST\n").unwrap();
        assert_eq!(password("host=/nowhere").0, None);
        // An empty password in the DSN still looks in the file, as libpq.
        assert_eq!(
            password("host=localhost password=''"),
            (Some("LOCALHOST".to_string()), "pgpass")
        );
        let with_empty = resolve_in(
            &format!("host=localhost user=u passfile={file}"),
            None,
            &env_of(&[("PGPASSWORD", "")]),
        )
        .unwrap();
        assert_eq!(with_empty.password_source, "pgpass");
    }
}
