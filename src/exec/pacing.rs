//! Open-loop pacing: operation `i` of a stream is intended to start at
//! `t0 + phase + i × interval`. Late operations run at once and keep their
//! intended time (response time includes the backlog); ticks are never skipped.
//!
//! Each of a step's N paced streams gets its own phase (stream k starts at
//! `t0 + k/N × interval`), so N clients do not all commit at the same instant
//! every slot: the aggregate arrivals are as smooth as the rate allows.

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

    /// Waits for operation `i`'s intended start (or returns at once when it
    /// is past) and returns it; `stop` is polled while waiting.
    pub fn wait_for(&self, i: u64, stop: impl Fn() -> bool) -> Instant {
        match self.intended(i) {
            None => Instant::now(),
            Some(intended) => {
                wait_until(intended, stop);
                intended
            }
        }
    }

    /// Waits until the end of a stream of `n` operations.
    pub fn wait_end(&self, n: u64, stop: impl Fn() -> bool) {
        if let Some(end) = self.end(n) {
            wait_until(end, stop);
        }
    }
}

/// Sleeps until `deadline`, polling `stop` at least every 50 ms.
fn wait_until(deadline: Instant, stop: impl Fn() -> bool) {
    loop {
        let now = Instant::now();
        if now >= deadline || stop() {
            return;
        }
        std::thread::sleep((deadline - now).min(Duration::from_millis(50)));
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
}
