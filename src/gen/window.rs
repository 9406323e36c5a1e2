//! The live key window of a table: keys `[tail, head)`.

use crate::error::{Error, Result};
use std::ops::Range;

/// A table's live keys: inserts take keys at the head, deletes remove them
/// from the tail. The counters, not `SELECT MIN/MAX`, say where the window is.
///
/// ```
/// use ibench::gen::Window;
/// let mut w = Window::new(0);
/// assert_eq!(w.insert(100), 0..100);
/// assert_eq!(w.delete(10)?, 0..10);
/// assert_eq!((w.tail, w.head, w.len()), (10, 100, 90));
/// # Ok::<(), ibench::Error>(())
/// ```
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
pub struct Window {
    /// The oldest live key.
    pub tail: u64,
    /// The next key to insert.
    pub head: u64,
}

impl Window {
    /// An empty window starting at key `start`.
    pub fn new(start: u64) -> Self {
        Window {
            tail: start,
            head: start,
        }
    }

    /// The number of live keys.
    pub fn len(&self) -> u64 {
        self.head - self.tail
    }

    /// True when no key is live.
    pub fn is_empty(&self) -> bool {
        self.head == self.tail
    }

    /// True when `key` is live.
    pub fn contains(&self, key: u64) -> bool {
        (self.tail..self.head).contains(&key)
    }

    /// Takes the next `n` keys at the head.
    pub fn insert(&mut self, n: u64) -> Range<u64> {
        let start = self.head;
        self.head += n;
        start..self.head
    }

    /// Removes the `n` oldest keys; fails if fewer than `n` are live.
    pub fn delete(&mut self, n: u64) -> Result<Range<u64>> {
        if n > self.len() {
            return Err(Error::config(
                "delete",
                format!(
                    "cannot delete {n} rows from a window of {} ([{}, {}))",
                    self.len(),
                    self.tail,
                    self.head
                ),
            ));
        }
        let start = self.tail;
        self.tail += n;
        Ok(start..self.tail)
    }
}
