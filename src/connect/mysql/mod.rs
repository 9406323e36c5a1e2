//! `mysql://user:pass@host:port/db?engine=innodb|rocksdb&socket=PATH&engine_options=...`
//! — MySQL and MariaDB, InnoDB or the RocksDB engine (MyRocks).
//!
//! InnoDB gets its three indexes in one ALTER TABLE, RocksDB one ALTER per
//! index. `session.rs` runs the benchmark's statements, server-side
//! prepared or as text, through the sessions' own client (`wire.rs`);
//! `maintain.rs` the wait step and the settings it changes and restores;
//! `kv.rs` the key/value steps. Those two, the counters and the checks
//! here use the `mysql` crate.

mod kv;
mod maintain;
mod option_files;
mod options;
mod rocksdb_log;
mod session;
mod stats;
mod wire;

use super::sql::{Dialect, Engine, SessionSql};
use super::{Connector, KvSession, ServerCounters, Session, SessionSpec, Sizes};
use crate::error::{DbErrorKind, Error, Result};
use mysql::prelude::Queryable;
use mysql::{Conn, Opts, OptsBuilder};
use session::MysqlSession;
use std::path::PathBuf;
use std::sync::OnceLock;
use std::time::Duration;

const CONNECT_TIMEOUT: Duration = Duration::from_secs(5);

/// Prepared statements the driver keeps per connection.
const STATEMENT_CACHE: usize = 1024;

/// The MySQL/MariaDB connector.
pub struct MysqlConnector {
    opts: Opts,
    engine: Engine,
    engine_options: String,
    target: String,
    /// The server's `datadir` when it runs on this host, read once.
    datadir: OnceLock<Option<PathBuf>>,
    /// MyRocks' data directory (`rocksdb_datadir`, relative to `datadir`), read once.
    rocksdb_dir: OnceLock<Option<PathBuf>>,
    spec: SessionSpec,
    ssl_mode: options::SslMode,
    /// How the sessions' own client connects.
    dial: wire::Dial,
    /// Where the password came from (dsn, MYSQL_PWD, option file, ...).
    password_source: &'static str,
}

/// Maps a server error to its kind: deadlocks (1213) and lock wait timeouts
/// (1205) are retryable; a missing privilege (1227 SUPER and the like, 1142
/// on a table, 1044 on a database) is skipped by maintenance; 1317 is a
/// statement killed by `KILL QUERY` (a stop request).
pub(super) fn my_err(target: &str, what: &str, e: mysql::Error) -> Error {
    match e {
        mysql::Error::MySqlError(m) => server_error(target, what, m.code, &m.message),
        other => Error::database(target, format!("{what}: {other}")),
    }
}

/// A server's error by its code, from either client.
pub(super) fn server_error(target: &str, what: &str, code: u16, message: &str) -> Error {
    let kind = match code {
        1213 | 1205 => DbErrorKind::Retryable,
        1227 | 1142 | 1044 | 1370 => DbErrorKind::Privilege,
        1317 | 3024 | 1969 => DbErrorKind::Canceled,
        _ => DbErrorKind::Other,
    };
    Error::database_kind(target, format!("{what}: {message} ({code})"), kind)
}

/// Runs a privileged maintenance statement: a missing privilege is a note
/// of what was skipped, not a failure.
pub(super) fn privileged(what: &str, result: Result<()>, notes: &mut Vec<String>) -> Result<bool> {
    match result {
        Ok(()) => Ok(true),
        Err(e) if e.is_privilege() => {
            notes.push(format!("{what} skipped: {e}"));
            Ok(false)
        }
        Err(e) => Err(e),
    }
}

/// A schema or table name as MySQL names its file: letters, digits and `_`
/// as they are, any other character as `@` and four hex digits.
fn file_name(name: &str) -> String {
    name.chars()
        .map(|c| {
            if c.is_ascii_alphanumeric() || c == '_' {
                c.to_string()
            } else {
                format!("@{:04x}", c as u32)
            }
        })
        .collect()
}

impl MysqlConnector {
    /// Parses `dsn` and checks that the server answers and has the engine.
    pub fn new(dsn: &str) -> Result<Self> {
        Self::with_password(dsn, None)
    }

    /// As [`MysqlConnector::new`], with a password given apart from the
    /// DSN (a password file), used when the DSN has none.
    pub fn with_password(dsn: &str, password: Option<&str>) -> Result<Self> {
        let bad = |why: String| Error::config("db", format!("{:?}: {why}", super::redact(dsn)));
        let (base, query) = super::dsn::split(dsn);
        let (mut engine, mut socket, mut engine_options, mut rest) = (Engine::InnoDb, None, String::new(), Vec::new());
        let (mut ssl_mode, mut ssl_ca, mut defaults_file, mut extra_file) = (None, None, None, None);
        let (mut ssl_cert, mut ssl_key) = (None, None);
        for (name, v) in query {
            match name.as_str() {
                // The client's options, spelled with - or _ as in option files.
                "ssl-mode" | "ssl_mode" => ssl_mode = Some(options::SslMode::parse(&v)?),
                "ssl-ca" | "ssl_ca" => ssl_ca = Some(PathBuf::from(v)),
                "ssl-cert" | "ssl_cert" => ssl_cert = Some(PathBuf::from(v)),
                "ssl-key" | "ssl_key" => ssl_key = Some(PathBuf::from(v)),
                "defaults-file" | "defaults_file" => defaults_file = Some(PathBuf::from(v)),
                "defaults-extra-file" | "defaults_extra_file" => extra_file = Some(PathBuf::from(v)),
                "engine" => {
                    engine = match v.to_ascii_lowercase().as_str() {
                        "innodb" => Engine::InnoDb,
                        "rocksdb" | "myrocks" => Engine::RocksDb,
                        _ => return Err(bad(format!("engine {v:?}: expected innodb or rocksdb"))),
                    }
                }
                "socket" => socket = Some(v),
                "engine_options" => engine_options = v,
                _ => rest.push((name, v)),
            }
        }
        // The driver's own options go back to it, encoded again.
        let url = if rest.is_empty() {
            base.to_string()
        } else {
            let query: String = url::form_urlencoded::Serializer::new(String::new())
                .extend_pairs(&rest)
                .finish();
            format!("{base}?{query}")
        };
        // The option files fill in what the DSN leaves out, as the client's.
        let file = option_files::read(defaults_file.as_deref(), extra_file.as_deref())?;
        let client = options::ClientSettings::resolve(file, ssl_mode, ssl_ca, (ssl_cert, ssl_key))?;
        // A DSN without a host (`mysql://root@/test`, `mysql:///test`)
        // connects where the client would: the files' host, else MYSQL_HOST,
        // else localhost (the Unix socket).
        let url = options::with_host(&url, &client.host()).unwrap_or(url);
        let (base, _) = super::dsn::split(&url);
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
        let ssl_mode = client.ssl_mode;
        let ssl_ca = client.ssl_ca.clone();
        let mut password_source = "dsn";
        if opts.get_pass().is_none() {
            let found = password
                .map(|p| (p.to_string(), "password file"))
                .or_else(|| client.get("password").map(|p| (p, "option file")))
                .or_else(|| std::env::var("MYSQL_PWD").ok().map(|p| (p, "MYSQL_PWD")));
            password_source = found.as_ref().map_or("none", |f| f.1);
            builder = builder.pass(found.map(|f| f.0));
        }
        // As the client: `localhost` is the Unix socket (the option files',
        // MYSQL_UNIX_PORT or the usual path), unless the DSN gives a port
        // (the client would ignore it and reach another server) or TLS is
        // required (ibench encrypts TCP only).
        let socket = socket.or_else(|| {
            (opts.get_ip_or_hostname() == "localhost" && explicit_port.is_none() && !ssl_mode.required())
                .then(|| client.socket())
                .flatten()
        });
        if let (Some(path), true) = (&socket, ssl_mode.required()) {
            return Err(bad(format!(
                "ssl-mode {} over the Unix socket {path}: ibench encrypts TCP connections only \
                 (connect to the server's address, or use ssl-mode PREFERRED)",
                ssl_mode.name()
            )));
        }
        // The driver would quietly switch a 127.0.0.1 connection to the Unix
        // socket: the DSN says which transport is measured (socket=PATH, or
        // prefer_socket=true to let the driver choose).
        if !rest.iter().any(|(k, _)| k == "prefer_socket") {
            builder = builder.prefer_socket(false);
        }
        let opts: Opts = builder
            .ssl_opts(ssl_mode.ssl_opts(ssl_ca.as_deref(), client.identity.as_ref())?)
            .into();
        let user = opts.get_user().unwrap_or("").to_string();
        let target = format!(
            "mysql://{user}@{}:{}/{}?engine={}",
            opts.get_ip_or_hostname(),
            opts.get_tcp_port(),
            opts.get_db_name().unwrap_or(""),
            engine.sql().to_lowercase()
        );
        // Sessions hold their prepared statements; the driver closes the one
        // its cache evicts, so the cache must hold every statement a session
        // prepares (a few dozen at most; the default is 32).
        let opts: Opts = OptsBuilder::from_opts(opts)
            .tcp_connect_timeout(Some(CONNECT_TIMEOUT))
            .socket(socket)
            .stmt_cache_size(STATEMENT_CACHE)
            .into();
        let dial = wire::Dial {
            host: opts.get_ip_or_hostname().to_string(),
            port: opts.get_tcp_port(),
            socket: opts.get_socket().map(PathBuf::from),
            user: opts.get_user().unwrap_or("").to_string(),
            password: opts.get_pass().map(str::to_string),
            database: opts.get_db_name().map(str::to_string),
            tls: ssl_mode.rustls(ssl_ca.as_deref(), client.identity.as_ref())?,
            timeout: CONNECT_TIMEOUT,
            init: opts.get_init(),
        };
        let mut connector = MysqlConnector {
            opts,
            dial,
            engine,
            engine_options,
            target,
            datadir: OnceLock::new(),
            rocksdb_dir: OnceLock::new(),
            spec: SessionSpec::default(),
            ssl_mode,
            password_source,
        };
        // One login (a failed one counts against the account's limits).
        let mut conn = match Conn::new(connector.opts.clone()) {
            Ok(conn) => conn,
            // PREFERRED: plain when the server offers no TLS.
            Err(mysql::Error::DriverError(mysql::DriverError::TlsNotSupported))
                if ssl_mode == options::SslMode::Preferred =>
            {
                connector.opts = OptsBuilder::from_opts(connector.opts.clone()).ssl_opts(None).into();
                connector.connect()?
            }
            Err(e) => return Err(connector.cannot_connect(e)),
        };
        // prefer_socket=true: the sessions take the socket the driver would.
        if connector.opts.get_prefer_socket()
            && connector.dial.socket.is_none()
            && connector.local()
            && !ssl_mode.required()
        {
            let path: Option<String> = conn.query_first("SELECT @@socket").ok().flatten();
            connector.dial.socket = path.map(PathBuf::from).filter(|p| p.exists());
        }
        // As text: a run with literal statements prepares nothing on the server.
        let supported: Option<String> = conn
            .query_first(format!(
                "SELECT support FROM information_schema.engines WHERE engine = '{}'",
                engine.sql()
            ))
            .map_err(|e| my_err(&connector.target, "engine check", e))?;
        if !matches!(supported.as_deref(), Some("YES" | "DEFAULT")) {
            return Err(Error::database(
                &connector.target,
                format!(
                    "the server has no {} engine (for MyRocks on MariaDB: mariadb-plugin-rocksdb, loaded at start-up)",
                    engine.sql()
                ),
            ));
        }
        Ok(connector)
    }

    fn connect(&self) -> Result<Conn> {
        Conn::new(self.opts.clone()).map_err(|e| self.cannot_connect(e))
    }

    /// The driver's failure to connect, naming the user.
    fn cannot_connect(&self, e: mysql::Error) -> Error {
        let user = self.opts.get_user().unwrap_or("");
        let cause = match &e {
            mysql::Error::MySqlError(m) => format!("{} ({})", m.message, m.code),
            other => other.to_string(),
        };
        self.login_error(user, cause)
    }

    /// A failed login as user `user`, naming the ssl-mode when TLS was asked for.
    fn login_error(&self, user: &str, cause: impl std::fmt::Display) -> Error {
        let mode = (self.ssl_mode != options::SslMode::Disabled).then(|| format!("ssl-mode {}", self.ssl_mode.name()));
        Error::login(&self.target, user, mode, cause)
    }

    fn open_session(&self) -> Result<MysqlSession> {
        let wire = wire::Wire::connect(&self.dial).map_err(|e| self.login_error(&self.dial.user, e))?;
        let sql = SessionSql::new(Dialect::Mysql {
            engine: self.engine,
            options: self.engine_options.clone(),
        });
        let mut session = MysqlSession::new(
            wire,
            self.opts.clone(),
            sql,
            self.spec,
            self.engine,
            self.target.clone(),
        );
        // A local MyRocks' event log says which compactions run.
        if self.engine == Engine::RocksDb {
            session.rocksdb_log = self
                .data_path()
                .and_then(|d| self.rocksdb_dir(&d))
                .and_then(|r| rocksdb_log::EventLog::open(r.join("LOG")));
        }
        Ok(session)
    }

    fn local(&self) -> bool {
        self.opts.get_socket().is_some() || super::is_local(&self.opts.get_ip_or_hostname())
    }

    /// MyRocks' directory: `rocksdb_datadir` (MariaDB `./#rocksdb`, MySQL
    /// `./.rocksdb`), relative to `datadir`.
    fn rocksdb_dir(&self, datadir: &std::path::Path) -> Option<PathBuf> {
        self.rocksdb_dir
            .get_or_init(|| {
                let mut c = self.connect().ok()?;
                let dir: Option<String> = c.query_first("SELECT @@rocksdb_datadir").ok()?;
                let dir = PathBuf::from(dir?);
                Some(if dir.is_absolute() { dir } else { datadir.join(dir) })
            })
            .clone()
    }

    /// Sizes from `information_schema`: estimates (InnoDB's come from its
    /// statistics, which MySQL 8 caches for up to a day).
    fn estimated_sizes(&self, tables: &[String]) -> Option<(u64, u64)> {
        let mut c = self.connect().ok()?;
        let all: Option<u64> = c
            .query_first(
                "SELECT CAST(COALESCE(SUM(data_length + index_length), 0) AS UNSIGNED)
                 FROM information_schema.tables WHERE table_schema = DATABASE()",
            )
            .ok()
            .flatten();
        let mine: u64 = tables
            .iter()
            .filter_map(|t| {
                c.query_first::<Option<u64>, _>(format!(
                    "SELECT CAST(data_length + index_length AS UNSIGNED) FROM information_schema.tables
                     WHERE table_schema = DATABASE() AND table_name = '{}'",
                    t.replace('\'', "''")
                ))
                .ok()
                .flatten()
                .flatten()
            })
            .sum();
        Some((all?, mine))
    }
}

impl Connector for MysqlConnector {
    fn dbms(&self) -> &'static str {
        "mysql"
    }
    fn target(&self) -> String {
        self.target.clone()
    }
    fn version(&self) -> Result<String> {
        let mut c = self.connect()?;
        let v: Option<String> = c
            .query_first("SELECT VERSION()")
            .map_err(|e| my_err(&self.target, "version", e))?;
        Ok(v.unwrap_or_default())
    }
    fn settings(&self) -> Vec<(String, String)> {
        // What the server says of this connection: its TLS version and
        // cipher, if any, and whether it came over TCP (`host:port`) or the
        // Unix socket (`localhost`).
        let mut conn = self.connect().ok();
        let transport = conn
            .as_mut()
            .and_then(|c| {
                c.query_first::<String, _>("SELECT host FROM information_schema.processlist WHERE id = CONNECTION_ID()")
                    .ok()
                    .flatten()
            })
            .map(|host| match host.rsplit_once(':') {
                Some((addr, _)) => format!("tcp {addr}"),
                None => "unix socket".into(),
            })
            .unwrap_or_else(|| "unknown".into());
        let tls = conn
            .and_then(|mut c| {
                c.query::<(String, String), _>(
                    "SHOW SESSION STATUS WHERE Variable_name IN ('Ssl_version', 'Ssl_cipher')",
                )
                .ok()
            })
            .map(|rows| {
                let get = |n: &str| rows.iter().find(|r| r.0 == n).map(|r| r.1.clone()).unwrap_or_default();
                match (get("Ssl_version"), get("Ssl_cipher")) {
                    (v, _) if v.is_empty() => "none".to_string(),
                    (v, c) => format!("{v} {c}"),
                }
            })
            .unwrap_or_else(|| "unknown".into());
        vec![
            ("engine".into(), self.engine.sql().into()),
            ("engine_options".into(), self.engine_options.clone()),
            ("tls".into(), tls),
            ("ssl_mode".into(), self.ssl_mode.name().into()),
            ("transport".into(), transport),
            ("password_source".into(), self.password_source.into()),
        ]
    }
    fn configuration(&self) -> Result<Vec<(String, String, String)>> {
        let mut c = self.connect()?;
        let rows: Vec<(String, String)> = c
            .query("SHOW GLOBAL VARIABLES")
            .map_err(|e| my_err(&self.target, "SHOW GLOBAL VARIABLES", e))?;
        let mut out: Vec<(String, String, String)> = rows
            .into_iter()
            .map(|(name, value)| {
                // GTID positions move with every transaction: facts of the moment, not configuration.
                let source = if name.contains("gtid") {
                    "sampled"
                } else {
                    "SHOW GLOBAL VARIABLES"
                };
                (name, value, source.to_string())
            })
            .collect();
        out.push(("ibench_engine".into(), self.engine.sql().into(), "DSN".into()));
        Ok(out)
    }
    fn server_processes(&self) -> Vec<&'static str> {
        if self.local() {
            vec!["mariadbd", "mysqld"]
        } else {
            Vec::new()
        }
    }
    fn over_network(&self) -> bool {
        true
    }
    fn server_pid(&self) -> Option<i32> {
        let names = self.server_processes();
        let mut c = self.connect().ok()?;
        let file: Option<String> = c.query_first("SELECT @@pid_file").ok().flatten();
        let uptime: Option<(String, String)> = c.query_first("SHOW GLOBAL STATUS LIKE 'Uptime'").ok().flatten();
        // The pid file is readable by the server's user and root only; else
        // the one server process that started when the server says it did.
        file.and_then(|f| std::fs::read_to_string(f).ok())
            .and_then(|text| text.trim().parse::<i32>().ok())
            .filter(|&pid| crate::metrics::runs_as(pid, &names))
            .or_else(|| crate::metrics::started_ago(&names, uptime?.1.parse().ok()?))
    }
    fn data_path(&self) -> Option<PathBuf> {
        if !self.local() {
            return None;
        }
        self.datadir
            .get_or_init(|| {
                let mut c = self.connect().ok()?;
                let dir: Option<String> = c.query_first("SELECT @@datadir").ok()?;
                dir.map(PathBuf::from)
            })
            .clone()
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
    fn counters(&self, _tables: &[String]) -> Result<Option<Box<dyn ServerCounters>>> {
        let conn = self.connect()?;
        Ok(Some(Box::new(stats::MysqlStats::new(
            conn,
            self.engine,
            self.target.clone(),
        ))))
    }
    fn sizes(&self, tables: &[String]) -> Sizes {
        // A local server's files say what is on disk now; information_schema
        // holds estimates (and MySQL 8 caches them for up to a day).
        let files = self
            .data_path()
            .filter(|d| std::fs::read_dir(d).is_ok())
            .and_then(|datadir| {
                let schema = datadir.join(file_name(self.opts.get_db_name()?));
                let database = match self.engine {
                    Engine::InnoDb => super::files_size(&schema)?,
                    // MyRocks keeps every schema's data in one RocksDB instance.
                    Engine::RocksDb => super::files_size(&self.rocksdb_dir(&datadir)?)?,
                };
                let table_files = match self.engine {
                    Engine::InnoDb => {
                        let ibd: Vec<_> = tables
                            .iter()
                            .map(|t| super::files_size(&schema.join(format!("{}.ibd", file_name(t)))))
                            .collect();
                        // No .ibd files (innodb_file_per_table=OFF): the tables live in the system tablespace.
                        ibd.iter().all(Option::is_some).then(|| ibd.iter().flatten().sum())
                    }
                    Engine::RocksDb => None,
                };
                Some((database, table_files, super::files_size(&datadir)))
            });
        match files {
            Some((database, table_files, datadir)) => Sizes {
                database: Some(database),
                // MyRocks' tables share its SST files: their size is what it reports.
                tables: table_files.or_else(|| self.estimated_sizes(tables).map(|e| e.1)),
                datadir,
                note: None,
            },
            None => {
                let estimated = self.estimated_sizes(tables);
                Sizes {
                    database: estimated.map(|e| e.0),
                    tables: estimated.map(|e| e.1),
                    datadir: None,
                    note: Some("information_schema estimates: the server's data directory is not readable here".into()),
                }
            }
        }
    }
}
