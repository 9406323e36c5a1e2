//! The sysbench suite's data (research/sysbench.md §1): each table's rows
//! and the values its events bind, from the run's seed.
//!
//! Row `id` (from 1) of table `t` (from 1) is a pure function of `(seed, t,
//! id)`: `c` is 10 groups of 11 digits joined by `-` (119 characters),
//! `pad` 5 such groups (59), both drawn from stream `(seed, SB_TABLES + t,
//! SbRow)` at 15 words a row (a group of digits per word), so any row can be
//! made alone; `k` is key `id − 1` of a [`KeyGen`] of the configured
//! distribution over `[0, size)`, plus 1 (uniform by default, where sysbench
//! 1.0.20's default is skewed). An event's draws come from one stream per
//! (step, client): the tables, ids and new values it binds.

use super::keys::{KeyGen, KeyKind, KeySpec};
use super::stream::{below, Purpose, Stream, StreamRng, BLOCK};
use super::zipf::ZipfRanks;
use crate::error::{Error, Result};
use rand_core::Rng;

/// A statement of the suite (oltp_common.lua's `stmt_defs` and the extra
/// scripts'), as the family sends it; its SQL per dialect is in
/// `connect/sysbench.rs`, the groups an event runs in `workload/sysbench.rs`.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
pub enum SbStatement {
    /// `SELECT c FROM sbtestN WHERE id=?`
    PointSelect,
    /// `SELECT c ... WHERE id BETWEEN ? AND ?`
    SimpleRange,
    /// `SELECT SUM(k) ... WHERE id BETWEEN ? AND ?`
    SumRange,
    /// `SELECT c ... WHERE id BETWEEN ? AND ? ORDER BY c`
    OrderRange,
    /// `SELECT DISTINCT c ... WHERE id BETWEEN ? AND ? ORDER BY c`
    DistinctRange,
    /// `SELECT count(c) ... WHERE id BETWEEN ? AND ?`
    CountRange,
    /// `UPDATE sbtestN SET k=k+1 WHERE id=?`
    IndexUpdate,
    /// `UPDATE sbtestN SET c=? WHERE id=?`
    NonIndexUpdate,
    /// `DELETE FROM sbtestN WHERE id=?`
    Delete,
    /// `INSERT INTO sbtestN (id, k, c, pad) VALUES (?, ?, ?, ?)` (write-only's re-insert)
    Insert,
    /// `SELECT c ... WHERE id IN (?, ... n)`
    InlistSelect(u32),
    /// `UPDATE sbtestN set c=? WHERE id IN (?, ... n)`
    InlistUpdate(u32),
    /// `SELECT <col>[, c] ... WHERE <col> IN (?, ... n)`, `<col>` id or k.
    Points { on_k: bool, covered: bool, n: u32 },
    /// `SELECT <col>[, c] ... WHERE <col> BETWEEN ? AND ?`
    CoveredRange { on_k: bool, covered: bool },
    /// upstream select_random_points.lua's `SELECT id, k, c, pad ... WHERE k IN (?, ... n)`
    KPoints(u32),
    /// upstream select_random_ranges.lua's `SELECT count(k) ... WHERE k BETWEEN ? AND ? OR ...`:
    /// `n` ranges of `delta` + 1 values.
    KRanges { n: u32, delta: u32 },
    /// `SELECT * from sbtestN WHERE LENGTH(c) < 0`: a full scan returning
    /// nothing; sent as text, as oltp_scan.lua does.
    Scan,
    /// oltp_insert.lua's insert of a new row, the server assigning its id,
    /// sent as text (MySQL: id 0; PostgreSQL and SQLite leave id out).
    InsertNew,
    /// `BEGIN`
    Begin,
    /// `COMMIT`
    Commit,
}

impl SbStatement {
    /// True for statements sent as text whatever `statements` says (the
    /// suite's scripts never prepare them).
    pub fn always_text(self) -> bool {
        matches!(self, SbStatement::Scan | SbStatement::InsertNew)
    }

    /// True for the statements that change rows.
    pub fn writes(self) -> bool {
        matches!(
            self,
            SbStatement::IndexUpdate
                | SbStatement::NonIndexUpdate
                | SbStatement::Delete
                | SbStatement::Insert
                | SbStatement::InlistUpdate(_)
                | SbStatement::InsertNew
        )
    }
}

/// Characters of `c`: 10 groups of 11 digits and 9 dashes.
pub const C_LEN: usize = 119;
/// Characters of `pad`: 5 groups of 11 digits and 4 dashes.
pub const PAD_LEN: usize = 59;
/// Digits per group.
const GROUP: usize = 11;
/// Random words a row's `c` and `pad` take.
const WORDS_PER_ROW: u64 = 15;

/// Streams of the sysbench tables are numbered from here, apart from the
/// other families'.
pub const SB_TABLES: u64 = 1 << 41;
/// Streams of the sysbench events are numbered from here.
pub const SB_EVENTS: u64 = 1 << 42;

/// Writes `out.len() / 12 + 1` groups of 11 digits joined by dashes: one
/// random word per group, its digits read off as a fraction's decimals
/// (36.5 of its 64 bits: within 2^-27 of uniform per digit).
#[inline]
fn digit_groups(rng: &mut StreamRng, out: &mut [u8]) {
    for chunk in out.chunks_mut(GROUP + 1) {
        let mut x = rng.next_u64();
        for d in chunk.iter_mut().take(GROUP) {
            let m = x as u128 * 10;
            *d = b'0' + (m >> 64) as u8;
            x = m as u64;
        }
        if let Some(dash) = chunk.get_mut(GROUP) {
            *dash = b'-';
        }
    }
}

/// What a table's rows are made from.
#[derive(Clone, Debug, PartialEq)]
pub struct SbRowSpec {
    pub seed: u64,
    /// The table's number, from 1 (`sbtest1`).
    pub table: u32,
    /// Rows of the table: ids `1..=size`, k in `[1, size]`.
    pub size: u64,
    /// k's distribution (uniform, zipfian or latest).
    pub k: KeyKind,
    /// The exponent of a zipfian or latest k.
    pub theta: f64,
}

/// Rows of a sysbench table, column by column.
#[derive(Clone, Debug, Default, PartialEq)]
pub struct SbRows {
    /// The first row's id; the others follow it.
    pub first_id: u64,
    pub k: Vec<i32>,
    /// [`C_LEN`] bytes per row.
    pub c: Vec<u8>,
    /// [`PAD_LEN`] bytes per row.
    pub pad: Vec<u8>,
}

impl SbRows {
    /// Rows held.
    pub fn len(&self) -> usize {
        self.k.len()
    }

    /// True when none.
    pub fn is_empty(&self) -> bool {
        self.k.is_empty()
    }

    /// Row `i`'s c.
    pub fn c(&self, i: usize) -> &[u8] {
        &self.c[i * C_LEN..(i + 1) * C_LEN]
    }

    /// Row `i`'s pad.
    pub fn pad(&self, i: usize) -> &[u8] {
        &self.pad[i * PAD_LEN..(i + 1) * PAD_LEN]
    }
}

/// A table's rows by id.
#[derive(Clone, Debug)]
pub struct SbRowGen {
    spec: SbRowSpec,
    stream: Stream,
    k: KeyGen,
}

impl SbRowGen {
    /// Checks `spec` (a table from 1, rows that fit sysbench's INT columns).
    pub fn new(spec: &SbRowSpec) -> Result<Self> {
        if spec.table == 0 {
            return Err(Error::config("tables", "tables are numbered from 1 (sbtest1)"));
        }
        if spec.size == 0 || spec.size > i32::MAX as u64 {
            return Err(Error::config(
                "table_size",
                format!("must be from 1 to {} (ids and k are INT), got {}", i32::MAX, spec.size),
            ));
        }
        let table = SB_TABLES + spec.table as u64;
        let k = KeyGen::new(&KeySpec {
            space: Some(spec.size),
            seed: spec.seed,
            table,
            theta: spec.theta,
            ..KeySpec::new(spec.k)
        })?;
        Ok(SbRowGen {
            spec: spec.clone(),
            stream: Stream::new(spec.seed, table, Purpose::SbRow),
            k,
        })
    }

    /// Rows `first_id .. first_id + n` into `out` (its memory reused).
    pub fn fill(&self, first_id: u64, n: usize, out: &mut SbRows) -> Result<()> {
        if first_id == 0 || first_id - 1 + n as u64 > self.spec.size {
            return Err(Error::config(
                "id",
                format!(
                    "rows {first_id}..{} are outside the table's ids 1..={}",
                    first_id + n as u64,
                    self.spec.size
                ),
            ));
        }
        out.first_id = first_id;
        out.k.clear();
        let mut cursor = self.k.cursor(first_id - 1);
        out.k.extend((0..n).map(|_| (cursor.next_key() + 1) as i32));
        out.c.resize(n * C_LEN, 0);
        out.pad.resize(n * PAD_LEN, 0);
        let index = first_id - 1;
        let mut rng = self.rng_at(index);
        for i in 0..n {
            let row = index + i as u64;
            if i > 0 && row.is_multiple_of(BLOCK) {
                rng = self.stream.block_rng(row / BLOCK);
            }
            digit_groups(&mut rng, &mut out.c[i * C_LEN..(i + 1) * C_LEN]);
            digit_groups(&mut rng, &mut out.pad[i * PAD_LEN..(i + 1) * PAD_LEN]);
        }
        Ok(())
    }

    /// The generator positioned at row index `index` (id − 1).
    fn rng_at(&self, index: u64) -> StreamRng {
        let mut rng = self.stream.block_rng(index / BLOCK);
        for _ in 0..(index % BLOCK) * WORDS_PER_ROW {
            rng.next_u64();
        }
        rng
    }

    /// Row `id` alone.
    pub fn row(&self, id: u64) -> Result<SbRows> {
        let mut out = SbRows::default();
        self.fill(id, 1, &mut out)?;
        Ok(out)
    }
}

/// Which ids an event's statements pick, over `[1, n]`.
#[derive(Clone, Debug)]
pub enum SbIds {
    /// Uniform.
    Uniform(u64),
    /// Zipfian ranks, id 1 the hottest (sysbench's `--rand-type=zipfian`).
    Zipf(ZipfRanks),
    /// Zipfian ranks from the top: id n the hottest.
    Latest(ZipfRanks, u64),
    /// Always id 1.
    One,
    /// The `points` ids after the middle, `n/2 + 1 ..`, every time (hot-points).
    Hot(u64),
    /// Uniform in `[lo, hi]`: a client's own segment of the table
    /// (upstream's select_random_points and select_random_ranges).
    Segment { lo: u64, hi: u64 },
}

impl SbIds {
    /// Ids over `[1, n]` drawn as `kind` says (uniform, zipfian, latest),
    /// with exponent `theta` where zipfian.
    pub fn drawn(kind: KeyKind, n: u64, theta: f64) -> Result<SbIds> {
        if !(theta.is_finite() && theta > 0.0) {
            return Err(Error::config(
                "rand_zipfian_exp",
                format!("must be a finite number > 0, got {theta}"),
            ));
        }
        Ok(match kind {
            KeyKind::Uniform => SbIds::Uniform(n),
            KeyKind::Zipfian => SbIds::Zipf(ZipfRanks::new(n, theta)),
            KeyKind::Latest => SbIds::Latest(ZipfRanks::new(n, theta), n),
            other => {
                return Err(Error::config(
                    "id_distribution",
                    format!("{other} ids are not drawn: uniform, zipfian or latest"),
                ))
            }
        })
    }
}

/// The draws of one client's events in one step: tables, ids, new values.
#[derive(Clone, Debug)]
pub struct SbDraws {
    rng: StreamRng,
    tables: u32,
}

impl SbDraws {
    /// The draws of client `client` in step number `ordinal`, over `tables` tables.
    pub fn new(seed: u64, ordinal: u64, client: u32, tables: u32) -> SbDraws {
        let stream = Stream::new(seed, SB_EVENTS + ordinal * 65_536 + client as u64, Purpose::SbEvent);
        SbDraws {
            rng: stream.block_rng(0),
            tables: tables.max(1),
        }
    }

    /// A table, uniform in `[1, tables]`.
    #[inline]
    pub fn table(&mut self) -> u32 {
        below(&mut self.rng, self.tables as u64) as u32 + 1
    }

    /// An id of `ids`; the `i`-th of hot-points' run of ids.
    #[inline]
    pub fn id(&mut self, ids: &SbIds, i: u32) -> u64 {
        match ids {
            SbIds::Uniform(n) => below(&mut self.rng, *n) + 1,
            SbIds::Zipf(ranks) => ranks.sample(&mut self.rng) + 1,
            SbIds::Latest(ranks, n) => n - ranks.sample(&mut self.rng),
            SbIds::One => 1,
            SbIds::Hot(n) => n / 2 + 1 + i as u64,
            SbIds::Segment { lo, hi } => lo + below(&mut self.rng, hi - lo + 1),
        }
    }

    /// A new value of `c` (or, with `PAD_LEN` bytes, of `pad`).
    #[inline]
    pub fn text(&mut self, out: &mut [u8]) {
        digit_groups(&mut self.rng, out);
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn spec(seed: u64) -> SbRowSpec {
        SbRowSpec {
            seed,
            table: 1,
            size: 1000,
            k: KeyKind::Uniform,
            theta: 0.8,
        }
    }

    #[test]
    fn c_and_pad_have_the_suites_shape() {
        let rows = SbRowGen::new(&spec(0)).unwrap().row(7).unwrap();
        let shape = |text: &[u8], groups: usize| {
            let s = std::str::from_utf8(text).unwrap();
            let parts: Vec<&str> = s.split('-').collect();
            assert_eq!(parts.len(), groups, "{s}");
            assert!(
                parts
                    .iter()
                    .all(|p| p.len() == 11 && p.bytes().all(|b| b.is_ascii_digit())),
                "{s}"
            );
        };
        shape(rows.c(0), 10);
        shape(rows.pad(0), 5);
        assert!((1..=1000).contains(&rows.k[0]));
    }

    #[test]
    fn any_row_alone_is_the_row_of_a_whole_fill() {
        let g = SbRowGen::new(&spec(3)).unwrap();
        let mut all = SbRows::default();
        g.fill(1, 1000, &mut all).unwrap();
        for id in [1u64, 2, 255, 256, 257, 513, 1000] {
            let one = g.row(id).unwrap();
            let i = (id - 1) as usize;
            assert_eq!(
                (one.k[0], one.c(0), one.pad(0)),
                (all.k[i], all.c(i), all.pad(i)),
                "id {id}"
            );
        }
        let mut part = SbRows::default();
        g.fill(300, 400, &mut part).unwrap();
        assert_eq!(part.c(0), all.c(299));
        assert_eq!(part.pad(399), all.pad(698));
    }

    #[test]
    fn the_seed_and_the_table_change_the_rows() {
        let a = SbRowGen::new(&spec(1)).unwrap().row(5).unwrap();
        let b = SbRowGen::new(&spec(2)).unwrap().row(5).unwrap();
        let c = SbRowGen::new(&SbRowSpec { table: 2, ..spec(1) })
            .unwrap()
            .row(5)
            .unwrap();
        assert_ne!(a.c, b.c);
        assert_ne!(a.c, c.c);
        assert_eq!(a, SbRowGen::new(&spec(1)).unwrap().row(5).unwrap());
    }

    #[test]
    fn digits_are_uniform() {
        let mut rows = SbRows::default();
        SbRowGen::new(&spec(9)).unwrap().fill(1, 1000, &mut rows).unwrap();
        let mut counts = [0u64; 10];
        for b in rows.c.iter().chain(&rows.pad).filter(|b| b.is_ascii_digit()) {
            counts[(b - b'0') as usize] += 1;
        }
        let n: u64 = counts.iter().sum();
        let expected = n as f64 / 10.0;
        let chi2: f64 = counts.iter().map(|&c| (c as f64 - expected).powi(2) / expected).sum();
        // 9 degrees of freedom: P(chi2 > 27.9) = 0.001.
        assert!(chi2 < 27.9, "{counts:?} chi2 {chi2}");
    }

    #[test]
    fn events_ids_stay_in_the_table_and_hot_ids_are_the_middles() {
        let mut d = SbDraws::new(0, 3, 1, 4);
        let uniform = SbIds::drawn(KeyKind::Uniform, 50, 0.8).unwrap();
        let zipf = SbIds::drawn(KeyKind::Zipfian, 50, 0.8).unwrap();
        let mut ones = 0;
        for _ in 0..10_000 {
            assert!((1..=50).contains(&d.id(&uniform, 0)));
            let z = d.id(&zipf, 0);
            assert!((1..=50).contains(&z));
            ones += (z == 1) as u32;
            assert!((1..=4).contains(&d.table()));
        }
        assert!(ones > 10_000 / 50 * 3, "id 1 is the hottest: {ones}");
        assert_eq!(d.id(&SbIds::Hot(1000), 0), 501);
        assert_eq!(d.id(&SbIds::Hot(1000), 99), 600);
        assert_eq!(d.id(&SbIds::One, 0), 1);
    }

    #[test]
    fn ids_outside_the_table_are_refused() {
        let g = SbRowGen::new(&spec(0)).unwrap();
        assert!(g.row(0).is_err());
        assert!(g.row(1001).is_err());
        assert!(SbRowGen::new(&SbRowSpec { size: 0, ..spec(0) }).is_err());
    }
}
