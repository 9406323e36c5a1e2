//! The deleter: as many rows from the table's tail as its client inserts,
//! in commits of the same size, never more than its client has inserted in
//! the step; paced like the inserter in q steps.
//!
//! With client keys it deletes the key range of the oldest rows. With server
//! keys it deletes the `n` oldest rows from an estimate of the smallest key,
//! as the reference does: `SELECT MIN(transactionid)` at the start and
//! every [`RESYNC_ROUNDS`] deletes, the estimate moved on by `n` after each
//! (gaps in the keys leave it below the real one, never above).

use super::shared::Worker;
use crate::clock::Clock;
use crate::connect::Session;
use crate::error::Result;
use crate::metrics::Recorder;
use std::sync::atomic::Ordering;
use std::time::Instant;

/// Deletes between the server-key deleter's `SELECT MIN` re-syncs (the
/// reference's `--resync_get_min` default).
pub(super) const RESYNC_ROUNDS: u64 = 1000;

impl<C: Clock> Worker<'_, C> {
    pub(super) fn delete(&self, session: &mut dyn Session, rec: &mut Recorder, t0: Instant) -> Result<()> {
        let c = self.plan.config;
        let w = c.writes(self.plan.step).expect("a write step");
        let mut schedule = self.pacer(w.rate.map(|r| r as f64 / w.rows_per_commit as f64), t0);
        let client = self.client as usize;
        let mine = &self.shared.clients[client];
        let (inserted, deleted, pair) = (&mine.inserted, &mine.deleted, &mine.pair);
        let inserter_done = &self.shared.inserters_done[client];
        let server_keys = c.server_keys;
        let (mut done, mut i) = (0u64, 0u64);
        // Server keys: the estimate of the smallest key.
        let mut estimate = 0;
        while done < w.rows {
            if server_keys && i % RESYNC_ROUNDS == 0 {
                // Not part of a delete's time, as the reference's is not.
                estimate = session.key_extreme(&self.table.name, false)?.unwrap_or(0);
            }
            let intended = schedule.wait_for(i, || self.stopping(t0));
            let want = (w.rows - done).min(w.rows_per_commit as u64);
            // Wait for this client's inserter to have inserted what this deletes.
            let available = || inserted.load(Ordering::Acquire).saturating_sub(done);
            let ready = || available() >= want || inserter_done.load(Ordering::Acquire);
            if !pair.wait_until(ready, || self.stopping(t0)) {
                break;
            }
            let n = want.min(available());
            if n == 0 {
                break; // the inserter finished (or stopped) short
            }
            let numbers = self.table.take_tail(n);
            if numbers.is_empty() {
                // Another client's inserter on a shared table holds the tail's rows in flight.
                self.clock.sleep(std::time::Duration::from_micros(200));
                continue;
            }
            let n = numbers.end - numbers.start;
            let from = if server_keys { estimate } else { numbers.start };
            let started = self.clock.now();
            let removed = self.retrying(|| session.delete(&self.table.name, from, n))?;
            let ended = self.clock.now();
            rec.record(intended.unwrap_or(started), started, ended);
            if removed != n {
                let what = if server_keys {
                    format!("deleting the {n} oldest rows from key {from}")
                } else {
                    format!("deleting keys [{from}, {})", from + n)
                };
                return Err(crate::Error::database(
                    self.plan.connector.target(),
                    format!("{what} removed {removed} rows"),
                ));
            }
            estimate += n;
            done += removed;
            i += 1;
            deleted.store(done, Ordering::Release);
            pair.wake();
        }
        schedule.wait_end(i, || self.stopping(t0));
        rec.pacer_overshoot(schedule.overshoot());
        Ok(())
    }
}
