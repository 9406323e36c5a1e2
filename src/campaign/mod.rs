//! Campaigns: one run configuration against many servers, each run several
//! times, interleaved (A B C A B C), every run an ordinary run directory.
//!
//! `mod.rs` reads the campaign file; `runner.rs` runs it: for each repeat
//! and each server, a fresh server ibench starts (and stops) itself, or a
//! server given by its DSN, then the run.

mod runner;

pub use runner::{run, CampaignOutcome, RunRecord};

use crate::error::{Error, Result};
use crate::server::{Kind, ServerSpec};
use crate::workload::Config;
use serde_json::{Map, Value};
use std::path::{Path, PathBuf};
use std::time::Duration;

/// A campaign, as its file gives it.
#[derive(Clone, Debug)]
pub struct Campaign {
    /// Where every run directory, the campaign's record and the report go.
    pub out: PathBuf,
    /// The run parameters, as a `--config` file takes them (no `db`, no `label`).
    pub run: Map<String, Value>,
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
    /// A fresh server per run.
    Managed(ServerSpec),
    /// A server ibench does not manage: its DSN.
    Db(String),
}

/// The keys of `[run]` that belong to the campaign, not to each run.
const CAMPAIGN_KEYS: [&str; 3] = ["repeats", "base", "cooldown_seconds"];

fn bad(file: &Path, what: impl std::fmt::Display) -> Error {
    Error::config("campaign", format!("{}: {what}", file.display()))
}

/// A string value of `table[key]`.
fn text(table: &Map<String, Value>, key: &str, file: &Path, at: &str) -> Result<Option<String>> {
    match table.get(key) {
        None => Ok(None),
        Some(Value::String(s)) => Ok(Some(s.clone())),
        Some(other) => Err(bad(file, format!("{at}{key} must be a string, not {other}"))),
    }
}

impl Campaign {
    /// Reads a campaign file: TOML, or JSON when it ends in `.json` (what
    /// `ibench.campaign(dict)` writes). Paths in it (a server's `bin` and
    /// `config`) are relative to the file's directory; `out` to the current one.
    pub fn load(file: &Path) -> Result<Campaign> {
        let text_of = std::fs::read_to_string(file).map_err(|source| Error::Io {
            action: "cannot read the campaign file",
            path: file.to_path_buf(),
            source,
        })?;
        let value: Value = if file.extension().is_some_and(|e| e == "json") {
            serde_json::from_str(&text_of).map_err(|e| bad(file, e))?
        } else {
            let table: toml::Table = toml::from_str(&text_of).map_err(|e| bad(file, e))?;
            serde_json::to_value(table).map_err(|e| bad(file, e))?
        };
        let Value::Object(top) = value else {
            return Err(bad(file, "expected a table"));
        };
        let here = file.parent().map(Path::to_path_buf).unwrap_or_default();
        Campaign::from_map(&top, &here, file)
    }

    fn from_map(top: &Map<String, Value>, here: &Path, file: &Path) -> Result<Campaign> {
        for key in top.keys() {
            if !["out", "run", "server"].contains(&key.as_str()) {
                return Err(bad(
                    file,
                    format!("unknown key {key:?}; expected out, [run] and [[server]]"),
                ));
            }
        }
        let out = PathBuf::from(text(top, "out", file, "")?.unwrap_or_else(|| "campaign-results".into()));
        let mut run = match top.get("run") {
            None => Map::new(),
            Some(Value::Object(m)) => m.clone(),
            Some(_) => return Err(bad(file, "[run] must be a table")),
        };
        let repeats = match run.get("repeats") {
            None => 1,
            Some(v) => match v.as_u64() {
                Some(n) if (1..=1000).contains(&n) => n as u32,
                _ => {
                    return Err(bad(
                        file,
                        format!("run.repeats must be a whole number from 1 to 1000, not {v}"),
                    ))
                }
            },
        };
        let base = text(&run, "base", file, "run.")?;
        let cooldown = match run.get("cooldown_seconds") {
            None => Duration::ZERO,
            Some(v) => match v.as_f64() {
                Some(s) if s >= 0.0 && s.is_finite() => Duration::from_secs_f64(s),
                _ => return Err(bad(file, format!("run.cooldown_seconds must be a number ≥ 0, not {v}"))),
            },
        };
        for key in CAMPAIGN_KEYS {
            run.remove(key);
        }
        for key in ["db", "label"] {
            if run.contains_key(key) {
                return Err(bad(
                    file,
                    format!("run.{key} is set per server ([[server]] label, db or kind)"),
                ));
            }
        }
        // The run parameters must make a valid run before any server starts.
        Config::resolve(std::slice::from_ref(&run))
            .and_then(|c| c.check())
            .map_err(|e| bad(file, format!("[run]: {e}")))?;
        let servers = match top.get("server") {
            Some(Value::Array(list)) if !list.is_empty() => list,
            _ => return Err(bad(file, "no [[server]]: a campaign needs at least one")),
        };
        let mut parsed: Vec<CampaignServer> = Vec::new();
        for (i, s) in servers.iter().enumerate() {
            let Value::Object(s) = s else {
                return Err(bad(file, format!("server {} must be a table", i + 1)));
            };
            let at = format!("server {} ", i + 1);
            let label = text(s, "label", file, &at)?.ok_or_else(|| bad(file, format!("{at}needs a label")))?;
            let at = format!("server {} ({label}): ", i + 1);
            if parsed.iter().any(|p| p.label == label) {
                return Err(bad(file, format!("{at}the label is used twice")));
            }
            for key in s.keys() {
                if !["label", "kind", "bin", "config", "db", "keep_data"].contains(&key.as_str()) {
                    return Err(bad(file, format!("{at}unknown key {key:?}")));
                }
            }
            let target = match (text(s, "db", file, &at)?, text(s, "kind", file, &at)?) {
                (Some(_), Some(_)) => {
                    return Err(bad(
                        file,
                        format!("{at}db and kind: a server is managed (kind) or given (db), not both"),
                    ))
                }
                (Some(db), None) => Target::Db(db),
                (None, Some(kind)) => {
                    let kind = Kind::parse(&kind).map_err(|e| bad(file, format!("{at}{e}")))?;
                    let path = |p: String| {
                        if Path::new(&p).is_absolute() {
                            PathBuf::from(p)
                        } else {
                            here.join(p)
                        }
                    };
                    let config = match text(s, "config", file, &at)? {
                        Some(p) => {
                            let p = path(p);
                            std::fs::read_to_string(&p)
                                .map_err(|e| bad(file, format!("{at}config {}: {e}", p.display())))?
                        }
                        None => String::new(),
                    };
                    let keep_data = match s.get("keep_data") {
                        None => false,
                        Some(Value::Bool(b)) => *b,
                        Some(v) => return Err(bad(file, format!("{at}keep_data must be true or false, not {v}"))),
                    };
                    Target::Managed(ServerSpec {
                        kind,
                        bin: text(s, "bin", file, &at)?.map(path),
                        config,
                        work_dir: std::env::temp_dir(),
                        keep_data,
                    })
                }
                (None, None) => {
                    return Err(bad(
                        file,
                        format!("{at}needs kind (a server ibench starts) or db (one it uses)"),
                    ))
                }
            };
            parsed.push(CampaignServer { label, target });
        }
        if let Some(b) = &base {
            if !parsed.iter().any(|s| &s.label == b) {
                return Err(bad(file, format!("run.base {b:?} is no server's label")));
            }
        }
        Ok(Campaign {
            out,
            run,
            repeats,
            base,
            cooldown,
            servers: parsed,
        })
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
        assert_eq!(c.run.get("rows_l_i0"), Some(&Value::from(10)));
        assert!(!c.run.contains_key("repeats"));
        let Target::Managed(spec) = &c.servers[0].target else {
            panic!()
        };
        assert_eq!(spec.config, "synchronous_commit = off\n");
        assert!(matches!(&c.servers[1].target, Target::Db(d) if d == "postgres://x@h/d"));
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
                "unknown key",
            ),
        ] {
            let e = load(text).unwrap_err().to_string();
            assert!(e.contains(says) && e.contains("c.toml"), "{text:?}: {e}");
        }
    }
}
