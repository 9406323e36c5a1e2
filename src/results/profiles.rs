//! `profiles.parquet` (each step's CPU profiles as folded stacks, with the
//! step's operations) and `profiled.parquet` (what each profile sampled, and
//! what sampling cost), for runs with `profile = "perf"` (docs/profiling.md).

use super::columns::{col, Column};
use crate::metrics::ThreadKind;
use crate::profile::Profile;

/// One CPU profile of one step: the server's processes, or ibench's own.
#[derive(Clone, Debug, PartialEq)]
pub struct ProfileRow {
    /// The step.
    pub step: String,
    /// Whose processes: `server` or `client` (ibench's own, `profile_client`).
    pub role: &'static str,
    /// What was sampled (its `stacks` moved into `stacks`).
    pub profile: Profile,
    /// The folded stacks, each with its threads' kind and role.
    pub stacks: Vec<RoleStack>,
}

impl ProfileRow {
    /// What the samples saw of the CPU they stand for: their nominal
    /// seconds (1 ÷ frequency each) ÷ their threads' measured CPU; under 1
    /// where perf's timer missed some of it (docs/profiling.md). None
    /// without samples.
    pub fn sample_coverage(&self) -> Option<f64> {
        let cpu_s: f64 = self.stacks.iter().map(|s| s.cpu_s).sum();
        let samples: u64 = self.stacks.iter().map(|s| s.samples).sum();
        (cpu_s > 0.0).then(|| samples as f64 / f64::from(self.profile.frequency_hz.max(1)) / cpu_s)
    }

    /// The samples whose stack has a frame that `matches`.
    pub fn samples_with(&self, matches: impl Fn(&str) -> bool) -> u64 {
        self.stacks
            .iter()
            .filter(|s| s.stack.split(';').any(&matches))
            .map(|s| s.samples)
            .sum()
    }

    /// The CPU seconds the samples of the threads of `kind` stand for.
    pub fn cpu_of(&self, kind: ThreadKind) -> f64 {
        self.stacks.iter().filter(|s| s.kind == kind).map(|s| s.cpu_s).sum()
    }

    /// The samples of the threads of `kind`.
    pub fn samples_of(&self, kind: ThreadKind) -> u64 {
        self.stacks.iter().filter(|s| s.kind == kind).map(|s| s.samples).sum()
    }
}

/// A folded stack (its first frame the thread's name) of the threads of one role.
#[derive(Clone, Debug, PartialEq)]
pub struct RoleStack {
    pub kind: ThreadKind,
    pub role: String,
    pub stack: String,
    pub samples: u64,
    /// The CPU seconds its samples stand for (its threads' measured CPU
    /// shared out by samples: exec/profiling.rs).
    pub cpu_s: f64,
}

/// A row of either table: a profile, with its run id and the operations its
/// per-operation figures divide by (the step's `cost_ops`).
pub(crate) struct ProfileLine<'a> {
    pub run_id: &'a str,
    pub row: &'a ProfileRow,
    pub ops: Option<u64>,
}

/// A stack of a profile: a row of `profiles.parquet`.
pub(crate) struct StackLine<'a> {
    pub of: &'a ProfileLine<'a>,
    pub stack: &'a RoleStack,
}

/// The columns of `profiles.parquet`.
pub(crate) fn stack_columns<'a>() -> Vec<Column<StackLine<'a>>> {
    type L<'b> = StackLine<'b>;
    vec![
        col!("run_id", str, |l: &L| l.of.run_id),
        col!("step", str, |l: &L| l.of.row.step.as_str()),
        col!("role", str, |l: &L| l.of.row.role),
        col!("stack", str, |l: &L| l.stack.stack.as_str()),
        col!("samples", u64, |l: &L| l.stack.samples),
        col!("frequency_hz", u32, |l: &L| l.of.row.profile.frequency_hz),
        col!("ops", u64?, |l: &L| l.of.ops),
        col!("thread_kind", str, |l: &L| l.stack.kind.name()),
        col!("thread_role", str, |l: &L| l.stack.role.as_str()),
        col!("cpu_s", f64, |l: &L| l.stack.cpu_s),
    ]
}

/// The columns of `profiled.parquet`.
pub(crate) fn profiled_columns<'a>() -> Vec<Column<ProfileLine<'a>>> {
    type L<'b> = ProfileLine<'b>;
    vec![
        col!("run_id", str, |l: &L| l.run_id),
        col!("step", str, |l: &L| l.row.step.as_str()),
        col!("role", str, |l: &L| l.row.role),
        col!("pids", str, |l: &L| join(l.row.profile.pids.iter().map(i32::to_string))),
        col!("executables", str, |l: &L| join(
            l.row.profile.executables.iter().map(|e| e.path.display().to_string())
        )),
        col!("event", str, |l: &L| l.row.profile.event.as_str()),
        col!("frequency_hz", u32, |l: &L| l.row.profile.frequency_hz),
        col!("call_graph", str, |l: &L| l.row.profile.call_graph.name()),
        col!("samples", u64, |l: &L| l.row.profile.samples),
        col!("unresolved_frames_share", f64, |l: &L| l
            .row
            .profile
            .unresolved_frames_share),
        col!("duration_s", f64, |l: &L| l.row.profile.duration_s),
        col!("perf_cpu_s", f64, |l: &L| l.row.profile.perf_cpu_s),
        col!("perf_total_cpu_s", f64, |l: &L| l.row.profile.perf_total_cpu_s),
        col!("script_cpu_s", f64, |l: &L| l.row.profile.script_cpu_s),
        col!("profiled_cpu_s", f64?, |l: &L| l.row.profile.profiled_cpu_s),
        col!("perf_share", f64?, |l: &L| l.row.profile.perf_share()),
        col!("warnings", str?, |l: &L| (!l.row.profile.warnings.is_empty())
            .then(|| l.row.profile.warnings.join("\n"))),
        col!("ops", u64?, |l: &L| l.ops),
        col!("sample_coverage", f64?, |l: &L| l.row.sample_coverage()),
    ]
}

/// `items` joined by commas.
fn join(items: impl Iterator<Item = String>) -> String {
    items.collect::<Vec<_>>().join(",")
}
