//! Running a campaign: repeats interleaved over the servers (A B C A B C),
//! a fresh server per run for those ibench manages, and a record of every
//! run (`campaign.json`) rewritten after each, so a stop or a failure keeps
//! what finished. A server that refuses its configuration is recorded with
//! the tail of its log and the campaign goes on; a stop request ends the
//! running run (its results written), stops its server, and ends the campaign.

use super::{Campaign, Target};
use crate::error::{Error, Result};
use crate::exec::{self, Observer};
use crate::server::Managed;
use crate::stop::Stop;
use crate::workload::Config;
use serde::Serialize;
use serde_json::Value;
use std::path::{Path, PathBuf};
use std::time::{Duration, Instant};

/// One run of a campaign, as `campaign.json` records it.
#[derive(Clone, Debug, Serialize)]
pub struct RunRecord {
    /// The server's label.
    pub label: String,
    /// Which repeat (1-based).
    pub repeat: u32,
    /// The run's id (None when its server did not start).
    pub run_id: Option<String>,
    /// The run's status (ok, error, interrupted), or `server error`.
    pub status: String,
    /// What went wrong, when something did (with the server log's tail).
    pub error: Option<String>,
    /// The server's data directory, when `keep_data` kept it.
    pub data_dir: Option<String>,
}

/// What a campaign did.
#[derive(Debug)]
pub struct CampaignOutcome {
    /// Where its runs are.
    pub out: PathBuf,
    /// Every run, in the order they ran.
    pub runs: Vec<RunRecord>,
    /// A stop request ended it early.
    pub stopped: bool,
}

impl CampaignOutcome {
    /// True when every run ended ok.
    pub fn all_ok(&self) -> bool {
        !self.stopped && self.runs.iter().all(|r| r.status == "ok")
    }
}

/// Writes `campaign.json`: the campaign's base and every run so far.
fn record(out: &Path, base: Option<&str>, runs: &[RunRecord]) -> Result<()> {
    let text = serde_json::to_string_pretty(&serde_json::json!({ "base": base, "runs": runs })).expect("serializes");
    let path = out.join("campaign.json");
    let tmp = out.join(".campaign.json.tmp");
    std::fs::write(&tmp, text).map_err(|source| Error::Io {
        action: "cannot write",
        path: tmp.clone(),
        source,
    })?;
    std::fs::rename(&tmp, &path).map_err(|source| Error::Io {
        action: "cannot replace",
        path,
        source,
    })
}

/// Sleeps `d`, waking early for a stop request.
fn pause(d: Duration, stop: &Stop) {
    let until = Instant::now() + d;
    while !stop.requested() && Instant::now() < until {
        std::thread::sleep(
            until
                .saturating_duration_since(Instant::now())
                .min(Duration::from_millis(50)),
        );
    }
}

/// One run on `db` labelled `label`.
fn one_run(c: &Campaign, db: &str, label: &str, observer: &dyn Observer, stop: &Stop) -> Result<exec::RunOutcome> {
    let mut layer = c.run.clone();
    layer.insert("db".into(), Value::from(db));
    layer.insert("label".into(), Value::from(label));
    let config = Config::resolve(&[layer])?;
    exec::run(&config, &c.out, observer, stop)
}

/// Runs campaign `c`: `repeats` rounds, each server once per round.
pub fn run(c: &Campaign, observer: &dyn Observer, stop: &Stop) -> Result<CampaignOutcome> {
    std::fs::create_dir_all(&c.out).map_err(|source| Error::Io {
        action: "cannot create the campaign's directory",
        path: c.out.clone(),
        source,
    })?;
    let mut runs: Vec<RunRecord> = Vec::new();
    let base = c.base.clone().or_else(|| c.servers.first().map(|s| s.label.clone()));
    record(&c.out, base.as_deref(), &runs)?;
    let mut first = true;
    'rounds: for repeat in 1..=c.repeats {
        for server in &c.servers {
            if stop.requested() {
                break 'rounds;
            }
            if !first {
                pause(c.cooldown, stop);
                if stop.requested() {
                    break 'rounds;
                }
            }
            first = false;
            let mut rec = RunRecord {
                label: server.label.clone(),
                repeat,
                run_id: None,
                status: "server error".into(),
                error: None,
                data_dir: None,
            };
            let outcome = match &server.target {
                Target::Db(db) => one_run(c, db, &server.label, observer, stop),
                Target::Managed(spec) => match Managed::start(spec) {
                    Err(e) => {
                        observer.warning(&format!(
                            "{} (repeat {repeat}): the server did not start: {e}",
                            server.label
                        ));
                        rec.error = Some(e.to_string());
                        runs.push(rec);
                        record(&c.out, base.as_deref(), &runs)?;
                        continue;
                    }
                    Ok(managed) => {
                        if spec.keep_data {
                            rec.data_dir = Some(managed.dir().display().to_string());
                        }
                        let outcome = one_run(c, &managed.dsn(), &server.label, observer, stop);
                        // The server's log and the configuration it was given stay with the run.
                        let dir = outcome.as_ref().ok().map(|o| o.dir.clone());
                        if let Some(dir) = &dir {
                            if let Err(e) = std::fs::write(dir.join("server.conf"), &spec.config) {
                                observer.warning(&format!("{}: cannot keep server.conf: {e}", server.label));
                            }
                        }
                        if let Err(e) = managed.stop(dir.map(|d| d.join("server.log")).as_deref()) {
                            observer.warning(&format!("{}: stopping the server: {e}", server.label));
                        }
                        outcome
                    }
                },
            };
            match outcome {
                Ok(o) => {
                    rec.run_id = Some(o.results.run.run_id.clone());
                    rec.status = o.results.run.status.clone();
                    rec.error = o.results.run.error.clone();
                }
                Err(e) => {
                    rec.status = "error".into();
                    rec.error = Some(e.to_string());
                }
            }
            runs.push(rec);
            record(&c.out, base.as_deref(), &runs)?;
        }
    }
    Ok(CampaignOutcome {
        out: c.out.clone(),
        runs,
        stopped: stop.requested(),
    })
}
