//! Golden outlines: every `outline_data/*.md` body's headings, slugs, paths and section
//! sizes, compared with its snapshot.

use skill_format::sections::outline;

#[test]
fn outlines() {
    insta::glob!("../../outline_data", "*.md", |path| {
        let body = std::fs::read_to_string(path).unwrap();
        let mut out = String::new();
        for h in outline(&body).headings {
            let text = &body[h.range.clone()];
            out.push_str(&format!(
                "{}{} [{}] line {} level {} chars {} path {:?}\n",
                "  ".repeat(usize::from(h.level) - 1),
                h.title,
                h.slug,
                h.line,
                h.level,
                text.chars().count(),
                h.path,
            ));
        }
        if out.is_empty() {
            out.push_str("(no sections)\n");
        }
        insta::assert_snapshot!(out);
    });
}
