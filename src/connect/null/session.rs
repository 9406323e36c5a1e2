//! A null session: it counts its operations, fails the ones it is told to,
//! and spends the CPU time and latency it is told to (sleeping, then
//! spinning to the microsecond); it stores nothing.

use super::options::{Injected, Latency, OPERATIONS};
use crate::connect::{Bounds, Maintenance, Session};
use crate::error::{Error, Result};
use crate::gen::{RangeQuery, Row, Rows};
use rand_core::Rng;
use rand_xoshiro::Xoshiro256PlusPlus;
use std::sync::Arc;
use std::time::{Duration, Instant};

/// One session of the null connector.
pub(super) struct NullSession {
    /// The file inserts overwrite and fsync (`write=`).
    pub(super) file: Option<std::fs::File>,
    pub(super) block: Vec<u8>,
    pub(super) latency: [Latency; 3],
    pub(super) cpu: Duration,
    pub(super) stalls: Arc<Vec<(Duration, Duration)>>,
    pub(super) fail: Injected,
    pub(super) deadlock: Injected,
    /// Inserts, deletes and queries so far.
    pub(super) counts: [u64; 3],
    pub(super) opened: Instant,
    /// `time=simulated`.
    pub(super) simulated: bool,
    pub(super) rng: Xoshiro256PlusPlus,
    /// The sysbench steps' statements.
    pub(super) sb: super::sysbench::SbStatements,
}

/// Waits until `deadline`: sleeps while far from it, then spins, so injected
/// latencies are accurate to about a microsecond on an idle core.
fn wait_until(deadline: Instant) {
    loop {
        let now = Instant::now();
        if now >= deadline {
            return;
        }
        let left = deadline - now;
        // Sleeping overshoots by tens of µs (more on a busy host): spin the last millisecond.
        if left > Duration::from_millis(2) {
            std::thread::sleep(left - Duration::from_millis(1));
        } else {
            std::hint::spin_loop();
        }
    }
}

/// The CPU time the calling thread has used.
pub(super) fn thread_cpu() -> Duration {
    let mut ts = libc::timespec { tv_sec: 0, tv_nsec: 0 };
    // SAFETY: clock_gettime fills the timespec it is given; the thread CPU
    // clock exists on every Linux and BSD.
    let rc = unsafe { libc::clock_gettime(libc::CLOCK_THREAD_CPUTIME_ID, &mut ts) };
    debug_assert_eq!(rc, 0, "the thread CPU clock is readable");
    Duration::new(ts.tv_sec as u64, ts.tv_nsec as u32)
}

/// The fewest turns of [`burn_cpu`]'s loop between two reads of the
/// thread's CPU clock: about a microsecond, the most a burn overshoots by.
const MIN_SPINS: u128 = 256;

/// Spins until the calling thread has used `cpu` more CPU time: counted on
/// the thread's own clock, so time the thread spends preempted does not count.
/// Never inlined, and its CPU its own: the clock is a system call (several
/// µs on a VM, whose kernel frames took a third of the samples when it was
/// read at every turn), so each batch of turns is sized to three quarters of
/// the CPU left at the rate the last batch ran, and a burn reads the clock
/// a handful of times. A CPU profile of ibench (`profile_client`) names it
/// as the function that burns: the known answer of tests/profile.rs and the
/// explain tests.
#[inline(never)]
fn burn_cpu(cpu: Duration) {
    let mut now = thread_cpu();
    let until = now + cpu;
    let (mut x, mut spins) = (1u64, MIN_SPINS);
    while now < until {
        let before = now;
        for _ in 0..spins {
            x = std::hint::black_box(x.wrapping_mul(6364136223846793005).wrapping_add(1));
        }
        now = thread_cpu();
        let took = (now - before).as_nanos().max(1);
        spins = (spins * until.saturating_sub(now).as_nanos() * 3 / 4 / took).max(MIN_SPINS);
    }
}

impl NullSession {
    /// Counts an operation of kind `op` (0 insert, 1 delete, 2 query) and fails it when asked to.
    pub(super) fn count(&mut self, op: usize) -> Result<()> {
        self.counts[op] += 1;
        let name = OPERATIONS[op];
        let hit = |o: &Injected| matches!(o, Some((what, n)) if what == name && self.counts[op] == *n);
        if hit(&self.fail) {
            return Err(Error::database(
                "null:",
                format!("injected failure of {name} number {}", self.counts[op]),
            ));
        }
        if hit(&self.deadlock) {
            return Err(Error::retryable(
                "null:",
                format!("injected deadlock in {name} number {}", self.counts[op]),
            ));
        }
        Ok(())
    }

    /// Spends the injected CPU time and latency of an operation of kind `op`
    /// (0 insert, 1 delete, 2 query); the latency counts from the operation's
    /// start, so it includes the CPU time.
    pub(super) fn operate(&mut self, op: usize) -> Result<()> {
        if self.latency[op] == Latency::None && self.stalls.is_empty() && self.cpu.is_zero() {
            return Ok(()); // no clock read: the harness alone is what gets measured
        }
        let start = (!self.simulated).then(Instant::now);
        if !self.cpu.is_zero() {
            burn_cpu(self.cpu);
        }
        let latency = self.draw(op);
        let Some(start) = start else {
            // Simulated: the latency moves the thread's time on (the burn
            // inside it), a stall from the run's simulated start.
            let since = crate::clock::simulated_since_epoch().unwrap_or_default();
            crate::clock::advance_simulated(latency.max(self.stalled(since) - since));
            return Ok(());
        };
        let end = (start + latency).max(self.opened + self.stalled(start - self.opened));
        if end > start {
            wait_until(end);
        }
        Ok(())
    }

    /// Operation `op`'s injected latency (a draw, when exponential).
    fn draw(&mut self, op: usize) -> Duration {
        match self.latency[op] {
            Latency::None => Duration::ZERO,
            Latency::Fixed(d) => d,
            Latency::Exponential(mean) => {
                let u = ((self.rng.next_u64() >> 11) as f64 + 0.5) / (1u64 << 53) as f64;
                mean.mul_f64(-u.ln())
            }
        }
    }

    /// When an operation starting `since` the connector opened may end:
    /// the end of the stall it falls in, else `since`.
    fn stalled(&self, since: Duration) -> Duration {
        self.stalls
            .iter()
            .filter(|&&(at, len)| since >= at && since < at + len)
            .map(|&(at, len)| at + len)
            .fold(since, Duration::max)
    }
}

impl Session for NullSession {
    fn create_table(&mut self, _: &str) -> Result<()> {
        Ok(())
    }
    fn create_indexes(&mut self, _: &str, _: usize) -> Result<()> {
        self.operate(0)
    }
    fn insert(&mut self, _: &str, _: &Rows) -> Result<Option<u64>> {
        self.count(0)?;
        if let Some(f) = &self.file {
            use std::os::unix::fs::FileExt;
            let io = |e| Error::database("null:", format!("write: {e}"));
            f.write_all_at(&self.block, 0).map_err(io)?;
            f.sync_data().map_err(io)?;
        }
        self.operate(0)?;
        Ok(None)
    }
    fn delete(&mut self, _: &str, _from: u64, n: u64) -> Result<u64> {
        self.count(1)?;
        self.operate(1)?;
        Ok(n)
    }
    fn range_query(&mut self, _: &str, _: &RangeQuery, _: bool) -> Result<usize> {
        self.count(2)?;
        self.operate(2)?;
        Ok(0)
    }
    fn point_query(&mut self, _: &str, _: &[u64]) -> Result<usize> {
        self.count(2)?;
        self.operate(2)?;
        Ok(0)
    }
    fn key_extreme(&mut self, _: &str, _: bool) -> Result<Option<u64>> {
        Ok(None)
    }
    fn maintain(&mut self, _: &Maintenance<'_>) -> Result<Vec<String>> {
        Ok(Vec::new())
    }
    fn bounds(&mut self, _: &str, _: bool) -> Result<Option<Bounds>> {
        Ok(None)
    }
    fn rows(&mut self, _: &str, _: &[u64]) -> Result<Vec<Row>> {
        Ok(Vec::new())
    }
}
