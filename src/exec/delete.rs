//! The deleter: as many rows from the table's tail as its client inserts,
//! in commits of the same size, never more than its client has inserted in
//! the step; paced like the inserter in q steps.

use super::shared::Worker;
use crate::connect::Session;
use crate::error::Result;
use crate::metrics::Recorder;
use std::sync::atomic::Ordering;
use std::time::Instant;

impl Worker<'_> {
    pub(super) fn delete(&self, session: &mut dyn Session, rec: &mut Recorder, t0: Instant) -> Result<()> {
        let c = self.plan.config;
        let w = c.writes(self.plan.step).expect("a write step");
        let mut schedule = self.pacer(w.rate.map(|r| r as f64 / w.rows_per_commit as f64), t0);
        let client = self.client as usize;
        let mine = &self.shared.clients[client];
        let (inserted, deleted, pair) = (&mine.inserted, &mine.deleted, &mine.pair);
        let inserter_done = &self.shared.inserters_done[client];
        let (mut done, mut i) = (0u64, 0u64);
        while done < w.rows {
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
            let keys = self.table.take_tail(n);
            if keys.is_empty() {
                // Another client's inserter on a shared table holds the tail's keys in flight.
                std::thread::sleep(std::time::Duration::from_micros(200));
                continue;
            }
            let started = Instant::now();
            let removed = self.retrying(|| session.delete(&self.table.name, keys.clone()))?;
            let ended = Instant::now();
            rec.record(if w.rate.is_some() { intended } else { started }, started, ended);
            if removed != keys.end - keys.start {
                return Err(crate::Error::database(
                    self.plan.connector.target(),
                    format!("deleting keys [{}, {}) removed {removed} rows", keys.start, keys.end),
                ));
            }
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
