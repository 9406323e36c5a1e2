//! The wait step on PostgreSQL. ibench's: `VACUUM (ANALYZE)` of each table
//! in turn, then `CHECKPOINT`. The reference scripts' (`vac_pg`): `VACUUM
//! (VERBOSE, ANALYZE, INDEX_CLEANUP ON)` of every table at once, one
//! connection each, then `CHECKPOINT`. A stop request cancels what runs.

use super::session::PostgresSession;
use super::{pg_err, privileged};
use crate::connect::Maintenance;
use crate::error::{Error, Result};
use crate::stop::Stop;
use postgres::CancelToken;
use std::sync::Mutex;
use std::time::Duration;

impl PostgresSession {
    /// CHECKPOINT, which needs superuser or pg_checkpoint: skipped with a note without.
    pub(super) fn checkpoint(&mut self, notes: &mut Vec<String>) -> Result<()> {
        let done = self.batch("CHECKPOINT", "CHECKPOINT");
        privileged("CHECKPOINT", done, notes)
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
            .map_err(|e| super::wire_err(&self.target, "server_version_num", e))
            .map(|r| super::wire::first_value(&r).unwrap_or(0))?;
        let options = if version >= 120_000 {
            "VERBOSE, ANALYZE, INDEX_CLEANUP ON"
        } else {
            "VERBOSE, ANALYZE"
        };
        let tokens: Mutex<Vec<CancelToken>> = Mutex::new(Vec::new());
        let (dial, target) = (&self.dial, self.target.as_str());
        let results: Vec<Result<()>> = std::thread::scope(|scope| {
            let handles: Vec<_> = m
                .tables
                .iter()
                .map(|t| {
                    let (tokens, stop) = (&tokens, m.stop);
                    scope.spawn(move || -> Result<()> {
                        let mut client = dial.connect()?;
                        tokens
                            .lock()
                            .unwrap_or_else(|p| p.into_inner())
                            .push(client.cancel_token());
                        if stop.requested() {
                            return Ok(());
                        }
                        client
                            .batch_execute(&format!("VACUUM ({options}) {t}"))
                            .map_err(|e| pg_err(target, "vacuum", e))
                    })
                })
                .collect();
            // Cancels each connection's VACUUM once (connections opened later too).
            let mut cancelled = 0;
            while !handles.iter().all(|h| h.is_finished()) {
                if m.stop.requested() {
                    let tokens = tokens.lock().unwrap_or_else(|p| p.into_inner());
                    for token in &tokens[cancelled..] {
                        dial.cancel(token);
                    }
                    cancelled = tokens.len();
                }
                std::thread::sleep(Duration::from_millis(20));
            }
            handles
                .into_iter()
                .map(|h| {
                    h.join()
                        .unwrap_or_else(|_| Err(Error::database(target, "a VACUUM thread panicked")))
                })
                .collect()
        });
        for r in results {
            match r {
                Err(e) if e.is_canceled() && m.stop.requested() => {}
                other => other?,
            }
        }
        let mut notes = Vec::new();
        if !m.stop.requested() {
            self.checkpoint(&mut notes)?;
        }
        Ok(notes)
    }
}
