//! MySQL/MariaDB option files, read as the clients read them (MySQL's
//! `my_default.cc`, which `my_print_defaults` shows): the files the client
//! reads by default or the one `defaults-file` names, `!include` and
//! `!includedir`, `#` comments outside quotes, quotes around a value,
//! backslash escapes, `loose-` prefixes, and world-writable files ignored.

use crate::connect::ini::{self, Dialect, Line};
use crate::error::{Error, Result};
use std::path::{Path, PathBuf};

/// MySQL's option files end a value at a `#` outside quotes.
const DIALECT: Dialect = Dialect {
    trailing_comments: true,
};

/// The groups ibench reads: the client's, MariaDB's client groups, and
/// `[ibench]` for settings only ibench takes (a MariaDB client refuses
/// `ssl-mode` in `[client]`).
const GROUPS: [&str; 5] = ["client", "client-server", "client-mariadb", "mariadb-client", "ibench"];

/// How deep `!include` may nest, as the client's limit.
const MAX_DEPTH: usize = 10;

/// One option of a group ibench reads: its name (lower case, `_` as `-`,
/// `loose-` removed) and its value (None for a bare name such as `ssl`).
pub(crate) type FileOption = (String, Option<String>);

/// The settings of the files the client would read, in order (a later one
/// wins): `defaults_file` alone when given, else `/etc/my.cnf`,
/// `/etc/mysql/my.cnf`, `extra` (`defaults-extra-file`) and `~/.my.cnf`.
pub(crate) fn read(defaults_file: Option<&Path>, extra: Option<&Path>) -> Result<Vec<FileOption>> {
    let mut out = Vec::new();
    if let Some(file) = defaults_file {
        read_file(file, true, 0, &mut out)?;
        return Ok(out);
    }
    for global in ["/etc/my.cnf", "/etc/mysql/my.cnf"] {
        read_file(Path::new(global), false, 0, &mut out)?;
    }
    if let Some(file) = extra {
        read_file(file, true, 0, &mut out)?;
    }
    if let Some(home) = std::env::var_os("HOME") {
        read_file(&PathBuf::from(home).join(".my.cnf"), false, 0, &mut out)?;
    }
    Ok(out)
}

/// Reads `path`'s settings into `out`; a missing file is an error only when
/// the user named it (`required`).
fn read_file(path: &Path, required: bool, depth: usize, out: &mut Vec<FileOption>) -> Result<()> {
    let bad = |why: String| Error::config("db", format!("option file {}: {why}", path.display()));
    let meta = match std::fs::metadata(path) {
        Ok(m) => m,
        Err(e) if !required && e.kind() == std::io::ErrorKind::NotFound => return Ok(()),
        Err(e) => return Err(bad(e.to_string())),
    };
    // Anyone could have put a user, a socket or an ssl-mode there.
    if meta.is_file() && world_writable(&meta) {
        eprintln!("warning: World-writable config file '{}' is ignored", path.display());
        return Ok(());
    }
    let bytes = std::fs::read(path).map_err(|e| bad(e.to_string()))?;
    let text = String::from_utf8_lossy(&bytes);
    let mut group: Option<String> = None;
    for (n, line) in ini::lines(&text, DIALECT) {
        match line {
            Line::Directive(directive) if depth < MAX_DEPTH => include(path, directive, depth, out)?,
            Line::Directive(_) => {}
            Line::Group(name) => group = Some(name.to_ascii_lowercase()),
            Line::Unclosed => return Err(bad(format!("line {n}: a group name without ']'"))),
            Line::Entry(name, value) => {
                let Some(group) = &group else {
                    return Err(bad(format!("line {n}: an option before any [group]")));
                };
                if GROUPS.contains(&group.as_str()) {
                    out.push(file_option(name, value));
                }
            }
        }
    }
    Ok(())
}

#[cfg(unix)]
fn world_writable(meta: &std::fs::Metadata) -> bool {
    use std::os::unix::fs::PermissionsExt;
    meta.permissions().mode() & 0o002 != 0
}

#[cfg(not(unix))]
fn world_writable(_meta: &std::fs::Metadata) -> bool {
    false
}

/// `!include FILE` (skipped when missing) or `!includedir DIR` (every
/// `*.cnf` in it, by name; a missing directory is an error), paths as
/// given: the client takes a relative one from the working directory.
fn include(from: &Path, directive: &str, depth: usize, out: &mut Vec<FileOption>) -> Result<()> {
    let (word, arg) = directive.split_once(char::is_whitespace).unwrap_or((directive, ""));
    let arg = Path::new(arg.trim());
    match word {
        "include" => read_file(arg, false, depth + 1, out),
        "includedir" => {
            let entries = std::fs::read_dir(arg).map_err(|e| {
                Error::config(
                    "db",
                    format!("option file {}: !includedir {}: {e}", from.display(), arg.display()),
                )
            })?;
            let mut files: Vec<PathBuf> = entries
                .filter_map(|e| e.ok().map(|e| e.path()))
                .filter(|p| p.extension().is_some_and(|x| x == "cnf"))
                .collect();
            files.sort();
            for f in files {
                read_file(&f, false, depth + 1, out)?;
            }
            Ok(())
        }
        // The client skips directives it does not know.
        _ => Ok(()),
    }
}

/// One option: its name as the client matches it (lower case, `_` as `-`,
/// `loose-` removed) and its value with one pair of matching quotes
/// stripped and escapes (`\n \t \r \b \s \" \' \\`) decoded.
fn file_option(name: &str, value: Option<&str>) -> FileOption {
    let name = name.to_ascii_lowercase().replace('_', "-");
    let name = name.strip_prefix("loose-").map(str::to_string).unwrap_or(name);
    (name, value.map(|v| unescape(unquote(v))))
}

/// `value` without one pair of matching quotes around it.
fn unquote(value: &str) -> &str {
    let b = value.as_bytes();
    if b.len() >= 2 && (b[0] == b'"' || b[0] == b'\'') && b[b.len() - 1] == b[0] {
        &value[1..value.len() - 1]
    } else {
        value
    }
}

/// The client's escapes decoded; an unknown one is kept as written.
fn unescape(value: &str) -> String {
    let mut out = String::with_capacity(value.len());
    let mut chars = value.chars().peekable();
    while let Some(c) = chars.next() {
        if c != '\\' {
            out.push(c);
            continue;
        }
        match chars.next() {
            Some('n') => out.push('\n'),
            Some('t') => out.push('\t'),
            Some('r') => out.push('\r'),
            Some('b') => out.push('\u{8}'),
            Some('s') => out.push(' '),
            Some(q @ ('"' | '\'' | '\\')) => out.push(q),
            Some(other) => {
                out.push('\\');
                out.push(other);
            }
            None => out.push('\\'),
        }
    }
    out
}

#[cfg(test)]
mod tests {
    use super::*;

    fn parsed(text: &str) -> Vec<FileOption> {
        let dir = tempfile::tempdir().unwrap();
        let f = dir.path().join("my.cnf");
        std::fs::write(&f, text).unwrap();
        read(Some(&f), None).unwrap()
    }

    fn pair(name: &str, value: &str) -> FileOption {
        (name.to_string(), Some(value.to_string()))
    }

    /// Each line's value as `my_print_defaults --defaults-file=F client` prints it.
    #[test]
    fn values_are_read_as_the_client_reads_them() {
        let cases = [
            ("password = \"pa ss\" # note", "pa ss"),
            ("password = abc#def", "abc"),
            ("password = abc #def", "abc"),
            ("password = a\\\\b", "a\\b"),
            ("password = \"a\\\"b\"", "a\"b"),
            ("password = x\\sy", "x y"),
            ("password = \"a#b\"", "a#b"),
            ("password = 'it''s'", "it''s"),
            ("password = a\\qb", "a\\qb"),
            ("password=", ""),
            ("password = \"\"", ""),
        ];
        for (line, want) in cases {
            assert_eq!(
                parsed(&format!("[client]\n{line}\n")),
                [pair("password", want)],
                "{line}"
            );
        }
    }

    #[test]
    fn groups_names_and_bare_options_follow_the_client() {
        let got = parsed(
            "# top\n[mysqld]\npassword=server\n[client]   # creds\nUser = bob\nloose-ssl_mode=REQUIRED\n\
             password\n[mysql]\npassword=other\n[CLIENT-SERVER]\nsocket=/s\n[ibench]\nssl-ca=/ca.pem\n",
        );
        assert_eq!(
            got,
            [
                pair("user", "bob"),
                pair("ssl-mode", "REQUIRED"),
                ("password".to_string(), None),
                pair("socket", "/s"),
                pair("ssl-ca", "/ca.pem")
            ]
        );
    }

    #[test]
    fn includes_are_followed_and_world_writable_files_ignored() {
        use std::os::unix::fs::PermissionsExt;
        let dir = tempfile::tempdir().unwrap();
        let conf = dir.path().join("conf.d");
        std::fs::create_dir(&conf).unwrap();
        std::fs::write(conf.join("b.cnf"), "[client]\nuser=b\n").unwrap();
        std::fs::write(conf.join("a.cnf"), "[client]\nuser=a\n").unwrap();
        std::fs::write(conf.join("c.txt"), "[client]\nuser=c\n").unwrap();
        std::fs::write(dir.path().join("more.cnf"), "[client]\nport=3307\n").unwrap();
        let main = dir.path().join("my.cnf");
        std::fs::write(
            &main,
            format!(
                "[client]\nuser=first\n!includedir {}\n!include {}\n!include /no/such.cnf\n!unknown x\n",
                conf.display(),
                dir.path().join("more.cnf").display()
            ),
        )
        .unwrap();
        let got = read(Some(&main), None).unwrap();
        assert_eq!(
            got,
            [
                pair("user", "first"),
                pair("user", "a"),
                pair("user", "b"),
                pair("port", "3307")
            ]
        );

        let open = dir.path().join("open.cnf");
        std::fs::write(&open, "[client]\nuser=intruder\n").unwrap();
        std::fs::set_permissions(&open, std::fs::Permissions::from_mode(0o666)).unwrap();
        assert_eq!(read(Some(&open), None).unwrap(), []);

        std::fs::write(&main, "[client]\n!includedir /no/such/dir\n").unwrap();
        let e = read(Some(&main), None).unwrap_err().to_string();
        assert!(e.contains("/no/such/dir"), "{e}");
    }

    #[test]
    fn errors_name_the_file_and_line_and_never_a_value() {
        let dir = tempfile::tempdir().unwrap();
        let f = dir.path().join("bad.cnf");
        std::fs::write(&f, "password=s3cret\n").unwrap();
        let e = read(Some(&f), None).unwrap_err().to_string();
        assert!(
            e.contains("bad.cnf") && e.contains("line 1") && !e.contains("s3cret"),
            "{e}"
        );
        let e = read(Some(&dir.path().join("nope.cnf")), None).unwrap_err().to_string();
        assert!(e.contains("nope.cnf"), "{e}");
        // Files the client reads by default may be missing.
        let none = dir.path().join("also-missing.cnf");
        assert!(read_file(&none, false, 0, &mut Vec::new()).is_ok());
    }
}
