//! A stop request shared by a run's threads: Ctrl-C, SIGTERM or SIGHUP in
//! the CLI, KeyboardInterrupt in Python, or a caller of the Rust API.
//!
//! Worker threads stop between operations when they see it. A statement that
//! may run for long (index creation, maintenance, verify's reads, a lock
//! wait) is run under [`Stop::guard`], which cancels it on the server when a
//! stop is requested, so a stop never waits for a statement to finish.

use std::sync::atomic::{AtomicU32, Ordering};
use std::sync::Arc;
use std::time::Duration;

/// Cancels the statement a session is running, from another thread
/// (PostgreSQL's cancel request, MySQL's `KILL QUERY`, SQLite's interrupt).
/// Calling it when nothing runs does nothing.
pub type Interrupter = Arc<dyn Fn() + Send + Sync>;

/// How often a guard looks at the stop request, and re-sends a cancel while
/// the statement is still running (a cancel can race with its start).
const POLL: Duration = Duration::from_millis(20);
const RESEND: Duration = Duration::from_millis(250);

/// A stop request: how many have been made (a second Ctrl-C is told apart
/// from the first, but never skips restoring what ibench changed).
#[derive(Debug, Default)]
pub struct Stop {
    requests: AtomicU32,
}

impl Stop {
    /// No stop requested yet.
    pub fn new() -> Self {
        Stop::default()
    }

    /// Requests a stop; returns how many requests there have been, this one included.
    pub fn request(&self) -> u32 {
        self.requests.fetch_add(1, Ordering::SeqCst) + 1
    }

    /// True once a stop was requested.
    pub fn requested(&self) -> bool {
        self.requests.load(Ordering::Relaxed) > 0
    }

    /// Runs `op` (which runs a statement on the session `interrupt` cancels)
    /// and cancels it when a stop is requested before it returns.
    pub fn guard<T>(&self, interrupt: Option<&Interrupter>, op: impl FnOnce() -> T) -> T {
        let Some(interrupt) = interrupt else {
            return op();
        };
        let done = std::sync::atomic::AtomicBool::new(false);
        std::thread::scope(|scope| {
            scope.spawn(|| {
                let mut since_cancel = RESEND;
                while !done.load(Ordering::Acquire) {
                    if self.requested() {
                        if since_cancel >= RESEND {
                            interrupt();
                            since_cancel = Duration::ZERO;
                        }
                        since_cancel += POLL;
                    }
                    std::thread::park_timeout(POLL);
                }
            });
            let out = op();
            done.store(true, Ordering::Release);
            out
        })
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use std::sync::atomic::AtomicBool;
    use std::time::Instant;

    #[test]
    fn a_guard_cancels_its_operation_when_a_stop_is_requested() {
        let stop = Arc::new(Stop::new());
        let cancelled = Arc::new(AtomicBool::new(false));
        let flag = cancelled.clone();
        let interrupt: Interrupter = Arc::new(move || flag.store(true, Ordering::SeqCst));
        let s = stop.clone();
        std::thread::spawn(move || {
            std::thread::sleep(Duration::from_millis(100));
            s.request();
        });
        let started = Instant::now();
        // A "statement" that runs until it is cancelled.
        stop.guard(Some(&interrupt), || {
            while !cancelled.load(Ordering::SeqCst) {
                std::thread::sleep(Duration::from_millis(5));
            }
        });
        assert!(started.elapsed() < Duration::from_secs(2));
        assert_eq!(stop.request(), 2, "requests are counted");
    }

    #[test]
    fn a_guard_without_a_stop_lets_its_operation_finish() {
        let stop = Stop::new();
        let interrupt: Interrupter = Arc::new(|| panic!("nothing to cancel"));
        assert_eq!(stop.guard(Some(&interrupt), || 42), 42);
        assert!(!stop.requested());
    }
}
