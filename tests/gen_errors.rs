//! Bad arguments get a clear error that names the argument, before any work.

use ibench::gen::{encode_keys, Alphabet, KeyGen, KeyKind, KeySpec, Length, RowGen, RowSpec, ValueGen, ValueSpec};
use ibench::Error;

/// The error's parameter name and message.
fn config_error<T: std::fmt::Debug>(r: Result<T, Error>) -> (String, String) {
    match r {
        Err(e @ Error::Config { .. }) => {
            let Error::Config { ref name, .. } = e else {
                unreachable!()
            };
            (name.clone(), e.to_string())
        }
        other => panic!("expected a config error, got {other:?}"),
    }
}

fn assert_names(r: Result<impl std::fmt::Debug, Error>, name: &str) -> String {
    let (got, message) = config_error(r);
    assert_eq!(got, name, "{message}");
    assert!(message.contains(name), "message does not name {name}: {message}");
    message
}

fn spec(kind: KeyKind, space: Option<u64>) -> KeySpec {
    KeySpec {
        space,
        ..KeySpec::new(kind)
    }
}

#[test]
fn a_key_size_below_8_is_an_error_never_a_truncation() {
    for size in [0, 1, 7] {
        let m = assert_names(encode_keys(&[1, 2, 3], size), "key_size");
        assert!(m.contains(&size.to_string()), "{m}");
    }
    assert_eq!(encode_keys(&[1], 8).unwrap(), 1u64.to_be_bytes());
}

#[test]
fn a_ratio_outside_0_to_1_is_an_error() {
    for ratio in [0.0, -0.1, 1.0001, f64::NAN, f64::INFINITY] {
        let v = ValueSpec {
            ratio,
            ..ValueSpec::default()
        };
        assert_names(ValueGen::new(&v), "ratio");
        let r = RowSpec {
            ratio,
            ..RowSpec::default()
        };
        assert_names(RowGen::new(&r), "ratio");
    }
    let ok = ValueSpec {
        ratio: 1.0,
        ..ValueSpec::default()
    };
    assert!(ValueGen::new(&ok).is_ok());
}

#[test]
fn a_length_range_with_min_above_max_is_an_error() {
    let v = ValueSpec {
        length: Length::Uniform { min: 20, max: 10 },
        ..ValueSpec::default()
    };
    let m = assert_names(ValueGen::new(&v), "length");
    assert!(m.contains("min 20 is greater than max 10"), "{m}");
    let r = RowSpec {
        data_length: Length::Uniform { min: 5, max: 4 },
        ..RowSpec::default()
    };
    assert_names(RowGen::new(&r), "data_length");
}

#[test]
fn counts_that_overflow_the_index_or_the_space_are_errors() {
    let uniform = KeyGen::new(&spec(KeyKind::Uniform, Some(10))).unwrap();
    assert_names(uniform.generate(u64::MAX - 5, 10), "count");
    let unique = KeyGen::new(&spec(KeyKind::Unique, Some(10))).unwrap();
    assert_names(unique.generate(5, 6), "count");
    assert!(unique.generate(5, 5).is_ok());
    let seq = KeyGen::new(&spec(KeyKind::Sequential, Some(10))).unwrap();
    assert_names(seq.generate(0, 11), "count");
    let rows = RowGen::new(&RowSpec::default()).unwrap();
    assert_names(rows.generate(i64::MAX as u64, 2), "count");
    let values = ValueGen::new(&ValueSpec::default()).unwrap();
    assert_names(values.generate(u64::MAX, 2), "count");
}

#[test]
fn counts_too_large_for_memory_are_errors_not_aborts() {
    let keys = KeyGen::new(&spec(KeyKind::Sequential, None)).unwrap();
    assert_names(keys.generate(0, usize::MAX / 4), "count");
    let values = ValueGen::new(&ValueSpec::default()).unwrap();
    assert_names(values.generate(0, usize::MAX / 8), "count");
}

#[test]
fn more_than_2_gib_of_values_in_one_array_is_an_error() {
    let big = ValueSpec {
        length: Length::Fixed(1 << 30),
        alphabet: Alphabet::Binary,
        ..ValueSpec::default()
    };
    let m = assert_names(ValueGen::new(&big).unwrap().generate(0, 3), "count");
    assert!(m.contains("2 GiB"), "{m}");
}

#[test]
fn drawn_key_kinds_need_a_non_empty_space_and_a_valid_theta() {
    for kind in [KeyKind::Uniform, KeyKind::Unique, KeyKind::Zipfian, KeyKind::Latest] {
        assert_names(KeyGen::new(&spec(kind, None)), "space");
        assert_names(KeyGen::new(&spec(kind, Some(0))), "space");
    }
    for theta in [0.0, -1.0, f64::NAN, f64::INFINITY] {
        let s = KeySpec {
            theta,
            ..spec(KeyKind::Zipfian, Some(100))
        };
        assert_names(KeyGen::new(&s), "theta");
    }
}

#[test]
fn an_unknown_key_kind_lists_the_known_ones() {
    let m = assert_names("gaussian".parse::<KeyKind>(), "kind");
    assert!(m.contains("sequential, uniform, unique, zipfian, latest"), "{m}");
}

#[test]
fn row_domains_and_clock_must_be_positive() {
    let r = RowSpec {
        rows_per_second: 0,
        ..RowSpec::default()
    };
    assert_names(RowGen::new(&r), "rows_per_second");
    let mut d = RowSpec::default();
    d.domains.prices = 0;
    assert_names(RowGen::new(&d), "prices");
}
