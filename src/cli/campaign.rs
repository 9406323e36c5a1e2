//! `ibench campaign FILE`: the campaign's runs, a line per run, then its report.

use super::progress::Progress;
use super::run::{seconds, stop_on_signals};
use crate::campaign::{self, Campaign};
use crate::error::Result;
use crate::stop::Stop;
use clap::Args;
use std::path::PathBuf;
use std::sync::atomic::Ordering;
use std::sync::Arc;

#[derive(Debug, Args)]
pub(super) struct CampaignArgs {
    /// The campaign file (TOML; docs/campaigns.md): out, [run] and [[server]].
    file: PathBuf,
    /// Print only warnings and the campaign's summary.
    #[arg(long, short = 'q')]
    quiet: bool,
    /// Skip the HTML report (written to OUT/report.html otherwise).
    #[arg(long)]
    no_report: bool,
    /// Resume the campaign its OUT/campaign.json records: keep the runs that
    /// ended ok, run the rest of the file's plan (refused when a run
    /// parameter or a kept server changed).
    #[arg(long)]
    resume: bool,
    /// When standard error is not a terminal: a progress line this often (seconds).
    #[arg(long, default_value_t = 30.0, value_name = "SECONDS")]
    progress_seconds: f64,
}

/// Runs the campaign; returns the exit code: 0 when every run ended ok, 1
/// when one did not (or a server refused to start, or the report failed),
/// 2 when the campaign file is invalid or a resume is refused (nothing
/// ran), 128 + N when signal N stopped it.
pub(super) fn run(args: CampaignArgs) -> Result<i32> {
    let c = match Campaign::load(&args.file) {
        Ok(c) => c,
        Err(e) => {
            eprintln!("error: {e}");
            return Ok(2);
        }
    };
    let stop = Arc::new(Stop::new());
    let (signals, signal) = stop_on_signals(stop.clone())?;
    let progress = Progress::new(args.quiet, seconds(args.progress_seconds)?);
    let outcome = campaign::run(&c, args.resume, &progress, &stop);
    signals.close();
    let outcome = match outcome {
        Err(e @ crate::Error::Config { .. }) => {
            // A resume refused: nothing ran.
            eprintln!("error: {e}");
            return Ok(2);
        }
        other => other?,
    };
    for r in &outcome.runs {
        let id = r.run_id.as_deref().unwrap_or("-");
        let error = r.error.as_deref().map(|e| format!(": {e}")).unwrap_or_default();
        println!("{:>12} #{} {:<11} {id}{error}", r.label, r.repeat, r.status);
    }
    let finished: Vec<PathBuf> = outcome
        .runs
        .iter()
        .filter_map(|r| r.run_id.as_ref().map(|id| outcome.out.join(id)))
        .collect();
    // The report covers what finished even when a run failed or a signal
    // stopped the campaign; its own failure is reported, never hides why the
    // campaign ended.
    let mut report_failed = false;
    if !args.no_report && !finished.is_empty() {
        let report = outcome.out.join("report.html");
        let (base, note) = report_base(&c, &outcome);
        if let Some(note) = note {
            eprintln!("warning: {note}");
        }
        match super::draw_report(&finished, base.as_deref(), &report) {
            Ok(()) => println!("report: {}", report.display()),
            Err(e) => {
                eprintln!("error: the campaign's report: {e}");
                report_failed = true;
            }
        }
    }
    println!("results: {}", outcome.out.display());
    let n = signal.load(Ordering::SeqCst);
    Ok(if outcome.stopped && n > 0 {
        eprintln!("error: campaign stopped by signal {n}");
        128 + n
    } else if outcome.all_ok() && !report_failed {
        0
    } else {
        if !outcome.all_ok() {
            eprintln!("error: not every run ended ok (see above)");
        }
        1
    })
}

/// The label the report compares with: the campaign's base (default: its
/// first server) when a run of it finished, else the first server with a
/// finished run, with a note saying so: a base whose server never started
/// must not cost the report of the others.
fn report_base(c: &Campaign, outcome: &campaign::CampaignOutcome) -> (Option<String>, Option<String>) {
    let wanted = c.base.clone().or_else(|| c.servers.first().map(|s| s.label.clone()));
    let finished = |label: &str| outcome.runs.iter().any(|r| r.label == label && r.run_id.is_some());
    if wanted.as_deref().is_none_or(finished) {
        return (wanted, None);
    }
    let instead = c.servers.iter().map(|s| s.label.clone()).find(|l| finished(l));
    let note = format!(
        "the base {:?} has no finished run: the report compares with {:?}",
        wanted.unwrap_or_default(),
        instead.as_deref().unwrap_or("-")
    );
    (instead, Some(note))
}
