//! Text taken from a body or description: the first paragraph (pegasus descriptions) and the
//! first sentence (toolsets brief descriptions).

/// The first paragraph of a body: headings, fences and blank lines before it are skipped.
pub fn first_paragraph(body: &str) -> String {
    let mut lines = Vec::new();
    let mut in_fence = false;
    for line in body.lines() {
        let t = line.trim();
        if t.starts_with("```") || t.starts_with("~~~") {
            if !lines.is_empty() {
                break;
            }
            in_fence = !in_fence;
            continue;
        }
        if in_fence {
            continue;
        }
        if t.is_empty() || t.starts_with('#') {
            if lines.is_empty() {
                continue;
            }
            break;
        }
        lines.push(t);
    }
    lines.join(" ")
}

/// The first sentence of a text: up to and including the first `.`, `!` or `?` that ends a
/// word, or the whole text.
pub fn first_sentence(text: &str) -> String {
    let t = text.trim();
    let mut prev_end = None;
    for (i, c) in t.char_indices() {
        if let Some(end) = prev_end {
            if c.is_whitespace() {
                return t[..end].to_owned();
            }
            prev_end = None;
        }
        if matches!(c, '.' | '!' | '?') {
            prev_end = Some(i + c.len_utf8());
        }
    }
    t.to_owned()
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn first_paragraph_skips_headings() {
        assert_eq!(
            first_paragraph("# Title\n\nLine one\nline two\n\nNext"),
            "Line one line two"
        );
        assert_eq!(first_paragraph("```\ncode\n```\nText"), "Text");
        assert_eq!(first_paragraph("# Only a title\n"), "");
    }

    #[test]
    fn first_sentence_rules() {
        assert_eq!(first_sentence("Does a thing. Then more."), "Does a thing.");
        assert_eq!(
            first_sentence("Version 1.2 is here! Yes"),
            "Version 1.2 is here!"
        );
        assert_eq!(first_sentence("No end"), "No end");
    }
}
