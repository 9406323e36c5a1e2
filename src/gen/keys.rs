//! Key distributions and the key encoding.
//!
//! Every kind maps a draw index to a key in `[0, space)`; draws with the same
//! `(seed, table, index)` give the same key whatever the batch or thread count.

use super::parallel::{par_fill, try_resize, try_vec, CHUNK};
use super::permutation::Permutation;
use super::stream::{below, block_spans, Purpose, Stream, StreamRng, BLOCK};
use super::zipf::ZipfRanks;
use crate::error::{Error, Result};
use rayon::prelude::*;
use std::fmt;
use std::str::FromStr;

/// The key distributions.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum KeyKind {
    /// `offset, offset + 1, ...` (db_bench fillseq; the Insert Benchmark's PK).
    Sequential,
    /// Uniform in `[0, space)` with replacement (db_bench fillrandom/overwrite).
    Uniform,
    /// Each key of `[0, space)` once, in a pseudo-random order (a keyed bijection).
    Unique,
    /// Zipfian ranks (exponent `theta`) spread over `[0, space)` by the same
    /// bijection as `unique`, so hot keys are scattered without YCSB's
    /// hash-and-fold distortion.
    Zipfian,
    /// Zipfian ranks counted down from the head of `[0, space)`: key
    /// `space - 1` is the hottest (YCSB's "latest").
    Latest,
}

impl KeyKind {
    /// Every kind, in documentation order.
    pub const ALL: [KeyKind; 5] = [
        KeyKind::Sequential,
        KeyKind::Uniform,
        KeyKind::Unique,
        KeyKind::Zipfian,
        KeyKind::Latest,
    ];

    /// The name used by the CLI and Python.
    pub fn name(self) -> &'static str {
        match self {
            KeyKind::Sequential => "sequential",
            KeyKind::Uniform => "uniform",
            KeyKind::Unique => "unique",
            KeyKind::Zipfian => "zipfian",
            KeyKind::Latest => "latest",
        }
    }
}

impl fmt::Display for KeyKind {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(self.name())
    }
}

impl FromStr for KeyKind {
    type Err = Error;
    fn from_str(s: &str) -> Result<Self> {
        KeyKind::ALL.into_iter().find(|k| k.name() == s).ok_or_else(|| {
            let names: Vec<_> = KeyKind::ALL.iter().map(|k| k.name()).collect();
            Error::config(
                "kind",
                format!("unknown key kind {s:?}; expected one of {}", names.join(", ")),
            )
        })
    }
}

/// What to generate: a key kind and its parameters.
#[derive(Clone, Debug, PartialEq)]
pub struct KeySpec {
    /// The distribution.
    pub kind: KeyKind,
    /// Keys are in `[0, space)`; required for every kind but `sequential`.
    pub space: Option<u64>,
    /// Zipf exponent for `zipfian` and `latest`.
    pub theta: f64,
    /// The run's seed.
    pub seed: u64,
    /// Which table (or thread) the stream belongs to.
    pub table: u64,
}

impl KeySpec {
    /// A spec with the defaults: no space, theta 0.99, seed 0, table 0.
    pub fn new(kind: KeyKind) -> Self {
        KeySpec {
            kind,
            space: None,
            theta: 0.99,
            seed: 0,
            table: 0,
        }
    }
}

#[derive(Clone, Debug)]
enum Dist {
    Sequential { space: Option<u64> },
    Uniform { n: u64 },
    Unique(Permutation),
    Zipfian { ranks: ZipfRanks, spread: Permutation },
    Latest { ranks: ZipfRanks, n: u64 },
}

/// A validated key generator.
///
/// ```
/// use ibench::gen::{KeyGen, KeyKind, KeySpec};
/// let spec = KeySpec { space: Some(1000), ..KeySpec::new(KeyKind::Uniform) };
/// let keys = KeyGen::new(&spec)?.generate(0, 5)?;
/// assert_eq!(keys, KeyGen::new(&spec)?.generate(0, 5)?);
/// assert!(keys.iter().all(|&k| k < 1000));
/// # Ok::<(), ibench::Error>(())
/// ```
#[derive(Clone, Debug)]
pub struct KeyGen {
    dist: Dist,
    stream: Stream,
}

impl KeyGen {
    /// Checks `spec` and prepares the generator.
    pub fn new(spec: &KeySpec) -> Result<Self> {
        let space = || match spec.space {
            Some(0) => Err(Error::config("space", "must be at least 1")),
            Some(n) => Ok(n),
            None => Err(Error::config(
                "space",
                format!("is required for {} keys (keys are drawn from [0, space))", spec.kind),
            )),
        };
        let ranks = |n| {
            if spec.theta.is_finite() && spec.theta > 0.0 {
                Ok(ZipfRanks::new(n, spec.theta))
            } else {
                Err(Error::config(
                    "theta",
                    format!("must be a finite number > 0, got {}", spec.theta),
                ))
            }
        };
        let dist = match spec.kind {
            KeyKind::Sequential => Dist::Sequential { space: spec.space },
            KeyKind::Uniform => Dist::Uniform { n: space()? },
            KeyKind::Unique => Dist::Unique(Permutation::new(space()?, spec.seed, spec.table)),
            KeyKind::Zipfian => {
                let n = space()?;
                Dist::Zipfian {
                    ranks: ranks(n)?,
                    spread: Permutation::new(n, spec.seed, spec.table),
                }
            }
            KeyKind::Latest => {
                let n = space()?;
                Dist::Latest { ranks: ranks(n)?, n }
            }
        };
        Ok(KeyGen {
            dist,
            stream: Stream::new(spec.seed, spec.table, Purpose::Key),
        })
    }

    /// Checks that draws `start..start + count` exist: no overflow, and for
    /// `sequential` with a space and `unique`, no more keys than the space holds.
    pub fn check_range(&self, start: u64, count: u64) -> Result<()> {
        let end = start.checked_add(count).ok_or_else(|| {
            Error::config(
                "count",
                format!("offset {start} + count {count} overflows a 64-bit index"),
            )
        })?;
        let limit = match &self.dist {
            Dist::Sequential { space: Some(n) } => Some(*n),
            Dist::Unique(p) => Some(p.len()),
            _ => None,
        };
        match limit {
            Some(n) if end > n => Err(Error::config(
                "count",
                format!("offset {start} + count {count} exceeds space {n}: these keys are distinct, so at most space of them exist"),
            )),
            _ => Ok(()),
        }
    }

    #[inline]
    fn draw(&self, rng: &mut StreamRng) -> u64 {
        match &self.dist {
            Dist::Uniform { n } => below(rng, *n),
            Dist::Zipfian { ranks, spread } => spread.apply(ranks.sample(rng)),
            Dist::Latest { ranks, n } => n - 1 - ranks.sample(rng),
            Dist::Sequential { .. } | Dist::Unique(_) => {
                unreachable!("index-addressed kinds draw nothing")
            }
        }
    }

    /// Writes keys `start..start + out.len()` into `out` on this thread.
    /// The caller has checked the range with [`KeyGen::check_range`].
    pub fn fill(&self, start: u64, out: &mut [u64]) {
        match &self.dist {
            Dist::Sequential { .. } => {
                for (i, o) in out.iter_mut().enumerate() {
                    *o = start + i as u64;
                }
            }
            Dist::Unique(p) => {
                for (i, o) in out.iter_mut().enumerate() {
                    *o = p.apply(start + i as u64);
                }
            }
            _ => {
                for span in block_spans(start, out.len()) {
                    let mut rng = self.rng_at(span.block * BLOCK + span.skip as u64);
                    for o in &mut out[span.out] {
                        *o = self.draw(&mut rng);
                    }
                }
            }
        }
    }

    /// A random kind's generator positioned to draw key `index`: its
    /// block's generator with the draws before it in the block replayed.
    fn rng_at(&self, index: u64) -> StreamRng {
        let mut rng = self.stream.block_rng(index / BLOCK);
        for _ in 0..index % BLOCK {
            self.draw(&mut rng);
        }
        rng
    }

    /// Keys `start..start + count`, generated in parallel on the current rayon pool.
    pub fn generate(&self, start: u64, count: usize) -> Result<Vec<u64>> {
        let mut out = Vec::new();
        self.generate_into(start, count, &mut out)?;
        Ok(out)
    }

    /// Like [`KeyGen::generate`], reusing the memory of `out`.
    pub fn generate_into(&self, start: u64, count: usize, out: &mut Vec<u64>) -> Result<()> {
        self.check_range(start, count as u64)?;
        try_resize(out, count, "count")?;
        par_fill(start, out, |s, chunk| self.fill(s, chunk));
        Ok(())
    }

    /// Key number `index` alone (a random kind replays up to a block of
    /// draws to reach it: for keys one after another, [`KeyGen::cursor`]).
    pub fn key(&self, index: u64) -> u64 {
        let mut k = [0];
        self.fill(index, &mut k);
        k[0]
    }

    /// Keys `start, start + 1, ...` one at a time, the very keys
    /// [`KeyGen::fill`] gives, at one draw each: the per-operation paths
    /// take one key per operation, where `fill` of a single key would
    /// replay on average half a block of draws to reach it.
    ///
    /// ```
    /// use ibench::gen::{KeyGen, KeyKind, KeySpec};
    /// let g = KeyGen::new(&KeySpec { space: Some(1000), ..KeySpec::new(KeyKind::Uniform) })?;
    /// let mut c = g.cursor(300);
    /// let one_by_one: Vec<u64> = (0..600).map(|_| c.next_key()).collect();
    /// assert_eq!(one_by_one, g.generate(300, 600)?);
    /// # Ok::<(), ibench::Error>(())
    /// ```
    pub fn cursor(&self, start: u64) -> KeyCursor<'_> {
        KeyCursor {
            keys: self,
            next: start,
            rng: None,
        }
    }
}

/// Keys one after another from a [`KeyGen`] (see [`KeyGen::cursor`]).
#[derive(Debug)]
pub struct KeyCursor<'a> {
    keys: &'a KeyGen,
    next: u64,
    /// The random kinds' generator, positioned at draw `next` of its block.
    rng: Option<StreamRng>,
}

impl KeyCursor<'_> {
    /// The next key.
    #[inline]
    pub fn next_key(&mut self) -> u64 {
        let index = self.next;
        self.next += 1;
        match &self.keys.dist {
            Dist::Sequential { .. } => index,
            Dist::Unique(p) => p.apply(index),
            _ => {
                if self.rng.is_none() || index.is_multiple_of(BLOCK) {
                    self.rng = Some(self.keys.rng_at(index));
                }
                let rng = self.rng.as_mut().expect("positioned above");
                self.keys.draw(rng)
            }
        }
    }
}

/// Checks a key size: at least 8 bytes, so a u64 key is never truncated.
pub fn check_key_size(key_size: usize) -> Result<()> {
    if key_size < 8 {
        return Err(Error::config(
            "key_size",
            format!("must be at least 8 bytes (a 64-bit key is never truncated), got {key_size}"),
        ));
    }
    Ok(())
}

/// Writes `key` big-endian into `out`, left-padded with zeros to `out.len()`
/// (≥ 8) bytes, so byte order equals numeric order.
///
/// ```
/// let mut buf = [0xffu8; 10];
/// ibench::gen::encode_key(258, &mut buf);
/// assert_eq!(buf, [0, 0, 0, 0, 0, 0, 0, 0, 1, 2]);
/// ```
#[inline]
pub fn encode_key(key: u64, out: &mut [u8]) {
    let pad = out.len() - 8;
    out[..pad].fill(0);
    out[pad..].copy_from_slice(&key.to_be_bytes());
}

/// Encodes `keys` as consecutive `key_size`-byte big-endian strings.
pub fn encode_keys(keys: &[u64], key_size: usize) -> Result<Vec<u8>> {
    check_key_size(key_size)?;
    let total = keys.len().checked_mul(key_size).ok_or_else(|| {
        Error::config(
            "count",
            format!("{} keys of {key_size} bytes overflow memory", keys.len()),
        )
    })?;
    let mut out = try_vec::<u8>(total, "count")?;
    out.par_chunks_exact_mut(key_size)
        .zip(keys.par_iter())
        .with_min_len(CHUNK)
        .for_each(|(o, &k)| encode_key(k, o));
    Ok(out)
}
