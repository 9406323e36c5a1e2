//! The harness measured against the null connector: injected latencies are
//! what the histograms report, a stall shows in response time but not in
//! service time, an unreachable rate misses the SLA, and a failure or a stop
//! mid-step still leaves readable results.

mod common;

use common::{config, latency, run, step};
use ibench::metrics::Op;
use ibench::results::PERCENTILES;
use ibench::results::{RunStatus, StepStatus};
use serde_json::json;
use std::sync::Arc;
use std::time::Duration;

/// Timing tests run one at a time: on 2 cores, parallel tests would preempt
/// the connector's spin-waits and the harness's threads.
static SERIAL: std::sync::Mutex<()> = std::sync::Mutex::new(());

fn serial() -> std::sync::MutexGuard<'static, ()> {
    SERIAL.lock().unwrap_or_else(|p| p.into_inner())
}

/// Simulated time (`crate::clock`): the null connector's latencies move
/// the run's threads' clocks on instead of taking real time, so schedules,
/// latencies and intervals are exact whatever this 2-core VM's host does.
const SIMULATED: &str = "time=simulated";

const P50: usize = 0;
const P90: usize = 1;
const P99: usize = 2;
const P999: usize = 3;

#[test]
fn a_fixed_injected_latency_is_what_the_histograms_report() {
    let dir = tempfile::tempdir().unwrap();
    let c = config(json!({
        "db": format!("null:?latency=fixed:300us&{SIMULATED}"), "rows_l_i0": 2000, "rows_per_commit_l_i0": 1,
        "steps": ["l.i0"],
    }));
    let out = run(&c, dir.path());
    let s = step(&out, "l.i0");
    assert_eq!(s.inserts, 2000);
    // Every operation took exactly 300 µs: each percentile, the maximum
    // included, is 300 µs to HdrHistogram's 3 significant digits.
    for (index, (_, name)) in PERCENTILES.iter().enumerate() {
        for service in [false, true] {
            let v = latency(s, Op::Insert, service, index);
            assert!((300.0..=300.0 * 1.001).contains(&v), "{name}: {v} µs");
        }
    }
    assert!((s.elapsed_s - 0.6).abs() < 1e-9, "2000 × 300 µs: {} s", s.elapsed_s);
}

#[test]
fn exponential_injected_latencies_have_exponential_percentiles() {
    let mean_us = 100.0;
    let c = config(json!({
        "db": format!("null:?latency=exp:100us&{SIMULATED}"), "rows_l_i0": 20000, "rows_per_commit_l_i0": 1,
        "steps": ["l.i0"],
    }));
    let dir = tempfile::tempdir().unwrap();
    let out = run(&c, dir.path());
    let s = step(&out, "l.i0");
    for (index, q) in [(P50, 0.5f64), (P90, 0.9), (P99, 0.99)] {
        let expected = -mean_us * (1.0 - q).ln();
        let got = latency(s, Op::Insert, true, index);
        // Sampling error of 20000 draws (< 2% here) + HdrHistogram's precision.
        assert!(
            (got - expected).abs() <= 0.05 * expected,
            "p{}: {got} µs vs {expected} µs",
            q * 100.0
        );
    }
}

#[test]
fn a_stall_shows_in_response_time_but_not_in_service_time() {
    let dir = tempfile::tempdir().unwrap();
    let c = config(json!({
        "db": format!("null:?stall=2s@2s&query_latency=fixed:1ms&{SIMULATED}"),
        "steps": ["qr1000"],
        "query_seconds": 5.0,
        "rows_per_commit_q": 1,
        "delete_per_insert": false,
    }));
    let out = run(&c, dir.path());
    let s = step(&out, "qr1000");
    assert_eq!(s.inserts, 5000);
    // The insert intended at 2 s waits out the stall (2 s of service); the
    // 1999 behind it start at 4 s, up to 2 s late: response p99.9 is the
    // backlog, service p99.9 is an instant insert.
    let response = latency(s, Op::Insert, false, P999);
    let service = latency(s, Op::Insert, true, P999);
    assert!(
        (1.99e6..=2.0e6 * 1.001).contains(&response),
        "response p99.9 {response} µs should show the 2 s stall"
    );
    assert!(service < 1.0, "service p99.9 {service} µs should not");
    // The one operation caught in the stall is still there, in the maximum.
    let max = latency(s, Op::Insert, true, 4);
    assert!((2.0e6..=2.0e6 * 1.001).contains(&max), "{max}");
}

#[test]
fn an_unreachable_background_rate_misses_the_sla() {
    let _serial = serial();
    let dir = tempfile::tempdir().unwrap();
    let c = config(json!({
        "db": "null:?latency=fixed:20ms",
        "steps": ["qp100"],
        "query_seconds": 1.0,
        "rows_per_commit_q": 1,
        "delete_per_insert": false,
    }));
    let out = run(&c, dir.path());
    let s = step(&out, "qp100");
    assert_eq!(s.status, StepStatus::Ok);
    assert_eq!(s.inserts, 100);
    assert!(s.ips() < 60.0, "{}", s.ips());
    assert_eq!(s.sla_ok, Some(false));
    assert_eq!(s.target_ips, Some(100.0));
}

#[test]
fn a_reachable_rate_meets_the_sla() {
    let _serial = serial();
    let dir = tempfile::tempdir().unwrap();
    let c = config(json!({"db": "null:?latency=fixed:1ms", "steps": ["qr100"], "query_seconds": 1.0}));
    let out = run(&c, dir.path());
    assert_eq!(step(&out, "qr100").sla_ok, Some(true));
}

fn read_table(dir: &std::path::Path, name: &str) -> arrow::array::RecordBatch {
    let file = std::fs::File::open(dir.join(format!("{name}.parquet"))).unwrap();
    let reader = parquet::arrow::arrow_reader::ParquetRecordBatchReaderBuilder::try_new(file)
        .unwrap()
        .build()
        .unwrap();
    let batches: Vec<_> = reader.map(|b| b.unwrap()).collect();
    arrow::compute::concat_batches(&batches[0].schema(), &batches).unwrap()
}

fn string_column(batch: &arrow::array::RecordBatch, name: &str) -> Vec<Option<String>> {
    let col = batch.column_by_name(name).unwrap();
    let s = col.as_any().downcast_ref::<arrow::array::StringArray>().unwrap();
    s.iter().map(|v| v.map(str::to_owned)).collect()
}

#[test]
fn a_failure_mid_step_leaves_readable_results_with_the_error() {
    let _serial = serial();
    let dir = tempfile::tempdir().unwrap();
    let c = config(
        json!({"db": "null:?fail=delete@3", "rows_l_i0": 500, "rows_l_i1": 500, "steps": ["l.i0", "l.i1", "l.i2"]}),
    );
    let out = run(&c, dir.path());
    assert_eq!(out.results.run.status, RunStatus::Error);
    let runs = read_table(&out.dir, "runs");
    assert_eq!(string_column(&runs, "status"), vec![Some("error".into())]);
    assert!(string_column(&runs, "error")[0]
        .as_deref()
        .unwrap()
        .contains("injected failure of delete number 3"));
    let steps = read_table(&out.dir, "steps");
    assert_eq!(
        string_column(&steps, "step"),
        vec![Some("l.i0".into()), Some("l.i1".into())]
    );
    assert_eq!(
        string_column(&steps, "status"),
        vec![Some("ok".into()), Some("error".into())]
    );
    let s = step(&out, "l.i1");
    assert_eq!(s.errors, 1);
    assert_eq!(s.deletes, 100, "two commits of 50 deleted before the third failed");
    assert!(read_table(&out.dir, "histograms").num_rows() > 0);
}

#[test]
fn a_stop_mid_step_leaves_readable_results_marked_interrupted() {
    let _serial = serial();
    let dir = tempfile::tempdir().unwrap();
    let c = config(json!({"db": "null:", "steps": ["l.i0", "qr100", "qp100"], "query_seconds": 30.0}));
    let stop = Arc::new(ibench::Stop::new());
    let flag = stop.clone();
    std::thread::spawn(move || {
        std::thread::sleep(Duration::from_millis(1500));
        flag.request();
    });
    let started = std::time::Instant::now();
    let out = ibench::exec::run(&c, dir.path(), &ibench::exec::Silent, &stop).unwrap();
    assert!(
        started.elapsed() < Duration::from_secs(10),
        "the stop was honoured between operations"
    );
    assert_eq!(out.results.run.status, RunStatus::Interrupted);
    let steps = read_table(&out.dir, "steps");
    assert_eq!(
        string_column(&steps, "status"),
        vec![Some("ok".into()), Some("interrupted".into())]
    );
    assert_eq!(
        string_column(&read_table(&out.dir, "runs"), "status"),
        vec![Some("interrupted".into())]
    );
}

#[test]
fn the_max_seconds_guard_ends_a_step_that_would_run_too_long() {
    let _serial = serial();
    let dir = tempfile::tempdir().unwrap();
    let c = config(
        json!({"db": "null:?latency=fixed:10ms", "steps": ["l.i0"], "rows_per_commit_l_i0": 1, "max_seconds": 0.5}),
    );
    let out = run(&c, dir.path());
    let s = step(&out, "l.i0");
    assert_eq!(s.status, StepStatus::Timeout);
    assert!(
        s.elapsed_s < 1.0 && s.inserts < 100,
        "{} rows in {} s",
        s.inserts,
        s.elapsed_s
    );
}

#[test]
fn the_recorded_configuration_holds_no_password() {
    let _serial = serial();
    let dir = tempfile::tempdir().unwrap();
    let out = run(
        &config(json!({"db": "null:", "steps": ["l.i0"], "rows_l_i0": 10})),
        dir.path(),
    );
    let recorded: serde_json::Value = serde_json::from_str(&out.results.run.config).unwrap();
    assert_eq!(recorded["db"], json!(out.results.run.target));
}

#[test]
fn a_deadlock_is_retried_counted_and_the_step_succeeds() {
    let _serial = serial();
    let dir = tempfile::tempdir().unwrap();
    let c = config(json!({"db": "null:?deadlock=insert@3", "rows_l_i0": 1000, "steps": ["l.i0"]}));
    let out = run(&c, dir.path());
    let s = step(&out, "l.i0");
    assert_eq!((s.status.as_str(), s.inserts, s.retries), ("ok", 1000, 1));
}

#[test]
fn a_q_step_that_times_out_has_missed_its_sla() {
    let _serial = serial();
    let dir = tempfile::tempdir().unwrap();
    // 20 ms per one-row commit cannot keep 100 rows/s, and max_seconds stops the step early.
    let c = config(json!({
        "db": "null:?latency=fixed:20ms", "steps": ["qp100"], "query_seconds": 5.0,
        "rows_per_commit_q": 1, "delete_per_insert": false, "max_seconds": 0.5,
    }));
    let out = run(&c, dir.path());
    let s = step(&out, "qp100");
    assert_eq!(s.status, StepStatus::Timeout);
    assert_eq!(
        s.sla_ok,
        Some(false),
        "a q step that did not insert its rows in time missed its SLA"
    );
}

#[test]
fn a_q_step_that_fails_has_missed_its_sla() {
    let _serial = serial();
    let dir = tempfile::tempdir().unwrap();
    let c = config(json!({
        "db": "null:?fail=insert@3", "steps": ["qr100"], "query_seconds": 2.0, "rows_per_commit_q": 1,
    }));
    let out = run(&c, dir.path());
    let s = step(&out, "qr100");
    assert_eq!(s.status, StepStatus::Error);
    assert_eq!(s.sla_ok, Some(false));
}

#[test]
fn an_interrupted_q_step_has_no_sla_verdict() {
    let _serial = serial();
    let dir = tempfile::tempdir().unwrap();
    let c = config(json!({"db": "null:", "steps": ["qr100"], "query_seconds": 30.0}));
    let stop = Arc::new(ibench::Stop::new());
    let flag = stop.clone();
    std::thread::spawn(move || {
        std::thread::sleep(Duration::from_millis(700));
        flag.request();
    });
    let out = ibench::exec::run(&c, dir.path(), &ibench::exec::Silent, &stop).unwrap();
    let s = step(&out, "qr100");
    assert_eq!((s.status.as_str(), s.sla_ok), ("interrupted", None));
}

/// Commits of every client per 10 ms window of a q step (inserts and
/// deletes, all clients), from the all-clients interval rows.
fn arrivals_per_window(out: &ibench::exec::RunOutcome, step_name: &str) -> Vec<u64> {
    let mut per: std::collections::BTreeMap<i64, u64> = std::collections::BTreeMap::new();
    for (s, r) in &out.results.intervals {
        if s == step_name && r.client.is_none() && matches!(r.op, Op::Insert | Op::Delete) {
            *per.entry((r.t_s * 100.0).round() as i64).or_default() += r.count;
        }
    }
    per.into_values().collect()
}

#[test]
fn paced_streams_of_several_clients_are_phased_so_arrivals_are_smooth() {
    let dir = tempfile::tempdir().unwrap();
    // 4 clients × (inserter + deleter) at 1000 rows/s in commits of 50: 8
    // streams of 20 commits/s, 160 commits/s together, 1.6 per 10 ms. In
    // phase they would arrive 8 at once every 50 ms.
    let c = config(json!({
        "db": format!("null:?query_latency=fixed:10ms&{SIMULATED}"), "steps": ["qr1000"], "clients": 4,
        "query_seconds": 2.0, "interval_seconds": 0.01,
    }));
    let out = run(&c, dir.path());
    let s = step(&out, "qr1000");
    assert_eq!(s.status, StepStatus::Ok);
    let counts = arrivals_per_window(&out, "qr1000");
    let windows = &counts[..200];
    // Every 50 ms slot holds the 8 streams' commits 6.25 ms apart: one or
    // two per 10 ms window, eight per five windows.
    assert!(windows.iter().all(|n| (1..=2).contains(n)), "{windows:?}");
    assert!(windows.chunks(5).all(|w| w.iter().sum::<u64>() == 8), "{windows:?}");
}

#[test]
fn the_inserter_waits_when_its_deleter_is_max_delete_lag_commits_behind() {
    let _serial = serial();
    let dir = tempfile::tempdir().unwrap();
    // Inserts are instant, each delete takes 2 ms: unbounded, the inserter
    // would finish at once and the table would grow by all 1000 rows.
    let c = config(json!({
        "db": "null:?delete_latency=fixed:2ms", "steps": ["l.i1"], "rows_l_i1": 1000,
        "rows_per_commit_l_i1": 10, "max_delete_lag": 4, "interval_seconds": 0.05,
    }));
    let out = run(&c, dir.path());
    let s = step(&out, "l.i1");
    assert_eq!((s.status.as_str(), s.inserts, s.deletes), ("ok", 1000, 1000));
    assert!(
        s.live_rows_max <= 4 * 10,
        "the window grew to {} rows, more than max_delete_lag commits",
        s.live_rows_max
    );
    // The inserts follow the deletes' pace (100 commits × 2 ms), not all in the first interval.
    let first: u64 = out
        .results
        .intervals
        .iter()
        .filter(|(st, r)| st == "l.i1" && r.op == Op::Insert && r.client == Some(0) && r.t_s == 0.0)
        .map(|(_, r)| r.count)
        .sum();
    assert!(first <= 40, "{first} of 100 insert commits in the first 50 ms");
    assert!(s.elapsed_s < 0.5, "{}", s.elapsed_s);
}

#[test]
fn the_last_partial_interval_has_its_real_length_and_rate() {
    let dir = tempfile::tempdir().unwrap();
    // 100 rows/s in commits of 50: a commit every 0.5 s, for 2.5 s.
    let c = config(json!({
        "db": format!("null:?query_latency=fixed:10ms&{SIMULATED}"), "steps": ["qp100"], "query_seconds": 2.5,
        "delete_per_insert": false,
    }));
    let out = run(&c, dir.path());
    let rows: Vec<&ibench::metrics::IntervalRow> = out
        .results
        .intervals
        .iter()
        .filter(|(s, r)| s == "qp100" && r.op == Op::Insert && r.client == Some(0))
        .map(|(_, r)| r)
        .collect();
    let lengths: Vec<f64> = rows.iter().map(|r| r.length_s).collect();
    assert_eq!(lengths, [1.0, 1.0, 0.5]);
    for r in &rows {
        assert_eq!(r.rate(), 2.0, "{r:?}: 2 commits/s in every interval, the last included");
    }
}

#[test]
fn qr_steps_need_a_secondary_index() {
    let e = ibench::workload::Config::resolve(&[json!({"secondary_indexes": 0, "steps": ["l.i0", "qr100"]})
        .as_object()
        .unwrap()
        .clone()])
    .unwrap_err()
    .to_string();
    assert!(e.starts_with("invalid secondary_indexes: qr100"), "{e}");
}

#[test]
fn paced_operations_start_at_their_intended_start_and_the_lag_is_reported() {
    for (step, rpc) in [("qr100", 1), ("qr1000", 1), ("qp1000", 50)] {
        let dir = tempfile::tempdir().unwrap();
        // A fixed service time; each stream has its slot to itself.
        let c = config(json!({
            "db": format!("null:?latency=fixed:100us&query_latency=fixed:20ms&{SIMULATED}"), "steps": [step],
            "query_seconds": 3.0, "rows_per_commit_q": rpc,
        }));
        let out = run(&c, dir.path());
        let s = step_of(&out, step);
        let rate: u64 = step[2..].parse().unwrap();
        assert_eq!((s.inserts, s.deletes), (3 * rate, 3 * rate), "{step}");
        for op in [Op::Insert, Op::Delete] {
            // Every operation starts on time: no lag, and response = service.
            for index in 0..3 {
                assert_eq!(s.lag(op, index), Some(0.0), "{step} {op:?} lag {index}");
            }
            for index in [P50, P99, P999] {
                let (response, service) = (latency(s, op, false, index), latency(s, op, true, index));
                assert_eq!(response, service, "{step} {op:?} p{index}");
                assert!((100.0..=100.1).contains(&service), "{step} {op:?}: {service} µs");
            }
        }
        assert!(s.lag(Op::Query, 0).is_none(), "queries are not paced");
        assert!(
            !out.results.run.warnings.iter().any(|w| w.contains("pacer woke late")),
            "{:?}",
            out.results.run.warnings
        );
        // The stream paced rows/commit commits a second for 3 s.
        assert!((s.elapsed_s - 3.0).abs() < 0.021, "{step}: {} s", s.elapsed_s);
    }
}

#[test]
fn a_stall_shows_as_schedule_lag_the_backlog_behind_it() {
    let c = config(json!({
        "db": format!("null:?stall=1s@1s&query_latency=fixed:20ms&{SIMULATED}"), "steps": ["qr1000"],
        "query_seconds": 3.0, "rows_per_commit_q": 1, "delete_per_insert": false,
    }));
    let dir = tempfile::tempdir().unwrap();
    let out = run(&c, dir.path());
    let s = step_of(&out, "qr1000");
    // The insert intended at 1 s waits out the stall; the next, intended at
    // 1.001 s, starts at 2 s: 999 ms late, the most of any.
    let max = s.lag(Op::Insert, 2).unwrap();
    assert!((999_000.0..=999_000.0 * 1.001).contains(&max), "{max} µs");
    // The stall is the database's, not the pacer's: no overload warning.
    assert!(
        !out.results.run.warnings.iter().any(|w| w.contains("pacer woke late")),
        "{:?}",
        out.results.run.warnings
    );
    // Outside the backlog every start is on time.
    assert_eq!(s.lag(Op::Insert, 0), Some(0.0));
}

fn step_of<'a>(out: &'a ibench::exec::RunOutcome, name: &str) -> &'a ibench::results::StepRow {
    step(out, name)
}

#[test]
fn a_client_host_too_busy_to_wake_the_pacer_on_time_gets_a_warning() {
    let _serial = serial();
    let dir = tempfile::tempdir().unwrap();
    // A client host busy for certain: ibench at nice 19 (the least CPU
    // weight, which no privilege is needed for) beside a spinning thread per
    // CPU and two more at nice 0, so its 12 paced streams wait for the
    // spinners' time slices. (Six query threads of its own alone, on 2 cores,
    // left the pacers on time in one CI run: the scheduler favours a waking
    // thread.)
    let stop = std::sync::Arc::new(std::sync::atomic::AtomicBool::new(false));
    let spinners: Vec<_> = (0..std::thread::available_parallelism().map_or(2, |n| n.get()) + 2)
        .map(|_| {
            let stop = stop.clone();
            std::thread::spawn(move || {
                while !stop.load(std::sync::atomic::Ordering::Relaxed) {
                    std::hint::spin_loop();
                }
            })
        })
        .collect();
    let out = std::process::Command::new("nice")
        .args([
            "-n",
            "19",
            env!("CARGO_BIN_EXE_ibench"),
            "run",
            "--db",
            "null:",
            "--steps",
            "qr1000",
        ])
        .args([
            "--clients",
            "6",
            "--query-seconds",
            "2",
            "--rows-per-commit-q",
            "1",
            "--out",
        ])
        .arg(dir.path())
        .output()
        .expect("nice runs ibench");
    stop.store(true, std::sync::atomic::Ordering::Relaxed);
    for s in spinners {
        s.join().unwrap();
    }
    let stderr = String::from_utf8_lossy(&out.stderr);
    assert!(out.status.success(), "{stderr}");
    assert!(stderr.contains("qr1000: the pacer woke late"), "{stderr}");
}

#[test]
fn a_flush_folder_that_cannot_be_written_is_noted_and_the_step_goes_on_to_complete_results() {
    let dir = tempfile::tempdir().unwrap();
    let c = config(json!({
        "db": "null:?query_latency=fixed:1ms", "steps": ["l.i0", "qr100"], "rows_l_i0": 1000,
        "query_seconds": 3.0, "flush_seconds": 0.2,
    }));
    // Once qr100 has written, its partial folder becomes a plain file: every
    // later write fails (not a directory), as on a full or read-only disk.
    let out_dir = dir.path().to_path_buf();
    let blocker = std::thread::spawn(move || {
        let deadline = std::time::Instant::now() + Duration::from_secs(60);
        while std::time::Instant::now() < deadline {
            for run_dir in std::fs::read_dir(&out_dir).unwrap().flatten() {
                let partial = run_dir.path().join(".partial").join("qr100");
                let written = std::fs::read_dir(&partial).map(|d| d.count() > 0).unwrap_or(false);
                if written && std::fs::remove_dir_all(&partial).is_ok() {
                    std::fs::write(&partial, b"in the way").unwrap();
                    return true;
                }
            }
            std::thread::sleep(Duration::from_millis(10));
        }
        false
    });
    let out = run(&c, dir.path());
    assert!(blocker.join().unwrap(), "qr100 never wrote its partial results");
    let q = step(&out, "qr100");
    assert_eq!(q.status, StepStatus::Ok);
    let w = &out.results.run.warnings;
    assert!(
        w.iter().any(|w| w.contains("could not be written while it ran")),
        "{w:?}"
    );
    // The step's results are whole all the same: intervals covering its 3 s.
    let covered: f64 = out
        .results
        .intervals
        .iter()
        .filter(|(s, r)| s == "qr100" && r.op == Op::Query && r.client.is_none())
        .map(|(_, r)| r.length_s)
        .sum();
    assert!((2.9..3.5).contains(&covered), "{covered} s of intervals");
    assert!(q.queries > 1000, "{}", q.queries);
}
