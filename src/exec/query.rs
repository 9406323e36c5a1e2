//! The query thread of a q step: range or point queries back to back until
//! every client's inserter is done.

use super::shared::Worker;
use crate::connect::Session;
use crate::error::Result;
use crate::gen::{Domains, PointQueries, RangeQueries};
use crate::metrics::Recorder;
use crate::workload::QueryKind;
use std::sync::atomic::Ordering;
use std::time::{Duration, Instant};

impl Worker<'_> {
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
        let all_inserted = || self.shared.inserters_done.iter().all(|d| d.load(Ordering::Acquire));
        while !all_inserted() && !self.stopping(t0) {
            let started = Instant::now();
            match kind {
                QueryKind::Range => {
                    let q = ranges.next_query();
                    self.retrying(|| session.range_query(&self.table.name, &q, self.plan.indexed))?;
                }
                QueryKind::Point => {
                    let w = self.table.window();
                    if w.is_empty() {
                        std::thread::sleep(Duration::from_millis(1));
                        continue;
                    }
                    let keys = points.next_keys(w);
                    self.retrying(|| session.point_query(&self.table.name, &keys))?;
                }
            }
            rec.record(started, started, Instant::now());
            self.shared.queries.fetch_add(1, Ordering::Relaxed);
        }
        Ok(())
    }
}
