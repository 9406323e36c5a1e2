//! Asking the CPU to start loading memory that is about to be read, so the
//! load overlaps the work in between instead of stalling the reader.

/// Bytes per cache line on the CPUs ibench runs on.
const LINE: usize = 64;

/// Starts loading the cache lines of `bytes` into the first-level cache and
/// returns at once. A hint: it reads nothing, never faults, and is a no-op
/// where the architecture has no stable prefetch intrinsic.
#[inline]
pub(crate) fn prefetch(bytes: &[u8]) {
    #[cfg(target_arch = "x86_64")]
    {
        use core::arch::x86_64::{_mm_prefetch, _MM_HINT_T0};
        let first = bytes.as_ptr();
        // From the line holding the first byte to the one holding the last.
        let lines = (first as usize % LINE + bytes.len()).div_ceil(LINE);
        for i in 0..lines {
            // SAFETY: a prefetch does not access memory architecturally: any
            // address is allowed, and this one stays within a line of `bytes`.
            unsafe { _mm_prefetch::<_MM_HINT_T0>(first.wrapping_add(i * LINE).cast()) };
        }
    }
    #[cfg(not(target_arch = "x86_64"))]
    let _ = bytes;
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn any_slice_can_be_prefetched_even_empty_or_at_an_allocations_edges() {
        let buf = vec![7u8; 1000];
        for (start, end) in [(0, 0), (0, 1), (999, 1000), (1000, 1000), (3, 997), (0, 1000)] {
            prefetch(&buf[start..end]);
        }
        assert!(buf.iter().all(|&b| b == 7), "a hint changes nothing");
    }
}
