//! The inserter: batches of generated rows at the table's head, closed loop
//! in load steps and paced in q steps; with deletes, it never runs more
//! than `max_delete_lag` commits ahead of its deleter. Also l.x's rows
//! before its indexes (`lx_rows`).

use super::shared::Worker;
use crate::clock::Clock;
use crate::connect::Session;
use crate::error::Result;
use crate::gen::{RowCursor, RowGen, Rows};
use crate::metrics::Recorder;
use crate::workload::DataMode;
use std::ops::Range;
use std::sync::atomic::Ordering;
use std::time::Instant;

impl<C: Clock> Worker<'_, C> {
    pub(super) fn insert(&self, session: &mut dyn Session, rec: &mut Recorder, t0: Instant) -> Result<()> {
        let result = self.insert_rows(session, rec, t0);
        self.inserted_until_now(t0);
        self.shared.inserters_done[self.client as usize].store(true, Ordering::Release);
        self.shared.clients[self.client as usize].pair.wake();
        result
    }

    /// This table's row generator.
    fn row_cursor(&self) -> Result<RowCursor> {
        Ok(RowCursor::new(RowGen::new(
            &self.plan.config.row_spec(self.table.number),
        )?))
    }

    /// Takes the next `n` row numbers at the table's head and generates their
    /// rows into `rows` (the reference's data: one `dateandtime` per batch,
    /// its wall clock at second resolution).
    fn next_batch(&self, cursor: &mut RowCursor, n: u64, rows: &mut Rows) -> Result<Range<u64>> {
        let numbers = self.table.allocate(self.slot, n);
        cursor.generate_into(numbers.start, n as usize, rows)?;
        if self.plan.config.data == DataMode::Iibench {
            // The wall clock, not the row clock: how many rows share a second
            // (the insert rate) shapes the pdc index (price, dateandtime,
            // customerid), so l.i1's deletes of the oldest rows land all over
            // it after a fast load. With the row clock's 1000 rows a second
            // they clustered and InnoDB's l.i1 ran twice as fast as the
            // reference's on the same statements.
            let now = crate::metrics::unix_micros();
            rows.dateandtime.fill(now - now.rem_euclid(1_000_000));
        }
        Ok(numbers)
    }

    /// Inserts a generated batch, records where the server put its keys,
    /// and commits its rows into the window.
    fn put_batch(&self, session: &mut dyn Session, rows: &Rows, numbers: &Range<u64>) -> Result<()> {
        let first_key = self.retrying(|| session.insert(&self.table.name, rows))?;
        if let Some(key) = first_key {
            self.table.placed(numbers.start, key);
        }
        self.table.committed(self.slot);
        Ok(())
    }

    /// l.x's rows: `lx_rows` into this table before its indexes are
    /// created, as the reference does; returns how many.
    pub(super) fn insert_before_indexes(&self, session: &mut dyn Session) -> Result<u64> {
        let c = self.plan.config;
        let mut cursor = self.row_cursor()?;
        let mut rows = Rows::default();
        let mut done = 0;
        while done < c.lx_rows && !self.plan.stop.requested() {
            let n = (c.lx_rows - done).min(c.rows_per_commit_l_i0 as u64);
            let numbers = self.next_batch(&mut cursor, n, &mut rows)?;
            self.put_batch(session, &rows, &numbers)?;
            done += n;
            self.shared.clients[self.client as usize]
                .inserted
                .fetch_add(n, Ordering::Release);
        }
        Ok(done)
    }

    fn insert_rows(&self, session: &mut dyn Session, rec: &mut Recorder, t0: Instant) -> Result<()> {
        let c = self.plan.config;
        let w = c.writes(self.plan.step).expect("a write step");
        let mut schedule = self.pacer(w.rate.map(|r| r as f64 / w.rows_per_commit as f64), t0);
        let mut cursor = self.row_cursor()?;
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
            let numbers = self.next_batch(&mut cursor, n, &mut rows)?;
            largest = largest.max(self.table.len_with(&numbers));
            let intended = schedule.wait_for(i, || self.stopping(t0));
            let halted = self.stopping(t0);
            if halted && self.shared.aborted() {
                break; // a failure ends the run: these rows go nowhere
            }
            // Stopped or timed out while waiting: its rows are taken, so the
            // batch goes in (unmeasured) and the table holds its window.
            let started = self.clock.now();
            self.put_batch(session, &rows, &numbers)?;
            let ended = self.clock.now();
            done += n;
            inserted.store(done, Ordering::Release);
            pair.wake();
            if halted {
                break;
            }
            rec.record(intended.unwrap_or(started), started, ended);
            self.inserted_until_now(t0);
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
