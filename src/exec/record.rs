//! A step's outcome as result rows: its `steps` row, its histograms, and
//! the warnings its pacers' lateness calls for.

use super::step::{IntervalHistogram, PacerLateness, StepOutcome};
use super::LAG_WARNING_US;
use crate::metrics::{percentile_us, serialize, EngineDelta, Side, ThreadKind, ThreadRow};
use crate::results::{HistogramRow, OpLag, OpLatency, StepRow, StepStatus, LAG_STATS, PERCENTILES};
use crate::workload::{Config, KvOp, SbStep, Step};

/// The step's row, from what it measured; `clients` is how many of the
/// run's clients this process ran.
pub(super) fn step_row(
    run_id: &str,
    c: &Config,
    step: Step,
    clients: u32,
    out: &StepOutcome,
    engine: Option<EngineDelta>,
) -> StepRow {
    let n = &out.counts;
    let mut row = StepRow {
        run_id: run_id.to_string(),
        step: step.to_string(),
        status: out.status,
        error: out.error.clone(),
        started_at_us: out.started_at_us,
        elapsed_s: out.elapsed_s,
        clients: match step {
            Step::Kv(_) => c.threads,
            Step::Sysbench(SbStep::Load | SbStep::CreateIndex) => c.load_connections.min(c.tables),
            Step::Sysbench(SbStep::Postwrite(_)) => 1,
            _ => clients,
        },
        rows_per_commit: match step {
            Step::Kv(op) if op.writes() => Some(c.kv_batch(op)),
            // Each multi-row insert of the load autocommits, as sysbench's do.
            Step::Sysbench(SbStep::Load) => Some(crate::connect::LOAD_ROWS_PER_INSERT as u32),
            _ => c.writes(step).map(|w| w.rows_per_commit),
        },
        inserts: n.inserts,
        deletes: n.deletes,
        queries: n.queries,
        indexed_rows: matches!(step, Step::CreateIndexes | Step::Sysbench(SbStep::CreateIndex))
            .then_some(n.indexed_rows),
        events: matches!(step, Step::Sysbench(SbStep::Run(_))).then_some(n.events),
        statement_rows: matches!(step, Step::Sysbench(SbStep::Run(_))).then_some(n.statement_rows),
        errors: n.errors,
        retries: n.retries,
        cost_ops: cost_ops(step, out),
        found: step.kv().is_some_and(KvOp::reads).then_some(n.found),
        engine,
        system: out.system.clone(),
        ..StepRow::default()
    };
    if let Step::Query { rate, .. } = step {
        let target = rate as f64 * clients as f64;
        row.target_ips = Some(target);
        // A q step that did not insert its rows in time (it timed out or
        // failed) missed its SLA; one the user stopped has no verdict.
        row.sla_ok = match out.status {
            StepStatus::Ok => Some(row.ips() >= 0.95 * target),
            StepStatus::Interrupted | StepStatus::Running | StepStatus::Killed => None,
            StepStatus::Error | StepStatus::Timeout => Some(false),
        };
    }
    for (op, lat) in &out.latencies {
        let p = |h| PERCENTILES.map(|(q, _)| percentile_us(h, q));
        row.latencies.push(OpLatency {
            op: *op,
            response: p(&lat.response),
            service: p(&lat.service),
        });
        if let Some(lag) = &lat.lag {
            row.lags.push(OpLag {
                op: *op,
                lag: LAG_STATS.map(|(q, _)| percentile_us(lag, q)),
            });
        }
    }
    row
}

/// The database's CPU in foreground and in background threads: a local
/// server's, or (`embedded`, no server thread measured) ibench's workers
/// and the engine's pools in ibench's own process. None for a remote
/// server: ibench's workers are its client, not the database.
pub(super) fn database_split(threads: &[ThreadRow], embedded: bool) -> (Option<f64>, Option<f64>) {
    let side = if threads.iter().any(|t| t.side == Side::Server) {
        Side::Server
    } else if embedded && !threads.is_empty() {
        Side::Client
    } else {
        return (None, None);
    };
    let sum = |kind| {
        threads
            .iter()
            .filter(|t| t.side == side && t.kind == kind)
            .map(|t| t.cpu_s)
            .sum::<f64>()
    };
    (Some(sum(ThreadKind::Foreground)), Some(sum(ThreadKind::Background)))
}

/// What the per-operation costs divide by: inserts in load steps, queries
/// in q steps, indexed rows in l.x, a sysbench microbenchmark's statements
/// (as the suite divides by its QPS), its load's rows and its index's
/// (None: no per-operation costs).
fn cost_ops(step: Step, out: &StepOutcome) -> Option<u64> {
    let n = &out.counts;
    match step {
        Step::Sysbench(SbStep::Load) => Some(n.inserts),
        Step::Sysbench(SbStep::CreateIndex) => Some(n.indexed_rows),
        Step::Sysbench(SbStep::Postwrite(_)) => None,
        Step::Sysbench(SbStep::Run(_)) => Some(n.queries),
        Step::LoadI0 | Step::LoadI1 | Step::LoadI2 => Some(n.inserts),
        Step::Query { .. } => Some(n.queries),
        Step::CreateIndexes => Some(n.indexed_rows),
        Step::Wait => None,
        Step::Kv(op) if op.maintains() => None,
        Step::Kv(op) if op.reads() => Some(n.queries),
        Step::Kv(op) if op.deletes() => Some(n.deletes),
        Step::Kv(_) => Some(n.inserts),
    }
}

/// The step's histograms per operation over the step.
pub(super) fn histograms(run_id: &str, step: &str, out: &StepOutcome) -> Vec<HistogramRow> {
    let mut rows = Vec::new();
    for (op, lat) in &out.latencies {
        let lag = lat.lag.as_ref().map(|h| ("lag", h));
        for (time, h) in [("response", &lat.response), ("service", &lat.service)]
            .into_iter()
            .chain(lag)
        {
            rows.push(HistogramRow {
                run_id: run_id.to_string(),
                step: step.to_string(),
                op: *op,
                time,
                count: h.len(),
                histogram: serialize(h),
                t_s: None,
            });
        }
    }
    rows
}

/// The all-clients response times per interval, moved (an 1800-s step's
/// are megabytes).
pub(super) fn interval_histograms<'a>(
    run_id: &'a str,
    step: &'a str,
    intervals: Vec<IntervalHistogram>,
) -> impl Iterator<Item = HistogramRow> + 'a {
    intervals.into_iter().map(move |h| HistogramRow {
        run_id: run_id.to_string(),
        step: step.to_string(),
        op: h.op,
        time: "response",
        count: h.count,
        histogram: h.histogram,
        t_s: Some(h.t_s),
    })
}

/// A warning for each paced stream whose pacer woke late: a few late
/// wakes are a VM's host at work; more than 1% of a stream's (and at least
/// three) is an overloaded client host.
pub(super) fn pacer_warnings(step: Step, late: &[PacerLateness]) -> Vec<String> {
    late.iter()
        .filter(|p| p.p99_us > LAG_WARNING_US && p.late >= 3.max(p.waits / 100))
        .map(|p| {
            format!(
                "{step}: the pacer woke late: {} starts p99 {:.0} µs (max {:.0} µs) after their intended time, {} of {} more than {LAG_WARNING_US:.0} µs; the client host is overloaded, so response times include the client's own lateness",
                p.op.name(),
                p.p99_us,
                p.max_us,
                p.late,
                p.waits
            )
        })
        .collect()
}

#[cfg(test)]
mod tests {
    use super::*;

    fn row(side: Side, kind: ThreadKind, cpu_s: f64) -> ThreadRow {
        ThreadRow {
            side,
            kind,
            role: kind.name().into(),
            threads: 1,
            cpu_s,
            user_s: cpu_s,
            sys_s: 0.0,
        }
    }

    #[test]
    fn the_database_split_is_the_servers_else_an_embedded_engines_never_a_remote_servers_client() {
        let client = [
            row(Side::Client, ThreadKind::Foreground, 2.0),
            row(Side::Client, ThreadKind::Background, 1.0),
        ];
        let mut local = client.to_vec();
        local.extend([
            row(Side::Server, ThreadKind::Foreground, 5.0),
            row(Side::Server, ThreadKind::Background, 0.5),
        ]);
        assert_eq!(database_split(&local, false), (Some(5.0), Some(0.5)));
        assert_eq!(database_split(&client, true), (Some(2.0), Some(1.0)));
        // A remote server: ibench's workers are its client, not its database.
        assert_eq!(database_split(&client, false), (None, None));
        assert_eq!(database_split(&[], true), (None, None));
    }
}
