//! The key/value session contract every connector meets, as a test each
//! connector's tests run against its own database.

use super::KvSession;
use crate::gen::{decode_key, encode_key, KvBatch};

/// Key `k`, encoded in 16 bytes.
pub(crate) fn key(k: u64) -> Vec<u8> {
    let mut b = vec![0; 16];
    encode_key(k, &mut b);
    b
}

/// Creates `table` and checks put (a later pair with the same key wins, also
/// in batches larger than one statement takes), get, scan, reverse scan,
/// MultiGet, merge, delete (also of more keys than one statement takes),
/// count, flush and wait for compaction. Leaves the table for the caller to drop.
pub(crate) fn round_trip(s: &mut dyn KvSession, table: &str) {
    puts_and_gets(s, table);
    scans(s, table);
    merges_and_deletes(s, table);
    large_batches(s, table);
    let stop = crate::stop::Stop::new();
    assert!(s.flush(table, &stop).unwrap().is_empty());
    assert!(s.wait_for_compaction(table, &stop).unwrap().is_empty());
    assert_eq!(s.count(table).unwrap(), 4 + 17_500);
}

/// The pairs of `out` as (key, value).
fn pairs(out: &KvBatch) -> Vec<(u64, &[u8])> {
    out.pairs().map(|(k, v)| (decode_key(k), v)).collect()
}

/// A new table: puts (a later pair of a key wins), gets and probes.
fn puts_and_gets(s: &mut dyn KvSession, table: &str) {
    s.create(table, 16).unwrap();
    let mut b = KvBatch::new(16);
    for (k, v) in [
        (3, &b"old"[..]),
        (1, b"one"),
        (3, b"new"),
        (2, b""),
        (7, &[0u8, 255, 0][..]),
    ] {
        b.push_raw(&key(k), v);
    }
    s.put(table, &b).unwrap();
    s.put(table, &KvBatch::new(16)).unwrap();
    assert_eq!(s.count(table).unwrap(), 4);
    let mut v = b"stale".to_vec();
    assert!(s.get(table, &key(3), &mut v).unwrap());
    assert_eq!(v, b"new");
    assert!(s.get(table, &key(2), &mut v).unwrap());
    assert!(v.is_empty());
    assert!(s.get(table, &key(7), &mut v).unwrap());
    assert_eq!(v, [0, 255, 0]);
    v = b"stale".to_vec();
    assert!(!s.get(table, &key(4), &mut v).unwrap());
    assert!(v.is_empty());
    // A probe finds what get finds, an empty value included.
    for (k, there) in [(3, true), (2, true), (7, true), (4, false)] {
        assert_eq!(s.probe(table, &key(k), &mut v).unwrap(), there, "probe of {k}");
    }
}

/// An update in a later batch; scans forward and back; MultiGet.
fn scans(s: &mut dyn KvSession, table: &str) {
    // An update of an existing key, in a later batch.
    let mut b = KvBatch::new(16);
    b.push_raw(&key(1), b"uno");
    s.put(table, &b).unwrap();
    let mut out = KvBatch::new(16);
    assert_eq!(s.scan(table, &key(0), 3, &mut out).unwrap(), 3);
    let got = pairs(&out);
    assert_eq!(got, [(1, &b"uno"[..]), (2, b""), (3, b"new")]);
    assert_eq!(s.scan(table, &key(4), 10, &mut out).unwrap(), 1);
    assert_eq!(decode_key(out.key(0)), 7);
    assert_eq!(s.scan(table, &key(8), 10, &mut out).unwrap(), 0);
    assert!(out.is_empty());

    // Reverse scans: from the last key ≤ the start, descending.
    assert_eq!(s.scan_reverse(table, &key(6), 2, &mut out).unwrap(), 2);
    let got = pairs(&out);
    assert_eq!(got, [(3, &b"new"[..]), (2, b"")]);
    assert_eq!(s.scan_reverse(table, &key(7), 10, &mut out).unwrap(), 4);
    assert_eq!(decode_key(out.key(0)), 7);
    assert_eq!(decode_key(out.key(3)), 1);
    assert_eq!(s.scan_reverse(table, &key(0), 10, &mut out).unwrap(), 0);

    // MultiGet: the pairs found, in the order asked.
    let mut keys = KvBatch::new(16);
    for k in [7, 4, 1] {
        keys.push_key(k);
    }
    assert_eq!(s.multi_get(table, &keys, &mut out).unwrap(), 2);
    let got = pairs(&out);
    assert_eq!(got, [(7, &[0u8, 255, 0][..]), (1, b"uno")]);
}

/// Merges (the last operand wins) and deletes of present and absent keys.
fn merges_and_deletes(s: &mut dyn KvSession, table: &str) {
    // Merge with the put operator: the last operand wins, over a value or none.
    let (mut b, mut keys, mut out, mut v) = (KvBatch::new(16), KvBatch::new(16), KvBatch::new(16), Vec::new());
    for (k, v) in [(3, &b"m1"[..]), (5, b"m2"), (3, b"m3")] {
        b.push_raw(&key(k), v);
    }
    s.merge(table, &b).unwrap();
    assert!(s.get(table, &key(3), &mut v).unwrap());
    assert_eq!(v, b"m3");
    assert!(s.get(table, &key(5), &mut v).unwrap());
    assert_eq!(v, b"m2");

    // Deletes: present and absent keys, in one commit.
    keys.clear();
    for k in [5, 4, 2] {
        keys.push_key(k);
    }
    s.delete_keys(table, &keys).unwrap();
    assert!(!s.get(table, &key(5), &mut v).unwrap());
    assert!(!s.get(table, &key(2), &mut v).unwrap());
    assert_eq!(s.count(table).unwrap(), 3);
    assert_eq!(s.scan(table, &key(0), 10, &mut out).unwrap(), 3);
    let left: Vec<u64> = out.pairs().map(|(k, _)| decode_key(k)).collect();
    assert_eq!(left, [1, 3, 7]);
    // 2 back as it was: four pairs, as before the merge.
    b.clear();
    b.push_raw(&key(2), b"");
    s.put(table, &b).unwrap();
}

/// Puts and deletes of more pairs than one statement takes.
fn large_batches(s: &mut dyn KvSession, table: &str) {
    // More pairs than one statement takes, with keys repeated across chunks.
    let (mut b, mut keys, mut v) = (KvBatch::new(16), KvBatch::new(16), Vec::new());
    for i in 0..40_000u64 {
        b.push_raw(&key(1_000 + i % 35_000), &i.to_le_bytes());
    }
    s.put(table, &b).unwrap();
    assert_eq!(s.count(table).unwrap(), 4 + 35_000);
    assert!(s.get(table, &key(1_000), &mut v).unwrap());
    assert_eq!(v, 35_000u64.to_le_bytes());
    assert!(s.get(table, &key(1_000 + 34_999), &mut v).unwrap());
    assert_eq!(v, 34_999u64.to_le_bytes());

    // A delete of more keys than one statement takes: every other one of them.
    keys.clear();
    for i in 0..35_000u64 {
        keys.push_key(1_000 + 2 * i);
    }
    s.delete_keys(table, &keys).unwrap();
    assert_eq!(s.count(table).unwrap(), 4 + 17_500);
    assert!(!s.get(table, &key(1_000 + 34_998), &mut v).unwrap());
    assert!(s.get(table, &key(1_000 + 34_999), &mut v).unwrap());
}
