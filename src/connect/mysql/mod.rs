//! `mysql://user:pass@host:port/db?engine=innodb|rocksdb&socket=PATH&engine_options=...`
//! — MySQL and MariaDB, InnoDB or the RocksDB engine (MyRocks).
//!
//! InnoDB gets its three indexes in one ALTER TABLE, RocksDB one ALTER per
//! index. `options.rs` parses the DSN and resolves what it leaves out as
//! the client does (`option_files.rs`: MySQL's option files);
//! `session.rs` runs the benchmark's statements, server-side prepared or
//! as text, through the sessions' own client (`wire.rs`); `maintain.rs`
//! the wait step and the settings it changes and restores; `kv.rs` the
//! key/value steps; `stats.rs` the server's counters (`rocksdb_log.rs`:
//! MyRocks' event log); `error.rs` maps its errors. The key/value steps,
//! maintenance, the counters and the checks here use the `mysql` crate.

mod error;
mod kv;
mod ledger;
mod maintain;
mod option_files;
mod options;
mod rocksdb_log;
mod session;
mod stats;
mod sysbench;
mod wire;

use super::dsn::Password;
use super::sql::{Dialect, Engine, SessionSql};
use super::{Connector, KvSession, ServerCounters, Session, SessionSpec, Sizes};
use crate::error::{Error, Result};
use crate::metrics::Setting;
use error::my_err;
use mysql::prelude::Queryable;
use mysql::{Conn, Opts, OptsBuilder};
use options::MysqlOptions;
use session::MysqlSession;
use std::path::PathBuf;
use std::sync::OnceLock;

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
    /// Settings a killed ibench left changed, put back as this connector
    /// opened (`ledger.rs`): a sentence each.
    recovered: Vec<String>,
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
    /// DSN (a password file), used when the DSN has none. The phases:
    /// the DSN's options, the option files', the driver's options and the
    /// sessions' dial resolved from them, then one login to check the
    /// server.
    pub fn with_password(dsn: &str, password: Option<&str>) -> Result<Self> {
        let given: MysqlOptions = dsn.parse()?;
        // The option files fill in what the DSN leaves out, as the client's.
        let client = given.client_settings()?;
        let password = password.map(Password::new);
        let resolved = options::resolve(dsn, &given, &client, password.as_ref())?;
        let opts = resolved.opts;
        let user = opts.get_user().unwrap_or("").to_string();
        let target = format!(
            "mysql://{user}@{}:{}/{}?engine={}",
            opts.get_ip_or_hostname(),
            opts.get_tcp_port(),
            opts.get_db_name().unwrap_or(""),
            given.engine.sql().to_lowercase()
        );
        let mut connector = MysqlConnector {
            dial: options::dial(&opts, &client)?,
            opts,
            engine: given.engine,
            engine_options: given.engine_options,
            target,
            datadir: OnceLock::new(),
            rocksdb_dir: OnceLock::new(),
            spec: SessionSpec::default(),
            ssl_mode: client.ssl_mode,
            password_source: resolved.password_source,
            recovered: Vec::new(),
        };
        let mut conn = connector.first_login()?;
        connector.take_drivers_socket(&mut conn);
        connector.check_engine(&mut conn)?;
        connector.recovered = ledger::recover(&mut conn).unwrap_or_else(|e| {
            vec![format!(
                "the settings an earlier ibench changed (ibench.changed_settings) could not be checked: {e}"
            )]
        });
        Ok(connector)
    }

    /// One login (a failed one counts against the account's limits); with
    /// ssl-mode PREFERRED, plain when the server offers no TLS.
    fn first_login(&mut self) -> Result<Conn> {
        match Conn::new(self.opts.clone()) {
            Ok(conn) => Ok(conn),
            Err(mysql::Error::DriverError(mysql::DriverError::TlsNotSupported))
                if self.ssl_mode == options::SslMode::Preferred =>
            {
                self.opts = OptsBuilder::from_opts(self.opts.clone()).ssl_opts(None).into();
                self.connect()
            }
            Err(e) => Err(self.cannot_connect(e)),
        }
    }

    /// With prefer_socket=true, the sessions take the socket the driver would.
    fn take_drivers_socket(&mut self, conn: &mut Conn) {
        if self.opts.get_prefer_socket() && self.dial.socket.is_none() && self.local() && !self.ssl_mode.required() {
            let path: Option<String> = conn.query_first("SELECT @@socket").ok().flatten();
            self.dial.socket = path.map(PathBuf::from).filter(|p| p.exists());
        }
    }

    /// That the server has the DSN's engine, enabled.
    fn check_engine(&self, conn: &mut Conn) -> Result<()> {
        // As text: a run with literal statements prepares nothing on the server.
        let supported: Option<String> = conn
            .query_first(format!(
                "SELECT support FROM information_schema.engines WHERE engine = '{}'",
                self.engine.sql()
            ))
            .map_err(|e| my_err(&self.target, "engine check", e))?;
        if matches!(supported.as_deref(), Some("YES" | "DEFAULT")) {
            return Ok(());
        }
        Err(Error::database(
            &self.target,
            format!(
                "the server has no {} engine (for MyRocks on MariaDB: mariadb-plugin-rocksdb, loaded at start-up)",
                self.engine.sql()
            ),
        ))
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
    fn recovered(&self) -> Vec<String> {
        self.recovered.clone()
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
    fn configuration(&self) -> Result<Vec<Setting>> {
        let mut c = self.connect()?;
        let rows: Vec<(String, String)> = c
            .query("SHOW GLOBAL VARIABLES")
            .map_err(|e| my_err(&self.target, "SHOW GLOBAL VARIABLES", e))?;
        let mut out: Vec<Setting> = rows
            .into_iter()
            .map(|(name, value)| {
                // GTID positions move with every transaction: facts of the moment, not configuration.
                let source = if name.contains("gtid") {
                    "sampled"
                } else {
                    "SHOW GLOBAL VARIABLES"
                };
                Setting::server(name, value, source)
            })
            .collect();
        out.push(Setting::server("ibench_engine", self.engine.sql(), "DSN"));
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
    fn sb_session(&self) -> Result<Box<dyn crate::connect::SbSession>> {
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
