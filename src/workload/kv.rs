//! What each thread of a key/value step writes or reads: its key stream and
//! how many operations, and the values a step writes.
//!
//! The contract (tests regenerate from it): step number `s` (its position in
//! the run, from 0) writes the values of [`KvValues`] version `s`. Thread `t`
//! of `T` gets share `t` of a count `n` — `n·(t+1)/T − n·t/T` — so fills
//! cover `[0, num)` exactly once between them:
//! - fillseq: keys `first, first + 1, ...` from `first = num·t/T`;
//! - filluniquerandom: positions `num·t/T ...` of the keyed permutation of
//!   `[0, num)` with stream table [`kv_stream`]`(s, 0)`;
//! - fillrandom: uniform keys of `[0, num)`; overwrite*, deleterandom,
//!   updaterandom, mergerandom, the point and range readers and
//!   readwhilewriting's writer (thread `T`): keys of `[0, num)` drawn from
//!   `distribution` (uniform, zipfian or latest, exponent `zipf_theta`);
//!   either way draws `0, 1, ...` of stream table [`kv_stream`]`(s, t)`;
//! - deleteseq: as fillseq, deleting;
//! - readseq: share `t` of `reads` pairs in key order from key `num·t/T`;
//!   readreverse: the same count in descending order from key
//!   `num·(t+1)/T − 1` (a scan that reaches the end of the table ends the
//!   thread early).

use super::{Config, KvOp};
use crate::error::Result;
use crate::gen::{KeyGen, KeyKind, KeySpec, KvValues, Length};

/// Key streams of key/value steps are numbered from here, apart from the
/// Insert Benchmark's tables.
pub const KV_STREAMS: u64 = 1 << 40;

/// The stream table of thread `thread` in step number `ordinal`.
pub fn kv_stream(ordinal: u64, thread: u64) -> u64 {
    KV_STREAMS + ordinal * 4096 + thread
}

/// Share `t` of `n` split over `threads`: `n·(t+1)/T − n·t/T`.
pub fn share(n: u64, t: u64, threads: u64) -> (u64, u64) {
    let at = |i: u64| ((n as u128 * i as u128) / threads as u128) as u64;
    (at(t), at(t + 1) - at(t))
}

/// One thread's part of a key/value step.
#[derive(Clone, Debug)]
pub struct KvThreadWork {
    /// The key stream.
    pub keys: KeyGen,
    /// The stream index of the first operation.
    pub first: u64,
    /// Operations; None: until `duration` passes (or, for readwhilewriting's
    /// writer, until the readers finish).
    pub count: Option<u64>,
}

impl Config {
    /// The value lengths of the key/value steps.
    pub fn kv_length(&self) -> Length {
        let [min, max] = self.value_size;
        if min == max {
            Length::Fixed(min)
        } else {
            Length::Uniform { min, max }
        }
    }

    /// Pairs per commit of write step `op`: `batch_size`, but one for
    /// updaterandom (a read, then a write of that key, as db_bench's).
    pub fn kv_batch(&self, op: KvOp) -> u32 {
        if op == KvOp::UpdateRandom {
            1
        } else {
            self.batch_size
        }
    }

    /// The values step number `ordinal` writes.
    pub fn kv_values(&self, ordinal: u64) -> Result<KvValues> {
        KvValues::new(
            self.seed,
            ordinal,
            self.kv_length(),
            self.ratio,
            self.value_alphabet,
            self.value_source,
        )
    }

    /// Thread `thread`'s keys of `[0, num)` drawn from `kind`.
    fn drawn(&self, kind: KeyKind, ordinal: u64, thread: u64) -> Result<KeyGen> {
        KeyGen::new(&KeySpec {
            space: Some(self.num),
            seed: self.seed,
            table: kv_stream(ordinal, thread),
            theta: self.zipf_theta,
            ..KeySpec::new(kind)
        })
    }

    /// The keys of reads and overwrites: the configured distribution.
    fn picked(&self, ordinal: u64, thread: u64) -> Result<KeyGen> {
        self.drawn(self.distribution.kind(), ordinal, thread)
    }

    /// What writer `thread` of `op` (step number `ordinal`) writes; None for
    /// steps that do not write.
    pub fn kv_writer(&self, op: KvOp, ordinal: u64, thread: u64) -> Result<Option<KvThreadWork>> {
        let threads = self.threads as u64;
        let timed = |n: u64| if self.duration.is_some() { None } else { Some(n) };
        let work = match op {
            KvOp::FillSeq | KvOp::DeleteSeq => {
                let (first, n) = share(self.num, thread, threads);
                KvThreadWork {
                    keys: KeyGen::new(&KeySpec::new(KeyKind::Sequential))?,
                    first,
                    count: Some(n),
                }
            }
            KvOp::FillUniqueRandom => {
                let (first, n) = share(self.num, thread, threads);
                KvThreadWork {
                    keys: KeyGen::new(&KeySpec {
                        space: Some(self.num),
                        seed: self.seed,
                        table: kv_stream(ordinal, 0),
                        ..KeySpec::new(KeyKind::Unique)
                    })?,
                    first,
                    count: Some(n),
                }
            }
            KvOp::FillRandom
            | KvOp::Overwrite
            | KvOp::OverwriteAndWait
            | KvOp::OverwriteSome
            | KvOp::DeleteRandom
            | KvOp::UpdateRandom
            | KvOp::MergeRandom => {
                let total = match op {
                    KvOp::OverwriteSome => self.overwritesome_writes.unwrap_or((self.num / 10).max(1)),
                    _ => self.writes.unwrap_or(self.num),
                };
                let n = share(total, thread, threads).1;
                // fillrandom is uniform, as db_bench's; overwrites follow the distribution.
                let keys = match op {
                    KvOp::FillRandom => self.drawn(KeyKind::Uniform, ordinal, thread)?,
                    _ => self.picked(ordinal, thread)?,
                };
                KvThreadWork {
                    keys,
                    first: 0,
                    count: match op {
                        KvOp::FillRandom | KvOp::OverwriteSome => Some(n),
                        _ => timed(n),
                    },
                }
            }
            KvOp::ReadWhileWriting => KvThreadWork {
                keys: self.picked(ordinal, threads)?,
                first: 0,
                count: None,
            },
            _ => return Ok(None),
        };
        Ok(Some(work))
    }

    /// Operations a key/value step will run in all, when known: pairs
    /// written, or reads for the read steps (None: a flush or compaction
    /// wait, or a step that runs for a duration).
    pub fn kv_planned(&self, op: KvOp) -> Option<u64> {
        let threads = self.threads as u64;
        match op {
            _ if op.maintains() => None,
            _ if op.reads() => (0..threads).map(|t| self.kv_reader(op, 0, t).ok()?.count).sum(),
            _ => (0..threads).map(|t| self.kv_writer(op, 0, t).ok()??.count).sum(),
        }
    }

    /// What reader `thread` of read step `op` (step number `ordinal`)
    /// reads. readseq and readreverse: `first` is the key they start from
    /// (their keys are the table's, in order).
    pub fn kv_reader(&self, op: KvOp, ordinal: u64, thread: u64) -> Result<KvThreadWork> {
        let threads = self.threads as u64;
        let n = share(self.reads.unwrap_or(self.num), thread, threads).1;
        let count = if self.duration.is_some() { None } else { Some(n) };
        let (from, len) = share(self.num, thread, threads);
        Ok(match op {
            KvOp::ReadSeq | KvOp::ReadReverse => KvThreadWork {
                keys: KeyGen::new(&KeySpec::new(KeyKind::Sequential))?,
                first: if op == KvOp::ReadSeq {
                    from
                } else {
                    (from + len).saturating_sub(1)
                },
                count,
            },
            _ => KvThreadWork {
                keys: self.picked(ordinal, thread)?,
                first: 0,
                count,
            },
        })
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn shares_cover_the_count_exactly_once() {
        for (n, t) in [(10u64, 3u64), (1, 1), (1_000_003, 7), (5, 5)] {
            let mut next = 0;
            for i in 0..t {
                let (first, len) = share(n, i, t);
                assert_eq!(first, next);
                next += len;
            }
            assert_eq!(next, n);
        }
    }

    #[test]
    fn fill_threads_write_disjoint_keys_covering_the_space() {
        let mut c = Config::preset("kv-quick").unwrap();
        c.num = 1000;
        c.threads = 3;
        for op in [KvOp::FillSeq, KvOp::FillUniqueRandom] {
            let mut seen = vec![false; 1000];
            for t in 0..3 {
                let w = c.kv_writer(op, 0, t).unwrap().unwrap();
                let mut keys = vec![0; w.count.unwrap() as usize];
                w.keys.fill(w.first, &mut keys);
                for k in keys {
                    assert!(!seen[k as usize], "{op:?} writes {k} twice");
                    seen[k as usize] = true;
                }
            }
            assert!(seen.iter().all(|&s| s), "{op:?}");
        }
    }
}
