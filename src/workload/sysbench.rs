//! The sysbench microbenchmark suite as the published release comparisons
//! run it (docs/sysbench.md; ../shared/research/sysbench.md): its steps by
//! their published names, each microbenchmark's statements, transaction,
//! keys and duration declared as data ([`SbTest::event`]), and the suite's
//! order ([`SUITE`], [`LONG_SUITE`]).
//!
//! A step's name is the label the suite's summaries give it:
//! `point-query`, `read-only_range=10`, `random-points_range=1000`,
//! `range-notcovered-si.pre`, `scan.warm`; the data phase is `load` (the
//! rows, in id order, primary key only), `create-index` (the index on `k`)
//! and `postwrite` (the pause, `postwrite.2` for the second). A range (or
//! points) size that is the microbenchmark's default is left out of the
//! name (`hot-points` is `hot-points_range=100`).

pub use crate::gen::SbStatement;
use std::fmt;

/// A run of statements of one kind in an event: each run picks its own
/// table, as each `execute_*` of oltp_common.lua does.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum SbGroup {
    /// `count` statements of this kind, each with its own id(s).
    Each(SbStatement, u32),
    /// write-only's delete of a random id and the insert of that id again.
    DeleteInsert,
}

/// One event (sysbench's transaction) of a microbenchmark: its statement
/// groups, and whether BEGIN and COMMIT surround them.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct SbEvent {
    pub groups: Vec<SbGroup>,
    pub trx: bool,
}

impl SbEvent {
    /// Statements per event, as sysbench counts them (BEGIN and COMMIT included).
    pub fn statements(&self) -> u32 {
        let inner: u32 = self
            .groups
            .iter()
            .map(|g| match g {
                SbGroup::Each(_, n) => *n,
                SbGroup::DeleteInsert => 2,
            })
            .sum();
        inner + 2 * self.trx as u32
    }
}

/// How long a microbenchmark runs: the published scripts' `readsecs`,
/// `writesecs`, `insertsecs`, or the scan warm-ups' 60 s.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum SbDuration {
    Read,
    Write,
    Insert,
    ScanWarm,
}

/// Which keys a microbenchmark's ids come from.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum SbKeys {
    /// `id_distribution` over `[1, table_size]` (uniform by default).
    Ids,
    /// update-zipf: zipfian ranks over `[1, table_size]`, id 1 the hottest
    /// (sysbench's `--rand-type=zipfian`, exponent `rand_zipfian_exp`).
    Zipf,
    /// update-one: always id 1 (the scripts' `--table-size=1`).
    One,
    /// hot-points: the same adjacent ids `N/2+1 ..= N/2+n` every time.
    Hot,
    /// upstream's select_random_*: each client its own segment of the
    /// table, `[c·N/C, (c+1)·N/C]` for client c of C.
    Segment,
}

/// The report's groups, as the published posts chart them.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
pub enum SbReportGroup {
    Point,
    /// Range queries without aggregation.
    Range,
    /// Range queries with aggregation.
    RangeAggregate,
    Write,
}

impl SbReportGroup {
    /// Its name in results and reports.
    pub fn name(self) -> &'static str {
        match self {
            SbReportGroup::Point => "point",
            SbReportGroup::Range => "range",
            SbReportGroup::RangeAggregate => "range-aggregate",
            SbReportGroup::Write => "write",
        }
    }
}

/// A microbenchmark of the suite, named as the suite's scripts name it.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
pub enum SbTest {
    PointQuery,
    RandomPoints,
    HotPoints,
    PointsCoveredPk,
    PointsNotcoveredPk,
    PointsCoveredSi,
    PointsNotcoveredSi,
    RangeCoveredPk,
    RangeNotcoveredPk,
    RangeCoveredSi,
    RangeNotcoveredSi,
    Scan,
    ReadOnly,
    ReadOnlySimple,
    ReadOnlySum,
    ReadOnlyOrder,
    ReadOnlyDistinct,
    ReadOnlyCount,
    UpdateInlist,
    UpdateIndex,
    UpdateNonindex,
    UpdateOne,
    UpdateZipf,
    WriteOnly,
    ReadWrite,
    Delete,
    Insert,
    /// Upstream sysbench's select_random_points.lua (not in the published
    /// suite; stock sysbench runs it).
    SelectRandomPoints,
    /// Upstream sysbench's select_random_ranges.lua.
    SelectRandomRanges,
}

impl SbTest {
    /// Every microbenchmark.
    pub const ALL: [SbTest; 29] = [
        SbTest::PointQuery,
        SbTest::RandomPoints,
        SbTest::HotPoints,
        SbTest::PointsCoveredPk,
        SbTest::PointsNotcoveredPk,
        SbTest::PointsCoveredSi,
        SbTest::PointsNotcoveredSi,
        SbTest::RangeCoveredPk,
        SbTest::RangeNotcoveredPk,
        SbTest::RangeCoveredSi,
        SbTest::RangeNotcoveredSi,
        SbTest::Scan,
        SbTest::ReadOnly,
        SbTest::ReadOnlySimple,
        SbTest::ReadOnlySum,
        SbTest::ReadOnlyOrder,
        SbTest::ReadOnlyDistinct,
        SbTest::ReadOnlyCount,
        SbTest::UpdateInlist,
        SbTest::UpdateIndex,
        SbTest::UpdateNonindex,
        SbTest::UpdateOne,
        SbTest::UpdateZipf,
        SbTest::WriteOnly,
        SbTest::ReadWrite,
        SbTest::Delete,
        SbTest::Insert,
        SbTest::SelectRandomPoints,
        SbTest::SelectRandomRanges,
    ];

    /// The published name.
    pub fn name(self) -> &'static str {
        use SbTest::*;
        match self {
            PointQuery => "point-query",
            RandomPoints => "random-points",
            HotPoints => "hot-points",
            PointsCoveredPk => "points-covered-pk",
            PointsNotcoveredPk => "points-notcovered-pk",
            PointsCoveredSi => "points-covered-si",
            PointsNotcoveredSi => "points-notcovered-si",
            RangeCoveredPk => "range-covered-pk",
            RangeNotcoveredPk => "range-notcovered-pk",
            RangeCoveredSi => "range-covered-si",
            RangeNotcoveredSi => "range-notcovered-si",
            Scan => "scan",
            ReadOnly => "read-only",
            ReadOnlySimple => "read-only-simple",
            ReadOnlySum => "read-only-sum",
            ReadOnlyOrder => "read-only-order",
            ReadOnlyDistinct => "read-only-distinct",
            ReadOnlyCount => "read-only-count",
            UpdateInlist => "update-inlist",
            UpdateIndex => "update-index",
            UpdateNonindex => "update-nonindex",
            UpdateOne => "update-one",
            UpdateZipf => "update-zipf",
            WriteOnly => "write-only",
            ReadWrite => "read-write",
            Delete => "delete",
            Insert => "insert",
            SelectRandomPoints => "select-random-points",
            SelectRandomRanges => "select-random-ranges",
        }
    }

    /// The range (or points) size it runs with when its name gives none:
    /// the scripts' `range` argument (100, but 1000 for the read-only
    /// variants and 10000 for write-only, whose range is unused).
    pub fn default_range(self) -> u32 {
        use SbTest::*;
        match self {
            ReadOnlySimple | ReadOnlySum | ReadOnlyOrder | ReadOnlyDistinct | ReadOnlyCount => 1000,
            WriteOnly => 10000,
            // upstream's --random-points and --number_of_ranges
            SelectRandomPoints | SelectRandomRanges => 10,
            _ => 100,
        }
    }

    /// True when its name carries its range (`read-only_range=10`): the
    /// microbenchmarks the suite runs at several sizes.
    pub fn ranged(self) -> bool {
        matches!(self, SbTest::RandomPoints | SbTest::ReadOnly | SbTest::ReadWrite)
    }

    /// True when the range size changes what it runs (write-only's and the
    /// single-row ones' do not).
    pub fn uses_range(self) -> bool {
        use SbTest::*;
        !matches!(
            self,
            PointQuery | Scan | UpdateIndex | UpdateNonindex | UpdateOne | UpdateZipf | WriteOnly | Delete | Insert
        )
    }

    /// Its report group (the published charts' four).
    pub fn group(self) -> SbReportGroup {
        use SbTest::*;
        match self {
            PointQuery | RandomPoints | HotPoints | PointsCoveredPk | PointsNotcoveredPk | PointsCoveredSi
            | PointsNotcoveredSi | SelectRandomPoints => SbReportGroup::Point,
            RangeCoveredPk | RangeNotcoveredPk | RangeCoveredSi | RangeNotcoveredSi | Scan => SbReportGroup::Range,
            ReadOnly | ReadOnlySimple | ReadOnlySum | ReadOnlyOrder | ReadOnlyDistinct | ReadOnlyCount
            | SelectRandomRanges => SbReportGroup::RangeAggregate,
            UpdateInlist | UpdateIndex | UpdateNonindex | UpdateOne | UpdateZipf | WriteOnly | ReadWrite | Delete
            | Insert => SbReportGroup::Write,
        }
    }

    /// How long it runs. write-only runs for the read duration, as the
    /// published scripts run it (a quirk kept: docs/sysbench.md).
    pub fn duration(self) -> SbDuration {
        use SbTest::*;
        match self {
            UpdateInlist | UpdateIndex | UpdateNonindex | UpdateOne | UpdateZipf | ReadWrite | Delete => {
                SbDuration::Write
            }
            Insert => SbDuration::Insert,
            _ => SbDuration::Read,
        }
    }

    /// Which ids it picks.
    pub fn keys(self) -> SbKeys {
        match self {
            SbTest::UpdateZipf => SbKeys::Zipf,
            SbTest::UpdateOne => SbKeys::One,
            SbTest::HotPoints => SbKeys::Hot,
            SbTest::SelectRandomPoints | SbTest::SelectRandomRanges => SbKeys::Segment,
            _ => SbKeys::Ids,
        }
    }

    /// True when it reads the index on `k` (it needs `create-index` first).
    pub fn needs_k_index(self) -> bool {
        use SbTest::*;
        matches!(
            self,
            PointsCoveredSi
                | PointsNotcoveredSi
                | RangeCoveredSi
                | RangeNotcoveredSi
                | SelectRandomPoints
                | SelectRandomRanges
        )
    }

    /// True for upstream's scripts that run on sbtest1 alone (they assert `--tables=1`).
    pub fn one_table(self) -> bool {
        matches!(self, SbTest::SelectRandomPoints | SbTest::SelectRandomRanges)
    }

    /// True when its events write.
    pub fn writes(self) -> bool {
        self.group() == SbReportGroup::Write
    }

    /// One event's statements at range (points) size `range`, as its Lua
    /// script and run.sh's arguments make it.
    pub fn event(self, range: u32) -> SbEvent {
        use SbGroup::Each;
        use SbStatement as S;
        use SbTest::*;
        let read_only = |ranges: &[S]| {
            let mut groups = vec![Each(S::PointSelect, 10)];
            groups.extend(ranges.iter().map(|&s| Each(s, 1)));
            groups
        };
        let (groups, trx) = match self {
            PointQuery => (vec![Each(S::PointSelect, 1)], false),
            RandomPoints | HotPoints => (vec![Each(S::InlistSelect(range), 1)], false),
            PointsCoveredPk | PointsNotcoveredPk | PointsCoveredSi | PointsNotcoveredSi => {
                let (on_k, covered) = self.column_and_cover();
                (
                    vec![Each(
                        S::Points {
                            on_k,
                            covered,
                            n: range,
                        },
                        1,
                    )],
                    false,
                )
            }
            RangeCoveredPk | RangeNotcoveredPk | RangeCoveredSi | RangeNotcoveredSi => {
                let (on_k, covered) = self.column_and_cover();
                (vec![Each(S::CoveredRange { on_k, covered }, 1)], false)
            }
            Scan => (vec![Each(S::Scan, 1)], false),
            ReadOnly => (
                read_only(&[S::SimpleRange, S::SumRange, S::OrderRange, S::DistinctRange]),
                true,
            ),
            ReadOnlySimple => (read_only(&[S::SimpleRange]), true),
            ReadOnlySum => (read_only(&[S::SumRange]), true),
            ReadOnlyOrder => (read_only(&[S::OrderRange]), true),
            ReadOnlyDistinct => (read_only(&[S::DistinctRange]), true),
            ReadOnlyCount => (vec![Each(S::CountRange, 1)], false),
            UpdateInlist => (vec![Each(S::InlistUpdate(range), 1)], false),
            UpdateIndex => (vec![Each(S::IndexUpdate, 1)], false),
            UpdateNonindex | UpdateOne | UpdateZipf => (vec![Each(S::NonIndexUpdate, 1)], false),
            WriteOnly => (
                vec![
                    Each(S::IndexUpdate, 1),
                    Each(S::NonIndexUpdate, 1),
                    SbGroup::DeleteInsert,
                ],
                true,
            ),
            ReadWrite => {
                let mut groups = read_only(&[S::SimpleRange, S::SumRange, S::OrderRange, S::DistinctRange]);
                groups.extend([
                    Each(S::IndexUpdate, 1),
                    Each(S::NonIndexUpdate, 1),
                    SbGroup::DeleteInsert,
                ]);
                (groups, true)
            }
            Delete => (vec![Each(S::Delete, 1)], false),
            Insert => (vec![Each(S::InsertNew, 1)], false),
            SelectRandomPoints => (vec![Each(S::KPoints(range), 1)], false),
            SelectRandomRanges => (vec![Each(S::KRanges { n: range, delta: 5 }, 1)], false),
        };
        SbEvent { groups, trx }
    }

    /// The points and range microbenchmarks' column (k or id) and whether
    /// they read only indexed columns.
    fn column_and_cover(self) -> (bool, bool) {
        use SbTest::*;
        let on_k = matches!(
            self,
            PointsCoveredSi | PointsNotcoveredSi | RangeCoveredSi | RangeNotcoveredSi
        );
        let covered = matches!(
            self,
            PointsCoveredPk | PointsCoveredSi | RangeCoveredPk | RangeCoveredSi
        );
        (on_k, covered)
    }
}

/// A microbenchmark's variant: before the writes (`.pre`), or a warm-up
/// whose figures are not reported (`.warm`, `.warmpre`).
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
pub enum SbVariant {
    Plain,
    Pre,
    Warm,
    WarmPre,
}

impl SbVariant {
    const ALL: [SbVariant; 4] = [SbVariant::Plain, SbVariant::Pre, SbVariant::Warm, SbVariant::WarmPre];

    fn suffix(self) -> &'static str {
        match self {
            SbVariant::Plain => "",
            SbVariant::Pre => ".pre",
            SbVariant::Warm => ".warm",
            SbVariant::WarmPre => ".warmpre",
        }
    }
}

/// One microbenchmark as a step: which, its variant and its range size.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
pub struct Microbenchmark {
    pub test: SbTest,
    pub variant: SbVariant,
    /// Rows per range (random-points, the points and covered-range
    /// microbenchmarks: ids per statement).
    pub range: u32,
}

impl Microbenchmark {
    /// True for the warm-ups, whose figures the suite does not report.
    pub fn warmup(&self) -> bool {
        matches!(self.variant, SbVariant::Warm | SbVariant::WarmPre)
    }

    /// How long it runs: the scan warm-ups 60 s, the others by their kind.
    pub fn duration(&self) -> SbDuration {
        if self.test == SbTest::Scan && self.warmup() {
            SbDuration::ScanWarm
        } else {
            self.test.duration()
        }
    }
}

/// A step of the sysbench family.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
pub enum SbStep {
    /// `load`: the tables created and filled in id order, primary key only.
    Load,
    /// `create-index`: the index on `k` of every table.
    CreateIndex,
    /// `postwrite` (`postwrite.N` for the N-th): the pause between phases.
    Postwrite(u8),
    /// A microbenchmark.
    Run(Microbenchmark),
}

impl SbStep {
    /// The microbenchmark, if this is one.
    pub fn microbenchmark(self) -> Option<Microbenchmark> {
        match self {
            SbStep::Run(m) => Some(m),
            _ => None,
        }
    }

    /// True for the steps that change the tables' rows.
    pub fn writes(self) -> bool {
        match self {
            SbStep::Load => true,
            SbStep::Run(m) => m.test.writes(),
            _ => false,
        }
    }
}

impl fmt::Display for SbStep {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self {
            SbStep::Load => f.write_str("load"),
            SbStep::CreateIndex => f.write_str("create-index"),
            SbStep::Postwrite(1) => f.write_str("postwrite"),
            SbStep::Postwrite(n) => write!(f, "postwrite.{n}"),
            SbStep::Run(m) => {
                f.write_str(m.test.name())?;
                f.write_str(m.variant.suffix())?;
                if m.test.ranged() || m.range != m.test.default_range() {
                    write!(f, "_range={}", m.range)?;
                }
                Ok(())
            }
        }
    }
}

/// Parses a sysbench step's name; None when it names no step of the
/// family; an error saying why when it does but is malformed.
pub fn parse(name: &str) -> Option<std::result::Result<SbStep, String>> {
    let name = name.trim();
    match name {
        "load" => return Some(Ok(SbStep::Load)),
        "create-index" => return Some(Ok(SbStep::CreateIndex)),
        "postwrite" => return Some(Ok(SbStep::Postwrite(1))),
        _ => {}
    }
    if let Some(n) = name.strip_prefix("postwrite.") {
        return Some(match n.parse::<u8>() {
            Ok(n) if n >= 1 => Ok(SbStep::Postwrite(n)),
            _ => Err(format!(
                "{name:?}: expected postwrite or postwrite.N with N from 1 to 255"
            )),
        });
    }
    // The summaries' `read-only_range=10`, or the posts' `read-only range=10`.
    let (base, range) = match name.split_once(['_', ' ']) {
        Some((base, rest)) => match rest.trim().strip_prefix("range=") {
            Some(r) => (base, Some(r)),
            None => (name, None),
        },
        None => (name, None),
    };
    let (test, variant) = SbTest::ALL.iter().find_map(|&t| {
        SbVariant::ALL
            .iter()
            .find(|v| base.strip_prefix(t.name()) == Some(v.suffix()))
            .map(|&v| (t, v))
    })?;
    let range = match range {
        None => test.default_range(),
        Some(r) => match r.parse::<u32>() {
            Ok(0) => return Some(Err(format!("{name}: the range size must be at least 1, got 0"))),
            Ok(r) if test.uses_range() && r > 100_000 => {
                return Some(Err(format!("{name}: the range size must be at most 100000, got {r}")))
            }
            Ok(r) => r,
            Err(_) => return Some(Err(format!("{name}: the range size {r:?} is not a number"))),
        },
    };
    Some(Ok(SbStep::Run(Microbenchmark { test, variant, range })))
}

/// The current suite (MT all_small.sh as of 2025-04): the load, the reads
/// before the writes, the writes, the pause, the reads after the writes,
/// delete and insert. Its 32 reported microbenchmarks are those that are
/// neither warm-ups nor `.pre`.
pub const SUITE: [&str; 42] = [
    "load",
    "create-index",
    "point-query.warm",
    "postwrite",
    "scan.warmpre",
    "point-query.pre",
    "range-notcovered-si.pre",
    "update-inlist",
    "update-index",
    "update-nonindex",
    "update-one",
    "update-zipf",
    "write-only",
    "read-write_range=10",
    "read-write_range=100",
    "postwrite.2",
    "scan.warm",
    "scan",
    "read-only_range=10",
    "read-only_range=100",
    "read-only_range=10000",
    "read-only-simple",
    "read-only-sum",
    "read-only-order",
    "read-only-distinct",
    "read-only-count",
    "point-query",
    "random-points_range=10",
    "random-points_range=100",
    "random-points_range=1000",
    "hot-points",
    "points-covered-pk",
    "points-notcovered-pk",
    "range-covered-pk",
    "range-notcovered-pk",
    "points-covered-si.warm",
    "points-covered-si",
    "points-notcovered-si",
    "range-covered-si",
    "range-notcovered-si",
    "delete",
    "insert",
];

/// The longer form (MT all_small.sh of 2024-04, the 42 the posts count):
/// every read before the writes as a `.pre` too, scan before delete.
pub const LONG_SUITE: [&str; 47] = [
    "load",
    "create-index",
    "point-query.warm",
    "postwrite",
    "point-query.pre",
    "random-points.pre_range=10",
    "random-points.pre_range=100",
    "random-points.pre_range=1000",
    "read-only.pre_range=10",
    "read-only.pre_range=100",
    "read-only.pre_range=10000",
    "points-covered-pk.pre",
    "points-notcovered-pk.pre",
    "points-covered-si.pre",
    "points-notcovered-si.pre",
    "range-covered-pk.pre",
    "range-notcovered-pk.pre",
    "range-covered-si.pre",
    "range-notcovered-si.pre",
    "update-inlist",
    "update-index",
    "update-nonindex",
    "update-one",
    "update-zipf",
    "write-only",
    "read-write_range=10",
    "read-write_range=100",
    "postwrite.2",
    "read-only_range=10",
    "read-only_range=100",
    "read-only_range=10000",
    "point-query",
    "random-points_range=10",
    "random-points_range=100",
    "random-points_range=1000",
    "hot-points",
    "points-covered-pk",
    "points-notcovered-pk",
    "points-covered-si",
    "points-notcovered-si",
    "range-covered-pk",
    "range-notcovered-pk",
    "range-covered-si",
    "range-notcovered-si",
    "scan",
    "delete",
    "insert",
];

/// The names that stand for a whole suite in a list of steps.
pub const SUITE_ALIASES: [(&str, &[&str]); 2] = [("sysbench", &SUITE), ("sysbench-long", &LONG_SUITE)];

#[cfg(test)]
mod tests {
    use super::*;

    fn step(name: &str) -> SbStep {
        parse(name).expect("a sysbench name").expect("well formed")
    }

    #[test]
    fn every_suite_step_parses_and_prints_back() {
        for name in SUITE.iter().chain(&LONG_SUITE) {
            assert_eq!(step(name).to_string(), *name);
        }
    }

    #[test]
    fn the_current_suite_reports_32_and_the_long_form_42() {
        let reported = |names: &[&str], pre: bool| {
            names
                .iter()
                .filter_map(|n| step(n).microbenchmark())
                .filter(|m| !m.warmup() && (pre || m.variant != SbVariant::Pre))
                .count()
        };
        assert_eq!(reported(&SUITE, false), 32);
        assert_eq!(reported(&LONG_SUITE, true), 42);
    }

    #[test]
    fn statements_per_event_are_the_suites() {
        let per_event = |name: &str| {
            let m = step(name).microbenchmark().unwrap();
            m.test.event(m.range).statements()
        };
        assert_eq!(per_event("read-only_range=10"), 16);
        assert_eq!(per_event("read-only-sum"), 13);
        assert_eq!(per_event("read-write_range=100"), 20);
        assert_eq!(per_event("write-only"), 6);
        assert_eq!(per_event("point-query"), 1);
        assert_eq!(per_event("read-only-count"), 1);
    }

    #[test]
    fn published_labels_and_the_posts_spellings_parse() {
        assert_eq!(step("hot-points_range=100"), step("hot-points"));
        assert_eq!(step("read-only range=10"), step("read-only_range=10"));
        assert_eq!(step("random-points_range=7").to_string(), "random-points_range=7");
        assert_eq!(step("point-query_range=50").to_string(), "point-query_range=50");
    }

    #[test]
    fn bad_ranges_are_refused_and_other_names_are_not_the_familys() {
        assert!(parse("read-only_range=0").unwrap().unwrap_err().contains("at least 1"));
        assert!(parse("read-only_range=x").unwrap().is_err());
        assert!(parse("postwrite.0").unwrap().is_err());
        for other in ["l.i0", "fillseq", "read-onl", "point-query.cold", "qr100"] {
            assert!(parse(other).is_none(), "{other}");
        }
    }

    #[test]
    fn groups_partition_the_32_as_the_posts_chart_them() {
        let mut counts = std::collections::HashMap::new();
        for name in SUITE {
            if let Some(m) = step(name).microbenchmark().filter(|m| m.variant == SbVariant::Plain) {
                *counts.entry(m.test.group()).or_insert(0) += 1;
            }
        }
        assert_eq!(counts[&SbReportGroup::Point], 9);
        assert_eq!(counts[&SbReportGroup::Range], 5);
        assert_eq!(counts[&SbReportGroup::RangeAggregate], 8);
        assert_eq!(counts[&SbReportGroup::Write], 10);
    }
}
