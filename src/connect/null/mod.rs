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
//!   write of known size for testing the I/O counters.
//!
//! Durations take `ns`, `us`, `ms` or `s`.

use super::{Bounds, Connector, KvSession, Maintenance, Session, Sizes};
use crate::error::{Error, Result};
use crate::gen::{KvBatch, RangeQuery, Row, Rows};
use crate::stop::Stop;
use rand_core::{Rng, SeedableRng};
use rand_xoshiro::Xoshiro256PlusPlus;
use std::sync::atomic::{AtomicU64, Ordering};
use std::sync::Arc;
use std::time::{Duration, Instant};

/// Injected latency per operation.
#[derive(Clone, Copy, Debug, PartialEq)]
enum Latency {
    None,
    Fixed(Duration),
    Exponential(Duration),
}

/// The null connector.
pub struct NullConnector {
    dsn: String,
    /// Per operation kind: insert, delete, query.
    latency: [Latency; 3],
    /// Thread CPU time every operation burns (`cpu=`).
    cpu: Duration,
    stalls: Arc<Vec<(Duration, Duration)>>,
    fail: Option<(String, u64)>,
    deadlock: Option<(String, u64)>,
    write: usize,
    dir: std::path::PathBuf,
    opened: Instant,
    sessions: AtomicU64,
    /// Picks the injected latencies' random streams.
    seed: u64,
}

impl NullConnector {
    /// Parses the part of the DSN after `null:` (`?latency=...&stall=...`).
    pub fn new(rest: &str) -> Result<Self> {
        let query = rest.trim_start_matches("//").trim_start_matches('?');
        let duration = |d: &str| super::dsn::duration("db", d);
        let mut latency = [Latency::None; 3];
        let mut per_op: Vec<(usize, Latency)> = Vec::new();
        let mut cpu = Duration::ZERO;
        let mut stalls = Vec::new();
        let mut fail = None;
        let mut deadlock = None;
        let mut write = 0usize;
        let mut dir = std::env::temp_dir();
        let mut seed = 0u64;
        for (key, value) in super::dsn::options(query) {
            let (key, value) = (key.as_str(), value.as_str());
            if value.is_empty() {
                return Err(Error::config(
                    "db",
                    format!("null: option {key:?} has no value (key=value)"),
                ));
            }
            match key {
                "latency" | "insert_latency" | "delete_latency" | "query_latency" => {
                    let (kind, d) = value.split_once(':').ok_or_else(|| {
                        Error::config(
                            "db",
                            format!("null: {key} {value:?}: expected fixed:DURATION or exp:DURATION"),
                        )
                    })?;
                    let d = duration(d)?;
                    let l = match kind {
                        "fixed" => Latency::Fixed(d),
                        "exp" => Latency::Exponential(d),
                        _ => {
                            return Err(Error::config(
                                "db",
                                format!("null: latency kind {kind:?}: expected fixed or exp"),
                            ))
                        }
                    };
                    match key {
                        "latency" => latency = [l; 3],
                        "insert_latency" => per_op.push((0, l)),
                        "delete_latency" => per_op.push((1, l)),
                        _ => per_op.push((2, l)),
                    }
                }
                "stall" => {
                    for s in value.split(',') {
                        let (len, at) = s
                            .split_once('@')
                            .ok_or_else(|| Error::config("db", format!("null: stall {s:?}: expected LENGTH@TIME")))?;
                        stalls.push((duration(at)?, duration(len)?));
                    }
                }
                "cpu" => cpu = duration(value)?,
                "write" => write = super::dsn::size("db", value)? as usize,
                "dir" => dir = std::path::PathBuf::from(value),
                "seed" => {
                    seed = value
                        .parse()
                        .map_err(|_| Error::config("db", format!("null: seed {value:?}: expected a whole number")))?
                }
                "fail" | "deadlock" => {
                    let bad = || {
                        Error::config(
                            "db",
                            format!("null: {key} {value:?}: expected insert@N, delete@N or query@N"),
                        )
                    };
                    let (op, n) = value.split_once('@').ok_or_else(bad)?;
                    let n: u64 = n.parse().map_err(|_| bad())?;
                    if !["insert", "delete", "query"].contains(&op) || n == 0 {
                        return Err(bad());
                    }
                    let slot = if key == "fail" { &mut fail } else { &mut deadlock };
                    *slot = Some((op.to_string(), n));
                }
                _ => {
                    return Err(Error::config(
                        "db",
                        format!(
                            "null: unknown option {key:?}; expected latency, insert_latency, delete_latency, query_latency, cpu, stall, fail, deadlock, write, dir or seed"
                        ),
                    ))
                }
            }
        }
        for (op, l) in per_op {
            latency[op] = l;
        }
        Ok(NullConnector {
            dsn: super::redact(&format!("null:{rest}")),
            latency,
            cpu,
            stalls: Arc::new(stalls),
            fail,
            deadlock,
            write,
            dir,
            opened: Instant::now(),
            sessions: AtomicU64::new(0),
            seed,
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
            ("latency".into(), format!("{:?}", self.latency)),
            ("cpu".into(), format!("{:?}", self.cpu)),
            ("stalls".into(), format!("{:?}", self.stalls)),
        ]
    }
    fn session(&self) -> Result<Box<dyn Session>> {
        Ok(Box::new(self.open_session()?))
    }
    fn kv_session(&self) -> Result<Box<dyn KvSession>> {
        Ok(Box::new(self.open_session()?))
    }
    fn stores_data(&self) -> bool {
        false
    }
    fn sizes(&self, _tables: &[String]) -> Sizes {
        Sizes::default()
    }
    fn data_path(&self) -> Option<std::path::PathBuf> {
        (self.write > 0).then(|| self.dir.clone())
    }
}

impl NullConnector {
    fn open_session(&self) -> Result<NullSession> {
        let n = self.sessions.fetch_add(1, Ordering::Relaxed);
        let file = if self.write > 0 {
            let path = self.dir.join(format!("ibench-null-{}-{n}.bin", std::process::id()));
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
            block: vec![0x5a; self.write],
            latency: self.latency,
            cpu: self.cpu,
            stalls: self.stalls.clone(),
            fail: self.fail.clone(),
            deadlock: self.deadlock.clone(),
            counts: [0; 3],
            opened: self.opened,
            // Each session its own stream; `seed` picks another set of them.
            rng: Xoshiro256PlusPlus::seed_from_u64(n ^ self.seed.wrapping_mul(0x9e37_79b9_7f4a_7c15)),
        })
    }
}

struct NullSession {
    /// The file inserts overwrite and fsync (`write=`).
    file: Option<std::fs::File>,
    block: Vec<u8>,
    latency: [Latency; 3],
    cpu: Duration,
    stalls: Arc<Vec<(Duration, Duration)>>,
    fail: Option<(String, u64)>,
    deadlock: Option<(String, u64)>,
    /// Inserts, deletes and queries so far.
    counts: [u64; 3],
    opened: Instant,
    rng: Xoshiro256PlusPlus,
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
fn thread_cpu() -> Duration {
    let mut ts = libc::timespec { tv_sec: 0, tv_nsec: 0 };
    // SAFETY: clock_gettime fills the timespec it is given; the thread CPU
    // clock exists on every Linux and BSD.
    let rc = unsafe { libc::clock_gettime(libc::CLOCK_THREAD_CPUTIME_ID, &mut ts) };
    debug_assert_eq!(rc, 0, "the thread CPU clock is readable");
    Duration::new(ts.tv_sec as u64, ts.tv_nsec as u32)
}

/// Spins until the calling thread has used `cpu` more CPU time: counted on
/// the thread's own clock, so time the thread spends preempted does not count.
fn burn_cpu(cpu: Duration) {
    let until = thread_cpu() + cpu;
    while thread_cpu() < until {
        std::hint::spin_loop();
    }
}

impl NullSession {
    /// Counts an operation of kind `op` (0 insert, 1 delete, 2 query) and fails it when asked to.
    fn count(&mut self, op: usize) -> Result<()> {
        self.counts[op] += 1;
        let name = ["insert", "delete", "query"][op];
        let hit = |o: &Option<(String, u64)>| matches!(o, Some((what, n)) if what == name && self.counts[op] == *n);
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
    fn operate(&mut self, op: usize) -> Result<()> {
        if self.latency[op] == Latency::None && self.stalls.is_empty() && self.cpu.is_zero() {
            return Ok(()); // no clock read: the harness alone is what gets measured
        }
        let start = Instant::now();
        if !self.cpu.is_zero() {
            burn_cpu(self.cpu);
        }
        let since = start - self.opened;
        let mut end = start
            + match self.latency[op] {
                Latency::None => Duration::ZERO,
                Latency::Fixed(d) => d,
                Latency::Exponential(mean) => {
                    let u = ((self.rng.next_u64() >> 11) as f64 + 0.5) / (1u64 << 53) as f64;
                    mean.mul_f64(-u.ln())
                }
            };
        for &(at, len) in self.stalls.iter() {
            if since >= at && since < at + len {
                end = end.max(self.opened + at + len);
            }
        }
        if end > start {
            wait_until(end);
        }
        Ok(())
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

impl KvSession for NullSession {
    fn create(&mut self, _: &str, _: usize) -> Result<()> {
        Ok(())
    }
    fn put(&mut self, table: &str, _: &KvBatch) -> Result<()> {
        self.insert(table, &Rows::default()).map(|_| ())
    }
    fn get(&mut self, _: &str, _: &[u8], _: &mut Vec<u8>) -> Result<bool> {
        self.count(2)?;
        self.operate(2)?;
        Ok(false)
    }
    fn scan(&mut self, _: &str, _: &[u8], _: usize, out: &mut KvBatch) -> Result<usize> {
        out.clear();
        self.count(2)?;
        self.operate(2)?;
        Ok(0)
    }
    fn scan_reverse(&mut self, table: &str, start: &[u8], limit: usize, out: &mut KvBatch) -> Result<usize> {
        self.scan(table, start, limit, out)
    }
    fn delete_keys(&mut self, _: &str, _: &KvBatch) -> Result<()> {
        self.count(1)?;
        self.operate(1)
    }
    fn count(&mut self, _: &str) -> Result<u64> {
        Ok(0)
    }
    fn flush(&mut self, _: &str, _: &Stop) -> Result<Vec<String>> {
        Ok(Vec::new())
    }
    fn wait_for_compaction(&mut self, _: &str, _: &Stop) -> Result<Vec<String>> {
        Ok(Vec::new())
    }
}

#[cfg(test)]
mod tests {
    use super::*;

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
