//! Parallel generation that cannot change the output.
//!
//! Work is cut into chunks of [`CHUNK`] elements and each chunk is generated
//! from its absolute start index, so the bytes never depend on the thread
//! count; they only decide who computes which chunk. Runs on the current rayon
//! pool (use `ThreadPool::install` to choose the thread count).

use rayon::prelude::*;

/// Elements per parallel task: large enough to amortise scheduling, a multiple
/// of the stream block so tasks start on block boundaries.
pub const CHUNK: usize = 1 << 16;

/// Fills `out` (elements `start..start + out.len()`) by calling
/// `fill(chunk_start, chunk)` on chunks in parallel.
pub fn par_fill<T: Send>(start: u64, out: &mut [T], fill: impl Fn(u64, &mut [T]) + Sync) {
    if out.len() <= CHUNK {
        fill(start, out);
        return;
    }
    out.par_chunks_mut(CHUNK)
        .enumerate()
        .for_each(|(i, chunk)| fill(start + (i * CHUNK) as u64, chunk));
}

/// Splits variable-length output into per-chunk pieces: for each chunk of
/// [`CHUNK`] elements, its first element index, its `CHUNK + 1` offsets (into
/// `bytes`, not rebased), and the part of `bytes` that holds its elements.
pub fn split_var<'a>(offsets: &'a [i32], mut bytes: &'a mut [u8]) -> Vec<(usize, &'a [i32], &'a mut [u8])> {
    let count = offsets.len().saturating_sub(1);
    let mut pieces = Vec::with_capacity(count.div_ceil(CHUNK));
    let mut first = 0;
    while first < count {
        let last = (first + CHUNK).min(count);
        let size = (offsets[last] - offsets[first]) as usize;
        let (head, tail) = bytes.split_at_mut(size);
        pieces.push((first, &offsets[first..=last], head));
        bytes = tail;
        first = last;
    }
    pieces
}

/// A vector of `n` default elements, or an error naming `name` when memory for
/// it cannot be had (instead of aborting the process, which in Python would
/// take the interpreter down).
pub fn try_vec<T: Clone + Default>(n: usize, name: &str) -> crate::Result<Vec<T>> {
    let mut v = Vec::new();
    try_resize(&mut v, n, name)?;
    Ok(v)
}

/// Resizes `v` to `n` default elements, reusing its memory, or fails like [`try_vec`].
pub fn try_resize<T: Clone + Default>(v: &mut Vec<T>, n: usize, name: &str) -> crate::Result<()> {
    v.clear();
    v.try_reserve_exact(n).map_err(|_| {
        crate::Error::config(
            name,
            format!(
                "{n} elements of {} bytes do not fit in memory; generate them in batches",
                std::mem::size_of::<T>()
            ),
        )
    })?;
    v.resize(n, T::default());
    Ok(())
}
