//! The key/value steps' threads (writers, readers, maintenance), the record
//! of which step last wrote each key, and verify for the key/value table.

use super::pacing::Schedule;
use super::step::Worker;
use crate::connect::{Connector, KvSession, KV_TABLE};
use crate::error::Result;
use crate::gen::{encode_key, KvBatch};
use crate::metrics::Recorder;
use crate::workload::{Config, KvOp, KvThreadWork};
use rand_core::{Rng, SeedableRng};
use rand_xoshiro::Xoshiro256PlusPlus;
use std::sync::atomic::{AtomicU16, Ordering};
use std::time::Instant;

/// Key spaces up to this size are tracked key by key (2 bytes per key), so
/// verify knows what every key must hold.
pub const TRACKED_KEYS: u64 = 1 << 26;

/// The key/value table across a run: which step last wrote each key.
pub struct KvState {
    /// Per key: 1 + the number of the step that last wrote it; 0: never written.
    last_writer: Option<Vec<AtomicU16>>,
}

impl KvState {
    /// State for a key space of `num` keys (untracked when larger than [`TRACKED_KEYS`]).
    pub fn new(num: u64) -> Self {
        KvState {
            last_writer: (num <= TRACKED_KEYS).then(|| (0..num).map(|_| AtomicU16::new(0)).collect()),
        }
    }

    /// Forgets every key (a fill starts from an empty table).
    pub fn clear(&self) {
        if let Some(v) = &self.last_writer {
            for a in v {
                a.store(0, Ordering::Relaxed);
            }
        }
    }

    #[inline]
    fn wrote(&self, keys: &[u64], ordinal: u64) {
        if let Some(v) = &self.last_writer {
            let mark = (ordinal + 1).min(u16::MAX as u64) as u16;
            for &k in keys {
                v[k as usize].store(mark, Ordering::Relaxed);
            }
        }
    }

    /// The step that last wrote `key`, if tracked and written.
    fn writer_of(&self, key: u64) -> Option<Option<u64>> {
        let v = self.last_writer.as_ref()?;
        let mark = v[key as usize].load(Ordering::Relaxed);
        Some((mark > 0).then(|| mark as u64 - 1))
    }

    /// Keys written since the last fill, if tracked.
    pub(crate) fn written(&self) -> Option<u64> {
        let v = self.last_writer.as_ref()?;
        Some(v.iter().filter(|a| a.load(Ordering::Relaxed) > 0).count() as u64)
    }
}

impl Worker<'_> {
    /// A writer: batches of its key stream, paced for readwhilewriting's writer.
    pub(super) fn kv_write(
        &self,
        op: KvOp,
        session: &mut dyn KvSession,
        rec: &mut Recorder,
        t0: Instant,
    ) -> Result<()> {
        let c = self.plan.config;
        let state = self.plan.kv.expect("a key/value step has its state");
        let ordinal = self.plan.ordinal;
        let work = c.kv_writer(op, ordinal, self.client as u64)?.expect("a write step");
        let values = c.kv_values(ordinal)?;
        let batch_size = c.batch_size as u64;
        let paced = op == KvOp::ReadWhileWriting;
        let schedule = if paced {
            Schedule::rate(t0, c.writer_rate as f64 / batch_size as f64)
        } else {
            Schedule::Unthrottled
        };
        let mut keys = vec![0u64; batch_size as usize];
        let mut batch = KvBatch::new(c.key_size as usize);
        let (mut done, mut i) = (0u64, 0u64);
        let slot = &self.shared.inserted[self.client as usize];
        loop {
            let n = match work.count {
                Some(count) => (count - done).min(batch_size),
                None => batch_size,
            };
            if n == 0 || self.kv_finished(&work, t0, paced) {
                break;
            }
            let intended = schedule.wait_for(i, || self.stopping(t0) || self.kv_finished(&work, t0, paced));
            if self.stopping(t0) || self.kv_finished(&work, t0, paced) {
                break;
            }
            let keys = &mut keys[..n as usize];
            work.keys.fill(work.first + done, keys);
            batch.clear();
            for &k in keys.iter() {
                batch.push_generated(k, &values);
            }
            let started = Instant::now();
            self.retrying(|| session.put(KV_TABLE, &batch))?;
            let ended = Instant::now();
            state.wrote(keys, ordinal);
            rec.record(if paced { intended } else { started }, started, ended);
            done += n;
            i += 1;
            slot.store(done, Ordering::Release);
        }
        Ok(())
    }

    /// True when a stream without a count is over: its duration passed, or
    /// (readwhilewriting's writer) every reader finished.
    fn kv_finished(&self, work: &KvThreadWork, t0: Instant, writer_of_readers: bool) -> bool {
        if work.count.is_some() {
            return false;
        }
        if writer_of_readers {
            let readers_done = self.shared.readers_left.load(Ordering::Acquire) == 0;
            return readers_done || self.duration_passed(t0);
        }
        self.duration_passed(t0)
    }

    fn duration_passed(&self, t0: Instant) -> bool {
        self.plan
            .config
            .duration
            .is_some_and(|d| t0.elapsed().as_secs_f64() >= d)
    }

    /// A reader: point reads (readrandom, readwhilewriting) or seeks with
    /// nexts (seekrandom) of its key stream.
    pub(super) fn kv_read(&self, op: KvOp, session: &mut dyn KvSession, rec: &mut Recorder, t0: Instant) -> Result<()> {
        let result = self.kv_read_loop(op, session, rec, t0);
        self.shared.readers_left.fetch_sub(1, Ordering::AcqRel);
        result
    }

    fn kv_read_loop(&self, op: KvOp, session: &mut dyn KvSession, rec: &mut Recorder, t0: Instant) -> Result<()> {
        let c = self.plan.config;
        let work = c.kv_reader(self.plan.ordinal, self.client as u64)?;
        let mut key = vec![0u8; c.key_size as usize];
        let mut value = Vec::new();
        let mut scanned = KvBatch::new(c.key_size as usize);
        let mut i = 0u64;
        while work.count.is_none_or(|n| i < n) && !self.stopping(t0) && !self.duration_passed(t0) {
            encode_key(work.keys.key(work.first + i), &mut key);
            let started = Instant::now();
            let found = match op {
                KvOp::SeekRandom => {
                    let limit = c.seek_nexts as usize + 1;
                    self.retrying(|| session.scan(KV_TABLE, &key, limit, &mut scanned))? > 0
                }
                _ => self.retrying(|| session.get(KV_TABLE, &key, &mut value))?,
            };
            rec.record(started, started, Instant::now());
            if found {
                self.shared.found.fetch_add(1, Ordering::Relaxed);
            }
            self.shared.queries.fetch_add(1, Ordering::Relaxed);
            i += 1;
        }
        Ok(())
    }

    /// flush or waitforcompaction.
    pub(super) fn kv_maintain(&self, op: KvOp, session: &mut dyn KvSession, rec: &mut Recorder) -> Result<()> {
        let started = Instant::now();
        match op {
            KvOp::Flush => session.flush(KV_TABLE)?,
            _ => session.wait_for_compaction(KV_TABLE)?,
        }
        rec.record(started, started, Instant::now());
        Ok(())
    }
}

/// Checks the key/value table after a write step: the number of pairs equals
/// the number of distinct keys written since the last fill, and a sample of
/// keys (the first, the last, and `verify_sample` more) holds the value of
/// the step that last wrote it, or nothing. `Ok(None)`: not checked (a
/// database that keeps nothing, or a key space too large to track).
pub(crate) fn verify(
    config: &Config,
    connector: &dyn Connector,
    state: &KvState,
    salt: u64,
) -> Result<Option<std::result::Result<(), String>>> {
    let Some(expected) = state.written() else {
        return Ok(None);
    };
    if !connector.stores_data() {
        return Ok(None);
    }
    let mut session = connector.kv_session()?;
    let found = session.count(KV_TABLE)?;
    if found != expected {
        return Ok(Some(Err(format!(
            "{KV_TABLE}: expected {expected} pairs (distinct keys written), found {found}"
        ))));
    }
    let num = config.num;
    let mut rng = Xoshiro256PlusPlus::seed_from_u64(config.seed ^ salt.rotate_left(32) ^ 0x6b76);
    let sample = [0, num - 1]
        .into_iter()
        .chain((0..config.verify_sample).map(|_| rng.next_u64() % num));
    let mut key = vec![0u8; config.key_size as usize];
    let (mut got, mut want) = (Vec::new(), Vec::new());
    for k in sample {
        encode_key(k, &mut key);
        let present = session.get(KV_TABLE, &key, &mut got)?;
        match state.writer_of(k).flatten() {
            None if present => {
                return Ok(Some(Err(format!(
                    "{KV_TABLE}: key {k} was never written but is present"
                ))))
            }
            None => {}
            Some(_) if !present => return Ok(Some(Err(format!("{KV_TABLE}: key {k} is missing")))),
            Some(step) => {
                config.kv_values(step)?.value_into(k, &mut want);
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
