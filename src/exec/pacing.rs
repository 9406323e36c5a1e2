//! Open-loop pacing: operation `i` of a stream is intended to start at
//! `t0 + phase + i × interval`. Late operations run at once and keep their
//! intended time (response time includes the backlog); ticks are never skipped.
//!
//! Each of a step's N paced streams gets its own phase (stream k starts at
//! `t0 + k/N × interval`), so N clients do not all commit at the same instant
//! every slot: the aggregate arrivals are as smooth as the rate allows.
//!
//! A [`Pacer`] waits for each intended start precisely: it sleeps (with the
//! thread's timer slack at its minimum) until shortly before it, then spins
//! the last stretch. The stretch adapts to how late this host wakes sleepers
//! (tens of µs on a VM), so the spin is short and the lag stays small. On a
//! simulated clock a wait simply moves the thread's time to the start.

use crate::clock::Clock;
use std::time::{Duration, Instant};

/// When operations are meant to start.
#[derive(Clone, Copy, Debug)]
pub enum Schedule {
    /// Closed loop: each operation is intended to start when the previous ends.
    Unthrottled,
    /// Open loop: one operation every `interval` from `t0 + phase`.
    Every {
        /// The step's start.
        t0: Instant,
        /// Time between intended starts.
        interval: Duration,
        /// The stream's offset from `t0`, less than `interval`.
        phase: Duration,
    },
}

impl Schedule {
    /// `ops_per_second` operations per second from `t0`.
    pub fn rate(t0: Instant, ops_per_second: f64) -> Schedule {
        Schedule::Every {
            t0,
            interval: Duration::from_secs_f64(1.0 / ops_per_second),
            phase: Duration::ZERO,
        }
    }

    /// This schedule as stream `k` of `n` paced streams: offset by `k/n` of a slot.
    pub fn phased(self, k: u64, n: u64) -> Schedule {
        match self {
            Schedule::Every { t0, interval, .. } if n > 0 => Schedule::Every {
                t0,
                interval,
                phase: interval.mul_f64((k % n) as f64 / n as f64),
            },
            other => other,
        }
    }

    /// Operation `i`'s intended start (None when unthrottled).
    pub fn intended(&self, i: u64) -> Option<Instant> {
        match *self {
            Schedule::Unthrottled => None,
            Schedule::Every { t0, interval, phase } => Some(t0 + phase + interval.mul_f64(i as f64)),
        }
    }

    /// The end of a stream of `n` operations: `t0 + n × interval`, whatever
    /// its phase, so `n / elapsed` is exactly the rate (every operation was
    /// intended to start before it).
    pub fn end(&self, n: u64) -> Option<Instant> {
        match *self {
            Schedule::Unthrottled => None,
            Schedule::Every { t0, interval, .. } => Some(t0 + interval.mul_f64(n as f64)),
        }
    }
}

/// The longest a pacer spins before an intended start, and the least.
const MAX_SPIN: Duration = Duration::from_micros(500);
const MIN_SPIN: Duration = Duration::from_micros(10);

/// A pacer spins at most this share of a stream's slot, so a fast stream
/// does not take a core from the database it measures.
const SPIN_SHARE: f64 = 0.1;

/// The recent sleeps whose lateness sets the spin.
const RECENT: usize = 100;

/// Waits for a schedule's intended starts on clock `C`: precisely (sleep,
/// then spin the last stretch) or with plain sleeps.
#[derive(Debug)]
pub struct Pacer<C: Clock> {
    clock: C,
    schedule: Schedule,
    precise: bool,
    /// How late the recent sleeps woke on this thread (a ring), and the
    /// spin it calls for: their 99th percentile.
    recent: [Duration; RECENT],
    next: usize,
    spin: Duration,
    slack_set: bool,
    /// How late each wait for a start still ahead ended (ns): the pacer's
    /// own lateness, not a backlog.
    overshoot: hdrhistogram::Histogram<u64>,
}

impl<C: Clock> Pacer<C> {
    /// A pacer of `schedule` on `clock`; `precise` spins the last stretch before each start.
    pub fn new(schedule: Schedule, precise: bool, clock: C) -> Self {
        Pacer {
            clock,
            schedule,
            precise,
            recent: [Duration::from_micros(200); RECENT],
            next: 0,
            spin: Duration::from_micros(200),
            slack_set: false,
            overshoot: crate::metrics::histogram(),
        }
    }

    /// How late the waits for starts still ahead ended: the pacer's own
    /// lateness (a late start behind a backlog is not counted here).
    pub fn overshoot(&self) -> &hdrhistogram::Histogram<u64> {
        &self.overshoot
    }

    /// Waits for operation `i`'s intended start (or returns at once when it
    /// is past) and returns it; `stop` is polled while waiting. None when
    /// unthrottled: no intended start, and no clock read (the caller's start
    /// time is the operation's).
    #[inline]
    pub fn wait_for(&mut self, i: u64, stop: impl Fn() -> bool) -> Option<Instant> {
        // Inlined, so an unthrottled loop pays a test, not a call.
        if matches!(self.schedule, Schedule::Unthrottled) {
            return None;
        }
        self.wait_for_paced(i, stop)
    }

    /// [`Pacer::wait_for`] on a schedule (its intended times exist).
    fn wait_for_paced(&mut self, i: u64, stop: impl Fn() -> bool) -> Option<Instant> {
        let intended = self.schedule.intended(i)?;
        if self.clock.now() < intended {
            self.wait_until(intended, stop);
            let late = self.clock.now().saturating_duration_since(intended);
            self.overshoot.saturating_record(late.as_nanos() as u64);
        }
        Some(intended)
    }

    /// Waits until the end of a stream of `n` operations.
    pub fn wait_end(&mut self, n: u64, stop: impl Fn() -> bool) {
        if let Some(end) = self.schedule.end(n) {
            self.wait_until(end, stop);
        }
    }

    /// The stretch to spin: how late 99% of the recent sleeps woke (a VM
    /// wakes a sleeper tens to hundreds of µs late, later after longer
    /// sleeps), at most [`SPIN_SHARE`] of a slot.
    fn spin(&self) -> Duration {
        let cap = match self.schedule {
            Schedule::Every { interval, .. } => interval.mul_f64(SPIN_SHARE).min(MAX_SPIN),
            Schedule::Unthrottled => MAX_SPIN,
        };
        self.spin.clamp(MIN_SPIN.min(cap), cap)
    }

    /// Sleeps until `deadline` (precisely: until a spin before it, then
    /// spins), polling `stop` at least every 50 ms.
    fn wait_until(&mut self, deadline: Instant, stop: impl Fn() -> bool) {
        if C::SIMULATED {
            return self.clock.sleep_until(deadline);
        }
        if self.precise && !self.slack_set {
            // The kernel may delay a sleeper's wake-up by its timer slack (50 µs by default).
            // SAFETY: prctl with PR_SET_TIMERSLACK takes a value and changes only this thread.
            unsafe { libc::prctl(libc::PR_SET_TIMERSLACK, 1 as libc::c_ulong) };
            self.slack_set = true;
        }
        loop {
            let now = self.clock.now();
            if now >= deadline || stop() {
                return;
            }
            let left = deadline - now;
            if !self.precise {
                self.clock.sleep(left.min(Duration::from_millis(50)));
                continue;
            }
            let spin = self.spin();
            if left > spin {
                let nap = (left - spin).min(Duration::from_millis(50));
                let wake = now + nap;
                self.clock.sleep(nap);
                self.learn(self.clock.now().saturating_duration_since(wake));
            } else {
                std::hint::spin_loop();
            }
        }
    }

    /// Notes how late a sleep woke; every 10 sleeps, the spin becomes the
    /// 99th percentile of the last [`RECENT`] (past the first ten, so a
    /// stream's start already adapts).
    fn learn(&mut self, late: Duration) {
        self.recent[self.next % RECENT] = late;
        self.next += 1;
        if self.next.is_multiple_of(10) {
            let seen = self.next.min(RECENT);
            let mut sorted = self.recent;
            let window = &mut sorted[..seen];
            window.sort_unstable();
            self.spin = window[(seen * 99 / 100).min(seen - 1)];
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn phased_streams_interleave_and_end_together() {
        let t0 = Instant::now();
        let base = Schedule::rate(t0, 20.0); // a 50 ms slot
        let starts: Vec<Duration> = (0..4).map(|k| base.phased(k, 4).intended(0).unwrap() - t0).collect();
        assert_eq!(starts, [0, 12_500, 25_000, 37_500].map(Duration::from_micros));
        let s = base.phased(3, 4);
        assert_eq!(s.intended(2).unwrap() - t0, Duration::from_micros(137_500));
        assert_eq!(s.end(10).unwrap() - t0, Duration::from_millis(500));
        assert!(Schedule::Unthrottled.phased(1, 2).intended(0).is_none());
    }

    #[test]
    fn a_precise_pacer_starts_within_microseconds_of_each_intended_start() {
        let t0 = Instant::now();
        let mut p = Pacer::new(Schedule::rate(t0, 1000.0), true, crate::clock::SystemClock);
        let mut lags: Vec<Duration> = (0..300)
            .map(|i| {
                let intended = p.wait_for(i, || false).expect("a paced schedule");
                Instant::now().saturating_duration_since(intended)
            })
            .collect();
        lags.sort();
        // Unit tests run beside others: a generous bound here; the harness
        // test (tests/run_null.rs) checks the lag on a quiet machine.
        assert!(lags[150] < Duration::from_micros(100), "median lag {:?}", lags[150]);
    }
}
