//! Host and process counters: CPU, context switches, disk I/O, memory.
//!
//! Read from /proc (Linux). A counter that cannot be read is `None` and the
//! run goes on; the reports show it as null.

use super::ServerProcesses;
use std::path::Path;
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
    /// Disk reads and writes completed, and bytes read and written (the database's disks).
    pub disk: Option<DiskCounters>,
    /// CPU seconds of this process (user + system).
    pub client_cpu_s: Option<f64>,
    /// Of those, the seconds in the kernel (system calls, the network
    /// stack, going to sleep and waking up).
    pub client_sys_s: Option<f64>,
    /// CPU seconds of the server's processes (with their reaped children).
    pub server_cpu_s: Option<f64>,
    /// Resident memory of the server's processes, bytes.
    pub server_rss: Option<u64>,
    /// Each counted disk's counters.
    pub devices: Vec<DeviceCounters>,
}

/// One disk's cumulative counters from /proc/diskstats (what iostat reads).
#[derive(Clone, Debug, Default, PartialEq, Eq)]
pub struct DeviceCounters {
    /// The device's name (`vda`, `nvme0n1`).
    pub name: String,
    /// Reads and writes completed.
    pub reads: u64,
    /// Writes completed.
    pub writes: u64,
    /// Bytes read.
    pub read_bytes: u64,
    /// Bytes written.
    pub written_bytes: u64,
    /// Milliseconds reads spent (from issue to completion, summed).
    pub read_ms: u64,
    /// Milliseconds writes spent.
    pub write_ms: u64,
    /// Milliseconds the device had I/O in flight (iostat's %util numerator).
    pub busy_ms: u64,
}

/// What one disk did between two samples, as iostat shows it.
#[derive(Clone, Debug, Default, PartialEq)]
pub struct DeviceDelta {
    /// Seconds between the samples.
    pub seconds: f64,
    /// The counters' differences (and the device's name).
    pub counters: DeviceCounters,
}

impl DeviceDelta {
    /// The device's name.
    pub fn name(&self) -> &str {
        &self.counters.name
    }
    fn per_s(&self, v: u64) -> Option<f64> {
        (self.seconds > 0.0).then(|| v as f64 / self.seconds)
    }
    /// Reads completed per second (iostat r/s).
    pub fn reads_per_s(&self) -> Option<f64> {
        self.per_s(self.counters.reads)
    }
    /// Writes completed per second (w/s).
    pub fn writes_per_s(&self) -> Option<f64> {
        self.per_s(self.counters.writes)
    }
    /// KB read per second (rkB/s).
    pub fn read_kb_s(&self) -> Option<f64> {
        self.per_s(self.counters.read_bytes).map(|b| b / 1024.0)
    }
    /// KB written per second (wkB/s).
    pub fn write_kb_s(&self) -> Option<f64> {
        self.per_s(self.counters.written_bytes).map(|b| b / 1024.0)
    }
    /// Average ms per read (r_await); None without reads.
    pub fn r_await_ms(&self) -> Option<f64> {
        let c = &self.counters;
        (c.reads > 0).then(|| c.read_ms as f64 / c.reads as f64)
    }
    /// Average ms per write (w_await).
    pub fn w_await_ms(&self) -> Option<f64> {
        let c = &self.counters;
        (c.writes > 0).then(|| c.write_ms as f64 / c.writes as f64)
    }
    /// Average ms per read or write (await).
    pub fn await_ms(&self) -> Option<f64> {
        let c = &self.counters;
        let n = c.reads + c.writes;
        (n > 0).then(|| (c.read_ms + c.write_ms) as f64 / n as f64)
    }
    /// Percent of the time the device was busy (%util).
    pub fn util_pct(&self) -> Option<f64> {
        self.per_s(self.counters.busy_ms).map(|ms| (ms / 10.0).min(100.0))
    }
}

/// Cumulative disk counters summed over the counted disks.
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
    procfs::ticks_per_second() as f64
}

/// Busy CPU seconds and context switches from /proc/stat.
fn host_cpu() -> (Option<f64>, Option<u64>) {
    use procfs::CurrentSI;
    let Ok(k) = procfs::KernelStats::current() else {
        return (None, None);
    };
    let t = &k.total;
    // Idle and iowait are not busy.
    let ticks = t.user + t.nice + t.system + t.irq.unwrap_or(0) + t.softirq.unwrap_or(0) + t.steal.unwrap_or(0);
    (Some(ticks as f64 / clock_ticks()), Some(k.ctxt))
}

/// The disks whose I/O a run counts: the physical devices under the
/// database's file system (a device-mapper or RAID device resolved through
/// its slaves, a partition to its disk, each counted once), or every
/// physical disk when the database's device is unknown.
#[derive(Clone, Debug, Default, PartialEq, Eq)]
pub struct Disks {
    names: Vec<String>,
    how: String,
}

impl Disks {
    /// The disks under `path` (the database's file or data directory), or
    /// all physical disks when `path` is None or cannot be resolved.
    pub fn for_path(path: Option<&Path>) -> Disks {
        let sys = Path::new("/sys");
        let resolved = path.and_then(|p| {
            let m = mount_of(p)?;
            let name = device_name(sys, &m.number, &m.source)?;
            let names = physical(sys, &name);
            (!names.is_empty()).then(|| (names, format!("{} ({name}) holding {}", m.source, m.point)))
        });
        match resolved {
            Some((names, how)) => Disks { names, how },
            None => Disks {
                names: all_physical(sys),
                how: match path {
                    Some(p) => format!("all physical disks ({} is on no block device found here)", p.display()),
                    None => "all physical disks (the database's device is unknown)".into(),
                },
            },
        }
    }

    /// The devices counted (names as in /proc/diskstats).
    pub fn names(&self) -> &[String] {
        &self.names
    }

    /// How they were chosen.
    pub fn how(&self) -> &str {
        &self.how
    }
}

/// Decodes mountinfo's octal escapes (`\040` is a space).
fn unescape(field: &str) -> String {
    let b = field.as_bytes();
    let mut out = Vec::with_capacity(b.len());
    let mut i = 0;
    while i < b.len() {
        if b[i] == b'\\' && i + 3 < b.len() && b[i + 1..i + 4].iter().all(|c| (b'0'..=b'7').contains(c)) {
            out.push((b[i + 1] - b'0') * 64 + (b[i + 2] - b'0') * 8 + (b[i + 3] - b'0'));
            i += 4;
        } else {
            out.push(b[i]);
            i += 1;
        }
    }
    String::from_utf8_lossy(&out).into_owned()
}

/// A mounted file system, from /proc/self/mountinfo.
#[derive(Clone, Debug, PartialEq, Eq)]
pub(crate) struct Mount {
    /// Where it is mounted.
    pub point: String,
    /// Its device number, `major:minor` (major 0: no block device, or btrfs).
    pub number: String,
    /// Its type (ext4, xfs, ...).
    pub fstype: String,
    /// What is mounted (`/dev/vda`, `tmpfs`).
    pub source: String,
}

/// The mount holding `path` (the longest mount point that is a prefix of it).
pub(crate) fn mount_of(path: &Path) -> Option<Mount> {
    let path = std::fs::canonicalize(path).ok()?;
    let text = std::fs::read_to_string("/proc/self/mountinfo").ok()?;
    let mut best: Option<Mount> = None;
    for line in text.lines() {
        let Some((left, right)) = line.split_once(" - ") else {
            continue;
        };
        let l: Vec<&str> = left.split_whitespace().collect();
        let mut r = right.split_whitespace();
        let (Some(number), Some(point)) = (l.get(2), l.get(4)) else {
            continue;
        };
        let point = unescape(point);
        let fstype = r.next().unwrap_or("").to_string();
        let source = unescape(r.next().unwrap_or(""));
        if path.starts_with(&point) && best.as_ref().is_none_or(|b| point.len() >= b.point.len()) {
            best = Some(Mount {
                point,
                number: number.to_string(),
                fstype,
                source,
            });
        }
    }
    best
}

/// The block device's name for a device number, or for the mount's source
/// when the number is anonymous (btrfs, overlay: major 0).
fn device_name(sys: &Path, number: &str, source: &str) -> Option<String> {
    let by_number = |n: &str| {
        std::fs::canonicalize(sys.join("dev/block").join(n))
            .ok()
            .and_then(|p| p.file_name().map(|f| f.to_string_lossy().into_owned()))
    };
    if !number.starts_with("0:") {
        if let Some(name) = by_number(number) {
            return Some(name);
        }
    }
    use std::os::unix::fs::MetadataExt;
    let rdev = std::fs::metadata(source).ok()?.rdev();
    by_number(&format!("{}:{}", libc::major(rdev), libc::minor(rdev)))
}

/// The physical devices under block device `name`: itself when it has no
/// slaves, else its slaves' (recursively); a partition's disk.
pub(crate) fn physical(sys: &Path, name: &str) -> Vec<String> {
    let mut out = Vec::new();
    collect_physical(sys, name, &mut out, 0);
    out.sort();
    out.dedup();
    out
}

fn collect_physical(sys: &Path, name: &str, out: &mut Vec<String>, depth: u32) {
    if depth > 16 {
        return;
    }
    let block = sys.join("block");
    let whole = block.join(name);
    if !whole.exists() {
        // A partition: its disk is the directory holding it.
        if let Ok(disks) = std::fs::read_dir(&block) {
            for d in disks.flatten() {
                if d.path().join(name).join("partition").exists() {
                    collect_physical(sys, &d.file_name().to_string_lossy(), out, depth + 1);
                    return;
                }
            }
        }
        return;
    }
    let slaves: Vec<String> = std::fs::read_dir(whole.join("slaves"))
        .map(|d| {
            d.flatten()
                .map(|e| e.file_name().to_string_lossy().into_owned())
                .collect()
        })
        .unwrap_or_default();
    if slaves.is_empty() {
        out.push(name.to_string());
    } else {
        for s in slaves {
            collect_physical(sys, &s, out, depth + 1);
        }
    }
}

/// Every whole disk with no slaves (not loop, ram or zram).
fn all_physical(sys: &Path) -> Vec<String> {
    let mut names: Vec<String> = std::fs::read_dir(sys.join("block"))
        .map(|d| {
            d.flatten()
                .map(|e| e.file_name().to_string_lossy().into_owned())
                .collect()
        })
        .unwrap_or_default();
    names.retain(|n| !["loop", "ram", "zram"].iter().any(|p| n.starts_with(p)));
    let mut out = Vec::new();
    for n in names {
        out.extend(physical(sys, &n));
    }
    out.sort();
    out.dedup();
    out
}

/// The counters of each of `disks` from /proc/diskstats, and their sum.
fn disks(disks: &Disks) -> (Option<DiskCounters>, Vec<DeviceCounters>) {
    let Ok(stats) = procfs::diskstats() else {
        return (None, Vec::new());
    };
    let mut sum = DiskCounters::default();
    let mut each = Vec::new();
    for d in stats {
        if disks.names.contains(&d.name) {
            sum.reads += d.reads;
            sum.read_bytes += d.sectors_read * 512;
            sum.writes += d.writes;
            sum.written_bytes += d.sectors_written * 512;
            each.push(DeviceCounters {
                reads: d.reads,
                writes: d.writes,
                read_bytes: d.sectors_read * 512,
                written_bytes: d.sectors_written * 512,
                read_ms: d.time_reading,
                write_ms: d.time_writing,
                busy_ms: d.time_in_progress,
                name: d.name,
            });
        }
    }
    (Some(sum), each)
}

/// This process's CPU seconds (all threads): user + system, and system.
///
/// From getrusage, not /proc/self/stat: both report the kernel's precise
/// run time, but /proc rounds it to clock ticks (10 ms), more than the whole
/// CPU time of a short step, which then read as zero.
/// This process's CPU seconds so far (user and system).
#[cfg(test)]
pub(super) fn own_cpu_s() -> f64 {
    own_cpu().0.unwrap_or(0.0)
}

fn own_cpu() -> (Option<f64>, Option<f64>) {
    let mut usage = std::mem::MaybeUninit::<libc::rusage>::uninit();
    // SAFETY: getrusage fills the struct it is given, and reports failure.
    if unsafe { libc::getrusage(libc::RUSAGE_SELF, usage.as_mut_ptr()) } != 0 {
        return (None, None);
    }
    // SAFETY: initialised by the successful call above.
    let usage = unsafe { usage.assume_init() };
    let seconds = |t: libc::timeval| t.tv_sec as f64 + t.tv_usec as f64 * 1e-6;
    let (user, system) = (seconds(usage.ru_utime), seconds(usage.ru_stime));
    (Some(user + system), Some(system))
}

impl SystemSample {
    /// Reads every counter now; `server` names the server's processes
    /// (none when the database is embedded or remote), `on` the disks to count.
    pub fn take(server: &ServerProcesses, on: &Disks) -> SystemSample {
        let (host_busy_s, host_ctxt) = host_cpu();
        let (server_cpu_s, server_rss) = server.read();
        let (disk, devices) = disks(on);
        let (client_cpu_s, client_sys_s) = own_cpu();
        SystemSample {
            at: Some(Instant::now()),
            host_busy_s,
            host_ctxt,
            disk,
            devices,
            client_cpu_s,
            client_sys_s,
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
    /// Of those, in the kernel.
    pub client_sys_s: Option<f64>,
    /// The server's CPU seconds.
    pub server_cpu_s: Option<f64>,
    /// The larger of the two samples' server RSS.
    pub server_rss: Option<u64>,
    /// Each counted disk.
    pub devices: Vec<DeviceDelta>,
}

fn diff<T: Copy>(a: Option<T>, b: Option<T>, sub: impl Fn(T, T) -> T) -> Option<T> {
    Some(sub(b?, a?))
}

impl SystemDelta {
    /// `later − earlier`.
    pub fn between(earlier: &SystemSample, later: &SystemSample) -> SystemDelta {
        let seconds = match (earlier.at, later.at) {
            (Some(a), Some(b)) => b.saturating_duration_since(a).as_secs_f64(),
            _ => 0.0,
        };
        SystemDelta {
            seconds,
            host_busy_s: diff(earlier.host_busy_s, later.host_busy_s, |b, a| (b - a).max(0.0)),
            ctxt: diff(earlier.host_ctxt, later.host_ctxt, |b, a| b.saturating_sub(a)),
            disk: diff(earlier.disk, later.disk, |b, a| DiskCounters {
                reads: b.reads.saturating_sub(a.reads),
                writes: b.writes.saturating_sub(a.writes),
                read_bytes: b.read_bytes.saturating_sub(a.read_bytes),
                written_bytes: b.written_bytes.saturating_sub(a.written_bytes),
            }),
            client_cpu_s: diff(earlier.client_cpu_s, later.client_cpu_s, |b, a| (b - a).max(0.0)),
            client_sys_s: diff(earlier.client_sys_s, later.client_sys_s, |b, a| (b - a).max(0.0)),
            server_cpu_s: diff(earlier.server_cpu_s, later.server_cpu_s, |b, a| (b - a).max(0.0)),
            server_rss: match (earlier.server_rss, later.server_rss) {
                (Some(a), Some(b)) => Some(a.max(b)),
                (a, b) => a.or(b),
            },
            devices: later
                .devices
                .iter()
                .filter_map(|b| {
                    let a = earlier.devices.iter().find(|a| a.name == b.name)?;
                    let d = |x: u64, y: u64| x.saturating_sub(y);
                    Some(DeviceDelta {
                        seconds,
                        counters: DeviceCounters {
                            name: b.name.clone(),
                            reads: d(b.reads, a.reads),
                            writes: d(b.writes, a.writes),
                            read_bytes: d(b.read_bytes, a.read_bytes),
                            written_bytes: d(b.written_bytes, a.written_bytes),
                            read_ms: d(b.read_ms, a.read_ms),
                            write_ms: d(b.write_ms, a.write_ms),
                            busy_ms: d(b.busy_ms, a.busy_ms),
                        },
                    })
                })
                .collect(),
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn mountinfo_escapes_are_decoded() {
        assert_eq!(unescape("/mnt/my\\040disk"), "/mnt/my disk");
        assert_eq!(unescape("/plain"), "/plain");
        assert_eq!(unescape("/tab\\011x\\134"), "/tab\tx\\");
    }

    #[test]
    fn stacked_devices_resolve_to_their_physical_disks_each_once() {
        // A fake /sys: md0 over sda1 and sdb1, dm-0 over md0 and sdb2, a lone nvme0n1.
        let sys = tempfile::tempdir().unwrap();
        let b = sys.path().join("block");
        for d in [
            "sda/sda1",
            "sdb/sdb1",
            "sdb/sdb2",
            "nvme0n1",
            "md0/slaves",
            "dm-0/slaves",
            "loop0",
        ] {
            std::fs::create_dir_all(b.join(d)).unwrap();
        }
        for p in ["sda/sda1", "sdb/sdb1", "sdb/sdb2"] {
            std::fs::write(b.join(p).join("partition"), "1").unwrap();
        }
        for (dev, slave) in [("md0", "sda1"), ("md0", "sdb1"), ("dm-0", "md0"), ("dm-0", "sdb2")] {
            std::fs::create_dir_all(b.join(dev).join("slaves").join(slave)).unwrap();
        }
        assert_eq!(physical(sys.path(), "dm-0"), ["sda", "sdb"]);
        assert_eq!(physical(sys.path(), "sdb2"), ["sdb"]);
        assert_eq!(physical(sys.path(), "nvme0n1"), ["nvme0n1"]);
        assert_eq!(all_physical(sys.path()), ["nvme0n1", "sda", "sdb"]);
    }

    #[test]
    fn the_root_file_system_resolves_to_a_disk_of_this_host() {
        let d = Disks::for_path(Some(Path::new("/")));
        assert!(!d.names().is_empty(), "{d:?}");
        assert!(!d.how().starts_with("all"), "{d:?}");
        assert!(Disks::for_path(None).how().starts_with("all physical disks"));
    }

    #[test]
    fn this_process_and_the_host_are_readable_on_linux() {
        let a = SystemSample::take(&ServerProcesses::default(), &Disks::for_path(None));
        let mut x = 0u64;
        // 200 ms of this thread's own CPU time, however busy the host is.
        let cpu = || {
            let mut ts = libc::timespec { tv_sec: 0, tv_nsec: 0 };
            // SAFETY: clock_gettime fills the timespec it is given.
            unsafe { libc::clock_gettime(libc::CLOCK_THREAD_CPUTIME_ID, &mut ts) };
            ts.tv_sec as f64 + ts.tv_nsec as f64 / 1e9
        };
        let start = cpu();
        while cpu() - start < 0.2 {
            x = x.wrapping_add(std::hint::black_box(1));
        }
        let b = SystemSample::take(&ServerProcesses::default(), &Disks::for_path(None));
        let d = SystemDelta::between(&a, &b);
        assert!(x > 0);
        assert!(d.client_cpu_s.unwrap() > 0.1, "{d:?}");
        assert!(d.host_busy_s.unwrap() > 0.1, "{d:?}");
        assert!(d.ctxt.is_some() && d.disk.is_some());
        // Each disk counted has its own row, and they add up to the total.
        assert!(!d.devices.is_empty(), "{d:?}");
        let reads: u64 = d.devices.iter().map(|x| x.counters.reads).sum();
        assert_eq!(reads, d.disk.unwrap().reads);
        assert_eq!(d.server_cpu_s, None, "no server named");
    }
}
