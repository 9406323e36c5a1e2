//! A keyed bijection on `[0, n)` for any `n`, in O(1) memory.
//!
//! A few rounds of invertible steps (add a round key, multiply by an odd
//! constant, xor-shift right) scramble `[0, 2^bits)` with `2^bits` the smallest
//! power of two ≥ n; values that land outside `[0, n)` are scrambled again
//! ("cycle walking"), which stays a bijection on `[0, n)` and needs fewer than
//! two rounds-trips on average because `2^bits < 2n`.

use super::stream::{splitmix64_next, Purpose, Stream};

const ROUNDS: usize = 4;
const MULTIPLIERS: [u64; ROUNDS] = [
    0xbf58_476d_1ce4_e5b9,
    0x94d0_49bb_1331_11eb,
    0xd6e8_feb8_6659_fd93,
    0xff51_afd7_ed55_8ccd,
];

/// A pseudo-random permutation of `[0, n)` chosen by `(seed, table)`.
///
/// ```
/// use ibench::gen::Permutation;
/// let p = Permutation::new(10, 7, 0);
/// let mut image: Vec<u64> = (0..10).map(|i| p.apply(i)).collect();
/// image.sort();
/// assert_eq!(image, (0..10).collect::<Vec<_>>());
/// ```
#[derive(Clone, Debug)]
pub struct Permutation {
    n: u64,
    mask: u64,
    shift: u32,
    keys: [u64; ROUNDS],
}

impl Permutation {
    /// The permutation of `[0, n)` for `(seed, table)`. `n` must be ≥ 1.
    pub fn new(n: u64, seed: u64, table: u64) -> Self {
        assert!(n >= 1, "a permutation needs a non-empty domain");
        let bits = 64 - (n - 1).leading_zeros(); // 0 when n == 1
        let mask = if bits == 64 { u64::MAX } else { (1u64 << bits) - 1 };
        let mut state = Stream::new(seed, table, Purpose::Permutation).key();
        let keys = std::array::from_fn(|_| splitmix64_next(&mut state));
        Permutation {
            n,
            mask,
            shift: (bits / 2).max(1),
            keys,
        }
    }

    /// The size of the domain.
    pub fn len(&self) -> u64 {
        self.n
    }

    /// Always false: a permutation has at least one element.
    pub fn is_empty(&self) -> bool {
        false
    }

    #[inline]
    fn scramble(&self, mut x: u64) -> u64 {
        for (key, multiplier) in self.keys.iter().zip(MULTIPLIERS) {
            x = x.wrapping_add(*key) & self.mask;
            x = x.wrapping_mul(multiplier) & self.mask;
            x ^= x >> self.shift;
        }
        x
    }

    /// The image of `i` (which must be < n).
    #[inline]
    pub fn apply(&self, i: u64) -> u64 {
        debug_assert!(i < self.n);
        let mut x = self.scramble(i);
        while x >= self.n {
            x = self.scramble(x);
        }
        x
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn is_a_permutation_for_every_small_n() {
        for n in 1..=300u64 {
            let p = Permutation::new(n, n * 31, 2);
            let mut seen = vec![false; n as usize];
            for i in 0..n {
                let x = p.apply(i) as usize;
                assert!(!seen[x], "n={n}: {x} hit twice");
                seen[x] = true;
            }
        }
    }

    #[test]
    fn different_seeds_give_different_orders() {
        let a: Vec<u64> = (0..100).map(|i| Permutation::new(1000, 1, 0).apply(i)).collect();
        let b: Vec<u64> = (0..100).map(|i| Permutation::new(1000, 2, 0).apply(i)).collect();
        assert_ne!(a, b);
    }

    #[test]
    fn works_at_the_top_of_the_u64_range() {
        let p = Permutation::new(u64::MAX, 0, 0);
        let x = p.apply(u64::MAX - 1);
        assert!(x < u64::MAX);
    }
}
