//! `sqlite:PATH` or `sqlite::memory:` — embedded SQLite (rusqlite, bundled).
//!
//! Files use WAL with `synchronous=NORMAL`; each session is its own
//! connection, writers wait on each other in short naps (see
//! `session::busy`). An in-memory database is one connection that sessions
//! share (SQLite cannot share a private in-memory database between
//! connections). `dateandtime` is stored as INTEGER microseconds since the
//! Unix epoch.
//!
//! `options.rs` parses the DSN, `session.rs` runs the benchmark's
//! statements, `kv.rs` the key/value steps, `maintain.rs` the wait step,
//! `stats.rs` reads the database's counters, `error.rs` maps its errors.

mod error;
mod kv;
mod maintain;
mod options;
mod session;
mod stats;
mod sysbench;

use crate::connect::{Connector, KvSession, ServerCounters, Session, SessionSpec, Sizes};
use crate::error::Result;
use crate::metrics::Setting;
use error::db_err;
use options::Place;
use rusqlite::{Connection, OpenFlags};
use session::{configure, Conn, SqliteSession, PRAGMAS};
use std::path::PathBuf;
use std::sync::{Arc, Mutex};

/// Where the database is, open: a file's path, or the one connection of an
/// in-memory database.
enum Location {
    File(PathBuf),
    Memory(Arc<Mutex<Connection>>),
}

/// The SQLite connector.
pub struct SqliteConnector {
    location: Location,
    target: String,
    spec: SessionSpec,
}

impl SqliteConnector {
    /// `rest` is what follows `sqlite:`: a path or `:memory:`.
    pub fn new(rest: &str) -> Result<Self> {
        let target = format!("sqlite:{rest}");
        let location = match rest.parse::<Place>()? {
            Place::Memory => {
                let conn = Connection::open_in_memory().map_err(|e| db_err(&target, "open", e))?;
                Location::Memory(Arc::new(Mutex::new(conn)))
            }
            Place::File(path) => {
                // Open once now so a bad path fails before any work.
                let mut conn = Connection::open_with_flags(&path, OpenFlags::default())
                    .map_err(|e| db_err(&target, &format!("cannot open {}", path.display()), e))?;
                configure(&mut conn, &target)?;
                Location::File(path)
            }
        };
        Ok(SqliteConnector {
            location,
            target,
            spec: SessionSpec::default(),
        })
    }

    /// A connection of this database (the shared one for `:memory:`).
    fn open_session(&self) -> Result<SqliteSession> {
        let (conn, interrupt) = match &self.location {
            Location::File(path) => {
                let mut conn = Connection::open(path).map_err(|e| db_err(&self.target, "open", e))?;
                configure(&mut conn, &self.target)?;
                let handle = conn.get_interrupt_handle();
                (Conn::Own(Box::new(conn)), handle)
            }
            Location::Memory(shared) => {
                let handle = shared.lock().unwrap_or_else(|p| p.into_inner()).get_interrupt_handle();
                (Conn::Shared(shared.clone()), handle)
            }
        };
        let interrupt = Arc::new(interrupt);
        Ok(SqliteSession::new(
            conn,
            Arc::new(move || interrupt.interrupt()),
            self.target.clone(),
            self.spec,
        ))
    }
}

impl Connector for SqliteConnector {
    fn dbms(&self) -> &'static str {
        "sqlite"
    }
    fn target(&self) -> String {
        self.target.clone()
    }
    fn version(&self) -> Result<String> {
        Ok(rusqlite::version().to_string())
    }
    fn settings(&self) -> Vec<(String, String)> {
        match self.location {
            Location::File(_) => PRAGMAS
                .iter()
                .map(|(k, v)| (k.to_string(), v.to_string()))
                .chain([("busy_handler".to_string(), "50us naps, up to 60 s".to_string())])
                .collect(),
            Location::Memory(_) => vec![("journal_mode".into(), "memory".into())],
        }
    }
    fn session(&self) -> Result<Box<dyn Session>> {
        Ok(Box::new(self.open_session()?))
    }
    fn set_spec(&mut self, spec: SessionSpec) {
        self.spec = spec;
    }
    fn configuration(&self) -> Result<Vec<Setting>> {
        const NAMES: [&str; 10] = [
            "journal_mode",
            "synchronous",
            "page_size",
            "cache_size",
            "mmap_size",
            "wal_autocheckpoint",
            "temp_store",
            "locking_mode",
            "auto_vacuum",
            "busy_timeout",
        ];
        let mut session = self.open_session()?;
        let mut out = Vec::new();
        for name in NAMES {
            let value: String = session.with("pragma", |c| {
                c.query_row(&format!("PRAGMA {name}"), [], |r| r.get::<_, rusqlite::types::Value>(0))
                    .map(|v| match v {
                        rusqlite::types::Value::Integer(i) => i.to_string(),
                        rusqlite::types::Value::Text(t) => t,
                        other => format!("{other:?}"),
                    })
            })?;
            out.push(Setting::server(name, value, "PRAGMA"));
        }
        out.push(Setting::server("sqlite_version", rusqlite::version(), "library"));
        out.push(Setting::server("busy_handler", "50us naps, up to 60 s", "ibench"));
        Ok(out)
    }
    fn kv_session(&self) -> Result<Box<dyn KvSession>> {
        Ok(Box::new(self.open_session()?))
    }
    fn sb_session(&self) -> Result<Box<dyn crate::connect::SbSession>> {
        Ok(Box::new(self.open_session()?))
    }
    fn counters(&self, _tables: &[String]) -> Result<Option<Box<dyn ServerCounters>>> {
        let Location::File(path) = &self.location else {
            return Ok(None);
        };
        let conn = Connection::open(path).map_err(|e| db_err(&self.target, "open", e))?;
        Ok(Some(Box::new(stats::SqliteStats {
            conn,
            path: path.clone(),
            target: self.target.clone(),
        })))
    }
    fn sizes(&self, _tables: &[String]) -> Sizes {
        let Location::File(path) = &self.location else {
            return Sizes::default();
        };
        let size = |suffix: &str| {
            let mut p = path.clone().into_os_string();
            p.push(suffix);
            std::fs::metadata(p).map(|m| m.len()).unwrap_or(0)
        };
        // The pages in use (the file less its free list) hold the tables and their indexes.
        let used = self.open_session().ok().and_then(|mut s| {
            s.with("page counts", |c| {
                let pragma = |name: &str| c.query_row(&format!("PRAGMA {name}"), [], |r| r.get::<_, i64>(0));
                Ok((pragma("page_count")? - pragma("freelist_count")?) * pragma("page_size")?)
            })
            .ok()
        });
        Sizes {
            database: Some(size("") + size("-wal")),
            tables: used.map(|b| b.max(0) as u64),
            datadir: None,
            note: None,
        }
    }
    fn data_path(&self) -> Option<PathBuf> {
        match &self.location {
            Location::File(path) => Some(path.clone()),
            Location::Memory(_) => None,
        }
    }
}
