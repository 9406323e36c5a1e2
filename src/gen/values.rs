//! Values of a given length that compress to a given ratio.
//!
//! A value of length `len` starts with ⌈len·ratio⌉ fresh random bytes and
//! repeats them to fill `len`. Every value has its own randomness (no shared
//! pool that repeats across values, unlike db_bench), so a compressor sees
//! exactly the intended redundancy. Binary values use all 256 byte values;
//! text values use a 64-symbol printable ASCII alphabet (6 bits of entropy per
//! byte, so entropy coders such as zstd compress them further than `ratio`:
//! see docs/generators.md for measured ratios).

use super::parallel::{par_fill, split_var, try_vec};
use super::stream::{below, block_spans, fill_bytes, skip_bytes, Purpose, Stream, StreamRng};
use crate::error::{Error, Result};
use rayon::prelude::*;

/// The printable alphabet of text values: URL-safe base64 symbols.
pub const TEXT_ALPHABET: &[u8; 64] =
    b"ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789-_";

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

impl Length {
    /// Checks the bounds; `name` is the parameter's name for the error.
    pub fn check(&self, name: &str) -> Result<()> {
        let (min, max) = match *self {
            Length::Fixed(n) => (n, n),
            Length::Uniform { min, max } => (min, max),
        };
        if min > max {
            return Err(Error::config(
                name,
                format!("min {min} is greater than max {max}"),
            ));
        }
        if max > MAX_LENGTH {
            return Err(Error::config(
                name,
                format!("{max} exceeds the largest value length {MAX_LENGTH}"),
            ));
        }
        Ok(())
    }

    #[inline]
    fn draw(&self, rng: &mut StreamRng) -> u32 {
        match *self {
            Length::Fixed(n) => n,
            Length::Uniform { min, max } => min + below(rng, (max - min) as u64 + 1) as u32,
        }
    }

    /// Fills the lengths of elements `start..start + out.len()` from `stream`.
    pub fn fill(&self, stream: &Stream, start: u64, out: &mut [u32]) {
        if let Length::Fixed(n) = *self {
            out.fill(n);
            return;
        }
        for span in block_spans(start, out.len()) {
            let mut rng = stream.block_rng(span.block);
            for _ in 0..span.skip {
                self.draw(&mut rng);
            }
            for o in &mut out[span.out] {
                *o = self.draw(&mut rng);
            }
        }
    }
}

/// Which bytes the random part uses.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Alphabet {
    /// All 256 byte values.
    Binary,
    /// [`TEXT_ALPHABET`]: valid ASCII, for VARCHAR columns.
    Text,
}

/// The compressible-content scheme shared by values and the Insert Benchmark's
/// `data` column.
#[derive(Clone, Copy, Debug, PartialEq)]
pub struct Compressible {
    ratio: f64,
    alphabet: Alphabet,
}

impl Compressible {
    /// Content compressible to `ratio` in (0, 1]; `name` names it in errors.
    pub fn new(ratio: f64, alphabet: Alphabet, name: &str) -> Result<Self> {
        if !(ratio > 0.0 && ratio <= 1.0) {
            return Err(Error::config(
                name,
                format!("must be in (0, 1], got {ratio}"),
            ));
        }
        Ok(Compressible { ratio, alphabet })
    }

    /// The number of random bytes in a value of length `len`: ⌈len·ratio⌉
    /// (the small slack keeps 100 × 0.07 from rounding up to 8).
    #[inline]
    pub fn random_len(&self, len: usize) -> usize {
        ((len as f64 * self.ratio - 1e-9).ceil().max(0.0) as usize).min(len)
    }

    /// Writes one value into `out` (its length is `out.len()`).
    #[inline]
    pub fn fill(&self, rng: &mut StreamRng, out: &mut [u8]) {
        let m = self.random_len(out.len());
        if m == 0 {
            return;
        }
        fill_bytes(rng, &mut out[..m]);
        if self.alphabet == Alphabet::Text {
            for b in &mut out[..m] {
                *b = TEXT_ALPHABET[(*b & 63) as usize];
            }
        }
        // Repeat the random prefix, doubling the copied span each time.
        let mut filled = m;
        while filled < out.len() {
            let n = filled.min(out.len() - filled);
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

/// Turns lengths into Arrow offsets, refusing more than 2 GiB in one array.
pub(crate) fn offsets_from_lengths(lengths: &[u32], name: &str) -> Result<Vec<i32>> {
    let mut offsets = Vec::with_capacity(lengths.len() + 1);
    let mut total: u64 = 0;
    offsets.push(0);
    for &len in lengths {
        total += len as u64;
        if total > i32::MAX as u64 {
            return Err(Error::config(
                name,
                format!(
                    "{} values exceed 2 GiB in one array (Arrow's 32-bit offsets); generate them in batches with offset",
                    lengths.len()
                ),
            ));
        }
        offsets.push(total as i32);
    }
    Ok(offsets)
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
    pub fn lengths(&self, start: u64, out: &mut [u32]) {
        self.length.fill(&self.lengths, start, out);
    }

    /// Writes values `start..start + lengths.len()` back to back into `out`
    /// (`out.len()` is the sum of `lengths`), on this thread.
    pub fn fill(&self, start: u64, lengths: &[u32], out: &mut [u8]) {
        let mut pos = 0;
        let mut skipped = Vec::new();
        for span in block_spans(start, lengths.len()) {
            let mut rng = self.bytes.block_rng(span.block);
            if span.skip > 0 {
                skipped.resize(span.skip, 0);
                self.lengths(span.block * super::stream::BLOCK, &mut skipped);
                for &len in &skipped {
                    self.content.skip(&mut rng, len as usize);
                }
            }
            for &len in &lengths[span.out] {
                let end = pos + len as usize;
                self.content.fill(&mut rng, &mut out[pos..end]);
                pos = end;
            }
        }
    }

    /// Values `start..start + count`, generated in parallel on the current rayon pool.
    pub fn generate(&self, start: u64, count: usize) -> Result<Values> {
        start.checked_add(count as u64).ok_or_else(|| {
            Error::config(
                "count",
                format!("offset {start} + count {count} overflows a 64-bit index"),
            )
        })?;
        let mut lengths = try_vec::<u32>(count, "count")?;
        par_fill(start, &mut lengths, |s, chunk| self.lengths(s, chunk));
        let offsets = offsets_from_lengths(&lengths, "count")?;
        let mut data = try_vec::<u8>(*offsets.last().unwrap_or(&0) as usize, "count")?;
        split_var(&lengths, &offsets, &mut data)
            .into_par_iter()
            .for_each(|(first, lens, bytes)| self.fill(start + first as u64, lens, bytes));
        Ok(Values { offsets, data })
    }

    /// Value number `index` alone.
    pub fn value(&self, index: u64) -> Vec<u8> {
        let mut len = [0u32];
        self.lengths(index, &mut len);
        let mut out = vec![0u8; len[0] as usize];
        self.fill(index, &len, &mut out);
        out
    }
}
