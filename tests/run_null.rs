//! The harness measured against the null connector: injected latencies are
//! what the histograms report, a stall shows in response time but not in
//! service time, an unreachable rate misses the SLA, and a failure or a stop
//! mid-step still leaves readable results.

mod common;

use common::{config, latency, run, step};
use ibench::metrics::Op;
use ibench::results::PERCENTILES;
use serde_json::json;
use std::sync::Arc;
use std::time::Duration;

/// Timing tests run one at a time: on 2 cores, parallel tests would preempt
/// the connector's spin-waits and the harness's threads.
static SERIAL: std::sync::Mutex<()> = std::sync::Mutex::new(());

fn serial() -> std::sync::MutexGuard<'static, ()> {
    SERIAL.lock().unwrap_or_else(|p| p.into_inner())
}

/// Runs `check` until it passes, at most `attempts` times; the misses of a
/// failure are all shown. Timing bounds hold for ibench, not for this VM's
/// host, which at times stops a vCPU for milliseconds: a stall in one run
/// is common here, one in every run would be ibench's.
fn one_of(attempts: usize, mut check: impl FnMut() -> Result<(), String>) {
    let mut misses = Vec::new();
    for _ in 0..attempts {
        match check() {
            Ok(()) => return,
            Err(why) => misses.push(why),
        }
    }
    panic!("every run missed: {misses:#?}");
}

/// How late this host woke a plain sleeper while a run went on: the
/// control for the pacer's lateness. A pacer late by milliseconds on a host
/// that delays any sleeper as much is the host (this VM's and CI's stop
/// vCPUs for milliseconds at times), and the overload warning it gets is
/// right; late on a host that woke the control on time, it is ibench's.
struct HostWakeups {
    stop: Arc<std::sync::atomic::AtomicBool>,
    thread: std::thread::JoinHandle<Vec<Duration>>,
}

impl HostWakeups {
    /// Every millisecond: a sleep to the next tick, its lateness noted (a
    /// thousand wake-ups a second cost a few ms of CPU).
    fn start() -> Self {
        let stop = Arc::new(std::sync::atomic::AtomicBool::new(false));
        let thread = std::thread::spawn({
            let stop = stop.clone();
            move || {
                let tick = Duration::from_millis(1);
                let mut deadline = std::time::Instant::now();
                let mut late = Vec::new();
                while !stop.load(std::sync::atomic::Ordering::Relaxed) {
                    deadline += tick;
                    let now = std::time::Instant::now();
                    if now < deadline {
                        std::thread::sleep(deadline - now);
                    }
                    let woke = std::time::Instant::now();
                    late.push(woke.saturating_duration_since(deadline));
                    // After a stall, the next tick is from now: one stall, one late wake-up.
                    deadline = deadline.max(woke);
                }
                late
            }
        });
        HostWakeups { stop, thread }
    }

    /// How many of the wake-ups were later than `us` µs, and of how many.
    fn stop(self) -> (usize, usize) {
        self.stop.store(true, std::sync::atomic::Ordering::Relaxed);
        let late = self.thread.join().unwrap();
        let over = late
            .iter()
            .filter(|d| d.as_secs_f64() * 1e6 > ibench::exec::LAG_WARNING_US);
        (over.count(), late.len())
    }
}

const P50: usize = 0;
const P90: usize = 1;
const P99: usize = 2;
const P999: usize = 3;

#[test]
fn a_fixed_injected_latency_is_what_the_histograms_report() {
    let _serial = serial();
    let dir = tempfile::tempdir().unwrap();
    let c = config(json!({
        "db": "null:?latency=fixed:300us", "rows_l_i0": 2000, "rows_per_commit_l_i0": 1, "steps": ["l.i0"],
    }));
    let out = run(&c, dir.path());
    let s = step(&out, "l.i0");
    assert_eq!(s.inserts, 2000);
    // HdrHistogram keeps 3 significant digits (0.1%) and the injected wait is
    // accurate to a few µs: the median and p90 are exact to that.
    for index in [P50, P90] {
        let v = latency(s, Op::Insert, true, index);
        assert!(
            (300.0..=300.0 * 1.001 + 5.0).contains(&v),
            "{}: {v} µs",
            PERCENTILES[index].1
        );
    }
    // On this 2-core VM about 1% of operations are preempted (timer
    // interrupts, other services, and under CI load the other tests' builds):
    // real, and measured as such, so p99 is the host's tail, not the
    // histogram's. It is never below the injected latency, and a preemption
    // is tens to hundreds of µs (418 µs seen in one CI run), not a whole ms.
    let p99 = latency(s, Op::Insert, true, P99);
    assert!((300.0..=1300.0).contains(&p99), "p99: {p99} µs");
}

#[test]
fn exponential_injected_latencies_have_exponential_percentiles() {
    let _serial = serial();
    let mean_us = 100.0;
    let c = config(json!({
        "db": "null:?latency=exp:100us", "rows_l_i0": 20000, "rows_per_commit_l_i0": 1, "steps": ["l.i0"],
    }));
    one_of(3, || {
        let dir = tempfile::tempdir().unwrap();
        let out = run(&c, dir.path());
        let s = step(&out, "l.i0");
        let mut misses = Vec::new();
        for (index, q) in [(P50, 0.5f64), (P90, 0.9), (P99, 0.99)] {
            let expected = -mean_us * (1.0 - q).ln();
            let got = latency(s, Op::Insert, true, index);
            // Sampling error of 20000 draws (< 2% here) + HdrHistogram precision + a few µs of timer overhead.
            if (got - expected).abs() > 0.05 * expected + 3.0 {
                misses.push(format!("p{}: {got} µs vs {expected} µs", q * 100.0));
            }
        }
        misses.is_empty().then_some(()).ok_or(misses.join("; "))
    });
}

#[test]
fn a_stall_shows_in_response_time_but_not_in_service_time() {
    let _serial = serial();
    let dir = tempfile::tempdir().unwrap();
    let c = config(json!({
        "db": "null:?stall=2s@2s",
        "steps": ["qr1000"],
        "query_seconds": 5.0,
        "rows_per_commit_q": 1,
        "delete_per_insert": false,
    }));
    let out = run(&c, dir.path());
    let s = step(&out, "qr1000");
    assert_eq!(s.inserts, 5000);
    let response = latency(s, Op::Insert, false, P999);
    let service = latency(s, Op::Insert, true, P999);
    assert!(
        response > 1.5e6,
        "response p99.9 {response} µs should show the 2 s stall"
    );
    assert!(service < 10_000.0, "service p99.9 {service} µs should not");
    // The one operation caught in the stall is still there, in the maximum.
    assert!(latency(s, Op::Insert, true, 4) > 1.5e6);
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
    assert_eq!(s.status, "ok");
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
    assert_eq!(out.results.run.status, "error");
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
    assert_eq!(out.results.run.status, "interrupted");
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
    assert_eq!(s.status, "timeout");
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
    assert_eq!(s.status, "timeout");
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
    assert_eq!(s.status, "error");
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
    let _serial = serial();
    let dir = tempfile::tempdir().unwrap();
    // 4 clients × (inserter + deleter) at 1000 rows/s in commits of 50: 8
    // streams of 20 commits/s, 160 commits/s together, 1.6 per 10 ms. In
    // phase they would arrive 8 at once every 50 ms.
    let c = config(json!({
        "db": "null:?query_latency=fixed:10ms", "steps": ["qr1000"], "clients": 4, "query_seconds": 2.0,
        "interval_seconds": 0.01,
    }));
    let out = run(&c, dir.path());
    let s = step(&out, "qr1000");
    assert_eq!(s.status, "ok");
    let counts = arrivals_per_window(&out, "qr1000");
    let windows = &counts[..counts.len() - 1]; // the last is partial
    assert!(windows.len() >= 190, "{} windows", windows.len());
    let smooth = windows.iter().filter(|&&n| (1..=3).contains(&n)).count();
    assert!(
        smooth as f64 >= 0.95 * windows.len() as f64,
        "arrivals per 10 ms should be 1 or 2 (±1 for a late wake-up): {windows:?}"
    );
    assert!(
        windows.iter().all(|&n| n <= 5),
        "no burst of the 8 streams at once: {windows:?}"
    );
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
    let _serial = serial();
    let dir = tempfile::tempdir().unwrap();
    // 100 rows/s in commits of 50: a commit every 0.5 s, for 2.5 s.
    let c = config(json!({
        "db": "null:", "steps": ["qp100"], "query_seconds": 2.5, "delete_per_insert": false,
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
    assert_eq!(rows.len(), 3, "{lengths:?}");
    assert!((rows[2].length_s - 0.5).abs() < 0.05, "{lengths:?}");
    for r in &rows {
        assert!(
            (r.rate() - 2.0).abs() < 0.25,
            "{r:?}: 2 commits/s in every interval, the last included"
        );
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
fn paced_operations_start_within_microseconds_of_their_intended_start_and_the_lag_is_reported() {
    let _serial = serial();
    for (step, rpc) in [("qr100", 1), ("qr1000", 1), ("qp1000", 50)] {
        // The timing bounds hold for the pacer, not for this VM's host, which
        // at times stops a vCPU for tens of ms (a 13 ms p99 lag seen in CI on
        // a stream of 3000: one stall's backlog). A stall in a 3 s run is
        // rare, five in a row rarer: the step passes when one of five runs
        // meets every bound, and a failure shows each run's misses.
        one_of(5, || {
            paced_run_meets_the_timing_bounds(step, rpc).map_err(|why| format!("{step}: {why}"))
        });
    }
}

/// One paced run of `step`: its structure asserted, its timing checked
/// (the misses returned).
fn paced_run_meets_the_timing_bounds(step: &str, rpc: u64) -> Result<(), String> {
    let dir = tempfile::tempdir().unwrap();
    // A fixed service time; the query thread mostly sleeps, so the cores are quiet.
    let c = config(json!({
        "db": "null:?latency=fixed:100us&query_latency=fixed:20ms", "steps": [step],
        "query_seconds": 3.0, "rows_per_commit_q": rpc,
    }));
    let host = HostWakeups::start();
    let out = run(&c, dir.path());
    let (host_late, host_wakes) = host.stop();
    // A sleeper of the test's own woke more than LAG_WARNING_US late: the
    // host stopped this process for that long, so the pacer's milliseconds
    // are the host's too.
    let host_stalled = host_late > 0;
    let s = step_of(&out, step);
    let mut misses = Vec::new();
    for op in [Op::Insert, Op::Delete] {
        let lag_p50 = s.lag(op, 0).expect("paced ops have lag columns");
        assert!(s.lag(op, 2).unwrap() >= s.lag(op, 1).unwrap(), "max ≥ p99");
        let lag_p99 = s.lag(op, 1).unwrap();
        // `cargo bench --bench pacing` measures the pacer on a quiet machine
        // (median ~1 µs); sleeping alone is 40-120 µs late at the median here.
        if lag_p50 >= 25.0 {
            misses.push(format!("{op:?}: median lag {lag_p50} µs"));
        }
        // The p99 of a short stream is one of its few largest lags (qp1000
        // paces 60 commits: its p99 is its maximum), so one preemption
        // decides it; a long stream's p99 is the tail of the pacer.
        let paced = if op == Op::Insert { s.inserts } else { s.deletes } / rpc;
        if paced >= 1000 && lag_p99 >= ibench::exec::LAG_WARNING_US && !host_stalled {
            misses.push(format!("{op:?}: p99 lag {lag_p99} µs"));
        }
        // Response − service is the lag, operation by operation. The
        // medians of the two sums differ by the median lag only while the
        // service time is exactly fixed; a preempted injected wait moves
        // service and response together, so under load the medians' gap
        // lies anywhere between no lag and the lag's tail (10 µs against
        // a median lag of 1.3 µs seen under CI load). What must hold:
        // response is never below service, and exceeds it by no more
        // than the lag's p99 at the median.
        if rpc > 1 {
            continue;
        }
        let gap = latency(s, op, false, P50) - latency(s, op, true, P50);
        if !(-1.0..=lag_p99 + 5.0).contains(&gap) {
            misses.push(format!(
                "{op:?}: response − service {gap} vs lag p50 {lag_p50}, p99 {lag_p99}"
            ));
        }
    }
    assert!(s.lag(Op::Query, 0).is_none(), "queries are not paced");
    let late: Vec<_> = out
        .results
        .run
        .warnings
        .iter()
        .filter(|w| w.contains("pacer woke late"))
        .collect();
    if !late.is_empty() && !host_stalled {
        misses.push(format!(
            "{late:?}, while the host woke {host_wakes} sleeps of the test's own on time (within {} µs)",
            ibench::exec::LAG_WARNING_US
        ));
    }
    let paced_rows = out
        .results
        .intervals
        .iter()
        .filter(|(st, r)| st == step && r.op == Op::Insert && r.count > 0);
    for (_, r) in paced_rows {
        // A median of a handful of operations (the last, partial interval
        // can hold one) is one host preemption away from milliseconds.
        if r.count >= 50 && r.lag_us[0] >= 100.0 {
            misses.push(format!("interval lag {:?}", r.lag_us));
        }
    }
    if misses.is_empty() {
        Ok(())
    } else {
        Err(misses.join("; "))
    }
}

#[test]
fn a_stall_shows_as_schedule_lag_the_backlog_behind_it() {
    let _serial = serial();
    let c = config(json!({
        "db": "null:?stall=1s@1s&query_latency=fixed:20ms", "steps": ["qr1000"], "query_seconds": 3.0,
        "rows_per_commit_q": 1, "delete_per_insert": false,
    }));
    one_of(3, || {
        let dir = tempfile::tempdir().unwrap();
        let host = HostWakeups::start();
        let out = run(&c, dir.path());
        let (host_late, _) = host.stop();
        let s = step_of(&out, "qr1000");
        let max = s.lag(Op::Insert, 2).unwrap();
        // The stall is exact, so this holds in every run.
        assert!(
            (900_000.0..1_100_000.0).contains(&max),
            "the operations behind the 1 s stall start up to 1 s late: {max} µs"
        );
        // The stall is the database's, not the pacer's: no overload warning
        // (unless the host stopped the test's own sleeper as long too).
        let warned = out.results.run.warnings.iter().any(|w| w.contains("pacer woke late"));
        if warned && host_late == 0 {
            return Err(format!(
                "a database stall warned of an overloaded client: {:?}",
                out.results.run.warnings
            ));
        }
        // The median is outside the backlog (hundreds of ms behind the stall):
        // the pacer's own lateness, µs; the bound is the other pacing tests'
        // (a loaded CI host has woken sleepers 10+ µs late at the median).
        let p50 = s.lag(Op::Insert, 0).unwrap();
        (p50 < 25.0)
            .then_some(())
            .ok_or(format!("outside the stall the pacer is on time: median lag {p50} µs"))
    });
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
