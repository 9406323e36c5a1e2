//! `postgres://user:pass@host:port/db?sslmode=disable` (or the key=value
//! form `host=... user=... dbname=...`) — PostgreSQL through the `postgres`
//! crate, without TLS.
//!
//! The table has BIGINT (BIGSERIAL with server keys) primary key, TIMESTAMP
//! and VARCHAR(4000); the three indexes are CREATE INDEX; inserts are one
//! multi-row INSERT prepared once per batch size; range and point queries
//! are prepared; the wait step runs `VACUUM (ANALYZE)` on each table, then
//! `CHECKPOINT`.

use super::{Bounds, Connector, Session};
use crate::error::{Error, Result};
use crate::gen::{RangeQuery, Row, Rows, SecondaryIndex};
use postgres::config::Host;
use postgres::error::SqlState;
use postgres::types::ToSql;
use postgres::{Client, Config, NoTls, Statement};
use std::collections::HashMap;
use std::ops::Range;
use std::str::FromStr;
use std::time::{Duration, SystemTime, UNIX_EPOCH};

/// Connect timeout: an unreachable server is reported within seconds.
const CONNECT_TIMEOUT: Duration = Duration::from_secs(5);

/// The PostgreSQL connector.
pub struct PostgresConnector {
    config: Config,
    target: String,
}

fn describe(config: &Config) -> String {
    let host = config
        .get_hosts()
        .first()
        .map(|h| match h {
            Host::Tcp(name) => name.clone(),
            Host::Unix(path) => path.display().to_string(),
        })
        .unwrap_or_else(|| "localhost".into());
    let port = config.get_ports().first().copied().unwrap_or(5432);
    let user = config.get_user().unwrap_or("");
    let db = config.get_dbname().unwrap_or(user);
    format!("postgres://{user}@{host}:{port}/{db}")
}

/// Maps a server error, marking deadlocks and serialization failures retryable.
fn pg_err(target: &str, what: &str, e: postgres::Error) -> Error {
    let retry = matches!(e.code(), Some(c) if *c == SqlState::T_R_DEADLOCK_DETECTED || *c == SqlState::T_R_SERIALIZATION_FAILURE);
    let message = match e.as_db_error() {
        Some(db) => format!("{what}: {} ({})", db.message(), db.code().code()),
        None => format!("{what}: {e}"),
    };
    if retry {
        Error::retryable(target, message)
    } else {
        Error::database(target, message)
    }
}

impl PostgresConnector {
    /// Parses `dsn` (URL or key=value form) and checks that the server answers.
    pub fn new(dsn: &str) -> Result<Self> {
        let mut config = Config::from_str(dsn)
            .map_err(|e| Error::config("db", format!("{:?} is not a PostgreSQL DSN: {e}", super::redact(dsn))))?;
        config.connect_timeout(CONNECT_TIMEOUT).application_name("ibench");
        let connector = PostgresConnector {
            target: describe(&config),
            config,
        };
        // Connect once now: an unreachable server or a bad login fails before any work.
        connector.connect()?;
        Ok(connector)
    }

    fn connect(&self) -> Result<Client> {
        self.config.connect(NoTls).map_err(|e| {
            let user = self.config.get_user().unwrap_or("");
            let cause = match e.as_db_error() {
                Some(db) => format!("{} ({})", db.message(), db.code().code()),
                None => {
                    let mut text = e.to_string();
                    let mut source = std::error::Error::source(&e);
                    while let Some(s) = source {
                        text = format!("{text}: {s}");
                        source = s.source();
                    }
                    text
                }
            };
            Error::database(&self.target, format!("cannot connect as user {user:?}: {cause}"))
        })
    }
}

impl Connector for PostgresConnector {
    fn dbms(&self) -> &'static str {
        "postgres"
    }
    fn target(&self) -> String {
        self.target.clone()
    }
    fn version(&self) -> Result<String> {
        let mut c = self.connect()?;
        let row = c
            .query_one("SHOW server_version", &[])
            .map_err(|e| pg_err(&self.target, "version", e))?;
        Ok(row.get(0))
    }
    fn settings(&self) -> Vec<(String, String)> {
        vec![("tls".into(), "none".into())]
    }
    fn session(&self) -> Result<Box<dyn Session>> {
        Ok(Box::new(PostgresSession {
            client: self.connect()?,
            target: self.target.clone(),
            statements: HashMap::new(),
        }))
    }
    fn size_bytes(&self) -> Option<u64> {
        let mut c = self.connect().ok()?;
        let row = c.query_one("SELECT pg_database_size(current_database())", &[]).ok()?;
        Some(row.get::<_, i64>(0) as u64)
    }
    fn configuration(&self) -> Result<Vec<(String, String, String)>> {
        let mut c = self.connect()?;
        let rows = c
            .query(
                "SELECT name, setting, COALESCE(unit, ''), source FROM pg_settings ORDER BY name",
                &[],
            )
            .map_err(|e| pg_err(&self.target, "pg_settings", e))?;
        Ok(rows
            .iter()
            .map(|r| {
                let (setting, unit): (String, String) = (r.get(1), r.get(2));
                let value = if unit.is_empty() {
                    setting
                } else {
                    format!("{setting} {unit}")
                };
                (r.get(0), value, format!("pg_settings: {}", r.get::<_, String>(3)))
            })
            .collect())
    }
    fn server_processes(&self) -> Vec<&'static str> {
        let local = self.config.get_hosts().iter().all(|h| match h {
            Host::Tcp(name) => super::is_local(name),
            Host::Unix(_) => true,
        });
        if local {
            vec!["postgres"]
        } else {
            Vec::new()
        }
    }
}

struct PostgresSession {
    client: Client,
    target: String,
    statements: HashMap<String, Statement>,
}

fn timestamp(micros: i64) -> SystemTime {
    UNIX_EPOCH + Duration::from_micros(micros as u64)
}

impl PostgresSession {
    fn prepared(&mut self, sql: String) -> Result<Statement> {
        if let Some(s) = self.statements.get(&sql) {
            return Ok(s.clone());
        }
        let s = self
            .client
            .prepare(&sql)
            .map_err(|e| pg_err(&self.target, "prepare", e))?;
        self.statements.insert(sql, s.clone());
        Ok(s)
    }

    fn batch(&mut self, what: &str, sql: &str) -> Result<()> {
        self.client
            .batch_execute(sql)
            .map_err(|e| pg_err(&self.target, what, e))
    }
}

impl Session for PostgresSession {
    fn create_table(&mut self, table: &str, server_keys: bool) -> Result<()> {
        let key = if server_keys { "BIGSERIAL" } else { "BIGINT" };
        self.statements.clear();
        self.batch(
            "create table",
            &format!(
                "DROP TABLE IF EXISTS {table};
                 CREATE TABLE {table} (
                   transactionid {key} PRIMARY KEY,
                   dateandtime TIMESTAMP,
                   cashregisterid INT NOT NULL,
                   customerid INT NOT NULL,
                   productid INT NOT NULL,
                   price INT NOT NULL,
                   data VARCHAR(4000))"
            ),
        )
    }

    fn create_indexes(&mut self, table: &str, count: usize) -> Result<()> {
        for index in SecondaryIndex::ALL.iter().take(count) {
            let sql = format!(
                "CREATE INDEX {table}_{} ON {table} ({})",
                index.suffix(),
                index.columns().join(", ")
            );
            self.batch("create index", &sql)?;
        }
        Ok(())
    }

    fn insert(&mut self, table: &str, rows: &Rows, server_keys: bool) -> Result<()> {
        let n = rows.len();
        let per_row = if server_keys { 6 } else { 7 };
        // Keyed by shape, so the statement text is built once per batch size.
        let key = format!("insert {table} {n} {server_keys}");
        let stmt = match self.statements.get(&key) {
            Some(s) => s.clone(),
            None => {
                let cols = if server_keys {
                    "dateandtime, cashregisterid, customerid, productid, price, data"
                } else {
                    "transactionid, dateandtime, cashregisterid, customerid, productid, price, data"
                };
                let values: Vec<String> = (0..n)
                    .map(|r| {
                        let p: Vec<String> = (1..=per_row).map(|c| format!("${}", r * per_row + c)).collect();
                        format!("({})", p.join(","))
                    })
                    .collect();
                let s = self.prepared(format!("INSERT INTO {table} ({cols}) VALUES {}", values.join(",")))?;
                self.statements.insert(key, s.clone());
                s
            }
        };
        let times: Vec<SystemTime> = rows.dateandtime.iter().map(|&t| timestamp(t)).collect();
        let data: Vec<&str> = (0..n)
            .map(|i| {
                let b = &rows.data[rows.data_offsets[i] as usize..rows.data_offsets[i + 1] as usize];
                std::str::from_utf8(b).expect("data is ASCII")
            })
            .collect();
        let mut params: Vec<&(dyn ToSql + Sync)> = Vec::with_capacity(n * per_row);
        for i in 0..n {
            if !server_keys {
                params.push(&rows.transactionid[i]);
            }
            params.push(&times[i]);
            params.push(&rows.cashregisterid[i]);
            params.push(&rows.customerid[i]);
            params.push(&rows.productid[i]);
            params.push(&rows.price[i]);
            params.push(&data[i]);
        }
        self.client
            .execute(&stmt, &params)
            .map_err(|e| pg_err(&self.target, "insert", e))?;
        Ok(())
    }

    fn delete(&mut self, table: &str, keys: Range<u64>) -> Result<u64> {
        let stmt = self.prepared(format!(
            "DELETE FROM {table} WHERE transactionid >= $1 AND transactionid < $2"
        ))?;
        self.client
            .execute(&stmt, &[&(keys.start as i64), &(keys.end as i64)])
            .map_err(|e| pg_err(&self.target, "delete", e))
    }

    fn range_query(&mut self, table: &str, query: &RangeQuery, _indexed: bool) -> Result<usize> {
        let cols = query.index.columns().join(", ");
        let lead = query.index.columns()[0];
        let stmt = self.prepared(format!(
            "SELECT {cols} FROM {table} WHERE {lead} >= $1 ORDER BY {cols} LIMIT 10"
        ))?;
        let rows = self
            .client
            .query(&stmt, &[&query.lower])
            .map_err(|e| pg_err(&self.target, "range query", e))?;
        Ok(rows.len())
    }

    fn point_query(&mut self, table: &str, keys: &[u64]) -> Result<usize> {
        let marks: Vec<String> = (1..=keys.len()).map(|i| format!("${i}")).collect();
        let stmt = self.prepared(format!(
            "SELECT transactionid, productid, data FROM {table} WHERE transactionid IN ({})",
            marks.join(",")
        ))?;
        let keys: Vec<i64> = keys.iter().map(|&k| k as i64).collect();
        let params: Vec<&(dyn ToSql + Sync)> = keys.iter().map(|k| k as &(dyn ToSql + Sync)).collect();
        let rows = self
            .client
            .query(&stmt, &params)
            .map_err(|e| pg_err(&self.target, "point query", e))?;
        Ok(rows.len())
    }

    fn maintain(&mut self, tables: &[String]) -> Result<()> {
        for t in tables {
            self.batch("vacuum", &format!("VACUUM (ANALYZE) {t}"))?;
        }
        self.batch("checkpoint", "CHECKPOINT")
    }

    fn bounds(&mut self, table: &str) -> Result<Option<Bounds>> {
        let sql = format!("SELECT COUNT(*), MIN(transactionid), MAX(transactionid) FROM {table}");
        let row = self
            .client
            .query_one(&sql, &[])
            .map_err(|e| pg_err(&self.target, "bounds", e))?;
        Ok(Some(Bounds {
            count: row.get::<_, i64>(0) as u64,
            min: row.get::<_, Option<i64>>(1).map(|v| v as u64),
            max: row.get::<_, Option<i64>>(2).map(|v| v as u64),
        }))
    }

    fn rows(&mut self, table: &str, keys: &[u64]) -> Result<Vec<Row>> {
        let sql = format!(
            "SELECT transactionid, dateandtime, cashregisterid, customerid, productid, price, data
             FROM {table} WHERE transactionid = ANY($1) ORDER BY transactionid"
        );
        let keys: Vec<i64> = keys.iter().map(|&k| k as i64).collect();
        let rows = self
            .client
            .query(&sql, &[&keys])
            .map_err(|e| pg_err(&self.target, "read rows", e))?;
        Ok(rows
            .iter()
            .map(|r| {
                let t: SystemTime = r.get(1);
                Row {
                    transactionid: r.get(0),
                    dateandtime: t
                        .duration_since(UNIX_EPOCH)
                        .map(|d| d.as_micros() as i64)
                        .unwrap_or(i64::MIN),
                    cashregisterid: r.get(2),
                    customerid: r.get(3),
                    productid: r.get(4),
                    price: r.get(5),
                    data: r.get(6),
                }
            })
            .collect())
    }
}
