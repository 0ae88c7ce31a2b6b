//! Hidden and bidirectional-control characters: text a reviewer does not see, or sees in
//! another order than the model reads it (the "trojan source" family).

use skill_format::Code;

use super::{Findings, Line};

/// How many hidden characters a finding quotes, decoded, in its message.
const MAX_DECODED_CHARS: usize = 60;

/// Characters that draw nothing: zero-width spaces and joiners, the word joiner and
/// invisible operators, a byte-order mark inside the text, fillers.
fn invisible_name(c: char) -> Option<&'static str> {
    Some(match c {
        '\u{200b}' => "zero width space",
        '\u{200c}' => "zero width non-joiner",
        '\u{200d}' => "zero width joiner",
        '\u{2060}' => "word joiner",
        '\u{2061}'..='\u{2064}' => "invisible operator",
        '\u{feff}' => "zero width no-break space (a byte-order mark inside the text)",
        '\u{180e}' => "mongolian vowel separator",
        '\u{115f}' | '\u{1160}' | '\u{3164}' | '\u{ffa0}' => "hangul filler",
        _ => return None,
    })
}

fn is_bidi_control(c: char) -> bool {
    matches!(c, '\u{202a}'..='\u{202e}' | '\u{2066}'..='\u{2069}')
}

fn is_tag(c: char) -> bool {
    ('\u{e0000}'..='\u{e007f}').contains(&c)
}

/// Joiners have honest uses: between the parts of an emoji, and inside words of scripts that
/// need them (Persian, the Indic scripts). Both neighbours outside ASCII means such a use.
fn joiner_in_context(prev: Option<char>, next: Option<char>) -> bool {
    matches!((prev, next), (Some(p), Some(n)) if !p.is_ascii() && !n.is_ascii())
}

/// Scan one line.
pub(crate) fn scan(line: &Line<'_>, findings: &mut Findings<'_>) {
    let text = line.text;
    if text.is_ascii() {
        return;
    }
    let mut invisible: Option<(usize, &'static str, u32)> = None;
    let mut bidi: Option<(usize, char, u32)> = None;
    let mut tags: Option<(usize, String, u32)> = None;
    let mut prev: Option<char> = None;
    let mut iter = text.char_indices().peekable();
    while let Some((at, c)) = iter.next() {
        let next = iter.peek().map(|(_, n)| *n);
        if is_tag(c) {
            // Tag characters after a black flag spell a subdivision flag (an emoji).
            let flag = prev == Some('\u{1f3f4}') || prev.is_some_and(is_tag);
            if !flag || tags.is_some() {
                let t = tags.get_or_insert((at, String::new(), 0));
                t.2 += 1;
                // Tags mirror ASCII: U+E0041 is a hidden `A`.
                let ascii = char::from_u32(u32::from(c) - 0xe0000).filter(char::is_ascii_graphic);
                if t.1.chars().count() < MAX_DECODED_CHARS {
                    t.1.push(ascii.unwrap_or(' '));
                }
            }
        } else if is_bidi_control(c) {
            let b = bidi.get_or_insert((at, c, 0));
            b.2 += 1;
        } else if let Some(name) = invisible_name(c) {
            let honest = matches!(c, '\u{200c}' | '\u{200d}') && joiner_in_context(prev, next);
            if !honest {
                let v = invisible.get_or_insert((at, name, 0));
                v.2 += 1;
            }
        }
        prev = Some(c);
    }
    if let Some((at, decoded, n)) = tags {
        let decoded = decoded.trim();
        let shown = if decoded.is_empty() {
            String::new()
        } else {
            format!(" spelling \"{decoded}\"")
        };
        findings.add(
            Code::ScanHiddenUnicode,
            line,
            at,
            format!(
                "{n} invisible tag character(s){shown}: a model reads them, a reviewer does not see them; delete them"
            ),
        );
    }
    if let Some((at, name, n)) = invisible {
        findings.add(
            Code::ScanHiddenUnicode,
            line,
            at,
            format!(
                "{n} invisible character(s) on this line, the first a {name}: they can hide or split words a reviewer would catch; delete them"
            ),
        );
    }
    if let Some((at, c, n)) = bidi {
        findings.add(
            Code::ScanBidiControl,
            line,
            at,
            format!(
                "{n} bidirectional-control character(s) on this line, the first U+{:04X}: the text displays in another order than it is read; delete them",
                u32::from(c)
            ),
        );
    }
}

#[cfg(test)]
#[allow(clippy::unwrap_used, clippy::expect_used, clippy::panic)]
mod tests {
    use super::super::tests::codes;
    use skill_format::Code;

    #[test]
    fn hidden_characters_are_found_with_their_column() {
        assert_eq!(
            codes("a.md", "ok\nab\u{200b}cd\n"),
            [(Code::ScanHiddenUnicode, 2, 3)]
        );
        assert_eq!(
            codes("a.md", "x\u{202e}y\u{2066}z\n"),
            [(Code::ScanBidiControl, 1, 2)]
        );
        assert_eq!(codes("a.md", "\u{feff}bom at the start\n"), []);
        assert_eq!(
            codes("a.md", "mid\u{feff}text\n"),
            [(Code::ScanHiddenUnicode, 1, 4)]
        );
    }

    #[test]
    fn tag_characters_are_decoded_in_the_message() {
        let hidden: String = "ignore"
            .chars()
            .map(|c| char::from_u32(0xe0000 + c as u32).unwrap())
            .collect();
        let found =
            super::super::scan_text(std::path::Path::new("a.md"), &format!("Hello{hidden}\n"));
        assert_eq!(found.len(), 1);
        assert!(
            found[0].message.contains("spelling \"ignore\""),
            "{}",
            found[0].message
        );
        // A subdivision flag (England) is an emoji, not hidden text.
        let flag = "\u{1f3f4}\u{e0067}\u{e0062}\u{e0065}\u{e006e}\u{e0067}\u{e007f}";
        assert_eq!(codes("a.md", flag), []);
    }

    #[test]
    fn joiners_inside_emoji_and_scripts_that_need_them_are_not_findings() {
        assert_eq!(
            codes(
                "a.md",
                "family \u{1f468}\u{200d}\u{1f469}\u{200d}\u{1f467}\n"
            ),
            []
        );
        assert_eq!(
            codes(
                "a.md",
                "\u{0645}\u{06cc}\u{200c}\u{062e}\u{0648}\u{0627}\u{0647}\u{0645}\n"
            ),
            []
        );
        assert_eq!(
            codes("a.md", "a\u{200d}b\n"),
            [(Code::ScanHiddenUnicode, 1, 2)]
        );
    }
}
