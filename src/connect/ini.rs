//! The one reader of INI-style files: PostgreSQL's `pg_service.conf`,
//! RocksDB's `OPTIONS` files and MySQL's option files. It classifies lines;
//! what each format makes of them (which groups count, quotes and escapes
//! in MySQL's values, includes) is its caller's.

/// One line of an INI-style text that says something.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub(crate) enum Line<'a> {
    /// `[name]`: the text up to the first `]`, trimmed (what follows the
    /// `]`, a comment, is ignored, as MySQL's and libpq's readers do).
    Group(&'a str),
    /// A line that opens a group without closing it (`[name`).
    Unclosed,
    /// `!word argument` (MySQL's `!include FILE`, `!includedir DIR`).
    Directive(&'a str),
    /// `key = value`, both trimmed, split at the first `=`; a bare `key`
    /// (no `=`) has no value (MySQL's `ssl`).
    Entry(&'a str, Option<&'a str>),
}

/// How a format differs from plain INI.
#[derive(Clone, Copy, Debug, Default)]
pub(crate) struct Dialect {
    /// A `#` outside quotes ends the line's text, after a value too
    /// (`password = abc # note`): MySQL's option files. Elsewhere only a
    /// line that starts with `#` or `;` is a comment.
    pub(crate) trailing_comments: bool,
}

/// The lines of `text` that say something, each with its number (from 1):
/// blank lines and lines starting with `#` or `;` are skipped.
pub(crate) fn lines(text: &str, dialect: Dialect) -> impl Iterator<Item = (usize, Line<'_>)> {
    text.lines().enumerate().filter_map(move |(n, raw)| {
        let line = raw.trim();
        if line.is_empty() || line.starts_with('#') || line.starts_with(';') {
            return None;
        }
        let parsed = if let Some(directive) = line.strip_prefix('!') {
            Line::Directive(directive)
        } else if let Some(rest) = line.strip_prefix('[') {
            match rest.find(']') {
                Some(end) => Line::Group(rest[..end].trim()),
                None => Line::Unclosed,
            }
        } else {
            let line = if dialect.trailing_comments {
                without_comment(line)
            } else {
                line
            };
            match line.split_once('=') {
                Some((key, value)) => Line::Entry(key.trim(), Some(value.trim())),
                None => Line::Entry(line.trim(), None),
            }
        };
        Some((n + 1, parsed))
    })
}

/// `line` up to a `#` outside quotes (inside them, `\` escapes a quote).
fn without_comment(line: &str) -> &str {
    let (mut quote, mut escaped) = (None, false);
    for (i, c) in line.char_indices() {
        if (c == '"' || c == '\'') && !escaped {
            match quote {
                None => quote = Some(c),
                Some(q) if q == c => quote = None,
                _ => {}
            }
        } else if quote.is_none() && c == '#' {
            return &line[..i];
        }
        escaped = quote.is_some() && c == '\\' && !escaped;
    }
    line
}

#[cfg(test)]
mod tests {
    use super::*;

    fn all(text: &str, dialect: Dialect) -> Vec<Line<'_>> {
        lines(text, dialect).map(|(_, l)| l).collect()
    }

    #[test]
    fn groups_entries_directives_and_comments_are_told_apart() {
        let text = "# top\n; also\n\n[svc] # note\n host = h \nbare\n!include /x.cnf\n[open\nk=a=b\n";
        assert_eq!(
            all(text, Dialect::default()),
            [
                Line::Group("svc"),
                Line::Entry("host", Some("h")),
                Line::Entry("bare", None),
                Line::Directive("include /x.cnf"),
                Line::Unclosed,
                Line::Entry("k", Some("a=b")),
            ]
        );
        let numbers: Vec<usize> = lines(text, Dialect::default()).map(|(n, _)| n).collect();
        assert_eq!(numbers, [4, 5, 6, 7, 8, 9]);
    }

    #[test]
    fn a_trailing_comment_ends_the_value_only_where_the_dialect_says() {
        let mysql = Dialect {
            trailing_comments: true,
        };
        assert_eq!(all("p = abc # x", mysql), [Line::Entry("p", Some("abc"))]);
        assert_eq!(all("p = \"a#b\" # x", mysql), [Line::Entry("p", Some("\"a#b\""))]);
        assert_eq!(all("p = 'a\\'#b'", mysql), [Line::Entry("p", Some("'a\\'#b'"))]);
        assert_eq!(
            all("p = abc # x", Dialect::default()),
            [Line::Entry("p", Some("abc # x"))]
        );
    }
}
