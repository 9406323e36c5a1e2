//! The wait step: the database's maintenance (VACUUM and CHECKPOINT,
//! dirty-page write-back, compaction), then an interruptible sleep.

use super::shared::Worker;
use crate::connect::Session;
use crate::error::Result;
use crate::metrics::Recorder;
use std::time::{Duration, Instant};

impl Worker<'_> {
    pub(super) fn wait(&self, session: &mut dyn Session, rec: &mut Recorder, t0: Instant) -> Result<()> {
        let names: Vec<String> = self.plan.tables.iter().map(|t| t.name.clone()).collect();
        let started = Instant::now();
        let notes = session.maintain(&names, self.plan.stop)?;
        rec.record(started, started, Instant::now());
        self.shared.note(notes);
        let until = Instant::now() + Duration::from_secs_f64(self.plan.config.wait());
        while Instant::now() < until && !self.stopping(t0) {
            std::thread::sleep((until - Instant::now()).min(Duration::from_millis(50)));
        }
        Ok(())
    }
}
