//! `profile = "perf"` over a run's steps: whether perf can sample here and
//! whose processes, decided once before the first step (a warning when it
//! cannot: the run goes on without), then each step's profiles, sampled from
//! just before its threads are released until they join (docs/profiling.md).

use super::plan::StepPlan;
use crate::metrics::ServerProcesses;
use crate::profile::{ProfileOptions, Profiler, Running};
use crate::results::ProfileRow;
use crate::workload::{Config, Profile};

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
    let client = config.profile_client;
    let options = ProfileOptions {
        frequency_hz: config.profile_frequency,
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
    let mut out = StepProfiles::default();
    let Some(perf) = plan.perf else { return out };
    let servers = &plan.probe.servers;
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

    /// Step `step`'s profiles, folded, and notes on those that failed.
    pub(super) fn finish(mut self, step: &str) -> (Vec<ProfileRow>, Vec<String>) {
        self.end_sampling();
        let mut rows = Vec::new();
        for (role, running) in self.running {
            match running.stop() {
                Ok(profile) => rows.push(ProfileRow {
                    step: step.to_string(),
                    role,
                    profile,
                }),
                Err(e) => self.notes.push(format!("no {role} CPU profile: {e}")),
            }
        }
        (rows, self.notes)
    }
}
