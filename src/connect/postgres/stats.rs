//! The server's own counters and gauges on PostgreSQL: `pg_stat_database`
//! for the database, `pg_stat_bgwriter`, `pg_stat_checkpointer` (17+) and
//! `pg_stat_wal` (14+) for the server, `pg_stat_user_tables` and
//! `pg_statio_user_tables` for the benchmark's tables; gauges of dead
//! tuples, WAL written, checkpoints and autovacuum workers. Where the
//! database has `pg_stat_statements` (loaded at the server's start and
//! created in the database), the statements' calls and rows by their first
//! word (select, update, begin, commit, ...): what a sysbench event runs,
//! as the server counts it.
//!
//! Each view is read with the simple query protocol, whose values are
//! text: every numeric column becomes a counter, whatever the version adds.

use super::error::pg_err;
use crate::connect::{ServerCounters, KV_TABLE};
use crate::error::Result;
use crate::metrics::{number, Counter, Gauge, NamedThread, ThreadKind, WaitReading};
use postgres::{Client, SimpleQueryMessage};
use std::time::{Duration, Instant};

/// Columns that are identifiers, not counters.
const IDS: [&str; 3] = ["datid", "relid", "pid"];

/// How long a step's end waits for its sessions' backends to exit (and so
/// flush their statistics) before reading anyway.
const FLUSH_WAIT: Duration = Duration::from_secs(5);

/// A connection reading the server's counters.
pub(super) struct PostgresStats {
    client: Client,
    target: String,
    /// The application_name the connector's other sessions carry.
    sessions: String,
    /// The benchmark's tables, quoted for `IN (...)`.
    tables: String,
    /// The server-wide views this server has.
    views: Vec<&'static str>,
    /// Whether `pg_stat_statements` can be read in this database.
    statements: bool,
}

/// A row of a simple query: (column, value as text) pairs.
type TextRow = Vec<(String, Option<String>)>;

/// `s` as an SQL string literal.
fn literal(s: &str) -> String {
    format!("'{}'", s.replace('\'', "''"))
}

impl PostgresStats {
    pub(super) fn new(mut client: Client, target: String, sessions: String, tables: &[String]) -> Result<Self> {
        let mut names: Vec<String> = tables.iter().map(|t| literal(t)).collect();
        names.push(literal(KV_TABLE));
        let mut views = Vec::new();
        for view in ["pg_stat_bgwriter", "pg_stat_checkpointer", "pg_stat_wal"] {
            let row = client
                .query_one("SELECT to_regclass($1) IS NOT NULL", &[&format!("pg_catalog.{view}")])
                .map_err(|e| pg_err(&target, "pg_stat views", e))?;
            if row.get::<_, bool>(0) {
                views.push(view);
            }
        }
        // Readable only when created here and loaded at start: asked, then tried
        // (a try alone puts an ERROR in the server's log at every run).
        let created = client
            .query_one("SELECT to_regclass('pg_stat_statements') IS NOT NULL", &[])
            .map_err(|e| pg_err(&target, "pg_stat_statements", e))?
            .get::<_, bool>(0);
        let statements = created && client.simple_query("SELECT 1 FROM pg_stat_statements LIMIT 1").is_ok();
        Ok(PostgresStats {
            client,
            target,
            sessions,
            tables: names.join(", "),
            views,
            statements,
        })
    }

    /// `pg_stat_statements`' calls and rows by the statements' first word,
    /// this database's, the counter reader's own and ibench's catalog
    /// queries (they name `pg_`) left out. The usual kinds are there from
    /// the start (at 0), so a step's delta counts the first of a kind.
    fn statement_counts(&mut self, out: &mut Vec<Counter>) -> Result<()> {
        const KINDS: [&str; 6] = ["select", "insert", "update", "delete", "begin", "commit"];
        let mut totals: std::collections::BTreeMap<String, [f64; 2]> =
            KINDS.iter().map(|k| (k.to_string(), [0.0; 2])).collect();
        let sql = "SELECT lower(split_part(btrim(query), ' ', 1)) AS kind, sum(calls)::bigint AS calls, sum(rows)::bigint AS rows
             FROM pg_stat_statements
             WHERE dbid = (SELECT oid FROM pg_database WHERE datname = current_database()) AND query !~* 'pg_'
             GROUP BY 1";
        for row in self.rows(sql)? {
            let value = |name: &str| {
                row.iter()
                    .find(|(c, _)| c == name)
                    .and_then(|(_, v)| v.as_deref())
                    .and_then(number)
            };
            let Some(kind) = row.iter().find(|(c, _)| c == "kind").and_then(|(_, v)| v.clone()) else {
                continue;
            };
            totals.insert(kind, [value("calls").unwrap_or(0.0), value("rows").unwrap_or(0.0)]);
        }
        for (kind, [calls, rows]) in totals {
            out.push(Counter::number("pg_stat_statements", format!("{kind}.calls"), calls));
            out.push(Counter::number("pg_stat_statements", format!("{kind}.rows"), rows));
        }
        Ok(())
    }

    /// The rows of `sql`, each as (column, text) pairs.
    fn rows(&mut self, sql: &str) -> Result<Vec<TextRow>> {
        let messages = self
            .client
            .simple_query(sql)
            .map_err(|e| pg_err(&self.target, sql, e))?;
        Ok(messages
            .iter()
            .filter_map(|m| match m {
                SimpleQueryMessage::Row(row) => Some(
                    row.columns()
                        .iter()
                        .enumerate()
                        .map(|(i, c)| (c.name().to_string(), row.get(i).map(str::to_string)))
                        .collect(),
                ),
                _ => None,
            })
            .collect())
    }

    /// Every numeric column of `sql`'s rows, named `<prefix column>.<column>`
    /// when `prefix` names one (the table's name), else by the column.
    fn numeric(&mut self, source: &'static str, sql: &str, prefix: Option<&str>, out: &mut Vec<Counter>) -> Result<()> {
        for row in self.rows(sql)? {
            let key = prefix.and_then(|p| row.iter().find(|(c, _)| c == p).and_then(|(_, v)| v.clone()));
            for (column, value) in &row {
                if IDS.contains(&column.as_str()) {
                    continue;
                }
                if let Some(v) = value.as_deref().and_then(number) {
                    let name = match &key {
                        Some(k) => format!("{k}.{column}"),
                        None => column.clone(),
                    };
                    out.push(Counter::number(source, name, v));
                }
            }
        }
        Ok(())
    }

    /// Waits until the connector's other sessions have exited: a backend
    /// flushes its statistics as it exits, before it leaves pg_stat_activity.
    fn await_sessions(&mut self) -> Result<()> {
        let started = Instant::now();
        loop {
            let row = self
                .client
                .query_one(
                    "SELECT count(*) FROM pg_stat_activity WHERE application_name = $1 AND pid <> pg_backend_pid()",
                    &[&self.sessions],
                )
                .map_err(|e| pg_err(&self.target, "pg_stat_activity", e))?;
            if row.get::<_, i64>(0) == 0 || started.elapsed() > FLUSH_WAIT {
                return Ok(());
            }
            std::thread::sleep(Duration::from_millis(5));
        }
    }
}

impl ServerCounters for PostgresStats {
    fn counters(&mut self, _at_end: bool) -> Result<Vec<Counter>> {
        // Before a step too: the sessions that created its tables count before it.
        self.await_sessions()?;
        let mut out = Vec::new();
        self.numeric(
            "pg_stat_database",
            "SELECT * FROM pg_stat_database WHERE datname = current_database()",
            None,
            &mut out,
        )?;
        for view in self.views.clone() {
            self.numeric(view, &format!("SELECT * FROM {view}"), None, &mut out)?;
        }
        let tables = self.tables.clone();
        for view in ["pg_stat_user_tables", "pg_statio_user_tables"] {
            let sql = format!("SELECT * FROM {view} WHERE relname IN ({tables}) AND schemaname = current_schema()");
            self.numeric(view, &sql, Some("relname"), &mut out)?;
        }
        if self.statements {
            self.statement_counts(&mut out)?;
        }
        Ok(out)
    }

    /// Every process of the server by its pid: `pg_stat_activity`'s
    /// `backend_type` (client backend, checkpointer, walwriter, autovacuum
    /// worker, ...); this reader's own backend is ibench's monitor.
    fn thread_roles(&mut self) -> Result<Vec<NamedThread>> {
        let rows = self
            .client
            .query(
                "SELECT pid, backend_type, pid = pg_backend_pid(), application_name = $1 FROM pg_stat_activity",
                &[&self.sessions],
            )
            .map_err(|e| pg_err(&self.target, "pg_stat_activity", e))?;
        Ok(rows
            .iter()
            .filter_map(|row| {
                let (pid, backend_type): (Option<i32>, Option<String>) = (row.get(0), row.get(1));
                let (mine, ours): (Option<bool>, Option<bool>) = (row.get(2), row.get(3));
                let backend_type = backend_type.unwrap_or_default();
                let (kind, role) = match (mine, ours, backend_type.as_str()) {
                    (Some(true), ..) => (ThreadKind::Monitor, "ibench monitor".to_string()),
                    (_, Some(true), "client backend") => (ThreadKind::Foreground, backend_type),
                    // Someone else's session: serving clients, not ibench's.
                    (_, _, "client backend") => (ThreadKind::Foreground, "other clients".to_string()),
                    _ => (ThreadKind::Background, backend_type),
                };
                Some(NamedThread { id: pid?, role, kind })
            })
            .collect())
    }

    fn wait_source(&mut self) -> Option<std::result::Result<&'static str, String>> {
        Some(Ok("pg_stat_activity"))
    }

    /// The wait event of each of the run's sessions running a statement
    /// now (`CPU` when it waits on nothing): `pg_stat_activity`, sampled.
    fn waits(&mut self) -> Result<WaitReading> {
        let rows = self
            .client
            .query(
                "SELECT COALESCE(wait_event_type || ':' || wait_event, 'CPU') FROM pg_stat_activity
                 WHERE application_name = $1 AND state = 'active' AND pid <> pg_backend_pid()",
                &[&self.sessions],
            )
            .map_err(|e| pg_err(&self.target, "pg_stat_activity", e))?;
        Ok(WaitReading::Sampled(rows.iter().map(|r| r.get(0)).collect()))
    }

    fn gauges(&mut self) -> Result<Vec<Gauge>> {
        let sql = format!(
            "SELECT (SELECT COALESCE(SUM(n_dead_tup), 0) FROM pg_stat_user_tables
                     WHERE relname IN ({tables}) AND schemaname = current_schema())::float8,
                    (SELECT COALESCE(SUM(n_live_tup), 0) FROM pg_stat_user_tables
                     WHERE relname IN ({tables}) AND schemaname = current_schema())::float8,
                    CASE WHEN pg_is_in_recovery() THEN NULL
                         ELSE pg_wal_lsn_diff(pg_current_wal_lsn(), '0/0')::float8 END,
                    (SELECT count(*) FROM pg_stat_activity WHERE backend_type = 'checkpointer'
                     AND wait_event IS DISTINCT FROM 'CheckpointerMain')::float8,
                    (SELECT count(*) FROM pg_stat_activity WHERE backend_type = 'autovacuum worker')::float8",
            tables = self.tables
        );
        let row = self
            .client
            .query_one(sql.as_str(), &[])
            .map_err(|e| pg_err(&self.target, "gauges", e))?;
        let mut out = vec![
            Gauge::level("postgres", "dead_tuples", row.get(0)),
            Gauge::level("postgres", "live_tuples", row.get(1)),
        ];
        if let Some(wal) = row.get::<_, Option<f64>>(2) {
            out.push(Gauge::rate("postgres", "wal_bytes", wal));
        }
        out.push(Gauge::level("postgres", "checkpoint_in_progress", row.get(3)));
        out.push(Gauge::level("postgres", "autovacuum_workers", row.get(4)));
        Ok(out)
    }
}
