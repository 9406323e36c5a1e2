//! CPU profiles of a set of processes, sampled with Linux perf: the
//! machinery behind `profile = "perf"` (docs/profiling.md).
//!
//! [`Profiler::check`] says whether perf can sample here (and if not, why);
//! [`Profiler::start`] runs `perf record` on the processes as a child of
//! ours, sampling from the moment it returns; [`Running::stop`] ends it and
//! folds the stacks `perf script` symbolized (with inferno's perf
//! collapser) into a [`Profile`]. [`flamegraph`] and [`differential`] draw
//! folded stacks as interactive SVG.
//!
//! perf is never left running: a [`Running`] dropped unstopped (an error, a
//! panic, Ctrl-C unwinding) stops its perf, and perf also gets SIGTERM from
//! the kernel when the thread that started it ends. Its data file lives in a
//! temporary directory that goes with it.
//!
//! ```no_run
//! use ibench::profile::{ProfileOptions, Profiler};
//! let profiler = Profiler::check().expect("perf can sample here");
//! let running = profiler.start(&[1234], &ProfileOptions::default()).unwrap();
//! // ... the step runs ...
//! let profile = running.stop().unwrap();
//! let svg = ibench::profile::flamegraph(&profile.stacks, "l.i0").unwrap();
//! # let _ = svg;
//! ```

mod check;
mod elf;
mod flame;
mod fold;
mod record;

pub use check::{PerfInfo, Unavailable};
pub use elf::{frame_pointer_share, FRAME_POINTER_SHARE};
pub use flame::{differential, flamegraph};
pub use fold::unresolved_share;
pub use record::Running;

use std::ffi::OsStr;
use std::path::PathBuf;

/// How perf walks the stack at each sample.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
pub enum CallGraph {
    /// Frame pointers when every profiled executable has them, else DWARF.
    #[default]
    Auto,
    /// Follow the frame-pointer chain (`--call-graph fp`): cheap, and
    /// complete where every function on the stack keeps a frame pointer.
    FramePointer,
    /// Copy `stack_bytes` of each sample's stack and unwind it afterwards with
    /// the executables' unwind tables (`--call-graph dwarf,N`): works without
    /// frame pointers, at about `stack_bytes` of data per sample.
    Dwarf {
        /// Bytes of stack copied per sample (perf's default: 8192).
        stack_bytes: u32,
    },
    /// No call graph: the sampled function only.
    None,
}

impl CallGraph {
    /// DWARF unwinding with perf's default stack copy.
    pub const DWARF: CallGraph = CallGraph::Dwarf { stack_bytes: 8192 };

    /// The mode as perf's `--call-graph` spells it (`fp`, `dwarf,8192`);
    /// `auto` before it is resolved, `none` for no call graph.
    pub fn name(&self) -> String {
        match self {
            CallGraph::Auto => "auto".into(),
            CallGraph::FramePointer => "fp".into(),
            CallGraph::Dwarf { stack_bytes } => format!("dwarf,{stack_bytes}"),
            CallGraph::None => "none".into(),
        }
    }
}

/// What to sample and how.
#[derive(Clone, Debug, PartialEq)]
pub struct ProfileOptions {
    /// Samples per second of each profiled thread's CPU time (perf's `-F`);
    /// 99, not 100, so sampling does not run in lockstep with timers.
    pub frequency_hz: u32,
    /// The perf event (`cpu-clock`, `cycles`); None: [`PerfInfo::default_event`].
    pub event: Option<String>,
    /// How stacks are walked.
    pub call_graph: CallGraph,
    /// Keep each sample's thread: a stack's first frame is then
    /// `comm-pid/tid` (inferno's `--tid`), not `comm` alone.
    pub per_thread: bool,
}

impl Default for ProfileOptions {
    fn default() -> Self {
        ProfileOptions {
            frequency_hz: 99,
            event: None,
            call_graph: CallGraph::Auto,
            per_thread: false,
        }
    }
}

/// A per-thread stack's first frame (`comm-pid/tid`): the thread's name
/// and id; None for a frame of another form.
pub fn thread_of(root: &str) -> Option<(&str, i32)> {
    let (name_pid, tid) = root.rsplit_once('/')?;
    let (name, _pid) = name_pid.rsplit_once('-')?;
    Some((name, tid.parse().ok()?))
}

/// An executable among the profiled processes, and what decided its call
/// graph.
#[derive(Clone, Debug, PartialEq)]
pub struct Executable {
    /// Its path, as `/proc/<pid>/exe` names it.
    pub path: PathBuf,
    /// The share of its functions that set up a frame pointer, and how many
    /// were read; None when that could not be told (not x86-64 ELF).
    pub frame_pointers: Option<(f64, usize)>,
}

impl Executable {
    /// Built with frame pointers, as far as its code tells.
    pub fn has_frame_pointers(&self) -> bool {
        self.frame_pointers
            .is_some_and(|(share, _)| share >= FRAME_POINTER_SHARE)
    }
}

/// A finished profile: the folded stacks and what was sampled.
#[derive(Clone, Debug, PartialEq)]
pub struct Profile {
    /// Folded stacks (`comm;outermost;...;innermost`, frames as perf
    /// symbolized them) and their samples, most samples first.
    pub stacks: Vec<(String, u64)>,
    /// All samples.
    pub samples: u64,
    /// Of all frames in all samples, the share perf could not name
    /// (`[unknown]`, or only the executable's name, `[postgres]`): a static
    /// function of a stripped executable, or a broken stack.
    pub unresolved_frames_share: f64,
    /// The event sampled.
    pub event: String,
    /// Samples per second of CPU time asked for.
    pub frequency_hz: u32,
    /// The processes sampled (their children started later are sampled too).
    pub pids: Vec<i32>,
    /// How stacks were walked (never [`CallGraph::Auto`]).
    pub call_graph: CallGraph,
    /// The executables of the processes, with their frame-pointer evidence.
    pub executables: Vec<Executable>,
    /// Seconds from the start of sampling to its end.
    pub duration_s: f64,
    /// CPU seconds `perf record` used while it sampled: what it took from
    /// the profiled processes' cores.
    pub perf_cpu_s: f64,
    /// CPU seconds `perf record` used in all: with attaching to the
    /// processes before the span (about 0.08 s here) and writing its data
    /// after it.
    pub perf_total_cpu_s: f64,
    /// CPU seconds `perf script` and the folding used afterwards (outside the
    /// sampled span).
    pub script_cpu_s: f64,
    /// CPU seconds the profiled processes and their children used while
    /// sampled (from /proc); None when it could not be read.
    pub profiled_cpu_s: Option<f64>,
    /// What perf warned about (lost samples, unreadable files), one a line.
    pub warnings: Vec<String>,
}

impl Profile {
    /// perf's own CPU as a share of the profiled processes' CPU while it
    /// sampled them: what profiling costs (the sampling interrupts add to the
    /// profiled processes' own time, which this does not separate).
    pub fn perf_share(&self) -> Option<f64> {
        self.profiled_cpu_s.filter(|&s| s > 0.0).map(|s| self.perf_cpu_s / s)
    }

    /// The stacks in the folded format (`stack samples`, one a line), as
    /// inferno and Brendan Gregg's flamegraph.pl read them.
    pub fn folded(&self) -> String {
        fold::to_text(&self.stacks)
    }

    /// The samples whose stack has a frame that `matches`.
    pub fn samples_with(&self, matches: impl Fn(&str) -> bool) -> u64 {
        self.stacks
            .iter()
            .filter(|(stack, _)| stack.split(';').any(&matches))
            .map(|(_, n)| n)
            .sum()
    }
}

/// The entry point: checks perf once, then starts profiles.
#[derive(Clone, Debug, PartialEq)]
pub struct Profiler {
    info: PerfInfo,
}

impl Profiler {
    /// Finds perf on `PATH` and checks that the kernel lets ibench sample.
    pub fn check() -> Result<Profiler, Unavailable> {
        Self::check_path(&std::env::var_os("PATH").unwrap_or_default())
    }

    /// As [`Profiler::check`], with `path` as the search path.
    pub fn check_path(path: &OsStr) -> Result<Profiler, Unavailable> {
        check::check_path(path).map(|info| Profiler { info })
    }

    /// What was found.
    pub fn info(&self) -> &PerfInfo {
        &self.info
    }

    /// Starts sampling `pids` (processes: all their threads, and the
    /// children they start from now on). Returns once perf samples. Fails
    /// with [`crate::Error::Config`] for options out of range or a process
    /// that cannot be sampled (the [`Unavailable`] sentence), and with
    /// [`crate::Error::Io`] when perf fails.
    ///
    /// perf gets SIGTERM when the calling thread ends: start and stop it on
    /// a thread that outlives the span sampled.
    pub fn start(&self, pids: &[i32], opts: &ProfileOptions) -> crate::Result<Running> {
        record::start(&self.info, pids, opts)
    }
}
