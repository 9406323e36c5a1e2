//! Whether perf can profile here, and if not, why in words a user can act on.

use std::ffi::OsStr;
use std::path::{Path, PathBuf};
use std::process::Command;

/// Why no profile can be taken. Each message says what to do about it.
#[derive(Clone, Debug, PartialEq, Eq, thiserror::Error)]
pub enum Unavailable {
    /// No `perf` on the search path.
    #[error("no CPU profile: perf is not on PATH; install it (Debian: apt-get install linux-perf)")]
    NotInstalled,
    /// `perf --version` failed (Debian's old wrapper fails when no perf for
    /// the running kernel is installed).
    #[error("no CPU profile: {} does not run ({message}); reinstall it for this kernel (Debian: apt-get install linux-perf)", .perf.display())]
    Broken {
        /// The perf found.
        perf: PathBuf,
        /// What it printed, or why it could not start.
        message: String,
    },
    /// The kernel has no perf events (no `/proc/sys/kernel/perf_event_paranoid`).
    #[error("no CPU profile: this kernel has no perf events (no /proc/sys/kernel/perf_event_paranoid)")]
    NoKernelSupport,
    /// `kernel.perf_event_paranoid` forbids unprivileged users any perf event.
    #[error("no CPU profile: kernel.perf_event_paranoid is {level}, which allows perf only to root; run ibench as root, give it CAP_PERFMON (setcap cap_perfmon+ep), or lower the setting (sysctl kernel.perf_event_paranoid=2)")]
    Paranoid {
        /// The setting.
        level: i32,
    },
    /// A process to profile does not exist (any more).
    #[error("no CPU profile: process {pid} does not exist")]
    NoProcess {
        /// The process.
        pid: i32,
    },
    /// A process to profile belongs to another user, and ibench has no
    /// privilege to sample it.
    #[error("no CPU profile: process {pid} runs as {owner}, and ibench (uid {uid}) may not sample another user's process; run ibench as root or as {owner}, or give it CAP_PERFMON (setcap cap_perfmon+ep)")]
    Foreign {
        /// The process.
        pid: i32,
        /// Its user, by name where /etc/passwd has one.
        owner: String,
        /// ibench's user.
        uid: u32,
    },
}

/// What was found about perf on this host.
#[derive(Clone, Debug, PartialEq)]
pub struct PerfInfo {
    /// The perf executable.
    pub perf: PathBuf,
    /// What `perf --version` printed (`perf version 6.1.187`).
    pub version: String,
    /// `kernel.perf_event_paranoid`.
    pub paranoid: i32,
    /// ibench has CAP_PERFMON or CAP_SYS_ADMIN (root has both).
    pub privileged: bool,
    /// Kernel frames can be sampled: privileged, or a paranoid level of 1 or
    /// less. Otherwise only user-space frames are (the event gets `:u`).
    pub kernel: bool,
    /// The CPU has hardware counters perf can sample (`cycles`); a VM often
    /// has none, and then the software event `cpu-clock` is used.
    pub hardware_events: bool,
}

impl PerfInfo {
    /// The event sampled unless the options name one: `cycles` where the CPU
    /// counts them, else `cpu-clock` (a timer: the same CPU time, coarser
    /// inside code that runs with interrupts off).
    pub fn default_event(&self) -> String {
        let event = if self.hardware_events { "cycles" } else { "cpu-clock" };
        if self.kernel {
            event.to_string()
        } else {
            format!("{event}:u")
        }
    }

    /// Ok when every process of `pids` exists and ibench may sample it.
    pub fn permits(&self, pids: &[i32]) -> Result<(), Unavailable> {
        // SAFETY: geteuid has no preconditions and cannot fail.
        let uid = unsafe { libc::geteuid() };
        for &pid in pids {
            let owner = process_uid(pid).ok_or(Unavailable::NoProcess { pid })?;
            if owner != uid && !self.privileged {
                let owner = user_name(owner).unwrap_or_else(|| format!("uid {owner}"));
                return Err(Unavailable::Foreign { pid, owner, uid });
            }
        }
        Ok(())
    }
}

/// Finds perf on the search path `path` (as `PATH` spells it) and checks
/// that it runs and that the kernel lets ibench sample.
pub fn check_path(path: &OsStr) -> Result<PerfInfo, Unavailable> {
    let perf = std::env::split_paths(path)
        .map(|dir| dir.join("perf"))
        .find(|p| is_executable(p))
        .ok_or(Unavailable::NotInstalled)?;
    let version = version(&perf)?;
    let paranoid = std::fs::read_to_string("/proc/sys/kernel/perf_event_paranoid")
        .ok()
        .and_then(|s| s.trim().parse::<i32>().ok())
        .ok_or(Unavailable::NoKernelSupport)?;
    let privileged = privileged();
    let kernel = scope(paranoid, privileged)?;
    let hardware_events = counts_cycles(&perf);
    Ok(PerfInfo {
        perf,
        version,
        paranoid,
        privileged,
        kernel,
        hardware_events,
    })
}

/// What an unprivileged user may sample at each `perf_event_paranoid`
/// level (the kernel's perf-security document; Debian adds level 3): Ok(true)
/// with kernel frames, Ok(false) user space only.
pub(super) fn scope(paranoid: i32, privileged: bool) -> Result<bool, Unavailable> {
    match (privileged, paranoid) {
        (true, _) | (false, ..=1) => Ok(true),
        (false, 2) => Ok(false),
        (false, level) => Err(Unavailable::Paranoid { level }),
    }
}

fn is_executable(p: &Path) -> bool {
    use std::os::unix::fs::PermissionsExt;
    std::fs::metadata(p).is_ok_and(|m| m.is_file() && m.permissions().mode() & 0o111 != 0)
}

fn version(perf: &Path) -> Result<String, Unavailable> {
    let broken = |message: String| Unavailable::Broken {
        perf: perf.to_path_buf(),
        message,
    };
    let out = Command::new(perf)
        .arg("--version")
        .output()
        .map_err(|e| broken(e.to_string()))?;
    let text = String::from_utf8_lossy(&out.stdout).trim().to_string();
    if !out.status.success() || text.is_empty() {
        let said = String::from_utf8_lossy(&out.stderr);
        return Err(broken(first_line(&said).unwrap_or("no output").to_string()));
    }
    Ok(text)
}

/// CAP_PERFMON (38) or CAP_SYS_ADMIN (21) in the effective set: what the
/// kernel checks, rather than the uid (root in a container may lack both).
fn privileged() -> bool {
    const CAP_SYS_ADMIN: u32 = 21;
    const CAP_PERFMON: u32 = 38;
    let status = std::fs::read_to_string("/proc/self/status").unwrap_or_default();
    let eff = status
        .lines()
        .find_map(|l| l.strip_prefix("CapEff:"))
        .and_then(|hex| u64::from_str_radix(hex.trim(), 16).ok())
        .unwrap_or(0);
    eff & (1 << CAP_SYS_ADMIN | 1 << CAP_PERFMON) != 0
}

/// Whether perf can count CPU cycles for a process of ours (`<not
/// supported>` on a VM without a virtual PMU).
fn counts_cycles(perf: &Path) -> bool {
    let out = Command::new(perf)
        .args(["stat", "-x", ",", "-e", "cycles:u", "--", "true"])
        .output();
    out.is_ok_and(|o| {
        let text = String::from_utf8_lossy(&o.stderr);
        o.status.success() && text.lines().any(|l| l.contains("cycles") && !l.contains('<'))
    })
}

/// The real uid of process `pid`; None when it does not exist.
fn process_uid(pid: i32) -> Option<u32> {
    let status = std::fs::read_to_string(format!("/proc/{pid}/status")).ok()?;
    status
        .lines()
        .find_map(|l| l.strip_prefix("Uid:"))?
        .split_whitespace()
        .next()?
        .parse()
        .ok()
}

/// The name /etc/passwd gives `uid`.
fn user_name(uid: u32) -> Option<String> {
    let passwd = std::fs::read_to_string("/etc/passwd").ok()?;
    passwd.lines().find_map(|l| {
        let mut f = l.split(':');
        let name = f.next()?;
        (f.nth(1)?.parse::<u32>().ok()? == uid).then(|| name.to_string())
    })
}

/// The first non-empty line of `text`.
fn first_line(text: &str) -> Option<&str> {
    text.lines().map(str::trim).find(|l| !l.is_empty())
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn privilege_or_a_low_paranoid_level_allows_kernel_frames() {
        assert_eq!(scope(3, true), Ok(true));
        assert_eq!(scope(-1, false), Ok(true));
        assert_eq!(scope(1, false), Ok(true));
        assert_eq!(scope(2, false), Ok(false), "user space only");
        let refused = scope(3, false).unwrap_err();
        assert!(refused.to_string().contains("perf_event_paranoid is 3"), "{refused}");
        assert!(refused.to_string().contains("CAP_PERFMON"), "{refused}");
    }

    #[test]
    fn a_missing_process_is_named() {
        let info = PerfInfo {
            perf: "perf".into(),
            version: String::new(),
            paranoid: 2,
            privileged: false,
            kernel: false,
            hardware_events: false,
        };
        assert_eq!(info.default_event(), "cpu-clock:u");
        // pid_max is at most 2^22: this pid never exists.
        assert_eq!(info.permits(&[i32::MAX]), Err(Unavailable::NoProcess { pid: i32::MAX }));
        assert_eq!(info.permits(&[std::process::id() as i32]), Ok(()));
    }
}
