//! Key/value pairs of the db_bench-style steps: values addressed by key, so
//! any writer (any thread, any batch) writes the same bytes for a key, and
//! verify can regenerate what a key must hold.

use super::keys::encode_key;
use super::pool::{Pool, ValueSource};
use super::stream::{Purpose, Stream};
use super::values::{Alphabet, Compressible, Length, Values};
use crate::error::Result;

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
        if let Some(pool) = &self.pool {
            out.extend_from_slice(pool.slice(key, self.pooled_len(key)));
            return;
        }
        // One generator per key: O(1) random access, unlike a stream of values.
        let mut rng = self.stream.block_rng(key);
        let len = self.length.draw(&mut rng) as usize;
        out.resize(len, 0);
        self.content.fill(&mut rng, out);
    }

    /// Appends the value of key `key` to `values`.
    #[inline]
    pub fn push(&self, key: u64, values: &mut Values) {
        if values.offsets.is_empty() {
            values.offsets.push(0);
        }
        if let Some(pool) = &self.pool {
            values.data.extend_from_slice(pool.slice(key, self.pooled_len(key)));
        } else {
            let mut rng = self.stream.block_rng(key);
            let len = self.length.draw(&mut rng) as usize;
            let start = values.data.len();
            values.data.resize(start + len, 0);
            self.content.fill(&mut rng, &mut values.data[start..]);
        }
        values.offsets.push(values.data.len() as i32);
    }
}

/// One write batch (or one scan's result): keys of `key_size` bytes back to
/// back, and their values. Reused between batches so a load loop allocates
/// nothing.
#[derive(Clone, Debug, Default, PartialEq, Eq)]
pub struct KvBatch {
    /// Bytes per key.
    pub key_size: usize,
    /// The keys, `key_size` bytes each.
    pub keys: Vec<u8>,
    /// The values, in the same order.
    pub values: Values,
}

impl KvBatch {
    /// An empty batch of `key_size`-byte keys.
    pub fn new(key_size: usize) -> Self {
        KvBatch {
            key_size,
            ..KvBatch::default()
        }
    }

    /// Empties the batch, keeping its memory.
    pub fn clear(&mut self) {
        self.keys.clear();
        self.values.offsets.clear();
        self.values.data.clear();
    }

    /// Pairs in the batch.
    pub fn len(&self) -> usize {
        self.values.len()
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
        self.values.get(i)
    }

    /// Appends key `key` with its value from `values`.
    #[inline]
    pub fn push_generated(&mut self, key: u64, values: &KvValues) {
        let start = self.keys.len();
        self.keys.resize(start + self.key_size, 0);
        encode_key(key, &mut self.keys[start..]);
        values.push(key, &mut self.values);
    }

    /// Appends key `key` with an empty value (a key to read or delete).
    pub fn push_key(&mut self, key: u64) {
        let start = self.keys.len();
        self.keys.resize(start + self.key_size, 0);
        encode_key(key, &mut self.keys[start..]);
        if self.values.offsets.is_empty() {
            self.values.offsets.push(0);
        }
        self.values.offsets.push(self.values.data.len() as i32);
    }

    /// Appends an encoded key and its value (a scan's result).
    pub fn push_raw(&mut self, key: &[u8], value: &[u8]) {
        self.keys.extend_from_slice(key);
        if self.values.offsets.is_empty() {
            self.values.offsets.push(0);
        }
        self.values.data.extend_from_slice(value);
        self.values.offsets.push(self.values.data.len() as i32);
    }

    /// The iterator of `(key, value)` pairs.
    pub fn pairs(&self) -> impl Iterator<Item = (&[u8], &[u8])> + '_ {
        (0..self.len()).map(|i| (self.key(i), self.value(i)))
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
        assert_eq!(batch.values.offsets.len(), 5);
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
