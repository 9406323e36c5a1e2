//! Folded stacks drawn as interactive SVG flame graphs by inferno: one
//! profile, or the difference between two.

use super::fold::to_text;
use crate::{Error, Result};

/// An interactive SVG flame graph (zoom on click, search) of `stacks`
/// (folded, as [`super::Profile::stacks`]), titled `title`. Colours follow
/// the function names, so one function has one colour in every graph.
pub fn flamegraph(stacks: &[(String, u64)], title: &str) -> Result<String> {
    let text = to_text(stacks);
    draw(text.lines(), title)
}

/// A differential flame graph: the shape of `after`, each frame coloured by
/// how its samples changed from `before` (red: more, blue: fewer; inferno's
/// `diff-folded`, after Brendan Gregg's differential flame graphs). With
/// `normalize`, `before` is first scaled to `after`'s total, so a longer or
/// busier run does not make everything red; to compare per operation, scale
/// both to samples per operation (or pass the same operation count) first.
pub fn differential(before: &[(String, u64)], after: &[(String, u64)], title: &str, normalize: bool) -> Result<String> {
    let options = inferno::differential::Options {
        normalize,
        ..Default::default()
    };
    let (before, after) = (to_text(before), to_text(after));
    let mut both = Vec::new();
    inferno::differential::from_readers(options, before.as_bytes(), after.as_bytes(), &mut both)
        .map_err(|e| format_error("cannot pair the folded stacks", e))?;
    let both = String::from_utf8(both).map_err(|e| format_error("cannot pair the folded stacks", e))?;
    draw(both.lines(), title)
}

fn draw<'a>(lines: impl IntoIterator<Item = &'a str>, title: &str) -> Result<String> {
    let mut lines = lines.into_iter().peekable();
    if lines.peek().is_none() {
        return Err(Error::config("stacks", "no samples to draw"));
    }
    let mut options = inferno::flamegraph::Options::default();
    options.title = title.to_string();
    options.count_name = "samples".into();
    options.hash = true; // colour by name: the same function alike in every graph
    options.deterministic = true;
    let mut svg = Vec::new();
    inferno::flamegraph::from_lines(&mut options, lines, &mut svg)
        .map_err(|e| format_error("cannot draw the flame graph", e))?;
    String::from_utf8(svg).map_err(|e| format_error("cannot draw the flame graph", e))
}

fn format_error(context: &str, e: impl std::fmt::Display) -> Error {
    Error::Format {
        context: context.into(),
        message: e.to_string(),
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn stacks(rows: &[(&str, u64)]) -> Vec<(String, u64)> {
        rows.iter().map(|(s, n)| (s.to_string(), *n)).collect()
    }

    #[test]
    fn a_flame_graph_is_an_svg_naming_each_function() {
        let svg = flamegraph(
            &stacks(&[("postgres;main;ExecScan", 7), ("postgres;main;XLogFlush", 3)]),
            "l.i0",
        )
        .unwrap();
        assert!(
            svg.starts_with("<?xml") && svg.trim_end().ends_with("</svg>"),
            "{}",
            &svg[..80]
        );
        for name in ["ExecScan", "XLogFlush", "l.i0"] {
            assert!(svg.contains(name), "{name}");
        }
    }

    #[test]
    fn a_differential_graph_colours_growth_red_and_shrinkage_blue() {
        let before = stacks(&[("pg;main;ExecScan", 10), ("pg;main;XLogFlush", 10)]);
        let after = stacks(&[("pg;main;ExecScan", 10), ("pg;main;XLogFlush", 30)]);
        let svg = differential(&before, &after, "diff", false).unwrap();
        let label = |svg: &str| {
            let line = svg.lines().find(|l| l.contains("<title>XLogFlush"));
            line.unwrap_or_default().to_string()
        };
        // inferno labels a change as a share of all samples: 20 more of 40.
        let grown = label(&svg);
        assert!(grown.contains("XLogFlush (30 samples, 75.00%; +50.00%)"), "{grown}");
        let shrunk = label(&differential(&after, &before, "diff", false).unwrap());
        assert!(shrunk.contains("XLogFlush (10 samples, 50.00%; -100.00%)"), "{shrunk}");
    }

    #[test]
    fn nothing_to_draw_is_an_error() {
        assert!(flamegraph(&[], "empty").is_err());
    }
}
