//! Open-loop pacing: operation `i` of a stream is intended to start at
//! `t0 + i × interval`. Late operations run at once and keep their intended
//! time (response time includes the backlog); ticks are never skipped.

use std::time::{Duration, Instant};

/// When operations are meant to start.
#[derive(Clone, Copy, Debug)]
pub enum Schedule {
    /// Closed loop: each operation is intended to start when the previous ends.
    Unthrottled,
    /// Open loop: one operation every `interval` from `t0`.
    Every {
        /// The first operation's intended start.
        t0: Instant,
        /// Time between intended starts.
        interval: Duration,
    },
}

impl Schedule {
    /// `ops_per_second` operations per second from `t0`.
    pub fn rate(t0: Instant, ops_per_second: f64) -> Schedule {
        Schedule::Every {
            t0,
            interval: Duration::from_secs_f64(1.0 / ops_per_second),
        }
    }

    /// Waits for operation `i`'s intended start (or returns at once when it
    /// is past) and returns it; `stop` is polled while waiting.
    pub fn wait_for(&self, i: u64, stop: impl Fn() -> bool) -> Instant {
        match *self {
            Schedule::Unthrottled => Instant::now(),
            Schedule::Every { t0, interval } => {
                let intended = t0 + interval.mul_f64(i as f64);
                loop {
                    let now = Instant::now();
                    if now >= intended || stop() {
                        return intended;
                    }
                    std::thread::sleep((intended - now).min(Duration::from_millis(50)));
                }
            }
        }
    }
}
