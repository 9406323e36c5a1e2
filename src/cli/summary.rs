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

/// The end-of-run table: throughput and p99 latencies per step. The rates
/// of a step that did not end `ok` carry a `*`.
pub fn table(steps: &[StepRow], run: Option<&RunRow>) -> String {
    use comfy_table::{presets::NOTHING, CellAlignment, Table};
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
    let mut t = Table::new();
    t.load_preset(NOTHING).set_header(header);
    for s in steps {
        let p99 = |op: Op, service: bool| s.latency(op, service, 2);
        let costs = s.costs();
        let cost = |i: usize| costs[i].map_or("-".to_string(), |v| format!("{v:.1}"));
        let mark = if s.ok() { "" } else { "*" };
        let rate = |v: f64| format!("{v:.0}{mark}");
        let mut row = vec![
            s.step.clone(),
            s.status.to_string(),
            format!("{:.1}", s.elapsed_s),
            rate(s.ips()),
            rate(s.dps()),
            rate(s.qps()),
            ms(p99(Op::Insert, false)),
            ms(p99(Op::Insert, true)),
            ms(p99(Op::Query, false)),
            s.sla_ok.map_or("-", |ok| if ok { "yes" } else { "NO" }).into(),
            s.verified.map_or("-", |ok| if ok { "yes" } else { "NO" }).into(),
            cost(0),
            cost(1),
            cost(2),
            cost(5),
        ];
        if events {
            row.extend([
                s.eps().map_or("-".to_string(), &rate),
                ms(p99(Op::Event, false)),
                ms(p99(Op::Statement, false)),
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
        t.add_row(row);
    }
    for c in t.column_iter_mut() {
        c.set_cell_alignment(CellAlignment::Right);
    }
    let mut out = t.to_string();
    out += "\n(latencies in ms: response-time p99 of inserts and queries, and the inserts' service-time p99;\n \
            cpupq, client, server: host, ibench and server CPU µs per insert (load steps) or query (q steps);\n \
            wkbpi: KB written to disk per operation; key/value steps: per pair written or per read;\n \
            sysbench steps: qps counts statements, BEGIN and COMMIT included, eps events; costs per statement)";
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
