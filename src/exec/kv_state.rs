//! The key/value table across a run: which step last wrote each key (or
//! that it was deleted), so verify knows what every key must hold.

use std::sync::atomic::{AtomicU16, Ordering};

/// Key spaces up to this size are tracked key by key (2 bytes per key), so
/// verify knows what every key must hold.
pub const TRACKED_KEYS: u64 = 1 << 26;

/// The key/value table across a run: which step last wrote each key.
pub struct KvState {
    /// Per key: 1 + the number of the step that last wrote it; 0: never
    /// written, or deleted since.
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
    pub(super) fn wrote(&self, keys: &[u64], ordinal: u64) {
        if let Some(v) = &self.last_writer {
            let mark = (ordinal + 1).min(u16::MAX as u64) as u16;
            for &k in keys {
                v[k as usize].store(mark, Ordering::Relaxed);
            }
        }
    }

    /// Forgets `keys` (deleted).
    #[inline]
    pub(super) fn deleted(&self, keys: &[u64]) {
        if let Some(v) = &self.last_writer {
            for &k in keys {
                v[k as usize].store(0, Ordering::Relaxed);
            }
        }
    }

    /// The step that last wrote `key`, if tracked and written.
    pub(super) fn writer_of(&self, key: u64) -> Option<Option<u64>> {
        let v = self.last_writer.as_ref()?;
        let mark = v[key as usize].load(Ordering::Relaxed);
        Some((mark > 0).then(|| mark as u64 - 1))
    }

    /// Keys written since the last fill and not deleted since, if tracked.
    pub(crate) fn written(&self) -> Option<u64> {
        let v = self.last_writer.as_ref()?;
        Some(v.iter().filter(|a| a.load(Ordering::Relaxed) > 0).count() as u64)
    }
}
