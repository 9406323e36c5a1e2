//! The Insert Benchmark's SQL, in one place: the table, its indexes, the
//! inserts, deletes, range and point queries, verify's reads, and the
//! key/value table's statements, for each dialect. The differences between
//! dialects are named here (placeholders, types, index hints, upserts); the
//! connectors only run what this builds.

use crate::connect::Bounds;
use crate::error::Result;
use crate::gen::{RangeQuery, Rows, SecondaryIndex};
use std::fmt::Write;

/// A MySQL storage engine.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub(crate) enum Engine {
    InnoDb,
    RocksDb,
}

impl Engine {
    /// The engine's name in `ENGINE=`.
    pub(crate) fn sql(self) -> &'static str {
        match self {
            Engine::InnoDb => "InnoDB",
            Engine::RocksDb => "ROCKSDB",
        }
    }
}

/// The SQL dialects ibench speaks.
#[derive(Clone, Debug, PartialEq, Eq)]
pub(crate) enum Dialect {
    Sqlite,
    Postgres,
    /// MySQL or MariaDB with an engine, and text appended to CREATE TABLE.
    Mysql {
        engine: Engine,
        options: String,
    },
}

/// The columns of an insert, with or without the key (server-assigned keys).
fn insert_columns(server_keys: bool) -> &'static str {
    if server_keys {
        "dateandtime, cashregisterid, customerid, productid, price, data"
    } else {
        "transactionid, dateandtime, cashregisterid, customerid, productid, price, data"
    }
}

/// Parameters per inserted row.
pub(crate) fn per_row(server_keys: bool) -> usize {
    if server_keys {
        6
    } else {
        7
    }
}

/// Pairs per key/value upsert: two parameters each, and a statement has at
/// most 65535.
pub(crate) const PAIRS_PER_STATEMENT: usize = 65535 / 2;

/// Keys per statement of verify's rows read (MySQL and SQLite list them).
pub(crate) const ROWS_PER_READ: usize = 500;

impl Dialect {
    /// Placeholder number `i` (from 1).
    fn mark(&self, i: usize) -> String {
        match self {
            Dialect::Postgres => format!("${i}"),
            _ => "?".into(),
        }
    }

    /// `n` placeholders from number `first`, comma-separated.
    fn marks(&self, first: usize, n: usize) -> String {
        (first..first + n).map(|i| self.mark(i)).collect::<Vec<_>>().join(",")
    }

    /// Drops `table` and creates it empty with the primary key only. With
    /// server keys, PostgreSQL's sequence caches 1000 values per session, as
    /// the reference's does.
    pub(crate) fn create_table(&self, table: &str, server_keys: bool) -> Vec<String> {
        let mut ddl = self.create_table_only(table, server_keys);
        if server_keys && *self == Dialect::Postgres {
            ddl.push(format!("ALTER SEQUENCE {table}_transactionid_seq CACHE 1000"));
        }
        ddl
    }

    fn create_table_only(&self, table: &str, server_keys: bool) -> Vec<String> {
        let drop = format!("DROP TABLE IF EXISTS {table}");
        let create = match self {
            // INTEGER PRIMARY KEY is the rowid: inserting without it lets
            // SQLite assign max + 1, the auto-increment of the reference.
            Dialect::Sqlite => format!(
                "CREATE TABLE {table} (
                   transactionid INTEGER PRIMARY KEY,
                   dateandtime INTEGER NOT NULL,
                   cashregisterid INTEGER NOT NULL,
                   customerid INTEGER NOT NULL,
                   productid INTEGER NOT NULL,
                   price INTEGER NOT NULL,
                   data TEXT NOT NULL)"
            ),
            Dialect::Postgres => format!(
                "CREATE TABLE {table} (
                   transactionid {} PRIMARY KEY,
                   dateandtime TIMESTAMP,
                   cashregisterid INT NOT NULL,
                   customerid INT NOT NULL,
                   productid INT NOT NULL,
                   price INT NOT NULL,
                   data VARCHAR(4000))",
                if server_keys { "BIGSERIAL" } else { "BIGINT" }
            ),
            Dialect::Mysql { engine, options } => format!(
                "CREATE TABLE {table} (
                   transactionid BIGINT NOT NULL{},
                   dateandtime DATETIME,
                   cashregisterid INT NOT NULL,
                   customerid INT NOT NULL,
                   productid INT NOT NULL,
                   price INT NOT NULL,
                   data VARCHAR(4000),
                   PRIMARY KEY (transactionid)
                 ) ENGINE={} {options}",
                if server_keys { " AUTO_INCREMENT" } else { "" },
                engine.sql()
            ),
        };
        vec![drop, create]
    }

    /// Creates the first `count` secondary indexes: CREATE INDEX each
    /// (SQLite, PostgreSQL), one ALTER TABLE for all (InnoDB: one table
    /// scan), or one ALTER per index (MyRocks, as the reference does).
    pub(crate) fn create_indexes(&self, table: &str, count: usize) -> Vec<String> {
        let indexes = &SecondaryIndex::ALL[..count.min(SecondaryIndex::ALL.len())];
        let add = |i: &SecondaryIndex| format!("ADD INDEX {table}_{} ({})", i.suffix(), i.columns().join(", "));
        match self {
            Dialect::Mysql {
                engine: Engine::InnoDb, ..
            } => {
                if indexes.is_empty() {
                    Vec::new()
                } else {
                    let adds: Vec<String> = indexes.iter().map(add).collect();
                    vec![format!("ALTER TABLE {table} {}", adds.join(", "))]
                }
            }
            Dialect::Mysql {
                engine: Engine::RocksDb,
                ..
            } => indexes
                .iter()
                .map(|i| format!("ALTER TABLE {table} {}", add(i)))
                .collect(),
            _ => indexes
                .iter()
                .map(|i| {
                    format!(
                        "CREATE INDEX {table}_{} ON {table} ({})",
                        i.suffix(),
                        i.columns().join(", ")
                    )
                })
                .collect(),
        }
    }

    /// A multi-row INSERT of `rows` rows.
    pub(crate) fn insert(&self, table: &str, rows: usize, server_keys: bool) -> String {
        let per = per_row(server_keys);
        let values: Vec<String> = (0..rows)
            .map(|r| format!("({})", self.marks(r * per + 1, per)))
            .collect();
        format!(
            "INSERT INTO {table} ({}) VALUES {}",
            insert_columns(server_keys),
            values.join(",")
        )
    }

    /// Deletes the keys in `[first, second)`.
    pub(crate) fn delete(&self, table: &str) -> String {
        format!(
            "DELETE FROM {table} WHERE transactionid >= {} AND transactionid < {}",
            self.mark(1),
            self.mark(2)
        )
    }

    /// Deletes the `n` oldest rows from key `from` on (server-assigned keys
    /// have gaps): `ORDER BY ... LIMIT` (MySQL), a sub-select (PostgreSQL
    /// refuses LIMIT on DELETE), as the reference's. `values` puts the
    /// numbers in the text; else they are parameters 1 and 2.
    pub(crate) fn delete_oldest(&self, table: &str, values: Option<(u64, u64)>) -> String {
        let (from, n) = match values {
            Some((from, n)) => (from.to_string(), n.to_string()),
            None => (self.mark(1), self.mark(2)),
        };
        match self {
            Dialect::Mysql { .. } => {
                format!("delete from {table} where transactionid >= {from} order by transactionid asc limit {n}")
            }
            // SQLite's DELETE takes no LIMIT unless built for it.
            _ => format!(
                "delete from {table} where transactionid in (select transactionid from {table} where transactionid >= {from} order by transactionid asc limit {n})"
            ),
        }
    }

    /// The range delete with its keys in the text.
    pub(crate) fn delete_literal(&self, table: &str, keys: std::ops::Range<u64>) -> String {
        format!(
            "DELETE FROM {table} WHERE transactionid >= {} AND transactionid < {}",
            keys.start, keys.end
        )
    }

    /// A multi-row INSERT with the values in the text, as the reference
    /// sends it: rows `('YYYY-MM-DD HH:MM:SS',cash,cust,prod,price.00,'data')`
    /// joined by `,⏎`, the key left out with server keys.
    pub(crate) fn insert_literal(&self, table: &str, rows: &Rows, server_keys: bool) -> String {
        let mut out = String::with_capacity(64 + rows.len() * 80);
        let cols = if server_keys {
            "dateandtime,cashregisterid,customerid,productid,price,data"
        } else {
            "transactionid,dateandtime,cashregisterid,customerid,productid,price,data"
        };
        let _ = write!(out, "insert into {table} ({cols}) values ");
        for i in 0..rows.len() {
            if i > 0 {
                out.push_str(",\n");
            }
            out.push('(');
            if !server_keys {
                let _ = write!(out, "{},", rows.transactionid[i]);
            }
            match self {
                Dialect::Sqlite => {
                    let _ = write!(out, "{},", rows.dateandtime[i]);
                }
                _ => {
                    out.push('\'');
                    datetime_text(rows.dateandtime[i], &mut out);
                    out.push_str("',");
                }
            }
            let data = &rows.data[rows.data_offsets[i] as usize..rows.data_offsets[i + 1] as usize];
            let _ = write!(
                out,
                "{},{},{},{}.00,'{}')",
                rows.cashregisterid[i],
                rows.customerid[i],
                rows.productid[i],
                rows.price[i],
                std::str::from_utf8(data).expect("data is ASCII")
            );
        }
        out
    }

    /// PostgreSQL's SQL-level PREPAREs of the reference's queries (run once
    /// per session), by name: the range queries of each index, then the point query.
    pub(crate) fn pg_prepares(&self, table: &str) -> Vec<(&'static str, String)> {
        let mut out: Vec<(&'static str, String)> = SecondaryIndex::ALL
            .iter()
            .map(|&i| {
                (
                    reference_query_name(i),
                    format!(
                        "PREPARE {} (int) as {}",
                        reference_query_name(i),
                        reference_range(table, i, "$1", false)
                    ),
                )
            })
            .collect();
        let marks: Vec<String> = (1..=crate::gen::POINT_KEYS).map(|i| format!("${i}")).collect();
        out.push((
            "pk_query_ps",
            format!(
                "PREPARE pk_query_ps ({}) as SELECT transactionid, productid, data FROM {table} WHERE transactionid in ({})",
                ["int"; crate::gen::POINT_KEYS].join(","),
                marks.join(",")
            ),
        ));
        out
    }

    /// The reference's range query with its value in the text (MySQL, with
    /// FORCE INDEX and the reference's spacing; PostgreSQL: `execute` of the
    /// prepared statement).
    pub(crate) fn range_literal(&self, table: &str, q: &RangeQuery) -> String {
        match self {
            Dialect::Postgres => format!("execute {} ({})", reference_query_name(q.index), q.lower),
            Dialect::Mysql { .. } => reference_range(table, q.index, &q.lower.to_string(), true),
            Dialect::Sqlite => reference_range(table, q.index, &q.lower.to_string(), false),
        }
    }

    /// The point query with its keys in the text.
    pub(crate) fn point_literal(&self, table: &str, keys: &[u64]) -> String {
        let list: Vec<String> = keys.iter().map(u64::to_string).collect();
        match self {
            Dialect::Postgres if keys.len() == crate::gen::POINT_KEYS => {
                format!("execute pk_query_ps ({})", list.join(","))
            }
            _ => format!(
                "SELECT transactionid, productid, data FROM {table} WHERE transactionid in ({})",
                list.join(",")
            ),
        }
    }

    /// The reference's `select min(...)` or `select max(...)` of the key.
    pub(crate) fn key_extreme(&self, table: &str, max: bool) -> String {
        format!("select {}(transactionid) from {table}", if max { "max" } else { "min" })
    }

    /// The covering range query on `index`: its columns from the first
    /// leading value ≥ the parameter, 10 rows. With `hinted` the index is
    /// named (SQLite `INDEXED BY`, MySQL `FORCE INDEX`; PostgreSQL's
    /// planner picks it).
    pub(crate) fn range_query(&self, table: &str, index: SecondaryIndex, hinted: bool) -> String {
        let cols = index.columns().join(", ");
        let lead = index.columns()[0];
        let hint = match (self, hinted) {
            (Dialect::Sqlite, true) => format!(" INDEXED BY {table}_{}", index.suffix()),
            (Dialect::Mysql { .. }, true) => format!(" FORCE INDEX ({table}_{})", index.suffix()),
            _ => String::new(),
        };
        format!(
            "SELECT {cols} FROM {table}{hint} WHERE {lead} >= {} ORDER BY {cols} LIMIT 10",
            self.mark(1)
        )
    }

    /// The primary-key multi-get of `keys` keys.
    pub(crate) fn point_query(&self, table: &str, keys: usize) -> String {
        format!(
            "SELECT transactionid, productid, data FROM {table} WHERE transactionid IN ({})",
            self.marks(1, keys)
        )
    }

    /// The smallest and the largest key: one row from each end of the primary key.
    pub(crate) fn key_bounds(&self, table: &str) -> [String; 2] {
        ["ASC", "DESC"].map(|order| format!("SELECT transactionid FROM {table} ORDER BY transactionid {order} LIMIT 1"))
    }

    /// The row count (a full scan).
    pub(crate) fn count(&self, table: &str) -> String {
        format!("SELECT COUNT(*) FROM {table}")
    }

    /// `table`'s bounds, each asked with `first_value` (the first column
    /// of a statement's first row, None without one, named `what` in
    /// errors): one row from each end of the primary key (no scan), and
    /// the row count when `count` (a full scan).
    pub(crate) fn bounds(
        &self,
        table: &str,
        count: bool,
        mut first_value: impl FnMut(&str, &str) -> Result<Option<u64>>,
    ) -> Result<Bounds> {
        let [first, last] = self.key_bounds(table);
        let (min, max) = (first_value("bounds", &first)?, first_value("bounds", &last)?);
        let count = match count {
            true => Some(first_value("count", &self.count(table))?.unwrap_or(0)),
            false => None,
        };
        Ok(Bounds { count, min, max })
    }

    /// Every column of the rows with `keys` keys (PostgreSQL: one array
    /// parameter, whatever `keys`), in key order.
    pub(crate) fn rows(&self, table: &str, keys: usize) -> String {
        let keys = match self {
            Dialect::Postgres => "= ANY($1)".to_string(),
            _ => format!("IN ({})", self.marks(1, keys)),
        };
        format!(
            "SELECT transactionid, dateandtime, cashregisterid, customerid, productid, price, data
             FROM {table} WHERE transactionid {keys} ORDER BY transactionid"
        )
    }

    /// [`Dialect::rows`] with the keys in the text.
    pub(crate) fn rows_listed(&self, table: &str, keys: &[u64]) -> String {
        let list: Vec<String> = keys.iter().map(u64::to_string).collect();
        format!(
            "SELECT transactionid, dateandtime, cashregisterid, customerid, productid, price, data
             FROM {table} WHERE transactionid IN ({}) ORDER BY transactionid",
            list.join(",")
        )
    }

    /// Drops the key/value table and creates it empty (keys compare bytewise).
    pub(crate) fn kv_create(&self, table: &str, key_size: usize) -> Vec<String> {
        let create = match self {
            // WITHOUT ROWID: the pairs live in the primary key's b-tree.
            Dialect::Sqlite => format!("CREATE TABLE {table} (k BLOB PRIMARY KEY, v BLOB NOT NULL) WITHOUT ROWID"),
            Dialect::Postgres => format!("CREATE TABLE {table} (k BYTEA PRIMARY KEY, v BYTEA NOT NULL)"),
            Dialect::Mysql { engine, options } => format!(
                "CREATE TABLE {table} (k VARBINARY({key_size}) NOT NULL PRIMARY KEY, v LONGBLOB NOT NULL) ENGINE={} {options}",
                engine.sql()
            ),
        };
        vec![format!("DROP TABLE IF EXISTS {table}"), create]
    }

    /// An upsert of `pairs` pairs (SQLite: one pair per statement).
    pub(crate) fn kv_upsert(&self, table: &str, pairs: usize) -> String {
        let values: Vec<String> = (0..pairs).map(|i| format!("({})", self.marks(2 * i + 1, 2))).collect();
        match self {
            Dialect::Sqlite => format!("INSERT OR REPLACE INTO {table} (k, v) VALUES (?, ?)"),
            Dialect::Postgres => format!(
                "INSERT INTO {table} (k, v) VALUES {} ON CONFLICT (k) DO UPDATE SET v = EXCLUDED.v",
                values.join(",")
            ),
            Dialect::Mysql { .. } => format!(
                "INSERT INTO {table} (k, v) VALUES {} ON DUPLICATE KEY UPDATE v = VALUES(v)",
                values.join(",")
            ),
        }
    }

    /// The value of one key.
    pub(crate) fn kv_get(&self, table: &str) -> String {
        format!("SELECT v FROM {table} WHERE k = {}", self.mark(1))
    }

    /// Pairs from the first key ≥ the first parameter, at most the second.
    pub(crate) fn kv_scan(&self, table: &str) -> String {
        format!(
            "SELECT k, v FROM {table} WHERE k >= {} ORDER BY k LIMIT {}",
            self.mark(1),
            self.mark(2)
        )
    }

    /// Pairs from the last key ≤ the first parameter down, at most the second.
    pub(crate) fn kv_scan_reverse(&self, table: &str) -> String {
        format!(
            "SELECT k, v FROM {table} WHERE k <= {} ORDER BY k DESC LIMIT {}",
            self.mark(1),
            self.mark(2)
        )
    }

    /// A delete of `keys` keys (SQLite: one key per statement).
    pub(crate) fn kv_delete(&self, table: &str, keys: usize) -> String {
        match self {
            Dialect::Sqlite => format!("DELETE FROM {table} WHERE k = ?"),
            _ => format!("DELETE FROM {table} WHERE k IN ({})", self.marks(1, keys)),
        }
    }
}

/// The name of the reference's prepared range query on `index`.
fn reference_query_name(index: SecondaryIndex) -> &'static str {
    match index {
        SecondaryIndex::MarketSegment => "market_query_ps",
        SecondaryIndex::RegisterSegment => "register_query_ps",
        SecondaryIndex::Pdc => "pdc_query_ps",
    }
}

/// The reference's range query text on `index` with `value` (a literal or
/// `$1`): its spacing, the strict `>` of the register query, and FORCE INDEX
/// when `hinted`.
fn reference_range(table: &str, index: SecondaryIndex, value: &str, hinted: bool) -> String {
    let hint = |name: &str| {
        if hinted {
            format!(" FORCE INDEX ({table}_{name})")
        } else {
            String::new()
        }
    };
    match index {
        SecondaryIndex::MarketSegment => format!(
            "SELECT productid, customerid, price FROM {table}{} WHERE (productid >= {value}) ORDER BY productid, customerid, price LIMIT 10",
            hint("marketsegment")
        ),
        SecondaryIndex::RegisterSegment => format!(
            "SELECT cashregisterid,customerid,price FROM {table}{} WHERE (cashregisterid > {value}) ORDER BY cashregisterid, customerid, price LIMIT 10",
            hint("registersegment")
        ),
        SecondaryIndex::Pdc => format!(
            "SELECT price,dateandtime,customerid FROM {table}{} WHERE (price >= {value}) ORDER BY price, dateandtime, customerid LIMIT 10",
            hint("pdc")
        ),
    }
}

/// Unix µs as `YYYY-MM-DD HH:MM:SS[.ffffff]` (UTC), appended to `out`.
pub(crate) fn datetime_text(micros: i64, out: &mut String) {
    let t = crate::metrics::utc(micros);
    let _ = write!(
        out,
        "{:04}-{:02}-{:02} {:02}:{:02}:{:02}",
        t.year(),
        t.month() as u8,
        t.day(),
        t.hour(),
        t.minute(),
        t.second()
    );
    if t.microsecond() != 0 {
        let _ = write!(out, ".{:06}", t.microsecond());
    }
}

/// The SQL of one table's per-operation statements, built once per session
/// and table (not on every operation).
#[derive(Clone, Debug)]
pub(crate) struct TableSql {
    table: String,
    /// Per index in [`SecondaryIndex::ALL`] order: unhinted, hinted.
    range: [[String; 2]; 3],
    point: String,
    delete: String,
    delete_oldest: String,
}

impl TableSql {
    fn new(dialect: &Dialect, table: &str) -> Self {
        TableSql {
            table: table.to_string(),
            range: SecondaryIndex::ALL.map(|i| [false, true].map(|hinted| dialect.range_query(table, i, hinted))),
            point: dialect.point_query(table, crate::gen::POINT_KEYS),
            delete: dialect.delete(table),
            delete_oldest: dialect.delete_oldest(table, None),
        }
    }

    /// The range query on `index`.
    pub(crate) fn range(&self, index: SecondaryIndex, hinted: bool) -> &str {
        let i = SecondaryIndex::ALL
            .iter()
            .position(|&x| x == index)
            .expect("one of ALL");
        &self.range[i][hinted as usize]
    }

    /// The point query of [`crate::gen::POINT_KEYS`] keys.
    pub(crate) fn point(&self) -> &str {
        &self.point
    }

    /// The tail delete.
    pub(crate) fn delete(&self) -> &str {
        &self.delete
    }

    /// The delete of the oldest rows (server keys): parameters from, n.
    pub(crate) fn delete_oldest(&self) -> &str {
        &self.delete_oldest
    }
}

/// A session's statements: the table it works on now (one per step).
#[derive(Clone, Debug)]
pub(crate) struct SessionSql {
    pub(crate) dialect: Dialect,
    current: Option<TableSql>,
}

impl SessionSql {
    pub(crate) fn new(dialect: Dialect) -> Self {
        SessionSql { dialect, current: None }
    }

    /// The statements of `table`, built when the session first uses it.
    pub(crate) fn table(&mut self, table: &str) -> &TableSql {
        if self.current.as_ref().is_none_or(|t| t.table != table) {
            self.current = Some(TableSql::new(&self.dialect, table));
        }
        self.current.as_ref().expect("just built")
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn the_dialects_differ_only_where_named() {
        let pg = Dialect::Postgres;
        let my = Dialect::Mysql {
            engine: Engine::InnoDb,
            options: String::new(),
        };
        assert_eq!(
            pg.delete("pi1"),
            "DELETE FROM pi1 WHERE transactionid >= $1 AND transactionid < $2"
        );
        assert_eq!(
            my.delete("pi1"),
            "DELETE FROM pi1 WHERE transactionid >= ? AND transactionid < ?"
        );
        assert_eq!(
            my.range_query("pi1", SecondaryIndex::Pdc, true),
            "SELECT price, dateandtime, customerid FROM pi1 FORCE INDEX (pi1_pdc) WHERE price >= ? ORDER BY price, dateandtime, customerid LIMIT 10"
        );
        assert_eq!(
            Dialect::Sqlite.range_query("pi1", SecondaryIndex::MarketSegment, true),
            "SELECT productid, customerid, price FROM pi1 INDEXED BY pi1_marketsegment WHERE productid >= ? ORDER BY productid, customerid, price LIMIT 10"
        );
        assert!(!pg.range_query("pi1", SecondaryIndex::Pdc, true).contains("INDEX"));
        assert_eq!(pg.insert("t", 2, true).matches('$').count(), 12);
        assert!(pg.insert("t", 2, false).ends_with("($8,$9,$10,$11,$12,$13,$14)"));
        assert_eq!(my.create_indexes("t", 3).len(), 1, "InnoDB: one ALTER");
        let rocks = Dialect::Mysql {
            engine: Engine::RocksDb,
            options: String::new(),
        };
        assert_eq!(rocks.create_indexes("t", 2).len(), 2, "MyRocks: one ALTER per index");
        assert_eq!(
            pg.create_indexes("t", 1),
            ["CREATE INDEX t_marketsegment ON t (productid, customerid, price)"]
        );
        assert_eq!(pg.rows("t", 100).matches('$').count(), 1);
    }

    #[test]
    fn literal_statements_are_the_references() {
        let mut rows = Rows::default();
        crate::gen::RowGen::new(&crate::gen::RowSpec::default())
            .unwrap()
            .generate_into(0, 2, &mut rows)
            .unwrap();
        rows.dateandtime = vec![1_764_580_245_000_000; 2];
        let my = Dialect::Mysql {
            engine: Engine::InnoDb,
            options: String::new(),
        };
        let text = my.insert_literal("pi1", &rows, true);
        assert!(
            text.starts_with("insert into pi1 (dateandtime,cashregisterid,customerid,productid,price,data) values ('2025-12-01 09:10:45',"),
            "{text}"
        );
        assert_eq!(text.matches(".00,'").count(), 2);
        assert_eq!(text.matches("),\n(").count(), 1);
        assert_eq!(
            my.delete_oldest("pi1", Some((2301, 50))),
            "delete from pi1 where transactionid >= 2301 order by transactionid asc limit 50"
        );
        assert_eq!(
            Dialect::Postgres.delete_oldest("pi1", Some((2301, 50))),
            "delete from pi1 where transactionid in (select transactionid from pi1 where transactionid >= 2301 order by transactionid asc limit 50)"
        );
        let q = RangeQuery {
            index: SecondaryIndex::RegisterSegment,
            lower: 946,
        };
        assert_eq!(
            my.range_literal("pi1", &q),
            "SELECT cashregisterid,customerid,price FROM pi1 FORCE INDEX (pi1_registersegment) WHERE (cashregisterid > 946) ORDER BY cashregisterid, customerid, price LIMIT 10"
        );
        assert_eq!(
            Dialect::Postgres.range_literal("pi1", &q),
            "execute register_query_ps (946)"
        );
        let prepares = Dialect::Postgres.pg_prepares("pi1");
        assert_eq!(
            prepares[0].1,
            "PREPARE market_query_ps (int) as SELECT productid, customerid, price FROM pi1 WHERE (productid >= $1) ORDER BY productid, customerid, price LIMIT 10"
        );
        assert!(prepares[3]
            .1
            .starts_with("PREPARE pk_query_ps (int,int,int,int,int,int,int,int,int,int) as SELECT"));
        assert_eq!(
            Dialect::Postgres.point_literal("pi1", &[1, 2, 3, 4, 5, 6, 7, 8, 9, 10]),
            "execute pk_query_ps (1,2,3,4,5,6,7,8,9,10)"
        );
        assert_eq!(
            Dialect::Postgres.create_table("pi1", true)[2],
            "ALTER SEQUENCE pi1_transactionid_seq CACHE 1000"
        );
    }

    #[test]
    fn a_session_builds_a_tables_statements_once() {
        let mut s = SessionSql::new(Dialect::Postgres);
        let a = s.table("pi1").point().as_ptr();
        assert_eq!(s.table("pi1").point().as_ptr(), a, "the same text, not rebuilt");
        assert!(s.table("pi2").point().contains("pi2"));
    }
}
