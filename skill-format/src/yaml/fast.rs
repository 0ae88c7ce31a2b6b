//! The fast path of [`super::parse`]: a reader for the plain block YAML most frontmatter is
//! written in, giving the same [`Parsed`] as the `serde_yaml` path or declining.
//!
//! It reads a top-level block mapping of `key: value` lines whose values are plain, quoted
//! or block (`|`, `|-`, `>`, `>-`) strings, an empty value (null), a nested block mapping or
//! a block list of one-line strings. Anything else — a comment, a blank line, a tab, a CR,
//! a flow collection, an anchor, alias or tag, an escape, a plain value that YAML could read
//! as a number, boolean or null, a more-indented line inside a block scalar, a character the
//! YAML reader refuses or reads as a line break — makes it return `None`, and the caller
//! takes the `serde_yaml` path, which also produces every error message. Declining is always
//! safe; the tests compare both paths on many documents.

use std::collections::HashSet;

use super::{Node, Parsed, ScalarKind};

/// Deepest nesting of block mappings read here (`serde_yaml` allows 128).
const MAX_DEPTH: usize = 16;
/// Longest key read here (the YAML scanner refuses a simple key over 1024 characters).
const MAX_KEY_BYTES: usize = 256;
/// A mapping with more keys than this checks for duplicates with a hash set.
const SMALL_MAP: usize = 16;

/// Read `text` if it is in the subset this path handles; `None` otherwise.
pub(super) fn parse(text: &str) -> Option<Parsed> {
    if !plain_text(text.as_bytes()) {
        return None;
    }
    let mut reader = Reader {
        lines: Lines::new(text),
        path: Vec::new(),
        duplicates: Vec::new(),
    };
    if reader.lines.cur?.indent != 0 {
        return None;
    }
    let entries = reader.map(0)?;
    if reader.lines.cur.is_some() {
        return None;
    }
    Some(Parsed {
        root: Node::Map(entries),
        duplicate_keys: reader.duplicates,
    })
}

/// Whether every character is one the YAML reader accepts and no line is blank.
///
/// Refused: ASCII control characters but `\n` (so tabs and CRs too), DEL, U+0080..U+009F
/// (NEL is a YAML line break), U+2028 and U+2029 (line breaks), U+FEFF (a BOM the scanner
/// skips), U+FFFE and U+FFFF (not allowed), and lines that are empty or only spaces.
fn plain_text(bytes: &[u8]) -> bool {
    let mut line_has_text = false;
    let mut i = 0;
    while i < bytes.len() {
        let b = bytes[i];
        match b {
            b'\n' => {
                if !line_has_text {
                    return false;
                }
                line_has_text = false;
            }
            b' ' => {}
            0..=0x1f | 0x7f => return false,
            0x21..=0x7e => line_has_text = true,
            // The lead bytes of the refused characters (text is valid UTF-8, so `i + 1`
            // and `i + 2` exist after a two- or three-byte lead).
            0xc2 => {
                if bytes.get(i + 1).is_some_and(|c| (0x80..=0x9f).contains(c)) {
                    return false;
                }
                line_has_text = true;
            }
            0xe2 => {
                if bytes.get(i + 1) == Some(&0x80) && matches!(bytes.get(i + 2), Some(0xa8 | 0xa9))
                {
                    return false;
                }
                line_has_text = true;
            }
            0xef => {
                let pair = (bytes.get(i + 1), bytes.get(i + 2));
                if matches!(
                    pair,
                    (Some(0xbb), Some(0xbf)) | (Some(0xbf), Some(0xbe | 0xbf))
                ) {
                    return false;
                }
                line_has_text = true;
            }
            _ => line_has_text = true,
        }
        i += 1;
    }
    // A last line without `\n` must not be spaces only.
    line_has_text || bytes.last().is_none_or(|b| *b == b'\n')
}

/// One line: its indentation (spaces) and the rest, without the `\n`.
#[derive(Clone, Copy)]
struct Line<'t> {
    indent: usize,
    content: &'t str,
    /// Whether a `\n` ends it.
    newline: bool,
}

/// The lines of the text, with the current one read ahead.
struct Lines<'t> {
    rest: &'t str,
    cur: Option<Line<'t>>,
}

impl<'t> Lines<'t> {
    fn new(text: &'t str) -> Self {
        let mut lines = Lines {
            rest: text,
            cur: None,
        };
        lines.advance();
        lines
    }

    /// Move to the next line.
    fn advance(&mut self) {
        if self.rest.is_empty() {
            self.cur = None;
            return;
        }
        let (line, newline, rest) = match memchr::memchr(b'\n', self.rest.as_bytes()) {
            Some(i) => (&self.rest[..i], true, &self.rest[i + 1..]),
            None => (self.rest, false, ""),
        };
        self.rest = rest;
        let content = line.trim_start_matches(' ');
        self.cur = Some(Line {
            indent: line.len() - content.len(),
            content,
            newline,
        });
    }
}

struct Reader<'t> {
    lines: Lines<'t>,
    /// The keys leading to the mapping being read.
    path: Vec<&'t str>,
    duplicates: Vec<String>,
}

impl<'t> Reader<'t> {
    /// A block mapping whose keys sit at column `indent`.
    fn map(&mut self, indent: usize) -> Option<Vec<(String, Node)>> {
        if self.path.len() > MAX_DEPTH {
            return None;
        }
        let mut entries: Vec<(String, Node)> = Vec::new();
        // Keys of a large mapping, for a linear duplicate check (small ones are scanned).
        let mut seen: Option<HashSet<String>> = None;
        while let Some(line) = self.lines.cur {
            if line.indent < indent {
                break;
            }
            if line.indent > indent {
                return None;
            }
            let (key, rest) = split_key(line.content)?;
            self.lines.advance();
            // A repeated key is reported before its value is read, as the serde path does.
            let repeated = match &mut seen {
                Some(set) => !set.insert(key.to_owned()),
                None => {
                    let repeated = entries.iter().any(|(k, _)| k == key);
                    if entries.len() >= SMALL_MAP {
                        let mut set: HashSet<String> =
                            entries.iter().map(|(k, _)| k.clone()).collect();
                        set.insert(key.to_owned());
                        seen = Some(set);
                    }
                    repeated
                }
            };
            self.path.push(key);
            if repeated {
                self.duplicates.push(self.path.join("."));
            }
            let value = if rest.is_empty() {
                self.nested(indent)
            } else {
                self.value(rest, indent)
            };
            self.path.pop();
            entries.push((key.to_owned(), value?));
        }
        Some(entries)
    }

    /// The value of a key with nothing after its `:`: a deeper mapping or list, else null.
    fn nested(&mut self, indent: usize) -> Option<Node> {
        match self.lines.cur {
            Some(next) if next.indent > indent => {
                if next.content.starts_with("- ") {
                    self.list(next.indent)
                } else {
                    self.map(next.indent).map(Node::Map)
                }
            }
            _ => Some(Node::Scalar {
                text: String::new(),
                kind: ScalarKind::Null,
            }),
        }
    }

    /// A block list of one-line strings whose `-` sit at column `indent`.
    fn list(&mut self, indent: usize) -> Option<Node> {
        let mut items = Vec::new();
        while let Some(line) = self.lines.cur {
            if line.indent < indent {
                break;
            }
            if line.indent > indent {
                return None;
            }
            let item = line.content.strip_prefix("- ")?.trim_start_matches(' ');
            if item.is_empty() {
                return None;
            }
            self.lines.advance();
            let text = match item.as_bytes()[0] {
                b'"' => self.double_quoted(item, None)?,
                b'\'' => self.single_quoted(item, None)?,
                _ => self.plain(item, None)?,
            };
            items.push(string(text));
        }
        Some(Node::Seq(items))
    }

    /// The value written after `key: ` in a mapping at column `indent`.
    fn value(&mut self, first: &'t str, indent: usize) -> Option<Node> {
        let text = match first.as_bytes()[0] {
            b'[' => {
                let list = flow_list(first)?;
                return (!self.continues(Some(indent))).then_some(list);
            }
            b'"' => self.double_quoted(first, Some(indent))?,
            b'\'' => self.single_quoted(first, Some(indent))?,
            b'|' | b'>' => self.block(first, indent)?,
            _ => self.plain(first, Some(indent))?,
        };
        Some(string(text))
    }

    /// The next line, when it continues a scalar of a mapping at column `indent` (it is
    /// indented deeper); consumed.
    fn continuation(&mut self, indent: Option<usize>) -> Option<&'t str> {
        let indent = indent?;
        let line = self.lines.cur.filter(|l| l.indent > indent)?;
        self.lines.advance();
        Some(line.content)
    }

    /// Whether the next line is deeper than a mapping at `indent` (that is, would continue
    /// the scalar just read).
    fn continues(&self, indent: Option<usize>) -> bool {
        indent.is_some_and(|indent| self.lines.cur.is_some_and(|l| l.indent > indent))
    }

    /// A plain scalar that is surely a string; lines deeper than `indent` continue it
    /// (`None`: a list item, which must fit on one line).
    fn plain(&mut self, first: &'t str, indent: Option<usize>) -> Option<String> {
        if is_indicator(first.as_bytes()[0]) {
            return None;
        }
        let mut text = plain_piece(first)?.to_owned();
        while let Some(next) = self.continuation(indent) {
            if next.starts_with('#') {
                return None;
            }
            text.push(' ');
            text.push_str(plain_piece(next)?);
        }
        surely_string(&text).then_some(text)
    }

    /// A double-quoted scalar with no escapes, continued on lines deeper than `indent`.
    fn double_quoted(&mut self, first: &'t str, indent: Option<usize>) -> Option<String> {
        let mut text = String::new();
        let mut piece = &first[1..];
        loop {
            match memchr::memchr2(b'"', b'\\', piece.as_bytes()) {
                Some(i) if piece.as_bytes()[i] == b'"' => {
                    text.push_str(&piece[..i]);
                    return self.closed(text, &piece[i + 1..], indent);
                }
                Some(_) => return None,
                None => {
                    text.push_str(piece.trim_end_matches(' '));
                    piece = self.continuation(indent)?;
                    text.push(' ');
                }
            }
        }
    }

    /// A single-quoted scalar (`''` is a quote), continued on lines deeper than `indent`.
    fn single_quoted(&mut self, first: &'t str, indent: Option<usize>) -> Option<String> {
        let mut text = String::new();
        let mut piece = &first[1..];
        loop {
            match memchr::memchr(b'\'', piece.as_bytes()) {
                Some(i) if piece.as_bytes().get(i + 1) == Some(&b'\'') => {
                    text.push_str(&piece[..=i]);
                    piece = &piece[i + 2..];
                }
                Some(i) => {
                    text.push_str(&piece[..i]);
                    return self.closed(text, &piece[i + 1..], indent);
                }
                None => {
                    text.push_str(piece.trim_end_matches(' '));
                    piece = self.continuation(indent)?;
                    text.push(' ');
                }
            }
        }
    }

    /// A quoted scalar's text, when only spaces follow its closing quote and no deeper line
    /// follows it.
    fn closed(&self, text: String, after: &str, indent: Option<usize>) -> Option<String> {
        let only_spaces = after.bytes().all(|b| b == b' ');
        (only_spaces && !self.continues(indent)).then_some(text)
    }

    /// A block scalar (`|`, `|-`, `>`, `>-`) of a key in a mapping at column `indent`,
    /// whose lines all sit at one deeper column with no trailing spaces.
    fn block(&mut self, header: &str, indent: usize) -> Option<String> {
        let (literal, clip) = match header.trim_end_matches(' ') {
            "|" => (true, true),
            "|-" => (true, false),
            ">" => (false, true),
            ">-" => (false, false),
            _ => return None,
        };
        let column = self.lines.cur.filter(|l| l.indent > indent)?.indent;
        let mut text = String::new();
        let mut newline = false;
        while let Some(line) = self.lines.cur {
            if line.indent < column {
                break;
            }
            if line.indent > column || line.content.ends_with(' ') {
                return None;
            }
            if !text.is_empty() {
                text.push(if literal { '\n' } else { ' ' });
            }
            text.push_str(line.content);
            newline = line.newline;
            self.lines.advance();
        }
        if clip && newline {
            text.push('\n');
        }
        Some(text)
    }
}

/// A one-line flow list of plain strings (`[a, b c]`, `[]`), with nothing after it.
fn flow_list(text: &str) -> Option<Node> {
    let inner = text
        .strip_prefix('[')?
        .trim_end_matches(' ')
        .strip_suffix(']')?;
    let mut items = Vec::new();
    if inner.bytes().all(|b| b == b' ') {
        return Some(Node::Seq(items));
    }
    for item in inner.split(',') {
        let item = item.trim_matches(' ');
        let bytes = item.as_bytes();
        let plain = bytes.first().is_some_and(|b| !is_indicator(*b))
            && !bytes
                .iter()
                .any(|b| matches!(b, b'[' | b']' | b'{' | b'}' | b':' | b'#' | b'\'' | b'"'))
            && surely_string(item);
        if !plain {
            return None;
        }
        items.push(string(item.to_owned()));
    }
    Some(Node::Seq(items))
}

/// A string scalar.
fn string(text: String) -> Node {
    Node::Scalar {
        text,
        kind: ScalarKind::Str,
    }
}

/// The key and the rest of a `key:` line, for a key of ASCII letters, digits, `_` and `-`
/// (not first) followed by `:` and a space or the end of the line.
fn split_key(content: &str) -> Option<(&str, &str)> {
    let bytes = content.as_bytes();
    if !bytes.first()?.is_ascii_alphabetic() && bytes[0] != b'_' {
        return None;
    }
    let len = bytes
        .iter()
        .position(|b| !(b.is_ascii_alphanumeric() || *b == b'_' || *b == b'-'))?;
    if len > MAX_KEY_BYTES || bytes[len] != b':' {
        return None;
    }
    let after = &content[len + 1..];
    if !(after.is_empty() || after.starts_with(' ')) {
        return None;
    }
    Some((&content[..len], after.trim_start_matches(' ')))
}

/// A byte that cannot start a plain scalar here (YAML indicators, and `-`, `?`, `:`, which
/// can in some cases).
fn is_indicator(b: u8) -> bool {
    matches!(
        b,
        b'-' | b'?'
            | b':'
            | b','
            | b'['
            | b']'
            | b'{'
            | b'}'
            | b'#'
            | b'&'
            | b'*'
            | b'!'
            | b'|'
            | b'>'
            | b'\''
            | b'"'
            | b'%'
            | b'@'
            | b'`'
    )
}

/// One line of a plain scalar without its trailing spaces, when it holds no `: `, no ` #`
/// and does not end with `:` (each would end the scalar).
fn plain_piece(line: &str) -> Option<&str> {
    let piece = line.trim_end_matches(' ');
    let bytes = piece.as_bytes();
    let mut from = 0;
    while let Some(i) = memchr::memchr2(b':', b'#', &bytes[from..]) {
        let at = from + i;
        let stops = match bytes[at] {
            b':' => bytes.get(at + 1).is_none_or(|b| *b == b' '),
            _ => at > 0 && bytes[at - 1] == b' ',
        };
        if stops {
            return None;
        }
        from = at + 1;
    }
    Some(piece)
}

/// Whether YAML (as `serde_yaml` resolves a plain scalar) reads this as a string: not
/// null, a boolean, an integer or a float. Errs on the side of "maybe not".
///
/// A text starting with a digit is a string when it holds something no number can: two
/// dots (`1.0.0`), a sign not after an exponent `e` (`2026-03-06`), or any character but
/// digits, `.`, `e`/`E` and signs (`3rd`, `10 items`) — unless it starts `0x`, `0o` or `0b`.
fn surely_string(text: &str) -> bool {
    let bytes = text.as_bytes();
    let Some(&first) = bytes.first() else {
        return false;
    };
    if matches!(first, b'+' | b'-' | b'.' | b'~') {
        return false;
    }
    if !first.is_ascii_digit() {
        return !matches!(
            text,
            "null" | "Null" | "NULL" | "true" | "True" | "TRUE" | "false" | "False" | "FALSE"
        );
    }
    if first == b'0' && matches!(bytes.get(1), Some(b'x' | b'o' | b'b')) {
        return false;
    }
    let mut dots = 0;
    for (i, &b) in bytes.iter().enumerate() {
        match b {
            b'0'..=b'9' | b'e' | b'E' => {}
            b'.' => {
                dots += 1;
                if dots > 1 {
                    return true;
                }
            }
            // `i > 0`: the first byte is a digit.
            b'+' | b'-' => {
                if !matches!(bytes[i - 1], b'e' | b'E') {
                    return true;
                }
            }
            _ => return true,
        }
    }
    false
}

#[cfg(test)]
#[allow(clippy::unwrap_used, clippy::expect_used, clippy::panic)]
mod tests {
    use super::*;

    /// The fast path, when it reads `text`, agrees with the `serde_yaml` path; returns
    /// whether it read it.
    fn agrees(text: &str) -> bool {
        let Some(fast) = parse(text) else {
            return false;
        };
        match super::super::parse_with_serde(text) {
            Ok(slow) => assert_eq!(fast, slow, "paths differ on {text:?}"),
            Err(e) => panic!("fast path read {text:?}, serde_yaml refused it: {e:?}"),
        }
        true
    }

    /// Documents the fast path reads (each checked against the serde path).
    const READ: &[&str] = &[
        "name: pdf\ndescription: Fill PDF forms. Use when a form is attached.\n",
        "name: pdf\ndescription: \"Fill: forms, # not a comment\"\n",
        "name: pdf\ndescription: 'It''s ok: ''quoted'''\n",
        "name: pdf\ndescription: 'a' \n",
        "name: x\ndescription: first line\n  second line\n   third line\nlicense: MIT\n",
        "name: x\ndescription: \"first\n  second \n  third\"\nb: c\n",
        "name: x\ndescription: \"\n  second\n  \"\n",
        "name: x\ndescription: 'first ''q''\n  second'\n",
        "name: x\ndescription: |\n  line one\n  line: two # kept\nnext: v\n",
        "name: x\ndescription: |-\n  line one\n  line two\n",
        "name: x\ndescription: >\n  folded one\n  folded two\n",
        "name: x\ndescription: >-\n  folded one\n  folded two\n",
        "name: x\ndescription: |\n  no final newline",
        "name: x\nmetadata:\n  author: me\n  version: \"1.0\"\n  tags:\n    - a\n    - 'b c'\n    - \"d: e\"\nlicense: MIT\n",
        "name: x\nmetadata:\nlicense:\n",
        "name: x\nallowed-tools:\n  - Read\n  - Bash(git:*)\n",
        "name: x\nname: y\nmetadata:\n  a: x1\n  a: x2\n",
        "name: héllo — wörld 日本\ndescription: emoji 🚀 and NBSP\u{a0}inside\u{a0}\n",
        "name: C#\ndescription: a:b, http://x.y/z, [brackets] {braces} and trailing   \n",
        "name: x\ndescription: Infinity\nother: nan\nthird: inf\nfourth: yes\nfifth: No\n",
        "name: x\n_private: v\nk-e-y_: v\n",
        "a: \"\"\nb: ''\n",
        "tags: [a, b c,d]\nrequires:\n  mcp: [rube]\nnone: []\nsp: [ ]\nx: [ a ]  \n",
        "v: 1.0.0\nd: 2026-03-06\nt: 3rd party\nu: 10_000\nw: 1.2.3-beta\nx: 12:30\ny: 1e5x\n",
        "a: b\n  c\n  - d\n  \"e\" 'f'\n",
    ];

    /// Documents the fast path declines (the serde path reads them or reports the error).
    const DECLINED: &[&str] = &[
        "",
        "# comment\nname: x\n",
        "name: x\n\ndescription: y\n",
        "name: x # comment\n",
        "name: x\r\ndescription: y\r\n",
        "name: x\n\tdescription: y\n",
        "version: 1.0\n",
        "version: 10\n",
        "version: 1e5\n",
        "version: 1e-5\n",
        "version: 1E+5\n",
        "version: 0x1F\n",
        "version: 0b101\n",
        "version: 0o17\n",
        "version: 0123\n",
        "version: 340282366920938463463374607431768211455\n",
        "version: .5\n",
        "version: +1\n",
        "flag: true\n",
        "empty: ~\n",
        "n: null\n",
        "tags: [a, b,]\n",
        "tags: [a, , b]\n",
        "tags: [a, [b]]\n",
        "tags: [a, 'b']\n",
        "tags: [a: b]\n",
        "tags: [a, 1]\n",
        "tags: [a, b] # c\n",
        "tags: [a, b] x\n",
        "tags: [a,\n  b]\n",
        "tags: [a, b]\n  c\n",
        "m: {a: b}\n",
        "a: &x v\nb: *x\n",
        "a: !!str 1\n",
        "d: Use when: asked\n",
        "d: ends with:\n",
        "d: \"escape \\n\"\n",
        "d: \"unclosed\n",
        "d: 'unclosed\n",
        "d: \"x\" trailing\n",
        "d: |\n  a\n    deeper\n",
        "d: |+\n  a\n",
        "d: |2\n  a\n",
        "d: |\n  trailing \n",
        "d: x\n  # comment\n",
        "d: first line\n  second line\n   third: line\n",
        "list:\n- a\n- b\n",
        "list:\n  - a\n  - b: c\n",
        "list:\n  - a\n    continued\n",
        "- a\n- b\n",
        "  indented: root\n",
        "a:\n    b: c\n  d: e\n",
        "\"quoted\": key\n",
        "key : v\n",
        "key:v\n",
        "1: numeric key\n",
        "a: NEL\u{85}here\n",
        "a: LS\u{2028}here\n",
        "a: BOM\u{feff}here\n",
        "a: DEL\u{7f}here\n",
        "a: -2chat\n",
        "a: b\n  c: d\n",
        "a: \"x\"\n  more\n",
        "   \n",
        "a: b\n   ",
    ];

    #[test]
    fn reads_common_frontmatter_as_serde_does() {
        for text in READ {
            assert!(agrees(text), "fast path declined {text:?}");
        }
    }

    #[test]
    fn declines_what_it_does_not_handle() {
        for text in DECLINED {
            assert!(parse(text).is_none(), "fast path read {text:?}");
        }
    }

    #[test]
    fn duplicates_in_large_mappings_are_found_in_order() {
        let mut doc: String = (0..40).map(|i| format!("k{i}: v\n")).collect();
        doc.push_str("k3: again\nm:\n");
        doc.extend((0..40).map(|i| format!("  n{}: v\n", i % 30)));
        doc.push_str("k39: last\n");
        assert!(agrees(&doc));
        let parsed = parse(&doc).unwrap();
        assert_eq!(parsed.duplicate_keys.len(), 12);
        assert_eq!(parsed.duplicate_keys[0], "k3");
        assert_eq!(parsed.duplicate_keys[1], "m.n0");
    }

    /// Pieces the generated documents are made of: keys, and values after `key:`.
    const KEYS: &[&str] = &["name", "description", "a", "name", "x-y", "_k", "metadata"];
    const VALUES: &[&str] = &[
        " plain value",
        " plain: colon",
        " plain:colon",
        " trailing colon:",
        " hash # comment",
        " hash#inside",
        " 'single ''quoted'' '",
        " \"double: quoted # x\"",
        " \"two\n   lines\"",
        " 'two\n   lines '",
        " \"no\\escape\"",
        " \"unclosed",
        " plain\n  continued\n  again",
        " plain\n  continued: not",
        " plain\n  # comment",
        " |\n  literal\n  lines",
        " |-\n  literal",
        " >\n  folded\n  lines",
        " >-\n   folded",
        " |\n  a\n   b",
        "",
        "\n  inner: v\n  inner: w",
        "\n  - item\n  - 'quoted item'\n  - \"x: y\"",
        "\n  - item\n    more",
        "\n- item",
        " 1.0",
        " 1.0.0",
        " 2026-03-06",
        " 1e5",
        " 1e-5",
        " 12e",
        " 3rd",
        " 0x1F",
        " 99999999999999999999999999",
        " 1_000",
        " true",
        " ~",
        " [a, b]",
        " [a, b c]",
        " [rube]",
        " []",
        " [a,]",
        " [a, 'b']",
        " [1.0.0, x]",
        " [a]\n  more",
        " {a: b}",
        " &a x",
        " *a",
        " !tag x",
        " -dash",
        " ? q",
        " @at",
        " `tick`",
        " %pct",
        " é — ü",
        " a\u{a0}",
        " x\n   \n  y",
        " x\n\n  y",
        "  two spaces",
        " x  ",
        "\n    deep: v\n  shallow: w",
    ];

    #[test]
    fn generated_documents_agree() {
        // A fixed linear congruential generator: the same documents on every run.
        let mut state: u64 = 0x2545_f491_4f6c_dd1d;
        let mut next = |n: usize| {
            state = state
                .wrapping_mul(6_364_136_223_846_793_005)
                .wrapping_add(1_442_695_040_888_963_407);
            (state >> 33) as usize % n
        };
        let mut read = 0;
        let total = 20_000;
        for _ in 0..total {
            let mut doc = String::new();
            for _ in 0..1 + next(4) {
                let indent = if next(4) == 0 { "  " } else { "" };
                doc.push_str(indent);
                doc.push_str(KEYS[next(KEYS.len())]);
                doc.push(':');
                let value = VALUES[next(VALUES.len())];
                if indent.is_empty() {
                    doc.push_str(value);
                } else {
                    doc.push_str(&value.replace('\n', "\n  "));
                }
                doc.push('\n');
            }
            if agrees(&doc) {
                read += 1;
            }
        }
        // Enough of them take the fast path for the comparison to mean something.
        assert!(read > total / 10, "{read} of {total} read");
    }

    /// Every `SKILL.md` under a folder, recursively.
    fn skill_files(dir: &std::path::Path, out: &mut Vec<std::path::PathBuf>) {
        let Ok(entries) = std::fs::read_dir(dir) else {
            return;
        };
        for entry in entries.flatten() {
            let path = entry.path();
            if entry.file_type().is_ok_and(|t| t.is_dir()) {
                skill_files(&path, out);
            } else if entry.file_name() == "SKILL.md" {
                out.push(path);
            }
        }
    }

    /// Both paths agree on the frontmatter of every `SKILL.md` under the folder named by
    /// `SKILL_FORMAT_YAML_CORPUS` (run with `--ignored`; skipped when it is unset).
    #[test]
    #[ignore = "needs a corpus folder in SKILL_FORMAT_YAML_CORPUS"]
    fn a_corpus_agrees() {
        let Some(dir) = std::env::var_os("SKILL_FORMAT_YAML_CORPUS") else {
            return;
        };
        let mut files = Vec::new();
        skill_files(std::path::Path::new(&dir), &mut files);
        let (mut with_frontmatter, mut read) = (0, 0);
        for file in &files {
            let Ok(text) = std::fs::read_to_string(file) else {
                continue;
            };
            let Ok(doc) = crate::split(&text) else {
                continue;
            };
            let Some(fm) = doc.frontmatter else {
                continue;
            };
            with_frontmatter += 1;
            if agrees(fm.text) {
                read += 1;
            }
        }
        println!(
            "{} files, {with_frontmatter} with frontmatter, {read} read by the fast path",
            files.len()
        );
    }
}
