//! The steps of every family: the Insert Benchmark's, db_bench's key/value
//! steps, and the sysbench suite's (`sysbench.rs`).

use super::sysbench::{self, SbStep};
use crate::error::{Error, Result};
use std::fmt;

/// Which query a q step runs.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum QueryKind {
    /// Covering range queries on a secondary index (`qr` steps).
    Range,
    /// 10-key primary-key multi-gets (`qp` steps).
    Point,
}

/// One step of the benchmark (reference.md §1).
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Step {
    /// `l.i0`: load in key order with only the primary key.
    LoadI0,
    /// `l.x`: create the secondary indexes.
    CreateIndexes,
    /// `l.i1`: insert (and delete, with delete_per_insert) with indexes.
    LoadI1,
    /// `l.i2`: like l.i1 with smaller commits.
    LoadI2,
    /// `wait`: maintenance, then sleep.
    Wait,
    /// `qr<rate>` / `qp<rate>`: queries as fast as possible, with background
    /// inserts (and deletes) at `rate` rows/s per client.
    Query {
        /// Range or point queries.
        kind: QueryKind,
        /// Background rows per second per client.
        rate: u32,
    },
    /// A db_bench-style key/value step (reference.md §2).
    Kv(KvOp),
    /// A step of the sysbench suite (research/sysbench.md).
    Sysbench(SbStep),
}

/// The key/value steps, named as in db_bench.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum KvOp {
    /// Keys 0..num in order into an empty table, threads on disjoint ranges.
    FillSeq,
    /// `writes` uniform random keys of [0, num) into an empty table.
    FillRandom,
    /// Each key of [0, num) once, in a pseudo-random order, into an empty table.
    FillUniqueRandom,
    /// `writes` uniform random keys (or for `duration` seconds).
    Overwrite,
    /// `overwritesome_writes` uniform random keys: fragments the LSM tree.
    OverwriteSome,
    /// Overwrite (by count or `duration`), then wait for compaction; rates
    /// count the writing only.
    OverwriteAndWait,
    /// `reads` point reads of uniform random keys (or for `duration` seconds).
    ReadRandom,
    /// `reads` seeks to uniform random keys, each followed by `seek_nexts` nexts.
    SeekRandom,
    /// Readers as readrandom, plus one writer paced at `writer_rate` keys/s.
    ReadWhileWriting,
    /// Flush the memtable (checkpoint a SQL database).
    Flush,
    /// Wait until no compaction is pending or running (SQL: the wait step's maintenance).
    WaitForCompaction,
    /// `reads` pairs in key order, each thread from the start of its share
    /// of the key space, in scans of [`SCAN_CHUNK`] pairs.
    ReadSeq,
    /// `reads` pairs in descending key order, each thread from the end of
    /// its share of the key space, in scans of [`SCAN_CHUNK`] pairs.
    ReadReverse,
    /// `reads` point reads as readrandom, `batch_size` keys per MultiGet.
    MultiReadRandom,
    /// benchmark.sh's fwdrange: seekrandom (a seek, then `seek_nexts` nexts).
    FwdRange,
    /// benchmark.sh's revrange: a seek for the last key ≤ a random key, then
    /// `seek_nexts` prevs (db_bench `seekrandom --reverse_iterator`).
    RevRange,
    /// Deletes keys 0..num in order, threads on disjoint ranges, `batch_size` per commit.
    DeleteSeq,
    /// Deletes `writes` keys drawn from the distribution, `batch_size` per commit.
    DeleteRandom,
    /// `writes` read-modify-writes: a get, then a put of the key's new value.
    UpdateRandom,
    /// `writes` merges of keys drawn from the distribution, `batch_size` per
    /// commit, with the put merge operator (the last operand wins; db_bench
    /// `--merge_operator=put`).
    MergeRandom,
}

/// Pairs per scan of readseq and readreverse: one scan is one recorded operation.
pub const SCAN_CHUNK: usize = 1000;

impl KvOp {
    /// Every key/value step.
    pub const ALL: [KvOp; 20] = [
        KvOp::FillSeq,
        KvOp::FillRandom,
        KvOp::FillUniqueRandom,
        KvOp::Overwrite,
        KvOp::OverwriteSome,
        KvOp::OverwriteAndWait,
        KvOp::ReadRandom,
        KvOp::SeekRandom,
        KvOp::ReadWhileWriting,
        KvOp::Flush,
        KvOp::WaitForCompaction,
        KvOp::ReadSeq,
        KvOp::ReadReverse,
        KvOp::MultiReadRandom,
        KvOp::FwdRange,
        KvOp::RevRange,
        KvOp::DeleteSeq,
        KvOp::DeleteRandom,
        KvOp::UpdateRandom,
        KvOp::MergeRandom,
    ];

    /// The step's name.
    pub fn name(self) -> &'static str {
        match self {
            KvOp::FillSeq => "fillseq",
            KvOp::FillRandom => "fillrandom",
            KvOp::FillUniqueRandom => "filluniquerandom",
            KvOp::Overwrite => "overwrite",
            KvOp::OverwriteSome => "overwritesome",
            KvOp::OverwriteAndWait => "overwriteandwait",
            KvOp::ReadRandom => "readrandom",
            KvOp::SeekRandom => "seekrandom",
            KvOp::ReadWhileWriting => "readwhilewriting",
            KvOp::Flush => "flush",
            KvOp::WaitForCompaction => "waitforcompaction",
            KvOp::ReadSeq => "readseq",
            KvOp::ReadReverse => "readreverse",
            KvOp::MultiReadRandom => "multireadrandom",
            KvOp::FwdRange => "fwdrange",
            KvOp::RevRange => "revrange",
            KvOp::DeleteSeq => "deleteseq",
            KvOp::DeleteRandom => "deleterandom",
            KvOp::UpdateRandom => "updaterandom",
            KvOp::MergeRandom => "mergerandom",
        }
    }

    /// True for the steps that start from an empty table.
    pub fn fills(self) -> bool {
        matches!(self, KvOp::FillSeq | KvOp::FillRandom | KvOp::FillUniqueRandom)
    }

    /// True for the steps that write (or delete) pairs.
    pub fn writes(self) -> bool {
        // readwhilewriting's writer writes.
        self == KvOp::ReadWhileWriting || !(self.reads() || self.maintains())
    }

    /// True for the steps whose operations are reads (counted as queries).
    pub fn reads(self) -> bool {
        matches!(
            self,
            KvOp::ReadRandom
                | KvOp::SeekRandom
                | KvOp::ReadWhileWriting
                | KvOp::ReadSeq
                | KvOp::ReadReverse
                | KvOp::MultiReadRandom
                | KvOp::FwdRange
                | KvOp::RevRange
        )
    }

    /// True for the steps that delete pairs (counted as deletes).
    pub fn deletes(self) -> bool {
        matches!(self, KvOp::DeleteSeq | KvOp::DeleteRandom)
    }

    /// True for flush and waitforcompaction: one maintenance call.
    pub fn maintains(self) -> bool {
        matches!(self, KvOp::Flush | KvOp::WaitForCompaction)
    }
}

/// The published sequence.
pub const STANDARD_STEPS: [&str; 11] = [
    "l.i0", "l.x", "l.i1", "l.i2", "wait", "qr100", "qp100", "qr500", "qp500", "qr1000", "qp1000",
];

/// The published sequence, parsed.
pub(crate) fn standard_steps() -> Vec<Step> {
    STANDARD_STEPS
        .iter()
        .map(|s| s.parse().expect("a standard step"))
        .collect()
}

impl Step {
    /// Parses a step name: `l.i0`, `l.x`, `l.i1`, `l.i2`, `wait`, `qrN`, `qpN` (N > 0).
    pub fn parse(name: &str) -> Result<Step> {
        name.parse()
            .map_err(|message| Error::config(super::param!(steps), message))
    }

    /// True for steps that insert or delete rows (checked by verify afterwards).
    pub fn writes(&self) -> bool {
        match self {
            Step::CreateIndexes | Step::Wait => false,
            Step::Kv(op) => op.writes(),
            Step::Sysbench(s) => s.writes(),
            _ => true,
        }
    }

    /// The sysbench step, if this is one.
    pub fn sb(&self) -> Option<SbStep> {
        match self {
            Step::Sysbench(s) => Some(*s),
            _ => None,
        }
    }

    /// True for the Insert Benchmark's steps (their tables are `pi1`, ...).
    pub fn insert_benchmark(&self) -> bool {
        !matches!(self, Step::Kv(_) | Step::Sysbench(_))
    }

    /// The key/value step, if this is one.
    pub fn kv(&self) -> Option<KvOp> {
        match self {
            Step::Kv(op) => Some(*op),
            _ => None,
        }
    }
}

/// What each client of a write step writes: rows to insert, rows per
/// commit, and the background rate (rows/s) of a q step.
#[derive(Clone, Copy, Debug, PartialEq)]
pub struct Writes {
    /// Rows each client inserts (and, with deletes, deletes).
    pub rows: u64,
    /// Rows per insert and delete commit.
    pub rows_per_commit: u32,
    /// Rows per second per client (q steps); None: as fast as possible.
    pub rate: Option<u32>,
}

impl super::Config {
    /// What each client of `step` writes; None for steps that insert no rows.
    pub fn writes(&self, step: Step) -> Option<Writes> {
        let (rows, rows_per_commit, rate) = match step {
            Step::LoadI0 => (self.rows_l_i0, self.rows_per_commit_l_i0, None),
            Step::LoadI1 => (self.rows_l_i1, self.rows_per_commit_l_i1, None),
            Step::LoadI2 => (self.rows_l_i2, self.rows_per_commit_l_i2, None),
            Step::Query { rate, .. } => (
                (self.query_seconds * rate as f64).round().max(1.0) as u64,
                self.rows_per_commit_q,
                Some(rate),
            ),
            Step::CreateIndexes | Step::Wait | Step::Kv(_) | Step::Sysbench(_) => return None,
        };
        Some(Writes {
            rows,
            rows_per_commit,
            rate,
        })
    }

    /// True when `step` deletes from the tail as it inserts.
    pub fn deletes(&self, step: Step) -> bool {
        self.delete_per_insert && matches!(step, Step::LoadI1 | Step::LoadI2 | Step::Query { .. })
    }
}

fn unknown(name: &str) -> String {
    format!(
        "unknown step {name:?}; expected l.i0, l.x, l.i1, l.i2, wait, qrN or qpN (N rows/s, e.g. qr100), a key/value step ({}), or a sysbench step (load, create-index, postwrite[.N], or a microbenchmark: {}, with .pre or .warm and _range=N where it takes a size; `sysbench` and `sysbench-long` name the whole suites)",
        KvOp::ALL.map(|k| k.name()).join(", "),
        sysbench::SbTest::ALL.map(|t| t.name()).join(", ")
    )
}

impl std::str::FromStr for Step {
    type Err = String;
    fn from_str(name: &str) -> std::result::Result<Step, String> {
        let step = match name.trim() {
            "l.i0" => Step::LoadI0,
            "l.x" => Step::CreateIndexes,
            "l.i1" => Step::LoadI1,
            "l.i2" => Step::LoadI2,
            "wait" => Step::Wait,
            name => match KvOp::ALL.iter().find(|k| k.name() == name) {
                Some(&op) => Step::Kv(op),
                None => match sysbench::parse(name) {
                    Some(sb) => Step::Sysbench(sb?),
                    None => query_step(name)?,
                },
            },
        };
        Ok(step)
    }
}

/// `qrN` or `qpN`.
fn query_step(name: &str) -> std::result::Result<Step, String> {
    let kind = match name.get(..2) {
        Some("qr") => QueryKind::Range,
        Some("qp") => QueryKind::Point,
        _ => return Err(unknown(name)),
    };
    let rate: u32 = name[2..].parse().map_err(|_| unknown(name))?;
    if rate == 0 {
        return Err(format!("{name}: the background rate must be > 0"));
    }
    Ok(Step::Query { kind, rate })
}

impl serde::Serialize for Step {
    fn serialize<S: serde::Serializer>(&self, s: S) -> std::result::Result<S::Ok, S::Error> {
        s.collect_str(self)
    }
}

impl<'de> serde::Deserialize<'de> for Step {
    fn deserialize<D: serde::Deserializer<'de>>(d: D) -> std::result::Result<Step, D::Error> {
        let name = String::deserialize(d)?;
        name.parse().map_err(serde::de::Error::custom)
    }
}

impl fmt::Display for Step {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self {
            Step::LoadI0 => f.write_str("l.i0"),
            Step::CreateIndexes => f.write_str("l.x"),
            Step::LoadI1 => f.write_str("l.i1"),
            Step::LoadI2 => f.write_str("l.i2"),
            Step::Wait => f.write_str("wait"),
            Step::Query {
                kind: QueryKind::Range,
                rate,
            } => write!(f, "qr{rate}"),
            Step::Query {
                kind: QueryKind::Point,
                rate,
            } => write!(f, "qp{rate}"),
            Step::Kv(op) => f.write_str(op.name()),
            Step::Sysbench(s) => s.fmt(f),
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn every_standard_step_parses_and_prints_back() {
        for name in STANDARD_STEPS {
            assert_eq!(Step::parse(name).unwrap().to_string(), name);
        }
        for op in KvOp::ALL {
            assert_eq!(Step::parse(op.name()).unwrap(), Step::Kv(op));
            assert_eq!(Step::Kv(op).to_string(), op.name());
        }
        assert_eq!(
            Step::parse("qp2500").unwrap(),
            Step::Query {
                kind: QueryKind::Point,
                rate: 2500
            }
        );
    }

    #[test]
    fn unknown_steps_and_zero_rates_are_errors_naming_steps() {
        for bad in ["l.i3", "qr", "qrx", "qr0", "q100", ""] {
            let e = Step::parse(bad).unwrap_err().to_string();
            assert!(e.starts_with("invalid steps:"), "{e}");
        }
    }
}
