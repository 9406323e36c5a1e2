//! Progress for long work, on a terminal or in a log: a bar per step with
//! its ETA on a terminal; elsewhere (a `nohup` log, CI) a line when a step
//! starts, one every `--progress-seconds` while it runs, and its summary
//! when it ends; per campaign, a line as each run starts: runs done of the
//! total and an ETA from the durations so far.

use super::summary;
use crate::campaign::{CampaignObserver, CampaignProgress};
use crate::exec::{Expected, Observer};
use crate::results::{RunRow, StepRow};
use indicatif::{ProgressBar, ProgressStyle};
use std::io::IsTerminal;
use std::path::Path;
use std::sync::Mutex;
use std::time::{Duration, Instant};

/// What is known of the running step between progress reports.
struct Running {
    step: String,
    expected: Expected,
    /// A bar, on a terminal.
    bar: Option<ProgressBar>,
    /// When the last line was printed (not on a terminal).
    printed: Instant,
}

/// Progress on stderr (the CLI's observer).
pub(super) struct Progress {
    running: Mutex<Option<Running>>,
    terminal: bool,
    quiet: bool,
    /// Between two progress lines when stderr is not a terminal.
    every: Duration,
}

impl Progress {
    /// Bars on a terminal, a line every `every` elsewhere; only warnings when `quiet`.
    pub(super) fn new(quiet: bool, every: Duration) -> Self {
        Progress {
            running: Mutex::new(None),
            terminal: std::io::stderr().is_terminal(),
            quiet,
            every,
        }
    }

    fn running(&self) -> std::sync::MutexGuard<'_, Option<Running>> {
        self.running.lock().unwrap_or_else(|p| p.into_inner())
    }
}

/// A bar for a step expected to do `expected`: of its rows, of its
/// seconds, or a spinner when neither is known.
fn bar(step: &str, expected: &Expected) -> ProgressBar {
    let style = |template: &str| ProgressStyle::with_template(template).expect("a valid template");
    let bar = match (expected.rows, expected.seconds) {
        (Some(n), _) => {
            ProgressBar::new(n).with_style(style("{prefix:>7} {bar:30} {pos}/{len} rows {per_sec} eta {eta}"))
        }
        (None, Some(s)) => ProgressBar::new((s * 10.0).round() as u64)
            .with_style(style("{prefix:>7} {bar:30} {elapsed}/{duration} eta {eta}")),
        (None, None) => ProgressBar::new_spinner().with_style(style("{prefix:>7} {spinner} {elapsed}")),
    };
    bar.set_prefix(step.to_string());
    bar.enable_steady_tick(Duration::from_millis(200));
    bar
}

/// `d` as `1h02m03s`, `4m05s` or `6s`.
pub(super) fn clock(d: Duration) -> String {
    let s = d.as_secs();
    match (s / 3600, s / 60 % 60, s % 60) {
        (0, 0, s) => format!("{s}s"),
        (0, m, s) => format!("{m}m{s:02}s"),
        (h, m, s) => format!("{h}h{m:02}m{s:02}s"),
    }
}

/// A progress line: what is done of what is expected, the rate, the ETA.
fn line(r: &Running, rows: u64, elapsed: Duration) -> String {
    let secs = elapsed.as_secs_f64();
    let (done, eta) = match (r.expected.rows, r.expected.seconds) {
        (Some(n), _) => {
            let rate = rows as f64 / secs.max(1e-9);
            let eta = (rows > 0).then(|| (n.saturating_sub(rows)) as f64 / rate);
            (
                format!(
                    "{rows}/{n} rows ({:.0}%), {rate:.0}/s",
                    100.0 * rows as f64 / n.max(1) as f64
                ),
                eta,
            )
        }
        (None, Some(total)) => (
            format!("{}/{}", clock(elapsed), clock(Duration::from_secs_f64(total))),
            Some(total - secs),
        ),
        (None, None) => (format!("{rows} done, {}", clock(elapsed)), None),
    };
    let eta = eta.map_or_else(String::new, |e| {
        format!(", eta {}", clock(Duration::from_secs_f64(e.max(0.0))))
    });
    format!("{}: {done}{eta}", r.step)
}

impl Observer for Progress {
    fn run_started(&self, run: &RunRow, dir: &Path) {
        if !self.quiet {
            eprintln!("{}", summary::start_line(run, dir));
        }
        // Warnings are shown even with --quiet: they say the figures may mislead.
        for w in &run.warnings {
            eprintln!("warning: {w}");
        }
    }

    fn step_started(&self, step: &str, expected: Expected) {
        if self.quiet {
            return;
        }
        if !self.terminal {
            eprintln!("{step}: started");
        }
        *self.running() = Some(Running {
            step: step.to_string(),
            bar: self.terminal.then(|| bar(step, &expected)),
            expected,
            printed: Instant::now(),
        });
    }

    fn warning(&self, message: &str) {
        eprintln!("warning: {message}");
    }

    fn step_progress(&self, _step: &str, rows: u64, elapsed: Duration) {
        let mut running = self.running();
        let Some(r) = running.as_mut() else { return };
        match &r.bar {
            Some(bar) if r.expected.rows.is_some() => bar.set_position(rows),
            Some(bar) => bar.set_position((elapsed.as_secs_f64() * 10.0) as u64),
            None if r.printed.elapsed() >= self.every => {
                eprintln!("{}", line(r, rows, elapsed));
                r.printed = Instant::now();
            }
            None => {}
        }
    }

    fn step_finished(&self, row: &StepRow) {
        if let Some(bar) = self.running().take().and_then(|r| r.bar) {
            bar.finish_and_clear();
        }
        if !self.quiet {
            eprintln!("{}", summary::step_line(row));
        }
    }
}

impl CampaignObserver for Progress {
    fn run_starting(&self, p: &CampaignProgress) {
        if self.quiet {
            return;
        }
        let eta = p.eta().map_or_else(String::new, |e| format!(", eta {}", clock(e)));
        eprintln!(
            "campaign: run {} of {} ({} #{}), {} done in {}{eta}",
            p.done + 1,
            p.total,
            p.label,
            p.repeat,
            p.done,
            clock(p.elapsed)
        );
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn progress_lines_say_what_is_done_and_when_it_will_end() {
        let r = |rows, seconds| Running {
            step: "l.i1".into(),
            expected: Expected { rows, seconds },
            bar: None,
            printed: Instant::now(),
        };
        assert_eq!(
            line(&r(Some(20_000), None), 5_000, Duration::from_secs(10)),
            "l.i1: 5000/20000 rows (25%), 500/s, eta 30s"
        );
        assert_eq!(
            line(&r(None, Some(1800.0)), 0, Duration::from_secs(600)),
            "l.i1: 10m00s/30m00s, eta 20m00s"
        );
        assert_eq!(
            line(&r(None, None), 7, Duration::from_secs(3725)),
            "l.i1: 7 done, 1h02m05s"
        );
        assert_eq!(clock(Duration::from_secs(59)), "59s");
    }
}
