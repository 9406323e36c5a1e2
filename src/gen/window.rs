//! The live key window of a table: keys `[tail, head)`.

/// A table's live keys: inserts take keys at the head, deletes remove them
/// from the tail (`exec::TableState` moves them). The counters, not
/// `SELECT MIN/MAX`, say where the window is.
///
/// ```
/// use ibench::gen::Window;
/// let w = Window { tail: 10, head: 100 };
/// assert_eq!((w.len(), w.is_empty(), Window::new(7).is_empty()), (90, false, true));
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
}
