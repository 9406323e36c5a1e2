//! Time as the harness reads it: the one seam through which `exec` (and the
//! null connector's injected latencies) read the clock and wait.
//!
//! [`SystemClock`] is the monotonic clock and real sleeps: every run against
//! a database uses it, monomorphized, so it costs what `Instant::now()`
//! costs (`cargo bench --bench exec`, `--bench pacing`). [`SimulatedClock`]
//! is time that only moves when a thread waits: each worker thread of a
//! step has its own (a thread-local), starting at the step's start, and a
//! wait moves it to the wait's end at once. The null connector with
//! `time=simulated` injects its latencies as such waits, so a run's
//! schedules, latencies and intervals are exact to the nanosecond, whatever
//! the host is doing: what the harness's timing tests assert.

use std::cell::Cell;
use std::time::{Duration, Instant};

/// A clock and a way to wait on it.
pub trait Clock: Copy + Send + Sync + 'static {
    /// True when waits take no real time ([`SimulatedClock`]).
    const SIMULATED: bool;
    /// Now.
    fn now(self) -> Instant;
    /// Waits until `deadline` (at once when it has passed).
    fn sleep_until(self, deadline: Instant);
    /// Waits `d`.
    fn sleep(self, d: Duration) {
        self.sleep_until(self.now() + d);
    }
    /// Makes this the calling thread's clock from `start` on, in a run
    /// whose simulated time began at `epoch` (a no-op for real time).
    fn enter(self, _epoch: Instant, _start: Instant) {}
}

/// The monotonic clock and real sleeps.
#[derive(Clone, Copy, Debug, Default)]
pub struct SystemClock;

impl Clock for SystemClock {
    const SIMULATED: bool = false;
    #[inline(always)]
    fn now(self) -> Instant {
        Instant::now()
    }
    fn sleep_until(self, deadline: Instant) {
        let left = deadline.saturating_duration_since(Instant::now());
        if !left.is_zero() {
            std::thread::sleep(left);
        }
    }
    fn sleep(self, d: Duration) {
        std::thread::sleep(d);
    }
}

/// Per-thread simulated time (see the module's documentation).
#[derive(Clone, Copy, Debug, Default)]
pub struct SimulatedClock;

thread_local! {
    /// The thread's simulated (epoch, now), when it runs on simulated time.
    static SIMULATED: Cell<Option<(Instant, Instant)>> = const { Cell::new(None) };
}

impl Clock for SimulatedClock {
    const SIMULATED: bool = true;
    fn now(self) -> Instant {
        SIMULATED.get().map_or_else(Instant::now, |(_, now)| now)
    }
    fn sleep_until(self, deadline: Instant) {
        if let Some((epoch, now)) = SIMULATED.get() {
            SIMULATED.set(Some((epoch, now.max(deadline))));
        }
    }
    fn enter(self, epoch: Instant, start: Instant) {
        SIMULATED.set(Some((epoch, start)));
    }
}

/// The calling thread's simulated time since its run's epoch, when it runs
/// on simulated time (the null connector's stalls count from it).
pub fn simulated_since_epoch() -> Option<Duration> {
    SIMULATED.get().map(|(epoch, now)| now.saturating_duration_since(epoch))
}

/// Moves the calling thread's simulated time on by `d` and returns true;
/// false (doing nothing) when the thread runs on real time.
pub fn advance_simulated(d: Duration) -> bool {
    match SIMULATED.get() {
        Some((epoch, now)) => {
            SIMULATED.set(Some((epoch, now + d)));
            true
        }
        None => false,
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn simulated_time_moves_only_when_the_thread_waits() {
        let epoch = Instant::now();
        let start = epoch + Duration::from_secs(5);
        std::thread::spawn(move || {
            let c = SimulatedClock;
            c.enter(epoch, start);
            assert_eq!(c.now(), start);
            c.sleep(Duration::from_millis(3));
            assert_eq!(c.now(), start + Duration::from_millis(3));
            c.sleep_until(start); // in the past: no move
            assert!(advance_simulated(Duration::from_micros(7)));
            assert_eq!(
                simulated_since_epoch(),
                Some(Duration::from_secs(5) + Duration::from_micros(3007))
            );
        })
        .join()
        .unwrap();
        // Other threads run on real time.
        assert!(!advance_simulated(Duration::from_secs(1)));
        assert_eq!(simulated_since_epoch(), None);
    }
}
