//! The wait step on PostgreSQL. ibench's: `VACUUM (ANALYZE)` of each table
//! in turn, then `CHECKPOINT`. The reference scripts' (`vac_pg`): `VACUUM
//! (VERBOSE, ANALYZE, INDEX_CLEANUP ON)` of every table at once, one
//! connection each, then `CHECKPOINT`. A stop request cancels what runs.

use super::error::{pg_err, wire_err};
use super::session::PostgresSession;
use crate::connect::{privileged, Maintenance};
use crate::error::Result;
use crate::stop::Stop;
use postgres::CancelToken;

impl PostgresSession {
    /// CHECKPOINT, which needs superuser or pg_checkpoint: skipped with a note without.
    pub(super) fn checkpoint(&mut self, notes: &mut Vec<String>) -> Result<()> {
        let done = self.batch("CHECKPOINT", "CHECKPOINT");
        privileged("CHECKPOINT", done, notes).map(drop)
    }

    /// ibench's maintenance: `VACUUM (ANALYZE)` of each table, then a
    /// checkpoint; a stop request ends it between statements (and cancels
    /// the running one: the session's interrupter).
    pub(super) fn vacuum_and_checkpoint(&mut self, tables: &[String], stop: &Stop) -> Result<Vec<String>> {
        let mut notes = Vec::new();
        for t in tables {
            if stop.requested() {
                return Ok(notes);
            }
            self.batch("vacuum", &format!("VACUUM (ANALYZE) {t}"))?;
        }
        if !stop.requested() {
            self.checkpoint(&mut notes)?;
        }
        Ok(notes)
    }

    /// The reference's `vac_pg`: every table vacuumed at once on its own
    /// connection (INDEX_CLEANUP from PostgreSQL 12 on), then a checkpoint.
    pub(super) fn reference_maintenance(&mut self, m: &Maintenance<'_>) -> Result<Vec<String>> {
        let version: i64 = self
            .client
            .simple_query("SELECT current_setting('server_version_num')::int")
            .map_err(|e| wire_err(&self.target, "server_version_num", e))
            .map(|r| super::wire::first_value(&r).unwrap_or(0))?;
        let options = if version >= 120_000 {
            "VERBOSE, ANALYZE, INDEX_CLEANUP ON"
        } else {
            "VERBOSE, ANALYZE"
        };
        let (dial, target) = (&self.dial, self.target.as_str());
        let vacuum = |t: &str, register: &dyn Fn(CancelToken)| -> Result<()> {
            let mut client = dial.connect()?;
            register(client.cancel_token());
            if m.stop.requested() {
                return Ok(());
            }
            client
                .batch_execute(&format!("VACUUM ({options}) {t}"))
                .map_err(|e| pg_err(target, "vacuum", e))
        };
        let ((), vacuumed) = crate::connect::per_table(
            m.tables,
            m.stop,
            target,
            "VACUUM",
            vacuum,
            |token| dial.cancel(token),
            || (),
        );
        vacuumed?;
        let mut notes = Vec::new();
        if !m.stop.requested() {
            self.checkpoint(&mut notes)?;
        }
        Ok(notes)
    }
}
