//! Rows for people and for scripts: on a terminal an aligned table with a header row (widths
//! counted in terminal columns, so wide characters such as CJK or emoji line up); piped,
//! tab-separated values with no header, one row a line.
//!
//! Cells are plain `&str`: whatever a caller wants to escape or shorten, it does before.

use std::io::IsTerminal;

use unicode_width::UnicodeWidthStr;

/// The gap between two columns of an aligned table.
const GAP: &str = "  ";

/// Whether stdout is a terminal, where a person reads the rows.
pub fn stdout_is_terminal() -> bool {
    std::io::stdout().is_terminal()
}

/// The rows as an aligned table under `header`: each column as wide as its widest cell, the
/// last column not padded, no trailing spaces ([`aligned_with`] a default layout: no width, no
/// colour).
#[cfg(test)]
pub fn aligned(header: &[&str], rows: &[Vec<&str>]) -> String {
    aligned_with(header, rows, &Layout::default())
}

/// How an aligned table is laid out for a person: the terminal's width it must fit, the
/// columns that give way, and each cell's colour.
#[derive(Debug, Default)]
pub struct Layout<'a> {
    /// The terminal's width in columns, when known ([`terminal_width`]).
    pub width: Option<usize>,
    /// The columns (by header label) that are clipped, in this order, each no narrower than its
    /// minimum, until the table fits: cut at the end with `…`, or for [`Clip::Start`] at the
    /// start.
    pub shrink: &'a [(&'a str, usize, Clip)],
    /// Whether cells are coloured ([`colour_wanted`]): the header bold, the rest as `paint`
    /// says.
    pub colour: bool,
    /// The style of a cell, given its column's label and its text.
    pub paint: Option<fn(&str, &str) -> Option<anstyle::Style>>,
}

/// Where a clipped cell loses its text.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Clip {
    /// At the end (`claude --resume 7fd8…`).
    End,
    /// At the start (`…alpha:0.0`), for ids whose end says the most.
    Start,
}

/// The terminal's width, when stdout is a terminal that says it.
pub fn terminal_width() -> Option<usize> {
    terminal_size::terminal_size_of(std::io::stdout())
        .map(|(terminal_size::Width(width), _)| usize::from(width))
        .filter(|width| *width > 0)
}

/// The layout for a person at this terminal: its width, `shrink`, colour when wanted, cells
/// painted by `paint`.
pub fn for_terminal<'a>(
    shrink: &'a [(&'a str, usize, Clip)],
    paint: Option<fn(&str, &str) -> Option<anstyle::Style>>,
) -> Layout<'a> {
    Layout {
        width: terminal_width(),
        shrink,
        colour: colour_wanted(),
        paint,
    }
}

/// The rows as people or scripts want them: on a terminal [`aligned_with`] `layout`, else
/// [`tsv`].
pub fn render_with(header: &[&str], rows: &[Vec<&str>], layout: &Layout<'_>) -> String {
    if stdout_is_terminal() {
        aligned_with(header, rows, layout)
    } else {
        tsv(rows)
    }
}

/// Whether to colour what goes to stdout: a terminal, not `TERM=dumb`, and no `NO_COLOR` set
/// to anything but empty (<https://no-color.org>).
pub fn colour_wanted() -> bool {
    stdout_is_terminal()
        && std::env::var_os("NO_COLOR").is_none_or(|value| value.is_empty())
        && std::env::var_os("TERM").is_some_and(|term| !term.is_empty() && term != "dumb")
}

/// The table `aligned` makes, laid out as `layout` says: clipped to its width, coloured.
pub fn aligned_with(header: &[&str], rows: &[Vec<&str>], layout: &Layout<'_>) -> String {
    let mut widths: Vec<usize> = header.iter().map(|cell| cell.width()).collect();
    for row in rows {
        for (column, cell) in row.iter().enumerate() {
            match widths.get_mut(column) {
                Some(width) => *width = (*width).max(cell.width()),
                None => widths.push(cell.width()),
            }
        }
    }
    let mut clips = vec![None; widths.len()];
    if let Some(limit) = layout.width {
        let total =
            |widths: &[usize]| widths.iter().sum::<usize>() + GAP.len() * (widths.len() - 1);
        for (label, minimum, clip) in layout.shrink {
            let excess = total(&widths).saturating_sub(limit);
            let Some(column) = header.iter().position(|cell| cell == label) else {
                continue;
            };
            if excess == 0 {
                break;
            }
            let narrower = widths[column]
                .saturating_sub(excess)
                .max(*minimum)
                .max(label.width());
            if narrower < widths[column] {
                widths[column] = narrower;
                clips[column] = Some(*clip);
            }
        }
    }
    let mut text = String::new();
    for (at, row) in std::iter::once(header)
        .chain(rows.iter().map(Vec::as_slice))
        .enumerate()
    {
        let mut line = String::new();
        let last = row.len().saturating_sub(1);
        for (column, cell) in row.iter().enumerate() {
            if column > 0 {
                line.push_str(GAP);
            }
            let cell = match clips.get(column).copied().flatten() {
                Some(clip) => clipped(cell, widths[column], clip),
                None => (*cell).to_string(),
            };
            let style = match (layout.colour, at, layout.paint) {
                (false, _, _) => None,
                (true, 0, _) => Some(anstyle::Style::new().bold()),
                (true, _, Some(paint)) => paint(header.get(column).copied().unwrap_or(""), &cell),
                (true, _, None) => None,
            };
            match style {
                Some(style) if !cell.is_empty() => {
                    line.push_str(&format!("{}{cell}{}", style.render(), style.render_reset()));
                }
                _ => line.push_str(&cell),
            }
            if column < last {
                let padding = widths[column].saturating_sub(cell.width());
                line.extend(std::iter::repeat_n(' ', padding));
            }
        }
        text.push_str(line.trim_end());
        text.push('\n');
    }
    text.pop();
    text
}

/// `cell` cut to `width` columns, `…` where it was cut.
fn clipped(cell: &str, width: usize, clip: Clip) -> String {
    if cell.width() <= width {
        return cell.to_string();
    }
    let keep = width.saturating_sub(1);
    let mut kept = 0;
    let take = |character: &char| {
        kept += unicode_width::UnicodeWidthChar::width(*character).unwrap_or(0);
        kept <= keep
    };
    match clip {
        Clip::End => {
            let head: String = cell.chars().take_while(take).collect();
            format!("{head}…")
        }
        Clip::Start => {
            let tail: Vec<char> = cell.chars().rev().take_while(take).collect();
            format!("…{}", tail.into_iter().rev().collect::<String>())
        }
    }
}

/// The rows as tab-separated values, no header; empty cells at the end of a row are left out.
pub fn tsv(rows: &[Vec<&str>]) -> String {
    rows.iter()
        .map(|row| {
            let used = row
                .iter()
                .rposition(|cell| !cell.is_empty())
                .map_or(0, |last| last + 1);
            row[..used].join("\t")
        })
        .collect::<Vec<_>>()
        .join("\n")
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn wide_characters_count_as_two_columns() {
        let table = aligned(
            &["SURFACE", "REPO"],
            &[
                vec!["pane-日本", "a"],
                vec!["p", "b"],
                vec!["😀😀😀😀😀", "c"],
            ],
        );
        assert_eq!(
            table,
            "SURFACE     REPO\npane-日本   a\np           b\n😀😀😀😀😀  c"
        );
    }

    #[test]
    fn a_table_too_wide_clips_its_shrinking_columns_in_order_down_to_their_minimum() {
        let rows = [vec![
            "tmux:/tmp/s:alpha:0.0",
            "7fd865d7-1111",
            "claude --resume 7fd865d7-1111",
        ]];
        let rows: Vec<Vec<&str>> = rows.to_vec();
        let layout = |width| Layout {
            width: Some(width),
            shrink: &[
                ("SESSION", 8, Clip::End),
                ("COMMAND", 12, Clip::End),
                ("SURFACE", 12, Clip::Start),
            ],
            ..Layout::default()
        };
        let header = ["SURFACE", "SESSION", "COMMAND"];
        assert_eq!(
            aligned_with(&header, &rows, &layout(200)),
            aligned(&header, &rows)
        );
        let narrow = aligned_with(&header, &rows, &layout(40));
        assert_eq!(
            narrow,
            "SURFACE           SESSION   COMMAND\n…tmp/s:alpha:0.0  7fd865d…  claude --re…"
        );
        assert!(narrow.lines().all(|line| line.width() <= 40), "{narrow}");
        let coloured = Layout {
            colour: true,
            ..Layout::default()
        };
        assert_eq!(
            aligned_with(&["A", "B"], &[vec!["x", "y"]], &coloured),
            "\u{1b}[1mA\u{1b}[0m  \u{1b}[1mB\u{1b}[0m\nx  y"
        );
    }

    #[test]
    fn tsv_leaves_out_empty_trailing_cells_and_has_no_header() {
        assert_eq!(
            tsv(&[vec!["a", "b", ""], vec!["c", "", "d"]]),
            "a\tb\nc\t\td"
        );
    }
}
