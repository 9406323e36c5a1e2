//! Host and process counters, and the database's gauges, sampled on a
//! step's interval grid, beside the operations' series.

use crate::clock::{Clock, SystemClock};
use crate::connect::ServerCounters;
use crate::metrics::{
    Disks, GaugeRow, GaugeSeries, HostInterval, NamedThread, ServerProcesses, SystemDelta, SystemSample, ThreadLedger,
    ThreadRoles, ThreadRow, WaitRow, WaitSeries,
};
use std::sync::atomic::{AtomicBool, Ordering};
use std::sync::Mutex;
use std::time::{Duration, Instant};

/// Samples the host's counters at every interval boundary of a step, and
/// looks at each thread of the server's processes and of ibench's own.
pub(super) struct HostSampler<'a> {
    servers: &'a ServerProcesses,
    disks: &'a Disks,
    interval: Duration,
    first: SystemSample,
    previous: SystemSample,
    /// The next boundary, in intervals from the step's start.
    boundary: u32,
    rows: Vec<HostInterval>,
    threads: ThreadLedger,
}

impl<'a> HostSampler<'a> {
    /// Takes the first sample now (the step's start).
    pub(super) fn start(servers: &'a ServerProcesses, disks: &'a Disks, interval: Duration) -> Self {
        let first = SystemSample::take(servers, disks);
        HostSampler {
            threads: ThreadLedger::start(servers, true),
            servers,
            disks,
            interval,
            previous: first.clone(),
            first,
            boundary: 1,
            rows: Vec::new(),
        }
    }

    /// The threads the server names itself (its connections, its background threads).
    pub(super) fn name_threads(&mut self, named: Vec<NamedThread>) {
        self.threads.name(named);
    }

    /// Looks at every thread now (the step's operations done, its sessions
    /// still open).
    pub(super) fn look_at_threads(&mut self) {
        self.threads.sample(self.servers, true);
    }

    /// The intervals cut so far.
    pub(super) fn rows(&self) -> &[HostInterval] {
        &self.rows
    }

    /// Cuts an interval when its boundary has passed; returns how long to
    /// sleep before the next boundary (at most `max`).
    pub(super) fn tick(&mut self, t0: Instant, max: Duration) -> Duration {
        let next = self.interval * self.boundary;
        if SystemClock.now().saturating_duration_since(t0) >= next {
            let now = SystemSample::take(self.servers, self.disks);
            self.threads.sample(self.servers, true);
            self.rows.push(HostInterval {
                t_s: (self.interval * (self.boundary - 1)).as_secs_f64(),
                delta: SystemDelta::between(&self.previous, &now),
            });
            self.previous = now;
            self.boundary += 1;
        }
        let next = self.interval * self.boundary;
        max.min(next.saturating_sub(SystemClock.now().saturating_duration_since(t0)) + Duration::from_millis(1))
    }

    /// The last (partial) interval, when long enough to mean something, the
    /// counters over the whole step, whose server memory is the largest
    /// seen at any boundary, and the step's CPU by thread role (adding up
    /// to the server's and ibench's measured CPU).
    pub(super) fn finish(mut self) -> (SystemDelta, Vec<HostInterval>, Vec<ThreadRow>, ThreadRoles) {
        let last = SystemSample::take(self.servers, self.disks);
        self.threads.sample(self.servers, true);
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
        let roles = self.threads.roles();
        let threads = self.threads.finish([system.server_cpu_s, system.client_cpu_s]);
        (system, self.rows, threads, roles)
    }
}

/// The database's gauges, read on the step's interval grid by a thread of
/// their own (a slow status query must not hold up the monitor, which
/// cancels statements): one reading at the start, one at each boundary and
/// one at the end. Between readings it parks until the next boundary:
/// whoever sets `done` unparks it, so it wakes once per interval, not every
/// few milliseconds to poll. Returns the rows, and why sampling stopped early.
pub(super) fn sample_gauges(
    stats: &Mutex<Box<dyn ServerCounters>>,
    t0: Instant,
    interval: Duration,
    done: &AtomicBool,
) -> (Vec<GaugeRow>, Option<String>) {
    let mut series = GaugeSeries::default();
    let read = || stats.lock().unwrap_or_else(|p| p.into_inner()).gauges();
    let first = match read() {
        Ok(g) => g,
        Err(e) => return (Vec::new(), Some(format!("the server's gauges could not be read: {e}"))),
    };
    series.start(SystemClock.now().saturating_duration_since(t0).as_secs_f64(), &first);
    let mut boundary = 1u32;
    loop {
        let next = interval * boundary;
        while !done.load(Ordering::Relaxed) && SystemClock.now().saturating_duration_since(t0) < next {
            std::thread::park_timeout(next.saturating_sub(SystemClock.now().saturating_duration_since(t0)));
        }
        let ended = done.load(Ordering::Relaxed);
        let start = interval * (boundary - 1);
        let length = if ended {
            SystemClock.now().saturating_duration_since(t0).saturating_sub(start)
        } else {
            interval
        };
        // The end falls on (or just after) a boundary already read: nothing
        // left. A step shorter than that still gets its one reading.
        if ended && length < Duration::from_millis(10) && boundary > 1 {
            break;
        }
        match read() {
            Ok(g) => series.interval(start.as_secs_f64(), length.as_secs_f64(), &g),
            Err(e) => {
                return (
                    series.finish(),
                    Some(format!("the server's gauges could not be read: {e}")),
                )
            }
        }
        if ended {
            break;
        }
        boundary += 1;
    }
    (series.finish(), None)
}

/// The server's waits over a step (`profile`), read by a thread of their
/// own: a sampled source every 1/`hz` s until `done`, a cumulative one at
/// the start and once `done`. Returns the rows of step `step`, and why
/// reading stopped early.
pub(super) fn sample_waits(
    stats: &Mutex<Box<dyn ServerCounters>>,
    (source, hz): (&'static str, f64),
    step: &str,
    done: &AtomicBool,
) -> (Vec<WaitRow>, Option<String>) {
    let mut series = WaitSeries::new(source, hz);
    let read = || stats.lock().unwrap_or_else(|p| p.into_inner()).waits();
    let every = Duration::from_secs_f64(1.0 / hz);
    loop {
        let ended = done.load(Ordering::Relaxed);
        let sampled = match read() {
            Ok(reading) => {
                let sampled = matches!(reading, crate::metrics::WaitReading::Sampled(_));
                series.add(reading);
                sampled
            }
            Err(e) => {
                let why = format!("the server's waits could not be read: {e}");
                return (series.rows(step), Some(why));
            }
        };
        if ended {
            break;
        }
        // Cumulative readings need only the end: sleep until then.
        let nap = if sampled { every } else { Duration::from_secs(3600) };
        let until = SystemClock.now() + nap;
        while !done.load(Ordering::Relaxed) && SystemClock.now() < until {
            std::thread::park_timeout(until.saturating_duration_since(SystemClock.now()));
        }
        if sampled && done.load(Ordering::Relaxed) {
            break;
        }
    }
    (series.rows(step), None)
}
