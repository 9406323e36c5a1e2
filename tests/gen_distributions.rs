//! The key distributions are what they claim: `unique` is a permutation,
//! `uniform` and `zipfian`/`latest` pass chi-square goodness-of-fit tests.

use ibench::gen::{KeyGen, KeyKind, KeySpec, Permutation};

fn keys(kind: KeyKind, space: u64, theta: f64, seed: u64, count: usize) -> Vec<u64> {
    let spec = KeySpec {
        space: Some(space),
        theta,
        seed,
        ..KeySpec::new(kind)
    };
    KeyGen::new(&spec).unwrap().generate(0, count).unwrap()
}

/// Upper critical value of chi-square with `df` degrees of freedom at
/// p = 0.001 (Wilson–Hilferty; accurate to < 1% for df ≥ 10).
fn chi2_critical(df: f64) -> f64 {
    chi2_critical_at(df, 3.090_232) // standard normal quantile at 0.999
}

/// The same at the upper-tail probability whose normal quantile is `z`.
fn chi2_critical_at(df: f64, z: f64) -> f64 {
    let a = 2.0 / (9.0 * df);
    df * (1.0 - a + z * a.sqrt()).powi(3)
}

fn chi2(observed: &[u64], expected: &[f64]) -> f64 {
    observed
        .iter()
        .zip(expected)
        .map(|(&o, &e)| (o as f64 - e).powi(2) / e)
        .sum()
}

#[test]
fn unique_draws_no_key_twice_in_ten_million_draws_from_a_non_power_of_two_space() {
    let space = 10_000_019u64; // prime, not a power of two
    let drawn = keys(KeyKind::Unique, space, 0.99, 3, 10_000_000);
    let mut seen = vec![0u64; (space as usize).div_ceil(64)];
    for &k in &drawn {
        assert!(k < space);
        let (word, bit) = ((k / 64) as usize, k % 64);
        assert_eq!(seen[word] >> bit & 1, 0, "key {k} drawn twice");
        seen[word] |= 1 << bit;
    }
}

#[test]
fn unique_is_a_permutation_for_every_small_space() {
    for space in (1..=1100).chain([4095, 4096, 4097, 65_537]) {
        let mut drawn = keys(KeyKind::Unique, space, 0.99, space, space as usize);
        drawn.sort_unstable();
        assert!(drawn.iter().copied().eq(0..space), "space {space}");
    }
}

#[test]
fn unique_keys_spread_evenly_over_the_space() {
    // The first tenth of the permutation should fall uniformly into buckets.
    let space = 10_000_000;
    let drawn = keys(KeyKind::Unique, space, 0.99, 11, 1_000_000);
    let buckets = 1000;
    let mut observed = vec![0u64; buckets];
    for k in drawn {
        observed[(k * buckets as u64 / space) as usize] += 1;
    }
    let expected = vec![1000.0; buckets];
    let stat = chi2(&observed, &expected);
    assert!(stat < chi2_critical((buckets - 1) as f64), "chi2 {stat}");
}

/// Per seed, the statistic stays under the p = 10^-4 critical value; over
/// all seeds, the mean statistic is within 3 standard errors of df (a biased
/// generator shifts the mean long before single tests fail).
#[test]
fn uniform_passes_a_chi_square_test() {
    for space in [1000u64, 997, 1 << 20, 3_000_000_000] {
        let buckets = space.min(1000) as usize;
        let df = (buckets - 1) as f64;
        let n = 1_000_000;
        // Expected per bucket: the number of keys it covers × n / space.
        let expected: Vec<f64> = (0..buckets as u64)
            .map(|b| {
                let lo = (b * space).div_ceil(buckets as u64);
                let hi = ((b + 1) * space).div_ceil(buckets as u64);
                (hi - lo) as f64 * n as f64 / space as f64
            })
            .collect();
        let seeds = 0..10u64;
        let mut stats = Vec::new();
        for seed in seeds.clone() {
            let mut observed = vec![0u64; buckets];
            for k in keys(KeyKind::Uniform, space, 0.99, seed, n) {
                assert!(k < space);
                observed[(k as u128 * buckets as u128 / space as u128) as usize] += 1;
            }
            let stat = chi2(&observed, &expected);
            assert!(
                stat < chi2_critical_at(df, 3.719),
                "space {space} seed {seed}: chi2 {stat}"
            );
            stats.push(stat);
        }
        let mean = stats.iter().sum::<f64>() / stats.len() as f64;
        let standard_error = (2.0 * df / stats.len() as f64).sqrt();
        assert!(
            (mean - df).abs() < 3.0 * standard_error,
            "space {space}: mean chi2 {mean} vs df {df}"
        );
    }
}

/// Zipf probabilities of ranks 0..n with exponent theta.
fn zipf_pmf(n: usize, theta: f64) -> Vec<f64> {
    let w: Vec<f64> = (1..=n).map(|k| (k as f64).powf(-theta)).collect();
    let total: f64 = w.iter().sum();
    w.into_iter().map(|x| x / total).collect()
}

/// Counts draws per rank, given how a kind maps rank → key.
fn rank_counts(drawn: &[u64], n: usize, rank_of_key: impl Fn(u64) -> usize) -> Vec<u64> {
    let mut counts = vec![0u64; n];
    for &k in drawn {
        counts[rank_of_key(k)] += 1;
    }
    counts
}

#[test]
fn zipfian_passes_a_chi_square_test_for_several_exponents() {
    let n = 200usize;
    let draws = 1_000_000;
    for (theta, seed) in [(0.5, 1u64), (0.99, 2), (1.0, 3), (1.5, 4)] {
        let drawn = keys(KeyKind::Zipfian, n as u64, theta, seed, draws);
        // zipfian spreads rank r to key Permutation(n, seed, table 0)(r).
        let p = Permutation::new(n as u64, seed, 0);
        let mut rank_of = vec![0usize; n];
        for r in 0..n {
            rank_of[p.apply(r as u64) as usize] = r;
        }
        let observed = rank_counts(&drawn, n, |k| rank_of[k as usize]);
        let expected: Vec<f64> = zipf_pmf(n, theta).iter().map(|q| q * draws as f64).collect();
        let stat = chi2(&observed, &expected);
        assert!(stat < chi2_critical((n - 1) as f64), "theta {theta}: chi2 {stat}");
    }
}

#[test]
fn latest_passes_a_chi_square_test_with_the_head_hottest() {
    let n = 500usize;
    let draws = 1_000_000;
    let drawn = keys(KeyKind::Latest, n as u64, 0.99, 9, draws);
    let observed = rank_counts(&drawn, n, |k| n - 1 - k as usize);
    let expected: Vec<f64> = zipf_pmf(n, 0.99).iter().map(|q| q * draws as f64).collect();
    let stat = chi2(&observed, &expected);
    assert!(stat < chi2_critical((n - 1) as f64), "chi2 {stat}");
    assert_eq!(
        observed.iter().enumerate().max_by_key(|(_, c)| **c).unwrap().0,
        0,
        "rank 0 = key n-1 is hottest"
    );
}

#[test]
fn zipfian_over_a_huge_space_is_skewed_like_zipf_at_the_head() {
    // n = 10^10: no O(n) set-up; the hottest rank gets 1/H(n, theta) of draws.
    let n = 10_000_000_000u64;
    let draws = 1_000_000usize;
    let drawn = keys(KeyKind::Latest, n, 0.99, 5, draws);
    let head = drawn.iter().filter(|&&k| k == n - 1).count() as f64 / draws as f64;
    // H(10^10, 0.99) ≈ 24.6, computed by Euler–Maclaurin: ζ-like sum of k^-0.99.
    let h: f64 = {
        let s = 0.99f64;
        let m = 1_000_000u64;
        let partial: f64 = (1..=m).map(|k| (k as f64).powf(-s)).sum();
        let tail = ((n as f64).powf(1.0 - s) - (m as f64).powf(1.0 - s)) / (1.0 - s);
        partial + tail
    };
    let expected = 1.0 / h;
    assert!(
        (head - expected).abs() < 5.0 * (expected / draws as f64).sqrt(),
        "head {head} vs {expected}"
    );
    assert!(drawn.iter().all(|&k| k < n));
}
