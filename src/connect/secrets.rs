//! Passwords never reach a file, a log line or an error: every DSN, error
//! message and recorded server setting passes through here.
//!
//! Forms recognised: URL userinfo (`scheme://user:pass@host`), URL query
//! parameters (`?password=...`, percent-encoded), libpq key=value words
//! (`password=pass`, `password = 'a b\'c'`, `password=a\ b`), also when embedded in a longer
//! text such as PostgreSQL's `primary_conninfo`, and settings whose name says
//! they hold a secret.

/// Replaces every password in `text` by `***`.
///
/// ```
/// use ibench::connect::redact;
/// assert_eq!(redact("postgres://bob:s3cret@db/x?sslmode=require"), "postgres://bob:***@db/x?sslmode=require");
/// assert_eq!(redact("postgres://bob@db/x?password=s3cret&x=1"), "postgres://bob@db/x?password=***&x=1");
/// assert_eq!(redact("host=h password='a b' dbname=d"), "host=h password=*** dbname=d");
/// ```
pub fn redact(text: &str) -> String {
    let mut out = redact_userinfo(text);
    for key in PASSWORD_KEYS {
        out = redact_key_values(&out, key);
    }
    out
}

/// Names of parameters that hold a password (libpq, MySQL, URL queries).
const PASSWORD_KEYS: [&str; 3] = ["password", "passwd", "pwd"];

/// A recorded setting's value with any secret in it hidden: values of
/// settings whose name says they are secret, and passwords inside values
/// (a conninfo, a URL).
pub fn redact_setting(name: &str, value: &str) -> String {
    let lower = name.to_ascii_lowercase();
    // Policy settings (password_encryption, strict_password_validation) are
    // not secrets; credentials are named for what they hold.
    let secret = ["password", "passwd", "_secret", "_auth", "_token", "_key"]
        .iter()
        .any(|w| lower.ends_with(w))
        || lower.contains("secret");
    if secret && !value.is_empty() && !matches!(value, "ON" | "OFF" | "0" | "1" | "YES" | "NO") {
        return "***".into();
    }
    redact(value)
}

/// Every password `dsn` holds, as written and percent-decoded, so that an
/// error message quoting any form of it can be cleaned.
pub fn secrets(dsn: &str) -> Vec<String> {
    let mut found = Vec::new();
    if let Some(p) = userinfo_password(dsn) {
        found.push(p.to_string());
    }
    for key in PASSWORD_KEYS {
        let mut rest = dsn;
        while let Some((start, end, value)) = find_key_value(rest, key) {
            found.push(value);
            found.push(rest[start..end].to_string());
            rest = &rest[end..];
        }
    }
    let decoded: Vec<String> = found
        .iter()
        .map(|s| percent_encoding::percent_decode_str(s).decode_utf8_lossy().into_owned())
        .collect();
    found.extend(decoded);
    found.retain(|s| !s.is_empty() && s != "***");
    found.sort();
    found.dedup();
    // Longest first, so a password that contains another is replaced whole.
    found.sort_by_key(|s| std::cmp::Reverse(s.len()));
    found
}

/// `message` with every secret of `dsn` (and anything [`redact`] finds) hidden.
pub fn clean(dsn: &str, message: &str) -> String {
    let mut out = message.to_string();
    for s in secrets(dsn) {
        out = out.replace(&s, "***");
    }
    redact(&out)
}

/// The password of `scheme://user:pass@host`, as written.
fn userinfo_password(text: &str) -> Option<&str> {
    let (_, rest) = text.split_once("://")?;
    // The authority ends at the first '/', '?' or whitespace after the last '@' that precedes them.
    let end = rest.find(|c: char| c.is_whitespace()).unwrap_or(rest.len());
    let authority = &rest[..end];
    let (userinfo, _) = authority.rsplit_once('@')?;
    let (_, pass) = userinfo.split_once(':')?;
    (!pass.is_empty()).then_some(pass)
}

/// Every `scheme://user:pass@` in `text` with the password replaced.
fn redact_userinfo(text: &str) -> String {
    let mut out = String::with_capacity(text.len());
    let mut rest = text;
    while let Some(at) = rest.find("://") {
        let (before, after) = rest.split_at(at + 3);
        out.push_str(before);
        let end = after.find(|c: char| c.is_whitespace()).unwrap_or(after.len());
        let (word, tail) = after.split_at(end);
        match word.rsplit_once('@') {
            Some((userinfo, host)) if userinfo.contains(':') && !userinfo.contains('/') => {
                let user = userinfo.split_once(':').map_or(userinfo, |(u, _)| u);
                out.push_str(&format!("{user}:***@{host}"));
            }
            _ => out.push_str(word),
        }
        rest = tail;
    }
    out.push_str(rest);
    out
}

/// The first `key=value` in `text` (key case-insensitive, at a word start,
/// spaces allowed around `=`, value quoted libpq-style or bare): the value's
/// byte range and its unquoted text.
fn find_key_value(text: &str, key: &str) -> Option<(usize, usize, String)> {
    let lower = text.to_ascii_lowercase();
    let mut from = 0;
    while let Some(pos) = lower[from..].find(key) {
        let k = from + pos;
        from = k + key.len();
        let boundary = k == 0
            || matches!(
                text.as_bytes()[k - 1],
                b' ' | b'\t' | b'\n' | b'?' | b'&' | b';' | b',' | b'\'' | b'"'
            );
        if !boundary {
            continue;
        }
        let mut i = k + key.len();
        let bytes = text.as_bytes();
        while i < bytes.len() && bytes[i] == b' ' {
            i += 1;
        }
        if i >= bytes.len() || bytes[i] != b'=' {
            continue;
        }
        i += 1;
        while i < bytes.len() && bytes[i] == b' ' {
            i += 1;
        }
        let start = i;
        let mut value = String::new();
        if i < bytes.len() && bytes[i] == b'\'' {
            i += 1;
            let mut chars = text[i..].char_indices();
            let mut end = text.len();
            while let Some((j, c)) = chars.next() {
                match c {
                    '\\' => {
                        if let Some((_, n)) = chars.next() {
                            value.push(n);
                        }
                    }
                    '\'' => {
                        end = i + j + 1;
                        break;
                    }
                    c => value.push(c),
                }
            }
            return Some((start, end, value));
        }
        // A bare value ends at white space, or in a URL query at '&' or '#'.
        // A backslash takes the next character as it is (libpq's `a\ b`
        // is "a b"), so an escaped space does not end it.
        let in_query = text[..k].contains("://") || text[..k].ends_with('?') || text[..k].ends_with('&');
        let mut end = text.len();
        let mut chars = text[i..].char_indices();
        while let Some((j, c)) = chars.next() {
            match c {
                '\\' => value.extend(chars.next().map(|(_, n)| n)),
                c if c.is_whitespace() || c == ';' || (in_query && (c == '&' || c == '#')) => {
                    end = i + j;
                    break;
                }
                c => value.push(c),
            }
        }
        return Some((start, end, value));
    }
    None
}

/// Every `key=value` of `text` with the value replaced by `***`.
fn redact_key_values(text: &str, key: &str) -> String {
    let mut out = String::with_capacity(text.len());
    let mut rest = text;
    while let Some((start, end, _)) = find_key_value(rest, key) {
        out.push_str(&rest[..start]);
        out.push_str("***");
        rest = &rest[end..];
    }
    out.push_str(rest);
    out
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn every_form_of_password_is_redacted() {
        for (dsn, want) in [
            ("postgres://bob:s3cret@db:5432/x", "postgres://bob:***@db:5432/x"),
            ("mysql://u:p@ss@h/d", "mysql://u:***@h/d"),
            (
                "postgres://bob@db/x?password=s3cret",
                "postgres://bob@db/x?password=***",
            ),
            (
                "postgres://bob@db/x?sslmode=require&password=s%40cret&x=1",
                "postgres://bob@db/x?sslmode=require&password=***&x=1",
            ),
            (
                "host=h user=u password=p dbname=d",
                "host=h user=u password=*** dbname=d",
            ),
            ("host=h password='a b\\'c' dbname=d", "host=h password=*** dbname=d"),
            ("host=h password = 'a b' dbname=d", "host=h password = *** dbname=d"),
            ("host=h password=a\\ b dbname=d", "host=h password=*** dbname=d"),
            ("host=h password=a\\\\b\\ c\\", "host=h password=***"),
            (
                "user=replicator password=rep-pw host=primary port=5432",
                "user=replicator password=*** host=primary port=5432",
            ),
            ("sqlite:/tmp/x.db", "sqlite:/tmp/x.db"),
            ("null:?latency=fixed:1ms", "null:?latency=fixed:1ms"),
        ] {
            assert_eq!(redact(dsn), want, "{dsn}");
        }
    }

    #[test]
    fn secrets_give_every_spelling_of_the_password() {
        let s = secrets("postgres://bob:p%40ss@db/x?password=q%20r");
        for want in ["p%40ss", "p@ss", "q%20r", "q r"] {
            assert!(s.contains(&want.to_string()), "{want} in {s:?}");
        }
        assert_eq!(
            secrets("host=h password='a b'"),
            vec!["'a b'".to_string(), "a b".to_string()]
        );
        assert!(secrets("sqlite:/x").is_empty());
        assert!(secrets(r"host=h password=a\\b\ c").contains(&r"a\b c".to_string()));
        let e = clean("host=h password='a b'", "FATAL: password 'a b' rejected");
        assert!(!e.contains("a b"), "{e}");
    }

    #[test]
    fn secret_settings_are_hidden_whatever_their_form() {
        assert_eq!(
            redact_setting("primary_conninfo", "host=p user=r password=x"),
            "host=p user=r password=***"
        );
        assert_eq!(redact_setting("wsrep_sst_auth", "root:pw"), "***");
        assert_eq!(redact_setting("shared_buffers", "16384 8kB"), "16384 8kB");
        assert_eq!(redact_setting("password_encryption", "scram-sha-256"), "scram-sha-256");
        assert_eq!(redact_setting("repl_password", "pw"), "***");
        assert_eq!(redact_setting("strict_password_validation", "ON"), "ON");
    }
}
