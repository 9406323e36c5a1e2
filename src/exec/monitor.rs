//! Host and process counters sampled on a step's interval grid, beside the
//! operations' series.

use crate::metrics::{Disks, HostInterval, SystemDelta, SystemSample};
use std::time::{Duration, Instant};

/// Samples the host's counters at every interval boundary of a step.
pub(super) struct HostSampler<'a> {
    servers: &'a [&'static str],
    disks: &'a Disks,
    interval: Duration,
    first: SystemSample,
    previous: SystemSample,
    /// The next boundary, in intervals from the step's start.
    boundary: u32,
    rows: Vec<HostInterval>,
}

impl<'a> HostSampler<'a> {
    /// Takes the first sample now (the step's start).
    pub(super) fn start(servers: &'a [&'static str], disks: &'a Disks, interval: Duration) -> Self {
        let first = SystemSample::take(servers, disks);
        HostSampler {
            servers,
            disks,
            interval,
            previous: first.clone(),
            first,
            boundary: 1,
            rows: Vec::new(),
        }
    }

    /// Cuts an interval when its boundary has passed; returns how long to
    /// sleep before the next boundary (at most `max`).
    pub(super) fn tick(&mut self, t0: Instant, max: Duration) -> Duration {
        let next = self.interval * self.boundary;
        if t0.elapsed() >= next {
            let now = SystemSample::take(self.servers, self.disks);
            self.rows.push(HostInterval {
                t_s: (self.interval * (self.boundary - 1)).as_secs_f64(),
                delta: SystemDelta::between(&self.previous, &now),
            });
            self.previous = now;
            self.boundary += 1;
        }
        let next = self.interval * self.boundary;
        max.min(next.saturating_sub(t0.elapsed()) + Duration::from_millis(1))
    }

    /// The last (partial) interval, when long enough to mean something, and
    /// the counters over the whole step, whose server memory is the largest
    /// seen at any boundary.
    pub(super) fn finish(mut self) -> (SystemDelta, Vec<HostInterval>) {
        let last = SystemSample::take(self.servers, self.disks);
        let tail = SystemDelta::between(&self.previous, &last);
        if tail.seconds > 0.05 * self.interval.as_secs_f64() {
            self.rows.push(HostInterval {
                t_s: (self.interval * (self.boundary - 1)).as_secs_f64(),
                delta: tail,
            });
        }
        let mut system = SystemDelta::between(&self.first, &last);
        system.server_rss = self
            .rows
            .iter()
            .filter_map(|h| h.delta.server_rss)
            .chain(system.server_rss)
            .max();
        (system, self.rows)
    }
}
