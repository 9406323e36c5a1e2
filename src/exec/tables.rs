//! The live windows of the benchmark's tables, shared by a step's threads.

use crate::gen::Window;
use std::sync::atomic::{AtomicBool, AtomicU64, Ordering::SeqCst};
use std::sync::Mutex;

/// One table's row allocation and window, lock-free (the inserter touches it
/// on every operation). Rows are numbered in insertion order (the row
/// number is what the generator draws a row's values from); rows below
/// `window().head` are committed; `[tail, head)` is what point queries may
/// ask for and deletes may remove.
///
/// With client keys a row's number is its key. With server keys the server
/// picks the keys: consecutive within a statement, with gaps where a
/// PostgreSQL sequence's cached values were lost (a session ended, an insert
/// failed). [`TableState::placed`] records where each run of consecutive
/// keys starts, so [`TableState::key_of`] maps a row number to its key.
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
    /// Server keys: (row, key) where each run of consecutive keys starts, in
    /// row order; empty while keys equal row numbers.
    runs: Mutex<Vec<(u64, u64)>>,
    /// True once `runs` holds a run (the lock-free path until then).
    moved: AtomicBool,
    /// False when the keys' gaps are unknown (server keys in a table an
    /// earlier run loaded): only counts can be verified.
    keys_known: AtomicBool,
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
            runs: Mutex::new(Vec::new()),
            moved: AtomicBool::new(false),
            keys_known: AtomicBool::new(true),
        }
    }

    /// Marks the keys' gaps unknown (see [`TableState::keys_known`]).
    pub fn forget_keys(self) -> Self {
        self.keys_known.store(false, SeqCst);
        self
    }

    /// False when row numbers cannot be mapped to keys (server keys in a
    /// table an earlier run loaded, with gaps).
    pub fn keys_known(&self) -> bool {
        self.keys_known.load(SeqCst)
    }

    /// The key of row `row`: the row number itself, unless the server put
    /// the run it belongs to elsewhere.
    pub fn key_of(&self, row: u64) -> u64 {
        if !self.moved.load(SeqCst) {
            return row;
        }
        let runs = self.runs.lock().unwrap_or_else(|p| p.into_inner());
        match runs.iter().rev().find(|&&(first, _)| first <= row) {
            Some(&(first, key)) => key + (row - first),
            None => row,
        }
    }

    /// Records that the server gave row `row` (and the rows after it in its
    /// statement) key `key`. Called before the batch is committed, so
    /// readers of the window map its rows right.
    pub fn placed(&self, row: u64, key: u64) {
        if self.key_of(row) != key {
            let mut runs = self.runs.lock().unwrap_or_else(|p| p.into_inner());
            runs.retain(|&(first, _)| first < row);
            runs.push((row, key));
            self.moved.store(true, SeqCst);
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
    fn server_keys_map_rows_across_the_gaps_a_sequence_leaves() {
        let t = TableState::new("pi1".into(), 0, Window::new(1), 1);
        t.placed(1, 1);
        assert_eq!(t.key_of(500), 500, "no gap yet");
        // A new session's sequence cache starts at the next block of 1000.
        t.placed(1001, 2001);
        t.placed(1101, 2101);
        assert_eq!((t.key_of(1000), t.key_of(1001), t.key_of(1200)), (1000, 2001, 2200));
        t.placed(1201, 3001);
        assert_eq!((t.key_of(1200), t.key_of(1201), t.key_of(5)), (2200, 3001, 5));
        assert!(t.keys_known());
        assert!(!TableState::new("pi1".into(), 0, Window::new(1), 1)
            .forget_keys()
            .keys_known());
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
