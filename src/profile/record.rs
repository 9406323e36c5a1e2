//! `perf record` as a child process: started with its events off, turned on
//! and off over a control FIFO (so sampling spans exactly what the caller
//! asked), stopped with SIGINT, never left behind.

use super::check::PerfInfo;
use super::{fold, CallGraph, Executable, Profile, ProfileOptions};
use crate::{Error, Result};
use std::fs::File;
use std::io::{Read, Write};
use std::os::unix::fs::{DirBuilderExt, OpenOptionsExt};
use std::os::unix::process::CommandExt;
use std::path::{Path, PathBuf};
use std::process::{Command, Stdio};
use std::time::{Duration, Instant};

/// How long perf may take to attach and answer `enable`; attaching
/// synthesizes an event per thread and mapping, slow for a server with
/// thousands of threads.
const ATTACH_TIMEOUT: Duration = Duration::from_secs(60);
/// How long perf may take to answer `disable` and to write its data and exit.
const STOP_TIMEOUT: Duration = Duration::from_secs(30);

/// A `perf record` sampling a set of processes. Stop it with
/// [`Running::stop`]; dropped unstopped, it stops perf and keeps nothing.
pub struct Running {
    perf: PathBuf,
    /// perf's pid, until it is reaped.
    child: Option<libc::pid_t>,
    ctl: File,
    ack: File,
    dir: TempDir,
    started: Instant,
    cpu_at_start: Option<f64>,
    /// perf's CPU seconds when sampling began and ended (`enable` and
    /// `disable` acknowledged), and in all once reaped; its wait status.
    perf_cpu_at_enable: f64,
    perf_cpu_at_disable: Option<f64>,
    /// Once sampling ended: the span's seconds and the processes' CPU then.
    ended: Option<(f64, Option<f64>)>,
    perf_total_cpu_s: f64,
    status: Option<libc::c_int>,
    event: String,
    frequency_hz: u32,
    pids: Vec<i32>,
    call_graph: CallGraph,
    executables: Vec<Executable>,
    per_thread: bool,
}

pub(super) fn start(info: &PerfInfo, pids: &[i32], opts: &ProfileOptions) -> Result<Running> {
    let max = std::fs::read_to_string("/proc/sys/kernel/perf_event_max_sample_rate")
        .ok()
        .and_then(|s| s.trim().parse::<u32>().ok())
        .unwrap_or(100_000);
    if !(1..=max).contains(&opts.frequency_hz) {
        let message = format!(
            "must be 1 to {max} Hz (kernel.perf_event_max_sample_rate), got {}",
            opts.frequency_hz
        );
        return Err(Error::config("profile_frequency", message));
    }
    if pids.is_empty() {
        return Err(Error::config("profile", "no process to profile"));
    }
    info.permits(pids)
        .map_err(|e| Error::config("profile", e.to_string()))?;
    let executables = executables(pids);
    let call_graph = match opts.call_graph {
        CallGraph::Auto if executables.iter().all(Executable::has_frame_pointers) => CallGraph::FramePointer,
        CallGraph::Auto => CallGraph::DWARF,
        chosen => chosen,
    };
    let event = opts.event.clone().unwrap_or_else(|| info.default_event());
    let dir = TempDir::new()?;
    let (ctl, ack) = (dir.0.join("ctl"), dir.0.join("ack"));
    for fifo in [&ctl, &ack] {
        make_fifo(fifo)?;
    }
    let mut running = Running {
        perf: info.perf.clone(),
        child: None,
        ctl: open_fifo(&ctl)?,
        ack: open_fifo(&ack)?,
        started: Instant::now(),
        cpu_at_start: None,
        perf_cpu_at_enable: 0.0,
        perf_cpu_at_disable: None,
        ended: None,
        perf_total_cpu_s: 0.0,
        status: None,
        event,
        frequency_hz: opts.frequency_hz,
        pids: pids.to_vec(),
        call_graph,
        executables,
        dir,
        per_thread: opts.per_thread,
    };
    running.child = Some(running.spawn()?);
    running.command("enable", ATTACH_TIMEOUT)?;
    running.started = Instant::now();
    running.perf_cpu_at_enable = running.child.and_then(process_cpu).unwrap_or(0.0);
    running.cpu_at_start = tree_cpu(pids);
    Ok(running)
}

impl Running {
    /// perf's pid while it runs.
    pub fn perf_pid(&self) -> Option<i32> {
        self.child
    }

    /// Where perf writes its samples (removed with this value).
    pub fn data_file(&self) -> PathBuf {
        self.dir.0.join("perf.data")
    }

    /// Ends sampling now and leaves perf to [`Running::stop`], which then
    /// only folds: a step's span ends when its threads join, and the folding
    /// (a CPU-heavy `perf script`) waits until the step's counters are read.
    pub fn end_sampling(&mut self) -> Result<()> {
        if self.ended.is_some() {
            return Ok(());
        }
        if self.alive() {
            self.command("disable", STOP_TIMEOUT)?;
            self.perf_cpu_at_disable = self.child.and_then(process_cpu);
        }
        self.ended = Some((self.started.elapsed().as_secs_f64(), tree_cpu(&self.pids)));
        Ok(())
    }

    /// Ends sampling (unless [`Running::end_sampling`] did), waits for perf
    /// to exit, and folds what it sampled.
    pub fn stop(mut self) -> Result<Profile> {
        self.end_sampling()?;
        let (duration_s, cpu_at_end) = self.ended.expect("sampling just ended");
        self.finish(libc::SIGINT)?;
        let folded = fold::fold(&self.perf, &self.data_file(), &self.dir.0, self.per_thread)?;
        let mut warnings = fold::warnings(&self.dir.0.join("record.err"));
        warnings.extend(folded.warnings);
        Ok(Profile {
            samples: folded.stacks.iter().map(|s| s.1).sum(),
            unresolved_frames_share: fold::unresolved_share(&folded.stacks),
            stacks: folded.stacks,
            event: self.event.clone(),
            frequency_hz: self.frequency_hz,
            pids: self.pids.clone(),
            call_graph: self.call_graph,
            executables: self.executables.clone(),
            duration_s,
            perf_cpu_s: self.perf_cpu_at_disable.unwrap_or(self.perf_total_cpu_s) - self.perf_cpu_at_enable,
            perf_total_cpu_s: self.perf_total_cpu_s,
            script_cpu_s: folded.cpu_s,
            profiled_cpu_s: cpu_at_end
                .zip(self.cpu_at_start)
                .map(|(end, start)| (end - start).max(0.0)),
            warnings,
        })
    }

    fn spawn(&self) -> Result<libc::pid_t> {
        let graph = match self.call_graph {
            CallGraph::None => None,
            g => Some(g.name()),
        };
        let pids = self.pids.iter().map(i32::to_string).collect::<Vec<_>>().join(",");
        let control = format!(
            "fifo:{},{}",
            self.dir.0.join("ctl").display(),
            self.dir.0.join("ack").display()
        );
        let mut cmd = Command::new(&self.perf);
        // -B and --no-bpf-event: no build-id pass and no BPF side-band
        // thread, which otherwise hold up perf's exit by 0.6 s; the data is
        // read at once on this host, so build ids are not needed.
        cmd.args(["record", "-B", "--no-bpf-event", "-D", "-1", "--control", &control])
            .args(["-e", &self.event, "-F", &self.frequency_hz.to_string()])
            .args(graph.iter().flat_map(|g| ["--call-graph", g.as_str()]))
            .args(["-p", &pids, "-o"])
            .arg(self.data_file())
            .stdin(Stdio::null())
            .stdout(Stdio::null())
            .stderr(create(&self.dir.0.join("record.err"))?);
        // SAFETY: getppid, setpgid and prctl are async-signal-safe and touch
        // only the child. Its own process group keeps a terminal's Ctrl-C
        // for ibench, which stops perf itself; the parent-death signal stops
        // perf if ibench dies without unwinding (SIGKILL).
        let parent = std::process::id() as libc::pid_t;
        unsafe {
            cmd.pre_exec(move || {
                if libc::setpgid(0, 0) != 0 || libc::prctl(libc::PR_SET_PDEATHSIG, libc::SIGTERM) != 0 {
                    return Err(std::io::Error::last_os_error());
                }
                if libc::getppid() != parent {
                    libc::_exit(1); // the parent died before the signal was armed
                }
                Ok(())
            });
        }
        let child = cmd.spawn().map_err(|e| io_error("cannot start", &self.perf, e))?;
        Ok(child.id() as libc::pid_t)
    }

    /// Sends a control command and waits for perf's `ack`.
    fn command(&mut self, what: &str, timeout: Duration) -> Result<()> {
        let failed = |e| io_error("cannot control", &self.perf, e);
        self.ctl.write_all(format!("{what}\n").as_bytes()).map_err(failed)?;
        let deadline = Instant::now() + timeout;
        let mut said = Vec::new();
        // perf writes "ack\n" with the string's NUL.
        while !said.windows(4).any(|w| w == b"ack\n") {
            if !self.alive() {
                if what == "disable" && self.status.is_some_and(ended_well) {
                    return Ok(()); // its processes all exited, and it with them
                }
                return Err(self.failure(&format!("perf record ended before it answered {what:?}")));
            }
            if Instant::now() > deadline {
                let _ = self.finish(libc::SIGKILL);
                return Err(self.failure(&format!("perf record did not answer {what:?} within {timeout:?}")));
            }
            if readable(&self.ack, Duration::from_millis(20)) {
                let mut buf = [0u8; 64];
                let n = self.ack.read(&mut buf).unwrap_or(0);
                said.extend_from_slice(&buf[..n]);
            }
        }
        Ok(())
    }

    /// perf has not exited (or exited and is not reaped yet, which `finish` does).
    fn alive(&mut self) -> bool {
        let Some(pid) = self.child else { return false };
        match reap(pid, false) {
            Some((status, cpu)) => {
                self.perf_total_cpu_s = cpu;
                self.child = None;
                self.status = Some(status);
                false
            }
            None => true,
        }
    }

    /// Signals perf to end (when it runs), waits for it, keeps its CPU time;
    /// kills it when it does not end in time. Errors when it failed.
    fn finish(&mut self, signal: libc::c_int) -> Result<()> {
        if let Some(pid) = self.child.take() {
            // SAFETY: kill on our own child, not yet reaped, so its pid is not reused.
            unsafe { libc::kill(pid, signal) };
            let deadline = Instant::now() + STOP_TIMEOUT;
            let (status, cpu) = loop {
                if let Some(done) = reap(pid, false) {
                    break done;
                }
                if Instant::now() > deadline {
                    // SAFETY: as above.
                    unsafe { libc::kill(pid, libc::SIGKILL) };
                    break reap(pid, true).unwrap_or((0, 0.0));
                }
                std::thread::sleep(Duration::from_millis(5));
            };
            self.perf_total_cpu_s = cpu;
            self.status = Some(status);
        }
        match self.status {
            Some(s) if ended_well(s) => Ok(()),
            Some(s) => Err(self.failure(&format!("perf record ended with {}", describe(s)))),
            None => Ok(()),
        }
    }

    fn failure(&self, what: &str) -> Error {
        // perf's informational lines come first ("Events disabled"): its
        // last lines say what went wrong.
        let said = fold::warnings(&self.dir.0.join("record.err"));
        let last: Vec<&str> = said.iter().rev().take(3).rev().map(String::as_str).collect();
        let status = self.status.map(|s| format!(" ({})", describe(s))).unwrap_or_default();
        let detail = if last.is_empty() {
            String::new()
        } else {
            format!(": {}", last.join(" / "))
        };
        let what = format!("{what}{status}");
        io_error(
            "profiling failed with",
            &self.perf,
            std::io::Error::other(format!("{what}{detail}")),
        )
    }
}

impl Drop for Running {
    fn drop(&mut self) {
        let _ = self.finish(libc::SIGINT); // then the temporary directory goes
    }
}

impl std::fmt::Debug for Running {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("Running")
            .field("perf_pid", &self.child)
            .field("pids", &self.pids)
            .field("event", &self.event)
            .field("call_graph", &self.call_graph)
            .finish()
    }
}

/// perf ended by itself (its processes all exited) or on our signal.
fn ended_well(status: libc::c_int) -> bool {
    let signaled = libc::WIFSIGNALED(status) && matches!(libc::WTERMSIG(status), libc::SIGINT | libc::SIGTERM);
    signaled || (libc::WIFEXITED(status) && libc::WEXITSTATUS(status) == 0)
}

fn describe(status: libc::c_int) -> String {
    if libc::WIFSIGNALED(status) {
        format!("signal {}", libc::WTERMSIG(status))
    } else {
        format!("exit code {}", libc::WEXITSTATUS(status))
    }
}

/// Reaps child `pid` (waiting for it when `block`): its wait status and the
/// CPU seconds it used; None while it runs.
pub(super) fn reap(pid: libc::pid_t, block: bool) -> Option<(libc::c_int, f64)> {
    let (mut status, flags) = (0, if block { 0 } else { libc::WNOHANG });
    // SAFETY: rusage is plain data, all zeros a valid value; wait4 fills it
    // and the status for our own child `pid`.
    let (got, usage) = unsafe {
        let mut usage: libc::rusage = std::mem::zeroed();
        (libc::wait4(pid, &mut status, flags, &mut usage), usage)
    };
    let secs = |t: libc::timeval| t.tv_sec as f64 + t.tv_usec as f64 / 1e6;
    (got == pid).then(|| (status, secs(usage.ru_utime) + secs(usage.ru_stime)))
}

/// Whether `file` has bytes to read within `wait`.
fn readable(file: &File, wait: Duration) -> bool {
    use std::os::fd::AsRawFd;
    let mut fd = libc::pollfd {
        fd: file.as_raw_fd(),
        events: libc::POLLIN,
        revents: 0,
    };
    // SAFETY: one valid pollfd, for a descriptor this function borrows.
    unsafe { libc::poll(&mut fd, 1, wait.as_millis() as libc::c_int) > 0 }
}

fn make_fifo(path: &Path) -> Result<()> {
    use std::os::unix::ffi::OsStrExt;
    let c = std::ffi::CString::new(path.as_os_str().as_bytes()).expect("a temporary path has no NUL");
    // SAFETY: a NUL-terminated path that lives across the call.
    if unsafe { libc::mkfifo(c.as_ptr(), 0o600) } != 0 {
        return Err(io_error("cannot create", path, std::io::Error::last_os_error()));
    }
    Ok(())
}

/// Opened read-write: on a FIFO that never blocks, whether or not perf has
/// opened its end yet (perf opens both the same way).
fn open_fifo(path: &Path) -> Result<File> {
    std::fs::OpenOptions::new()
        .read(true)
        .write(true)
        .custom_flags(libc::O_NONBLOCK)
        .open(path)
        .map_err(|e| io_error("cannot open", path, e))
}

pub(super) fn create(path: &Path) -> Result<File> {
    File::create(path).map_err(|e| io_error("cannot create", path, e))
}

pub(super) fn io_error(action: &'static str, path: &Path, source: std::io::Error) -> Error {
    Error::Io {
        action,
        path: path.to_path_buf(),
        source,
    }
}

/// The executables of `pids` (once each), with their frame-pointer evidence.
fn executables(pids: &[i32]) -> Vec<Executable> {
    let mut out: Vec<Executable> = Vec::new();
    for &pid in pids {
        let Ok(path) = std::fs::read_link(format!("/proc/{pid}/exe")) else {
            continue;
        };
        if out.iter().any(|e| e.path == path) {
            continue;
        }
        // Read through /proc: the file as the process maps it, even when
        // replaced on disk since (an upgrade under a running server).
        let frame_pointers = super::frame_pointer_share(Path::new(&format!("/proc/{pid}/exe")));
        out.push(Executable { path, frame_pointers });
    }
    out
}

/// CPU seconds process `pid` has used, summed over its threads from
/// `schedstat` (nanoseconds: perf uses a few of /proc/stat's 10 ms ticks in
/// a minute).
fn process_cpu(pid: libc::pid_t) -> Option<f64> {
    let tasks = std::fs::read_dir(format!("/proc/{pid}/task")).ok()?;
    let ns: u64 = tasks
        .flatten()
        .filter_map(|t| std::fs::read_to_string(t.path().join("schedstat")).ok())
        .filter_map(|s| s.split_whitespace().next()?.parse::<u64>().ok())
        .sum();
    Some(ns as f64 / 1e9)
}

/// CPU seconds of `pids` and all their descendants, with the reaped
/// children's time each holds.
fn tree_cpu(pids: &[i32]) -> Option<f64> {
    let all: Vec<procfs::process::Stat> = procfs::process::all_processes()
        .ok()?
        .flatten()
        .filter_map(|p| p.stat().ok())
        .collect();
    let mut inside: std::collections::HashSet<i32> = pids.iter().copied().collect();
    // Parents come before children in /proc's order only mostly: repeat
    // until no process joins.
    loop {
        let joining: Vec<i32> = all
            .iter()
            .filter(|s| inside.contains(&s.ppid) && !inside.contains(&s.pid))
            .map(|s| s.pid)
            .collect();
        if joining.is_empty() {
            break;
        }
        inside.extend(joining);
    }
    let ticks: u64 = all
        .iter()
        .filter(|s| inside.contains(&s.pid))
        .map(|s| s.utime + s.stime + s.cutime.max(0) as u64 + s.cstime.max(0) as u64)
        .sum();
    Some(ticks as f64 / procfs::ticks_per_second() as f64)
}

/// A private directory for perf's data and messages, removed when dropped.
struct TempDir(PathBuf);

impl TempDir {
    const PREFIX: &'static str = "ibench-perf-";

    fn new() -> Result<TempDir> {
        use std::sync::atomic::{AtomicU32, Ordering};
        static NEXT: AtomicU32 = AtomicU32::new(0);
        let root = std::env::temp_dir();
        remove_stale(&root);
        let me = std::process::id();
        let path = root.join(format!("{}{me}-{}", Self::PREFIX, NEXT.fetch_add(1, Ordering::Relaxed)));
        std::fs::DirBuilder::new()
            .mode(0o700)
            .create(&path)
            .map_err(|e| io_error("cannot create", &path, e))?;
        Ok(TempDir(path))
    }
}

impl Drop for TempDir {
    fn drop(&mut self) {
        let _ = std::fs::remove_dir_all(&self.0);
    }
}

/// Removes the directories of ibench processes that are gone (killed before
/// they could remove their own).
fn remove_stale(root: &Path) {
    let Ok(entries) = std::fs::read_dir(root) else { return };
    for entry in entries.flatten() {
        let name = entry.file_name();
        let Some(rest) = name.to_str().and_then(|n| n.strip_prefix(TempDir::PREFIX)) else {
            continue;
        };
        let owner = rest.split('-').next().and_then(|p| p.parse::<u32>().ok());
        if owner.is_some_and(|pid| !Path::new(&format!("/proc/{pid}")).exists()) {
            let _ = std::fs::remove_dir_all(entry.path());
        }
    }
}
