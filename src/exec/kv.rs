//! The key/value steps' roles: writers, readers, and flush or compaction
//! waits, each thread with its own key stream (workload/kv.rs).

use super::shared::Worker;
use crate::clock::Clock;
use crate::connect::{KvSession, KV_TABLE};
use crate::error::Result;
use crate::gen::{decode_key, encode_key, KvBatch};
use crate::metrics::Recorder;
use crate::workload::{KvOp, KvThreadWork, SCAN_CHUNK};
use std::sync::atomic::Ordering;
use std::time::Instant;

impl<C: Clock> Worker<'_, C> {
    /// A writer: batches of its key stream (puts, merges or deletes; one
    /// read-modify-write for updaterandom), paced for readwhilewriting's writer.
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
        let batch_size = c.kv_batch(op) as u64;
        let paced = op == KvOp::ReadWhileWriting;
        let mut current = Vec::new();
        let mut schedule = self.pacer(paced.then(|| c.writer_rate as f64 / batch_size as f64), t0);
        let mut keys = vec![0u64; batch_size as usize];
        let mut batch = KvBatch::new(c.key_size as usize);
        let mut cursor = work.keys.cursor(work.first);
        let (mut done, mut i) = (0u64, 0u64);
        let mine = &self.shared.clients[self.client as usize];
        let slot = if op.deletes() { &mine.deleted } else { &mine.inserted };
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
            keys.fill_with(|| cursor.next_key());
            batch.clear();
            for &k in keys.iter() {
                if op.deletes() {
                    batch.push_key(k);
                } else {
                    batch.push_generated(k, &values);
                }
            }
            let intended = schedule.wait_for(i, || self.stopping(t0) || self.kv_finished(&work, t0, paced));
            if self.stopping(t0) || self.kv_finished(&work, t0, paced) {
                break;
            }
            let started = self.clock.now();
            match op {
                KvOp::DeleteSeq | KvOp::DeleteRandom => self.retrying(|| session.delete_keys(KV_TABLE, &batch))?,
                KvOp::MergeRandom => self.retrying(|| session.merge(KV_TABLE, &batch))?,
                KvOp::UpdateRandom => {
                    // Read, then write the key's new value: one operation.
                    self.retrying(|| session.get(KV_TABLE, batch.key(0), &mut current).map(|_| ()))?;
                    self.retrying(|| session.put(KV_TABLE, &batch))?
                }
                _ => self.retrying(|| session.put(KV_TABLE, &batch))?,
            }
            let ended = self.clock.now();
            if op.deletes() {
                state.deleted(keys);
            } else {
                state.wrote(keys, ordinal);
            }
            rec.record(intended.unwrap_or(started), started, ended);
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
        self.plan.config.duration.is_some_and(|d| self.since(t0) >= d)
    }

    /// A reader: point reads (readrandom, readwhilewriting, multireadrandom),
    /// seeks with nexts or prevs (seekrandom, fwdrange, revrange) of its key
    /// stream, or the table in order (readseq, readreverse).
    pub(super) fn kv_read(&self, op: KvOp, session: &mut dyn KvSession, rec: &mut Recorder, t0: Instant) -> Result<()> {
        let result = self.kv_read_loop(op, session, rec, t0);
        self.shared.readers_left.fetch_sub(1, Ordering::AcqRel);
        result
    }

    fn kv_read_loop(&self, op: KvOp, session: &mut dyn KvSession, rec: &mut Recorder, t0: Instant) -> Result<()> {
        if matches!(op, KvOp::ReadSeq | KvOp::ReadReverse) {
            return self.kv_read_in_order(op, session, rec, t0);
        }
        let c = self.plan.config;
        let work = c.kv_reader(op, self.plan.ordinal, self.client as u64)?;
        let mut key = vec![0u8; c.key_size as usize];
        let mut value = Vec::new();
        let mut scanned = KvBatch::new(c.key_size as usize);
        // multireadrandom: batch_size keys per MultiGet, each key one read.
        let per_call = if op == KvOp::MultiReadRandom {
            c.batch_size as u64
        } else {
            1
        };
        let mut keys = KvBatch::new(c.key_size as usize);
        let mut cursor = work.keys.cursor(work.first);
        let mut i = 0u64;
        while work.count.is_none_or(|n| i < n) && !self.stopping(t0) && !self.duration_passed(t0) {
            let n = work.count.map_or(per_call, |count| (count - i).min(per_call));
            if op == KvOp::MultiReadRandom {
                keys.clear();
                for _ in 0..n {
                    keys.push_key(cursor.next_key());
                }
            } else {
                encode_key(cursor.next_key(), &mut key);
            }
            let limit = c.seek_nexts as usize + 1;
            let started = self.clock.now();
            let found = match op {
                KvOp::SeekRandom | KvOp::FwdRange => {
                    (self.retrying(|| session.scan(KV_TABLE, &key, limit, &mut scanned))? > 0) as u64
                }
                KvOp::RevRange => {
                    (self.retrying(|| session.scan_reverse(KV_TABLE, &key, limit, &mut scanned))? > 0) as u64
                }
                KvOp::MultiReadRandom => self.retrying(|| session.multi_get(KV_TABLE, &keys, &mut scanned))? as u64,
                _ => self.retrying(|| session.probe(KV_TABLE, &key, &mut value))? as u64,
            };
            rec.record(started, started, self.clock.now());
            self.shared.found.fetch_add(found, Ordering::Relaxed);
            self.shared.queries.fetch_add(n, Ordering::Relaxed);
            i += n;
        }
        Ok(())
    }

    /// readseq and readreverse: the table's pairs in key order (or
    /// descending) from the thread's first key, [`SCAN_CHUNK`] pairs per
    /// scan (one recorded operation), every pair one read; ends early at the
    /// end of the table.
    fn kv_read_in_order(&self, op: KvOp, session: &mut dyn KvSession, rec: &mut Recorder, t0: Instant) -> Result<()> {
        let c = self.plan.config;
        let work = c.kv_reader(op, self.plan.ordinal, self.client as u64)?;
        let forward = op == KvOp::ReadSeq;
        let mut key = vec![0u8; c.key_size as usize];
        let mut scanned = KvBatch::new(c.key_size as usize);
        // The next key to read from; None: past the end of the key space.
        let mut next = Some(work.first);
        let mut i = 0u64;
        while let Some(from) = next {
            if work.count.is_some_and(|n| i >= n) || self.stopping(t0) || self.duration_passed(t0) {
                break;
            }
            let limit = work.count.map_or(SCAN_CHUNK as u64, |n| (n - i).min(SCAN_CHUNK as u64)) as usize;
            encode_key(from, &mut key);
            let started = self.clock.now();
            let got = if forward {
                self.retrying(|| session.scan(KV_TABLE, &key, limit, &mut scanned))?
            } else {
                self.retrying(|| session.scan_reverse(KV_TABLE, &key, limit, &mut scanned))?
            };
            rec.record(started, started, self.clock.now());
            if got == 0 {
                break;
            }
            let last = decode_key(scanned.key(got - 1));
            next = if forward {
                last.checked_add(1)
            } else {
                last.checked_sub(1)
            };
            self.shared.found.fetch_add(got as u64, Ordering::Relaxed);
            self.shared.queries.fetch_add(got as u64, Ordering::Relaxed);
            i += got as u64;
        }
        Ok(())
    }

    /// flush or waitforcompaction.
    pub(super) fn kv_maintain(&self, op: KvOp, session: &mut dyn KvSession, rec: &mut Recorder) -> Result<()> {
        let started = self.clock.now();
        let notes = match op {
            KvOp::Flush => session.flush(KV_TABLE, self.plan.stop)?,
            _ => session.wait_for_compaction(KV_TABLE, self.plan.stop)?,
        };
        rec.record(started, started, self.clock.now());
        self.shared.note(notes);
        Ok(())
    }
}
