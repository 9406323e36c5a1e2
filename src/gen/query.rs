//! Query parameters of the Insert Benchmark's q steps.
//!
//! Query `i` of a stream always consumes the same random words, so its
//! parameters depend only on `(seed, table, stream, i)` and, for point queries,
//! on the window it is mapped into.

use super::rows::Domains;
use super::stream::{Purpose, Stream, StreamRng, BLOCK};
use rand_core::Rng;

/// Keys per point query (`WHERE transactionid IN (...)`).
pub const POINT_KEYS: usize = 10;

/// The three secondary indexes (reference.md §1).
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
pub enum SecondaryIndex {
    /// `(productid, customerid, price)`.
    MarketSegment,
    /// `(cashregisterid, customerid, price)`.
    RegisterSegment,
    /// `(price, dateandtime, customerid)`.
    Pdc,
}

impl SecondaryIndex {
    /// All three, in creation order.
    pub const ALL: [SecondaryIndex; 3] = [
        SecondaryIndex::MarketSegment,
        SecondaryIndex::RegisterSegment,
        SecondaryIndex::Pdc,
    ];

    /// The index name's suffix: the index on table `t` is `<t>_<suffix>`.
    pub fn suffix(self) -> &'static str {
        match self {
            SecondaryIndex::MarketSegment => "marketsegment",
            SecondaryIndex::RegisterSegment => "registersegment",
            SecondaryIndex::Pdc => "pdc",
        }
    }

    /// The indexed columns, in order.
    pub fn columns(self) -> [&'static str; 3] {
        match self {
            SecondaryIndex::MarketSegment => ["productid", "customerid", "price"],
            SecondaryIndex::RegisterSegment => ["cashregisterid", "customerid", "price"],
            SecondaryIndex::Pdc => ["price", "dateandtime", "customerid"],
        }
    }

    /// The size of the leading column's domain.
    pub fn leading_domain(self, d: &Domains) -> u32 {
        match self {
            SecondaryIndex::MarketSegment => d.products,
            SecondaryIndex::RegisterSegment => d.cashregisters,
            SecondaryIndex::Pdc => d.prices,
        }
    }
}

/// One range query: `SELECT <index columns> WHERE <leading> >= lower ORDER BY
/// <index columns> LIMIT 10` on `index`.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct RangeQuery {
    /// Which index to scan.
    pub index: SecondaryIndex,
    /// The lower bound of the leading column.
    pub lower: i32,
}

/// Maps a random word to `[0, n)` by multiply-high. Unlike rejection sampling
/// it always uses one word, so queries keep fixed positions in the stream; the
/// bias, below n / 2^64, is far under anything measurable.
#[inline]
fn scale(word: u64, n: u64) -> u64 {
    ((word as u128 * n as u128) >> 64) as u64
}

/// The stream of query connection `stream` of `table`: each connection has its own.
fn query_stream(seed: u64, table: u64, stream: u64, purpose: Purpose) -> Stream {
    Stream::new(seed ^ stream.wrapping_mul(0x9e37_79b9_7f4a_7c15), table, purpose)
}

/// A sequential reader of fixed-size query records from a stream.
#[derive(Clone, Debug)]
struct Cursor<const WORDS: usize> {
    stream: Stream,
    next: u64,
    rng: StreamRng,
}

impl<const WORDS: usize> Cursor<WORDS> {
    fn new(stream: Stream, start: u64) -> Self {
        let mut rng = stream.block_rng(start / BLOCK);
        for _ in 0..(start % BLOCK) as usize * WORDS {
            rng.next_u64();
        }
        Cursor {
            stream,
            next: start,
            rng,
        }
    }

    fn next_words(&mut self) -> [u64; WORDS] {
        if self.next.is_multiple_of(BLOCK) {
            self.rng = self.stream.block_rng(self.next / BLOCK);
        }
        self.next += 1;
        std::array::from_fn(|_| self.rng.next_u64())
    }
}

/// Point queries of one query stream: each is [`POINT_KEYS`] keys uniform in
/// the live window.
///
/// ```
/// use ibench::gen::{PointQueries, Window};
/// let mut q = PointQueries::new(0, 0, 0, 0);
/// let keys = q.next_keys(Window { tail: 100, head: 200 });
/// assert!(keys.iter().all(|k| (100..200).contains(k)));
/// ```
#[derive(Clone, Debug)]
pub struct PointQueries {
    cursor: Cursor<POINT_KEYS>,
}

impl PointQueries {
    /// Query stream `stream` of `table` (one per query connection), from query `start`.
    pub fn new(seed: u64, table: u64, stream: u64, start: u64) -> Self {
        let s = query_stream(seed, table, stream, Purpose::PointQuery);
        PointQueries {
            cursor: Cursor::new(s, start),
        }
    }

    /// The next query's keys, uniform in `window` (which must not be empty).
    pub fn next_keys(&mut self, window: super::Window) -> [u64; POINT_KEYS] {
        debug_assert!(!window.is_empty());
        self.cursor.next_words().map(|w| window.tail + scale(w, window.len()))
    }
}

/// Range queries of one query stream: the index uniform among the indexes
/// that exist (the first `indexes` of [`SecondaryIndex::ALL`], as the
/// reference picks), the lower bound uniform in its leading column's domain.
#[derive(Clone, Debug)]
pub struct RangeQueries {
    cursor: Cursor<2>,
    domains: Domains,
    indexes: u64,
}

impl RangeQueries {
    /// Query stream `stream` of `table`, from query `start`, over `domains`,
    /// on the first `indexes` (1 to 3) secondary indexes.
    pub fn new(seed: u64, table: u64, stream: u64, start: u64, domains: Domains, indexes: usize) -> Self {
        let s = query_stream(seed, table, stream, Purpose::RangeQuery);
        RangeQueries {
            cursor: Cursor::new(s, start),
            domains,
            indexes: indexes.clamp(1, SecondaryIndex::ALL.len()) as u64,
        }
    }

    /// The next query.
    pub fn next_query(&mut self) -> RangeQuery {
        let [a, b] = self.cursor.next_words();
        let index = SecondaryIndex::ALL[scale(a, self.indexes) as usize];
        RangeQuery {
            index,
            lower: scale(b, index.leading_domain(&self.domains) as u64) as i32,
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::gen::Window;

    #[test]
    fn a_cursor_started_midway_continues_the_same_sequence() {
        let w = Window { tail: 0, head: 1 << 40 };
        let mut from_zero = PointQueries::new(5, 1, 0, 0);
        let all: Vec<_> = (0..600).map(|_| from_zero.next_keys(w)).collect();
        let mut from_300 = PointQueries::new(5, 1, 0, 300);
        let tail: Vec<_> = (0..300).map(|_| from_300.next_keys(w)).collect();
        assert_eq!(&all[300..], &tail[..]);
    }

    #[test]
    fn range_queries_use_all_indexes_within_their_domains() {
        let d = Domains::default();
        let mut q = RangeQueries::new(0, 0, 0, 0, d, 3);
        let mut seen = [false; 3];
        for _ in 0..1000 {
            let r = q.next_query();
            assert!((r.lower as u32) < r.index.leading_domain(&d));
            seen[SecondaryIndex::ALL.iter().position(|&i| i == r.index).unwrap()] = true;
        }
        assert_eq!(seen, [true; 3]);
    }

    #[test]
    fn range_queries_pick_only_among_the_indexes_that_exist() {
        for n in 1..=3 {
            let mut q = RangeQueries::new(0, 0, 0, 0, Domains::default(), n);
            let mut used = std::collections::HashSet::new();
            for _ in 0..1000 {
                used.insert(q.next_query().index);
            }
            let expected: std::collections::HashSet<_> = SecondaryIndex::ALL[..n].iter().copied().collect();
            assert_eq!(used, expected, "{n} indexes");
        }
    }

    #[test]
    fn query_streams_of_different_connections_differ() {
        let w = Window { tail: 0, head: 1 << 40 };
        assert_ne!(
            PointQueries::new(0, 0, 0, 0).next_keys(w),
            PointQueries::new(0, 0, 1, 0).next_keys(w)
        );
    }
}
