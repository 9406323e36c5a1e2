//! db_bench's value pool: a buffer of compressible pieces that values are
//! sliced from, as db_bench's `RandomGenerator` makes them. A value then
//! costs its writer a copy, not its generation: what a comparison of client
//! costs with db_bench needs. Which slice a key gets still depends only on
//! `(seed, step, key)`, so any writer writes the same bytes for a key and
//! verify regenerates them.

use super::stream::{splitmix64_mix, Stream};
use super::values::Compressible;
use std::sync::Arc;

/// Where the values of key/value steps come from.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq, serde::Serialize, serde::Deserialize)]
#[serde(rename_all = "kebab-case")]
pub enum ValueSource {
    /// Each value generated from its own randomness, `(seed, step, key)`:
    /// no two keys share bytes.
    #[default]
    PerKey,
    /// db_bench's: each value a slice of a 1 MiB [`Pool`] of 100-byte pieces
    /// compressible to the ratio, at an offset drawn from `(seed, step, key)`.
    Pool,
}

/// Bytes in a pool unless a value is longer (db_bench's `RandomGenerator`: 1 MiB).
pub const POOL_BYTES: usize = 1 << 20;

/// Bytes per compressible piece (db_bench's `CompressibleString(…, 100, …)`).
pub const PIECE: usize = 100;

/// A seeded buffer that values are sliced from.
///
/// ```
/// use ibench::gen::{Alphabet, Compressible, Pool, Stream, Purpose};
/// let content = Compressible::new(0.5, Alphabet::Printable, "ratio")?;
/// let pool = Pool::new(Stream::new(7, 1, Purpose::KvValuePool), &content, 400);
/// let v = pool.slice(42, 400);
/// assert_eq!(v, pool.slice(42, 400));
/// assert_eq!(v.len(), 400);
/// assert!(v.iter().all(|b| (b' '..=b'~').contains(b)));
/// # Ok::<(), ibench::Error>(())
/// ```
#[derive(Clone, Debug)]
pub struct Pool {
    data: Arc<[u8]>,
    /// Keys the offsets' hash, so each step's values start elsewhere.
    key: u64,
}

impl Pool {
    /// The pool of `stream`: [`POOL_BYTES`] (or `max_len` if longer) of
    /// [`PIECE`]-byte pieces, piece `j` filled with `content` from the
    /// stream's block `j`.
    pub fn new(stream: Stream, content: &Compressible, max_len: usize) -> Self {
        let mut data = vec![0u8; POOL_BYTES.max(max_len)];
        for (j, piece) in data.chunks_mut(PIECE).enumerate() {
            content.fill(&mut stream.block_rng(j as u64), piece);
        }
        Pool {
            data: data.into(),
            key: stream.key(),
        }
    }

    /// The `len` bytes (at most the pool's size) of key `key`: at an offset
    /// in `[0, size − len]` hashed from the pool's stream and `key`.
    #[inline]
    pub fn slice(&self, key: u64, len: usize) -> &[u8] {
        let (start, end) = self.span(key, len);
        &self.data[start..end]
    }

    /// Where [`Pool::slice`]'s bytes are in the pool: `(start, end)`.
    #[inline]
    pub fn span(&self, key: u64, len: usize) -> (usize, usize) {
        let starts = (self.data.len() - len + 1) as u128;
        let h = splitmix64_mix(self.key ^ key.wrapping_mul(0x9e37_79b9_7f4a_7c15));
        // Multiply-shift maps the hash onto the possible starts without a division.
        let start = ((h as u128 * starts) >> 64) as usize;
        (start, start + len)
    }

    /// The buffer, shared (a batch holds spans of it rather than copies).
    pub(crate) fn shared(&self) -> &Arc<[u8]> {
        &self.data
    }

    /// The whole buffer.
    pub fn bytes(&self) -> &[u8] {
        &self.data
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::gen::{Alphabet, Purpose};

    fn pool(seed: u64, version: u64, max_len: usize) -> Pool {
        let content = Compressible::new(0.5, Alphabet::Printable, "ratio").unwrap();
        Pool::new(Stream::new(seed, version, Purpose::KvValuePool), &content, max_len)
    }

    #[test]
    fn pieces_are_db_bench_s_half_random_half_repeat() {
        let p = pool(1, 2, 400);
        assert_eq!(p.bytes().len(), POOL_BYTES);
        for piece in p.bytes().chunks_exact(PIECE).take(1000) {
            assert_eq!(piece[..50], piece[50..]);
        }
        // Pieces differ from each other (their own block of the stream).
        assert_ne!(p.bytes()[..50], p.bytes()[100..150]);
    }

    #[test]
    fn a_pool_is_a_function_of_its_stream_and_holds_the_longest_value() {
        assert_eq!(pool(1, 2, 10).bytes(), pool(1, 2, 10).bytes());
        assert_ne!(pool(1, 2, 10).bytes(), pool(1, 3, 10).bytes());
        assert_ne!(pool(1, 2, 10).bytes(), pool(2, 2, 10).bytes());
        let big = pool(1, 2, POOL_BYTES + 7);
        assert_eq!(big.bytes().len(), POOL_BYTES + 7);
        assert_eq!(big.slice(5, POOL_BYTES + 7), big.bytes());
    }

    #[test]
    fn offsets_spread_over_the_whole_pool() {
        let p = pool(3, 1, 400);
        let base = p.bytes().as_ptr() as usize;
        let starts: Vec<usize> = (0..100_000u64)
            .map(|k| p.slice(k, 400).as_ptr() as usize - base)
            .collect();
        let span = POOL_BYTES - 400 + 1;
        assert!(starts.iter().all(|&s| s < span));
        // Ten equal bins each get about a tenth (±5%) of the keys.
        let mut bins = [0u32; 10];
        for s in &starts {
            bins[s * 10 / span] += 1;
        }
        assert!(bins.iter().all(|&b| (9_500..=10_500).contains(&b)), "{bins:?}");
        // Consecutive keys do not take overlapping slices (as a run of
        // db_bench's positions would): by chance, about 0.08% of pairs do.
        let near = starts.windows(2).filter(|w| w[0].abs_diff(w[1]) < 400).count();
        assert!(near < 1_000, "{near} consecutive keys overlap");
    }
}
