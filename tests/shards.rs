//! Shards: a run's clients split among processes, each running exactly what
//! those clients run in one process, from a common intended start.

mod common;

use common::{config, run, step};
use ibench::metrics::Op;
use ibench::results::RunStatus;
use ibench::workload::Shard;
use serde_json::json;

fn params(shard: Option<&str>) -> serde_json::Value {
    let mut p = json!({
        "db": "null:?latency=fixed:50us", "clients": 4, "rows_l_i0": 3000, "rows_l_i1": 1000,
        "steps": ["l.i0", "l.x", "l.i1", "qp100"], "query_seconds": 1.0,
    });
    if let Some(s) = shard {
        p["shard"] = json!(s);
    }
    p
}

#[test]
fn shards_split_the_clients_into_contiguous_blocks_that_cover_them_once() {
    for (clients, count) in [(4, 2), (5, 2), (7, 3), (12, 12), (1, 1)] {
        let mut next = 0;
        for index in 0..count {
            let r = Shard { index, count }.clients(clients);
            assert_eq!(r.start, next, "{clients} clients in {count}");
            assert!(r.len() as u32 >= clients / count, "balanced: {r:?}");
            next = r.end;
        }
        assert_eq!(next, clients);
    }
    assert_eq!(Shard::parse("1/3").unwrap(), Shard { index: 1, count: 3 });
    for bad in ["3/3", "1", "a/2", "0/0", "-1/2"] {
        let e = Shard::parse(bad).unwrap_err().to_string();
        assert!(e.starts_with("invalid shard"), "{bad}: {e}");
    }
}

#[test]
fn shards_that_cannot_split_the_run_are_refused_naming_the_shard() {
    let cases = [
        (json!({"clients": 2, "shard": "0/3"}), "3 shards cannot split 2 clients"),
        (
            json!({"clients": 2, "shard": "0/2", "shared_table": true}),
            "share one table",
        ),
        (
            json!({"clients": 2, "shard": "1/2", "steps": ["fillseq"]}),
            "fillseq is a key/value step",
        ),
        (json!({"start_at": -1.0}), "invalid start_at"),
    ];
    for (p, expected) in cases {
        let e = ibench::workload::Config::resolve(&[p.as_object().unwrap().clone()])
            .and_then(|c| c.check())
            .unwrap_err()
            .to_string();
        assert!(e.contains(expected), "{e}");
    }
}

#[test]
fn two_shards_do_together_what_one_process_does() {
    let dir = tempfile::tempdir().unwrap();
    let whole = run(&config(params(None)), &dir.path().join("whole"));
    let parts: Vec<_> = ["0/2", "1/2"]
        .iter()
        .map(|s| run(&config(params(Some(s))), &dir.path().join(s.replace('/', "-"))))
        .collect();
    for name in ["l.i0", "l.x", "l.i1", "qp100"] {
        let w = step(&whole, name);
        let (a, b) = (step(&parts[0], name), step(&parts[1], name));
        assert_eq!((a.status.as_str(), b.status.as_str()), ("ok", "ok"), "{name}");
        assert_eq!(a.clients + b.clients, w.clients, "{name}");
        assert_eq!(a.inserts + b.inserts, w.inserts, "{name}");
        assert_eq!(a.deletes + b.deletes, w.deletes, "{name}");
        assert_eq!(a.live_rows + b.live_rows, w.live_rows, "{name}");
        assert_eq!(
            a.indexed_rows.zip(b.indexed_rows).map(|(x, y)| x + y),
            w.indexed_rows,
            "{name}"
        );
    }
    // The q step ended with its own clients' inserts: it did not wait for the other shard's.
    let q = step(&parts[0], "qp100");
    assert_eq!(q.target_ips, Some(200.0));
    assert!(q.elapsed_s < 3.0, "{}", q.elapsed_s);
    // Each shard's per-client rows are its own clients'.
    let clients = |o: &ibench::exec::RunOutcome| {
        let mut c: Vec<u32> = o.results.intervals.iter().filter_map(|(_, r)| r.client).collect();
        c.sort();
        c.dedup();
        c
    };
    assert_eq!(clients(&parts[0]), [0, 1]);
    assert_eq!(clients(&parts[1]), [2, 3]);
    assert!(parts.iter().all(|p| p.results.run.status == RunStatus::Ok));
    // A shard never measures the server's processes: a worker on its host does.
    assert!(parts
        .iter()
        .all(|p| p.results.steps.iter().all(|s| s.system.server_cpu_s.is_none())));
}

#[test]
fn the_first_step_counts_from_the_common_start_even_when_reached_late() {
    let dir = tempfile::tempdir().unwrap();
    let now = ibench::metrics::unix_micros();
    // Ahead: the step waits for the instant and its start is exactly it.
    let at = now + 700_000;
    let mut p = params(Some("0/2"));
    p["start_at"] = json!(at as f64 / 1e6);
    p["steps"] = json!(["l.i0"]);
    let out = run(&config(p.clone()), &dir.path().join("ahead"));
    let s = step(&out, "l.i0");
    assert!((s.started_at_us - at).abs() <= 1, "{} vs {at}", s.started_at_us);
    assert!(out.results.run.warnings.is_empty(), "{:?}", out.results.run.warnings);
    // Behind: the open-loop schedule still counts from the common instant,
    // so the lateness shows as schedule lag, and the step says so.
    let at = ibench::metrics::unix_micros() - 300_000;
    p["start_at"] = json!(at as f64 / 1e6);
    p["steps"] = json!(["qp100"]);
    p["delete_per_insert"] = json!(false);
    let out = run(&config(p), &dir.path().join("behind"));
    let s = step(&out, "qp100");
    assert_eq!(s.started_at_us, at);
    let max_lag = s.lag(Op::Insert, 2).unwrap();
    assert!(
        max_lag >= 250_000.0,
        "the first commits start ~300 ms late: {max_lag} µs"
    );
    assert!(
        out.results.run.warnings.iter().any(|w| w.contains("ms late")),
        "{:?}",
        out.results.run.warnings
    );
}
