//! What follows `null:` in a DSN (`?latency=...&stall=...`), parsed without
//! I/O: the latency, CPU, stalls, failures and writes the sessions inject.

use crate::connect::dsn;
use crate::error::{Error, Result};
use std::str::FromStr;
use std::time::Duration;

/// Injected latency per operation.
#[derive(Clone, Copy, Debug, PartialEq)]
pub(super) enum Latency {
    None,
    Fixed(Duration),
    Exponential(Duration),
}

/// The operations that can be made to fail, by their kind's index
/// (insert 0, delete 1, query 2).
pub(super) const OPERATIONS: [&str; 3] = ["insert", "delete", "query"];

/// An operation made to fail: its kind and which one of the session's (from 1).
pub(super) type Injected = Option<(String, u64)>;

/// The options of a `null:` DSN.
#[derive(Clone, Debug, PartialEq)]
pub(super) struct NullOptions {
    /// Per operation kind: insert, delete, query.
    pub(super) latency: [Latency; 3],
    /// Thread CPU time every operation burns (`cpu=`).
    pub(super) cpu: Duration,
    /// (when, for how long) after the connector opened.
    pub(super) stalls: Vec<(Duration, Duration)>,
    pub(super) fail: Injected,
    pub(super) deadlock: Injected,
    /// Bytes every insert overwrites and fsyncs (`write=`), in `dir`.
    pub(super) write: usize,
    pub(super) dir: std::path::PathBuf,
    /// Picks the injected latencies' random streams.
    pub(super) seed: u64,
    /// `time=simulated`: latencies and stalls move simulated time on.
    pub(super) simulated: bool,
}

impl Default for NullOptions {
    fn default() -> Self {
        NullOptions {
            latency: [Latency::None; 3],
            cpu: Duration::ZERO,
            stalls: Vec::new(),
            fail: None,
            deadlock: None,
            write: 0,
            dir: std::env::temp_dir(),
            seed: 0,
            simulated: false,
        }
    }
}

fn duration(d: &str) -> Result<Duration> {
    dsn::duration("db", d)
}

/// `fixed:DURATION` or `exp:DURATION`, the value of option `key`.
fn latency(key: &str, value: &str) -> Result<Latency> {
    let (kind, d) = value.split_once(':').ok_or_else(|| {
        Error::config(
            "db",
            format!("null: {key} {value:?}: expected fixed:DURATION or exp:DURATION"),
        )
    })?;
    let d = duration(d)?;
    match kind {
        "fixed" => Ok(Latency::Fixed(d)),
        "exp" => Ok(Latency::Exponential(d)),
        _ => Err(Error::config(
            "db",
            format!("null: latency kind {kind:?}: expected fixed or exp"),
        )),
    }
}

/// `LENGTH@TIME[,LENGTH@TIME...]` as (time, length) pairs.
fn stalls(value: &str) -> Result<Vec<(Duration, Duration)>> {
    value
        .split(',')
        .map(|s| {
            let (len, at) = s
                .split_once('@')
                .ok_or_else(|| Error::config("db", format!("null: stall {s:?}: expected LENGTH@TIME")))?;
            Ok((duration(at)?, duration(len)?))
        })
        .collect()
}

/// `OPERATION@N` (the Nth insert, delete or query of every session), the value of option `key`.
fn injected(key: &str, value: &str) -> Result<Injected> {
    let bad = || {
        Error::config(
            "db",
            format!("null: {key} {value:?}: expected insert@N, delete@N or query@N"),
        )
    };
    let (op, n) = value.split_once('@').ok_or_else(bad)?;
    let n: u64 = n.parse().map_err(|_| bad())?;
    if !OPERATIONS.contains(&op) || n == 0 {
        return Err(bad());
    }
    Ok(Some((op.to_string(), n)))
}

/// `real` or `simulated` time (`time=`).
fn simulated(value: &str) -> Result<bool> {
    match value {
        "real" => Ok(false),
        "simulated" => Ok(true),
        _ => Err(Error::config(
            "db",
            format!("null: time {value:?}: expected real or simulated"),
        )),
    }
}

impl FromStr for NullOptions {
    type Err = Error;

    /// The part of the DSN after `null:` (`?latency=...&stall=...`).
    fn from_str(rest: &str) -> Result<NullOptions> {
        let query = rest.trim_start_matches("//").trim_start_matches('?');
        let mut o = NullOptions::default();
        // Per-operation latencies override `latency` wherever they stand.
        let mut per_op: Vec<(usize, Latency)> = Vec::new();
        for (key, value) in dsn::options(query) {
            let (key, value) = (key.as_str(), value.as_str());
            if value.is_empty() {
                return Err(Error::config(
                    "db",
                    format!("null: option {key:?} has no value (key=value)"),
                ));
            }
            match key {
                "latency" => o.latency = [latency(key, value)?; 3],
                "insert_latency" => per_op.push((0, latency(key, value)?)),
                "delete_latency" => per_op.push((1, latency(key, value)?)),
                "query_latency" => per_op.push((2, latency(key, value)?)),
                "stall" => o.stalls.extend(stalls(value)?),
                "cpu" => o.cpu = duration(value)?,
                "time" => o.simulated = simulated(value)?,
                "write" => o.write = dsn::size("db", value)? as usize,
                "dir" => o.dir = std::path::PathBuf::from(value),
                "seed" => {
                    o.seed = value
                        .parse()
                        .map_err(|_| Error::config("db", format!("null: seed {value:?}: expected a whole number")))?
                }
                "fail" => o.fail = injected(key, value)?,
                "deadlock" => o.deadlock = injected(key, value)?,
                _ => {
                    return Err(Error::config(
                        "db",
                        format!(
                            "null: unknown option {key:?}; expected latency, insert_latency, delete_latency, query_latency, cpu, stall, fail, deadlock, write, dir, seed or time"
                        ),
                    ))
                }
            }
        }
        for (op, l) in per_op {
            o.latency[op] = l;
        }
        if o.simulated && o.latency[2] == Latency::None {
            // A q step's queries run until its inserts end; queries that
            // take no simulated time would never see that time come.
            return Err(Error::config(
                "db",
                "null: time=simulated needs a query latency (latency= or query_latency=)",
            ));
        }
        Ok(o)
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn per_operation_latencies_override_latency_wherever_they_stand() {
        let o: NullOptions = "?query_latency=fixed:1ms&latency=exp:2ms&stall=2s@5s,1s@20s"
            .parse()
            .unwrap();
        let ms = Duration::from_millis;
        assert_eq!(
            o.latency,
            [
                Latency::Exponential(ms(2)),
                Latency::Exponential(ms(2)),
                Latency::Fixed(ms(1))
            ]
        );
        assert_eq!(o.stalls, [(ms(5000), ms(2000)), (ms(20_000), ms(1000))]);
        for (bad, says) in [
            ("?fail=select@1", "insert@N"),
            ("?deadlock=insert@0", "insert@N"),
            ("?latency=slow:1ms", "fixed or exp"),
            ("?stall=2s", "LENGTH@TIME"),
            ("?colour=blue", "unknown option"),
            ("?cpu=", "has no value"),
        ] {
            let e = bad.parse::<NullOptions>().unwrap_err().to_string();
            assert!(e.contains(says), "{bad}: {e}");
        }
    }
}
