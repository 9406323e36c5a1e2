//! The server's processes on this host: which they are, and their CPU time
//! and resident memory, read from /proc.

use std::collections::HashMap;

/// The server's processes on this host, measured apart from the client's.
#[derive(Clone, Debug, Default, PartialEq, Eq)]
pub struct ServerProcesses {
    /// The names its processes run under (`postgres`; `mariadbd`, `mysqld`):
    /// empty for an embedded or remote database.
    pub names: Vec<&'static str>,
    /// Its main process (the postmaster, mysqld) when it was found: then only
    /// that process and its descendants count. Otherwise every process of
    /// those names does, another server's on this host too (an idle
    /// cluster's memory and background work added to the one measured).
    pub root: Option<i32>,
}

impl ServerProcesses {
    /// No server process to measure.
    pub fn is_empty(&self) -> bool {
        self.names.is_empty()
    }

    /// CPU seconds (with reaped children) and resident bytes of the server's
    /// processes; None when there are none.
    ///
    /// A server's children come and go (PostgreSQL's backends, its
    /// autovacuum workers), and a child reaped while /proc is read moves its
    /// time into its parent's `cutime`: read the parent first and the child
    /// once it is gone, and the child's whole time is missed (a step's
    /// server CPU then read as nothing when its backends exited during the
    /// step's last sample). So the processes found are read again deepest
    /// first: a child gone by then is already in its parent's time, read
    /// after it. A child read and then reaped before its parent was read
    /// would count twice, so every child read must still be there
    /// afterwards, or all are read again.
    pub fn read(&self) -> (Option<f64>, Option<u64>) {
        const TRIES: usize = 5;
        let mut last = (None, None);
        for _ in 0..TRIES {
            let found = match self.find() {
                Some(found) if !found.is_empty() => found,
                _ => return (None, None),
            };
            let (mut ticks, mut rss, mut children) = (0u64, 0u64, Vec::new());
            for &(pid, depth) in &found {
                let Some(stat) = stat_named(pid, &self.names) else {
                    continue; // gone: reaped, so in its parent's time, read later
                };
                ticks += stat.utime + stat.stime + stat.cutime.max(0) as u64 + stat.cstime.max(0) as u64;
                rss += stat.rss * procfs::page_size();
                if depth > 0 {
                    children.push((pid, stat.starttime));
                }
            }
            last = (Some(ticks as f64 / procfs::ticks_per_second() as f64), Some(rss));
            let still_there =
                |&(pid, start): &(i32, u64)| stat_named(pid, &self.names).is_some_and(|s| s.starttime == start);
            if children.iter().all(still_there) {
                break;
            }
        }
        last
    }

    /// The pids of the server's processes now (its root and every
    /// descendant of its names: a PostgreSQL cluster's backends too), in pid
    /// order; empty when none runs on this host.
    pub fn pids(&self) -> Vec<i32> {
        let mut pids: Vec<i32> = self
            .find()
            .unwrap_or_default()
            .into_iter()
            .map(|(pid, _)| pid)
            .collect();
        pids.sort_unstable();
        pids
    }

    /// The server's processes as (pid, depth below the root, or below the
    /// nearest ancestor of another name), deepest first.
    fn find(&self) -> Option<Vec<(i32, usize)>> {
        let parents: HashMap<i32, i32> = all_named(&self.names)?.map(|s| (s.pid, s.ppid)).collect();
        let mut found = Vec::new();
        for &pid in parents.keys() {
            let (mut at, mut depth) = (pid, 0usize);
            let keep = loop {
                if Some(at) == self.root {
                    break true;
                }
                match parents.get(&at) {
                    Some(&up) if parents.contains_key(&up) && depth < parents.len() => (at, depth) = (up, depth + 1),
                    _ => break self.root.is_none(),
                }
            };
            if keep {
                found.push((pid, depth));
            }
        }
        found.sort_by_key(|&(pid, depth)| (std::cmp::Reverse(depth), pid));
        Some(found)
    }
}

/// Process `pid`'s status when it runs on this host under one of `names`.
fn stat_named(pid: i32, names: &[&str]) -> Option<procfs::process::Stat> {
    let stat = procfs::process::Process::new(pid).ok()?.stat().ok()?;
    names.contains(&stat.comm.as_str()).then_some(stat)
}

/// The status of every process on this host running under one of `names`.
fn all_named<'a>(names: &'a [&str]) -> Option<impl Iterator<Item = procfs::process::Stat> + 'a> {
    Some(
        procfs::process::all_processes()
            .ok()?
            .flatten()
            .filter_map(|p| p.stat().ok())
            .filter(move |s| names.contains(&s.comm.as_str())),
    )
}

/// Whether process `pid` runs on this host under one of `names`.
pub fn runs_as(pid: i32, names: &[&str]) -> bool {
    stat_named(pid, names).is_some()
}

/// The parent of `pid` when both run under one of `names` (a PostgreSQL
/// backend's postmaster); None when `pid` is not on this host's /proc, as
/// for a server in a container of its own.
pub fn parent_named(pid: i32, names: &[&str]) -> Option<i32> {
    let parent = stat_named(pid, names)?.ppid;
    runs_as(parent, names).then_some(parent)
}

/// The one process under `names` that started `uptime_s` seconds ago, within
/// 2 s (servers report their uptime in whole seconds); None when none or
/// several did.
pub fn started_ago(names: &[&str], uptime_s: f64) -> Option<i32> {
    let boot = procfs::boot_time_secs().ok()? as f64;
    let ticks = procfs::ticks_per_second() as f64;
    let now = std::time::SystemTime::now()
        .duration_since(std::time::UNIX_EPOCH)
        .ok()?
        .as_secs_f64();
    let mut near = all_named(names)?
        .filter(|s| (boot + s.starttime as f64 / ticks - (now - uptime_s)).abs() <= 2.0)
        .map(|s| s.pid);
    match (near.next(), near.next()) {
        (Some(pid), None) => Some(pid),
        _ => None,
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use std::process::{Child, Command};
    use std::time::{Duration, Instant};

    /// A server stand-in: it names itself (its children inherit the name),
    /// first forks `spacers` idle processes (named with `.s` added) (they come between it
    /// and its later children in /proc's order, as a server's backends come
    /// long after its postmaster), then forks children that each burn ~15 ms
    /// of CPU and exit, for `seconds`.
    const FORKER: &str = r#"
import os, sys, time
name, seconds, spacers = sys.argv[1], float(sys.argv[2]), int(sys.argv[3])
open("/proc/self/comm", "w").write(name)
idle = []
for _ in range(spacers):
    pid = os.fork()
    if pid == 0:
        open("/proc/self/comm", "w").write(name + ".s")
        time.sleep(60)
        os._exit(0)
    idle.append(pid)
end = time.time() + seconds
while time.time() < end:
    pid = os.fork()
    if pid == 0:
        t = time.process_time() + 0.015
        while time.process_time() < t:
            pass
        os._exit(0)
    os.waitpid(pid, 0)
for pid in idle:
    os.kill(pid, 9)
    os.waitpid(pid, 0)
"#;

    /// Starts a stand-in and waits until it has named itself and forked its spacers.
    fn forker(name: &str, seconds: f64, spacers: usize) -> Child {
        let child = Command::new("python3")
            .args(["-c", FORKER, name, &seconds.to_string(), &spacers.to_string()])
            .spawn()
            .expect("python3 runs");
        let pid = child.id() as i32;
        let ready = || {
            let all: Vec<_> = procfs::process::all_processes()
                .unwrap()
                .flatten()
                .filter_map(|p| p.stat().ok())
                .collect();
            all.iter().any(|s| s.pid == pid && s.comm == name)
                && all
                    .iter()
                    .filter(|s| s.ppid == pid && s.comm == format!("{name}.s"))
                    .count()
                    == spacers
        };
        let start = Instant::now();
        while !ready() {
            assert!(start.elapsed() < Duration::from_secs(20), "the stand-in started");
            std::thread::sleep(Duration::from_millis(20));
        }
        child
    }

    /// A server's first and largest readings, and each reading below an
    /// earlier one (with that one).
    type Watched = (f64, f64, Vec<(f64, f64)>);

    /// Reads each server again and again for `seconds`.
    fn watch(servers: &[&ServerProcesses], seconds: f64) -> Vec<Watched> {
        let read = |s: &ServerProcesses| s.read().0.expect("the server stand-in is found");
        let mut seen: Vec<_> = servers.iter().map(|s| (read(s), read(s), Vec::new())).collect();
        let start = Instant::now();
        while start.elapsed().as_secs_f64() < seconds {
            for (server, (_, most, falls)) in servers.iter().zip(&mut seen) {
                let now = read(server);
                if now < *most {
                    falls.push((*most, now));
                }
                *most = most.max(now);
            }
        }
        seen
    }

    #[test]
    fn a_server_whose_children_exit_is_never_counted_less_later() {
        let mut server = forker("ibfork-a", 4.0, 200);
        let named = ServerProcesses {
            names: vec!["ibfork-a"],
            root: None,
        };
        let (first, last, falls) = watch(&[&named], 3.0).remove(0);
        server.wait().unwrap();
        assert!(
            falls.is_empty(),
            "fell {} times, e.g. {:?}",
            falls.len(),
            &falls[..falls.len().min(5)]
        );
        assert!(last - first > 0.3, "the children's CPU is counted: {first} → {last}");
    }

    #[test]
    fn another_server_of_the_same_name_is_not_counted() {
        let mut measured = forker("ibfork-b", 4.0, 0);
        let mut other = forker("ibfork-b", 1.5, 0); // stops while the first is measured
        let root = ServerProcesses {
            names: vec!["ibfork-b"],
            root: Some(measured.id() as i32),
        };
        let by_name = ServerProcesses {
            root: None,
            ..root.clone()
        };
        let (alone, both) = (root.read(), by_name.read());
        assert!(
            both.0.unwrap() > alone.0.unwrap(),
            "{both:?} counts the other server, {alone:?} does not"
        );
        assert!(both.1.unwrap() > alone.1.unwrap(), "its memory too: {both:?} {alone:?}");
        let reaped = std::thread::spawn(move || other.wait()); // else a zombie, its times kept
        let mut seen = watch(&[&root, &by_name], 2.5);
        reaped.join().unwrap().unwrap();
        measured.wait().unwrap();
        let (first, last, falls) = seen.remove(0);
        assert!(
            falls.is_empty(),
            "fell {} times, e.g. {:?}",
            falls.len(),
            &falls[..falls.len().min(5)]
        );
        assert!(
            last - first > 0.3,
            "the measured server's CPU is counted: {first} → {last}"
        );
        let (_, _, falls) = seen.remove(0);
        assert!(
            !falls.is_empty(),
            "counted by name, the other server's time leaves with it"
        );
    }

    #[test]
    fn a_child_names_its_parent_and_the_server_is_found_by_its_start() {
        let mut server = forker("ibfork-c", 1.5, 1);
        let pid = server.id() as i32;
        let spacer = procfs::process::all_processes()
            .unwrap()
            .flatten()
            .filter_map(|p| p.stat().ok())
            .find(|s| s.ppid == pid && s.comm == "ibfork-c.s")
            .expect("the spacer runs");
        assert_eq!(parent_named(spacer.pid, &["ibfork-c.s", "ibfork-c"]), Some(pid));
        assert_eq!(
            parent_named(spacer.pid, &["ibfork-c.s"]),
            None,
            "its parent has another name"
        );
        let age = |s: &procfs::process::Stat| {
            let now = std::time::SystemTime::now()
                .duration_since(std::time::UNIX_EPOCH)
                .unwrap()
                .as_secs_f64();
            now - procfs::boot_time_secs().unwrap() as f64 - s.starttime as f64 / procfs::ticks_per_second() as f64
        };
        assert_eq!(started_ago(&["ibfork-c.s"], age(&spacer)), Some(spacer.pid));
        assert_eq!(started_ago(&["ibfork-c.s"], age(&spacer) + 30.0), None);
        server.wait().unwrap();
    }
}
