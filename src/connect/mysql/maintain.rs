//! The wait step on MySQL and MariaDB, and the global settings it changes
//! (each restored on every path: error, stop, panic).
//!
//! ibench's: InnoDB lowers `innodb_max_dirty_pages_pct` to 0 until the
//! buffer pool is written back; MyRocks flushes the memtable and L0 and
//! waits until no compaction runs; then ANALYZE TABLE of each table.
//!
//! The reference scripts' (`vac_my`): optionally `RESET MASTER`; ANALYZE
//! TABLE of every table in the background; InnoDB sets
//! `innodb_max_dirty_pages_pct_lwm = 1`, `innodb_max_dirty_pages_pct = 1`
//! and `innodb_idle_flush_pct = 100` (where the server has it) for the rest
//! of the wait; MyRocks waits until no compaction runs, then
//! `rocksdb_force_flush_memtable_now`, 20 s, `rocksdb_compact_lzero_now`
//! (where the server has it); the settings come back at the end.

use super::error::my_err;
use super::ledger;
use super::session::MysqlSession;
use crate::connect::privileged;
use crate::connect::sql::Engine;
use crate::connect::Maintenance;
use crate::error::Result;
use crate::stop::Stop;
use mysql::prelude::Queryable;
use mysql::{Conn, Opts};
use std::time::{Duration, Instant};

/// How long ibench's write-back and compaction waits last at most.
const SETTLE_LIMIT: Duration = Duration::from_secs(300);

/// How long MyRocks must show no compaction before it counts as quiet.
const QUIET_FOR: Duration = Duration::from_secs(1);

/// A global variable ibench changed (through the server's ledger of changed
/// settings, `ledger.rs`), set back by [`Restore::now`] or, failing that,
/// when dropped.
pub(super) struct Restore {
    opts: Opts,
    target: String,
    changed: ledger::Changed,
    restored: bool,
}

impl Restore {
    /// Restores the value through `conn`, or through a new connection when
    /// there is none or it fails (it may have been killed).
    pub(super) fn now(&mut self, conn: Option<&mut Conn>) -> Result<()> {
        if self.restored {
            return Ok(());
        }
        let changed = &self.changed;
        let result = match conn {
            Some(c) => ledger::restore(c, changed)
                .or_else(|_| Conn::new(self.opts.clone()).and_then(|mut c| ledger::restore(&mut c, changed))),
            None => Conn::new(self.opts.clone()).and_then(|mut c| ledger::restore(&mut c, changed)),
        };
        self.restored = result.is_ok();
        result.map_err(|e| my_err(&self.target, &format!("restore {}", changed.name), e))
    }
}

impl Drop for Restore {
    fn drop(&mut self) {
        let _ = self.now(None);
    }
}

/// Sleeps until `until` or a stop request.
fn sleep_until(until: Instant, stop: &Stop) {
    while !stop.requested() {
        let now = Instant::now();
        if now >= until {
            return;
        }
        std::thread::sleep((until - now).min(Duration::from_millis(50)));
    }
}

impl MysqlSession {
    pub(super) fn status(&mut self, name: &str) -> Result<u64> {
        let row: Option<(String, String)> = self
            .conn()?
            .query_first(format!("SHOW GLOBAL STATUS LIKE '{name}'"))
            .map_err(|e| my_err(&self.target, "status", e))?;
        Ok(row.and_then(|(_, v)| v.parse().ok()).unwrap_or(0))
    }

    /// True when the server has global variable `name`.
    fn has_variable(&mut self, name: &str) -> Result<bool> {
        let row: Option<(String, String)> = self
            .conn()?
            .query_first(format!("SHOW GLOBAL VARIABLES LIKE '{name}'"))
            .map_err(|e| my_err(&self.target, "variables", e))?;
        Ok(row.is_some())
    }

    /// Sets a global variable through the server's ledger of changed
    /// settings, restoring its original value when the returned guard is
    /// dropped (on every path: error, stop, panic; a hard kill's change is
    /// put back by the next ibench that connects). None, with a note, when
    /// the user lacks the privilege (SUPER, SYSTEM_VARIABLES_ADMIN, or to
    /// make the ledger's table).
    pub(super) fn set_global(&mut self, name: &str, value: &str, notes: &mut Vec<String>) -> Result<Option<Restore>> {
        let (conn, target) = self.conn_target()?;
        let set = ledger::change(conn, name, value).map_err(|e| my_err(target, &format!("SET GLOBAL {name}"), e));
        let changed = match set {
            Ok(changed) => changed,
            Err(e) => {
                privileged(&format!("SET GLOBAL {name} = {value}"), Err(e), notes)?;
                return Ok(None);
            }
        };
        Ok(Some(Restore {
            opts: self.opts.clone(),
            target: self.target.clone(),
            changed,
            restored: false,
        }))
    }

    /// Sets `name` when the server has it; else a note that it was skipped.
    fn set_global_if_present(&mut self, name: &str, value: &str, notes: &mut Vec<String>) -> Result<Option<Restore>> {
        if self.has_variable(name)? {
            self.set_global(name, value, notes)
        } else {
            notes.push(format!(
                "SET GLOBAL {name} = {value} skipped: this server has no {name}"
            ));
            Ok(None)
        }
    }

    /// Sets a trigger variable (`... = 1` starts work; nothing to restore),
    /// skipped with a note when the server lacks it or the user the privilege.
    fn trigger(&mut self, name: &str, notes: &mut Vec<String>) -> Result<()> {
        if !self.has_variable(name)? {
            notes.push(format!("SET GLOBAL {name} = 1 skipped: this server has no {name}"));
            return Ok(());
        }
        let done = self.run(name, &format!("SET GLOBAL {name} = 1"));
        privileged(&format!("SET GLOBAL {name} = 1"), done, notes).map(|_| ())
    }

    /// InnoDB: lowers the dirty-page limit until the buffer pool is written
    /// back (for up to [`SETTLE_LIMIT`], or until a stop), then restores it.
    /// Giving up is a note, never silent.
    fn write_back_dirty_pages(&mut self, stop: &Stop, notes: &mut Vec<String>) -> Result<()> {
        let Some(mut restore) = self.set_global("innodb_max_dirty_pages_pct", "0", notes)? else {
            return Ok(());
        };
        let start = Instant::now();
        let mut dirty = 0;
        let flushed = self.poll_until(SETTLE_LIMIT, stop, |s| {
            dirty = s.status("Innodb_buffer_pool_pages_dirty")?;
            Ok(dirty < 16)
        });
        let restored = restore.now(self.conn().ok());
        if matches!(flushed, Ok(false)) && !stop.requested() {
            notes.push(format!(
                "InnoDB still had {dirty} dirty pages after {:.0} s of write-back; the wait went on without it",
                start.elapsed().as_secs_f64()
            ));
        }
        flushed.and(restored).map(|_| ())
    }

    /// MyRocks: true while a compaction or flush runs or is due: a compaction the
    /// event log shows started, not finished and its inputs still on disk (a local server);
    /// `information_schema.rocksdb_active_compaction_stats` where the server
    /// has it (MySQL's MyRocks); each column family's pending flags and live
    /// versions, and the manual compactions running.
    fn rocksdb_busy(&mut self) -> Result<bool> {
        let target = self.target.clone();
        if let Some(log) = self.rocksdb_log.as_mut() {
            if log.running().unwrap_or(0) > 0 {
                return Ok(true);
            }
        }
        let err = |e| my_err(&target, "compaction state", e);
        let active = match self.active_compactions {
            Some(known) => known,
            None => {
                let n: Option<u64> = self
                    .conn()?
                    .query_first(
                        "SELECT COUNT(*) FROM information_schema.tables
                         WHERE table_schema = 'information_schema' AND table_name = 'ROCKSDB_ACTIVE_COMPACTION_STATS'",
                    )
                    .map_err(err)?;
                let known = n.unwrap_or(0) > 0;
                self.active_compactions = Some(known);
                known
            }
        };
        if active {
            let n: Option<u64> = self
                .conn()?
                .query_first("SELECT COUNT(*) FROM information_schema.rocksdb_active_compaction_stats")
                .map_err(err)?;
            return Ok(n.unwrap_or(0) > 0);
        }
        let pending: Option<u64> = self
            .conn()?
            .query_first(
                "SELECT COUNT(*) FROM information_schema.ROCKSDB_CFSTATS
                 WHERE (STAT_TYPE IN ('COMPACTION_PENDING', 'MEM_TABLE_FLUSH_PENDING', 'NUM_IMMUTABLE_MEM_TABLE') AND VALUE > 0)
                    OR (STAT_TYPE = 'NUM_LIVE_VERSIONS' AND VALUE > 1)",
            )
            .map_err(err)?;
        Ok(pending.unwrap_or(0) > 0 || self.status("Rocksdb_manual_compactions_running")? > 0)
    }

    /// MyRocks: waits until no compaction has run for [`QUIET_FOR`] (polls
    /// every 200 ms, the compaction byte counter unchanged too), for up to
    /// `limit` or until a stop. Returns false, with a note, when it gave up.
    fn wait_for_rocksdb(&mut self, limit: Duration, stop: &Stop, notes: &mut Vec<String>) -> Result<bool> {
        let start = Instant::now();
        let mut quiet_since: Option<(Instant, u64)> = None;
        let quiet = self.poll_until(limit, stop, |s| {
            let written = s.status("Rocksdb_compact_write_bytes")?;
            if s.rocksdb_busy()? {
                quiet_since = None;
                return Ok(false);
            }
            match quiet_since {
                Some((since, bytes)) if bytes == written => Ok(since.elapsed() >= QUIET_FOR),
                _ => {
                    quiet_since = Some((Instant::now(), written));
                    Ok(false)
                }
            }
        })?;
        if !quiet && !stop.requested() {
            notes.push(format!(
                "MyRocks compaction was still running after {:.0} s; the wait went on without it",
                start.elapsed().as_secs_f64()
            ));
        }
        Ok(quiet)
    }

    /// ibench's maintenance: InnoDB writes back its dirty pages, MyRocks
    /// flushes the memtable and L0 and waits until no compaction runs; then
    /// ANALYZE TABLE of each table. A stop request ends the waits;
    /// statements needing a privilege the user lacks are skipped with a note.
    pub(super) fn settle_and_analyze(&mut self, tables: &[String], stop: &Stop) -> Result<Vec<String>> {
        let mut notes = Vec::new();
        match self.engine {
            Engine::InnoDb => self.write_back_dirty_pages(stop, &mut notes)?,
            Engine::RocksDb => {
                self.trigger("rocksdb_force_flush_memtable_and_lzero_now", &mut notes)?;
                self.wait_for_rocksdb(SETTLE_LIMIT, stop, &mut notes)?;
            }
        }
        for t in tables {
            if stop.requested() {
                break;
            }
            self.run("analyze", &format!("ANALYZE TABLE {t}"))?;
        }
        Ok(notes)
    }

    /// What flush does: InnoDB's dirty pages, MyRocks' memtable.
    pub(super) fn flush_engine(&mut self, stop: &Stop) -> Result<Vec<String>> {
        let mut notes = Vec::new();
        match self.engine {
            Engine::InnoDb => self.write_back_dirty_pages(stop, &mut notes)?,
            Engine::RocksDb => self.trigger("rocksdb_force_flush_memtable_now", &mut notes)?,
        }
        Ok(notes)
    }

    /// The reference scripts' `vac_my` (see the module's comment), the
    /// whole of it ending at `m.until` at the earliest: ANALYZE TABLE of
    /// every table at once, each on a connection of its own, while the
    /// engine's procedure runs; the settings it changed come back once
    /// every ANALYZE is done.
    pub(super) fn reference_maintenance(&mut self, m: &Maintenance<'_>) -> Result<Vec<String>> {
        let mut notes = Vec::new();
        if m.reset_master {
            let done = self.run("RESET MASTER", "RESET MASTER");
            privileged("RESET MASTER", done, &mut notes)?;
        }
        let (opts, target) = (self.opts.clone(), self.target.clone());
        let analyze = |t: &str, register: &dyn Fn(u32)| -> Result<()> {
            let mut c = Conn::new(opts.clone()).map_err(|e| my_err(&target, "connect", e))?;
            register(c.connection_id());
            c.query_drop(format!("ANALYZE TABLE {t}"))
                .map_err(|e| my_err(&target, "analyze", e))
        };
        let kill = |id: &u32| {
            if let Ok(mut c) = Conn::new(opts.clone()) {
                let _ = c.query_drop(format!("KILL QUERY {id}"));
            }
        };
        let ((procedure, mut restores), analyzed) =
            crate::connect::per_table(m.tables, m.stop, &target, "ANALYZE", analyze, kill, || {
                let mut restores = Vec::new();
                let procedure = self.reference_procedure(m, &mut restores, &mut notes);
                (procedure, restores)
            });
        // Back in the reverse order of pushing.
        let mut restored = Ok(());
        while let Some(mut r) = restores.pop() {
            let done = r.now(self.conn().ok());
            restored = restored.and(done);
        }
        procedure.and(restored)?;
        analyzed?;
        Ok(notes)
    }

    /// The engine's part of `vac_my`, then a sleep until `m.until`: the
    /// settings it changes are pushed on `restores`, to come back last in,
    /// first out.
    fn reference_procedure(
        &mut self,
        m: &Maintenance<'_>,
        restores: &mut Vec<Restore>,
        notes: &mut Vec<String>,
    ) -> Result<()> {
        match self.engine {
            Engine::InnoDb => {
                // The reference's values. The limit first: its low-water
                // mark may not exceed it, so from a limit below 1 (0, say)
                // the reference's order (the mark first) leaves the mark
                // where it was. Restored (last in, first out) the limit
                // first again, which lowers a mark above it along with it.
                let limit = self.set_global("innodb_max_dirty_pages_pct", "1", notes)?;
                let mark = match self.set_global("innodb_max_dirty_pages_pct_lwm", "1", notes) {
                    Ok(mark) => mark,
                    Err(e) => {
                        restores.extend(limit);
                        return Err(e);
                    }
                };
                restores.extend(mark);
                restores.extend(limit);
                restores.extend(self.set_global_if_present("innodb_idle_flush_pct", "100", notes)?);
            }
            Engine::RocksDb => {
                self.wait_for_rocksdb(Duration::MAX, m.stop, notes)?;
                self.trigger("rocksdb_force_flush_memtable_now", notes)?;
                sleep_until(Instant::now() + Duration::from_secs(20), m.stop);
                if !m.stop.requested() {
                    self.trigger("rocksdb_compact_lzero_now", notes)?;
                }
            }
        }
        sleep_until(m.until, m.stop);
        Ok(())
    }

    /// Polls `done` every 200 ms until it holds (true), `limit` passes or a
    /// stop is requested (false).
    fn poll_until(
        &mut self,
        limit: Duration,
        stop: &Stop,
        mut done: impl FnMut(&mut Self) -> Result<bool>,
    ) -> Result<bool> {
        let start = Instant::now();
        loop {
            if done(self)? {
                return Ok(true);
            }
            if start.elapsed() >= limit || stop.requested() {
                return Ok(false);
            }
            std::thread::sleep(Duration::from_millis(200));
        }
    }
}
