//! Rust source read just enough for tidy's checks: comments, strings and char literals
//! blanked (offsets and line numbers kept), `#[cfg(test)]` items dropped.

/// `src` with comments, string literals and char literals replaced by spaces (newlines
/// kept, so byte offsets and line numbers still match the file).
pub(super) fn strip(src: &str) -> String {
    let b = src.as_bytes();
    let mut out = b.to_vec();
    let blank = |out: &mut Vec<u8>, from: usize, to: usize| {
        for c in &mut out[from..to.min(b.len())] {
            if *c != b'\n' {
                *c = b' ';
            }
        }
    };
    let mut i = 0;
    while i < b.len() {
        let c = b[i];
        if c == b'/' && b.get(i + 1) == Some(&b'/') {
            let end = src[i..].find('\n').map_or(b.len(), |n| i + n);
            blank(&mut out, i, end);
            i = end;
        } else if c == b'/' && b.get(i + 1) == Some(&b'*') {
            let mut depth = 0;
            let mut j = i;
            while j < b.len() {
                if b[j] == b'/' && b.get(j + 1) == Some(&b'*') {
                    depth += 1;
                    j += 2;
                } else if b[j] == b'*' && b.get(j + 1) == Some(&b'/') {
                    depth -= 1;
                    j += 2;
                    if depth == 0 {
                        break;
                    }
                } else {
                    j += 1;
                }
            }
            blank(&mut out, i, j);
            i = j;
        } else if c == b'r'
            && (b.get(i + 1) == Some(&b'"') || b.get(i + 1) == Some(&b'#'))
            && (i == 0 || !(b[i - 1].is_ascii_alphanumeric() || b[i - 1] == b'_'))
        {
            let hashes = b[i + 1..].iter().take_while(|&&h| h == b'#').count();
            if b.get(i + 1 + hashes) != Some(&b'"') {
                i += 1;
                continue;
            }
            let close = format!("\"{}", "#".repeat(hashes));
            let body = i + 2 + hashes;
            let end = src[body..]
                .find(&close)
                .map_or(b.len(), |n| body + n + close.len());
            blank(&mut out, i, end);
            i = end;
        } else if c == b'"' {
            let mut j = i + 1;
            while j < b.len() && b[j] != b'"' {
                j += if b[j] == b'\\' { 2 } else { 1 };
            }
            blank(&mut out, i, j + 1);
            i = j + 1;
        } else if c == b'\'' {
            // A char literal ('x', '\n', '\u{1F600}', 'é'), not a lifetime ('a).
            let rest = &src[i + 1..];
            let len = if rest.starts_with('\\') {
                rest.get(2..).and_then(|r| r.find('\'')).map(|n| n + 3)
            } else {
                rest.chars()
                    .next()
                    .filter(|ch| rest[ch.len_utf8()..].starts_with('\''))
                    .map(|ch| ch.len_utf8() + 1)
            };
            match len {
                Some(n) => {
                    blank(&mut out, i, i + 1 + n);
                    i += 1 + n;
                }
                None => i += 1,
            }
        } else {
            i += 1;
        }
    }
    String::from_utf8_lossy(&out).into_owned()
}

/// The offset just past the `}` matching the `{` at `open` in stripped source.
pub(super) fn matching_brace(code: &str, open: usize) -> usize {
    let mut depth = 0usize;
    for (i, c) in code[open..].char_indices() {
        match c {
            '{' => depth += 1,
            '}' => {
                depth = depth.saturating_sub(1);
                if depth == 0 {
                    return open + i + 1;
                }
            }
            _ => {}
        }
    }
    code.len()
}

/// Stripped source without its `#[cfg(test)]` items (blanked), and the names of modules
/// declared `#[cfg(test)] mod name;` (test-only files).
pub(super) fn without_tests(code: &str) -> (String, Vec<String>) {
    let mut out = code.to_owned();
    let mut test_files = Vec::new();
    let mut from = 0;
    while let Some(found) = code[from..].find("#[cfg(test)]") {
        let at = from + found;
        let after = at + "#[cfg(test)]".len();
        // The item: up to its `;` or through its braces, whichever comes first.
        let semi = code[after..].find(';').map(|n| after + n);
        let brace = code[after..].find('{').map(|n| after + n);
        let end = match (semi, brace) {
            (Some(s), Some(b)) if s < b => s + 1,
            (Some(s), None) => s + 1,
            (_, Some(b)) => matching_brace(code, b),
            (None, None) => code.len(),
        };
        let item = &code[after..end];
        let words: Vec<&str> = item
            .split(|c: char| !(c.is_alphanumeric() || c == '_'))
            .filter(|w| !w.is_empty())
            .collect();
        if item.trim_end().ends_with(';') {
            if let Some(pos) = words.iter().position(|w| *w == "mod") {
                if let Some(name) = words.get(pos + 1) {
                    test_files.push((*name).to_owned());
                }
            }
        }
        let blank: String = code[at..end]
            .bytes()
            .map(|b| if b == b'\n' { '\n' } else { ' ' })
            .collect();
        out.replace_range(at..end, &blank);
        from = end;
    }
    (out, test_files)
}

/// The 1-based line of byte `offset`.
pub(super) fn line_of(text: &str, offset: usize) -> usize {
    text[..offset.min(text.len())].matches('\n').count() + 1
}

#[cfg(test)]
mod tests {
    use super::strip;

    #[test]
    fn strip_blanks_comments_and_literals_only() {
        let src = "let s = \"use crate::x;\"; // crate::y\nlet c = '\"'; let q = '\\''; fn f<'a>(x: &'a str) {}\n/* a /* b */ */ crate::z";
        let out = strip(src);
        assert!(!out.contains("crate::x") && !out.contains("crate::y"));
        assert!(out.contains("fn f<'a>(x: &'a str)"));
        assert!(out.ends_with("crate::z"));
        assert_eq!(out.len(), src.len());
    }
}
