//! The live windows of the benchmark's tables, shared by a step's threads.

use crate::gen::Window;
use std::sync::Mutex;

/// One table's key allocation and window. Keys below `acknowledged()` are
/// committed; `[tail, acknowledged)` is what point queries may ask for and
/// deletes may remove.
pub struct TableState {
    /// The table's name (`pi1`, `pi2`, ...).
    pub name: String,
    /// The table number (its generator streams).
    pub number: u64,
    inner: Mutex<Inner>,
}

struct Inner {
    tail: u64,
    next: u64,
    /// First key of each inserter's uncommitted batch (u64::MAX when none).
    in_flight: Vec<u64>,
}

impl TableState {
    /// A table whose live window is `window`, written by up to `inserters` threads.
    pub fn new(name: String, number: u64, window: Window, inserters: usize) -> Self {
        TableState {
            name,
            number,
            inner: Mutex::new(Inner {
                tail: window.tail,
                next: window.head,
                in_flight: vec![u64::MAX; inserters],
            }),
        }
    }

    fn lock(&self) -> std::sync::MutexGuard<'_, Inner> {
        self.inner.lock().unwrap_or_else(|p| p.into_inner())
    }

    /// Takes `n` keys at the head for inserter `slot`; they are in flight until
    /// [`TableState::committed`].
    pub fn allocate(&self, slot: usize, n: u64) -> std::ops::Range<u64> {
        let mut g = self.lock();
        let start = g.next;
        g.next += n;
        g.in_flight[slot] = start;
        start..g.next
    }

    /// Marks inserter `slot`'s batch committed.
    pub fn committed(&self, slot: usize) {
        self.lock().in_flight[slot] = u64::MAX;
    }

    /// The committed window `[tail, acknowledged head)`.
    pub fn window(&self) -> Window {
        let g = self.lock();
        let head = g.in_flight.iter().copied().min().unwrap_or(u64::MAX).min(g.next);
        Window {
            tail: g.tail.min(head),
            head,
        }
    }

    /// Takes up to `n` of the oldest committed keys for deletion.
    pub fn take_tail(&self, n: u64) -> std::ops::Range<u64> {
        let head = self.window().head;
        let mut g = self.lock();
        let take = n.min(head.saturating_sub(g.tail));
        let start = g.tail;
        g.tail += take;
        start..g.tail
    }

    /// The full window including uncommitted keys (for verify after a step).
    pub fn bounds(&self) -> Window {
        let g = self.lock();
        Window {
            tail: g.tail,
            head: g.next,
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
}
