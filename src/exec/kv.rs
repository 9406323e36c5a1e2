//! The key/value steps' roles: writers, readers, and flush or compaction
//! waits, each thread with its own key stream (workload/kv.rs).

use super::shared::Worker;
use crate::connect::{KvSession, KV_TABLE};
use crate::error::Result;
use crate::gen::{encode_key, KvBatch};
use crate::metrics::Recorder;
use crate::workload::{KvOp, KvThreadWork};
use std::sync::atomic::Ordering;
use std::time::Instant;

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
        let mut schedule = self.pacer(paced.then(|| c.writer_rate as f64 / batch_size as f64), t0);
        let mut keys = vec![0u64; batch_size as usize];
        let mut batch = KvBatch::new(c.key_size as usize);
        let (mut done, mut i) = (0u64, 0u64);
        let slot = &self.shared.clients[self.client as usize].inserted;
        loop {
            let n = match work.count {
                Some(count) => (count - done).min(batch_size),
                None => batch_size,
            };
            if n == 0 || self.kv_finished(&work, t0, paced) {
                break;
            }
            // The batch is ready before its intended start (generating it is
            // not the schedule's lag).
            let keys = &mut keys[..n as usize];
            work.keys.fill(work.first + done, keys);
            batch.clear();
            for &k in keys.iter() {
                batch.push_generated(k, &values);
            }
            let intended = schedule.wait_for(i, || self.stopping(t0) || self.kv_finished(&work, t0, paced));
            if self.stopping(t0) || self.kv_finished(&work, t0, paced) {
                break;
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
        if paced {
            rec.pacer_overshoot(schedule.overshoot());
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
        let notes = match op {
            KvOp::Flush => session.flush(KV_TABLE, self.plan.stop)?,
            _ => session.wait_for_compaction(KV_TABLE, self.plan.stop)?,
        };
        rec.record(started, started, Instant::now());
        self.shared.note(notes);
        Ok(())
    }
}
