//! The live windows of the benchmark's tables, shared by a step's threads.

use crate::gen::Window;
use std::sync::atomic::{AtomicU64, Ordering::SeqCst};

/// One table's key allocation and window, lock-free (the inserter touches it
/// on every operation). Keys below `window().head` are committed;
/// `[tail, head)` is what point queries may ask for and deletes may remove.
pub struct TableState {
    /// The table's name (`pi1`, `pi2`, ...).
    pub name: String,
    /// The table number (its generator streams).
    pub number: u64,
    tail: AtomicU64,
    next: AtomicU64,
    /// For each inserter, a key at or below its uncommitted batch (u64::MAX when none).
    in_flight: Vec<AtomicU64>,
    /// The largest window (uncommitted keys included) since [`TableState::begin_step`].
    max_len: AtomicU64,
}

impl TableState {
    /// A table whose live window is `window`, written by up to `inserters` threads.
    pub fn new(name: String, number: u64, window: Window, inserters: usize) -> Self {
        TableState {
            name,
            number,
            tail: AtomicU64::new(window.tail),
            next: AtomicU64::new(window.head),
            in_flight: (0..inserters.max(1)).map(|_| AtomicU64::new(u64::MAX)).collect(),
            max_len: AtomicU64::new(window.len()),
        }
    }

    /// Starts tracking the largest window of a step from the current one.
    pub fn begin_step(&self) {
        self.max_len.store(self.bounds().len(), SeqCst);
    }

    /// The largest window since [`TableState::begin_step`], uncommitted keys included.
    pub fn max_len(&self) -> u64 {
        self.max_len.load(SeqCst)
    }

    /// Takes `n` keys at the head for inserter `slot`; they are in flight until
    /// [`TableState::committed`].
    pub fn allocate(&self, slot: usize, n: u64) -> std::ops::Range<u64> {
        // Mark a lower bound of the batch in flight before `next` moves past
        // it, so a reader that sees the new `next` also sees the mark.
        self.in_flight[slot].store(self.next.load(SeqCst), SeqCst);
        let start = self.next.fetch_add(n, SeqCst);
        start..start + n
    }

    /// The window's size (uncommitted keys included) once `keys` are allocated.
    pub fn len_with(&self, keys: &std::ops::Range<u64>) -> u64 {
        keys.end.saturating_sub(self.tail.load(SeqCst))
    }

    /// Records that the window reached `len` during the step (an inserter
    /// tracks its largest and reports it once).
    pub fn reached(&self, len: u64) {
        self.max_len.fetch_max(len, SeqCst);
    }

    /// Marks inserter `slot`'s batch committed.
    pub fn committed(&self, slot: usize) {
        self.in_flight[slot].store(u64::MAX, SeqCst);
    }

    /// The committed window `[tail, acknowledged head)`.
    pub fn window(&self) -> Window {
        // `next` first: a batch allocated after this load lies above it.
        let next = self.next.load(SeqCst);
        let head = self
            .in_flight
            .iter()
            .map(|a| a.load(SeqCst))
            .min()
            .unwrap_or(u64::MAX)
            .min(next);
        let tail = self.tail.load(SeqCst);
        Window {
            tail: tail.min(head),
            head,
        }
    }

    /// Takes up to `n` of the oldest committed keys for deletion.
    pub fn take_tail(&self, n: u64) -> std::ops::Range<u64> {
        let head = self.window().head;
        let start = self
            .tail
            .fetch_update(SeqCst, SeqCst, |tail| Some(tail + n.min(head.saturating_sub(tail))))
            .expect("the update always succeeds");
        start..start + n.min(head.saturating_sub(start))
    }

    /// The full window including uncommitted keys (for verify after a step).
    pub fn bounds(&self) -> Window {
        Window {
            tail: self.tail.load(SeqCst),
            head: self.next.load(SeqCst),
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn the_window_stops_below_the_oldest_batch_in_flight() {
        let t = TableState::new("pi1".into(), 0, Window::new(0), 2);
        let a = t.allocate(0, 10);
        let b = t.allocate(1, 10);
        assert_eq!((a.clone(), b.clone()), (0..10, 10..20));
        t.committed(1);
        assert_eq!(t.window(), Window { tail: 0, head: 0 });
        t.committed(0);
        assert_eq!(t.window(), Window { tail: 0, head: 20 });
        assert_eq!(t.take_tail(25), 0..20);
        assert_eq!(t.window(), Window { tail: 20, head: 20 });
    }

    #[test]
    fn concurrent_inserters_never_expose_an_uncommitted_key() {
        let t = TableState::new("pi1".into(), 0, Window::new(0), 2);
        let committed: Vec<AtomicU64> = (0..2).map(|_| AtomicU64::new(0)).collect();
        std::thread::scope(|s| {
            for (slot, done) in committed.iter().enumerate() {
                let t = &t;
                s.spawn(move || {
                    for _ in 0..20_000 {
                        let keys = t.allocate(slot, 3);
                        t.committed(slot);
                        done.fetch_max(keys.end, SeqCst);
                    }
                });
            }
            s.spawn(|| {
                for _ in 0..20_000 {
                    let w = t.window();
                    let bound = t.bounds().head;
                    assert!(w.head <= bound && w.tail <= w.head);
                }
            });
        });
        assert_eq!(t.window().head, 120_000);
    }
}
