//! Plain-text renderings shared by the command line and the pack report.

use std::fmt::Write as _;

/// Rows as a left-aligned table: columns two spaces apart, each as wide as its widest
/// cell (in characters), the last column unpadded, trailing spaces trimmed.
pub fn text_table(rows: &[Vec<String>]) -> String {
    let cols = rows.iter().map(Vec::len).max().unwrap_or(0);
    let mut widths = vec![0usize; cols];
    for r in rows {
        for (w, c) in widths.iter_mut().zip(r) {
            *w = (*w).max(c.chars().count());
        }
    }
    let mut out = String::new();
    for r in rows {
        let mut line = String::new();
        for (i, (w, c)) in widths.iter().zip(r).enumerate() {
            if i + 1 == r.len() {
                line.push_str(c);
            } else {
                let _ = write!(line, "{c:<w$}  ");
            }
        }
        out.push_str(line.trim_end());
        out.push('\n');
    }
    out
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn columns_align_by_characters_and_lines_are_trimmed() {
        let rows = vec![
            vec!["NAME".to_owned(), "LAYER".to_owned(), "PATH".to_owned()],
            vec!["é".to_owned(), "".to_owned(), "a/b".to_owned()],
        ];
        assert_eq!(text_table(&rows), "NAME  LAYER  PATH\né            a/b\n");
        assert_eq!(text_table(&[]), "");
    }
}
