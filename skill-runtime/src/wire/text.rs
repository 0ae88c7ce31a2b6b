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

/// A catalog's budget report in words: how many skills were listed out of how many, the
/// characters shown out of the budget, then the shortened and omitted skills (each line
/// with its count). `shown_chars` is the text's length as the caller shows it (the pack
/// report counts its relative paths, not the absolute ones).
pub fn budget_text(r: &skill_registry::BudgetReport, shown_chars: usize) -> String {
    let mut t = format!(
        "budget: {} of {} skills listed, {} of {} chars",
        r.included.len(),
        r.candidates,
        shown_chars,
        r.budget_chars
    );
    if r.is_complete() {
        t.push_str("; nothing shortened or omitted\n");
        return t;
    }
    t.push('\n');
    for (what, names) in [("shortened", &r.truncated), ("omitted", &r.omitted)] {
        if !names.is_empty() {
            let _ = writeln!(t, "  {what} ({}): {}", names.len(), names.join(", "));
        }
    }
    t
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_budget_report_names_what_it_shortened_and_omitted() {
        let mut r = skill_registry::BudgetReport {
            candidates: 3,
            budget_chars: 100,
            included: vec!["a".into(), "b".into()],
            ..Default::default()
        };
        assert_eq!(
            budget_text(&r, 90),
            "budget: 2 of 3 skills listed, 90 of 100 chars; nothing shortened or omitted\n"
        );
        r.truncated = vec!["b".into()];
        r.omitted = vec!["c".into()];
        assert_eq!(
            budget_text(&r, 90),
            "budget: 2 of 3 skills listed, 90 of 100 chars\n  shortened (1): b\n  omitted (1): c\n"
        );
    }

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
