//! The text a run prints: its start line, a line per finished step, and the
//! end-of-run table. Steps that did not run their course (timeout, error,
//! interrupted) are marked: their figures are partial, never shown as valid.

use crate::metrics::Op;
use crate::results::{RunRow, StepRow};

/// The line announcing a run in progress output: where it runs, and which
/// workload (compat) its Insert Benchmark steps run.
pub fn start_line(run: &RunRow, dir: &std::path::Path) -> String {
    format!(
        "run {} on {} {} -> {} ({})",
        run.run_id,
        run.dbms,
        run.dbms_version,
        dir.display(),
        workload(&run.config)
    )
}

/// Which workload a recorded configuration (JSON) runs.
fn workload(config: &str) -> &'static str {
    let c: serde_json::Value = serde_json::from_str(config).unwrap_or_default();
    let all = |f: fn(&crate::workload::Step) -> bool| {
        c["steps"].as_array().is_some_and(|s| {
            s.iter().all(|s| {
                s.as_str()
                    .and_then(|s| s.parse::<crate::workload::Step>().ok())
                    .is_some_and(|s| f(&s))
            })
        })
    };
    if all(|s| s.kv().is_some()) {
        return "workload: db_bench's key/value steps";
    }
    if all(|s| s.sb().is_some()) {
        return "workload: the sysbench microbenchmark suite";
    }
    match c["compat"].as_str() {
        Some("iibench") => "workload: compat = iibench, the reference client's statements and data",
        _ => "workload: compat = ibench, ibench's own statements and data",
    }
}

/// One line for progress output: step, status, time, rates, SLA, verify, error.
pub fn step_line(s: &StepRow) -> String {
    let mut line = format!("{:>7} {:<11} {:>8.1} s", s.step, s.status, s.elapsed_s);
    let partial = if s.ok() { "" } else { " (partial)" };
    if s.inserts > 0 {
        line += &format!("  {:>10.0} ips{partial}", s.ips());
    }
    if s.deletes > 0 && s.inserts == 0 {
        // deleteseq, deleterandom: deletes are the step's operations.
        line += &format!("  {:>10.0} dps{partial}", s.dps());
    }
    if s.queries > 0 {
        line += &format!("  {:>9.0} qps{partial}", s.qps());
    }
    if let Some(eps) = s.eps().filter(|_| s.events.unwrap_or(0) > 0) {
        line += &format!("  {eps:>9.0} eps{partial}");
    }
    if let Some(found) = s.found {
        line += &format!("  {found} found");
    }
    if let Some(e) = &s.engine {
        if let Some(w) = e.w_amp() {
            line += &format!("  w_amp {w:.2}");
        }
        if let Some(p) = e.stall_pct(s.elapsed_s) {
            line += &format!("  stall {p:.1}%");
        }
        line += &format!("  sst {:.1} MB", e.live_sst_bytes as f64 / 1e6);
    }
    if let Some(ok) = s.sla_ok {
        line += if ok { "  SLA met" } else { "  SLA MISSED" };
    }
    match s.verified {
        Some(true) => line += "  verified",
        Some(false) => line += &format!("  VERIFY FAILED: {}", s.verify_error.as_deref().unwrap_or("")),
        None => {}
    }
    if let Some(e) = &s.error {
        line += &format!("  error: {e}");
    }
    line
}

fn ms(v: Option<f64>) -> String {
    v.filter(|v| !v.is_nan())
        .map_or("-".into(), |v| format!("{:.2}", v / 1000.0))
}

/// The end-of-run table: throughput and p99 latencies per step (a run of
/// sysbench steps alone: its own columns). The rates of a step that did not
/// end `ok` carry a `*`.
pub fn table(steps: &[StepRow], run: Option<&RunRow>) -> String {
    let sysbench = !steps.is_empty()
        && steps
            .iter()
            .all(|s| s.step.parse::<crate::workload::Step>().is_ok_and(|s| s.sb().is_some()));
    let mut out = if sysbench {
        sysbench_table(steps)
    } else {
        steps_table(steps)
    };
    if steps.iter().any(|s| !s.ok()) {
        out += "\n(*: the step did not run its course (its status says why): its rates are partial, not a result)";
    }
    if let Some(r) = run {
        match r.verified {
            Some(true) => out += "\nverified: every table holds exactly its rows (counted at the end of the run)",
            Some(false) => {
                out += &format!(
                    "\nVERIFY FAILED at the end of the run: {}",
                    r.verify_error.as_deref().unwrap_or("")
                )
            }
            None => {}
        }
    }
    out
}

/// A table of `header` and `rows`, right-aligned.
fn render(header: Vec<&str>, rows: Vec<Vec<String>>) -> String {
    use comfy_table::{presets::NOTHING, CellAlignment, Table};
    let mut t = Table::new();
    t.load_preset(NOTHING).set_header(header);
    for row in rows {
        t.add_row(row);
    }
    for c in t.column_iter_mut() {
        c.set_cell_alignment(CellAlignment::Right);
    }
    t.to_string()
}

/// The cells every table shares: a rate (`*` when partial), a cost, a verdict.
struct Cells<'a> {
    s: &'a StepRow,
    costs: [Option<f64>; 10],
}

impl<'a> Cells<'a> {
    fn of(s: &'a StepRow) -> Self {
        Cells { s, costs: s.costs() }
    }
    fn rate(&self, v: f64) -> String {
        format!("{v:.0}{}", if self.s.ok() { "" } else { "*" })
    }
    fn cost(&self, i: usize) -> String {
        self.costs[i].map_or("-".to_string(), |v| format!("{v:.1}"))
    }
    fn p99(&self, op: Op, service: bool) -> String {
        ms(self.s.latency(op, service, 2))
    }
    fn verified(&self) -> String {
        self.s.verified.map_or("-", |ok| if ok { "yes" } else { "NO" }).into()
    }
}

/// The Insert Benchmark's and the key/value steps' table (a mixed run's too).
fn steps_table(steps: &[StepRow]) -> String {
    let engine = steps.iter().any(|s| s.engine.is_some());
    let events = steps.iter().any(|s| s.events.is_some());
    let mut header = vec![
        "step", "status", "secs", "ips", "dps", "qps", "ins p99", "ins svc", "qry p99", "SLA", "verified", "cpupq",
        "client", "server", "wkbpi",
    ];
    if events {
        header.extend(["eps", "evt p99", "stmt p99"]);
    }
    if engine {
        header.extend(["w_amp", "stall%", "c_csecs", "sst MB"]);
    }
    let rows = steps
        .iter()
        .map(|s| {
            let c = Cells::of(s);
            let mut row = vec![
                s.step.clone(),
                s.status.to_string(),
                format!("{:.1}", s.elapsed_s),
                c.rate(s.ips()),
                c.rate(s.dps()),
                c.rate(s.qps()),
                c.p99(Op::Insert, false),
                c.p99(Op::Insert, true),
                c.p99(Op::Query, false),
                s.sla_ok.map_or("-", |ok| if ok { "yes" } else { "NO" }).into(),
                c.verified(),
                c.cost(0),
                c.cost(1),
                c.cost(2),
                c.cost(5),
            ];
            if events {
                row.extend([
                    s.eps().map_or("-".to_string(), |v| c.rate(v)),
                    c.p99(Op::Event, false),
                    c.p99(Op::Statement, false),
                ]);
            }
            if engine {
                let f = |v: Option<f64>| v.map_or("-".to_string(), |v| format!("{v:.2}"));
                match &s.engine {
                    Some(e) => row.extend([
                        f(e.w_amp()),
                        f(e.stall_pct(s.elapsed_s)),
                        format!("{:.1}", e.compaction_cpu_s),
                        format!("{:.1}", e.live_sst_bytes as f64 / 1e6),
                    ]),
                    None => row.extend(["-".to_string(), "-".into(), "-".into(), "-".into()]),
                }
            }
            row
        })
        .collect();
    render(header, rows)
        + "\n(latencies in ms: response-time p99 of inserts and queries, and the inserts' service-time p99;\n \
           cpupq, client, server: host, ibench and server CPU µs per insert (load steps) or query (q steps);\n \
           wkbpi: KB written to disk per operation; key/value steps: per pair written or per read;\n \
           sysbench steps: qps counts statements, BEGIN and COMMIT included, eps events; costs per statement)"
}

/// A sysbench run's table: the suite's QPS beside events per second,
/// response-time p99 per event and per statement, rows per statement, and
/// the costs per statement (the load's per row).
fn sysbench_table(steps: &[StepRow]) -> String {
    let header = vec![
        "step",
        "status",
        "secs",
        "ips",
        "qps",
        "eps",
        "evt p99",
        "stmt p99",
        "rows/stmt",
        "verified",
        "cpupq",
        "client",
        "server",
        "wkbpi",
    ];
    let rows = steps
        .iter()
        .map(|s| {
            let c = Cells::of(s);
            let per_statement = s
                .statement_rows
                .filter(|_| s.queries > 0)
                .map_or("-".to_string(), |r| format!("{:.1}", r as f64 / s.queries as f64));
            vec![
                s.step.clone(),
                s.status.to_string(),
                format!("{:.1}", s.elapsed_s),
                if s.inserts > 0 { c.rate(s.ips()) } else { "-".into() },
                if s.queries > 0 { c.rate(s.qps()) } else { "-".into() },
                s.eps().map_or("-".to_string(), |v| c.rate(v)),
                c.p99(Op::Event, false),
                c.p99(Op::Statement, false),
                per_statement,
                c.verified(),
                c.cost(0),
                c.cost(1),
                c.cost(2),
                c.cost(5),
            ]
        })
        .collect();
    render(header, rows)
        + "\n(qps: statements per second, BEGIN and COMMIT included, as sysbench counts them; eps: events (transactions);\n \
           latencies in ms: response-time p99 per event and per statement; rows/stmt: rows returned or changed;\n \
           cpupq, client, server: host, ibench and server CPU µs per statement (the load: per row); wkbpi: KB written per operation)"
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_step_that_did_not_run_its_course_is_marked_in_every_rate() {
        let steps = [
            StepRow {
                step: "qr100".into(),
                status: crate::results::StepStatus::Ok,
                elapsed_s: 2.0,
                inserts: 200,
                queries: 1000,
                ..StepRow::default()
            },
            StepRow {
                step: "qp100".into(),
                status: crate::results::StepStatus::Timeout,
                elapsed_s: 2.0,
                inserts: 100,
                queries: 900,
                sla_ok: Some(false),
                ..StepRow::default()
            },
        ];
        let t = table(&steps, None);
        let lines: Vec<&str> = t.lines().collect();
        assert!(lines[1].contains(" 100 ") && !lines[1].contains('*'), "{t}");
        assert!(
            lines[2].contains("50*") && lines[2].contains("450*") && lines[2].contains("NO"),
            "{t}"
        );
        assert!(t.contains("did not run its course"), "{t}");
        assert!(step_line(&steps[1]).contains("(partial)"));
    }
}
