//! The server's own counters and gauges on MySQL and MariaDB: `SHOW GLOBAL
//! STATUS` (every numeric variable, MyRocks' `rocksdb_*` included), the
//! enabled `information_schema.innodb_metrics`, the engine's status text at
//! a step's end; gauges from the status variables (MySQL 8's missing ones
//! from `innodb_metrics`) and, for MyRocks, its column-family tables.

use super::error::my_err;
use crate::connect::sql::Engine;
use crate::connect::ServerCounters;
use crate::error::Result;
use crate::metrics::{number, Counter, Gauge, NamedThread, ThreadKind, WaitReading};
use mysql::prelude::Queryable;
use mysql::Conn;

/// A connection reading the server's counters.
pub(super) struct MysqlStats {
    pub(super) conn: Conn,
    pub(super) engine: Engine,
    pub(super) target: String,
    /// The query listing the enabled InnoDB metrics (MariaDB has an ENABLED
    /// column, MySQL 8 a STATUS one), found on first use; None when neither works.
    metrics: Option<Option<&'static str>>,
}

const METRICS_QUERIES: [&str; 2] = [
    "SELECT NAME, COUNT FROM information_schema.INNODB_METRICS WHERE ENABLED = 1",
    "SELECT NAME, COUNT FROM information_schema.INNODB_METRICS WHERE STATUS = 'enabled'",
];

/// InnoDB's gauges: (status variable, gauge, innodb_metrics fallback).
const INNODB_GAUGES: [(&str, &str, Option<&str>); 4] = [
    (
        "Innodb_history_list_length",
        "history_list_length",
        Some("trx_rseg_history_len"),
    ),
    ("Innodb_buffer_pool_pages_dirty", "dirty_pages", None),
    (
        "Innodb_checkpoint_age",
        "checkpoint_age_bytes",
        Some("log_lsn_checkpoint_age"),
    ),
    ("Innodb_buffer_pool_pages_total", "buffer_pool_pages", None),
];

/// InnoDB's cumulative counts recorded as rates per interval.
const INNODB_RATES: [(&str, &str); 2] = [
    ("Innodb_os_log_written", "redo_bytes"),
    ("Innodb_data_written", "data_bytes_written"),
];

impl MysqlStats {
    pub(super) fn new(conn: Conn, engine: Engine, target: String) -> Self {
        MysqlStats {
            conn,
            engine,
            target,
            metrics: None,
        }
    }

    fn status(&mut self, sql: &str) -> Result<Vec<(String, f64)>> {
        let rows: Vec<(String, String)> = self.conn.query(sql).map_err(|e| my_err(&self.target, sql, e))?;
        Ok(rows
            .into_iter()
            .filter_map(|(name, value)| Some((name, number(&value)?)))
            .collect())
    }

    /// The enabled InnoDB metrics (none when the table is not there).
    fn innodb_metrics(&mut self) -> Vec<(String, f64)> {
        let candidates: Vec<&'static str> = match self.metrics {
            Some(Some(q)) => vec![q],
            Some(None) => return Vec::new(),
            None => METRICS_QUERIES.to_vec(),
        };
        for q in candidates {
            if let Ok(rows) = self.conn.query::<(String, i64), _>(q) {
                self.metrics = Some(Some(q));
                return rows.into_iter().map(|(n, v)| (n, v as f64)).collect();
            }
        }
        self.metrics = Some(None);
        Vec::new()
    }

    /// `SHOW ENGINE <engine> STATUS` as one text (its rows' type, name and
    /// status); None without the PROCESS privilege or the engine.
    fn engine_status(&mut self) -> Option<String> {
        let sql = match self.engine {
            Engine::InnoDb => "SHOW ENGINE INNODB STATUS",
            Engine::RocksDb => "SHOW ENGINE ROCKSDB STATUS",
        };
        let rows: Vec<(String, String, String)> = self.conn.query(sql).ok()?;
        let text: Vec<String> = rows
            .into_iter()
            .map(|(kind, name, status)| {
                if name.is_empty() {
                    status
                } else {
                    format!("== {kind} {name}\n{status}")
                }
            })
            .collect();
        Some(text.join("\n"))
    }

    /// MyRocks' gauges, summed over column families: L0 files, immutable
    /// memtables, pending flushes and compactions.
    fn myrocks_gauges(&mut self) -> Result<Vec<Gauge>> {
        let sql = "SELECT 'l0_files', COALESCE(SUM(VALUE), 0) FROM information_schema.ROCKSDB_COMPACTION_STATS
                   WHERE LEVEL = 'L0' AND TYPE = 'NumFiles'
                   UNION ALL SELECT LOWER(STAT_TYPE), SUM(VALUE) FROM information_schema.ROCKSDB_CFSTATS
                   WHERE STAT_TYPE IN ('NUM_IMMUTABLE_MEM_TABLE', 'MEM_TABLE_FLUSH_PENDING', 'COMPACTION_PENDING',
                                       'CUR_SIZE_ALL_MEM_TABLES')
                   GROUP BY STAT_TYPE";
        let rows: Vec<(String, f64)> = self
            .conn
            .query(sql)
            .map_err(|e| my_err(&self.target, "MyRocks gauges", e))?;
        let name = |n: &str| -> Option<&'static str> {
            Some(match n {
                "l0_files" => "l0_files",
                "num_immutable_mem_table" => "immutable_memtables",
                "mem_table_flush_pending" => "flush_pending",
                "compaction_pending" => "compaction_pending",
                "cur_size_all_mem_tables" => "memtable_bytes",
                _ => return None,
            })
        };
        let mut out: Vec<Gauge> = rows
            .iter()
            .filter_map(|(n, v)| Some(Gauge::level("myrocks", name(n)?, *v)))
            .collect();
        let stall = self.status("SHOW GLOBAL STATUS LIKE 'rocksdb_stall_micros'")?;
        out.extend(
            stall
                .into_iter()
                .map(|(_, v)| Gauge::rate("myrocks", "stall_micros", v)),
        );
        Ok(out)
    }
}

impl ServerCounters for MysqlStats {
    /// performance_schema's wait summaries, when it is on.
    fn wait_source(&mut self) -> Option<std::result::Result<&'static str, String>> {
        let on: Option<String> = self
            .conn
            .query_first("SELECT CAST(@@performance_schema AS CHAR)")
            .ok()
            .flatten();
        Some(match on.as_deref() {
            Some("1" | "ON") => Ok("performance_schema"),
            _ => Err("performance_schema is off on this server, so it reports no waits (performance_schema = ON in its configuration)".into()),
        })
    }

    /// The server's threads by their operating-system ids:
    /// `performance_schema.threads` where it is on (every thread, named:
    /// `innodb/page_flush_coordinator_thread`, its type), else MariaDB's
    /// processlist (its `TID` column: the connections' threads alone; MySQL's
    /// has none). This reader's own connection is ibench's monitor.
    fn thread_roles(&mut self) -> Result<Vec<NamedThread>> {
        let kind = |type_: &str, mine: bool| match (mine, type_) {
            (true, _) => ThreadKind::Monitor,
            (false, "FOREGROUND") => ThreadKind::Foreground,
            _ => ThreadKind::Background,
        };
        // A daemon with a session (the event scheduler, MySQL's GTID table
        // compressor) is FOREGROUND to performance_schema; it serves no client.
        let threads: std::result::Result<Vec<(i64, String, String, i64)>, _> = self.conn.query(
            "SELECT THREAD_OS_ID, NAME,
                    IF(TYPE = 'FOREGROUND' AND IFNULL(PROCESSLIST_COMMAND, '') <> 'Daemon', 'FOREGROUND', 'BACKGROUND'),
                    IFNULL(PROCESSLIST_ID = CONNECTION_ID(), 0)
             FROM performance_schema.threads WHERE THREAD_OS_ID IS NOT NULL",
        );
        match threads {
            Ok(rows) if !rows.is_empty() => {
                return Ok(rows
                    .into_iter()
                    .map(|(id, name, type_, mine)| NamedThread {
                        id: id as i32,
                        role: match mine {
                            1 => "ibench monitor".into(),
                            _ => name
                                .strip_prefix("thread/")
                                .unwrap_or(&name)
                                .replace("sql/one_connection", "connection"),
                        },
                        kind: kind(&type_, mine == 1),
                    })
                    .collect())
            }
            _ => {}
        }
        let connections: std::result::Result<Vec<(i64, i64, String)>, _> = self
            .conn
            .query("SELECT TID, ID = CONNECTION_ID(), USER FROM information_schema.PROCESSLIST WHERE TID IS NOT NULL");
        Ok(connections
            .unwrap_or_default()
            .into_iter()
            .map(|(id, mine, user)| {
                let system = user == "system user" || user == "event_scheduler";
                NamedThread {
                    id: id as i32,
                    role: match (mine, system) {
                        (1, _) => "ibench monitor".into(),
                        (_, true) => user,
                        _ => "connection".into(),
                    },
                    kind: kind(if system { "BACKGROUND" } else { "FOREGROUND" }, mine == 1),
                }
            })
            .collect())
    }

    /// Every wait event's total since the server started:
    /// `performance_schema.events_waits_summary_global_by_event_name`
    /// (picoseconds, read as microseconds).
    fn waits(&mut self) -> Result<WaitReading> {
        let rows: Vec<(String, f64, u64)> = self
            .conn
            .query(
                "SELECT EVENT_NAME, SUM_TIMER_WAIT / 1000000, COUNT_STAR
                 FROM performance_schema.events_waits_summary_global_by_event_name WHERE COUNT_STAR > 0",
            )
            .map_err(|e| my_err(&self.target, "performance_schema waits", e))?;
        Ok(WaitReading::Cumulative(rows))
    }

    fn counters(&mut self, at_end: bool) -> Result<Vec<Counter>> {
        let mut out: Vec<Counter> = self
            .status("SHOW GLOBAL STATUS")?
            .into_iter()
            .map(|(n, v)| Counter::number("global_status", n, v))
            .collect();
        out.extend(
            self.innodb_metrics()
                .into_iter()
                .map(|(n, v)| Counter::number("innodb_metrics", n, v)),
        );
        if at_end {
            if let Some(text) = self.engine_status() {
                let source = match self.engine {
                    Engine::InnoDb => "innodb_status",
                    Engine::RocksDb => "rocksdb_status",
                };
                out.push(Counter::text(source, "status", text));
            }
        }
        Ok(out)
    }

    fn gauges(&mut self) -> Result<Vec<Gauge>> {
        let names: Vec<String> = INNODB_GAUGES
            .iter()
            .map(|g| g.0)
            .chain(INNODB_RATES.iter().map(|r| r.0))
            .map(|n| format!("'{n}'"))
            .collect();
        let status = self.status(&format!(
            "SHOW GLOBAL STATUS WHERE Variable_name IN ({})",
            names.join(", ")
        ))?;
        let find = |name: &str| status.iter().find(|(n, _)| n.eq_ignore_ascii_case(name)).map(|x| x.1);
        let needs_metrics = INNODB_GAUGES.iter().any(|g| g.2.is_some() && find(g.0).is_none());
        let metrics = if needs_metrics {
            self.innodb_metrics()
        } else {
            Vec::new()
        };
        let mut out = Vec::new();
        for (var, gauge, fallback) in INNODB_GAUGES {
            let from_metrics = fallback.and_then(|m| metrics.iter().find(|(n, _)| n == m).map(|x| x.1));
            if let Some(v) = find(var).or(from_metrics) {
                out.push(Gauge::level("innodb", gauge, v));
            }
        }
        for (var, gauge) in INNODB_RATES {
            if let Some(v) = find(var) {
                out.push(Gauge::rate("innodb", gauge, v));
            }
        }
        if self.engine == Engine::RocksDb {
            out.extend(self.myrocks_gauges()?);
        }
        Ok(out)
    }
}
