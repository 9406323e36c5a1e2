//! Hardware cost per operation, as the Insert Benchmark's reports define it
//! (cpupq, cspq, rkbpq, wkbpi, rpq, wpi), from the host and process counters
//! of a step.

use super::SystemDelta;

/// The per-operation cost columns, in the order [`per_operation`] returns them.
pub const COST_COLUMNS: [&str; 10] = [
    "cpupq",
    "client_cpu_us_per_op",
    "server_cpu_us_per_op",
    "cspq",
    "rkbpq",
    "wkbpi",
    "rpq",
    "wpi",
    "read_mb_s",
    "write_mb_s",
];

/// Host CPU µs, client and server CPU µs, context switches, KB read, KB
/// written, reads and writes per operation (all divided by `ops`), then MB/s
/// read and written over `elapsed_s`. None where a counter is missing or
/// there are no operations.
pub fn per_operation(d: &SystemDelta, ops: Option<u64>, elapsed_s: f64) -> [Option<f64>; 10] {
    let per = |v: Option<f64>| Some(v? / ops.filter(|&n| n > 0)? as f64);
    let disk = d.disk;
    let mbs = |b: Option<u64>| b.filter(|_| elapsed_s > 0.0).map(|b| b as f64 / 1e6 / elapsed_s);
    [
        per(d.host_busy_s.map(|s| s * 1e6)),
        per(d.client_cpu_s.map(|s| s * 1e6)),
        per(d.server_cpu_s.map(|s| s * 1e6)),
        per(d.ctxt.map(|c| c as f64)),
        per(disk.map(|x| x.read_bytes as f64 / 1024.0)),
        per(disk.map(|x| x.written_bytes as f64 / 1024.0)),
        per(disk.map(|x| x.reads as f64)),
        per(disk.map(|x| x.writes as f64)),
        mbs(disk.map(|x| x.read_bytes)),
        mbs(disk.map(|x| x.written_bytes)),
    ]
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::metrics::DiskCounters;

    #[test]
    fn costs_divide_by_the_operations_and_rates_by_the_time() {
        let d = SystemDelta {
            seconds: 2.0,
            host_busy_s: Some(1.0),
            client_cpu_s: Some(0.5),
            disk: Some(DiskCounters {
                reads: 10,
                writes: 20,
                read_bytes: 1024 * 100,
                written_bytes: 2_000_000,
            }),
            ..SystemDelta::default()
        };
        let c = per_operation(&d, Some(1000), 2.0);
        assert_eq!(c[0], Some(1000.0));
        assert_eq!(c[1], Some(500.0));
        assert_eq!(c[2], None);
        assert_eq!(c[4], Some(0.1));
        assert_eq!(c[7], Some(0.02));
        assert_eq!(c[9], Some(1.0));
        assert_eq!(per_operation(&d, Some(0), 2.0)[0], None);
    }
}
