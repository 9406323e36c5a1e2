//! The sysbench suite's SQL, in one place: its table, the load's insert,
//! the index on `k`, each statement of [`SbStatement`] for each dialect
//! (the differences named: placeholders, AUTO_INCREMENT or SERIAL or the
//! rowid, the engine clause, the insert's id), and the reads verify makes.
//!
//! [`SbSession`] runs them, written once over each connector's few
//! primitives ([`SqlConn`]): each statement prepared once per session,
//! table and kind (server-side, as the suite's scripts prepare them), or
//! sent as text with its values in it (`statements = "literal"`, sysbench's
//! `--db-ps-mode=disable`); scan and insert always as text, as their
//! scripts send them. A statement the server cannot prepare (MySQL's error
//! 1295) is sent as text, as sysbench falls back to emulation.

use super::sql::{Dialect, Engine};
use super::{Bounds, Session};
use crate::error::{Error, Result};
use crate::gen::{SbRows, SbStatement};
use std::fmt::Write;

/// A value bound to a statement's parameter.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum SqlValue<'a> {
    Int(i64),
    /// ASCII text (the generated digits and dashes).
    Text(&'a [u8]),
}

/// A statement's parameters, on the stack up to the suite's usual four
/// (an allocation and a free per statement were a tenth of the client's
/// own CPU); the IN lists' hundreds on the heap.
pub type SqlValues<'a> = smallvec::SmallVec<[SqlValue<'a>; 4]>;

/// Rows per multi-row insert of the load: sysbench's 512 KB of text
/// (`BULK_PACKET_SIZE`) at ~200 bytes a row.
pub const LOAD_ROWS_PER_INSERT: usize = 2500;

/// A sysbench table's name: `sbtest1`, ...
pub fn table_name(table: u32) -> String {
    format!("sbtest{table}")
}

/// One row read back (verify): id, k, c, pad (padding spaces trimmed).
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct SbRowRead {
    pub id: u64,
    pub k: i64,
    pub c: String,
    pub pad: String,
}

/// What a table holds before a run that does not load it.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct SbTableFacts {
    /// It exists with the suite's columns (id, k, c, pad).
    pub schema: bool,
    /// Its index on `k` (`k_N`) exists.
    pub k_index: bool,
}

/// A session of the sysbench family: what its steps ask of a database.
pub trait SbSession: Session {
    /// Drops `sbtestN` if it exists and creates it empty, primary key only.
    fn sb_create(&mut self, table: u32) -> Result<()>;
    /// Inserts `rows` (ids given by the server, in order) in one statement
    /// (autocommit); returns rows inserted.
    fn sb_load(&mut self, table: u32, rows: &SbRows) -> Result<u64>;
    /// Creates the index on `k`.
    fn sb_create_index(&mut self, table: u32) -> Result<()>;
    /// Runs `stmt` on table `table` with `params`: rows returned (queries)
    /// or changed (writes).
    fn sb_run(&mut self, stmt: SbStatement, table: u32, params: &[SqlValue<'_>]) -> Result<u64>;
    /// Undoes the open transaction after a failed statement of an event.
    fn sb_rollback(&mut self) -> Result<()>;
    /// Whether the table has the suite's schema and its index on k.
    fn sb_facts(&mut self, table: u32) -> Result<SbTableFacts>;
    /// The rows with these ids, in id order.
    fn sb_rows(&mut self, table: u32, ids: &[u64]) -> Result<Vec<SbRowRead>>;
    /// The smallest and largest id (one row from each end of the primary
    /// key), and the row count when `count` (a full scan).
    fn sb_bounds(&mut self, table: u32, count: bool) -> Result<Bounds>;
}

/// Prepared statements of a session: by (table, statement), the handle its
/// connector gave them; and a buffer of parameters.
#[derive(Default)]
pub(crate) struct SbCache {
    handles: std::collections::HashMap<(u32, SbStatement), usize, foldhash::fast::FixedState>,
    loads: std::collections::HashMap<(u32, usize), usize, foldhash::fast::FixedState>,
}

/// What a connector's session gives the sysbench family: statements
/// prepared and run with [`SqlValue`] parameters, or run as text.
pub(crate) trait SqlConn: Session {
    /// The SQL it speaks.
    fn sql_dialect(&self) -> &Dialect;
    /// True when statements go as text with their values in them.
    fn literal(&self) -> bool;
    /// The session's prepared sysbench statements.
    fn sb_cache(&mut self) -> &mut SbCache;
    /// Prepares `sql` (server-side where the server can; else it is
    /// remembered and sent as text); its handle.
    fn prepare_sql(&mut self, sql: &str) -> Result<usize>;
    /// Runs prepared statement `handle`: rows returned or changed.
    fn execute_prepared(&mut self, handle: usize, params: &[SqlValue<'_>]) -> Result<u64>;
    /// Runs `sql` as text: rows returned or changed.
    fn execute_text(&mut self, sql: &str) -> Result<u64>;
    /// Runs `sql` as text: its rows, as text.
    fn text_rows(&mut self, sql: &str) -> Result<Vec<Vec<Option<String>>>>;
    /// Forgets (and closes) every statement it prepared: DDL may drop their table.
    fn forget_prepared(&mut self) -> Result<()>;
    /// False for a database that keeps nothing (null): its tables have
    /// every index, and no rows to read back.
    fn keeps_rows(&self) -> bool {
        true
    }
}

impl Dialect {
    /// Placeholder `i` (from 1), or with `values`, value `i` written as SQL.
    fn value_or_mark(&self, out: &mut String, i: usize, values: Option<&[SqlValue<'_>]>) {
        match values {
            Some(v) => match v[i - 1] {
                SqlValue::Int(n) => {
                    let _ = write!(out, "{n}");
                }
                SqlValue::Text(t) => {
                    out.push('\'');
                    for &b in t {
                        if b == b'\'' {
                            out.push('\'');
                        }
                        out.push(b as char);
                    }
                    out.push('\'');
                }
            },
            None => match self {
                Dialect::Postgres => {
                    let _ = write!(out, "${i}");
                }
                _ => out.push('?'),
            },
        }
    }

    /// Marks (or values) `first .. first + n`, comma-separated.
    fn list(&self, out: &mut String, first: usize, n: usize, values: Option<&[SqlValue<'_>]>) {
        for i in first..first + n {
            if i > first {
                out.push_str(", ");
            }
            self.value_or_mark(out, i, values);
        }
    }

    /// Drops table `table` and creates it as oltp_common.lua does: `id` the
    /// auto-incremented primary key (AUTO_INCREMENT, SERIAL, SQLite's
    /// rowid), `k` INTEGER, `c` CHAR(120), `pad` CHAR(60).
    pub(crate) fn sb_create(&self, table: u32) -> [String; 2] {
        let t = table_name(table);
        let id = match self {
            Dialect::Mysql { .. } => "INTEGER NOT NULL AUTO_INCREMENT",
            Dialect::Postgres => "SERIAL",
            // INTEGER PRIMARY KEY is the rowid: an insert without it gets max + 1.
            Dialect::Sqlite => "INTEGER NOT NULL",
        };
        let engine = match self {
            Dialect::Mysql { engine, options } => format!(
                " ENGINE = {} {options}",
                match engine {
                    Engine::InnoDb => "innodb",
                    Engine::RocksDb => "rocksdb",
                }
            ),
            _ => String::new(),
        };
        [
            format!("DROP TABLE IF EXISTS {t}"),
            format!(
                "CREATE TABLE {t}(\n  id {id},\n  k INTEGER DEFAULT '0' NOT NULL,\n  c CHAR(120) DEFAULT '' NOT NULL,\n  pad CHAR(60) DEFAULT '' NOT NULL,\n  PRIMARY KEY (id)\n){engine}"
            ),
        ]
    }

    /// The load's insert of `rows` rows, without id (the server numbers them).
    pub(crate) fn sb_load(&self, table: u32, rows: usize) -> String {
        let mut out = format!("INSERT INTO {}(k, c, pad) VALUES ", table_name(table));
        for r in 0..rows {
            if r > 0 {
                out.push(',');
            }
            out.push('(');
            self.list(&mut out, 3 * r + 1, 3, None);
            out.push(')');
        }
        out
    }

    /// The index on `k`.
    pub(crate) fn sb_create_index(&self, table: u32) -> String {
        format!("CREATE INDEX k_{table} ON {}(k)", table_name(table))
    }

    /// Statement `stmt` on table `table`: placeholders, or with `values`
    /// the values in the text.
    pub(crate) fn sb_statement(&self, stmt: SbStatement, table: u32, values: Option<&[SqlValue<'_>]>) -> String {
        use SbStatement as S;
        let t = table_name(table);
        let mut out = String::with_capacity(64);
        let range = |out: &mut String, head: &str, tail: &str| {
            let _ = write!(out, "{head} FROM {t} WHERE id BETWEEN ");
            self.value_or_mark(out, 1, values);
            out.push_str(" AND ");
            self.value_or_mark(out, 2, values);
            out.push_str(tail);
        };
        match stmt {
            S::PointSelect => {
                let _ = write!(out, "SELECT c FROM {t} WHERE id=");
                self.value_or_mark(&mut out, 1, values);
            }
            S::SimpleRange => range(&mut out, "SELECT c", ""),
            S::SumRange => range(&mut out, "SELECT SUM(k)", ""),
            S::OrderRange => range(&mut out, "SELECT c", " ORDER BY c"),
            S::DistinctRange => range(&mut out, "SELECT DISTINCT c", " ORDER BY c"),
            S::CountRange => range(&mut out, "SELECT count(c)", ""),
            S::IndexUpdate => {
                let _ = write!(out, "UPDATE {t} SET k=k+1 WHERE id=");
                self.value_or_mark(&mut out, 1, values);
            }
            S::NonIndexUpdate => {
                let _ = write!(out, "UPDATE {t} SET c=");
                self.value_or_mark(&mut out, 1, values);
                out.push_str(" WHERE id=");
                self.value_or_mark(&mut out, 2, values);
            }
            S::Delete => {
                let _ = write!(out, "DELETE FROM {t} WHERE id=");
                self.value_or_mark(&mut out, 1, values);
            }
            S::Insert => {
                let _ = write!(out, "INSERT INTO {t} (id, k, c, pad) VALUES (");
                self.list(&mut out, 1, 4, values);
                out.push(')');
            }
            S::InlistSelect(n) => {
                let _ = write!(out, "SELECT c FROM {t} WHERE id IN (");
                self.list(&mut out, 1, n as usize, values);
                out.push(')');
            }
            S::InlistUpdate(n) => {
                let _ = write!(out, "UPDATE {t} set c=");
                self.value_or_mark(&mut out, 1, values);
                out.push_str(" WHERE id IN (");
                self.list(&mut out, 2, n as usize, values);
                out.push(')');
            }
            S::Points { on_k, covered, n } => {
                let col = if on_k { "k" } else { "id" };
                let cols = if covered { col.to_string() } else { format!("{col}, c") };
                let _ = write!(out, "SELECT {cols} FROM {t} WHERE {col} IN (");
                self.list(&mut out, 1, n as usize, values);
                out.push(')');
            }
            S::CoveredRange { on_k, covered } => {
                let col = if on_k { "k" } else { "id" };
                let cols = if covered { col.to_string() } else { format!("{col}, c") };
                let _ = write!(out, "SELECT {cols} FROM {t} WHERE {col} BETWEEN ");
                self.value_or_mark(&mut out, 1, values);
                out.push_str(" AND ");
                self.value_or_mark(&mut out, 2, values);
            }
            S::KPoints(n) => {
                let _ = write!(out, "SELECT id, k, c, pad FROM {t} WHERE k IN (");
                self.list(&mut out, 1, n as usize, values);
                out.push(')');
            }
            S::KRanges { n, .. } => {
                let _ = write!(out, "SELECT count(k) FROM {t} WHERE ");
                for r in 0..n as usize {
                    if r > 0 {
                        out.push_str(" OR ");
                    }
                    out.push_str("k BETWEEN ");
                    self.value_or_mark(&mut out, 2 * r + 1, values);
                    out.push_str(" AND ");
                    self.value_or_mark(&mut out, 2 * r + 2, values);
                }
            }
            S::Scan => {
                let _ = write!(out, "SELECT * from {t} WHERE LENGTH(c) < 0");
            }
            S::InsertNew => {
                // MySQL: id 0 asks AUTO_INCREMENT for one; the others leave it out.
                match self {
                    Dialect::Mysql { .. } => {
                        let _ = write!(out, "INSERT INTO {t} (id, k, c, pad) VALUES (0, ");
                    }
                    _ => {
                        let _ = write!(out, "INSERT INTO {t} (k, c, pad) VALUES (");
                    }
                }
                self.list(&mut out, 1, 3, values);
                out.push(')');
            }
            S::Begin => out.push_str("BEGIN"),
            S::Commit => out.push_str("COMMIT"),
        }
        out
    }

    /// Reads back the rows with `ids` (verify), ids in the text.
    fn sb_rows(&self, table: u32, ids: &[u64]) -> String {
        let list: Vec<String> = ids.iter().map(u64::to_string).collect();
        format!(
            "SELECT id, k, c, pad FROM {} WHERE id IN ({}) ORDER BY id",
            table_name(table),
            list.join(",")
        )
    }

    /// Whether the index on k exists: a row when it does.
    fn sb_index_exists(&self, table: u32) -> String {
        let t = table_name(table);
        match self {
            Dialect::Sqlite => {
                format!("SELECT name FROM sqlite_master WHERE type = 'index' AND tbl_name = '{t}' AND name = 'k_{table}'")
            }
            Dialect::Postgres => format!(
                "SELECT indexname FROM pg_indexes WHERE schemaname = current_schema() AND tablename = '{t}' AND indexname = 'k_{table}'"
            ),
            Dialect::Mysql { .. } => format!(
                "SELECT index_name FROM information_schema.statistics WHERE table_schema = DATABASE() AND table_name = '{t}' AND index_name = 'k_{table}'"
            ),
        }
    }
}

/// A text column's value, or an error naming the read.
fn text_of(row: &[Option<String>], i: usize, target: &str) -> Result<String> {
    row.get(i).cloned().flatten().ok_or_else(|| {
        Error::database(
            target,
            format!("verify: column {i} of a row read back is NULL or missing"),
        )
    })
}

impl<T: SqlConn + Send> SbSession for T {
    fn sb_create(&mut self, table: u32) -> Result<()> {
        self.forget_prepared()?;
        std::mem::take(self.sb_cache());
        for sql in self.sql_dialect().sb_create(table) {
            self.execute_text(&sql)?;
        }
        Ok(())
    }

    fn sb_load(&mut self, table: u32, rows: &SbRows) -> Result<u64> {
        let n = rows.len();
        let mut params = Vec::with_capacity(3 * n);
        for i in 0..n {
            params.extend([
                SqlValue::Int(rows.k[i] as i64),
                SqlValue::Text(rows.c(i)),
                SqlValue::Text(rows.pad(i)),
            ]);
        }
        if self.literal() {
            let mut sql = self.sql_dialect().sb_load(table, 0);
            for i in 0..n {
                sql.push_str(if i == 0 { "(" } else { ",(" });
                self.sql_dialect().list(&mut sql, 3 * i + 1, 3, Some(&params));
                sql.push(')');
            }
            return self.execute_text(&sql);
        }
        let handle = match self.sb_cache().loads.get(&(table, n)) {
            Some(&h) => h,
            None => {
                let sql = self.sql_dialect().sb_load(table, n);
                let h = self.prepare_sql(&sql)?;
                self.sb_cache().loads.insert((table, n), h);
                h
            }
        };
        self.execute_prepared(handle, &params)
    }

    fn sb_create_index(&mut self, table: u32) -> Result<()> {
        let sql = self.sql_dialect().sb_create_index(table);
        self.execute_text(&sql).map(drop)
    }

    fn sb_run(&mut self, stmt: SbStatement, table: u32, params: &[SqlValue<'_>]) -> Result<u64> {
        if stmt.always_text() || self.literal() {
            let sql = self.sql_dialect().sb_statement(stmt, table, Some(params));
            return self.execute_text(&sql);
        }
        let handle = match self.sb_cache().handles.get(&(table, stmt)) {
            Some(&h) => h,
            None => {
                let sql = self.sql_dialect().sb_statement(stmt, table, None);
                let h = self.prepare_sql(&sql)?;
                self.sb_cache().handles.insert((table, stmt), h);
                h
            }
        };
        self.execute_prepared(handle, params)
    }

    fn sb_rollback(&mut self) -> Result<()> {
        self.execute_text("ROLLBACK").map(drop)
    }

    fn sb_facts(&mut self, table: u32) -> Result<SbTableFacts> {
        if !self.keeps_rows() {
            return Ok(SbTableFacts {
                schema: true,
                k_index: true,
            });
        }
        let probe = format!("SELECT id, k, c, pad FROM {} WHERE 1 = 0", table_name(table));
        if self.text_rows(&probe).is_err() {
            return Ok(SbTableFacts {
                schema: false,
                k_index: false,
            });
        }
        let index = self.sql_dialect().sb_index_exists(table);
        let k_index = !self.text_rows(&index)?.is_empty();
        Ok(SbTableFacts { schema: true, k_index })
    }

    fn sb_rows(&mut self, table: u32, ids: &[u64]) -> Result<Vec<SbRowRead>> {
        if !self.keeps_rows() || ids.is_empty() {
            return Ok(Vec::new());
        }
        let sql = self.sql_dialect().sb_rows(table, ids);
        let target = table_name(table);
        let mut out = Vec::with_capacity(ids.len());
        for row in self.text_rows(&sql)? {
            let number = |i| -> Result<i64> {
                text_of(&row, i, &target)?
                    .trim()
                    .parse()
                    .map_err(|_| Error::database(&target, "verify: a number read back is not one"))
            };
            out.push(SbRowRead {
                id: number(0)? as u64,
                k: number(1)?,
                c: text_of(&row, 2, &target)?.trim_end().to_string(),
                pad: text_of(&row, 3, &target)?.trim_end().to_string(),
            });
        }
        Ok(out)
    }

    fn sb_bounds(&mut self, table: u32, count: bool) -> Result<Bounds> {
        let t = table_name(table);
        let mut first = |sql: &str| -> Result<Option<u64>> {
            let rows = self.text_rows(sql)?;
            Ok(rows
                .first()
                .and_then(|r| r.first().cloned().flatten())
                .and_then(|v| v.parse().ok()))
        };
        let min = first(&format!("SELECT id FROM {t} ORDER BY id ASC LIMIT 1"))?;
        let max = first(&format!("SELECT id FROM {t} ORDER BY id DESC LIMIT 1"))?;
        let count = match count {
            true => Some(first(&format!("SELECT COUNT(*) FROM {t}"))?.unwrap_or(0)),
            false => None,
        };
        Ok(Bounds { count, min, max })
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn mysql() -> Dialect {
        Dialect::Mysql {
            engine: Engine::RocksDb,
            options: String::new(),
        }
    }

    #[test]
    fn statements_are_the_scripts() {
        let pg = Dialect::Postgres;
        assert_eq!(
            pg.sb_statement(SbStatement::PointSelect, 1, None),
            "SELECT c FROM sbtest1 WHERE id=$1"
        );
        assert_eq!(
            mysql().sb_statement(SbStatement::SumRange, 2, None),
            "SELECT SUM(k) FROM sbtest2 WHERE id BETWEEN ? AND ?"
        );
        assert_eq!(
            pg.sb_statement(SbStatement::InlistUpdate(3), 1, None),
            "UPDATE sbtest1 set c=$1 WHERE id IN ($2, $3, $4)"
        );
        assert_eq!(
            pg.sb_statement(
                SbStatement::Points {
                    on_k: true,
                    covered: false,
                    n: 2
                },
                1,
                None
            ),
            "SELECT k, c FROM sbtest1 WHERE k IN ($1, $2)"
        );
        assert_eq!(
            mysql().sb_statement(SbStatement::KRanges { n: 2, delta: 5 }, 1, None),
            "SELECT count(k) FROM sbtest1 WHERE k BETWEEN ? AND ? OR k BETWEEN ? AND ?"
        );
        assert_eq!(
            Dialect::Sqlite.sb_statement(SbStatement::Scan, 3, None),
            "SELECT * from sbtest3 WHERE LENGTH(c) < 0"
        );
    }

    #[test]
    fn insert_differs_by_dialect_and_literal_values_are_quoted() {
        let values = [SqlValue::Int(7), SqlValue::Text(b"12-34"), SqlValue::Text(b"o'k")];
        assert_eq!(
            mysql().sb_statement(SbStatement::InsertNew, 1, Some(&values)),
            "INSERT INTO sbtest1 (id, k, c, pad) VALUES (0, 7, '12-34', 'o''k')"
        );
        assert_eq!(
            Dialect::Postgres.sb_statement(SbStatement::InsertNew, 1, Some(&values)),
            "INSERT INTO sbtest1 (k, c, pad) VALUES (7, '12-34', 'o''k')"
        );
    }

    #[test]
    fn the_table_is_oltp_commons() {
        let [drop, create] = mysql().sb_create(4);
        assert_eq!(drop, "DROP TABLE IF EXISTS sbtest4");
        assert!(create.contains("id INTEGER NOT NULL AUTO_INCREMENT"), "{create}");
        assert!(create.ends_with("ENGINE = rocksdb "), "{create}");
        assert!(Dialect::Postgres.sb_create(1)[1].contains("id SERIAL"));
        assert_eq!(
            Dialect::Postgres.sb_load(1, 2),
            "INSERT INTO sbtest1(k, c, pad) VALUES ($1, $2, $3),($4, $5, $6)"
        );
        assert_eq!(mysql().sb_create_index(2), "CREATE INDEX k_2 ON sbtest2(k)");
    }
}
