//! Values of a given length that compress to a given ratio.
//!
//! A value of length `len` starts with ⌈len·ratio⌉ fresh random bytes and
//! repeats them to fill `len`. Every value has its own randomness (no shared
//! pool that repeats across values, unlike db_bench), so a compressor sees
//! exactly the intended redundancy. Binary values use all 256 byte values;
//! text values use a 64-symbol printable ASCII alphabet (6 bits of entropy per
//! byte, so entropy coders such as zstd compress them further than `ratio`:
//! see docs/generators.md for measured ratios).

use super::parallel::{par_fill, split_var, try_resize};
use super::stream::{below, block_spans, fill_bytes, skip_bytes, Purpose, Stream, StreamRng, BLOCK};
use crate::error::{Error, Result};
use rand_core::Rng;
use rayon::prelude::*;

/// The printable alphabet of text values: URL-safe base64 symbols.
pub const TEXT_ALPHABET: &[u8; 64] = b"ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789-_";

/// The largest value length: Arrow's 32-bit offsets bound one array to 2 GiB.
pub const MAX_LENGTH: u32 = i32::MAX as u32;

/// How long each value is.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Length {
    /// Every value has this length.
    Fixed(u32),
    /// Uniform in `[min, max]`, both included.
    Uniform {
        /// Shortest length.
        min: u32,
        /// Longest length.
        max: u32,
    },
}

/// `N` or `MIN..MAX` (`MIN..=MAX` too), checked.
impl std::str::FromStr for Length {
    type Err = String;
    fn from_str(s: &str) -> std::result::Result<Length, String> {
        let num = |t: &str| {
            t.trim()
                .parse::<u32>()
                .map_err(|_| format!("{t:?} is not a length (expected N or MIN..MAX)"))
        };
        let length = match s.split_once("..") {
            Some((min, max)) => Length::Uniform {
                min: num(min)?,
                max: num(max.trim_start_matches('='))?,
            },
            None => Length::Fixed(num(s)?),
        };
        let (min, max) = length.bounds();
        if min > max {
            return Err(format!("min {min} is greater than max {max}"));
        }
        if max > MAX_LENGTH {
            return Err(format!("{max} exceeds the largest value length {MAX_LENGTH}"));
        }
        Ok(length)
    }
}

impl Length {
    /// Checks the bounds; `name` is the parameter's name for the error.
    pub fn check(&self, name: &str) -> Result<()> {
        let (min, max) = self.bounds();
        if min > max {
            return Err(Error::config(name, format!("min {min} is greater than max {max}")));
        }
        if max > MAX_LENGTH {
            return Err(Error::config(
                name,
                format!("{max} exceeds the largest value length {MAX_LENGTH}"),
            ));
        }
        Ok(())
    }

    /// The shortest and the longest length, both included.
    pub fn bounds(&self) -> (u32, u32) {
        match *self {
            Length::Fixed(n) => (n, n),
            Length::Uniform { min, max } => (min, max),
        }
    }

    #[inline]
    pub(crate) fn draw(&self, rng: &mut StreamRng) -> u32 {
        match *self {
            Length::Fixed(n) => n,
            Length::Uniform { min, max } => min + below(rng, (max - min) as u64 + 1) as u32,
        }
    }

    /// Fills the lengths of elements `start..start + out.len()` from `stream`
    /// (as `i32`, Arrow's offset type; lengths are checked to fit).
    pub fn fill(&self, stream: &Stream, start: u64, out: &mut [i32]) {
        if let Length::Fixed(n) = *self {
            out.fill(n as i32);
            return;
        }
        for span in block_spans(start, out.len()) {
            let mut rng = stream.block_rng(span.block);
            for _ in 0..span.skip {
                self.draw(&mut rng);
            }
            for o in &mut out[span.out] {
                *o = self.draw(&mut rng) as i32;
            }
        }
    }
}

/// Which bytes the random part uses.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq, serde::Serialize, serde::Deserialize)]
#[serde(rename_all = "lowercase")]
pub enum Alphabet {
    /// All 256 byte values.
    #[default]
    Binary,
    /// [`TEXT_ALPHABET`]: valid ASCII, for VARCHAR columns.
    Text,
    /// The 95 printable ASCII characters, `' '` to `'~'`, as db_bench's
    /// values (`RandomString`: `' ' + Uniform(95)`). An entropy coder (zstd)
    /// compresses them further than the ratio, as it does db_bench's, where
    /// it leaves binary random bytes as they are: what a compression study
    /// comparable with db_bench's needs.
    Printable,
}

/// The compressible-content scheme shared by values and the Insert Benchmark's
/// `data` column.
#[derive(Clone, Copy, Debug, PartialEq)]
pub struct Compressible {
    ratio: f64,
    alphabet: Alphabet,
    /// `random_len` of lengths up to [`SHORT`], precomputed: the Insert
    /// Benchmark's 10..20-byte `data` would otherwise spend a sixth of its
    /// time in float arithmetic.
    short: [u8; SHORT + 1],
}

const SHORT: usize = 64;

impl Compressible {
    /// Content compressible to `ratio` in (0, 1]; `name` names it in errors.
    pub fn new(ratio: f64, alphabet: Alphabet, name: &str) -> Result<Self> {
        if !(ratio > 0.0 && ratio <= 1.0) {
            return Err(Error::config(name, format!("must be in (0, 1], got {ratio}")));
        }
        let short = std::array::from_fn(|len| Self::ceil_ratio(len, ratio) as u8);
        Ok(Compressible { ratio, alphabet, short })
    }

    /// ⌈len·ratio⌉, with a small slack that keeps 100 × 0.07 from rounding up to 8.
    fn ceil_ratio(len: usize, ratio: f64) -> usize {
        ((len as f64 * ratio - 1e-9).ceil().max(0.0) as usize).min(len)
    }

    /// The number of random bytes in a value of length `len`: ⌈len·ratio⌉.
    #[inline]
    pub fn random_len(&self, len: usize) -> usize {
        match self.short.get(len) {
            Some(&m) => m as usize,
            None => Self::ceil_ratio(len, self.ratio),
        }
    }

    /// Writes one value into `out` (its length is `out.len()`).
    #[inline]
    pub fn fill(&self, rng: &mut StreamRng, out: &mut [u8]) {
        let m = self.random_len(out.len());
        if m == 0 {
            return;
        }
        match self.alphabet {
            Alphabet::Binary => fill_bytes(rng, &mut out[..m]),
            // The same words as fill_bytes, each byte mapped to a symbol by its
            // low 6 bits, without a temporary.
            Alphabet::Text => {
                for chunk in out[..m].chunks_mut(8) {
                    let w = rng.next_u64();
                    for (j, b) in chunk.iter_mut().enumerate() {
                        *b = TEXT_ALPHABET[((w >> (8 * j)) & 63) as usize];
                    }
                }
            }
            // The words fill_bytes writes, then each byte scaled to 0..95
            // (multiply-shift: no division) in a loop the compiler
            // vectorizes: a load step generates every value it writes.
            Alphabet::Printable => {
                fill_bytes(rng, &mut out[..m]);
                for b in &mut out[..m] {
                    *b = printable(*b);
                }
            }
        }
        let len = out.len();
        if len <= 64 {
            // Short values (the Insert Benchmark's data): a byte loop beats memmove calls.
            for i in m..len {
                out[i] = out[i - m];
            }
            return;
        }
        // Repeat the random prefix, doubling the copied span each time.
        let mut filled = m;
        while filled < len {
            let n = filled.min(len - filled);
            out.copy_within(..n, filled);
            filled += n;
        }
    }

    /// Advances `rng` as [`Compressible::fill`] would for a value of length `len`.
    #[inline]
    pub fn skip(&self, rng: &mut StreamRng, len: usize) {
        skip_bytes(rng, self.random_len(len));
    }
}

/// Byte `b` as one of db_bench's 95 printable characters: `' ' + (b·95 >> 8)`.
#[inline]
fn printable(b: u8) -> u8 {
    b' ' + ((b as u16 * 95) >> 8) as u8
}

/// What values to generate.
#[derive(Clone, Debug, PartialEq)]
pub struct ValueSpec {
    /// Length of each value.
    pub length: Length,
    /// Target compressed/raw ratio, in (0, 1].
    pub ratio: f64,
    /// Binary or printable text.
    pub alphabet: Alphabet,
    /// The run's seed.
    pub seed: u64,
    /// Which table (or thread) the stream belongs to.
    pub table: u64,
}

impl Default for ValueSpec {
    fn default() -> Self {
        ValueSpec {
            length: Length::Fixed(100),
            ratio: 0.5,
            alphabet: Alphabet::Binary,
            seed: 0,
            table: 0,
        }
    }
}

/// Generated values in Arrow's layout: value `i` is `data[offsets[i]..offsets[i + 1]]`.
#[derive(Clone, Debug, Default, PartialEq, Eq)]
pub struct Values {
    /// `count + 1` offsets into `data`, starting at 0.
    pub offsets: Vec<i32>,
    /// All values, back to back.
    pub data: Vec<u8>,
}

impl Values {
    /// The number of values.
    pub fn len(&self) -> usize {
        self.offsets.len().saturating_sub(1)
    }

    /// True when there are no values.
    pub fn is_empty(&self) -> bool {
        self.len() == 0
    }

    /// Value `i`.
    pub fn get(&self, i: usize) -> &[u8] {
        &self.data[self.offsets[i] as usize..self.offsets[i + 1] as usize]
    }
}

/// Fills `offsets` (resized to `count + 1`) with the Arrow offsets of the
/// variable-length elements `start..start + count` whose lengths `length`
/// draws from `stream`; refuses more than 2 GiB in one array. Returns the total.
pub(crate) fn fill_offsets(
    length: &Length,
    stream: &Stream,
    start: u64,
    count: usize,
    offsets: &mut Vec<i32>,
) -> Result<usize> {
    try_resize(offsets, count + 1, "count")?;
    // Lengths first (in parallel), then an in-place prefix sum.
    par_fill(start, &mut offsets[1..], |s, chunk| length.fill(stream, s, chunk));
    let mut total: u64 = 0;
    for o in &mut offsets[1..] {
        total += *o as u64;
        if total > i32::MAX as u64 {
            return Err(Error::config(
                "count",
                format!("{count} values exceed 2 GiB in one array (Arrow's 32-bit offsets); generate them in batches"),
            ));
        }
        *o = total as i32;
    }
    Ok(total as usize)
}

/// A validated value generator.
///
/// ```
/// use ibench::gen::{Length, ValueGen, ValueSpec};
/// let spec = ValueSpec { length: Length::Uniform { min: 10, max: 20 }, ..ValueSpec::default() };
/// let values = ValueGen::new(&spec)?.generate(1000, 3)?;
/// assert_eq!(values.len(), 3);
/// assert!((10..=20).contains(&values.get(0).len()));
/// # Ok::<(), ibench::Error>(())
/// ```
#[derive(Clone, Debug)]
pub struct ValueGen {
    length: Length,
    content: Compressible,
    bytes: Stream,
    lengths: Stream,
}

impl ValueGen {
    /// Checks `spec` and prepares the generator.
    pub fn new(spec: &ValueSpec) -> Result<Self> {
        spec.length.check("length")?;
        Ok(ValueGen {
            length: spec.length,
            content: Compressible::new(spec.ratio, spec.alphabet, "ratio")?,
            bytes: Stream::new(spec.seed, spec.table, Purpose::Value),
            lengths: Stream::new(spec.seed, spec.table, Purpose::ValueLength),
        })
    }

    /// Lengths of values `start..start + out.len()`.
    pub fn lengths(&self, start: u64, out: &mut [i32]) {
        self.length.fill(&self.lengths, start, out);
    }

    /// Writes values `start..start + offsets.len() - 1` into `out`, value `i`
    /// at `offsets[i] - offsets[0]`, on this thread.
    pub fn fill(&self, start: u64, offsets: &[i32], out: &mut [u8]) {
        let base = offsets[0];
        let mut skipped = Vec::new();
        for span in block_spans(start, offsets.len() - 1) {
            let mut rng = self.bytes.block_rng(span.block);
            if span.skip > 0 {
                skipped.resize(span.skip, 0);
                self.lengths(span.block * BLOCK, &mut skipped);
                for &len in &skipped {
                    self.content.skip(&mut rng, len as usize);
                }
            }
            for i in span.out {
                let (a, b) = ((offsets[i] - base) as usize, (offsets[i + 1] - base) as usize);
                self.content.fill(&mut rng, &mut out[a..b]);
            }
        }
    }

    /// Values `start..start + count`, generated in parallel on the current rayon pool.
    pub fn generate(&self, start: u64, count: usize) -> Result<Values> {
        let mut values = Values::default();
        self.generate_into(start, count, &mut values)?;
        Ok(values)
    }

    /// Like [`ValueGen::generate`], reusing the memory of `out` (a load loop
    /// that reuses one batch never touches fresh pages).
    pub fn generate_into(&self, start: u64, count: usize, out: &mut Values) -> Result<()> {
        start.checked_add(count as u64).ok_or_else(|| {
            Error::config(
                "count",
                format!("offset {start} + count {count} overflows a 64-bit index"),
            )
        })?;
        let total = fill_offsets(&self.length, &self.lengths, start, count, &mut out.offsets)?;
        try_resize(&mut out.data, total, "count")?;
        split_var(&out.offsets, &mut out.data)
            .into_par_iter()
            .for_each(|(first, offsets, bytes)| self.fill(start + first as u64, offsets, bytes));
        Ok(())
    }

    /// Value number `index` alone.
    pub fn value(&self, index: u64) -> Vec<u8> {
        let mut len = [0i32];
        self.lengths(index, &mut len);
        let mut out = vec![0u8; len[0] as usize];
        self.fill(index, &[0, len[0]], &mut out);
        out
    }
}

#[cfg(test)]
mod tests {
    #[test]
    fn printable_values_are_the_words_bytes_each_scaled_to_95_characters() {
        // The bytes as the first version mapped them, word by word.
        use super::{Alphabet, Compressible};
        use crate::gen::stream::{Purpose, Stream};
        use rand_core::Rng;
        let c = Compressible::new(0.5, Alphabet::Printable, "ratio").unwrap();
        let stream = Stream::new(7, 1, Purpose::KvValue);
        for len in [1usize, 7, 8, 9, 63, 64, 65, 400, 1000] {
            let mut out = vec![0u8; len];
            c.fill(&mut stream.block_rng(len as u64), &mut out);
            let m = c.random_len(len);
            let mut rng = stream.block_rng(len as u64);
            let mut expected = Vec::new();
            while expected.len() < m {
                let w = rng.next_u64();
                expected.extend((0..8).map(|j| b' ' + ((((w >> (8 * j)) & 0xff) * 95) >> 8) as u8));
            }
            expected.truncate(m);
            assert_eq!(&out[..m], &expected[..], "len {len}");
            assert!(out.iter().all(|b| (b' '..=b'~').contains(b)), "len {len}");
            for i in m..len {
                assert_eq!(out[i], out[i - m], "len {len}: the random part repeats");
            }
        }
        // Every byte value lands on one of the 95 characters, the extremes on ' ' and '~'.
        let all: std::collections::BTreeSet<u8> = (0..=255u8).map(super::printable).collect();
        assert_eq!(all.len(), 95);
        assert_eq!((super::printable(0), super::printable(255)), (b' ', b'~'));
    }
}
