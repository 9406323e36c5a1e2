//! Where a step's CPU went, thread by thread: every thread of the
//! processes a step measures (a local server's, and ibench's own) read
//! from /proc on the step's interval grid, each with its role: the threads
//! that serve the client (PostgreSQL's client backends, MySQL's connection
//! threads, ibench's workers, where an embedded engine does its foreground
//! work) apart from the ones working behind them (checkpointer, WAL
//! writer, autovacuum; InnoDB's page cleaners, log writer, purge;
//! RocksDB's flush and compaction pools) and from ibench's own monitoring.
//!
//! A thread's CPU is its scheduler runtime (`/proc/<pid>/task/<tid>/schedstat`,
//! nanoseconds), split into user and system time in the proportion of its
//! `stat` ticks. A thread that starts inside the step counts from nothing; one
//! that ends counts until it was last seen, and what it ran after that (and
//! what processes the step never saw ran: a short autovacuum worker) is the
//! difference between the processes' measured total and the threads' sum,
//! kept as the `ended` kind, so the roles always add up to the total.

use super::processes::ServerProcesses;
use std::collections::HashMap;
use std::fs;

/// Whose process a thread runs in.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash, PartialOrd, Ord)]
pub enum Side {
    /// The database server's processes.
    Server,
    /// ibench's own process (an embedded engine's work runs there).
    Client,
}

impl Side {
    /// Its name in results.
    pub fn name(self) -> &'static str {
        match self {
            Side::Server => "server",
            Side::Client => "client",
        }
    }
}

/// What a thread does for the workload.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash, PartialOrd, Ord)]
pub enum ThreadKind {
    /// Serves the benchmark's connections (or, in ibench's process, runs them).
    Foreground,
    /// Works behind them: flushing, checkpointing, compacting, purging.
    Background,
    /// ibench's own: its counter readers' server sessions, its monitor.
    Monitor,
    /// Threads and processes that ended before the step's last look at them.
    Ended,
}

impl ThreadKind {
    /// Its name in results.
    pub fn name(self) -> &'static str {
        match self {
            ThreadKind::Foreground => "foreground",
            ThreadKind::Background => "background",
            ThreadKind::Monitor => "monitor",
            ThreadKind::Ended => "ended",
        }
    }

    /// The kinds by name (an unknown name: None).
    pub fn parse(name: &str) -> Option<ThreadKind> {
        [
            ThreadKind::Foreground,
            ThreadKind::Background,
            ThreadKind::Monitor,
            ThreadKind::Ended,
        ]
        .into_iter()
        .find(|k| k.name() == name)
    }
}

/// A thread (or a single-threaded process) the database names itself:
/// PostgreSQL's `pg_stat_activity` (by pid), MySQL's
/// `performance_schema.threads` and MariaDB's processlist (by thread id).
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct NamedThread {
    /// The thread's id (a PostgreSQL backend's pid).
    pub id: i32,
    /// What it is (`client backend`, `innodb/page_flush_coordinator_thread`).
    pub role: String,
    pub kind: ThreadKind,
}

/// One role's CPU over a step.
#[derive(Clone, Debug, PartialEq)]
pub struct ThreadRow {
    pub side: Side,
    pub kind: ThreadKind,
    pub role: String,
    /// Threads seen in the role.
    pub threads: u32,
    pub cpu_s: f64,
    pub user_s: f64,
    pub sys_s: f64,
}

/// A thread's kind, role and CPU over a step.
#[derive(Clone, Debug, PartialEq)]
pub struct ThreadOf {
    pub kind: ThreadKind,
    pub role: String,
    /// CPU seconds it ran in the step, as far as the last look saw.
    pub cpu_s: f64,
}

/// Each thread over a step, by thread id (a profile's samples name their
/// thread).
pub type ThreadRoles = HashMap<i32, ThreadOf>;

/// One thread's counters at one look.
#[derive(Clone, Debug)]
struct Look {
    pid: i32,
    tid: i32,
    /// Its start, clock ticks after boot (with `tid`, its identity: ids are reused).
    start: u64,
    comm: String,
    /// Scheduler runtime, ns.
    run_ns: u64,
    user_ticks: u64,
    sys_ticks: u64,
}

/// One thread's first and last look of a step.
#[derive(Clone, Debug)]
struct Seen {
    side: Side,
    first: Look,
    last: Look,
    /// Born inside the step: it counts from nothing.
    new: bool,
}

impl Seen {
    /// Its CPU seconds in the step (scheduler runtime, ns precise), and
    /// the share of it in user mode (from the ticks: with none, all user).
    fn cpu(&self) -> (f64, f64) {
        let (first, last) = (&self.first, &self.last);
        let base = if self.new {
            (0, 0, 0)
        } else {
            (first.run_ns, first.user_ticks, first.sys_ticks)
        };
        let cpu_s = last.run_ns.saturating_sub(base.0) as f64 / 1e9;
        let user = last.user_ticks.saturating_sub(base.1) as f64;
        let sys = last.sys_ticks.saturating_sub(base.2) as f64;
        (cpu_s, if user + sys > 0.0 { user / (user + sys) } else { 1.0 })
    }
}

/// The threads of a step's processes, looked at on its grid.
#[derive(Default)]
pub struct ThreadLedger {
    seen: HashMap<(i32, u64), Seen>,
    /// Processes' titles (PostgreSQL names its processes' roles there).
    titles: HashMap<i32, String>,
    named: HashMap<i32, NamedThread>,
}

/// The threads of process `pid` now.
fn looks(pid: i32) -> Vec<Look> {
    let Ok(dir) = fs::read_dir(format!("/proc/{pid}/task")) else {
        return Vec::new();
    };
    dir.flatten()
        .filter_map(|e| e.file_name().to_str()?.parse::<i32>().ok())
        .filter_map(|tid| look(pid, tid))
        .collect()
}

/// Thread `tid` of process `pid` now; None once it is gone.
fn look(pid: i32, tid: i32) -> Option<Look> {
    let base = format!("/proc/{pid}/task/{tid}");
    let stat = fs::read_to_string(format!("{base}/stat")).ok()?;
    let run_ns = fs::read_to_string(format!("{base}/schedstat"))
        .ok()?
        .split_whitespace()
        .next()?
        .parse()
        .ok()?;
    // comm is in parentheses and may hold spaces; the fields follow the last ')'.
    let (head, rest) = stat.rsplit_once(')')?;
    let comm = head.split_once('(')?.1.to_string();
    let fields: Vec<&str> = rest.split_whitespace().collect();
    let field = |i: usize| fields.get(i).and_then(|f| f.parse::<u64>().ok());
    Some(Look {
        pid,
        tid,
        start: field(19)?,
        comm,
        run_ns,
        user_ticks: field(11)?,
        sys_ticks: field(12)?,
    })
}

impl ThreadLedger {
    /// The first look: the server's processes (`servers`) and, with
    /// `client`, ibench's own.
    pub fn start(servers: &ServerProcesses, client: bool) -> ThreadLedger {
        let mut ledger = ThreadLedger::default();
        ledger.look_all(servers, client, false);
        ledger
    }

    /// Another look at every thread (on the step's grid, and at its end).
    pub fn sample(&mut self, servers: &ServerProcesses, client: bool) {
        self.look_all(servers, client, true);
    }

    /// Threads the database names itself (looked up once the step's
    /// connections are made).
    pub fn name(&mut self, named: Vec<NamedThread>) {
        self.named.extend(named.into_iter().map(|n| (n.id, n)));
    }

    /// Looks at every thread; one first seen after the step's first look
    /// (`later`) was born inside the step. (Not told by its start time:
    /// that is in clock ticks, and a thread born in the step's first 10 ms
    /// would pass for an old one and lose its CPU until it was first seen.)
    fn look_all(&mut self, servers: &ServerProcesses, client: bool, later: bool) {
        let mut pids: Vec<(Side, i32)> = servers.pids().into_iter().map(|p| (Side::Server, p)).collect();
        if client {
            pids.push((Side::Client, std::process::id() as i32));
        }
        for (side, pid) in pids {
            if side == Side::Server && !self.titles.contains_key(&pid) {
                let title = fs::read(format!("/proc/{pid}/cmdline")).unwrap_or_default();
                let title = String::from_utf8_lossy(&title).replace('\0', " ").trim().to_string();
                self.titles.insert(pid, title);
            }
            for l in looks(pid) {
                let new = later;
                self.seen
                    .entry((l.tid, l.start))
                    .and_modify(|s| s.last = l.clone())
                    .or_insert_with(|| Seen {
                        side,
                        first: l.clone(),
                        last: l,
                        new,
                    });
            }
        }
    }

    /// Each thread's kind, role and CPU, by thread id.
    pub fn roles(&self) -> ThreadRoles {
        let of = |s: &Seen| {
            let (kind, role) = self.role(s);
            let cpu_s = s.cpu().0;
            ThreadOf { kind, role, cpu_s }
        };
        self.seen.values().map(|s| (s.last.tid, of(s))).collect()
    }

    /// Each role's CPU over the step: the threads' own, and per side the
    /// rest of `totals` (the processes' measured CPU: server, client) as
    /// `ended`.
    pub fn finish(self, totals: [Option<f64>; 2]) -> Vec<ThreadRow> {
        let mut rows: HashMap<(Side, ThreadKind, String), ThreadRow> = HashMap::new();
        let mut sums = [0.0f64; 2];
        for s in self.seen.values() {
            let (kind, role) = self.role(s);
            let (cpu_s, user_share) = s.cpu();
            sums[(s.side == Side::Client) as usize] += cpu_s;
            let row = rows.entry((s.side, kind, role.clone())).or_insert_with(|| ThreadRow {
                side: s.side,
                kind,
                role,
                threads: 0,
                cpu_s: 0.0,
                user_s: 0.0,
                sys_s: 0.0,
            });
            if cpu_s > 0.0 || !s.new {
                row.threads += 1;
            }
            row.cpu_s += cpu_s;
            row.user_s += cpu_s * user_share;
            row.sys_s += cpu_s * (1.0 - user_share);
        }
        for (i, side) in [Side::Server, Side::Client].into_iter().enumerate() {
            if let Some(total) = totals[i] {
                let rest = total - sums[i];
                if sums[i] > 0.0 || total > 0.0 {
                    rows.insert(
                        (side, ThreadKind::Ended, "ended".into()),
                        ThreadRow {
                            side,
                            kind: ThreadKind::Ended,
                            role: "ended".into(),
                            threads: 0,
                            cpu_s: rest,
                            user_s: 0.0,
                            sys_s: 0.0,
                        },
                    );
                }
            }
        }
        let mut out: Vec<ThreadRow> = rows.into_values().filter(|r| r.cpu_s != 0.0 || r.threads > 0).collect();
        out.sort_by(|a, b| {
            (a.side, a.kind)
                .cmp(&(b.side, b.kind))
                .then(b.cpu_s.total_cmp(&a.cpu_s))
                .then(a.role.cmp(&b.role))
        });
        out
    }

    /// A thread's kind and role.
    fn role(&self, s: &Seen) -> (ThreadKind, String) {
        let l = &s.last;
        match s.side {
            Side::Client => client_role(&l.comm),
            Side::Server => {
                let named = self
                    .named
                    .get(&l.tid)
                    .or_else(|| self.named.get(&l.pid).filter(|_| l.pid == l.tid));
                match named {
                    Some(n) => (n.kind, n.role.clone()),
                    None => server_role(&l.comm, self.titles.get(&l.pid).map(String::as_str).unwrap_or("")),
                }
            }
        }
    }
}

/// The prefix of ibench's threads that run a step's operations
/// (`ib-w<role>-<n>`: see exec/step.rs).
pub const WORKER_PREFIX: &str = "ib-w";

/// The role of a thread of ibench's own process, by its name.
fn client_role(comm: &str) -> (ThreadKind, String) {
    if comm.starts_with(WORKER_PREFIX) {
        return (ThreadKind::Foreground, "ibench workers".into());
    }
    if let Some(pool) = ["rocksdb:low", "rocksdb:high", "rocksdb:bottom"]
        .into_iter()
        .find(|p| comm.starts_with(p))
    {
        return (ThreadKind::Background, pool.into());
    }
    (ThreadKind::Monitor, "ibench".into())
}

/// PostgreSQL's background processes, as their titles name them.
const PG_BACKGROUND: [&str; 16] = [
    "checkpointer",
    "background writer",
    "walwriter",
    "autovacuum launcher",
    "autovacuum worker",
    "logical replication launcher",
    "logical replication worker",
    "logical replication apply worker",
    "archiver",
    "stats collector",
    "walsender",
    "walreceiver",
    "walsummarizer",
    "startup",
    "io worker",
    "parallel worker",
];

/// The role of a server thread the database did not name: a PostgreSQL
/// process by its title (`postgres: 15/main: checkpointer`, `postgres: user
/// db host(port) idle`), the postmaster by its command line; a MySQL or
/// MariaDB thread by its name where the server gives one (`ib_pg_flush_co`,
/// `rocksdb:low`), else unnamed.
fn server_role(comm: &str, title: &str) -> (ThreadKind, String) {
    if comm == "postgres" {
        let Some(rest) = title.strip_prefix("postgres: ") else {
            return (ThreadKind::Background, "postmaster".into());
        };
        if let Some(kind) = PG_BACKGROUND.iter().find(|k| rest.contains(*k)) {
            return (ThreadKind::Background, kind.to_string());
        }
        // "user db host(port) state": a client backend.
        return (ThreadKind::Foreground, "client backend".into());
    }
    if matches!(comm, "mysqld" | "mariadbd") {
        return (ThreadKind::Background, "unnamed".into());
    }
    if comm == "connection" || comm.starts_with("one_connection") {
        return (ThreadKind::Foreground, "connection".into());
    }
    let role = comm.trim_end_matches(|c: char| c.is_ascii_digit()).to_string();
    (ThreadKind::Background, role)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn postgres_processes_are_named_by_their_titles() {
        assert_eq!(
            server_role("postgres", "postgres: 15/main: checkpointer"),
            (ThreadKind::Background, "checkpointer".into())
        );
        assert_eq!(
            server_role("postgres", "postgres: autovacuum worker test"),
            (ThreadKind::Background, "autovacuum worker".into())
        );
        assert_eq!(
            server_role("postgres", "postgres: postgres test 127.0.0.1(50412) idle"),
            (ThreadKind::Foreground, "client backend".into())
        );
        assert_eq!(
            server_role("postgres", "/usr/lib/postgresql/15/bin/postgres -D /var/lib/x"),
            (ThreadKind::Background, "postmaster".into())
        );
    }

    #[test]
    fn server_and_engine_threads_are_named_by_their_names() {
        assert_eq!(
            server_role("rocksdb:low", ""),
            (ThreadKind::Background, "rocksdb:low".into())
        );
        assert_eq!(
            server_role("ib_pg_flush_co", ""),
            (ThreadKind::Background, "ib_pg_flush_co".into())
        );
        assert_eq!(server_role("mariadbd", ""), (ThreadKind::Background, "unnamed".into()));
        assert_eq!(
            client_role("ib-wevents-3"),
            (ThreadKind::Foreground, "ibench workers".into())
        );
        assert_eq!(
            client_role("rocksdb:high0"),
            (ThreadKind::Background, "rocksdb:high".into())
        );
        assert_eq!(client_role("python3"), (ThreadKind::Monitor, "ibench".into()));
    }

    #[test]
    fn a_busy_thread_of_this_process_is_counted_with_its_cpu_and_the_rest_is_the_monitors() {
        let servers = ServerProcesses::default();
        let mut ledger = ThreadLedger::start(&servers, true);
        let before = super::super::system::own_cpu_s();
        // The worker's own CPU, not the wall clock, paces it: on a busy host
        // 100 ms of wall time may give it much less.
        let own_ns = || {
            std::fs::read_to_string("/proc/thread-self/schedstat")
                .ok()
                .and_then(|s| s.split_whitespace().next()?.parse::<u64>().ok())
                .unwrap_or(0)
        };
        let (seen_at, looked) = (std::sync::mpsc::channel(), std::sync::mpsc::channel());
        let (tell, wait) = (seen_at.0, looked.1);
        let worker = std::thread::Builder::new()
            .name(format!("{WORKER_PREFIX}test-0"))
            .spawn(move || {
                let (start, mut told) = (own_ns(), false);
                let mut x = 0u64;
                while own_ns() - start < 300_000_000 {
                    x = std::hint::black_box(x.wrapping_add(1));
                    if !told && own_ns() - start >= 100_000_000 {
                        told = true;
                        tell.send(()).unwrap();
                        wait.recv().unwrap();
                    }
                }
            })
            .unwrap();
        seen_at.1.recv().unwrap();
        ledger.sample(&servers, true);
        looked.0.send(()).unwrap();
        worker.join().unwrap();
        ledger.sample(&servers, true);
        let total = super::super::system::own_cpu_s() - before;
        let rows = ledger.finish([None, Some(total)]);
        let cpu = |kind| rows.iter().filter(|r| r.kind == kind).map(|r| r.cpu_s).sum::<f64>();
        let workers = cpu(ThreadKind::Foreground);
        // Seen after 100 ms of its 300 ms of CPU: at least that much, the
        // rest in `ended` (other tests' workers may add theirs).
        assert!((0.1..=0.6).contains(&workers), "{rows:?}");
        let sum: f64 = rows.iter().map(|r| r.cpu_s).sum();
        assert!(
            (sum - total).abs() < 1e-9,
            "the roles add up to the measured total: {rows:?}"
        );
    }
}
