//! A running step's results on disk as it goes. At every tick the monitor
//! takes what the step's threads handed over (so their outboxes hold a
//! tenth of a second, not `flush_seconds`), and at the step's start and
//! every `flush_seconds` after it writes what they measured since the last
//! write (so a step killed in its first seconds, a pause in its maintenance
//! say, still has its row, `killed`):
//! the intervals they closed (each thread's rows, and the all-clients rows
//! and histograms of the intervals every thread has closed), the host's
//! intervals, and a provisional row of the step (its counts and percentiles
//! so far, status `running`). Each write is small Parquet files of their own
//! under `.partial/<step>/`, written whole and then renamed, so a crash (a
//! SIGKILL, an OOM kill, a power loss) never leaves half a file and loses at
//! most what came after the last write. When the step ends, its results join
//! the run's files and the folder goes (`ibench.load` reads a killed run's
//! partial files: docs/results.md).

use super::step::{Counts, StepOutcome};
use crate::metrics::{HostInterval, IntervalRow, Latencies, Op, Outbox, SharedSeries};
use crate::results::{HistogramRow, RunResults, StepRow, StepStatus};
use crate::workload::{Config, Step};
use std::collections::BTreeMap;
use std::path::{Path, PathBuf};
use std::sync::Arc;
use std::time::{Duration, Instant};

/// The folder of a run's partial files.
pub(crate) const PARTIAL: &str = ".partial";

/// The folder of step `step`'s partial files in run directory `run_dir`.
pub(crate) fn step_dir(run_dir: &Path, step: &str) -> PathBuf {
    run_dir.join(PARTIAL).join(step)
}

/// Where and how often a step's results are written while it runs.
#[derive(Clone, Debug)]
pub(crate) struct FlushPlan {
    pub run_dir: PathBuf,
    pub run_id: String,
    pub every: Duration,
}

/// What the flusher knows of the step between writes.
pub(super) struct Flusher {
    plan: FlushPlan,
    dir: PathBuf,
    config: Config,
    step: Step,
    /// The clients this process runs.
    clients: u32,
    /// Each thread's outbox and the operation it times.
    outboxes: Vec<(Op, Arc<Outbox>)>,
    /// Each operation's all-clients series, and how many of its compacted
    /// intervals were taken.
    series: Vec<(Op, SharedSeries, usize)>,
    /// Every closed interval's times so far, per operation.
    latencies: BTreeMap<Op, Latencies>,
    /// Rows and histograms drained since the last write.
    rows: Vec<IntervalRow>,
    histograms: Vec<HistogramRow>,
    /// Host intervals already written.
    host_written: usize,
    next_at: Instant,
    seq: u32,
    /// A write failed: the step goes on, the flusher stops.
    failed: bool,
}

/// What the monitor hands the flusher at each write.
pub(super) struct Progress<'a> {
    pub t0: Instant,
    pub started_at_us: i64,
    pub counts: Counts,
    pub host: &'a [HostInterval],
}

impl Flusher {
    /// A flusher of `step` (of `config`, run by `clients` clients here),
    /// whose threads hand over to `outboxes` and whose operations'
    /// all-clients intervals are compacted in `series`.
    pub(super) fn new(
        plan: FlushPlan,
        config: &Config,
        step: Step,
        clients: u32,
        outboxes: Vec<(Op, Arc<Outbox>)>,
        series: &[(Op, SharedSeries)],
        t0: Instant,
    ) -> Flusher {
        Flusher {
            dir: step_dir(&plan.run_dir, &step.to_string()),
            // The first write at once: the step has a row from its start.
            next_at: t0,
            plan,
            config: config.clone(),
            step,
            clients,
            outboxes,
            series: series.iter().map(|(op, s)| (*op, s.clone(), 0)).collect(),
            latencies: BTreeMap::new(),
            rows: Vec::new(),
            histograms: Vec::new(),
            host_written: 0,
            seq: 0,
            failed: false,
        }
    }

    /// How long until the next write is due.
    pub(super) fn due_in(&self, now: Instant) -> Duration {
        self.next_at.saturating_duration_since(now)
    }

    /// Takes what the threads handed over (at every tick, so their outboxes
    /// stay small) and writes what came since the last write when a write is
    /// due; a failure is returned once (the caller notes it), then the
    /// flusher only empties the outboxes.
    pub(super) fn tick(&mut self, now: Instant, progress: &Progress<'_>) -> Option<String> {
        self.drain();
        if self.failed {
            (self.rows, self.histograms) = (Vec::new(), Vec::new());
            return None;
        }
        if now < self.next_at {
            return None;
        }
        self.next_at = now + self.plan.every;
        match self.write(now, progress) {
            Ok(()) => None,
            Err(e) => {
                self.failed = true;
                Some(format!(
                    "its results could not be written while it ran ({e}); they are written when it ends"
                ))
            }
        }
    }

    /// One write: the new intervals, their all-clients merge, the host's
    /// new intervals, and the provisional step row.
    fn write(&mut self, now: Instant, progress: &Progress<'_>) -> crate::Result<()> {
        let (rows, histograms) = (std::mem::take(&mut self.rows), std::mem::take(&mut self.histograms));
        let host: Vec<(String, HostInterval)> = progress.host[self.host_written..]
            .iter()
            .map(|h| (self.step.to_string(), h.clone()))
            .collect();
        let run = crate::results::RunRow {
            run_id: self.plan.run_id.clone(),
            ..Default::default()
        };
        // What came since the last write, in files of their own.
        let new = RunResults {
            run: run.clone(),
            intervals: rows.into_iter().map(|r| (self.step.to_string(), r)).collect(),
            host_intervals: host,
            histograms,
            ..RunResults::default()
        };
        // The step so far, replacing the last write's.
        let (step_row, whole) = self.provisional(now, progress);
        let so_far = RunResults {
            run,
            steps: vec![step_row],
            histograms: whole,
            ..RunResults::default()
        };
        std::fs::create_dir_all(&self.dir).map_err(|source| crate::Error::Io {
            action: "cannot create",
            path: self.dir.clone(),
            source,
        })?;
        new.write_table(&self.dir, "intervals", &format!("intervals-{:06}", self.seq))?;
        new.write_table(&self.dir, "histograms", &format!("histograms-{:06}", self.seq))?;
        so_far.write_table(&self.dir, "histograms", "histograms-step")?;
        so_far.write_table(&self.dir, "steps", "steps")?;
        self.seq += 1;
        self.host_written = progress.host.len();
        Ok(())
    }

    /// Takes the intervals the threads handed over (their rows, their
    /// times into the step's so far) and the all-clients rows and histograms
    /// of the intervals compacted since the last call.
    fn drain(&mut self) {
        for (op, outbox) in &self.outboxes {
            let closed = std::mem::take(&mut *outbox.lock().unwrap_or_else(|p| p.into_inner()));
            for c in closed {
                self.latencies.entry(*op).or_default().add_sparse(&c);
                self.rows.push(c.row);
            }
        }
        let interval = Duration::from_secs_f64(self.config.interval_seconds);
        for (op, series, taken) in &mut self.series {
            let series = series.lock().unwrap_or_else(|p| p.into_inner());
            for (row, h) in series.compacted_since(*op, interval, *taken) {
                self.histograms.push(HistogramRow {
                    run_id: self.plan.run_id.clone(),
                    step: self.step.to_string(),
                    op: *op,
                    time: "response",
                    count: row.count,
                    histogram: h,
                    t_s: Some(row.t_s),
                });
                self.rows.push(row);
            }
            *taken = series.compacted();
        }
    }

    /// The step as it stands: its row (its counts, rates and percentiles so
    /// far, status `running`: a reader that finds no live run says
    /// `killed`) and its whole-step histograms so far.
    fn provisional(&self, now: Instant, progress: &Progress<'_>) -> (StepRow, Vec<HistogramRow>) {
        let out = StepOutcome {
            status: StepStatus::Running,
            started_at_us: progress.started_at_us,
            elapsed_s: now.saturating_duration_since(progress.t0).as_secs_f64(),
            counts: progress.counts,
            latencies: self.latencies.iter().map(|(op, l)| (*op, l.clone())).collect(),
            ..StepOutcome::default()
        };
        let row = super::record::step_row(&self.plan.run_id, &self.config, self.step, self.clients, &out, None);
        (
            row,
            super::record::histograms(&self.plan.run_id, &self.step.to_string(), &out),
        )
    }
}
