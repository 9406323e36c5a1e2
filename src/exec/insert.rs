//! The inserter: batches of generated rows at the table's head, closed loop
//! in load steps and paced in q steps; with deletes, it never runs more
//! than `max_delete_lag` commits ahead of its deleter.

use super::shared::Worker;
use crate::connect::Session;
use crate::error::Result;
use crate::gen::{Length, RowCursor, RowGen, RowSpec, Rows};
use crate::metrics::Recorder;
use std::sync::atomic::Ordering;
use std::time::Instant;

impl Worker<'_> {
    pub(super) fn insert(&self, session: &mut dyn Session, rec: &mut Recorder, t0: Instant) -> Result<()> {
        let result = self.insert_rows(session, rec, t0);
        self.shared.inserters_done[self.client as usize].store(true, Ordering::Release);
        self.shared.clients[self.client as usize].pair.wake();
        result
    }

    fn insert_rows(&self, session: &mut dyn Session, rec: &mut Recorder, t0: Instant) -> Result<()> {
        let c = self.plan.config;
        let w = c.writes(self.plan.step).expect("a write step");
        let mut schedule = self.pacer(w.rate.map(|r| r as f64 / w.rows_per_commit as f64), t0);
        let mut rows_gen = RowCursor::new(RowGen::new(&RowSpec {
            seed: c.seed,
            table: self.table.number,
            data_length: Length::Uniform {
                min: c.data_length[0],
                max: c.data_length[1],
            },
            ratio: c.ratio,
            ..RowSpec::default()
        })?);
        let client = self.client as usize;
        let mine = &self.shared.clients[client];
        let (inserted, deleted, pair) = (&mine.inserted, &mine.deleted, &mine.pair);
        // With deletes, the table may grow by at most this many rows.
        let lag = c
            .deletes(self.plan.step)
            .then(|| c.max_delete_lag as u64 * w.rows_per_commit as u64);
        let mut rows = Rows::default();
        let (mut done, mut i) = (0u64, 0u64);
        // The largest window this inserter saw, reported once at the end.
        let mut largest = 0;
        while done < w.rows {
            if self.stopping(t0) {
                break;
            }
            let n = (w.rows - done).min(w.rows_per_commit as u64);
            if let Some(lag) = lag {
                let caught_up = || done + n <= deleted.load(Ordering::Acquire) + lag;
                if !pair.wait_until(caught_up, || self.stopping(t0)) {
                    break;
                }
            }
            // The batch is ready before its intended start, so a paced insert
            // starts on time (generating it is not the schedule's lag).
            let keys = self.table.allocate(self.slot, n);
            largest = largest.max(self.table.len_with(&keys));
            rows_gen.generate_into(keys.start, n as usize, &mut rows)?;
            let intended = schedule.wait_for(i, || self.stopping(t0));
            let halted = self.stopping(t0);
            if halted && self.shared.aborted() {
                break; // a failure ends the run: these keys go nowhere
            }
            // Stopped or timed out while waiting: its keys are taken, so the
            // batch goes in (unmeasured) and the table holds its window.
            let started = Instant::now();
            self.retrying(|| session.insert(&self.table.name, &rows, c.server_keys))?;
            let ended = Instant::now();
            self.table.committed(self.slot);
            done += n;
            inserted.store(done, Ordering::Release);
            pair.wake();
            if halted {
                break;
            }
            rec.record(if w.rate.is_some() { intended } else { started }, started, ended);
            i += 1;
        }
        self.table.reached(largest);
        // A paced stream lasts until the end of its last slot, so rows /
        // elapsed is the rate it kept, not one slot more.
        schedule.wait_end(i, || self.stopping(t0));
        rec.pacer_overshoot(schedule.overshoot());
        Ok(())
    }
}
