//! The one parser of DSN option strings (`?name=value&...`, percent-decoded
//! by `url`) and of the values they hold: sizes (`bytesize`) and durations
//! (`humantime`). Errors name the option and the value.

use crate::error::{Error, Result};
use std::time::Duration;

/// Text that holds a password, or may: `Debug` and `Display` show it as
/// `R` hides it, so no options struct that holds one can print it; its
/// text only through [`Secret::expose`].
pub(crate) struct Secret<R>(String, std::marker::PhantomData<R>);

/// How a [`Secret`] is shown.
pub(crate) trait Hide {
    /// `text` as Debug and Display show it.
    fn shown(text: &str) -> std::borrow::Cow<'_, str>;
}

/// A password (given apart from a DSN: a password file, an option file,
/// the environment): shown as `***`.
pub(crate) type Password = Secret<Whole>;

/// A DSN's text as a driver takes it, which may hold a password (in its
/// user info, a `password=` option or word): shown with every password as
/// `***` ([`crate::connect::redact`]).
pub(crate) type DsnText = Secret<InDsn>;

/// Hides the whole text.
pub(crate) enum Whole {}

/// Hides the passwords in a DSN.
pub(crate) enum InDsn {}

impl Hide for Whole {
    fn shown(_: &str) -> std::borrow::Cow<'_, str> {
        "***".into()
    }
}

impl Hide for InDsn {
    fn shown(text: &str) -> std::borrow::Cow<'_, str> {
        crate::connect::redact(text).into()
    }
}

impl<R> Secret<R> {
    pub(crate) fn new(text: impl Into<String>) -> Self {
        Secret(text.into(), std::marker::PhantomData)
    }

    /// The text itself, for the login or the driver that takes it.
    pub(crate) fn expose(&self) -> &str {
        &self.0
    }
}

impl<R> Clone for Secret<R> {
    fn clone(&self) -> Self {
        Secret::new(self.0.clone())
    }
}

impl<R> PartialEq for Secret<R> {
    fn eq(&self, other: &Self) -> bool {
        self.0 == other.0
    }
}

impl<R: Hide> std::fmt::Debug for Secret<R> {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.write_str(&R::shown(&self.0))
    }
}

impl<R: Hide> std::fmt::Display for Secret<R> {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.write_str(&R::shown(&self.0))
    }
}

/// A DSN split at its `?`: the part before (percent-decoded when `decode`)
/// and its options as (name, value) pairs, percent-decoded (`%40` is `@`,
/// `+` and `%20` a space), in order.
pub(crate) fn split(dsn: &str) -> (&str, Vec<(String, String)>) {
    match dsn.split_once('?') {
        Some((base, query)) => (base, options(query)),
        None => (dsn, Vec::new()),
    }
}

/// The options of a query string, percent-decoded.
pub(crate) fn options(query: &str) -> Vec<(String, String)> {
    url::form_urlencoded::parse(query.as_bytes())
        .map(|(k, v)| (k.into_owned(), v.into_owned()))
        .collect()
}

/// `dsn` with the options of `extra` (`name=value&...`) added to its query,
/// each replacing the DSN's option of the same name.
pub fn with_options(dsn: &str, extra: &str) -> String {
    let segments = |q: &'_ str| {
        q.split('&')
            .filter(|s| !s.is_empty())
            .map(str::to_owned)
            .collect::<Vec<_>>()
    };
    let name = |segment: &str| segment.split_once('=').map_or(segment, |(k, _)| k).to_owned();
    let extra = segments(extra);
    if extra.is_empty() {
        return dsn.to_owned();
    }
    let (base, query) = dsn.split_once('?').unwrap_or((dsn, ""));
    let replaced: Vec<String> = extra.iter().map(|s| name(s)).collect();
    let mut all: Vec<String> = segments(query)
        .into_iter()
        .filter(|s| !replaced.contains(&name(s)))
        .collect();
    all.extend(extra);
    format!("{base}?{}", all.join("&"))
}

/// `text` as a DSN option's value: the characters an option's query would
/// read otherwise (`&`, `+`, `%`, `#`, `=`, spaces) percent-encoded.
pub(crate) fn encode(text: &str) -> String {
    const VALUE: &percent_encoding::AsciiSet = &percent_encoding::CONTROLS
        .add(b'&')
        .add(b'+')
        .add(b'%')
        .add(b'#')
        .add(b'=')
        .add(b' ');
    percent_encoding::utf8_percent_encode(text, VALUE).to_string()
}

/// `text` percent-decoded (a path in a DSN: `%20` is a space).
pub(crate) fn decode(text: &str) -> String {
    percent_encoding::percent_decode_str(text)
        .decode_utf8_lossy()
        .into_owned()
}

/// A size in bytes: a number with an optional unit, every unit a power of
/// 1024 as RocksDB's and MySQL's options read them (`K`, `KB` and `KiB` are
/// 1024): `64MiB`, `8M`, `64MB`, `1048576`.
pub(crate) fn size(name: &str, text: &str) -> Result<u64> {
    let bad = || {
        Error::config(
            name,
            format!("{text:?} is not a size; expected bytes with an optional unit, like 4096, 64K, 64MiB or 1GB"),
        )
    };
    let trimmed = text.trim();
    let unit_at = trimmed.find(|c: char| c.is_ascii_alphabetic()).unwrap_or(trimmed.len());
    let (number, unit) = trimmed.split_at(unit_at);
    // Binary whatever the spelling, as in RocksDB's and MySQL's options.
    let letter = unit.trim_end_matches(['b', 'B']).trim_end_matches(['i', 'I']);
    let unit = match letter {
        "" if unit.is_empty() || unit.eq_ignore_ascii_case("b") => String::new(),
        l if l.len() == 1 && "kKmMgGtT".contains(l) => format!("{l}iB"),
        _ => return Err(bad()),
    };
    let parsed: bytesize::ByteSize = format!("{number}{unit}").parse().map_err(|_| bad())?;
    if number.is_empty() {
        return Err(bad());
    }
    Ok(parsed.as_u64())
}

/// A duration: `250us`, `1ms`, `1.5s`, `2min`.
pub(crate) fn duration(name: &str, text: &str) -> Result<Duration> {
    humantime::parse_duration(text.trim())
        .map_err(|e| Error::config(name, format!("{text:?} is not a duration like 250us, 1ms or 2s ({e})")))
}

/// On or off: `on`, `true`, `1`, `yes` / `off`, `false`, `0`, `no`.
pub(crate) fn switch(name: &str, text: &str) -> Result<bool> {
    match text {
        "on" | "true" | "1" | "yes" => Ok(true),
        "off" | "false" | "0" | "no" => Ok(false),
        _ => Err(Error::config(
            name,
            format!("{text:?} is not valid; expected on or off"),
        )),
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn passwords_and_dsn_texts_print_no_password() {
        let p = Password::new("s3cret");
        assert_eq!(
            (format!("{p}"), format!("{p:?}")),
            ("***".to_string(), "***".to_string())
        );
        assert_eq!(p.expose(), "s3cret");
        let d = DsnText::new("mysql://bob:s3cret@h/db?password=s3cret");
        for shown in [format!("{d}"), format!("{d:?}")] {
            assert!(!shown.contains("s3cret") && shown.contains("bob:***@h"), "{shown}");
        }
    }

    #[test]
    fn extra_options_replace_those_of_the_same_name_and_add_the_others() {
        assert_eq!(with_options("rocksdb:/d", "wal=off"), "rocksdb:/d?wal=off");
        assert_eq!(
            with_options(
                "rocksdb:/d?wal=on&sync=off&compression=lz4",
                "wal=off&memtable_factory=vector"
            ),
            "rocksdb:/d?sync=off&compression=lz4&wal=off&memtable_factory=vector"
        );
        assert_eq!(with_options("rocksdb:/d?wal=on", ""), "rocksdb:/d?wal=on");
    }

    #[test]
    fn options_are_percent_decoded_in_order() {
        let (base, o) = split("mysql://u@h/db?socket=%2Frun%2Fmy+sock&engine_options=ROW_FORMAT%3DCOMPRESSED&x=a%26b");
        assert_eq!(base, "mysql://u@h/db");
        assert_eq!(
            o,
            [
                ("socket".to_string(), "/run/my sock".to_string()),
                ("engine_options".into(), "ROW_FORMAT=COMPRESSED".into()),
                ("x".into(), "a&b".into()),
            ]
        );
        assert_eq!(split("sqlite:/tmp/x").1, []);
        assert_eq!(decode("/tmp/my%20dir"), "/tmp/my dir");
    }

    #[test]
    fn sizes_take_binary_and_decimal_units() {
        for (text, bytes) in [
            ("4096", 4096),
            ("64K", 64 << 10),
            ("8M", 8 << 20),
            ("1G", 1 << 30),
            ("64MiB", 64 << 20),
            ("4KB", 4096),
            ("1MB", 1 << 20),
            ("2kib", 2048),
            ("512B", 512),
        ] {
            assert_eq!(size("x", text).unwrap(), bytes, "{text}");
        }
        for bad in ["", "M", "12Q", "-1", "one"] {
            assert!(
                size("write_buffer_size", bad)
                    .unwrap_err()
                    .to_string()
                    .starts_with("invalid write_buffer_size"),
                "{bad}"
            );
        }
    }

    #[test]
    fn durations_take_the_usual_units() {
        assert_eq!(duration("x", "250us").unwrap(), Duration::from_micros(250));
        assert_eq!(duration("x", "1.5s").unwrap(), Duration::from_millis(1500));
        assert_eq!(duration("x", "2ms").unwrap(), Duration::from_millis(2));
        assert!(duration("latency", "fast")
            .unwrap_err()
            .to_string()
            .starts_with("invalid latency"));
    }
}
