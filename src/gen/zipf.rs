//! Zipf-distributed ranks in `[0, n)`, exact for any `n`, O(1) set-up.
//!
//! Rejection-inversion sampling (Hörmann & Derflinger 1996, the method of
//! `rand_distr::Zipf`), written against the pure-Rust `libm` so the float
//! arithmetic, and so every draw, is the same on every platform: the
//! determinism contract does not allow the system libm's last-ulp differences.

use super::stream::StreamRng;
use rand_core::Rng;

/// Ranks `0..n` with P(rank = k) ∝ 1 / (k + 1)^theta.
///
/// Unlike YCSB's generator it needs no O(n) zeta sum and is exact for any
/// theta > 0, including theta ≥ 1.
#[derive(Clone, Debug)]
pub struct ZipfRanks {
    n: u64,
    s: f64,
    t: f64,
    q: f64,
}

/// A uniform float in [0, 1) from 53 random bits.
#[inline]
fn unit(rng: &mut StreamRng) -> f64 {
    (rng.next_u64() >> 11) as f64 * (1.0 / (1u64 << 53) as f64)
}

impl ZipfRanks {
    /// Ranks in `[0, n)` with exponent `theta`; the caller has validated
    /// `n ≥ 1` and `theta > 0` (finite).
    pub fn new(n: u64, theta: f64) -> Self {
        let (s, nf) = (theta, n as f64);
        let (q, t) = if s != 1.0 {
            let q = 1.0 / (1.0 - s);
            (q, (libm::pow(nf, 1.0 - s) - s) * q)
        } else {
            (0.0, 1.0 + libm::log(nf))
        };
        ZipfRanks { n, s, t, q }
    }

    #[inline]
    fn inv_cdf(&self, p: f64) -> f64 {
        let pt = p * self.t;
        if pt <= 1.0 {
            pt
        } else if self.s != 1.0 {
            libm::pow(pt * (1.0 - self.s) + self.s, self.q)
        } else {
            libm::exp(pt - 1.0)
        }
    }

    /// One rank.
    #[inline]
    pub fn sample(&self, rng: &mut StreamRng) -> u64 {
        let x = loop {
            let inv_b = self.inv_cdf(unit(rng));
            let x = libm::floor(inv_b + 1.0);
            let mut ratio = libm::pow(x, -self.s);
            if x > 1.0 {
                ratio *= libm::pow(inv_b, self.s);
            }
            if unit(rng) < ratio {
                break x;
            }
        };
        // x is in 1..=n; above 2^53 floats are coarse, so clamp rather than
        // trust the last ulp.
        (x as u64).clamp(1, self.n) - 1
    }
}
