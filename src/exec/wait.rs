//! The wait step. ibench's: the database's maintenance (VACUUM and
//! CHECKPOINT, dirty-page write-back, compaction), then `wait()` seconds of
//! sleep. The reference's (`maintenance = "iibench"`): its procedure per
//! DBMS, the whole step lasting X = `wait()` seconds, maintenance included
//! (longer only when the maintenance itself takes longer).

use super::shared::Worker;
use crate::clock::Clock;
use crate::connect::{Maintenance, Session};
use crate::error::Result;
use crate::metrics::Recorder;
use crate::workload::MaintenanceStyle;
use std::time::{Duration, Instant};

impl<C: Clock> Worker<'_, C> {
    pub(super) fn wait(&self, session: &mut dyn Session, rec: &mut Recorder, t0: Instant) -> Result<()> {
        let c = self.plan.config;
        let names: Vec<String> = self.plan.tables.iter().map(|t| t.name.clone()).collect();
        let x = Duration::from_secs_f64(c.wait());
        let reference = c.maintenance == MaintenanceStyle::Iibench;
        let started = self.clock.now();
        let notes = session.maintain(&Maintenance {
            tables: &names,
            reference,
            reset_master: c.reset_master,
            until: started + x,
            stop: self.plan.stop,
        })?;
        let ended = self.clock.now();
        rec.record(started, started, ended);
        self.shared.note(notes);
        let until = if reference { started + x } else { ended + x };
        while self.clock.now() < until && !self.stopping(t0) {
            self.clock
                .sleep((until - self.clock.now()).min(Duration::from_millis(50)));
        }
        Ok(())
    }
}
