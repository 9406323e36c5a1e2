//! Running a campaign: repeats interleaved over the servers (A B C A B C),
//! a fresh server per run for those ibench manages, and a record of every
//! run (`campaign.json`) rewritten after each, so a stop or a failure keeps
//! what finished. A server that refuses its configuration is recorded with
//! the tail of its log and the campaign goes on; a stop request ends the
//! running run (its results written), stops its server, and ends the campaign.
//! A campaign resumed (`--resume`) keeps the runs its record says ended ok
//! and runs the rest of its plan, the plan of the campaign file as it is now.

use super::{Campaign, CampaignServer, Login, Target};
use crate::error::{Error, Result};
use crate::exec::{self, Observer};
use crate::results::CampaignRunStatus;
use crate::server::{Managed, ServerSpec};
use crate::stop::Stop;
use crate::workload::Config;
use serde::{Deserialize, Serialize};
use serde_json::{Map, Value};
use std::path::{Path, PathBuf};
use std::time::{Duration, Instant};

/// One run of a campaign, as `campaign.json` records it.
#[derive(Clone, Debug, Serialize, Deserialize)]
pub struct RunRecord {
    /// The server's label.
    pub label: String,
    /// Which repeat (1-based).
    pub repeat: u32,
    /// The run's id (None when its server did not start).
    pub run_id: Option<String>,
    /// How the run ended, or that its server did not start.
    pub status: CampaignRunStatus,
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
        !self.stopped && self.runs.iter().all(|r| r.status == CampaignRunStatus::Ok)
    }
}

/// What `campaign.json` holds: the campaign's base, its plan (what its
/// runs' results depend on: resuming refuses a campaign whose plan changed
/// for the runs it keeps), and every run so far.
#[derive(Serialize, Deserialize)]
struct Record {
    base: Option<String>,
    #[serde(default)]
    plan: Plan,
    runs: Vec<RunRecord>,
}

/// What a campaign's runs depend on: the run parameters they resolve to
/// (but the per-server `db` and `label`) and each server's spec.
#[derive(Clone, Debug, Default, PartialEq, Serialize, Deserialize)]
struct Plan {
    run: Map<String, Value>,
    servers: Map<String, Value>,
}

impl Plan {
    /// Campaign `c`'s plan.
    fn of(c: &Campaign) -> Result<Plan> {
        let mut run = Config::resolve_layers([c.run.clone()])?.to_map();
        for per_server in [crate::workload::param!(db), crate::workload::param!(label)] {
            run.remove(per_server);
        }
        let servers = c
            .servers
            .iter()
            .map(|s| {
                let spec = match &s.target {
                    Target::Db(db) => serde_json::json!({ "db": crate::connect::redact(db) }),
                    Target::Managed(m, login) => serde_json::json!({
                        "kind": m.kind.name(), "bin": m.bin, "config": m.config, "keep_data": m.keep_data,
                        "user": login.user, "dsn_options": login.dsn_options,
                    }),
                };
                (s.label.clone(), spec)
            })
            .collect();
        Ok(Plan { run, servers })
    }

    /// Why runs recorded under `self` do not compare with runs of `now`:
    /// the first run parameter, or server kept, whose value changed.
    fn changed(&self, now: &Plan) -> Option<String> {
        for (name, before) in &self.run {
            let after = now.run.get(name).unwrap_or(&Value::Null);
            if after != before {
                return Some(format!("run parameter {name} changed ({before} → {after})"));
            }
        }
        self.servers.iter().find_map(|(label, before)| {
            now.servers
                .get(label)
                .filter(|after| *after != before)
                .map(|after| format!("server {label:?} changed ({before} → {after})"))
        })
    }
}

/// Writes `campaign.json`: the campaign's base, its plan and every run so far.
fn record(out: &Path, base: Option<&str>, plan: &Plan, runs: &[RunRecord]) -> Result<()> {
    let record = Record {
        base: base.map(str::to_owned),
        plan: plan.clone(),
        runs: runs.to_vec(),
    };
    let text = serde_json::to_string_pretty(&record).expect("serializes");
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

/// The runs of `c` a resume keeps: those `campaign.json` records as ended ok
/// whose run directory is there, by (label, repeat). Refuses (naming it) a
/// campaign whose run parameters or kept servers changed since.
fn kept_runs(c: &Campaign, plan: &Plan) -> Result<Vec<RunRecord>> {
    let path = c.out.join("campaign.json");
    let refuse = |what: String| Error::config("resume", format!("{}: {what}", path.display()));
    let text = std::fs::read_to_string(&path).map_err(|e| {
        refuse(format!(
            "cannot read it ({e}): there is no campaign to resume in {}",
            c.out.display()
        ))
    })?;
    let before: Record = serde_json::from_str(&text).map_err(|e| refuse(format!("not a campaign record: {e}")))?;
    if let Some(why) = before.plan.changed(plan) {
        return Err(refuse(format!(
            "{why}: the runs kept would not compare with the new ones; run it as a new campaign (another out)"
        )));
    }
    Ok(before
        .runs
        .into_iter()
        .filter(|r| r.status == CampaignRunStatus::Ok)
        .filter(|r| {
            r.run_id
                .as_ref()
                .is_some_and(|id| c.out.join(id).join("runs.parquet").is_file())
        })
        .collect())
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

/// One run on `db` labelled `label` (its password in `password_file`).
fn one_run(
    c: &Campaign,
    db: &str,
    password_file: Option<&Path>,
    label: &str,
    observer: &dyn Observer,
    stop: &Stop,
) -> Result<exec::RunOutcome> {
    let mut layer = c.run.clone();
    layer.db = Some(db.into());
    layer.label = Some(Some(label.into()));
    if let Some(file) = password_file {
        layer.password_file = Some(Some(file.to_path_buf()));
    }
    let config = Config::resolve_layers([layer])?;
    exec::run(&config, &c.out, observer, stop)
}

/// Where a campaign is as a run starts: runs done of the total, and how
/// long they took.
#[derive(Clone, Debug)]
pub struct CampaignProgress {
    /// Runs done (ended, however they ended, or kept from before a resume).
    pub done: usize,
    /// Of those, the runs this process ran (the ETA's measured durations).
    pub ran: usize,
    /// Runs in the campaign.
    pub total: usize,
    /// The starting run's server and repeat.
    pub label: String,
    pub repeat: u32,
    /// Since the campaign started.
    pub elapsed: Duration,
}

impl CampaignProgress {
    /// When the campaign will end, from the mean duration of the runs this
    /// process ran (None before the first ended).
    pub fn eta(&self) -> Option<Duration> {
        (self.ran > 0).then(|| self.elapsed.mul_f64((self.total - self.done) as f64 / self.ran as f64))
    }
}

/// Hears about a campaign's progress as well as each run's.
pub trait CampaignObserver: Observer {
    /// A run of the campaign is about to start.
    fn run_starting(&self, _progress: &CampaignProgress) {}
}

impl CampaignObserver for exec::Silent {}

/// Runs campaign `c`: `repeats` rounds, each server once per round. With
/// `resume`, the runs its `campaign.json` records as ended ok are kept and
/// the rest of the plan runs (see [`kept_runs`]).
pub fn run(c: &Campaign, resume: bool, observer: &dyn CampaignObserver, stop: &Stop) -> Result<CampaignOutcome> {
    let plan = Plan::of(c)?;
    let mut kept = if resume { kept_runs(c, &plan)? } else { Vec::new() };
    std::fs::create_dir_all(&c.out).map_err(|source| Error::Io {
        action: "cannot create the campaign's directory",
        path: c.out.clone(),
        source,
    })?;
    let mut runs: Vec<RunRecord> = Vec::new();
    let base = c.base.clone().or_else(|| c.servers.first().map(|s| s.label.clone()));
    record(&c.out, base.as_deref(), &plan, &runs)?;
    let order = (1..=c.repeats).flat_map(|repeat| c.servers.iter().map(move |s| (repeat, s)));
    let (started, total) = (Instant::now(), c.servers.len() * c.repeats as usize);
    let mut ran = 0;
    for (i, (repeat, server)) in order.enumerate() {
        if let Some(at) = kept.iter().position(|r| r.label == server.label && r.repeat == repeat) {
            runs.push(kept.swap_remove(at));
            continue;
        }
        if ran > 0 && !stop.requested() {
            pause(c.cooldown, stop);
        }
        if stop.requested() {
            break;
        }
        observer.run_starting(&CampaignProgress {
            done: i,
            total,
            label: server.label.clone(),
            repeat,
            elapsed: started.elapsed(),
            ran,
        });
        runs.push(one_planned(c, server, repeat, observer, stop));
        ran += 1;
        record(&c.out, base.as_deref(), &plan, &runs)?;
    }
    record(&c.out, base.as_deref(), &plan, &runs)?;
    Ok(CampaignOutcome {
        out: c.out.clone(),
        runs,
        stopped: stop.requested(),
    })
}

/// Repeat `repeat` on `server`: a fresh server started (and stopped) for
/// it when ibench manages the server, then the run; what became of it.
fn one_planned(c: &Campaign, server: &CampaignServer, repeat: u32, observer: &dyn Observer, stop: &Stop) -> RunRecord {
    let mut rec = RunRecord {
        label: server.label.clone(),
        repeat,
        run_id: None,
        status: CampaignRunStatus::ServerError,
        error: None,
        data_dir: None,
    };
    let outcome = match &server.target {
        Target::Db(db) => one_run(c, db, None, &server.label, observer, stop),
        Target::Managed(spec, login) => match Managed::start(spec) {
            Ok(managed) => {
                if spec.keep_data {
                    rec.data_dir = Some(managed.dir().display().to_string());
                }
                on_managed(c, (spec, login), managed, &server.label, observer, stop)
            }
            Err(e) => {
                observer.warning(&format!(
                    "{} (repeat {repeat}): the server did not start: {e}",
                    server.label
                ));
                rec.error = Some(e.to_string());
                return rec;
            }
        },
    };
    match outcome {
        Ok(o) => {
            rec.run_id = Some(o.results.run.run_id.clone());
            rec.status = o.results.run.status.into();
            rec.error = o.results.run.error.clone();
        }
        Err(e) => {
            rec.status = CampaignRunStatus::Error;
            rec.error = Some(e.to_string());
        }
    }
    rec
}

/// The run on a managed server (logged in as `login` says), then the
/// server stopped; the server's log and the configuration it was given stay
/// with the run.
fn on_managed(
    c: &Campaign,
    (spec, login): (&ServerSpec, &Login),
    managed: Managed,
    label: &str,
    observer: &dyn Observer,
    stop: &Stop,
) -> Result<exec::RunOutcome> {
    let dsn = match (&login.user, &login.password_file) {
        (Some(user), Some(file)) => {
            crate::connect::read_password_file(file).and_then(|p| managed.create_user(user, &p))
        }
        _ => Ok(managed.dsn()),
    };
    let outcome = dsn.and_then(|dsn| {
        let dsn = match &login.dsn_options {
            Some(options) => crate::connect::with_options(&dsn, options),
            None => dsn,
        };
        one_run(c, &dsn, login.password_file.as_deref(), label, observer, stop)
    });
    let dir = outcome.as_ref().ok().map(|o| o.dir.clone());
    if let Some(dir) = &dir {
        if let Err(e) = std::fs::write(dir.join("server.conf"), &spec.config) {
            observer.warning(&format!("{label}: cannot keep server.conf: {e}"));
        }
    }
    if let Err(e) = managed.stop(dir.map(|d| d.join("server.log")).as_deref()) {
        observer.warning(&format!("{label}: stopping the server: {e}"));
    }
    outcome
}
