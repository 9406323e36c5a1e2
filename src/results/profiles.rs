//! `profiles.parquet` (each step's CPU profiles as folded stacks, with the
//! step's operations) and `profiled.parquet` (what each profile sampled, and
//! what sampling cost), for runs with `profile = "perf"` (docs/profiling.md).

use super::columns::{col, Column};
use crate::profile::Profile;

/// One CPU profile of one step: the server's processes, or ibench's own.
#[derive(Clone, Debug, PartialEq)]
pub struct ProfileRow {
    /// The step.
    pub step: String,
    /// Whose processes: `server` or `client` (ibench's own, `profile_client`).
    pub role: &'static str,
    /// The stacks and what was sampled.
    pub profile: Profile,
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
    pub stack: &'a str,
    pub samples: u64,
}

/// The columns of `profiles.parquet`.
pub(crate) fn stack_columns<'a>() -> Vec<Column<StackLine<'a>>> {
    type L<'b> = StackLine<'b>;
    vec![
        col!("run_id", str, |l: &L| l.of.run_id),
        col!("step", str, |l: &L| l.of.row.step.as_str()),
        col!("role", str, |l: &L| l.of.row.role),
        col!("stack", str, |l: &L| l.stack),
        col!("samples", u64, |l: &L| l.samples),
        col!("frequency_hz", u32, |l: &L| l.of.row.profile.frequency_hz),
        col!("ops", u64?, |l: &L| l.of.ops),
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
    ]
}

/// `items` joined by commas.
fn join(items: impl Iterator<Item = String>) -> String {
    items.collect::<Vec<_>>().join(",")
}
