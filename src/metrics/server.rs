//! The database's own counters and gauges: what a connector reads from the
//! server (status variables, `pg_stat_*` views, RocksDB statistics), the
//! differences a step made, and the gauges sampled on its interval grid.

/// One value a server reports: a number, or a text dump (an engine's status).
#[derive(Clone, Debug, PartialEq)]
pub enum Reading {
    /// A counter or gauge.
    Number(f64),
    /// A text dump, kept as it is (`SHOW ENGINE INNODB STATUS`).
    Text(String),
}

/// One counter as read: where it comes from (`global_status`,
/// `pg_stat_database`, ...), its name, and its value.
#[derive(Clone, Debug, PartialEq)]
pub struct Counter {
    /// The view or command it comes from.
    pub source: &'static str,
    /// Its name there (`Innodb_rows_inserted`; per table `pi1.n_dead_tup`).
    pub name: String,
    /// Its value.
    pub value: Reading,
}

impl Counter {
    /// A numeric counter.
    pub fn number(source: &'static str, name: impl Into<String>, value: f64) -> Counter {
        Counter {
            source,
            name: name.into(),
            value: Reading::Number(value),
        }
    }

    /// A text dump.
    pub fn text(source: &'static str, name: impl Into<String>, text: impl Into<String>) -> Counter {
        Counter {
            source,
            name: name.into(),
            value: Reading::Text(text.into()),
        }
    }
}

/// A value servers print as text (status variables, `simple_query` rows)
/// as a number, when it is one: integers and decimals; `ON`/`OFF`, dates
/// and versions are not.
pub fn number(text: &str) -> Option<f64> {
    let t = text.trim();
    let numeric = !t.is_empty() && t.bytes().all(|b| b.is_ascii_digit() || b"+-.eE".contains(&b));
    numeric
        .then(|| t.parse::<f64>().ok())
        .flatten()
        .filter(|v| v.is_finite())
}

/// One counter over one step: its values at the step's start and end (a
/// text dump has its end text only).
#[derive(Clone, Debug, PartialEq)]
pub struct CounterRow {
    /// The step.
    pub step: String,
    /// Where it comes from.
    pub source: &'static str,
    /// Its name.
    pub name: String,
    /// Its value at the step's start (None: absent then).
    pub start: Option<f64>,
    /// Its value at the step's end (None: absent then).
    pub end: Option<f64>,
    /// A text dump at the step's end.
    pub text: Option<String>,
}

impl CounterRow {
    /// `end − start`, when both were read.
    pub fn delta(&self) -> Option<f64> {
        Some(self.end? - self.start?)
    }
}

/// The rows of `step` from the readings at its start and its end, in the
/// order of the end reading (then counters only the start had).
pub fn counter_rows(step: &str, before: &[Counter], after: &[Counter]) -> Vec<CounterRow> {
    use std::collections::HashMap;
    let start: HashMap<(&str, &str), f64> = before
        .iter()
        .filter_map(|c| match c.value {
            Reading::Number(v) => Some(((c.source, c.name.as_str()), v)),
            Reading::Text(_) => None,
        })
        .collect();
    let mut seen = std::collections::HashSet::new();
    let row = |c: &Counter, start: Option<f64>, end: Option<f64>, text: Option<String>| CounterRow {
        step: step.to_string(),
        source: c.source,
        name: c.name.clone(),
        start,
        end,
        text,
    };
    let mut rows: Vec<CounterRow> = after
        .iter()
        .map(|c| match &c.value {
            Reading::Number(v) => {
                seen.insert((c.source, c.name.as_str()));
                row(c, start.get(&(c.source, c.name.as_str())).copied(), Some(*v), None)
            }
            Reading::Text(t) => row(c, None, None, Some(t.clone())),
        })
        .collect();
    rows.extend(before.iter().filter_map(|c| match c.value {
        Reading::Number(v) if !seen.contains(&(c.source, c.name.as_str())) => Some(row(c, Some(v), None, None)),
        _ => None,
    }));
    rows
}

/// A gauge as read: a level now (history list length, L0 files), or a
/// cumulative count whose rate per second over each interval is what
/// matters (WAL bytes: recorded as `<name>_per_s`).
#[derive(Clone, Debug, PartialEq)]
pub struct Gauge {
    /// The engine or DBMS it describes (`innodb`, `postgres`, `rocksdb`).
    pub source: &'static str,
    /// Its name.
    pub name: &'static str,
    /// Its value.
    pub value: f64,
    /// A cumulative count, recorded as a rate.
    pub cumulative: bool,
}

impl Gauge {
    /// A level.
    pub fn level(source: &'static str, name: &'static str, value: f64) -> Gauge {
        Gauge {
            source,
            name,
            value,
            cumulative: false,
        }
    }

    /// A cumulative count, recorded per second.
    pub fn rate(source: &'static str, name: &'static str, value: f64) -> Gauge {
        Gauge {
            source,
            name,
            value,
            cumulative: true,
        }
    }
}

/// One gauge in one interval of a step: its value at the interval's end
/// (a rate over the interval for cumulative ones).
#[derive(Clone, Debug, PartialEq)]
pub struct GaugeRow {
    /// Start of the interval, seconds after the step started.
    pub t_s: f64,
    /// The interval's length (the last one may be shorter).
    pub length_s: f64,
    /// The engine or DBMS it describes.
    pub source: &'static str,
    /// Its name (`_per_s` appended for rates).
    pub name: String,
    /// Its value; None for a rate without an earlier reading.
    pub value: Option<f64>,
}

/// Turns successive gauge readings into interval rows: levels as read,
/// cumulative counts as their rate since the previous reading.
#[derive(Default)]
pub struct GaugeSeries {
    previous: Vec<(&'static str, &'static str, f64, f64)>,
    rows: Vec<GaugeRow>,
}

impl GaugeSeries {
    /// The reading at the step's start: a base for the rates, no row.
    pub fn start(&mut self, at_s: f64, gauges: &[Gauge]) {
        self.remember(at_s, gauges);
    }

    fn remember(&mut self, at_s: f64, gauges: &[Gauge]) {
        self.previous = gauges
            .iter()
            .filter(|g| g.cumulative)
            .map(|g| (g.source, g.name, g.value, at_s))
            .collect();
    }

    /// The reading at the end of the interval `[t_s, t_s + length_s)`.
    pub fn interval(&mut self, t_s: f64, length_s: f64, gauges: &[Gauge]) {
        let at_s = t_s + length_s;
        for g in gauges {
            let (name, value) = if g.cumulative {
                let before = self
                    .previous
                    .iter()
                    .find(|p| p.0 == g.source && p.1 == g.name)
                    .filter(|p| at_s > p.3);
                (
                    format!("{}_per_s", g.name),
                    before.map(|p| (g.value - p.2).max(0.0) / (at_s - p.3)),
                )
            } else {
                (g.name.to_string(), Some(g.value))
            };
            self.rows.push(GaugeRow {
                t_s,
                length_s,
                source: g.source,
                name,
                value,
            });
        }
        self.remember(at_s, gauges);
    }

    /// The rows so far.
    pub fn finish(self) -> Vec<GaugeRow> {
        self.rows
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn numbers_are_parsed_and_words_are_not() {
        assert_eq!(number(" 42 "), Some(42.0));
        assert_eq!(number("-1.5"), Some(-1.5));
        assert_eq!(number("1e3"), Some(1000.0));
        for word in ["ON", "OFF", "", "10.11.6-MariaDB", "2026-12-01 10:00:00", "NaN", "inf"] {
            assert_eq!(number(word), None, "{word}");
        }
    }

    #[test]
    fn a_step_s_rows_pair_start_and_end_and_keep_text_at_the_end() {
        let before = [
            Counter::number("global_status", "Innodb_rows_inserted", 10.0),
            Counter::number("global_status", "Gone", 3.0),
            Counter::text("innodb_status", "status", "old"),
        ];
        let after = [
            Counter::number("global_status", "Innodb_rows_inserted", 1010.0),
            Counter::number("pg_stat_user_tables", "pi1.n_dead_tup", 5.0),
            Counter::text("innodb_status", "status", "new"),
        ];
        let rows = counter_rows("l.i0", &before, &after);
        assert_eq!(rows.len(), 4);
        assert_eq!(rows[0].delta(), Some(1000.0));
        assert_eq!((rows[1].start, rows[1].delta()), (None, None));
        assert_eq!(rows[2].text.as_deref(), Some("new"));
        assert_eq!(
            (rows[3].name.as_str(), rows[3].start, rows[3].end),
            ("Gone", Some(3.0), None)
        );
    }

    #[test]
    fn cumulative_gauges_become_rates_over_each_interval() {
        let mut s = GaugeSeries::default();
        let read = |wal: f64, dead: f64| {
            [
                Gauge::rate("postgres", "wal_bytes", wal),
                Gauge::level("postgres", "dead_tuples", dead),
            ]
        };
        s.start(0.0, &read(1000.0, 0.0));
        s.interval(0.0, 1.0, &read(3000.0, 7.0));
        s.interval(1.0, 0.5, &read(4000.0, 2.0));
        let rows = s.finish();
        let values: Vec<(&str, f64, Option<f64>)> = rows.iter().map(|r| (r.name.as_str(), r.t_s, r.value)).collect();
        assert_eq!(
            values,
            [
                ("wal_bytes_per_s", 0.0, Some(2000.0)),
                ("dead_tuples", 0.0, Some(7.0)),
                ("wal_bytes_per_s", 1.0, Some(2000.0)),
                ("dead_tuples", 1.0, Some(2.0)),
            ]
        );
    }
}
