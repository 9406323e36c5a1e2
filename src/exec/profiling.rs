//! `profile = "perf"` over a run's steps: whether perf can sample here and
//! whose processes, decided once before the first step (a warning when it
//! cannot: the run goes on without), then each step's profiles, sampled from
//! just before its threads are released until they join (docs/profiling.md).

use super::plan::StepPlan;
use crate::metrics::{ServerProcesses, ThreadKind, ThreadOf, ThreadRoles};
use crate::profile::{thread_of, ProfileOptions, Profiler, Running};
use crate::results::{ProfileRow, RoleStack};
use crate::workload::{Config, Profile};
use std::collections::HashMap;

/// Whose processes a run profiles, and how.
pub(crate) struct PerfPlan {
    profiler: Profiler,
    options: ProfileOptions,
    /// The server's processes: they run on this host, and this process reads
    /// the server's figures (a sharded run's first shard).
    server: bool,
    /// ibench's own process (`profile_client`).
    client: bool,
}

/// With `profile = "perf"`, whose processes the run profiles (None: none),
/// and a warning when it profiles less than asked, saying why.
/// `reads_server`: this process reads the server's figures.
pub(crate) fn plan(
    config: &Config,
    servers: &ServerProcesses,
    reads_server: bool,
) -> (Option<PerfPlan>, Option<String>) {
    if config.profile != Profile::Perf {
        return (None, None);
    }
    plan_for(config.profile_frequency, servers, reads_server, config.profile_client)
}

/// The server host's worker of a sharded run: it profiles the server's
/// processes at `frequency_hz` (None: a warning saying why not).
pub(crate) fn server_plan(frequency_hz: u32, servers: &ServerProcesses) -> (Option<PerfPlan>, Option<String>) {
    plan_for(frequency_hz, servers, true, false)
}

fn plan_for(
    frequency_hz: u32,
    servers: &ServerProcesses,
    reads_server: bool,
    client: bool,
) -> (Option<PerfPlan>, Option<String>) {
    let profiler = match Profiler::check() {
        Ok(p) => p,
        Err(why) => {
            return (
                None,
                Some(format!("profile = perf: {why}; the run goes on without one")),
            )
        }
    };
    let mut warning = None;
    let mut server = reads_server;
    if server {
        let pids = servers.pids();
        if pids.is_empty() {
            server = false;
            warning = Some(
                "profile = perf: no server CPU profile: the database has no server process on this host \
                 (it runs inside ibench, or on another host); profile_client samples ibench's own process, \
                 an embedded database's work with it"
                    .to_string(),
            );
        } else if let Err(why) = profiler.info().permits(&pids) {
            server = false;
            warning = Some(format!("profile = perf: {why}; the run goes on without it"));
        }
    }
    let options = ProfileOptions {
        frequency_hz,
        // Each sample keeps its thread: the step's thread roles name it.
        per_thread: true,
        ..ProfileOptions::default()
    };
    let plan = (server || client).then_some(PerfPlan {
        profiler,
        options,
        server,
        client,
    });
    (plan, warning)
}

/// A step's profiles while it runs, and what went wrong with them.
#[derive(Default)]
pub(super) struct StepProfiles {
    running: Vec<(&'static str, Running)>,
    notes: Vec<String>,
}

/// Starts the step's profiles: the server's processes as they are now (the
/// step's connections are made, so PostgreSQL's backends for them are among
/// them), and ibench's own. One that cannot start is a note; the step goes on.
pub(super) fn start(plan: &StepPlan<'_>) -> StepProfiles {
    match plan.perf {
        Some(perf) => start_with(perf, &plan.probe.servers),
        None => StepProfiles::default(),
    }
}

/// Starts the profiles `perf` plans on `servers` (and ibench's own process).
pub(super) fn start_with(perf: &PerfPlan, servers: &ServerProcesses) -> StepProfiles {
    let mut out = StepProfiles::default();
    if perf.server {
        out.add("server", start_on(perf, || servers.pids()));
    }
    if perf.client {
        out.add("client", start_on(perf, || vec![std::process::id() as i32]));
    }
    out
}

/// Starts perf on the processes `pids` finds, found again when perf
/// failed to attach (a PostgreSQL backend of an earlier run's connection
/// exiting, a thread ending): a few tries, then the last error.
fn start_on(perf: &PerfPlan, pids: impl Fn() -> Vec<i32>) -> crate::Result<Running> {
    const TRIES: usize = 3;
    let mut tried = 0;
    loop {
        let found: Vec<i32> = pids().into_iter().filter(|&pid| alive(pid)).collect();
        if found.is_empty() {
            return Err(crate::Error::config("profile", "its processes are gone"));
        }
        tried += 1;
        match perf.profiler.start(&found, &perf.options) {
            Ok(running) => return Ok(running),
            // One ended meanwhile, or one of a process's threads did while
            // perf attached to each (perf exits 255 unannounced; seen with
            // ibench's own process): find them again and retry.
            Err(_) if tried < TRIES => continue,
            Err(e) => return Err(e),
        }
    }
}

/// Whether process `pid` still runs (exists, and is not a zombie its
/// parent has yet to reap: perf cannot attach to one).
fn alive(pid: i32) -> bool {
    let stat = procfs::process::Process::new(pid).and_then(|p| p.stat());
    stat.is_ok_and(|s| !matches!(s.state, 'Z' | 'X'))
}

impl StepProfiles {
    /// Keeps `role`'s profile, or why it has none.
    fn add(&mut self, role: &'static str, started: crate::Result<Running>) {
        match started {
            Ok(running) => self.running.push((role, running)),
            Err(e) => self.notes.push(format!("no {role} CPU profile: {e}")),
        }
    }

    /// Ends sampling (the step's threads have joined); the folding waits for
    /// [`StepProfiles::finish`], after the step's counters are read.
    pub(super) fn end_sampling(&mut self) {
        let StepProfiles { running, notes } = self;
        running.retain_mut(|(role, r)| match r.end_sampling() {
            Ok(()) => true,
            Err(e) => {
                notes.push(format!("no {role} CPU profile: {e}"));
                false
            }
        });
    }

    /// Step `step`'s profiles, folded, each stack with its threads' kind
    /// and role (`roles`, by thread id), and notes on those that failed.
    pub(super) fn finish(mut self, step: &str, roles: &ThreadRoles) -> (Vec<ProfileRow>, Vec<String>) {
        self.end_sampling();
        let mut rows = Vec::new();
        for (role, running) in self.running {
            match running.stop() {
                Ok(mut profile) => {
                    let stacks = by_role(std::mem::take(&mut profile.stacks), roles, profile.frequency_hz);
                    rows.push(ProfileRow {
                        step: step.to_string(),
                        role,
                        profile,
                        stacks,
                    })
                }
                Err(e) => self.notes.push(format!("no {role} CPU profile: {e}")),
            }
        }
        (rows, self.notes)
    }
}

/// Per-thread folded stacks (first frame `comm-pid/tid`) as stacks of
/// each role (first frame `comm`), the threads of a role merged. A thread
/// the step never saw (one that started and ended between two looks) is
/// of kind `ended`.
///
/// Each stack's CPU seconds are its thread's measured CPU shared out by
/// samples: perf's cpu-clock timer misses some of a thread's runtime (3–7%
/// of a thread that syncs to disk, none of one that only computes: the
/// timer cannot fire where interrupts are off; docs/profiling.md), so a
/// thread's samples at 1 ÷ `hz` s each would sum short of what it ran.
/// A thread with no measured CPU counts 1 ÷ `hz` s a sample.
fn by_role(stacks: Vec<(String, u64)>, roles: &ThreadRoles, hz: u32) -> Vec<RoleStack> {
    let ended = ThreadOf {
        kind: ThreadKind::Ended,
        role: "ended".to_string(),
        cpu_s: 0.0,
    };
    let parsed: Vec<(Option<i32>, &str, &str, u64)> = stacks
        .iter()
        .map(|(stack, samples)| {
            let (root, rest) = stack.split_once(';').unwrap_or((stack.as_str(), ""));
            match thread_of(root) {
                Some((name, tid)) => (Some(tid), name, rest, *samples),
                None => (None, root, rest, *samples),
            }
        })
        .collect();
    let mut sampled: HashMap<i32, u64> = HashMap::new();
    for (tid, .., samples) in &parsed {
        if let Some(tid) = tid {
            *sampled.entry(*tid).or_default() += samples;
        }
    }
    let per_sample = |tid: Option<i32>| {
        let nominal = 1.0 / f64::from(hz.max(1));
        match tid.and_then(|t| Some((roles.get(&t)?.cpu_s, *sampled.get(&t)?))) {
            Some((cpu_s, n)) if cpu_s > 0.0 && n > 0 => cpu_s / n as f64,
            _ => nominal,
        }
    };
    let mut merged: HashMap<(ThreadKind, String, String), (u64, f64)> = HashMap::new();
    for &(tid, name, rest, samples) in &parsed {
        let of = tid.and_then(|t| roles.get(&t)).unwrap_or(&ended);
        let stack = if rest.is_empty() {
            name.to_string()
        } else {
            format!("{name};{rest}")
        };
        let entry = merged.entry((of.kind, of.role.clone(), stack)).or_default();
        entry.0 += samples;
        entry.1 += samples as f64 * per_sample(tid);
    }
    let mut out: Vec<RoleStack> = merged
        .into_iter()
        .map(|((kind, role, stack), (samples, cpu_s))| RoleStack {
            kind,
            role,
            stack,
            samples,
            cpu_s,
        })
        .collect();
    out.sort_by(|a, b| b.samples.cmp(&a.samples).then_with(|| a.stack.cmp(&b.stack)));
    out
}
