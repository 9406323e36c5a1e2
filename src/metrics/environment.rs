//! What changes the results: facts about the host and the build, read once
//! per run, recorded in `config.parquet` with the server's settings, and the
//! warnings they call for.

use std::collections::BTreeSet;
use std::path::Path;

/// One recorded setting or fact.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Setting {
    /// "host", "ibench" or "server".
    pub scope: &'static str,
    /// Its name (`cpu_model`, `shared_buffers`, ...).
    pub name: String,
    /// Its value as text; "" when unknown (see `source`).
    pub value: String,
    /// Where it came from (a file, `pg_settings` source, ...), or why it is unknown.
    pub source: String,
}

impl Setting {
    /// A setting of the database's own configuration (scope "server"), as
    /// a connector reads it: `pg_settings`, `SHOW GLOBAL VARIABLES`, SQLite's
    /// pragmas, RocksDB's OPTIONS file (its section as the source).
    pub fn server(name: impl Into<String>, value: impl Into<String>, source: impl Into<String>) -> Setting {
        Setting {
            scope: "server",
            name: name.into(),
            value: value.into(),
            source: source.into(),
        }
    }
}

fn fact(name: &str, value: Option<String>, source: &str, missing: &str) -> Setting {
    let (value, source) = match value {
        Some(v) => (v, source.to_string()),
        None => (String::new(), format!("unknown: {missing}")),
    };
    Setting {
        scope: "host",
        name: name.into(),
        value,
        source,
    }
}

fn read(path: &str) -> Option<String> {
    std::fs::read_to_string(path).ok().map(|s| s.trim().to_string())
}

/// Total memory and swap in use, bytes.
fn meminfo() -> (Option<u64>, Option<u64>) {
    use procfs::Current;
    match procfs::Meminfo::current() {
        Ok(m) => (Some(m.mem_total), Some(m.swap_total.saturating_sub(m.swap_free))),
        Err(_) => (None, None),
    }
}

/// Per-CPU values of a cpufreq file, summarised: "performance" or
/// "performance (cpu0-1), powersave (cpu2-3)" when they differ.
fn per_cpu(file: &str) -> Option<String> {
    let mut values: Vec<(usize, String)> = Vec::new();
    for entry in std::fs::read_dir("/sys/devices/system/cpu").ok()?.flatten() {
        let name = entry.file_name().to_string_lossy().to_string();
        let Some(n) = name.strip_prefix("cpu").and_then(|n| n.parse::<usize>().ok()) else {
            continue;
        };
        if let Some(v) = read(&format!("/sys/devices/system/cpu/{name}/cpufreq/{file}")) {
            values.push((n, v));
        }
    }
    if values.is_empty() {
        return None;
    }
    values.sort();
    let distinct: BTreeSet<&String> = values.iter().map(|(_, v)| v).collect();
    if distinct.len() == 1 {
        return Some(values[0].1.clone());
    }
    let parts: Vec<String> = distinct
        .iter()
        .map(|d| {
            let cpus: Vec<String> = values
                .iter()
                .filter(|(_, v)| v == *d)
                .map(|(n, _)| n.to_string())
                .collect();
            format!("{d} (cpu {})", cpus.join(","))
        })
        .collect();
    Some(parts.join(", "))
}

const NO_CPUIDLE: &str = "no cpuidle in /sys";
/// How long an idle vCPU of a KVM guest polls before it halts.
const HALT_POLL_NS: &str = "/sys/module/haltpoll/parameters/guest_halt_poll_ns";

/// Host and build facts; `data` is the database's file or directory when it
/// is local, `disks` the disks whose I/O the run counts.
pub fn host_facts(data: Option<&Path>, disks: &super::Disks) -> Vec<Setting> {
    let mut facts = cpu_facts();
    facts.extend(system_facts());
    facts.extend(data_facts(data, disks));
    facts.extend(idle_facts());
    facts.extend(build_facts());
    facts
}

/// The CPU: model, threads, cores, SMT, frequency scaling and boost.
fn cpu_facts() -> Vec<Setting> {
    let cpuinfo = std::fs::read_to_string("/proc/cpuinfo").unwrap_or_default();
    let field = |block: &str, k: &str| {
        block
            .lines()
            .find(|l| l.starts_with(k))
            .and_then(|l| l.split_once(':'))
            .map(|(_, v)| v.trim().to_string())
    };
    let model = field(&cpuinfo, "model name");
    let threads = std::thread::available_parallelism().map(|n| n.get()).ok();
    let cores: BTreeSet<(String, String)> = cpuinfo
        .split("\n\n")
        .filter_map(|block| Some((field(block, "physical id")?, field(block, "core id")?)))
        .collect();
    let on_off = |v: String, on: &str| if v == on { "on" } else { "off" }.to_string();
    let smt = read("/sys/devices/system/cpu/smt/active").map(|v| on_off(v, "1"));
    let boost = read("/sys/devices/system/cpu/cpufreq/boost")
        .map(|v| on_off(v, "1"))
        .or_else(|| read("/sys/devices/system/cpu/intel_pstate/no_turbo").map(|v| on_off(v, "0")));
    let cpufreq = "/sys/devices/system/cpu/cpu*/cpufreq";
    let no_cpufreq = "no cpufreq in /sys (a VM, or a kernel without it)";
    vec![
        fact("cpu_model", model, "/proc/cpuinfo", "no model name in /proc/cpuinfo"),
        fact(
            "cpu_threads",
            threads.map(|n| n.to_string()),
            "available_parallelism",
            "not reported",
        ),
        fact(
            "cpu_cores",
            (!cores.is_empty()).then(|| cores.len().to_string()),
            "/proc/cpuinfo",
            "no core ids in /proc/cpuinfo",
        ),
        fact("smt", smt, "/sys/devices/system/cpu/smt/active", "not reported"),
        fact("cpufreq_driver", per_cpu("scaling_driver"), cpufreq, no_cpufreq),
        fact("cpufreq_governor", per_cpu("scaling_governor"), cpufreq, no_cpufreq),
        fact(
            "boost",
            boost,
            "/sys/devices/system/cpu/cpufreq/boost",
            "no boost or no_turbo control",
        ),
    ]
}

/// The kernel, the distribution, memory and swap.
fn system_facts() -> Vec<Setting> {
    let os = std::fs::read_to_string("/etc/os-release").ok().and_then(|t| {
        t.lines()
            .find_map(|l| l.strip_prefix("PRETTY_NAME=").map(|v| v.trim_matches('"').to_string()))
    });
    let (memory, swap_used) = meminfo();
    vec![
        fact(
            "kernel",
            read("/proc/sys/kernel/osrelease"),
            "/proc/sys/kernel/osrelease",
            "not readable",
        ),
        fact("os", os, "/etc/os-release", "no /etc/os-release"),
        fact(
            "memory_bytes",
            memory.map(|b| b.to_string()),
            "/proc/meminfo",
            "not readable",
        ),
        fact(
            "swap_used_bytes",
            swap_used.map(|b| b.to_string()),
            "sampled",
            "not readable",
        ),
    ]
}

/// Where the data lives: its file system, device, and the disks counted.
fn data_facts(data: Option<&Path>, disks: &super::Disks) -> Vec<Setting> {
    let mount = data.and_then(super::system::mount_of);
    let no_path = "no local database path";
    vec![
        fact(
            "data_filesystem",
            mount.as_ref().map(|m| format!("{} on {}", m.fstype, m.point)),
            "/proc/self/mountinfo",
            no_path,
        ),
        fact("data_device", mount.map(|m| m.source), "/proc/self/mountinfo", no_path),
        fact("data_disks", Some(disks.names().join(",")), disks.how(), ""),
    ]
}

/// How idle CPUs wait: the cpuidle driver and governor, a KVM guest's halt polling.
fn idle_facts() -> Vec<Setting> {
    let cpuidle = "/sys/devices/system/cpu/cpuidle";
    vec![
        fact(
            "cpuidle_driver",
            read("/sys/devices/system/cpu/cpuidle/current_driver"),
            cpuidle,
            NO_CPUIDLE,
        ),
        fact(
            "cpuidle_governor",
            read("/sys/devices/system/cpu/cpuidle/current_governor")
                .or_else(|| read("/sys/devices/system/cpu/cpuidle/current_governor_ro")),
            cpuidle,
            NO_CPUIDLE,
        ),
        fact(
            "guest_halt_poll_ns",
            read(HALT_POLL_NS),
            HALT_POLL_NS,
            "no haltpoll module (not a KVM guest using it)",
        ),
    ]
}

/// ibench's own build: its profile and version.
fn build_facts() -> Vec<Setting> {
    let build = |name: &str, value: &str| Setting {
        scope: "ibench",
        name: name.into(),
        value: value.into(),
        source: "compile time".into(),
    };
    vec![
        build(
            "build_profile",
            if cfg!(debug_assertions) { "debug" } else { "release" },
        ),
        build("version", env!("CARGO_PKG_VERSION")),
    ]
}

/// Warnings for settings known to add noise to measurements; `server_local`:
/// the server runs on this host, `round_trips`: each operation waits for a
/// server's reply (not an embedded database).
pub fn warnings(facts: &[Setting], server_local: bool, round_trips: bool) -> Vec<String> {
    let get = |n: &str| {
        facts
            .iter()
            .find(|s| s.name == n)
            .map(|s| s.value.as_str())
            .unwrap_or("")
    };
    let mut out = Vec::new();
    let governor = get("cpufreq_governor");
    if !governor.is_empty() && governor != "performance" {
        out.push(format!(
            "CPU frequency governor is {governor}, not performance: frequency changes add noise"
        ));
    }
    if get("boost") == "on" {
        out.push("CPU boost/turbo is on: clock speed depends on temperature and load".into());
    }
    if get("build_profile") == "debug" {
        out.push("this is a debug build of ibench: its figures are not comparable".into());
    }
    if get("swap_used_bytes").parse::<u64>().unwrap_or(0) > 0 {
        out.push(format!(
            "swap is in use ({} bytes): paging adds latency",
            get("swap_used_bytes")
        ));
    }
    let threads: u32 = get("cpu_threads").parse().unwrap_or(0);
    if server_local && threads > 0 && threads <= 4 {
        out.push(format!(
            "client and server share {threads} CPUs on this host: each slows the other"
        ));
    }
    // A vCPU that halts the moment it is idle makes every reply wake a
    // halted vCPU: a VM exit and entry per round trip, charged to the client
    // and the server (docs/connectors.md: 4x the client CPU per query here).
    if round_trips && get("cpuidle_driver") == "haltpoll" && get("guest_halt_poll_ns") == "0" {
        out.push(format!(
            "this VM halts an idle vCPU at once (cpuidle haltpoll, guest_halt_poll_ns=0): every round trip that finds a CPU idle pays a VM exit and a wake-up, several times the client's own CPU per query; writing e.g. 200000 to {HALT_POLL_NS} makes an idle vCPU poll first (ibench leaves it as it is)"
        ));
    }
    out
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn warnings_follow_the_facts() {
        let f = |name: &str, value: &str| Setting {
            scope: "host",
            name: name.into(),
            value: value.into(),
            source: String::new(),
        };
        let facts = vec![
            f("cpufreq_governor", "schedutil"),
            f("boost", "on"),
            f("swap_used_bytes", "4096"),
            f("cpu_threads", "2"),
        ];
        let w = warnings(&facts, true, true);
        assert_eq!(w.len(), 4, "{w:?}");
        assert!(warnings(&[f("cpufreq_governor", "performance"), f("boost", "off")], false, true).is_empty());
        // A guest that halts idle vCPUs at once: a warning when operations are round trips.
        let halts = [f("cpuidle_driver", "haltpoll"), f("guest_halt_poll_ns", "0")];
        let w = warnings(&halts, false, true);
        assert!(w.len() == 1 && w[0].contains("guest_halt_poll_ns=0"), "{w:?}");
        assert!(
            warnings(&halts, false, false).is_empty(),
            "an embedded database has no round trips"
        );
        let polls = [f("cpuidle_driver", "haltpoll"), f("guest_halt_poll_ns", "200000")];
        assert!(warnings(&polls, true, true).iter().all(|w| !w.contains("halt")));
    }
}
