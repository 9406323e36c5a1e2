//! `ibench campaign FILE`: the campaign's runs, a line per run, then its report.

use super::run::{stop_on_signals, Progress};
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
}

/// Runs the campaign; returns the exit code: 0 when every run ended ok, 1
/// when one did not (or a server refused to start), 128 + N when signal N
/// stopped it.
pub(super) fn run(args: CampaignArgs) -> Result<i32> {
    let c = Campaign::load(&args.file)?;
    let stop = Arc::new(Stop::new());
    let (signals, signal) = stop_on_signals(stop.clone())?;
    let outcome = campaign::run(&c, &Progress::new(args.quiet), &stop);
    signals.close();
    let outcome = outcome?;
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
    if !args.no_report && !finished.is_empty() {
        let report = outcome.out.join("report.html");
        let base = c.base.clone().or_else(|| c.servers.first().map(|s| s.label.clone()));
        super::draw_report(&finished, base.as_deref(), &report)?;
        println!("report: {}", report.display());
    }
    println!("results: {}", outcome.out.display());
    let n = signal.load(Ordering::SeqCst);
    Ok(if outcome.stopped && n > 0 {
        eprintln!("error: campaign stopped by signal {n}");
        128 + n
    } else if outcome.all_ok() {
        0
    } else {
        eprintln!("error: not every run ended ok (see above)");
        1
    })
}
