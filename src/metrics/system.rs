//! Host and process counters: CPU, context switches, disk I/O, memory.
//!
//! Read from /proc (Linux). A counter that cannot be read is `None` and the
//! run goes on; the reports show it as null.

use std::time::Instant;

/// Counters at one moment. CPU times are seconds; I/O in operations and bytes.
#[derive(Clone, Debug, Default)]
pub struct SystemSample {
    /// When it was taken.
    pub at: Option<Instant>,
    /// Host CPU seconds busy (all CPUs: user, nice, system, irq, softirq, steal).
    pub host_busy_s: Option<f64>,
    /// Host context switches since boot.
    pub host_ctxt: Option<u64>,
    /// Disk reads and writes completed, and bytes read and written (whole disks).
    pub disk: Option<DiskCounters>,
    /// CPU seconds of this process (user + system).
    pub client_cpu_s: Option<f64>,
    /// CPU seconds of the server's processes (with their reaped children).
    pub server_cpu_s: Option<f64>,
    /// Resident memory of the server's processes, bytes.
    pub server_rss: Option<u64>,
}

/// Cumulative disk counters summed over whole disks.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
pub struct DiskCounters {
    /// Reads completed.
    pub reads: u64,
    /// Writes completed.
    pub writes: u64,
    /// Bytes read.
    pub read_bytes: u64,
    /// Bytes written.
    pub written_bytes: u64,
}

fn clock_ticks() -> f64 {
    // SAFETY: sysconf has no preconditions.
    match unsafe { libc::sysconf(libc::_SC_CLK_TCK) } {
        t if t > 0 => t as f64,
        _ => 100.0,
    }
}

fn page_size() -> u64 {
    // SAFETY: sysconf has no preconditions.
    match unsafe { libc::sysconf(libc::_SC_PAGESIZE) } {
        p if p > 0 => p as u64,
        _ => 4096,
    }
}

/// Busy CPU seconds and context switches from /proc/stat.
fn host_cpu() -> (Option<f64>, Option<u64>) {
    let Ok(text) = std::fs::read_to_string("/proc/stat") else {
        return (None, None);
    };
    let mut busy = None;
    let mut ctxt = None;
    for line in text.lines() {
        let mut f = line.split_whitespace();
        match f.next() {
            Some("cpu") => {
                let v: Vec<u64> = f.filter_map(|x| x.parse().ok()).collect();
                if v.len() >= 8 {
                    // user nice system idle iowait irq softirq steal: idle and iowait are not busy.
                    let ticks = v[0] + v[1] + v[2] + v[5] + v[6] + v[7];
                    busy = Some(ticks as f64 / clock_ticks());
                }
            }
            Some("ctxt") => ctxt = f.next().and_then(|x| x.parse().ok()),
            _ => {}
        }
    }
    (busy, ctxt)
}

/// Whole disks' counters from /proc/diskstats (partitions, loop, ram and zram devices left out).
fn disks() -> Option<DiskCounters> {
    let text = std::fs::read_to_string("/proc/diskstats").ok()?;
    let mut sum = DiskCounters::default();
    for line in text.lines() {
        let f: Vec<&str> = line.split_whitespace().collect();
        if f.len() < 10 {
            continue;
        }
        let name = f[2];
        let whole = std::path::Path::new("/sys/block").join(name).exists();
        if !whole || ["loop", "ram", "zram"].iter().any(|p| name.starts_with(p)) {
            continue;
        }
        let n = |i: usize| f[i].parse::<u64>().unwrap_or(0);
        sum.reads += n(3);
        sum.read_bytes += n(5) * 512;
        sum.writes += n(7);
        sum.written_bytes += n(9) * 512;
    }
    Some(sum)
}

/// This process's CPU seconds (all threads).
fn own_cpu() -> Option<f64> {
    let text = std::fs::read_to_string("/proc/self/stat").ok()?;
    let fields: Vec<&str> = text[text.rfind(')')? + 2..].split_whitespace().collect();
    let ticks: u64 = fields.get(11)?.parse::<u64>().ok()? + fields.get(12)?.parse::<u64>().ok()?;
    Some(ticks as f64 / clock_ticks())
}

/// CPU seconds and resident bytes of every process whose name is in `names`.
fn processes(names: &[&str]) -> (Option<f64>, Option<u64>) {
    if names.is_empty() {
        return (None, None);
    }
    let Ok(dir) = std::fs::read_dir("/proc") else {
        return (None, None);
    };
    let (mut ticks, mut rss, mut found) = (0u64, 0u64, false);
    for entry in dir.flatten() {
        let Ok(text) = std::fs::read_to_string(entry.path().join("stat")) else {
            continue;
        };
        let (Some(open), Some(close)) = (text.find('('), text.rfind(')')) else {
            continue;
        };
        if !names.contains(&&text[open + 1..close]) {
            continue;
        }
        let f: Vec<&str> = text[close + 2..].split_whitespace().collect();
        let n = |i: usize| f.get(i).and_then(|x| x.parse::<u64>().ok()).unwrap_or(0);
        // utime stime cutime cstime; rss in pages.
        ticks += n(11) + n(12) + n(13) + n(14);
        rss += n(21) * page_size();
        found = true;
    }
    if found {
        (Some(ticks as f64 / clock_ticks()), Some(rss))
    } else {
        (None, None)
    }
}

impl SystemSample {
    /// Reads every counter now; `server` names the server's processes
    /// (empty when the database is embedded or remote).
    pub fn take(server: &[&str]) -> SystemSample {
        let (host_busy_s, host_ctxt) = host_cpu();
        let (server_cpu_s, server_rss) = processes(server);
        SystemSample {
            at: Some(Instant::now()),
            host_busy_s,
            host_ctxt,
            disk: disks(),
            client_cpu_s: own_cpu(),
            server_cpu_s,
            server_rss,
        }
    }
}

/// What happened between two samples.
#[derive(Clone, Debug, Default, PartialEq)]
pub struct SystemDelta {
    /// Seconds between the samples.
    pub seconds: f64,
    /// Host CPU seconds busy.
    pub host_busy_s: Option<f64>,
    /// Host context switches.
    pub ctxt: Option<u64>,
    /// Disk operations and bytes.
    pub disk: Option<DiskCounters>,
    /// This process's CPU seconds.
    pub client_cpu_s: Option<f64>,
    /// The server's CPU seconds.
    pub server_cpu_s: Option<f64>,
    /// The larger of the two samples' server RSS.
    pub server_rss: Option<u64>,
}

fn diff<T: Copy>(a: Option<T>, b: Option<T>, sub: impl Fn(T, T) -> T) -> Option<T> {
    Some(sub(b?, a?))
}

impl SystemDelta {
    /// `later − earlier`.
    pub fn between(earlier: &SystemSample, later: &SystemSample) -> SystemDelta {
        SystemDelta {
            seconds: match (earlier.at, later.at) {
                (Some(a), Some(b)) => b.saturating_duration_since(a).as_secs_f64(),
                _ => 0.0,
            },
            host_busy_s: diff(earlier.host_busy_s, later.host_busy_s, |b, a| (b - a).max(0.0)),
            ctxt: diff(earlier.host_ctxt, later.host_ctxt, |b, a| b.saturating_sub(a)),
            disk: diff(earlier.disk, later.disk, |b, a| DiskCounters {
                reads: b.reads.saturating_sub(a.reads),
                writes: b.writes.saturating_sub(a.writes),
                read_bytes: b.read_bytes.saturating_sub(a.read_bytes),
                written_bytes: b.written_bytes.saturating_sub(a.written_bytes),
            }),
            client_cpu_s: diff(earlier.client_cpu_s, later.client_cpu_s, |b, a| (b - a).max(0.0)),
            server_cpu_s: diff(earlier.server_cpu_s, later.server_cpu_s, |b, a| (b - a).max(0.0)),
            server_rss: match (earlier.server_rss, later.server_rss) {
                (Some(a), Some(b)) => Some(a.max(b)),
                (a, b) => a.or(b),
            },
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn this_process_and_the_host_are_readable_on_linux() {
        let a = SystemSample::take(&[]);
        let mut x = 0u64;
        let start = Instant::now();
        while start.elapsed().as_millis() < 200 {
            x = x.wrapping_add(std::hint::black_box(1));
        }
        let b = SystemSample::take(&[]);
        let d = SystemDelta::between(&a, &b);
        assert!(x > 0);
        assert!(d.client_cpu_s.unwrap() > 0.1, "{d:?}");
        assert!(d.host_busy_s.unwrap() > 0.1, "{d:?}");
        assert!(d.ctxt.is_some() && d.disk.is_some());
        assert_eq!(d.server_cpu_s, None, "no server named");
    }
}
