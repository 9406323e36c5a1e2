//! Insert Benchmark rows.
//!
//! Row `k` of table `t` is a pure function of `(seed, t, k)`: `transactionid`
//! is `k` itself (the table's head counter), `dateandtime` advances with `k`
//! like a clock, the four integer columns are uniform in their domains, and
//! `data` is printable text of length uniform in `[data_min, data_max]`,
//! compressible to `ratio`. So a row stored under key `k` can be regenerated
//! and checked.

use super::parallel::{par_fill, split_var, try_resize, CHUNK};
use super::stream::{block_spans, Halves, Purpose, Stream, StreamRng, BLOCK};
use super::values::{fill_offsets, Alphabet, Compressible, Length};
use crate::error::{Error, Result};
use rand_core::Rng;
use rayon::prelude::*;

/// `dateandtime` of row 0: 2025-01-01T00:00:00, in microseconds since the Unix epoch.
pub const EPOCH_MICROS: i64 = 1_735_689_600_000_000;

/// The value domains of the integer columns (reference.md §1).
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct Domains {
    /// `cashregisterid` is in `[0, cashregisters)`.
    pub cashregisters: u32,
    /// `customerid` is in `[0, customers)`.
    pub customers: u32,
    /// `productid` is in `[0, products)`.
    pub products: u32,
    /// `price` is in `[0, prices)`.
    pub prices: u32,
}

impl Default for Domains {
    fn default() -> Self {
        Domains {
            cashregisters: 1000,
            customers: 100_000,
            products: 10_000,
            prices: 500,
        }
    }
}

/// What rows to generate.
#[derive(Clone, Debug, PartialEq)]
pub struct RowSpec {
    /// The run's seed.
    pub seed: u64,
    /// The table number (each table has its own streams).
    pub table: u64,
    /// Length of `data`; the published runs use 10..=20.
    pub data_length: Length,
    /// Compressed/raw ratio of `data`, in (0, 1].
    pub ratio: f64,
    /// `Some(pct)`: `data` built as the reference client builds it instead
    /// (`'a'` padding, then `int(len × 0.75 × pct / 100)` random base64
    /// characters; `ratio` is then unused).
    pub data_random_pct: Option<u32>,
    /// How many consecutive keys share one `dateandtime` second.
    pub rows_per_second: u64,
    /// Domains of the integer columns.
    pub domains: Domains,
}

impl Default for RowSpec {
    fn default() -> Self {
        RowSpec {
            seed: 0,
            table: 0,
            data_length: Length::Uniform { min: 10, max: 20 },
            ratio: 0.5,
            data_random_pct: None,
            rows_per_second: 1000,
            domains: Domains::default(),
        }
    }
}

/// One row.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Row {
    /// The primary key.
    pub transactionid: i64,
    /// Microseconds since the Unix epoch, whole seconds.
    pub dateandtime: i64,
    /// In `[0, cashregisters)`.
    pub cashregisterid: i32,
    /// In `[0, customers)`.
    pub customerid: i32,
    /// In `[0, products)`.
    pub productid: i32,
    /// In `[0, prices)`.
    pub price: i32,
    /// Printable ASCII.
    pub data: String,
}

/// A batch of rows, column by column (Arrow's layout).
#[derive(Clone, Debug, Default, PartialEq, Eq)]
pub struct Rows {
    /// Primary keys.
    pub transactionid: Vec<i64>,
    /// Microseconds since the Unix epoch.
    pub dateandtime: Vec<i64>,
    /// Cash register ids.
    pub cashregisterid: Vec<i32>,
    /// Customer ids.
    pub customerid: Vec<i32>,
    /// Product ids.
    pub productid: Vec<i32>,
    /// Prices.
    pub price: Vec<i32>,
    /// `count + 1` offsets into `data`.
    pub data_offsets: Vec<i32>,
    /// The `data` strings back to back (ASCII).
    pub data: Vec<u8>,
}

impl Rows {
    /// The number of rows.
    pub fn len(&self) -> usize {
        self.transactionid.len()
    }

    /// True when there are no rows.
    pub fn is_empty(&self) -> bool {
        self.transactionid.is_empty()
    }

    /// Row `i` of the batch.
    pub fn row(&self, i: usize) -> Row {
        let data = &self.data[self.data_offsets[i] as usize..self.data_offsets[i + 1] as usize];
        Row {
            transactionid: self.transactionid[i],
            dateandtime: self.dateandtime[i],
            cashregisterid: self.cashregisterid[i],
            customerid: self.customerid[i],
            productid: self.productid[i],
            price: self.price[i],
            data: String::from_utf8(data.to_vec()).expect("data is ASCII"),
        }
    }
}

/// The base64 alphabet of the reference client's random characters.
const BASE64: &[u8; 64] = b"ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789+/";

/// How the `data` column is filled.
#[derive(Clone, Copy, Debug, PartialEq)]
enum Content {
    /// ibench's: ⌈len·ratio⌉ random printable characters, repeated.
    Compressible(Compressible),
    /// The reference client's (iibench.py): `'a'` × (len − r), then r random
    /// base64 characters, r = int(len × 0.75 × pct / 100).
    Reference { pct: u32 },
}

impl Content {
    /// The reference's random characters in a value of `len`: int(len × 0.75 × pct/100).
    fn reference_random(len: usize, pct: u32) -> usize {
        // Integer arithmetic: len × 75 × pct / 10000, truncated as Python's int().
        (len * 75 * pct as usize) / 10_000
    }

    #[inline]
    fn fill(&self, rng: &mut StreamRng, out: &mut [u8]) {
        match *self {
            Content::Compressible(c) => c.fill(rng, out),
            Content::Reference { pct } => {
                let r = Self::reference_random(out.len(), pct);
                let pad = out.len() - r;
                out[..pad].fill(b'a');
                for chunk in out[pad..].chunks_mut(8) {
                    let w = rng.next_u64();
                    for (j, b) in chunk.iter_mut().enumerate() {
                        *b = BASE64[((w >> (8 * j)) & 63) as usize];
                    }
                }
            }
        }
    }

    #[inline]
    fn skip(&self, rng: &mut StreamRng, len: usize) {
        match *self {
            Content::Compressible(c) => c.skip(rng, len),
            Content::Reference { pct } => super::stream::skip_bytes(rng, Self::reference_random(len, pct)),
        }
    }
}

/// Mutable views of one chunk of the drawn columns.
struct Drawn<'a> {
    cashregisterid: &'a mut [i32],
    customerid: &'a mut [i32],
    productid: &'a mut [i32],
    price: &'a mut [i32],
}

/// A validated row generator.
///
/// ```
/// use ibench::gen::{RowGen, RowSpec};
/// let generator = RowGen::new(&RowSpec::default())?;
/// let rows = generator.generate(500, 3)?;
/// assert_eq!(rows.transactionid, vec![500, 501, 502]);
/// assert_eq!(rows.row(1), generator.row(501));
/// # Ok::<(), ibench::Error>(())
/// ```
#[derive(Clone, Debug)]
pub struct RowGen {
    spec: RowSpec,
    content: Content,
    fields: Stream,
    lengths: Stream,
}

impl RowGen {
    /// Checks `spec` and prepares the generator.
    pub fn new(spec: &RowSpec) -> Result<Self> {
        spec.data_length.check("data_length")?;
        if spec.rows_per_second == 0 {
            return Err(Error::config("rows_per_second", "must be at least 1"));
        }
        let d = spec.domains;
        for (name, n) in [
            ("cashregisters", d.cashregisters),
            ("customers", d.customers),
            ("products", d.products),
            ("prices", d.prices),
        ] {
            if n == 0 || n > i32::MAX as u32 {
                return Err(Error::config(name, format!("must be in [1, {}], got {n}", i32::MAX)));
            }
        }
        Ok(RowGen {
            spec: spec.clone(),
            content: match spec.data_random_pct {
                None => Content::Compressible(Compressible::new(spec.ratio, Alphabet::Text, "ratio")?),
                Some(pct) if pct <= 100 => Content::Reference { pct },
                Some(pct) => return Err(Error::config("data_random_pct", format!("must be 0 to 100, got {pct}"))),
            },
            fields: Stream::new(spec.seed, spec.table, Purpose::Row),
            lengths: Stream::new(spec.seed, spec.table, Purpose::RowDataLength),
        })
    }

    /// The spec this generator was made from.
    pub fn spec(&self) -> &RowSpec {
        &self.spec
    }

    /// `dateandtime` of row `k`.
    #[inline]
    pub fn dateandtime(&self, k: u64) -> i64 {
        EPOCH_MICROS + (k / self.spec.rows_per_second) as i64 * 1_000_000
    }

    #[inline]
    fn draw_fields(&self, rng: &mut StreamRng) -> [i32; 4] {
        let d = &self.spec.domains;
        let mut h = Halves::new(rng);
        [
            h.below(d.cashregisters) as i32,
            h.below(d.customers) as i32,
            h.below(d.products) as i32,
            h.below(d.prices) as i32,
        ]
    }

    fn fill_drawn(&self, start: u64, offsets: &[i32], data: &mut [u8], out: Drawn<'_>) {
        let base = offsets[0];
        let mut skipped = Vec::new();
        for span in block_spans(start, offsets.len() - 1) {
            let mut rng = self.fields.block_rng(span.block);
            if span.skip > 0 {
                skipped.resize(span.skip, 0);
                self.spec
                    .data_length
                    .fill(&self.lengths, span.block * BLOCK, &mut skipped);
                for &len in &skipped {
                    self.draw_fields(&mut rng);
                    self.content.skip(&mut rng, len as usize);
                }
            }
            for i in span.out {
                let [cash, cust, prod, price] = self.draw_fields(&mut rng);
                out.cashregisterid[i] = cash;
                out.customerid[i] = cust;
                out.productid[i] = prod;
                out.price[i] = price;
                let (a, b) = ((offsets[i] - base) as usize, (offsets[i + 1] - base) as usize);
                self.content.fill(&mut rng, &mut data[a..b]);
            }
        }
    }

    /// Rows with keys `start..start + count`, generated in parallel on the
    /// current rayon pool.
    pub fn generate(&self, start: u64, count: usize) -> Result<Rows> {
        let mut rows = Rows::default();
        self.generate_into(start, count, &mut rows)?;
        Ok(rows)
    }

    /// Like [`RowGen::generate`], reusing the memory of `rows` (a load loop
    /// that reuses one batch never touches fresh pages).
    pub fn generate_into(&self, start: u64, count: usize, rows: &mut Rows) -> Result<()> {
        match start.checked_add(count as u64) {
            Some(end) if end <= i64::MAX as u64 => {}
            _ => {
                return Err(Error::config(
                    "count",
                    format!(
                        "start {start} + count {count} exceeds the largest BIGINT key {}",
                        i64::MAX
                    ),
                ));
            }
        }
        let total = fill_offsets(
            &self.spec.data_length,
            &self.lengths,
            start,
            count,
            &mut rows.data_offsets,
        )?;
        try_resize(&mut rows.data, total, "count")?;
        for column in [&mut rows.transactionid, &mut rows.dateandtime] {
            try_resize(column, count, "count")?;
        }
        for column in [
            &mut rows.cashregisterid,
            &mut rows.customerid,
            &mut rows.productid,
            &mut rows.price,
        ] {
            try_resize(column, count, "count")?;
        }
        par_fill(start, &mut rows.transactionid, |s, c| {
            c.iter_mut().zip(s as i64..).for_each(|(v, k)| *v = k)
        });
        par_fill(start, &mut rows.dateandtime, |s, c| self.fill_dateandtime(s, c));
        let pieces = split_var(&rows.data_offsets, &mut rows.data);
        (
            rows.cashregisterid.par_chunks_mut(CHUNK),
            rows.customerid.par_chunks_mut(CHUNK),
            rows.productid.par_chunks_mut(CHUNK),
            rows.price.par_chunks_mut(CHUNK),
        )
            .into_par_iter()
            .zip(pieces)
            .for_each(
                |((cashregisterid, customerid, productid, price), (first, offsets, data))| {
                    let drawn = Drawn {
                        cashregisterid,
                        customerid,
                        productid,
                        price,
                    };
                    self.fill_drawn(start + first as u64, offsets, data, drawn);
                },
            );
        Ok(())
    }

    /// `dateandtime` of rows `start..`, stepping the clock instead of dividing per row.
    fn fill_dateandtime(&self, start: u64, out: &mut [i64]) {
        let per = self.spec.rows_per_second;
        let (mut second, mut within) = (start / per, start % per);
        for v in out {
            *v = EPOCH_MICROS + second as i64 * 1_000_000;
            within += 1;
            if within == per {
                within = 0;
                second += 1;
            }
        }
    }

    /// Row `k` alone (as stored under primary key `k`).
    pub fn row(&self, k: u64) -> Row {
        let mut len = [0i32];
        self.spec.data_length.fill(&self.lengths, k, &mut len);
        let mut data = vec![0u8; len[0] as usize];
        let mut f = [[0i32; 1]; 4];
        let [a, b, c, d] = &mut f;
        let drawn = Drawn {
            cashregisterid: a,
            customerid: b,
            productid: c,
            price: d,
        };
        self.fill_drawn(k, &[0, len[0]], &mut data, drawn);
        Row {
            transactionid: k as i64,
            dateandtime: self.dateandtime(k),
            cashregisterid: f[0][0],
            customerid: f[1][0],
            productid: f[2][0],
            price: f[3][0],
            data: String::from_utf8(data).expect("data is ASCII"),
        }
    }
}

/// Rows generated in key order, call after call, without re-seeking: the
/// generator state carries over, so a load loop pays nothing to find where
/// its next batch starts. Output is identical to [`RowGen::generate`].
///
/// ```
/// use ibench::gen::{RowCursor, RowGen, RowSpec, Rows};
/// let g = RowGen::new(&RowSpec::default())?;
/// let mut cursor = RowCursor::new(g.clone());
/// let mut rows = Rows::default();
/// cursor.generate_into(100, 50, &mut rows)?;
/// cursor.generate_into(150, 50, &mut rows)?;
/// assert_eq!(rows, g.generate(150, 50)?);
/// # Ok::<(), ibench::Error>(())
/// ```
#[derive(Clone, Debug)]
pub struct RowCursor {
    gen: RowGen,
    next: u64,
    fields: StreamRng,
    lengths: StreamRng,
}

impl RowCursor {
    /// A cursor at row 0.
    pub fn new(gen: RowGen) -> Self {
        let (fields, lengths) = (gen.fields.block_rng(0), gen.lengths.block_rng(0));
        RowCursor {
            gen,
            next: 0,
            fields,
            lengths,
        }
    }

    /// Moves to row `k` (seeding its block and skipping the rows before it).
    fn seek(&mut self, k: u64) {
        let block = k / BLOCK;
        self.fields = self.gen.fields.block_rng(block);
        self.lengths = self.gen.lengths.block_rng(block);
        for _ in 0..k % BLOCK {
            let len = self.gen.spec.data_length.draw(&mut self.lengths);
            self.gen.draw_fields(&mut self.fields);
            self.gen.content.skip(&mut self.fields, len as usize);
        }
        self.next = k;
    }

    /// Rows with keys `start..start + count` into `rows` (its memory reused);
    /// cheapest when `start` is where the previous call ended.
    pub fn generate_into(&mut self, start: u64, count: usize, rows: &mut Rows) -> Result<()> {
        match start.checked_add(count as u64) {
            Some(end) if end <= i64::MAX as u64 => {}
            _ => {
                return Err(Error::config(
                    "count",
                    format!("start {start} + count {count} exceeds the largest BIGINT key"),
                ))
            }
        }
        if start != self.next {
            self.seek(start);
        }
        for v in [&mut rows.transactionid, &mut rows.dateandtime] {
            v.clear();
        }
        for v in [
            &mut rows.cashregisterid,
            &mut rows.customerid,
            &mut rows.productid,
            &mut rows.price,
        ] {
            v.clear();
        }
        rows.data.clear();
        rows.data_offsets.clear();
        rows.data_offsets.push(0);
        for k in start..start + count as u64 {
            let len = self.gen.spec.data_length.draw(&mut self.lengths) as usize;
            let [cash, cust, prod, price] = self.gen.draw_fields(&mut self.fields);
            rows.transactionid.push(k as i64);
            rows.dateandtime.push(self.gen.dateandtime(k));
            rows.cashregisterid.push(cash);
            rows.customerid.push(cust);
            rows.productid.push(prod);
            rows.price.push(price);
            let at = rows.data.len();
            if at + len > i32::MAX as usize {
                return Err(Error::config(
                    "count",
                    "rows exceed 2 GiB of data in one batch; generate smaller batches",
                ));
            }
            rows.data.resize(at + len, 0);
            self.gen.content.fill(&mut self.fields, &mut rows.data[at..]);
            rows.data_offsets.push(rows.data.len() as i32);
            if (k + 1) % BLOCK == 0 {
                let block = (k + 1) / BLOCK;
                self.fields = self.gen.fields.block_rng(block);
                self.lengths = self.gen.lengths.block_rng(block);
            }
        }
        self.next = start + count as u64;
        Ok(())
    }
}
