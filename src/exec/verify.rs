//! After a write step, check that every table holds exactly its window
//! `[tail, head)`: row count, smallest and largest key, and a sample of rows
//! equal to what the generator regenerates. A mismatch is reported, never hidden.

use super::tables::TableState;
use crate::connect::{Bounds, Connector};
use crate::error::Result;
use crate::gen::{Length, RowGen, RowSpec};
use crate::workload::Config;
use rand_core::{Rng, SeedableRng};
use rand_xoshiro::Xoshiro256PlusPlus;

/// `Ok(None)`: the database keeps no rows (null); `Ok(Some(Ok(())))`: every
/// table checked out; `Ok(Some(Err(what)))`: what differed.
pub(crate) fn verify(
    config: &Config,
    connector: &dyn Connector,
    tables: &[TableState],
    salt: u64,
) -> Result<Option<std::result::Result<(), String>>> {
    let mut session = connector.session()?;
    let mut problems = Vec::new();
    for table in tables {
        let w = table.bounds();
        let Some(found) = session.bounds(&table.name)? else {
            return Ok(None);
        };
        let expected = Bounds {
            count: w.len(),
            min: (!w.is_empty()).then_some(w.tail),
            max: (!w.is_empty()).then(|| w.head - 1),
        };
        if found != expected {
            problems.push(format!(
                "{}: expected {expected:?} (window [{}, {})), found {found:?}",
                table.name, w.tail, w.head
            ));
            continue;
        }
        if w.is_empty() {
            continue;
        }
        let mut rng = Xoshiro256PlusPlus::seed_from_u64(config.seed ^ salt ^ table.number.rotate_left(32));
        let mut keys: Vec<u64> = (0..config.verify_sample)
            .map(|_| w.tail + rng.next_u64() % w.len())
            .collect();
        keys.extend([w.tail, w.head - 1]);
        keys.sort_unstable();
        keys.dedup();
        let generator = RowGen::new(&RowSpec {
            seed: config.seed,
            table: table.number,
            data_length: Length::Uniform {
                min: config.data_length[0],
                max: config.data_length[1],
            },
            ratio: config.ratio,
            ..RowSpec::default()
        })?;
        let stored = session.rows(&table.name, &keys)?;
        if stored.len() != keys.len() {
            problems.push(format!(
                "{}: {} of {} sampled keys found",
                table.name,
                stored.len(),
                keys.len()
            ));
            continue;
        }
        for (k, row) in keys.iter().zip(&stored) {
            let want = generator.row(*k);
            if *row != want {
                problems.push(format!("{}: row {k} is {row:?}, expected {want:?}", table.name));
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
