//! The query thread of a q step: range or point queries back to back until
//! every client's inserter is done.
//!
//! Point queries ask for keys uniform in the live window. With server keys
//! they do as the reference does: keys uniform from the tail's key up to
//! `SELECT MAX(transactionid)`, asked every [`MAX_EVERY`] queries (stale, so
//! the newest rows are not asked for; gaps give fewer than 10 hits).

use super::shared::Worker;
use crate::clock::Clock;
use crate::connect::Session;
use crate::error::Result;
use crate::gen::{Domains, PointQueries, RangeQueries, Window};
use crate::metrics::Recorder;
use crate::workload::QueryKind;
use std::sync::atomic::Ordering;
use std::time::{Duration, Instant};

/// Point queries between the server-key reader's `SELECT MAX` (the reference's).
const MAX_EVERY: u64 = 100;

impl<C: Clock> Worker<'_, C> {
    pub(super) fn query(
        &self,
        kind: QueryKind,
        session: &mut dyn Session,
        rec: &mut Recorder,
        t0: Instant,
    ) -> Result<()> {
        let c = self.plan.config;
        let stream = self.plan.ordinal * 4096 + self.client as u64;
        // Only the indexes that exist: a range query on a missing one would be a full scan.
        let indexes = c.secondary_indexes as usize;
        let mut ranges = RangeQueries::new(c.seed, self.table.number, stream, 0, Domains::default(), indexes);
        let mut points = PointQueries::new(c.seed, self.table.number, stream, 0);
        let (mut asked, mut max_key) = (0u64, None);
        while self.inserting(t0) && !self.stopping(t0) {
            if kind == QueryKind::Point && c.server_keys && asked % MAX_EVERY == 0 {
                max_key = session.key_extreme(&self.table.name, true)?;
            }
            let started = self.clock.now();
            match kind {
                QueryKind::Range => {
                    let q = ranges.next_query();
                    self.retrying(|| session.range_query(&self.table.name, &q, self.plan.indexed))?;
                }
                QueryKind::Point => {
                    let w = self.table.window();
                    let keys = match (c.server_keys, max_key) {
                        (false, _) if !w.is_empty() => points.next_keys(w),
                        (true, Some(max)) if !w.is_empty() && self.table.key_of(w.tail) < max => {
                            let keys = Window {
                                tail: self.table.key_of(w.tail),
                                head: max,
                            };
                            points.next_keys(keys)
                        }
                        _ => {
                            self.clock.sleep(Duration::from_millis(1));
                            asked += 1;
                            continue;
                        }
                    };
                    self.retrying(|| session.point_query(&self.table.name, &keys))?;
                }
            }
            asked += 1;
            rec.record(started, started, self.clock.now());
            self.shared.queries.fetch_add(1, Ordering::Relaxed);
        }
        Ok(())
    }
}
