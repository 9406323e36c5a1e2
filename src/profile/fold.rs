//! From perf's data file to folded stacks: `perf script` symbolizes, and
//! inferno's perf collapser folds what it prints.

use super::record::{create, io_error, reap};
use crate::{Error, Result};
use inferno::collapse::perf::{Folder, Options};
use inferno::collapse::Collapse;
use std::io::BufReader;
use std::path::Path;
use std::process::{Command, Stdio};

/// What folding found.
pub(super) struct Folded {
    /// Folded stacks and their samples, most samples first.
    pub stacks: Vec<(String, u64)>,
    /// CPU seconds of `perf script` and of the folding.
    pub cpu_s: f64,
    /// What `perf script` warned about.
    pub warnings: Vec<String>,
}

/// Symbolizes and folds the samples in `data`; `dir` takes perf's messages.
/// `per_thread`: each stack's first frame names its thread (`comm-pid/tid`).
pub(super) fn fold(perf: &Path, data: &Path, dir: &Path, per_thread: bool) -> Result<Folded> {
    let err_path = dir.join("script.err");
    // The fields inferno's collapser reads, without the period: each sample
    // then counts once, whatever its event's period.
    let mut child = Command::new(perf)
        .args(["script", "-F", "comm,pid,tid,time,event,ip,sym,dso", "-i"])
        .arg(data)
        .stdin(Stdio::null())
        .stdout(Stdio::piped())
        .stderr(create(&err_path)?)
        .spawn()
        .map_err(|e| io_error("cannot start", perf, e))?;
    let thread_cpu = thread_cpu_s();
    let mut options = Options::default();
    options.nthreads = 1; // one core of two: the other may still run the benchmark
    options.include_tid = per_thread;
    let mut out = Vec::new();
    let stdout = child.stdout.take().expect("stdout is piped");
    let collapsed = Folder::from(options).collapse(BufReader::new(stdout), &mut out);
    let folding_cpu = thread_cpu_s() - thread_cpu;
    let (status, script_cpu) = reap(child.id() as libc::pid_t, true).unwrap_or((0, 0.0));
    let warnings = warnings(&err_path);
    if !libc::WIFEXITED(status) || libc::WEXITSTATUS(status) != 0 {
        let said = warnings.first().cloned().unwrap_or_default();
        let failed = std::io::Error::other(format!("perf script failed: {said}"));
        return Err(io_error("profiling failed with", perf, failed));
    }
    collapsed.map_err(|e| io_error("cannot fold the stacks of", data, e))?;
    let text = String::from_utf8(out).map_err(|e| Error::Format {
        context: "folded stacks".into(),
        message: e.to_string(),
    })?;
    Ok(Folded {
        stacks: parse(&text),
        cpu_s: script_cpu + folding_cpu,
        warnings,
    })
}

/// Folded text (`stack samples` lines) as (stack, samples), most samples
/// first, then by stack; lines without a count are skipped.
pub(super) fn parse(text: &str) -> Vec<(String, u64)> {
    let mut stacks: Vec<(String, u64)> = text
        .lines()
        .filter_map(|l| {
            let (stack, n) = l.trim_end().rsplit_once(' ')?;
            Some((stack.to_string(), n.parse().ok()?))
        })
        .collect();
    stacks.sort_by(|a, b| b.1.cmp(&a.1).then_with(|| a.0.cmp(&b.0)));
    stacks
}

/// The folded format: one `stack samples` line per stack.
pub(super) fn to_text(stacks: &[(String, u64)]) -> String {
    stacks.iter().map(|(s, n)| format!("{s} {n}\n")).collect()
}

/// Of all frames in all samples, the share perf could not name: inferno
/// writes those as `[unknown]`, or as the executable's name in brackets
/// (`[postgres]`, `[libc.so.6]`). The first frame, the process's name, is not
/// counted.
pub fn unresolved_share(stacks: &[(String, u64)]) -> f64 {
    let (mut all, mut unresolved) = (0u64, 0u64);
    for (stack, n) in stacks {
        for frame in stack.split(';').skip(1) {
            all += n;
            if frame.starts_with('[') && frame.ends_with(']') {
                unresolved += n;
            }
        }
    }
    if all == 0 {
        0.0
    } else {
        unresolved as f64 / all as f64
    }
}

/// What perf wrote to the message file at `path`, less its progress
/// reports (`[ perf record: Captured and wrote ... ]`) and its answers to
/// the control FIFO (`Events enabled`): perf's `-q` would drop those, and
/// its error messages with them.
pub(super) fn warnings(path: &Path) -> Vec<String> {
    std::fs::read_to_string(path)
        .unwrap_or_default()
        .lines()
        .map(str::trim)
        .filter(|l| !l.is_empty() && !l.starts_with("[ perf record:"))
        .filter(|l| !matches!(*l, "Events enabled" | "Events disabled"))
        .map(str::to_string)
        .collect()
}

fn thread_cpu_s() -> f64 {
    let mut ts = libc::timespec { tv_sec: 0, tv_nsec: 0 };
    // SAFETY: clock_gettime fills the timespec it is given.
    unsafe { libc::clock_gettime(libc::CLOCK_THREAD_CPUTIME_ID, &mut ts) };
    ts.tv_sec as f64 + ts.tv_nsec as f64 / 1e9
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn folded_lines_are_read_most_samples_first() {
        let text = "postgres;main;PostgresMain 3\npostgres;main;[postgres] 5\nbad line\n";
        assert_eq!(
            parse(text),
            [
                ("postgres;main;[postgres]".to_string(), 5),
                ("postgres;main;PostgresMain".to_string(), 3),
            ]
        );
        assert_eq!(
            to_text(&parse(text)),
            "postgres;main;[postgres] 5\npostgres;main;PostgresMain 3\n"
        );
    }

    #[test]
    fn unresolved_frames_are_counted_per_sample() {
        let stacks = [
            ("postgres;main;[postgres];[unknown]".to_string(), 1),
            ("postgres;main;ExecScan;heap_getnext".to_string(), 2),
        ];
        // 2 of 3 frames once, 0 of 3 twice: 2 of 9.
        assert!((unresolved_share(&stacks) - 2.0 / 9.0).abs() < 1e-12);
        assert_eq!(unresolved_share(&[]), 0.0);
    }
}
