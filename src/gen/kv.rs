//! Key/value pairs of the db_bench-style steps: values addressed by key, so
//! any writer (any thread, any batch) writes the same bytes for a key, and
//! verify can regenerate what a key must hold.

use super::keys::encode_key;
use super::pool::{Pool, ValueSource};
use super::stream::{Purpose, Stream};
use super::values::{Alphabet, Compressible, Length};
use crate::error::Result;
use std::sync::Arc;

/// Values of one version of a key/value table: value of key `k` depends
/// only on `(seed, version, k)`.
///
/// ```
/// use ibench::gen::{Alphabet, KvValues, Length, ValueSource};
/// let v = KvValues::new(7, 1, Length::Fixed(100), 0.5, Alphabet::Binary, ValueSource::PerKey)?;
/// let (mut a, mut b) = (Vec::new(), Vec::new());
/// v.value_into(42, &mut a);
/// v.value_into(42, &mut b);
/// assert_eq!(a, b);
/// assert_eq!(a.len(), 100);
/// assert_eq!(a[..50], a[50..]); // 50 random bytes, repeated: compresses to ~0.5
/// # Ok::<(), ibench::Error>(())
/// ```
#[derive(Clone, Debug)]
pub struct KvValues {
    length: Length,
    content: Compressible,
    stream: Stream,
    /// Set for [`ValueSource::Pool`]: values are slices of it.
    pool: Option<Pool>,
}

impl KvValues {
    /// Values of `version` (the step that writes them) under `seed`: lengths
    /// from `length`, content compressible to `ratio`, its random part drawn
    /// from `alphabet`, each value generated or sliced from a pool as
    /// `source` says.
    pub fn new(
        seed: u64,
        version: u64,
        length: Length,
        ratio: f64,
        alphabet: Alphabet,
        source: ValueSource,
    ) -> Result<Self> {
        length.check("value_size")?;
        let content = Compressible::new(ratio, alphabet, "ratio")?;
        let pool = match source {
            ValueSource::PerKey => None,
            ValueSource::Pool => Some(Pool::new(
                Stream::new(seed, version, Purpose::KvValuePool),
                &content,
                length.bounds().1 as usize,
            )),
        };
        Ok(KvValues {
            length,
            content,
            stream: Stream::new(seed, version, Purpose::KvValue),
            pool,
        })
    }

    /// The length of key `key`'s value (the same for either source).
    #[inline]
    fn pooled_len(&self, key: u64) -> usize {
        match self.length {
            Length::Fixed(n) => n as usize,
            // The first draw of the key's generator, as a generated value's.
            _ => self.length.draw(&mut self.stream.block_rng(key)) as usize,
        }
    }

    /// Replaces `out` with the value of key `key`.
    #[inline]
    pub fn value_into(&self, key: u64, out: &mut Vec<u8>) {
        out.clear();
        match &self.pool {
            Some(pool) => out.extend_from_slice(pool.slice(key, self.pooled_len(key))),
            None => self.generate_onto(key, out),
        }
    }

    /// Appends the value of key `key` to `batch`: a span of the pool, or
    /// the value generated into the batch's own bytes.
    #[inline]
    fn push_to(&self, key: u64, batch: &mut KvBatch) {
        match &self.pool {
            Some(pool) => {
                let (start, end) = pool.span(key, self.pooled_len(key));
                batch.push_pooled(pool.shared(), start, end);
            }
            None => {
                let start = batch.owned_data().len();
                self.generate_onto(key, batch.owned_data());
                batch.end_owned(start);
            }
        }
    }

    /// Appends key `key`'s generated value to `out`: one generator per key,
    /// O(1) random access, unlike a stream of values.
    #[inline]
    fn generate_onto(&self, key: u64, out: &mut Vec<u8>) {
        let mut rng = self.stream.block_rng(key);
        let len = self.length.draw(&mut rng) as usize;
        let start = out.len();
        out.resize(start + len, 0);
        self.content.fill(&mut rng, &mut out[start..]);
    }
}

/// One write batch (or one scan's result): keys of `key_size` bytes back to
/// back, and their values. Reused between batches so a load loop allocates
/// nothing.
///
/// A value is a span of the batch's own bytes (generated values, values
/// read), or of the step's value pool ([`ValueSource::Pool`]): pooled values
/// are not copied into the batch, as db_bench's slices of its buffer are
/// not, so a write copies each value once (into the database's batch).
/// A batch holds values of one kind until it is cleared.
#[derive(Clone, Default)]
pub struct KvBatch {
    /// Bytes per key.
    key_size: usize,
    /// The keys, `key_size` bytes each.
    keys: Vec<u8>,
    /// Owned values, back to back.
    data: Vec<u8>,
    /// Each value's `(start, end)` in `data`, or in `pool` when it is set.
    spans: Vec<(usize, usize)>,
    /// The pool of the last pooled values (kept across clears: one pool per step).
    pool: Option<Arc<[u8]>>,
    /// True while the spans index `pool`, not `data`.
    pooled: bool,
}

/// Why a batch refuses a value of the other kind.
const MIXED: &str = "a batch holds pooled or owned values until it is cleared";

impl std::fmt::Debug for KvBatch {
    // The pairs, not the pool (a megabyte) they may be spans of.
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("KvBatch")
            .field("key_size", &self.key_size)
            .field("pooled", &self.pooled)
            .field("pairs", &self.pairs().collect::<Vec<_>>())
            .finish()
    }
}

impl KvBatch {
    /// An empty batch of `key_size`-byte keys.
    pub fn new(key_size: usize) -> Self {
        KvBatch {
            key_size,
            ..KvBatch::default()
        }
    }

    /// Empties the batch, keeping its memory (and its pool).
    pub fn clear(&mut self) {
        self.keys.clear();
        self.data.clear();
        self.spans.clear();
        self.pooled = false;
    }

    /// Pairs in the batch.
    pub fn len(&self) -> usize {
        self.spans.len()
    }

    /// True when empty.
    pub fn is_empty(&self) -> bool {
        self.len() == 0
    }

    /// Key `i`, encoded.
    pub fn key(&self, i: usize) -> &[u8] {
        &self.keys[i * self.key_size..(i + 1) * self.key_size]
    }

    /// Value `i`.
    pub fn value(&self, i: usize) -> &[u8] {
        let (start, end) = self.spans[i];
        &self.values_base()[start..end]
    }

    /// What the spans index: the pool, or the batch's own bytes.
    fn values_base(&self) -> &[u8] {
        match &self.pool {
            Some(pool) if self.pooled => pool,
            _ => &self.data,
        }
    }

    /// Appends key `key` with its value from `values`.
    #[inline]
    pub fn push_generated(&mut self, key: u64, values: &KvValues) {
        self.push_encoded(key);
        values.push_to(key, self);
    }

    /// Appends key `key` with an empty value (a key to read or delete).
    pub fn push_key(&mut self, key: u64) {
        self.push_encoded(key);
        // Empty in either kind of batch.
        let at = if self.pooled { 0 } else { self.data.len() };
        self.spans.push((at, at));
    }

    /// Appends an encoded key and its value (a scan's result).
    pub fn push_raw(&mut self, key: &[u8], value: &[u8]) {
        self.keys.extend_from_slice(key);
        let data = self.owned_data();
        let start = data.len();
        data.extend_from_slice(value);
        self.end_owned(start);
    }

    /// The iterator of `(key, value)` pairs.
    pub fn pairs(&self) -> impl Iterator<Item = (&[u8], &[u8])> + '_ {
        let base = self.values_base();
        self.keys
            .chunks_exact(self.key_size.max(1))
            .zip(&self.spans)
            .map(move |(k, &(start, end))| (k, &base[start..end]))
    }

    /// Appends key `key`'s encoding (zeros, then its 8 big-endian bytes).
    #[inline]
    fn push_encoded(&mut self, key: u64) {
        let end = self.keys.len() + self.key_size;
        self.keys.resize(end, 0);
        encode_key(key, &mut self.keys[end - self.key_size..]);
    }

    /// The batch's own bytes, to append a value to.
    fn owned_data(&mut self) -> &mut Vec<u8> {
        assert!(!self.pooled, "{MIXED}");
        &mut self.data
    }

    /// Ends the owned value that started at `start`.
    fn end_owned(&mut self, start: usize) {
        self.spans.push((start, self.data.len()));
    }

    /// Appends the span `start..end` of `pool`, and starts loading its bytes:
    /// the value sits at a hashed offset in a megabyte, mostly out of cache,
    /// and the database copies it soon after (overwrite of 400-byte values
    /// into RocksDB: 2–3% faster, docs/kv.md).
    #[inline]
    fn push_pooled(&mut self, pool: &Arc<[u8]>, start: usize, end: usize) {
        assert!(self.pooled || self.data.is_empty(), "{MIXED}");
        super::prefetch::prefetch(&pool[start..end]);
        self.pooled = true;
        if !self.pool.as_ref().is_some_and(|p| Arc::ptr_eq(p, pool)) {
            self.pool = Some(Arc::clone(pool));
        }
        self.spans.push((start, end));
    }
}

/// Decodes a key written by [`encode_key`] (its last 8 bytes).
pub fn decode_key(key: &[u8]) -> u64 {
    let mut b = [0u8; 8];
    b.copy_from_slice(&key[key.len() - 8..]);
    u64::from_be_bytes(b)
}

#[cfg(test)]
mod tests {
    use super::*;

    /// Values of seed 1, `version`, lengths 10..=400 at ratio 0.5.
    fn values(version: u64, alphabet: Alphabet, source: ValueSource) -> KvValues {
        KvValues::new(1, version, Length::Uniform { min: 10, max: 400 }, 0.5, alphabet, source).unwrap()
    }

    #[test]
    fn values_depend_on_seed_version_and_key_only() {
        let a = values(2, Alphabet::Binary, ValueSource::PerKey);
        let mut batch = KvBatch::new(16);
        for k in [5u64, 3, 5, 1_000_000] {
            batch.push_generated(k, &a);
        }
        let mut v = Vec::new();
        a.value_into(5, &mut v);
        assert_eq!(batch.value(0), &v[..]);
        assert_eq!(batch.value(2), &v[..]);
        assert_eq!(decode_key(batch.key(3)), 1_000_000);
        let other = values(3, Alphabet::Binary, ValueSource::PerKey);
        let mut w = Vec::new();
        other.value_into(5, &mut w);
        assert_ne!(v, w);
        assert!((10..=400).contains(&v.len()));
    }

    #[test]
    fn pooled_values_have_generated_values_lengths_and_depend_on_seed_version_and_key_only() {
        let length = Length::Uniform { min: 10, max: 400 };
        let values =
            |seed, version, source| KvValues::new(seed, version, length, 0.5, Alphabet::Printable, source).unwrap();
        let (pooled, generated) = (values(1, 2, ValueSource::Pool), values(1, 2, ValueSource::PerKey));
        let mut batch = KvBatch::new(16);
        let (mut v, mut g) = (Vec::new(), Vec::new());
        for k in [5u64, 3, 5, 1_000_000] {
            batch.push_generated(k, &pooled);
            pooled.value_into(k, &mut v);
            generated.value_into(k, &mut g);
            assert_eq!(v.len(), g.len(), "key {k}");
            assert_ne!(v, g);
            assert!(v.iter().all(|b| (b' '..=b'~').contains(b)));
        }
        assert_eq!(batch.value(0), batch.value(2));
        pooled.value_into(1_000_000, &mut v);
        assert_eq!(batch.value(3), &v[..]);
        assert_eq!(batch.len(), 4);
        // Another instance (verify's, another thread's) slices the same bytes;
        // another step or seed, others.
        values(1, 2, ValueSource::Pool).value_into(1_000_000, &mut g);
        assert_eq!(v, g);
        for other in [values(1, 3, ValueSource::Pool), values(2, 2, ValueSource::Pool)] {
            other.value_into(1_000_000, &mut g);
            assert_ne!(v, g);
        }
    }

    #[test]
    fn pooled_values_are_spans_of_the_pool_not_copies() {
        let pooled = values(2, Alphabet::Printable, ValueSource::Pool);
        let pool = pooled.pool.as_ref().unwrap().bytes().as_ptr_range();
        let mut batch = KvBatch::new(16);
        let mut v = Vec::new();
        for round in 0..2 {
            batch.clear();
            for k in [9u64, 4, 9] {
                batch.push_generated(k, &pooled);
            }
            batch.push_key(7);
            for (i, (key, value)) in batch.pairs().enumerate().take(3) {
                pooled.value_into(decode_key(key), &mut v);
                assert_eq!(value, &v[..], "round {round}, pair {i}");
                assert!(pool.contains(&value.as_ptr()), "value {i} points into the pool");
                assert_eq!(batch.value(i), value);
            }
            assert_eq!(batch.value(3), b"");
            assert_eq!(batch.len(), 4);
            // Debug shows the pairs, not the megabyte they are spans of.
            assert!(format!("{batch:?}").len() < 20_000);
        }
        // Cleared, the batch holds owned values again.
        batch.clear();
        batch.push_raw(&[0; 16], b"own");
        batch.push_generated(5, &values(2, Alphabet::Binary, ValueSource::PerKey));
        assert_eq!(batch.value(0), b"own");
        assert!(!pool.contains(&batch.value(1).as_ptr()));
        let mut g = Vec::new();
        values(2, Alphabet::Binary, ValueSource::PerKey).value_into(5, &mut g);
        assert_eq!(batch.value(1), &g[..]);
    }

    #[test]
    #[should_panic(expected = "pooled or owned")]
    fn a_batch_refuses_owned_values_among_pooled_ones() {
        let mut batch = KvBatch::new(16);
        batch.push_generated(1, &values(2, Alphabet::Printable, ValueSource::Pool));
        batch.push_raw(&[0; 16], b"own");
    }

    #[test]
    #[should_panic(expected = "pooled or owned")]
    fn a_batch_refuses_pooled_values_among_owned_ones() {
        let mut batch = KvBatch::new(16);
        batch.push_raw(&[0; 16], b"own");
        batch.push_generated(1, &values(2, Alphabet::Printable, ValueSource::Pool));
    }

    #[test]
    fn a_batch_round_trips_raw_pairs() {
        let mut b = KvBatch::new(8);
        b.push_raw(&[0, 0, 0, 0, 0, 0, 0, 9], b"nine");
        b.push_raw(&[0, 0, 0, 0, 0, 0, 1, 0], b"");
        let pairs: Vec<_> = b.pairs().collect();
        assert_eq!(pairs.len(), 2);
        assert_eq!(decode_key(pairs[1].0), 256);
        assert_eq!(pairs[0].1, b"nine");
        b.clear();
        assert!(b.is_empty());
    }
}
