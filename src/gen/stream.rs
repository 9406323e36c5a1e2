//! Seeded random streams with random access.
//!
//! A [`Stream`] is named by `(seed, table, purpose)`. Its elements (keys, rows,
//! values, queries) are grouped in blocks of [`BLOCK`] consecutive indexes, and
//! each block has its own xoshiro256++ generator seeded by SplitMix64 from
//! `(seed, table, purpose, block)`. Element `i` therefore depends only on the
//! stream and `i`: any range can be generated alone, in any batch size, on any
//! number of threads, and gives the same bytes.

use rand_core::{Rng, SeedableRng};
use rand_xoshiro::Xoshiro256PlusPlus;
use std::ops::Range;

/// Elements per block: each block starts a fresh generator, so generating from
/// an arbitrary index costs at most `BLOCK - 1` skipped elements.
pub const BLOCK: u64 = 256;

/// The generator behind every stream.
pub type StreamRng = Xoshiro256PlusPlus;

/// What a stream is used for; each purpose draws from independent randomness.
///
/// The discriminants are part of the determinism contract: changing one
/// changes generated data.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
#[repr(u64)]
pub enum Purpose {
    /// Keys drawn by a key distribution.
    Key = 1,
    /// Random bytes of values.
    Value = 2,
    /// Lengths of variable-length values.
    ValueLength = 3,
    /// Insert Benchmark row columns and the random part of `data`.
    Row = 4,
    /// Lengths of the Insert Benchmark `data` column.
    RowDataLength = 5,
    /// Point-query keys.
    PointQuery = 6,
    /// Range-query parameters.
    RangeQuery = 7,
    /// Keys of a keyed permutation (not a stream of draws, a key for a bijection).
    Permutation = 8,
    /// Values of the key/value steps, one generator per key.
    KvValue = 9,
    /// The pool key/value values are sliced from (`value_source = "pool"`),
    /// and the offsets' hash key.
    KvValuePool = 10,
    /// The sysbench tables' `c` and `pad`.
    SbRow = 11,
    /// What the sysbench events bind: tables, ids, new values.
    SbEvent = 12,
}

/// A deterministic random stream named by `(seed, table, purpose)`.
///
/// ```
/// use ibench::gen::{Purpose, Stream};
/// use rand_core::Rng;
/// let s = Stream::new(42, 0, Purpose::Key);
/// assert_eq!(s.block_rng(3).next_u64(), s.block_rng(3).next_u64());
/// assert_ne!(s.block_rng(3).next_u64(), s.block_rng(4).next_u64());
/// ```
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct Stream {
    key: u64,
}

impl Stream {
    /// The stream for `purpose` of `table` under `seed`.
    pub fn new(seed: u64, table: u64, purpose: Purpose) -> Self {
        let mut h = splitmix64_mix(seed ^ 0x6962_656e_6368_0001); // "ibench"
        h = splitmix64_mix(h ^ table.wrapping_mul(0x9e37_79b9_7f4a_7c15));
        h = splitmix64_mix(h ^ (purpose as u64).wrapping_mul(0xd1b5_4a32_d192_ed03));
        Stream { key: h }
    }

    /// A 64-bit key derived from the stream, for keyed bijections.
    pub fn key(&self) -> u64 {
        self.key
    }

    /// The generator for block `block` (elements `block*BLOCK ..`).
    #[inline]
    pub fn block_rng(&self, block: u64) -> StreamRng {
        let mut state = splitmix64_mix(self.key ^ block.wrapping_mul(0xa076_1d64_78bd_642f));
        let mut seed = [0u8; 32];
        for chunk in seed.chunks_exact_mut(8) {
            chunk.copy_from_slice(&splitmix64_next(&mut state).to_le_bytes());
        }
        StreamRng::from_seed(seed)
    }
}

/// One step of SplitMix64: advances `state` and returns the next output.
#[inline]
pub fn splitmix64_next(state: &mut u64) -> u64 {
    *state = state.wrapping_add(0x9e37_79b9_7f4a_7c15);
    splitmix64_mix(*state)
}

/// SplitMix64's output function: a bijective 64-bit mixer.
#[inline]
pub fn splitmix64_mix(mut z: u64) -> u64 {
    z = (z ^ (z >> 30)).wrapping_mul(0xbf58_476d_1ce4_e5b9);
    z = (z ^ (z >> 27)).wrapping_mul(0x94d0_49bb_1331_11eb);
    z ^ (z >> 31)
}

/// A uniform integer in `[0, n)` (n > 0), exact (Lemire's method with rejection).
#[inline]
pub fn below(rng: &mut StreamRng, n: u64) -> u64 {
    let mut m = (rng.next_u64() as u128) * (n as u128);
    if (m as u64) < n {
        let threshold = n.wrapping_neg() % n;
        while (m as u64) < threshold {
            m = (rng.next_u64() as u128) * (n as u128);
        }
    }
    (m >> 64) as u64
}

/// Uniform integers below 32-bit bounds, two per random word.
///
/// Each `below` is exact (Lemire's method with rejection); a rejected draw
/// takes the next half-word.
pub struct Halves<'a> {
    rng: &'a mut StreamRng,
    spare: Option<u32>,
}

impl<'a> Halves<'a> {
    /// Draws from `rng`; the unused half of the last word is dropped.
    #[inline]
    pub fn new(rng: &'a mut StreamRng) -> Self {
        Halves { rng, spare: None }
    }

    #[inline]
    fn next_u32(&mut self) -> u32 {
        match self.spare.take() {
            Some(h) => h,
            None => {
                let w = self.rng.next_u64();
                self.spare = Some((w >> 32) as u32);
                w as u32
            }
        }
    }

    /// A uniform integer in `[0, n)` (n > 0).
    #[inline]
    pub fn below(&mut self, n: u32) -> u32 {
        let mut m = self.next_u32() as u64 * n as u64;
        if (m as u32) < n {
            let threshold = n.wrapping_neg() % n;
            while (m as u32) < threshold {
                m = self.next_u32() as u64 * n as u64;
            }
        }
        (m >> 32) as u32
    }
}

/// Fills `out` with random bytes: one `next_u64` per 8 bytes (little-endian),
/// the last partial word truncated. Defined here, not by the rng crate, so the
/// byte layout is part of ibench's determinism contract.
#[inline]
pub fn fill_bytes(rng: &mut StreamRng, out: &mut [u8]) {
    let mut chunks = out.chunks_exact_mut(8);
    for c in &mut chunks {
        c.copy_from_slice(&rng.next_u64().to_le_bytes());
    }
    let rest = chunks.into_remainder();
    if !rest.is_empty() {
        let w = rng.next_u64().to_le_bytes();
        rest.copy_from_slice(&w[..rest.len()]);
    }
}

/// Advances `rng` exactly as [`fill_bytes`] would for `len` bytes.
#[inline]
pub fn skip_bytes(rng: &mut StreamRng, len: usize) {
    for _ in 0..len.div_ceil(8) {
        rng.next_u64();
    }
}

/// One block's share of a range of element indexes.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct BlockSpan {
    /// The block number.
    pub block: u64,
    /// Elements of the block before the range starts (to skip).
    pub skip: usize,
    /// Positions in the caller's output (0-based from the range start).
    pub out: Range<usize>,
}

/// Splits the element range `[start, start + len)` into per-block spans.
pub fn block_spans(start: u64, len: usize) -> impl Iterator<Item = BlockSpan> {
    let end = start + len as u64;
    let mut index = start;
    std::iter::from_fn(move || {
        if index >= end {
            return None;
        }
        let block = index / BLOCK;
        let block_end = ((block + 1) * BLOCK).min(end);
        let span = BlockSpan {
            block,
            skip: (index - block * BLOCK) as usize,
            out: (index - start) as usize..(block_end - start) as usize,
        };
        index = block_end;
        Some(span)
    })
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn streams_for_different_purposes_tables_and_seeds_differ() {
        let a = Stream::new(1, 0, Purpose::Key);
        assert_ne!(a, Stream::new(1, 0, Purpose::Value));
        assert_ne!(a, Stream::new(1, 1, Purpose::Key));
        assert_ne!(a, Stream::new(2, 0, Purpose::Key));
    }

    #[test]
    fn block_spans_cover_the_range_in_order() {
        let spans: Vec<_> = block_spans(250, 300).collect();
        assert_eq!(
            spans,
            vec![
                BlockSpan {
                    block: 0,
                    skip: 250,
                    out: 0..6
                },
                BlockSpan {
                    block: 1,
                    skip: 0,
                    out: 6..262
                },
                BlockSpan {
                    block: 2,
                    skip: 0,
                    out: 262..300
                },
            ]
        );
        assert_eq!(block_spans(7, 0).count(), 0);
    }

    #[test]
    fn below_stays_in_range_and_hits_both_ends() {
        let mut rng = Stream::new(0, 0, Purpose::Key).block_rng(0);
        let draws: Vec<u64> = (0..10_000).map(|_| below(&mut rng, 3)).collect();
        assert!(draws.iter().all(|&d| d < 3));
        assert!(draws.contains(&0) && draws.contains(&2));
    }

    #[test]
    fn fill_and_skip_consume_the_same_words() {
        let s = Stream::new(9, 9, Purpose::Value);
        let (mut a, mut b) = (s.block_rng(0), s.block_rng(0));
        let mut buf = [0u8; 13];
        fill_bytes(&mut a, &mut buf);
        skip_bytes(&mut b, 13);
        assert_eq!(a.next_u64(), b.next_u64());
    }
}
