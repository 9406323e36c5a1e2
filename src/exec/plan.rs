//! What a step is asked to do, and where its host counters come from.

use super::kv_state::KvState;
use super::tables::TableState;
use super::Observer;
use crate::connect::{Connector, ServerCounters};
use crate::metrics::{Disks, ServerProcesses};
use crate::stop::Stop;
use crate::workload::{Config, Step};

/// Where a run's host counters come from: the server's processes (when
/// local) and the disks holding the data.
pub(crate) struct Probe {
    pub servers: ServerProcesses,
    pub disks: Disks,
}

/// What a step is asked to do.
pub(crate) struct StepPlan<'a> {
    pub config: &'a Config,
    pub connector: &'a dyn Connector,
    pub tables: &'a [TableState],
    /// The clients this process runs (all of them unless it is a shard).
    pub clients: std::ops::Range<u32>,
    /// The step's intended start (Unix µs), shared by a run's shards; None: at once.
    pub start_at_us: Option<i64>,
    pub step: Step,
    /// The step's position in the run: query streams differ per step.
    pub ordinal: u64,
    /// Whether the secondary indexes exist.
    pub indexed: bool,
    pub stop: &'a Stop,
    pub observer: &'a dyn Observer,
    /// The key/value table's state, for key/value steps.
    pub kv: Option<&'a KvState>,
    /// The sysbench tables' state, for sysbench steps.
    pub sb: Option<&'a super::sysbench::SbState>,
    pub probe: &'a Probe,
    /// The database's own counters and gauges, when it has any.
    pub stats: Option<&'a std::sync::Mutex<Box<dyn ServerCounters>>>,
    /// Where the step starts on the run's simulated timeline, when the
    /// database simulates time (the null connector's `time=simulated`).
    pub simulated: Option<SimulatedSpan>,
    /// Where and how often the step's results are written while it runs.
    pub flush: Option<super::flush::FlushPlan>,
    /// With `profile`: the source of the server's waits (read through
    /// `stats`) and how often a sampled one is sampled.
    pub waits: Option<(&'static str, f64)>,
    /// With `profile = "perf"`: whose processes each step profiles.
    pub perf: Option<&'a super::profiling::PerfPlan>,
}

/// A step's place on its run's simulated timeline.
#[derive(Clone, Copy, Debug)]
pub(crate) struct SimulatedSpan {
    /// When the run's simulated time began.
    pub epoch: std::time::Instant,
    /// When this step starts.
    pub start: std::time::Instant,
}
