//! Campaigns: one run configuration against many servers, each run several
//! times, interleaved (A B C A B C), every run an ordinary run directory.
//!
//! `mod.rs` reads the campaign file; `runner.rs` runs it: for each repeat
//! and each server, a fresh server ibench starts (and stops) itself, or a
//! server given by its DSN, then the run.

mod runner;

pub use runner::{run, CampaignObserver, CampaignOutcome, CampaignProgress, RunRecord};

use crate::error::{Error, Result};
use crate::server::{Kind, ServerSpec};
use crate::workload::{Config, Overrides};
use serde::Deserialize;
use serde_json::{Map, Value};
use std::path::{Path, PathBuf};
use std::time::Duration;

/// A campaign, as its file gives it.
#[derive(Clone, Debug)]
pub struct Campaign {
    /// Where every run directory, the campaign's record and the report go.
    pub out: PathBuf,
    /// The run parameters, as a `--config` file takes them (no `db`, no `label`).
    pub run: Overrides,
    /// Runs per server, interleaved.
    pub repeats: u32,
    /// The label of the relative tables' base (default: the first server).
    pub base: Option<String>,
    /// A pause between runs.
    pub cooldown: Duration,
    /// The servers, in order.
    pub servers: Vec<CampaignServer>,
}

/// One server of a campaign.
#[derive(Clone, Debug)]
pub struct CampaignServer {
    /// Its label: the runs' label, unique in the campaign.
    pub label: String,
    /// How to reach it.
    pub target: Target,
}

/// A server ibench starts for each run, or one it uses as it is.
#[derive(Clone, Debug)]
pub enum Target {
    /// A fresh server per run, and how the runs log in to it.
    Managed(ServerSpec, Login),
    /// A server ibench does not manage: its DSN.
    Db(String),
}

/// How a campaign's runs log in to the fresh servers ibench starts:
/// as root without a password (the default), or as an account made on
/// each fresh server with the password in a file; and with DSN options
/// (`ssl-mode=REQUIRED`).
#[derive(Clone, Debug, Default, PartialEq)]
pub struct Login {
    /// The account made on each fresh server (MariaDB and MySQL).
    pub user: Option<String>,
    /// The file whose first line is its password: given to the runs as
    /// their `password_file`, never recorded.
    pub password_file: Option<PathBuf>,
    /// Appended to the server's DSN (`ssl-mode=REQUIRED`).
    pub dsn_options: Option<String>,
}

/// The campaign file's top level.
#[derive(Deserialize)]
#[serde(deny_unknown_fields)]
struct File {
    #[serde(default = "default_out")]
    out: PathBuf,
    #[serde(default)]
    run: RunTable,
    #[serde(default)]
    server: Vec<ServerTable>,
}

fn default_out() -> PathBuf {
    "campaign-results".into()
}

/// `[run]`: the campaign's own keys; the rest are run parameters.
#[derive(Deserialize)]
struct RunTable {
    #[serde(default = "one")]
    repeats: u32,
    base: Option<String>,
    #[serde(default)]
    cooldown_seconds: f64,
    #[serde(flatten)]
    params: Map<String, Value>,
}

fn one() -> u32 {
    1
}

impl Default for RunTable {
    fn default() -> Self {
        RunTable {
            repeats: one(),
            base: None,
            cooldown_seconds: 0.0,
            params: Map::new(),
        }
    }
}

/// One `[[server]]`.
#[derive(Deserialize)]
#[serde(deny_unknown_fields)]
struct ServerTable {
    label: Option<String>,
    kind: Option<String>,
    bin: Option<PathBuf>,
    config: Option<PathBuf>,
    db: Option<String>,
    /// A RocksDB release's shared library for a `rocksdb:` db (its `lib=`).
    lib: Option<PathBuf>,
    #[serde(default)]
    keep_data: bool,
    user: Option<String>,
    password_file: Option<PathBuf>,
    dsn_options: Option<String>,
}

fn bad(file: &Path, what: impl std::fmt::Display) -> Error {
    Error::config("campaign", format!("{}: {what}", file.display()))
}

impl Campaign {
    /// Reads a campaign file: TOML, or JSON when it ends in `.json` (what
    /// `ibench.campaign(dict)` writes). Paths in it (a server's `bin` and
    /// `config`) are relative to the file's directory; `out` to the current one.
    pub fn load(file: &Path) -> Result<Campaign> {
        let text = std::fs::read_to_string(file).map_err(|source| Error::Io {
            action: "cannot read the campaign file",
            path: file.to_path_buf(),
            source,
        })?;
        let parsed: File = if file.extension().is_some_and(|e| e == "json") {
            serde_json::from_str(&text).map_err(|e| bad(file, e))?
        } else {
            toml::from_str(&text).map_err(|e| bad(file, e))?
        };
        let here = file.parent().map(Path::to_path_buf).unwrap_or_default();
        Campaign::from_file(parsed, &here).map_err(|what| bad(file, what))
    }

    /// The campaign of a parsed file whose relative paths start at `here`;
    /// the error says what is wrong.
    fn from_file(f: File, here: &Path) -> std::result::Result<Campaign, String> {
        let run = run_parameters(&f.run)?;
        if f.server.is_empty() {
            return Err("no [[server]]: a campaign needs at least one".into());
        }
        let mut servers: Vec<CampaignServer> = Vec::new();
        for (i, s) in f.server.into_iter().enumerate() {
            let label = s
                .label
                .clone()
                .ok_or_else(|| format!("server {} needs a label", i + 1))?;
            let at = format!("server {} ({label}): ", i + 1);
            if servers.iter().any(|p| p.label == label) {
                return Err(format!("{at}the label is used twice"));
            }
            let target = s.target(here).map_err(|e| format!("{at}{e}"))?;
            servers.push(CampaignServer { label, target });
        }
        if let Some(b) = &f.run.base {
            if !servers.iter().any(|s| &s.label == b) {
                return Err(format!("run.base {b:?} is no server's label"));
            }
        }
        Ok(Campaign {
            out: f.out,
            run,
            repeats: f.run.repeats,
            base: f.run.base,
            cooldown: Duration::from_secs_f64(f.run.cooldown_seconds),
            servers,
        })
    }
}

/// `[run]`'s run parameters, which must make a valid run before any server starts.
fn run_parameters(t: &RunTable) -> std::result::Result<Overrides, String> {
    if !(1..=1000).contains(&t.repeats) {
        return Err(format!(
            "run.repeats must be a whole number from 1 to 1000, not {}",
            t.repeats
        ));
    }
    if !(t.cooldown_seconds >= 0.0 && t.cooldown_seconds.is_finite()) {
        return Err(format!(
            "run.cooldown_seconds must be a number ≥ 0, not {}",
            t.cooldown_seconds
        ));
    }
    let run = Overrides::from_map(&t.params).map_err(|e| format!("[run]: {e}"))?;
    if run.db.is_some() || run.label.is_some() {
        let key = if run.db.is_some() { "db" } else { "label" };
        return Err(format!("run.{key} is set per server ([[server]] label, db or kind)"));
    }
    Config::resolve_layers([run.clone()]).map_err(|e| format!("[run]: {e}"))?;
    Ok(run)
}

impl ServerTable {
    /// A managed server (`kind`) or a given one (`db`); relative paths from `here`.
    fn target(self, here: &Path) -> std::result::Result<Target, String> {
        let path = |p: PathBuf| if p.is_absolute() { p } else { here.join(p) };
        let db = match (self.db, self.lib.map(path)) {
            (Some(db), Some(lib)) if db.starts_with("rocksdb:") => Some(crate::connect::with_options(
                &db,
                &format!("lib={}", crate::connect::dsn::encode(&lib.to_string_lossy())),
            )),
            (_, Some(_)) => return Err(
                "lib is a RocksDB release's library: it needs db = \"rocksdb:PATH\" (the directory that release opens)"
                    .into(),
            ),
            (db, None) => db,
        };
        let managed_only = self.user.is_some() || self.password_file.is_some() || self.dsn_options.is_some();
        let kind = match (db, self.kind) {
            (Some(_), Some(_)) => return Err("db and kind: a server is managed (kind) or given (db), not both".into()),
            (Some(_), None) if managed_only => {
                return Err("user, password_file and dsn_options are for servers ibench starts (kind): a given server's db says them".into())
            }
            (Some(db), None) => return Ok(Target::Db(db)),
            (None, Some(kind)) => Kind::parse(&kind).map_err(|e| e.to_string())?,
            (None, None) => return Err("needs kind (a server ibench starts) or db (one it uses)".into()),
        };
        let config = match self.config.map(path) {
            Some(p) => std::fs::read_to_string(&p).map_err(|e| format!("config {}: {e}", p.display()))?,
            None => String::new(),
        };
        let login = Login {
            password_file: self.password_file.map(path),
            user: self.user,
            dsn_options: self.dsn_options,
        };
        match (&login.user, &login.password_file) {
            (Some(_), None) | (None, Some(_)) => return Err("user and password_file go together".into()),
            (Some(_), Some(p)) => {
                crate::connect::read_password_file(p).map_err(|e| e.to_string())?;
            }
            (None, None) => {}
        }
        let spec = ServerSpec {
            kind,
            bin: self.bin.map(path),
            config,
            work_dir: std::env::temp_dir(),
            keep_data: self.keep_data,
        };
        Ok(Target::Managed(spec, login))
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn load(text: &str) -> Result<Campaign> {
        let dir = tempfile::tempdir().unwrap();
        std::fs::write(dir.path().join("pg.conf"), "synchronous_commit = off\n").unwrap();
        let f = dir.path().join("c.toml");
        std::fs::write(&f, text).unwrap();
        Campaign::load(&f)
    }

    #[test]
    fn a_campaign_file_gives_its_servers_runs_and_repeats() {
        let c = load(
            "out = \"o\"\n[run]\npreset = \"quick\"\nrepeats = 3\nbase = \"b\"\ncooldown_seconds = 1.5\nrows_l_i0 = 10\n\
             [[server]]\nlabel = \"a\"\nkind = \"postgres\"\nconfig = \"pg.conf\"\n\
             [[server]]\nlabel = \"b\"\ndb = \"postgres://x@h/d\"\n",
        )
        .unwrap();
        assert_eq!(
            (c.repeats, c.base.as_deref(), c.cooldown),
            (3, Some("b"), Duration::from_millis(1500))
        );
        assert_eq!(c.run.rows_l_i0, Some(10));
        let Target::Managed(spec, _) = &c.servers[0].target else {
            panic!()
        };
        assert_eq!(spec.config, "synchronous_commit = off\n");
        assert!(matches!(&c.servers[1].target, Target::Db(d) if d == "postgres://x@h/d"));
    }

    #[test]
    fn a_rocksdb_server_s_lib_joins_its_db_relative_to_the_file() {
        let c = load(
            "[[server]]\nlabel = \"r8\"\ndb = \"rocksdb:/data/r8?compression=lz4\"\nlib = \"rocks 8/librocksdb.so\"\n",
        )
        .unwrap();
        let Target::Db(db) = &c.servers[0].target else { panic!() };
        let (before, lib) = db.split_once("&lib=").expect("lib= added");
        assert_eq!(before, "rocksdb:/data/r8?compression=lz4");
        assert!(
            lib.ends_with("/rocks%208/librocksdb.so") && lib.starts_with('/'),
            "{db}"
        );
    }

    #[test]
    fn bad_campaign_files_name_what_is_wrong() {
        for (text, says) in [
            ("[run]\n", "no [[server]]"),
            ("[[server]]\nkind = \"postgres\"\n", "needs a label"),
            ("[[server]]\nlabel = \"a\"\n", "needs kind"),
            ("[[server]]\nlabel = \"a\"\nkind = \"oracle\"\n", "server 1 (a)"),
            (
                "[[server]]\nlabel = \"a\"\nkind = \"postgres\"\n[[server]]\nlabel = \"a\"\nkind = \"postgres\"\n",
                "used twice",
            ),
            (
                "[run]\nrepeats = 0\n[[server]]\nlabel = \"a\"\nkind = \"postgres\"\n",
                "repeats",
            ),
            (
                "[run]\nrows_l_i0 = -1\n[[server]]\nlabel = \"a\"\nkind = \"postgres\"\n",
                "rows_l_i0",
            ),
            (
                "[run]\nbase = \"z\"\n[[server]]\nlabel = \"a\"\nkind = \"postgres\"\n",
                "run.base",
            ),
            (
                "[[server]]\nlabel = \"a\"\nkind = \"postgres\"\nconfig = \"missing.conf\"\n",
                "missing.conf",
            ),
            (
                "surprise = 1\n[[server]]\nlabel = \"a\"\nkind = \"postgres\"\n",
                "unknown field `surprise`",
            ),
            (
                "[[server]]\nlabel = \"a\"\nlib = \"librocksdb.so\"\n",
                "lib is a RocksDB release's library: it needs db = \"rocksdb:PATH\"",
            ),
            (
                "[[server]]\nlabel = \"a\"\nkind = \"postgres\"\nlib = \"librocksdb.so\"\n",
                "it needs db = \"rocksdb:PATH\"",
            ),
        ] {
            let e = load(text).unwrap_err().to_string();
            assert!(e.contains(says) && e.contains("c.toml"), "{text:?}: {e}");
        }
    }
}
