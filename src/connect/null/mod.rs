//! `null:` — a database that does nothing, to measure the harness itself. It
//! can inject latency so tests (and users) can see what the harness measures
//! and what coordinated omission does:
//!
//! * `latency=fixed:250us` — every operation takes 250 µs;
//! * `latency=exp:1ms` — exponentially distributed, mean 1 ms (seeded:
//!   every run draws the same latencies unless `seed=N` picks other ones);
//! * `insert_latency=`, `delete_latency=`, `query_latency=` — the same for
//!   one kind of operation only (overriding `latency` for it);
//! * `cpu=1ms` — every operation also burns that much of its thread's CPU
//!   time (a spin on the thread's CPU clock, before any injected latency):
//!   a CPU load of known size, which a busy machine's preemption cannot
//!   shrink the way it shrinks a spin-wait's share of the CPU;
//! * `stall=2s@5s` — operations that run 5 s after the connector opened wait
//!   until 7 s (repeatable: `stall=2s@5s,1s@20s`);
//! * `fail=delete@3` — the third delete of every session fails (`insert`,
//!   `delete`, `query`), to test what happens when a database errs mid-step;
//! * `deadlock=insert@3` — the third insert of every session reports a
//!   deadlock once (a retryable error), to test retries;
//! * `write=1MB` — every insert overwrites that many bytes of a file and
//!   fsyncs it (in `dir=PATH`, default the temporary directory), a disk
//!   write of known size for testing the I/O counters;
//! * `time=simulated` — latencies and stalls take no real time: the run's
//!   threads run on simulated time (`crate::clock`), which an operation
//!   moves on by its latency, so every schedule, latency and interval is
//!   exact whatever the host does; stalls count from the run's start.
//!
//! Durations take `ns`, `us`, `ms` or `s`.
//!
//! `options.rs` parses the DSN, `session.rs` is the session (`kv.rs` its
//! key/value side).

mod kv;
mod options;
mod session;
mod sysbench;

use crate::connect::{Connector, KvSession, Session, Sizes};
use crate::error::{Error, Result};
use options::NullOptions;
use rand_core::SeedableRng;
use rand_xoshiro::Xoshiro256PlusPlus;
use session::NullSession;
use std::sync::atomic::{AtomicU64, Ordering};
use std::sync::Arc;
use std::time::Instant;

/// The null connector.
pub struct NullConnector {
    dsn: String,
    options: NullOptions,
    stalls: Arc<Vec<(std::time::Duration, std::time::Duration)>>,
    opened: Instant,
    sessions: AtomicU64,
}

impl NullConnector {
    /// Parses the part of the DSN after `null:` (`?latency=...&stall=...`).
    pub fn new(rest: &str) -> Result<Self> {
        let options: NullOptions = rest.parse()?;
        Ok(NullConnector {
            dsn: crate::connect::redact(&format!("null:{rest}")),
            stalls: Arc::new(options.stalls.clone()),
            options,
            opened: Instant::now(),
            sessions: AtomicU64::new(0),
        })
    }
}

impl Connector for NullConnector {
    fn dbms(&self) -> &'static str {
        "null"
    }
    fn target(&self) -> String {
        self.dsn.clone()
    }
    fn version(&self) -> Result<String> {
        Ok(env!("CARGO_PKG_VERSION").to_string())
    }
    fn settings(&self) -> Vec<(String, String)> {
        vec![
            ("latency".into(), format!("{:?}", self.options.latency)),
            ("cpu".into(), format!("{:?}", self.options.cpu)),
            ("stalls".into(), format!("{:?}", self.stalls)),
        ]
    }
    fn session(&self) -> Result<Box<dyn Session>> {
        Ok(Box::new(self.open_session()?))
    }
    fn kv_session(&self) -> Result<Box<dyn KvSession>> {
        Ok(Box::new(self.open_session()?))
    }
    fn sb_session(&self) -> Result<Box<dyn crate::connect::SbSession>> {
        Ok(Box::new(self.open_session()?))
    }
    fn stores_data(&self) -> bool {
        false
    }
    fn simulated_time(&self) -> bool {
        self.options.simulated
    }
    fn sizes(&self, _tables: &[String]) -> Sizes {
        Sizes::default()
    }
    fn data_path(&self) -> Option<std::path::PathBuf> {
        (self.options.write > 0).then(|| self.options.dir.clone())
    }
}

impl NullConnector {
    fn open_session(&self) -> Result<NullSession> {
        let n = self.sessions.fetch_add(1, Ordering::Relaxed);
        let o = &self.options;
        let file = if o.write > 0 {
            let path = o.dir.join(format!("ibench-null-{}-{n}.bin", std::process::id()));
            let f = std::fs::OpenOptions::new()
                .create(true)
                .truncate(true)
                .read(true)
                .write(true)
                .open(&path)
                .map_err(|source| Error::Io {
                    action: "cannot create",
                    path: path.clone(),
                    source,
                })?;
            // The name goes now; the file lives as long as the session.
            let _ = std::fs::remove_file(&path);
            Some(f)
        } else {
            None
        };
        Ok(NullSession {
            file,
            block: vec![0x5a; o.write],
            latency: o.latency,
            cpu: o.cpu,
            stalls: self.stalls.clone(),
            fail: o.fail.clone(),
            deadlock: o.deadlock.clone(),
            counts: [0; 3],
            opened: self.opened,
            simulated: o.simulated,
            // Each session its own stream; `seed` picks another set of them.
            rng: Xoshiro256PlusPlus::seed_from_u64(n ^ o.seed.wrapping_mul(0x9e37_79b9_7f4a_7c15)),
            sb: Default::default(),
        })
    }
}

#[cfg(test)]
mod tests {
    use super::session::thread_cpu;
    use super::*;
    use rand_core::Rng;
    use std::time::Duration;

    /// The first draws of a fresh session of `dsn`.
    fn draws(dsn: &str) -> Vec<u64> {
        let c = NullConnector::new(dsn).unwrap();
        let mut s = c.open_session().unwrap();
        (0..8).map(|_| s.rng.next_u64()).collect()
    }

    #[test]
    fn a_seed_picks_the_injected_latencies_and_repeats_them() {
        let a = draws("?latency=exp:1ms&seed=3");
        assert_eq!(a, draws("?latency=exp:1ms&seed=3"), "the same seed, the same draws");
        assert_ne!(a, draws("?latency=exp:1ms&seed=4"));
        // No seed is seed 0, as before seeds existed.
        assert_eq!(draws("?latency=exp:1ms"), draws("?latency=exp:1ms&seed=0"));
        let e = NullConnector::new("?seed=x").err().unwrap().to_string();
        assert!(e.contains("seed"), "{e}");
    }

    #[test]
    fn cpu_burns_that_much_of_the_threads_cpu_time_per_operation() {
        let c = NullConnector::new("?cpu=5ms").unwrap();
        let mut s = c.open_session().unwrap();
        let before = thread_cpu();
        s.get("t", b"k", &mut Vec::new()).unwrap();
        let used = thread_cpu() - before;
        assert!(used >= Duration::from_millis(5), "{used:?} of CPU, expected 5 ms");
        assert!(used < Duration::from_millis(50), "{used:?} of CPU, expected 5 ms");
        let e = NullConnector::new("?cpu=lots").err().unwrap().to_string();
        assert!(e.contains("lots"), "{e}");
    }
}
