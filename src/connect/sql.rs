//! The Insert Benchmark's SQL, in one place: the table, its indexes, the
//! inserts, deletes, range and point queries, verify's reads, and the
//! key/value table's statements, for each dialect. The differences between
//! dialects are named here (placeholders, types, index hints, upserts); the
//! connectors only run what this builds.

use crate::gen::SecondaryIndex;

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

    /// Drops `table` and creates it empty with the primary key only.
    pub(crate) fn create_table(&self, table: &str, server_keys: bool) -> Vec<String> {
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
}

impl TableSql {
    fn new(dialect: &Dialect, table: &str) -> Self {
        TableSql {
            table: table.to_string(),
            range: SecondaryIndex::ALL.map(|i| [false, true].map(|hinted| dialect.range_query(table, i, hinted))),
            point: dialect.point_query(table, crate::gen::POINT_KEYS),
            delete: dialect.delete(table),
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
    fn a_session_builds_a_tables_statements_once() {
        let mut s = SessionSql::new(Dialect::Postgres);
        let a = s.table("pi1").point().as_ptr();
        assert_eq!(s.table("pi1").point().as_ptr(), a, "the same text, not rebuilt");
        assert!(s.table("pi2").point().contains("pi2"));
    }
}
