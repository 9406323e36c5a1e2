//! The global settings ibench changes on a MySQL or MariaDB server, kept in
//! a ledger on the server itself, where every ibench sees it:
//! `ibench.changed_settings` holds each changed setting's original value and
//! the connections that changed it (its holders), and a named lock
//! (`GET_LOCK`) makes reading and writing it one step each.
//!
//! - A change records the original value (the server's, when no row holds
//!   the setting yet; else the row's, so a second ibench never takes a
//!   first one's temporary value for the original), adds its connection as
//!   a holder, and sets the value.
//! - A restore removes its holder; the last live holder puts the original
//!   back and deletes the row.
//! - Any ibench that connects (and `ibench restore DSN`) puts back the
//!   settings whose holders are all gone, a hard kill's leftovers, saying so.
//!
//! A connection is live while the server lists it (`PROCESSLIST`): a
//! killed client's connections close with it. The ledger exists only while
//! a setting is changed: the last restore drops the `ibench` schema again.

use mysql::prelude::Queryable;
use mysql::Conn;
use std::collections::BTreeSet;

/// The ledger's schema and table.
const TABLE: &str = "ibench.changed_settings";

/// The named lock around every read-modify-write of the ledger.
const LOCK: &str = "ibench.changed_settings";

/// How long to wait for another ibench's change or restore (seconds).
const LOCK_WAIT_S: u32 = 60;

/// A setting changed through the ledger, to be restored by [`restore`].
#[derive(Clone, Debug)]
pub(super) struct Changed {
    pub(super) name: String,
    /// The connection that changed it: its holder in the ledger.
    pub(super) holder: u64,
}

/// `value` as a SET GLOBAL literal: numbers and ON/OFF as they are (numeric
/// variables refuse a string), anything else quoted.
fn literal(value: &str) -> String {
    if value.parse::<f64>().is_ok() || matches!(value, "ON" | "OFF") {
        value.to_string()
    } else {
        format!("'{}'", value.replace('\\', "\\\\").replace('\'', "''"))
    }
}

/// Runs `op` holding the ledger's lock.
fn locked<T>(conn: &mut Conn, op: impl FnOnce(&mut Conn) -> mysql::Result<T>) -> mysql::Result<T> {
    let got: Option<Option<i64>> = conn.query_first(format!("SELECT GET_LOCK('{LOCK}', {LOCK_WAIT_S})"))?;
    if got.flatten() != Some(1) {
        return Err(mysql::Error::IoError(std::io::Error::new(
            std::io::ErrorKind::TimedOut,
            format!("another ibench held the lock {LOCK} for {LOCK_WAIT_S} s"),
        )));
    }
    let result = op(conn);
    let _ = conn.query_drop(format!("DO RELEASE_LOCK('{LOCK}')"));
    result
}

/// The ids of the server's connections now.
fn live(conn: &mut Conn) -> mysql::Result<BTreeSet<u64>> {
    Ok(conn
        .query::<u64, _>("SELECT ID FROM information_schema.PROCESSLIST")?
        .into_iter()
        .collect())
}

/// A row's holders, from their text (`12,15`).
fn holders(text: &str) -> BTreeSet<u64> {
    text.split(',').filter_map(|h| h.trim().parse().ok()).collect()
}

fn joined(holders: &BTreeSet<u64>) -> String {
    holders.iter().map(u64::to_string).collect::<Vec<_>>().join(",")
}

/// The row of setting `name`: its original value and holders.
fn row(conn: &mut Conn, name: &str) -> mysql::Result<Option<(String, String)>> {
    conn.exec_first(format!("SELECT original, holders FROM {TABLE} WHERE name = ?"), (name,))
}

/// Drops the ledger (the `ibench` schema) once no setting is changed: the
/// server is left as ibench found it. Under the ledger's lock.
fn drop_if_empty(c: &mut Conn) -> mysql::Result<()> {
    let left: Option<u64> = c.query_first(format!("SELECT COUNT(*) FROM {TABLE}"))?;
    if left.unwrap_or(0) == 0 {
        c.query_drop("DROP DATABASE IF EXISTS ibench")?;
    }
    Ok(())
}

/// Sets global `name` to `value` on `conn`'s server through the ledger
/// (making it if need be); the caller restores it with [`restore`].
pub(super) fn change(conn: &mut Conn, name: &str, value: &str) -> mysql::Result<Changed> {
    let me = conn.connection_id() as u64;
    locked(conn, |c| {
        c.query_drop("CREATE DATABASE IF NOT EXISTS ibench")?;
        c.query_drop(format!(
            "CREATE TABLE IF NOT EXISTS {TABLE} (name VARCHAR(64) PRIMARY KEY, original TEXT NOT NULL, holders TEXT NOT NULL)"
        ))?;
        let alive = live(c)?;
        let (original, mut held) = match row(c, name)? {
            Some((original, text)) => (original, holders(&text)),
            None => {
                let now: Option<String> = c.query_first(format!("SELECT CAST(@@GLOBAL.{name} AS CHAR)"))?;
                (now.unwrap_or_default(), BTreeSet::new())
            }
        };
        held.retain(|h| alive.contains(h));
        held.insert(me);
        c.query_drop(format!("SET GLOBAL {name} = {}", literal(value)))?;
        c.exec_drop(
            format!("REPLACE INTO {TABLE} (name, original, holders) VALUES (?, ?, ?)"),
            (name, &original, joined(&held)),
        )?;
        Ok(Changed {
            name: name.to_string(),
            holder: me,
        })
    })
}

/// Undoes `changed` on `conn`'s server: its holder leaves the ledger, and
/// when no live holder is left the original value comes back.
pub(super) fn restore(conn: &mut Conn, changed: &Changed) -> mysql::Result<()> {
    locked(conn, |c| {
        let Some((original, text)) = row(c, &changed.name)? else {
            return Ok(()); // put back already (a later ibench found its holders gone)
        };
        let alive = live(c)?;
        let mut held = holders(&text);
        held.remove(&changed.holder);
        held.retain(|h| alive.contains(h));
        if held.is_empty() {
            c.query_drop(format!("SET GLOBAL {} = {}", changed.name, literal(&original)))?;
            c.exec_drop(format!("DELETE FROM {TABLE} WHERE name = ?"), (&changed.name,))?;
            drop_if_empty(c)
        } else {
            c.exec_drop(
                format!("UPDATE {TABLE} SET holders = ? WHERE name = ?"),
                (joined(&held), &changed.name),
            )
        }
    })
}

/// Puts back every setting of the ledger whose holders are all gone (an
/// ibench killed while it had it changed); a sentence for each, naming the
/// setting and both values. Nothing when there is no ledger.
pub(super) fn recover(conn: &mut Conn) -> mysql::Result<Vec<String>> {
    let exists: Option<u64> = conn.query_first(
        "SELECT COUNT(*) FROM information_schema.tables WHERE table_schema = 'ibench' AND table_name = 'changed_settings'",
    )?;
    if exists.unwrap_or(0) == 0 {
        return Ok(Vec::new());
    }
    locked(conn, |c| {
        let alive = live(c)?;
        let rows: Vec<(String, String, String)> = c.query(format!("SELECT name, original, holders FROM {TABLE}"))?;
        let mut notes = Vec::new();
        for (name, original, text) in rows {
            if holders(&text).iter().any(|h| alive.contains(h)) {
                continue;
            }
            let left: Option<String> = c.query_first(format!("SELECT CAST(@@GLOBAL.{name} AS CHAR)"))?;
            c.query_drop(format!("SET GLOBAL {name} = {}", literal(&original)))?;
            c.exec_drop(format!("DELETE FROM {TABLE} WHERE name = ?"), (&name,))?;
            notes.push(format!(
                "{name} was {}, as an ibench that did not finish (killed?) left it; put back to its original {original}",
                left.unwrap_or_default()
            ));
        }
        drop_if_empty(c)?;
        Ok(notes)
    })
}
