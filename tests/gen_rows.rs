//! Insert Benchmark rows: the reference's columns and domains, a clock-like
//! `dateandtime`, printable compressible `data`, and key windows.

use ibench::gen::{Length, PointQueries, RowGen, RowSpec, Window, EPOCH_MICROS, POINT_KEYS, TEXT_ALPHABET};

#[test]
fn columns_lie_in_their_domains() {
    let rows = RowGen::new(&RowSpec::default()).unwrap().generate(0, 200_000).unwrap();
    assert!(rows.cashregisterid.iter().all(|&v| (0..1000).contains(&v)));
    assert!(rows.customerid.iter().all(|&v| (0..100_000).contains(&v)));
    assert!(rows.productid.iter().all(|&v| (0..10_000).contains(&v)));
    assert!(rows.price.iter().all(|&v| (0..500).contains(&v)));
    // Every value of the small domains shows up: the draws cover them.
    for (col, n) in [(&rows.cashregisterid, 1000), (&rows.price, 500)] {
        let mut seen = vec![false; n];
        col.iter().for_each(|&v| seen[v as usize] = true);
        assert!(seen.iter().all(|&s| s));
    }
}

#[test]
fn transactionid_is_the_key_and_dateandtime_advances_like_a_clock() {
    let spec = RowSpec {
        rows_per_second: 100,
        ..RowSpec::default()
    };
    let rows = RowGen::new(&spec).unwrap().generate(950, 300).unwrap();
    assert!(rows.transactionid.iter().copied().eq(950..1250));
    assert_eq!(rows.dateandtime[0], EPOCH_MICROS + 9_000_000);
    assert_eq!(rows.dateandtime[49], EPOCH_MICROS + 9_000_000);
    assert_eq!(rows.dateandtime[50], EPOCH_MICROS + 10_000_000);
    assert!(rows.dateandtime.windows(2).all(|w| w[0] <= w[1]));
}

#[test]
fn data_is_printable_ascii_of_the_configured_lengths() {
    let spec = RowSpec {
        data_length: Length::Uniform { min: 10, max: 20 },
        ..RowSpec::default()
    };
    let rows = RowGen::new(&spec).unwrap().generate(0, 50_000).unwrap();
    let mut lengths = [0usize; 21];
    for i in 0..rows.len() {
        let d = rows.row(i).data;
        assert!((10..=20).contains(&d.len()), "{d:?}");
        assert!(d.bytes().all(|b| TEXT_ALPHABET.contains(&b)), "{d:?}");
        lengths[d.len()] += 1;
    }
    assert!(
        lengths[10..=20].iter().all(|&n| n > 3000),
        "both ends and the middle occur: {lengths:?}"
    );
}

#[test]
fn data_repeats_its_random_part_to_the_ratio() {
    let spec = RowSpec {
        data_length: Length::Fixed(20),
        ratio: 0.25,
        ..RowSpec::default()
    };
    let row = RowGen::new(&spec).unwrap().row(12_345);
    let d = row.data.as_bytes();
    assert_eq!(&d[..5], &d[5..10]);
    assert_eq!(&d[..5], &d[15..20]);
}

#[test]
fn point_query_keys_fall_inside_the_live_window_and_cover_it() {
    let w = Window { tail: 400, head: 1000 };
    let mut q = PointQueries::new(1, 0, 0, 0);
    let mut seen = vec![false; 1000];
    for _ in 0..2000 {
        let keys = q.next_keys(w);
        assert_eq!(keys.len(), POINT_KEYS);
        for k in keys {
            assert!((w.tail..w.head).contains(&k), "{k} outside [{}, {})", w.tail, w.head);
            seen[k as usize] = true;
        }
    }
    assert!(seen[400..].iter().all(|&s| s) && !seen[..400].iter().any(|&s| s));
}
