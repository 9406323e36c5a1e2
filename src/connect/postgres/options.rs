//! What a PostgreSQL DSN leaves to libpq's conventions, resolved as libpq
//! does: `sslmode` (with `verify-ca`/`verify-full`) and `sslrootcert`, a
//! `service` from `pg_service.conf` (`service=` or `PGSERVICE`), and the
//! password from the DSN, a password file ibench was given, `PGPASSWORD`
//! or `~/.pgpass` (`PGPASSFILE`, `passfile=`), in that order.

use super::tls::SslMode;
use crate::error::{Error, Result};
use postgres::config::Host;
use postgres::Config;
use std::path::{Path, PathBuf};
use std::str::FromStr;

/// The keys ibench takes out of the DSN before the driver parses it.
const OURS: [&str; 4] = ["sslmode", "sslrootcert", "service", "passfile"];

/// A DSN's connection settings, resolved.
pub(crate) struct Resolved {
    pub config: Config,
    pub sslmode: SslMode,
    pub sslrootcert: Option<PathBuf>,
    /// Where the password came from (recorded with the run; never the password).
    pub password_source: &'static str,
}

/// libpq's key=value words: `key = value`, values bare or single-quoted
/// with backslash escapes.
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
                value.push(c);
                chars.next();
            }
        }
        out.push((key, value));
    }
}

/// `value` quoted for a key=value DSN.
fn quoted(value: &str) -> String {
    format!("'{}'", value.replace('\\', "\\\\").replace('\'', "\\'"))
}

/// Takes ibench's keys out of `dsn`: (the rest, for the driver; ours).
fn split(dsn: &str) -> Result<(String, Vec<(String, String)>)> {
    let bad = |why: String| {
        Error::config(
            "db",
            format!("{:?} is not a PostgreSQL DSN: {why}", crate::connect::redact(dsn)),
        )
    };
    if dsn.contains("://") {
        let mut url = url::Url::parse(dsn).map_err(|e| bad(e.to_string()))?;
        let (ours, rest): (Vec<_>, Vec<_>) = url
            .query_pairs()
            .map(|(k, v)| (k.into_owned(), v.into_owned()))
            .partition(|(k, _)| OURS.contains(&k.as_str()));
        if rest.is_empty() {
            url.set_query(None);
        } else {
            url.query_pairs_mut().clear().extend_pairs(&rest);
        }
        Ok((url.to_string(), ours))
    } else {
        let words = key_values(dsn).ok_or_else(|| bad("expected key=value words".into()))?;
        let (ours, rest): (Vec<_>, Vec<_>) = words.into_iter().partition(|(k, _)| OURS.contains(&k.as_str()));
        let text: Vec<String> = rest.iter().map(|(k, v)| format!("{k}={}", quoted(v))).collect();
        Ok((text.join(" "), ours))
    }
}

fn home() -> Option<PathBuf> {
    std::env::var_os("HOME").map(PathBuf::from)
}

/// The settings of `service` in the first service file that has it:
/// `PGSERVICEFILE` (or `~/.pg_service.conf`), then
/// `$PGSYSCONFDIR/pg_service.conf` (or Debian's `/etc/postgresql-common`).
fn service(name: &str) -> Result<Vec<(String, String)>> {
    let user_file = std::env::var_os("PGSERVICEFILE")
        .map(PathBuf::from)
        .or_else(|| home().map(|h| h.join(".pg_service.conf")));
    let system = std::env::var_os("PGSYSCONFDIR")
        .map(PathBuf::from)
        .unwrap_or_else(|| PathBuf::from("/etc/postgresql-common"))
        .join("pg_service.conf");
    for file in user_file.into_iter().chain([system]) {
        let Ok(text) = std::fs::read_to_string(&file) else {
            continue;
        };
        let found: Vec<(String, String)> = crate::connect::dsn::ini(&text)
            .into_iter()
            .filter(|(section, _, _)| section == name)
            .map(|(_, k, v)| (k, v))
            .collect();
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

/// One `.pgpass` field: `*` matches anything; `\:` and `\\` are escapes.
fn pgpass_fields(line: &str) -> Vec<String> {
    let mut fields = vec![String::new()];
    let mut chars = line.chars();
    while let Some(c) = chars.next() {
        match c {
            '\\' => {
                if let Some(n) = chars.next() {
                    fields.last_mut().expect("one").push(n);
                }
            }
            ':' if fields.len() < 5 => fields.push(String::new()),
            c => fields.last_mut().expect("one").push(c),
        }
    }
    fields
}

/// The password `.pgpass` gives (host, port, database, user), as libpq
/// reads it: the first matching line; a file others can read is ignored.
pub(crate) fn pgpass(file: &Path, host: &str, port: u16, db: &str, user: &str) -> Option<String> {
    use std::os::unix::fs::PermissionsExt;
    let meta = std::fs::metadata(file).ok()?;
    if meta.permissions().mode() & 0o077 != 0 {
        return None;
    }
    let text = std::fs::read_to_string(file).ok()?;
    // A socket directory matches `localhost`, as in libpq.
    let hosts = [host, if host.starts_with('/') { "localhost" } else { host }];
    let port = port.to_string();
    text.lines()
        .filter(|l| !l.trim_start().starts_with('#'))
        .map(pgpass_fields)
        .filter(|f| f.len() == 5)
        .find(|f| {
            let matches = |field: &str, value: &str| field == "*" || field == value;
            hosts.iter().any(|h| matches(&f[0], h))
                && matches(&f[1], &port)
                && matches(&f[2], db)
                && matches(&f[3], user)
        })
        .map(|f| f[4].clone())
}

/// Sets on `config` what a service gives and the DSN did not.
fn apply_service(config: &mut Config, settings: &[(String, String)], ours: &mut Vec<(String, String)>) -> Result<()> {
    for (k, v) in settings {
        match k.as_str() {
            "host" if config.get_hosts().is_empty() => {
                config.host(v);
            }
            "port" if config.get_ports().is_empty() => {
                let port = v
                    .parse()
                    .map_err(|_| Error::config("db", format!("service port {v:?} is not a port")))?;
                config.port(port);
            }
            "user" if config.get_user().is_none() => {
                config.user(v);
            }
            "dbname" if config.get_dbname().is_none() => {
                config.dbname(v);
            }
            "password" if config.get_password().is_none() => {
                config.password(v);
            }
            "application_name" if config.get_application_name().is_none() => {
                config.application_name(v);
            }
            "sslmode" | "sslrootcert" | "passfile" if !ours.iter().any(|(o, _)| o == k) => {
                ours.push((k.clone(), v.clone()));
            }
            _ => {}
        }
    }
    Ok(())
}

/// Parses `dsn` and resolves what it leaves open; `password` is one given
/// apart (a password file), used when the DSN has none.
pub(crate) fn resolve(dsn: &str, password: Option<&str>) -> Result<Resolved> {
    let (rest, mut ours) = split(dsn)?;
    let mut config = Config::from_str(&rest).map_err(|e| {
        Error::config(
            "db",
            format!("{:?} is not a PostgreSQL DSN: {e}", crate::connect::redact(dsn)),
        )
    })?;
    let mut source = if config.get_password().is_some() { "dsn" } else { "none" };
    let service_name = ours
        .iter()
        .find(|(k, _)| k == "service")
        .map(|(_, v)| v.clone())
        .or_else(|| std::env::var("PGSERVICE").ok());
    if let Some(name) = service_name {
        apply_service(&mut config, &service(&name)?, &mut ours)?;
        if source == "none" && config.get_password().is_some() {
            source = "service file";
        }
    }
    let get = |k: &str| ours.iter().find(|(o, _)| o == k).map(|(_, v)| v.clone());
    let sslmode = get("sslmode")
        .map(|m| SslMode::parse(&m))
        .transpose()?
        .unwrap_or_default();
    let sslrootcert = get("sslrootcert").map(PathBuf::from);
    if config.get_password().is_none() {
        let host = match config.get_hosts().first() {
            Some(Host::Tcp(h)) => h.clone(),
            Some(Host::Unix(p)) => p.display().to_string(),
            None => "localhost".into(),
        };
        let port = config.get_ports().first().copied().unwrap_or(5432);
        let user = config.get_user().unwrap_or("").to_string();
        let db = config.get_dbname().unwrap_or(&user).to_string();
        let passfile = get("passfile")
            .map(PathBuf::from)
            .or_else(|| std::env::var_os("PGPASSFILE").map(PathBuf::from))
            .or_else(|| home().map(|h| h.join(".pgpass")));
        let found = if let Some(p) = password {
            Some((p.to_string(), "password file"))
        } else if let Ok(p) = std::env::var("PGPASSWORD") {
            Some((p, "PGPASSWORD"))
        } else {
            passfile
                .and_then(|f| pgpass(&f, &host, port, &db, &user))
                .map(|p| (p, "pgpass"))
        };
        if let Some((p, from)) = found {
            config.password(p);
            source = from;
        }
    }
    Ok(Resolved {
        config,
        sslmode,
        sslrootcert,
        password_source: source,
    })
}

#[cfg(test)]
mod tests {
    use super::*;
    use std::os::unix::fs::PermissionsExt;

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
        let (rest, ours) = split("postgres://u@h:5/d?sslmode=require&connect_timeout=3").unwrap();
        assert_eq!(rest, "postgres://u@h:5/d?connect_timeout=3");
        assert_eq!(ours, [("sslmode".to_string(), "require".to_string())]);
    }

    #[test]
    fn pgpass_matches_like_libpq() {
        let dir = tempfile::tempdir().unwrap();
        let f = dir.path().join("pgpass");
        std::fs::write(
            &f,
            "# comment\nother:5432:*:bob:wrong\n127.0.0.1:5432:db\\:1:bob:p\\:w\\\\d\n*:*:*:alice:a1\nlocalhost:5432:*:carol:c1\n",
        )
        .unwrap();
        std::fs::set_permissions(&f, std::fs::Permissions::from_mode(0o600)).unwrap();
        assert_eq!(pgpass(&f, "127.0.0.1", 5432, "db:1", "bob").as_deref(), Some("p:w\\d"));
        assert_eq!(pgpass(&f, "127.0.0.1", 5433, "db:1", "bob"), None);
        assert_eq!(pgpass(&f, "anywhere", 1, "x", "alice").as_deref(), Some("a1"));
        assert_eq!(
            pgpass(&f, "/var/run/postgresql", 5432, "x", "carol").as_deref(),
            Some("c1")
        );
        // Readable by others: ignored, as libpq does.
        std::fs::set_permissions(&f, std::fs::Permissions::from_mode(0o644)).unwrap();
        assert_eq!(pgpass(&f, "anywhere", 1, "x", "alice"), None);
    }
}
