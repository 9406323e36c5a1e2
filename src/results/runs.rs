//! `runs.parquet`: one row per run.

use super::columns::{col, Column};

/// Version of the result tables' layout; bumped on any incompatible change.
pub const SCHEMA_VERSION: u32 = 2;

/// One run.
#[derive(Clone, Debug, Default)]
pub struct RunRow {
    /// Unique id, also the run directory's name.
    pub run_id: String,
    /// Wall-clock start, µs since the Unix epoch (UTC).
    pub started_at_us: i64,
    /// The ibench version.
    pub ibench_version: String,
    /// "release" or "debug": debug-build figures are not comparable.
    pub build_profile: String,
    /// The seed.
    pub seed: u64,
    /// "sqlite", "null", ...
    pub dbms: String,
    /// The database's version.
    pub dbms_version: String,
    /// The user's label.
    pub label: Option<String>,
    /// The DSN without password.
    pub target: String,
    /// The host name.
    pub host: String,
    /// Logical CPUs of the host.
    pub cpus: u32,
    /// The resolved configuration, JSON.
    pub config: String,
    /// Settings the connector applied, JSON object.
    pub settings: String,
    /// Where the run is.
    pub status: super::RunStatus,
    /// The error that ended the run.
    pub error: Option<String>,
    /// Settings known to add noise, and maintenance skipped for lack of a
    /// privilege (JSON array of sentences).
    pub warnings: Vec<String>,
    /// The exact row counts at the end of the run: every table holds its
    /// window (None: not checked).
    pub verified: Option<bool>,
    /// What the end-of-run count found wrong.
    pub verify_error: Option<String>,
}

/// The columns of `runs.parquet`.
pub(crate) fn columns() -> Vec<Column<RunRow>> {
    vec![
        col!("run_id", str, |r: &RunRow| r.run_id.as_str()),
        col!("started_at", time, |r: &RunRow| r.started_at_us),
        col!("ibench_version", str, |r: &RunRow| r.ibench_version.as_str()),
        col!("build_profile", str, |r: &RunRow| r.build_profile.as_str()),
        col!("schema_version", u32, |_r: &RunRow| SCHEMA_VERSION),
        col!("seed", u64, |r: &RunRow| r.seed),
        col!("dbms", str, |r: &RunRow| r.dbms.as_str()),
        col!("dbms_version", str, |r: &RunRow| r.dbms_version.as_str()),
        col!("label", str?, |r: &RunRow| r.label.as_deref()),
        col!("target", str, |r: &RunRow| r.target.as_str()),
        col!("host", str, |r: &RunRow| r.host.as_str()),
        col!("cpus", u32, |r: &RunRow| r.cpus),
        col!("config", str, |r: &RunRow| r.config.as_str()),
        col!("settings", str, |r: &RunRow| r.settings.as_str()),
        col!("status", str, |r: &RunRow| r.status.as_str()),
        col!("error", str?, |r: &RunRow| r.error.as_deref()),
        col!("warnings", str, |r: &RunRow| serde_json::to_string(&r.warnings)
            .expect("strings serialize")),
        col!("verified", bool?, |r: &RunRow| r.verified),
        col!("verify_error", str?, |r: &RunRow| r.verify_error.as_deref()),
    ]
}
