//! After a write step, check that the database holds what the generators say
//! it must, and at the end of a run count every table. A mismatch is
//! reported, never hidden.
//!
//! Insert Benchmark tables hold exactly their window `[tail, head)` of rows:
//! the smallest and largest key (one row from each end of the primary key),
//! a sample of rows equal to what the generator regenerates, and, when
//! counting, `COUNT(*)`. With server keys, row numbers map to the keys the
//! server gave (the table's key runs); with the reference's data the batch
//! time of `dateandtime` is not regenerated. Where the keys' gaps are unknown
//! (server keys in a table an earlier run loaded) only counts are checked. The key/value table holds, for a sample of keys, the
//! value of the step that last wrote each, and as many pairs as distinct keys
//! were written. A sysbench table just loaded holds ids 1..=table_size with
//! the rows the generator regenerates; after the microbenchmarks that write,
//! as many rows as the load inserted and their inserts and deletes changed
//! (their updates change rows the generator no longer knows).

use super::kv_state::KvState;
use super::sysbench::SbState;
use super::tables::TableState;
use crate::clock::{Clock, SystemClock};
use crate::connect::{Bounds, Connector, KV_TABLE};
use crate::error::Result;
use crate::gen::{encode_key, KvValues, RowGen};
use crate::results::StepRow;
use crate::stop::Stop;
use crate::workload::{Config, DataMode, SbStep, Step, VerifyMode};
use rand_core::{Rng, SeedableRng};
use rand_xoshiro::Xoshiro256PlusPlus;
use std::collections::btree_map::{BTreeMap, Entry};

/// What a verification checks.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub(crate) enum Check {
    /// Bounds and sampled rows (cheap: no scan).
    Quick,
    /// Bounds, sampled rows and the exact count.
    Full,
    /// The exact count and bounds only (the end of a run).
    Count,
}

impl Check {
    fn counts(self) -> bool {
        matches!(self, Check::Full | Check::Count)
    }
    fn samples(self) -> bool {
        matches!(self, Check::Quick | Check::Full)
    }
}

/// What verify checks with, after a step.
pub(crate) struct Verify<'a> {
    pub config: &'a Config,
    pub connector: &'a dyn Connector,
    /// Picks the sampled rows (the step's ordinal).
    pub salt: u64,
    pub stop: &'a Stop,
}

impl Verify<'_> {
    /// The check `verify` asks for after a write step (None: off).
    fn check(&self) -> Option<Check> {
        match self.config.verify {
            VerifyMode::Off => None,
            VerifyMode::Full => Some(Check::Full),
            VerifyMode::Quick => Some(Check::Quick),
        }
    }

    /// After write step `step` of `tables` (or the key/value table `kv`,
    /// when this run knows it): the check `verify` asks for, its verdict and
    /// time in `row`.
    pub(crate) fn after_step(&self, step: Step, tables: &[TableState], kv: Option<&KvState>, row: &mut StepRow) {
        let Some(check) = self.check() else { return };
        let c = self.config;
        let started = SystemClock.now();
        let checked = match (step, kv) {
            (Step::Kv(_), Some(kv)) => verify_kv(c, self.connector, kv, self.salt, check, self.stop),
            (Step::Kv(_), None) => Ok(None),
            _ => verify_tables(c, self.connector, tables, self.salt, check, self.stop),
        };
        self.record(checked, started, row);
    }

    /// After sysbench write step `step`: the load's rows sampled against the
    /// generator (and counted when `verify = "full"`); a microbenchmark's
    /// tables counted when `verify = "full"` (else at the run's end).
    pub(crate) fn after_sb_step(&self, step: SbStep, state: &SbState, row: &mut StepRow) {
        let Some(check) = self.check() else { return };
        let check = match (step, check) {
            (SbStep::Load, check) => check,
            (_, Check::Full) => Check::Count,
            _ => return,
        };
        let started = SystemClock.now();
        let checked = verify_sb(self.config, self.connector, state, self.salt, check, self.stop);
        self.record(checked, started, row);
    }

    /// A verification's verdict and time in `row`.
    fn record(
        &self,
        checked: Result<Option<std::result::Result<(), String>>>,
        started: std::time::Instant,
        row: &mut StepRow,
    ) {
        let c = self.config;
        row.verify_s = Some(SystemClock.now().saturating_duration_since(started).as_secs_f64());
        match checked {
            Ok(None) => {}
            Ok(Some(verdict)) => {
                row.verify = Some(c.verify.name().into());
                row.verified = Some(verdict.is_ok());
                row.verify_error = verdict.err();
            }
            Err(e) if e.is_canceled() && self.stop.requested() => {}
            Err(e) => {
                row.verify = Some(c.verify.name().into());
                row.verified = Some(false);
                row.verify_error = Some(format!("verify could not run: {e}"));
            }
        }
    }
}

/// `Ok(None)`: the database keeps no rows (null); `Ok(Some(Ok(())))`: every
/// table checked out; `Ok(Some(Err(what)))`: what differed. Statements are
/// cancelled when a stop is requested.
pub(crate) fn verify_tables(
    config: &Config,
    connector: &dyn Connector,
    tables: &[TableState],
    salt: u64,
    check: Check,
    stop: &Stop,
) -> Result<Option<std::result::Result<(), String>>> {
    let mut session = connector.session()?;
    let interrupt = session.interrupter();
    let mut problems = Vec::new();
    for table in tables {
        let w = table.bounds();
        let Some(found) = stop.guard(interrupt.as_ref(), || session.bounds(&table.name, check.counts()))? else {
            return Ok(None);
        };
        if !table.keys_known() {
            if check.counts() && found.count != Some(w.len()) {
                problems.push(format!(
                    "{}: expected {} rows, found {:?}",
                    table.name,
                    w.len(),
                    found.count
                ));
            }
            continue;
        }
        let expected = Bounds {
            count: check.counts().then_some(w.len()),
            min: (!w.is_empty()).then(|| table.key_of(w.tail)),
            max: (!w.is_empty()).then(|| table.key_of(w.head - 1)),
        };
        if found != expected {
            problems.push(format!(
                "{}: expected {expected:?} (rows [{}, {})), found {found:?}",
                table.name, w.tail, w.head
            ));
        } else if !w.is_empty() && check.samples() {
            let read = |keys: &[u64]| stop.guard(interrupt.as_ref(), || session.rows(&table.name, keys));
            problems.extend(sampled_rows(config, table, salt, read)?);
        }
    }
    Ok(Some(if problems.is_empty() {
        Ok(())
    } else {
        Err(problems.join("; "))
    }))
}

/// A sample of `table`'s rows (`verify_sample`, and the first and last),
/// read with `read`, against what the generator regenerates; the first
/// difference, if any.
fn sampled_rows(
    config: &Config,
    table: &TableState,
    salt: u64,
    mut read: impl FnMut(&[u64]) -> Result<Vec<crate::gen::Row>>,
) -> Result<Option<String>> {
    let w = table.bounds();
    let mut rng = Xoshiro256PlusPlus::seed_from_u64(config.seed ^ salt ^ table.number.rotate_left(32));
    let mut numbers: Vec<u64> = (0..config.verify_sample)
        .map(|_| w.tail + rng.next_u64() % w.len())
        .collect();
    numbers.extend([w.tail, w.head - 1]);
    numbers.sort_unstable();
    numbers.dedup();
    // Keys grow with row numbers: the stored rows come back in the same order.
    let keys: Vec<u64> = numbers.iter().map(|&n| table.key_of(n)).collect();
    let generator = RowGen::new(&config.row_spec(table.number))?;
    let stored = read(&keys)?;
    if stored.len() != keys.len() {
        return Ok(Some(format!(
            "{}: {} of {} sampled keys found",
            table.name,
            stored.len(),
            keys.len()
        )));
    }
    for ((&number, &key), row) in numbers.iter().zip(&keys).zip(&stored) {
        let mut want = generator.row(number);
        want.transactionid = key as i64;
        if config.data == DataMode::Iibench {
            // One time per batch: the batch's first row's, not regenerated here.
            want.dateandtime = row.dateandtime;
        }
        if *row != want {
            return Ok(Some(format!("{}: row {key} is {row:?}, expected {want:?}", table.name)));
        }
    }
    Ok(None)
}

/// Checks the key/value table: when counting, the number of pairs equals
/// the number of distinct keys written since the last fill; when sampling,
/// the first key, the last and `verify_sample` more hold the value of the
/// step that last wrote them, or nothing. `Ok(None)`: not checked (a
/// database that keeps nothing, or a key space too large to track).
pub(crate) fn verify_kv(
    config: &Config,
    connector: &dyn Connector,
    state: &KvState,
    salt: u64,
    check: Check,
    stop: &Stop,
) -> Result<Option<std::result::Result<(), String>>> {
    let Some(expected) = state.written() else {
        return Ok(None);
    };
    if !connector.stores_data() {
        return Ok(None);
    }
    let mut session = connector.kv_session()?;
    let interrupt = session.interrupter();
    if check.counts() {
        let found = stop.guard(interrupt.as_ref(), || session.count(KV_TABLE))?;
        if found != expected {
            return Ok(Some(Err(format!(
                "{KV_TABLE}: expected {expected} pairs (distinct keys written), found {found}"
            ))));
        }
    }
    if !check.samples() {
        return Ok(Some(Ok(())));
    }
    let num = config.num;
    let mut rng = Xoshiro256PlusPlus::seed_from_u64(config.seed ^ salt.rotate_left(32) ^ 0x6b76);
    let sample = [0, num - 1]
        .into_iter()
        .chain((0..config.verify_sample).map(|_| rng.next_u64() % num));
    let mut key = vec![0u8; config.key_size as usize];
    let (mut got, mut want) = (Vec::new(), Vec::new());
    // Each writer step's values, built once (a pool of values is 1 MiB).
    let mut values: BTreeMap<u64, KvValues> = BTreeMap::new();
    for k in sample {
        if stop.requested() {
            break;
        }
        encode_key(k, &mut key);
        let present = session.get(KV_TABLE, &key, &mut got)?;
        match state.writer_of(k).flatten() {
            None if present => {
                return Ok(Some(Err(format!(
                    "{KV_TABLE}: key {k} was never written (or was deleted) but is present"
                ))))
            }
            None => {}
            Some(_) if !present => return Ok(Some(Err(format!("{KV_TABLE}: key {k} is missing")))),
            Some(step) => {
                let step_values = match values.entry(step) {
                    Entry::Occupied(e) => e.into_mut(),
                    Entry::Vacant(e) => e.insert(config.kv_values(step)?),
                };
                step_values.value_into(k, &mut want);
                if got != want {
                    return Ok(Some(Err(format!(
                        "{KV_TABLE}: key {k} holds {} bytes that differ from the {} bytes step {step} wrote",
                        got.len(),
                        want.len()
                    ))));
                }
            }
        }
    }
    Ok(Some(Ok(())))
}

/// Checks the sysbench tables: when counting, each holds the rows the run
/// counted; when sampling (just loaded), ids 1 and table_size and
/// `verify_sample` more hold the generator's k, c and pad. `Ok(None)`: not
/// checked (a database that keeps nothing, or tables an earlier run loaded).
pub(crate) fn verify_sb(
    config: &Config,
    connector: &dyn Connector,
    state: &SbState,
    salt: u64,
    check: Check,
    stop: &Stop,
) -> Result<Option<std::result::Result<(), String>>> {
    if !connector.stores_data() || state.total().is_none() {
        return Ok(None);
    }
    let mut session = connector.sb_session()?;
    let interrupt = session.interrupter();
    let mut problems = Vec::new();
    for table in 1..=config.tables {
        let name = crate::connect::sb_table_name(table);
        let rows = state.rows(table).unwrap_or(0);
        let found = stop.guard(interrupt.as_ref(), || session.sb_bounds(table, check.counts()))?;
        if check.counts() && found.count != Some(rows) {
            problems.push(format!("{name}: expected {rows} rows, found {:?}", found.count));
            continue;
        }
        if !check.samples() {
            continue;
        }
        let n = config.table_size;
        if (found.min, found.max) != (Some(1), Some(n)) {
            problems.push(format!(
                "{name}: expected ids 1 to {n}, found {:?} to {:?}",
                found.min, found.max
            ));
            continue;
        }
        let mut rng = Xoshiro256PlusPlus::seed_from_u64(config.seed ^ salt ^ (table as u64).rotate_left(32));
        let mut ids: Vec<u64> = (0..config.verify_sample).map(|_| 1 + rng.next_u64() % n).collect();
        ids.extend([1, n]);
        ids.sort_unstable();
        ids.dedup();
        let stored = stop.guard(interrupt.as_ref(), || session.sb_rows(table, &ids))?;
        if stored.len() != ids.len() {
            problems.push(format!("{name}: {} of {} sampled ids found", stored.len(), ids.len()));
            continue;
        }
        let generator = config.sb_rows(table)?;
        for row in stored {
            let want = generator.row(row.id)?;
            let (c, pad) = (String::from_utf8_lossy(want.c(0)), String::from_utf8_lossy(want.pad(0)));
            if row.k != want.k[0] as i64 || row.c != c || row.pad != pad {
                problems.push(format!(
                    "{name}: id {} is (k {}, c {}, pad {}), expected (k {}, c {c}, pad {pad})",
                    row.id, row.k, row.c, row.pad, want.k[0]
                ));
                break;
            }
        }
    }
    Ok(Some(if problems.is_empty() {
        Ok(())
    } else {
        Err(problems.join("; "))
    }))
}
