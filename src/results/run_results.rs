//! Everything a run has produced so far, and writing it as the run
//! directory's Parquet files (docs/results.md).

use super::columns::{batch, col, Column};
use super::disks::{self, DiskLine};
use super::histograms::{self, HistogramRow};
use super::intervals::{self, IntervalLine, Line};
use super::profiles::{self, ProfileLine, ProfileRow, StackLine};
use super::runs::{self, RunRow};
use super::server::{self, Line as ServerLine};
use super::steps::{self, StepRow};
use super::threads::{self, ThreadLine};
use super::ParquetFile;
use crate::error::{Error, Result};
use crate::metrics::{CounterRow, GaugeRow, HostInterval, IntervalRow, Setting, ThreadRow, WaitRow};
use arrow::array::RecordBatch;
use std::path::Path;

/// Everything a run has produced so far.
#[derive(Clone, Debug, Default)]
pub struct RunResults {
    /// The run.
    pub run: RunRow,
    /// Finished steps.
    pub steps: Vec<StepRow>,
    /// Per-interval series: (step, row).
    pub intervals: Vec<(String, IntervalRow)>,
    /// Per-interval host and process counters: (step, interval).
    pub host_intervals: Vec<(String, HostInterval)>,
    /// Histograms.
    pub histograms: Vec<HistogramRow>,
    /// Host facts and the server's configuration.
    pub config: Vec<Setting>,
    /// The database's own counters over each step.
    pub counters: Vec<CounterRow>,
    /// Its gauges per interval: (step, row).
    pub gauges: Vec<(String, GaugeRow)>,
    /// What its sessions waited on in each step (`profile`).
    pub waits: Vec<WaitRow>,
    /// Each step's CPU profiles (`profile = "perf"`).
    pub profiles: Vec<ProfileRow>,
    /// Each step's CPU by thread role: (step, row).
    pub threads: Vec<(String, ThreadRow)>,
}

/// A setting of a run, with its run id.
struct ConfigLine<'a>(&'a str, &'a Setting);

fn config_columns<'a>() -> Vec<Column<ConfigLine<'a>>> {
    type C<'b> = ConfigLine<'b>;
    vec![
        col!("run_id", str, |c: &C| c.0),
        col!("scope", str, |c: &C| c.1.scope),
        col!("name", str, |c: &C| c.1.name.as_str()),
        col!("value", str, |c: &C| c.1.value.as_str()),
        col!("source", str, |c: &C| c.1.source.as_str()),
    ]
}

impl RunResults {
    /// The `runs` table (one row).
    pub fn runs_batch(&self) -> Result<RecordBatch> {
        batch(&runs::columns(), std::iter::once(&self.run))
    }

    /// The `steps` table.
    pub fn steps_batch(&self) -> Result<RecordBatch> {
        batch(&steps::columns(), self.steps.iter())
    }

    /// The `intervals` table: operation rows, then host rows (op "host",
    /// client null) with the host and process counters of each interval.
    pub fn intervals_batch(&self) -> Result<RecordBatch> {
        let run_id = self.run.run_id.as_str();
        let lines: Vec<IntervalLine<'_>> = self
            .intervals
            .iter()
            .map(|(step, r)| IntervalLine {
                run_id,
                step,
                what: Line::Op(r),
            })
            .chain(self.host_intervals.iter().map(|(step, h)| IntervalLine {
                run_id,
                step,
                what: Line::Host(h),
            }))
            .collect();
        batch(&intervals::columns(), lines.iter())
    }

    /// The `config` table: host facts and server settings.
    pub fn config_batch(&self) -> Result<RecordBatch> {
        let lines: Vec<ConfigLine<'_>> = self.config.iter().map(|s| ConfigLine(&self.run.run_id, s)).collect();
        batch(&config_columns(), lines.iter())
    }

    /// The `histograms` table.
    pub fn histograms_batch(&self) -> Result<RecordBatch> {
        batch(&histograms::columns(), self.histograms.iter())
    }

    /// The `counters` table: the database's own counters over each step.
    pub fn counters_batch(&self) -> Result<RecordBatch> {
        let lines: Vec<_> = self.counters.iter().map(|c| ServerLine(&self.run.run_id, c)).collect();
        batch(&server::counter_columns(), lines.iter())
    }

    /// The `gauges` table: the database's gauges per interval.
    pub fn gauges_batch(&self) -> Result<RecordBatch> {
        let lines: Vec<_> = self.gauges.iter().map(|g| ServerLine(&self.run.run_id, g)).collect();
        batch(&server::gauge_columns(), lines.iter())
    }

    /// The `waits` table: each step's wait events, with the step's operations.
    pub fn waits_batch(&self) -> Result<RecordBatch> {
        let ops = |step: &str| self.steps.iter().find(|s| s.step == step).and_then(|s| s.cost_ops);
        let lines: Vec<_> = self
            .waits
            .iter()
            .map(|row| server::WaitLine {
                run_id: &self.run.run_id,
                row,
                ops: ops(&row.step),
            })
            .collect();
        batch(&server::wait_columns(), lines.iter())
    }

    /// The `threads` table: each step's CPU by thread role, with the step's operations.
    pub fn threads_batch(&self) -> Result<RecordBatch> {
        let ops = |step: &str| self.steps.iter().find(|s| s.step == step).and_then(|s| s.cost_ops);
        let lines: Vec<_> = self
            .threads
            .iter()
            .map(|(step, row)| ThreadLine {
                run_id: &self.run.run_id,
                step,
                row,
                ops: ops(step),
            })
            .collect();
        batch(&threads::columns(), lines.iter())
    }

    /// The profiles, each with the run id and its step's operations.
    fn profile_lines(&self) -> Vec<ProfileLine<'_>> {
        let ops = |step: &str| self.steps.iter().find(|s| s.step == step).and_then(|s| s.cost_ops);
        self.profiles
            .iter()
            .map(|row| ProfileLine {
                run_id: &self.run.run_id,
                row,
                ops: ops(&row.step),
            })
            .collect()
    }

    /// The `profiles` table: each profile's folded stacks, a row per stack.
    pub fn profiles_batch(&self) -> Result<RecordBatch> {
        let of_profiles = self.profile_lines();
        let lines: Vec<StackLine<'_>> = of_profiles
            .iter()
            .flat_map(|of| of.row.stacks.iter().map(move |stack| StackLine { of, stack }))
            .collect();
        let stacks = batch(&profiles::stack_columns(), lines.iter());
        stacks
    }

    /// The `profiled` table: what each profile sampled, and what it cost.
    pub fn profiled_batch(&self) -> Result<RecordBatch> {
        batch(&profiles::profiled_columns(), self.profile_lines().iter())
    }

    /// The `disks` table: each counted disk per interval, then over each
    /// whole step (`t_s` null).
    pub fn disks_batch(&self) -> Result<RecordBatch> {
        let run_id = self.run.run_id.as_str();
        let per_interval = self.host_intervals.iter().flat_map(|(step, h)| {
            h.delta.devices.iter().map(move |disk| DiskLine {
                run_id,
                step,
                t_s: Some(h.t_s),
                disk,
            })
        });
        let per_step = self.steps.iter().flat_map(|s| {
            s.system.devices.iter().map(move |disk| DiskLine {
                run_id,
                step: &s.step,
                t_s: None,
                disk,
            })
        });
        let lines: Vec<DiskLine<'_>> = per_interval.chain(per_step).collect();
        batch(&disks::columns(), lines.iter())
    }

    /// Writes the Parquet files into `dir`, each replaced atomically, so a
    /// reader (or a crash) never sees a half-written file.
    pub fn write(&self, dir: &Path) -> Result<()> {
        for (name, batch) in [
            ("runs", self.runs_batch()?),
            ("steps", self.steps_batch()?),
            ("intervals", self.intervals_batch()?),
            ("histograms", self.histograms_batch()?),
            ("config", self.config_batch()?),
            ("counters", self.counters_batch()?),
            ("gauges", self.gauges_batch()?),
            ("disks", self.disks_batch()?),
            ("waits", self.waits_batch()?),
            ("profiles", self.profiles_batch()?),
            ("profiled", self.profiled_batch()?),
            ("threads", self.threads_batch()?),
        ] {
            write_whole(dir, name, &batch)?;
        }
        Ok(())
    }

    /// Writes table `table` (`steps`, `intervals` or `histograms`) as
    /// `dir/stem.parquet`, whole and then renamed over any older one: a
    /// running step's partial files (docs/results.md).
    pub fn write_table(&self, dir: &Path, table: &str, stem: &str) -> Result<()> {
        let batch = match table {
            "steps" => self.steps_batch()?,
            "intervals" => self.intervals_batch()?,
            "histograms" => self.histograms_batch()?,
            _ => unreachable!("no partial table {table}"),
        };
        write_whole(dir, stem, &batch)
    }
}

/// Writes `batch` as `dir/name.parquet`: whole into a temporary file, then
/// renamed over it.
fn write_whole(dir: &Path, name: &str, batch: &RecordBatch) -> Result<()> {
    let path = dir.join(format!("{name}.parquet"));
    let tmp = dir.join(format!(".{name}.parquet.tmp"));
    let mut file = ParquetFile::create(&tmp, batch.schema())?;
    file.write(batch)?;
    file.finish()?;
    std::fs::rename(&tmp, &path).map_err(|source| Error::Io {
        action: "cannot replace",
        path: path.clone(),
        source,
    })
}
