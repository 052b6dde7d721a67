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
/// last column not padded, no trailing spaces.
pub fn aligned(header: &[&str], rows: &[Vec<&str>]) -> String {
    let mut widths: Vec<usize> = header.iter().map(|cell| cell.width()).collect();
    for row in rows {
        for (column, cell) in row.iter().enumerate() {
            match widths.get_mut(column) {
                Some(width) => *width = (*width).max(cell.width()),
                None => widths.push(cell.width()),
            }
        }
    }
    let mut text = String::new();
    for row in std::iter::once(header).chain(rows.iter().map(Vec::as_slice)) {
        let mut line = String::new();
        for (column, cell) in row.iter().enumerate() {
            if column > 0 {
                line.push_str(GAP);
            }
            line.push_str(cell);
            let padding = widths[column].saturating_sub(cell.width());
            line.extend(std::iter::repeat_n(' ', padding));
        }
        text.push_str(line.trim_end());
        text.push('\n');
    }
    text.pop();
    text
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

/// The rows as people or scripts want them: [`aligned`] on a terminal, else [`tsv`].
pub fn render(header: &[&str], rows: &[Vec<&str>]) -> String {
    if stdout_is_terminal() {
        aligned(header, rows)
    } else {
        tsv(rows)
    }
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
    fn tsv_leaves_out_empty_trailing_cells_and_has_no_header() {
        assert_eq!(
            tsv(&[vec!["a", "b", ""], vec!["c", "", "d"]]),
            "a\tb\nc\t\td"
        );
    }
}
