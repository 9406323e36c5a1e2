//! The pacer's own lateness (`cargo bench --bench pacing`): for streams of
//! 20, 100 and 1000 operations/s, the schedule lag (actual − intended start)
//! of a precise pacer (sleep, then spin the last stretch) against a plain
//! sleeping one, and what each costs in CPU. Each figure comes from one
//! stream of 5 s, the two pacers alternating, on an otherwise idle host.

use ibench::exec::{Pacer, Schedule};
use std::time::{Duration, Instant};

fn cpu_s() -> f64 {
    let mut u: libc::rusage = unsafe { std::mem::zeroed() };
    // SAFETY: getrusage writes the struct it is given.
    unsafe { libc::getrusage(libc::RUSAGE_THREAD, &mut u) };
    let t = |v: libc::timeval| v.tv_sec as f64 + v.tv_usec as f64 / 1e6;
    t(u.ru_utime) + t(u.ru_stime)
}

/// (p50, p99, max) of the lags in µs, and CPU µs per operation.
fn stream(rate: f64, precise: bool, seconds: f64) -> ([f64; 3], f64) {
    let n = (rate * seconds) as u64;
    let mut pacer = Pacer::new(
        Schedule::rate(Instant::now() + Duration::from_millis(5), rate),
        precise,
        ibench::clock::SystemClock,
    );
    let cpu = cpu_s();
    let mut lags: Vec<f64> = (0..n)
        .map(|i| {
            let intended = pacer.wait_for(i, || false).expect("a paced schedule");
            Instant::now().saturating_duration_since(intended).as_nanos() as f64 / 1000.0
        })
        .collect();
    let cpu_per_op = (cpu_s() - cpu) * 1e6 / n as f64;
    lags.sort_by(|a, b| a.partial_cmp(b).unwrap());
    let at = |q: f64| lags[((lags.len() as f64 * q) as usize).min(lags.len() - 1)];
    ([at(0.5), at(0.99), lags[lags.len() - 1]], cpu_per_op)
}

fn main() {
    println!("| ops/s | pacer | lag p50 µs | lag p99 µs | lag max µs | CPU µs per op | CPU % of a core |");
    println!("|---|---|---|---|---|---|---|");
    for rate in [20.0, 100.0, 1000.0] {
        for round in 0..2 {
            for precise in [true, false] {
                let ([p50, p99, max], cpu) = stream(rate, precise, 5.0);
                let name = if precise { "precise" } else { "sleep" };
                println!(
                    "| {rate} | {name} ({}) | {p50:.1} | {p99:.1} | {max:.0} | {cpu:.1} | {:.2} |",
                    round + 1,
                    cpu * rate / 1e4
                );
            }
        }
    }
}
