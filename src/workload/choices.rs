//! The values a choice-valued run parameter can take, and the typed forms
//! of `steps` and `shard`: each serializes as the text the user writes.

use super::params::choice_flags;
use super::step::Step;
use serde::{Deserialize, Serialize};

/// Which of a run's clients this process runs: shard `index` of `count`.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Serialize, Deserialize)]
#[serde(into = "String", try_from = "String")]
pub struct Shard {
    /// From 0.
    pub index: u32,
    /// How many shards the run has.
    pub count: u32,
}

impl Shard {
    /// Every client: the one shard of a one-process run.
    pub const WHOLE: Shard = Shard { index: 0, count: 1 };

    /// Parses `"i/N"`; the error names the parameter.
    pub fn parse(text: &str) -> crate::error::Result<Shard> {
        text.parse()
            .map_err(|message| crate::error::Error::config(super::param!(shard), message))
    }

    /// Parses `"i/N"`; the error says why (the caller names the parameter).
    fn parse_text(text: &str) -> std::result::Result<Shard, String> {
        let bad = || format!("expected i/N with 0 ≤ i < N, such as 0/2, got {text:?}");
        let (i, n) = text.split_once('/').ok_or_else(bad)?;
        let (index, count): (u32, u32) = (
            i.trim().parse().map_err(|_| bad())?,
            n.trim().parse().map_err(|_| bad())?,
        );
        if count == 0 || index >= count {
            return Err(bad());
        }
        Ok(Shard { index, count })
    }

    /// The clients of this shard among `clients`: a contiguous block, so
    /// shard i of N holds the tables pi⌊i·C/N⌋+1 … pi⌊(i+1)·C/N⌋.
    pub fn clients(self, clients: u32) -> std::ops::Range<u32> {
        let at = |i: u32| (i as u64 * clients as u64 / self.count as u64) as u32;
        at(self.index)..at(self.index + 1)
    }
}

impl std::fmt::Display for Shard {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        write!(f, "{}/{}", self.index, self.count)
    }
}

/// How paced operations wait for their intended start.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "lowercase")]
pub enum Pacing {
    /// Sleep until shortly before, then spin (the stretch adapts to how late
    /// this host wakes sleepers).
    #[default]
    Precise,
    /// Sleep only: a lag of the host's wake-up latency (tens to hundreds of µs).
    Sleep,
}

/// Which keys the key/value reads and overwrites pick.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "lowercase")]
pub enum Distribution {
    /// Uniform in `[0, num)`, as db_bench.
    #[default]
    Uniform,
    /// Zipfian ranks spread over `[0, num)` by a keyed bijection (YCSB's "zipfian").
    Zipfian,
    /// Zipfian ranks counted down from `num − 1` (YCSB's "latest").
    Latest,
}

impl Distribution {
    /// The key generator kind.
    pub fn kind(self) -> crate::gen::KeyKind {
        match self {
            Distribution::Uniform => crate::gen::KeyKind::Uniform,
            Distribution::Zipfian => crate::gen::KeyKind::Zipfian,
            Distribution::Latest => crate::gen::KeyKind::Latest,
        }
    }
}

/// How the Insert Benchmark's statements are sent.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "lowercase")]
pub enum Statements {
    /// Server-side prepared statements with binary parameters.
    #[default]
    Prepared,
    /// SQL text with the values in it, as the reference client sends it.
    Literal,
}

/// What the generated rows hold.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "lowercase")]
pub enum DataMode {
    /// ibench's rows: `data` compressible to `ratio`, a clock-like `dateandtime`.
    #[default]
    Ibench,
    /// The reference client's: its `data` construction, one `dateandtime`
    /// per batch.
    Iibench,
}

/// The wait step's maintenance.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "lowercase")]
pub enum MaintenanceStyle {
    /// Maintenance, then `wait_seconds` of sleep.
    #[default]
    Ibench,
    /// The reference scripts' procedure per DBMS, the step lasting `wait_seconds` in all.
    Iibench,
}

/// A named bundle of statement choices.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "lowercase")]
pub enum Compat {
    /// ibench's own choices.
    #[default]
    Ibench,
    /// The reference client's (iibench.py and its scripts).
    Iibench,
}

/// What verify checks after write steps and at the end of a run.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "lowercase")]
pub enum VerifyMode {
    /// Key bounds (one row at each end of the primary key) and sampled rows
    /// after each write step; exact counts at the end of the run.
    #[default]
    Quick,
    /// Exact counts, bounds and sampled rows after every write step.
    Full,
    /// Nothing.
    Off,
}

impl VerifyMode {
    /// Its name, as configured.
    pub fn name(self) -> &'static str {
        match self {
            VerifyMode::Quick => "quick",
            VerifyMode::Full => "full",
            VerifyMode::Off => "off",
        }
    }
}

impl From<Shard> for String {
    fn from(s: Shard) -> String {
        s.to_string()
    }
}

impl TryFrom<String> for Shard {
    type Error = String;
    fn try_from(text: String) -> std::result::Result<Shard, String> {
        Shard::parse_text(&text)
    }
}

impl std::str::FromStr for Shard {
    type Err = String;
    fn from_str(text: &str) -> std::result::Result<Shard, String> {
        Shard::parse_text(text)
    }
}

/// What a run records of where the server's time goes, per step.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "lowercase")]
pub enum Profile {
    /// Nothing beyond the counters.
    #[default]
    Off,
    /// What the server's sessions wait on, from the database itself.
    Waits,
    /// The waits, and the server's CPU profile sampled with Linux perf.
    Perf,
}

choice_flags!(
    Profile,
    Pacing,
    Distribution,
    Statements,
    DataMode,
    MaintenanceStyle,
    Compat,
    VerifyMode,
    crate::gen::Alphabet,
    crate::gen::ValueSource,
);
super::params::plain_params!(Shard);

/// The steps of a run, in order: `l.i0,l.x,qr100` as a flag, a list in JSON.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct StepList(pub Vec<Step>);

impl std::str::FromStr for StepList {
    type Err = String;
    fn from_str(text: &str) -> std::result::Result<StepList, String> {
        steps_named(text.split(',')).map(StepList)
    }
}

/// The steps `names` name, a suite's name (`sysbench`, `sysbench-long`)
/// standing for its steps.
fn steps_named<'a>(names: impl IntoIterator<Item = &'a str>) -> std::result::Result<Vec<Step>, String> {
    let mut steps = Vec::new();
    for name in names {
        match super::sysbench::SUITE_ALIASES
            .iter()
            .find(|(alias, _)| *alias == name.trim())
        {
            Some((_, suite)) => {
                for step in suite.iter() {
                    steps.push(step.parse()?);
                }
            }
            None => steps.push(name.parse()?),
        }
    }
    Ok(steps)
}

impl super::params::Param for Vec<Step> {
    type Flag = StepList;
    fn from_flag(flag: StepList) -> Self {
        flag.0
    }
    fn from_json(value: serde_json::Value) -> std::result::Result<Self, String> {
        match value {
            serde_json::Value::String(text) => text.parse::<StepList>().map(|s| s.0),
            v => steps_named(
                super::params::deserialized::<Vec<String>>(v)?
                    .iter()
                    .map(String::as_str),
            ),
        }
    }
}

/// Options per key/value step: `STEP:OPTIONS[;STEP:OPTIONS...]` as a flag
/// (`fillseq:wal=off&memtable_factory=vector`), a table in JSON.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct StepOptions(pub std::collections::BTreeMap<String, String>);

impl std::str::FromStr for StepOptions {
    type Err = String;
    fn from_str(text: &str) -> std::result::Result<StepOptions, String> {
        text.split(';')
            .filter(|s| !s.trim().is_empty())
            .map(|s| {
                s.split_once(':')
                    .map(|(step, options)| (step.trim().to_string(), options.trim().to_string()))
                    .ok_or_else(|| format!("{s:?}: expected STEP:OPTIONS, such as fillseq:wal=off"))
            })
            .collect::<std::result::Result<_, _>>()
            .map(StepOptions)
    }
}

impl super::params::Param for std::collections::BTreeMap<String, String> {
    type Flag = StepOptions;
    fn from_flag(flag: StepOptions) -> Self {
        flag.0
    }
    fn from_json(value: serde_json::Value) -> std::result::Result<Self, String> {
        super::params::deserialized(value)
    }
}
