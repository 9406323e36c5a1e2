//! Zipf-distributed ranks in `[0, n)`, exact for any `n`, O(1) set-up.

use super::stream::StreamRng;
use rand_distr::Distribution;

/// Ranks `0..n` with P(rank = k) ∝ 1 / (k + 1)^theta.
///
/// Uses rejection-inversion sampling (Hörmann & Derflinger, via `rand_distr`),
/// so unlike YCSB's generator it needs no O(n) zeta sum and is exact for
/// any theta > 0, including theta ≥ 1.
#[derive(Clone, Debug)]
pub struct ZipfRanks {
    n: u64,
    dist: rand_distr::Zipf<f64>,
}

impl ZipfRanks {
    /// Ranks in `[0, n)` with exponent `theta`; the caller has validated
    /// `n ≥ 1` and `theta > 0` (finite).
    pub fn new(n: u64, theta: f64) -> Self {
        let dist = rand_distr::Zipf::new(n as f64, theta).expect("n >= 1 and theta > 0 checked");
        ZipfRanks { n, dist }
    }

    /// One rank.
    #[inline]
    pub fn sample(&self, rng: &mut StreamRng) -> u64 {
        // The sampler returns 1..=n as a float; above 2^53 floats are coarse,
        // so clamp rather than trust the last ulp.
        let x = self.dist.sample(rng) as u64;
        x.clamp(1, self.n) - 1
    }
}
