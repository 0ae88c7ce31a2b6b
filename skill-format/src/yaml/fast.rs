//! The fast path of [`super::parse`]: a reader for the plain block YAML most frontmatter is
//! written in, giving the same [`Parsed`] as the `serde_yaml` path or declining.
//!
//! It reads a top-level block mapping of `key: value` lines whose values are plain, quoted
//! or block (`|`, `|-`, `>`, `>-`) strings, an empty value (null), a nested block mapping,
//! a block list of one-line strings or a one-line flow list of plain or quoted strings.
//! Anything else — a comment, a blank line, a tab, a CR, a flow mapping or nested flow
//! collection, an anchor, alias or tag, an escape, a plain value that YAML could read
//! as a number, boolean or null, a more-indented line inside a block scalar, a character the
//! YAML reader refuses or reads as a line break — makes it return `None`, and the caller
//! takes the `serde_yaml` path, which also produces every error message. Declining is always
//! safe; the tests compare both paths on many documents.
//!
//! It counts nodes as the `serde_yaml` path does (see [`super::budget`]) and declines a
//! document of more than `MAX_YAML_NODES`, which that path then refuses with its line.

use std::borrow::Cow;
use std::collections::HashSet;

use super::budget::MAX_YAML_NODES;
use super::{Node, Parsed, ScalarKind};

/// Deepest nesting of block mappings read here (`serde_yaml` allows 128).
const MAX_DEPTH: usize = 16;
/// Longest key read here (the YAML scanner refuses a simple key over 1024 characters).
const MAX_KEY_BYTES: usize = 256;
/// A mapping with more keys than this checks for duplicates with a hash set.
const SMALL_MAP: usize = 16;
/// The keys a mapping has room for before it grows.
const MAP_CAPACITY: usize = 8;

/// Read `text` if it is in the subset this path handles; `None` otherwise.
pub(super) fn parse(text: &str) -> Option<Parsed<'_>> {
    if !plain_text(text.as_bytes()) {
        return None;
    }
    let mut reader = Reader {
        lines: Lines::new(text),
        path: Vec::new(),
        duplicates: Vec::new(),
        nodes: 0,
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
    // Mostly printable ASCII and line feeds: checked in one pass the compiler vectorises,
    // then only the blank lines are looked for.
    let printable = bytes.iter().fold(true, |ok, &b| {
        ok & (b == b'\n' || (0x20..=0x7e).contains(&b))
    });
    if printable {
        return no_blank_line(bytes);
    }
    plain_text_bytewise(bytes)
}

/// Whether no line of `bytes` (printable ASCII and line feeds) is empty or only spaces; a
/// last line without `\n` must not be (the empty text after a last `\n` is no line).
fn no_blank_line(bytes: &[u8]) -> bool {
    let mut rest = bytes;
    while !rest.is_empty() {
        let (line, next) = match memchr::memchr(b'\n', rest) {
            Some(i) => (&rest[..i], &rest[i + 1..]),
            None => (rest, &rest[rest.len()..]),
        };
        if line.iter().all(|&b| b == b' ') {
            return false;
        }
        rest = next;
    }
    true
}

/// [`plain_text`], byte by byte (for text with bytes outside printable ASCII).
fn plain_text_bytewise(bytes: &[u8]) -> bool {
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
    /// Nodes read so far, counted as [`super::budget`] counts them.
    nodes: usize,
}

impl<'t> Reader<'t> {
    /// Count `n` more nodes; `None` (decline) past `MAX_YAML_NODES`.
    fn count(&mut self, n: usize) -> Option<()> {
        self.nodes = self.nodes.saturating_add(n);
        (self.nodes <= MAX_YAML_NODES).then_some(())
    }

    /// A block mapping whose keys sit at column `indent`.
    fn map(&mut self, indent: usize) -> Option<Vec<(Cow<'t, str>, Node<'t>)>> {
        if self.path.len() > MAX_DEPTH {
            return None;
        }
        self.count(1)?;
        // Room for a typical frontmatter mapping's keys at once (growing it key by key
        // moved every entry three times over).
        let mut entries: Vec<(Cow<'t, str>, Node<'t>)> = Vec::with_capacity(MAP_CAPACITY);
        // Keys of a large mapping, for a linear duplicate check (small ones are scanned).
        let mut seen: Option<HashSet<&'t str>> = None;
        while let Some(line) = self.lines.cur {
            if line.indent < indent {
                break;
            }
            if line.indent > indent {
                return None;
            }
            let (key, rest) = split_key(line.content)?;
            self.count(1)?;
            self.lines.advance();
            // A repeated key is reported before its value is read, as the serde path does.
            let repeated = match &mut seen {
                Some(set) => !set.insert(key),
                None => {
                    let repeated = entries.iter().any(|(k, _)| k == key);
                    if entries.len() >= SMALL_MAP {
                        // Every key here was borrowed from the line it is on.
                        let mut set: HashSet<&'t str> = HashSet::with_capacity(entries.len() + 1);
                        set.extend(entries.iter().filter_map(|(k, _)| match k {
                            Cow::Borrowed(k) => Some(*k),
                            Cow::Owned(_) => None,
                        }));
                        set.insert(key);
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
            entries.push((Cow::Borrowed(key), value?));
        }
        Some(entries)
    }

    /// The value of a key with nothing after its `:`: a deeper mapping or list, else null.
    fn nested(&mut self, indent: usize) -> Option<Node<'t>> {
        match self.lines.cur {
            Some(next) if next.indent > indent => {
                if next.content.starts_with("- ") {
                    self.list(next.indent)
                } else {
                    self.map(next.indent).map(Node::Map)
                }
            }
            _ => {
                self.count(1)?;
                Some(Node::Scalar {
                    text: Cow::Borrowed(""),
                    kind: ScalarKind::Null,
                })
            }
        }
    }

    /// A block list of one-line strings whose `-` sit at column `indent`.
    fn list(&mut self, indent: usize) -> Option<Node<'t>> {
        self.count(1)?;
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
            self.count(1)?;
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
    fn value(&mut self, first: &'t str, indent: usize) -> Option<Node<'t>> {
        let text = match first.as_bytes()[0] {
            b'[' => {
                let list = flow_list(first)?;
                if let Node::Seq(items) = &list {
                    self.count(1 + items.len())?;
                }
                return (!self.continues(Some(indent))).then_some(list);
            }
            b'"' => self.double_quoted(first, Some(indent))?,
            b'\'' => self.single_quoted(first, Some(indent))?,
            b'|' | b'>' => Cow::Owned(self.block(first, indent)?),
            _ => self.plain(first, Some(indent))?,
        };
        self.count(1)?;
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
    fn plain(&mut self, first: &'t str, indent: Option<usize>) -> Option<Cow<'t, str>> {
        if is_indicator(first.as_bytes()[0]) {
            return None;
        }
        // One line is a slice of it; continued lines are joined by spaces.
        let mut text = Cow::Borrowed(plain_piece(first)?);
        while let Some(next) = self.continuation(indent) {
            if next.starts_with('#') {
                return None;
            }
            let joined = text.to_mut();
            joined.push(' ');
            joined.push_str(plain_piece(next)?);
        }
        surely_string(&text).then_some(text)
    }

    /// A double-quoted scalar with no escapes, continued on lines deeper than `indent`.
    fn double_quoted(&mut self, first: &'t str, indent: Option<usize>) -> Option<Cow<'t, str>> {
        let mut text = String::new();
        let mut piece = &first[1..];
        let mut continued = false;
        loop {
            match memchr::memchr2(b'"', b'\\', piece.as_bytes()) {
                // Closed on its first line: the text between the quotes.
                Some(i) if piece.as_bytes()[i] == b'"' && !continued => {
                    return self.closed(Cow::Borrowed(&piece[..i]), &piece[i + 1..], indent);
                }
                Some(i) if piece.as_bytes()[i] == b'"' => {
                    text.push_str(&piece[..i]);
                    return self.closed(Cow::Owned(text), &piece[i + 1..], indent);
                }
                Some(_) => return None,
                None => {
                    text.push_str(piece.trim_end_matches(' '));
                    piece = self.continuation(indent)?;
                    text.push(' ');
                    continued = true;
                }
            }
        }
    }

    /// A single-quoted scalar (`''` is a quote), continued on lines deeper than `indent`.
    fn single_quoted(&mut self, first: &'t str, indent: Option<usize>) -> Option<Cow<'t, str>> {
        let mut text = String::new();
        let mut piece = &first[1..];
        let mut changed = false;
        loop {
            match memchr::memchr(b'\'', piece.as_bytes()) {
                Some(i) if piece.as_bytes().get(i + 1) == Some(&b'\'') => {
                    text.push_str(&piece[..=i]);
                    piece = &piece[i + 2..];
                    changed = true;
                }
                // Closed on its first line with no `''`: the text between the quotes.
                Some(i) if !changed => {
                    return self.closed(Cow::Borrowed(&piece[..i]), &piece[i + 1..], indent);
                }
                Some(i) => {
                    text.push_str(&piece[..i]);
                    return self.closed(Cow::Owned(text), &piece[i + 1..], indent);
                }
                None => {
                    text.push_str(piece.trim_end_matches(' '));
                    piece = self.continuation(indent)?;
                    text.push(' ');
                    changed = true;
                }
            }
        }
    }

    /// A quoted scalar's text, when only spaces follow its closing quote and no deeper line
    /// follows it.
    fn closed(
        &self,
        text: Cow<'t, str>,
        after: &str,
        indent: Option<usize>,
    ) -> Option<Cow<'t, str>> {
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

/// A one-line flow list of strings (`[a, b c]`, `["x, y", 'it''s']`, `[]`), with nothing
/// after it. Items are plain (no flow indicator, `:`, `#` or quote in them), double-quoted
/// without escapes, or single-quoted; an empty item (`[a, , b]`, `[a,]`) declines.
fn flow_list(text: &str) -> Option<Node<'_>> {
    let inner = text
        .strip_prefix('[')?
        .trim_end_matches(' ')
        .strip_suffix(']')?;
    let mut items = Vec::new();
    let mut rest = inner.trim_start_matches(' ');
    if rest.is_empty() {
        return Some(Node::Seq(items));
    }
    loop {
        let (item, after) = match rest.as_bytes()[0] {
            b'"' => {
                let body = &rest[1..];
                let end = memchr::memchr2(b'"', b'\\', body.as_bytes())?;
                if body.as_bytes()[end] != b'"' {
                    return None;
                }
                (Cow::Borrowed(&body[..end]), &body[end + 1..])
            }
            b'\'' => flow_single_quoted(&rest[1..])?,
            _ => {
                let end = memchr::memchr(b',', rest.as_bytes()).unwrap_or(rest.len());
                let item = rest[..end].trim_end_matches(' ');
                let bytes = item.as_bytes();
                let plain = bytes.first().is_some_and(|b| !is_indicator(*b))
                    && !bytes.iter().any(|b| {
                        matches!(b, b'[' | b']' | b'{' | b'}' | b':' | b'#' | b'\'' | b'"')
                    })
                    && surely_string(item);
                if !plain {
                    return None;
                }
                (Cow::Borrowed(item), &rest[end..])
            }
        };
        items.push(string(item));
        let after = after.trim_start_matches(' ');
        if after.is_empty() {
            return Some(Node::Seq(items));
        }
        rest = after.strip_prefix(',')?.trim_start_matches(' ');
        if rest.is_empty() {
            return None;
        }
    }
}

/// A single-quoted flow item after its opening quote (`''` is a quote): its text and what
/// follows the closing quote.
fn flow_single_quoted(body: &str) -> Option<(Cow<'_, str>, &str)> {
    let mut text = String::new();
    let mut piece = body;
    loop {
        let i = memchr::memchr(b'\'', piece.as_bytes())?;
        if piece.as_bytes().get(i + 1) == Some(&b'\'') {
            text.push_str(&piece[..=i]);
            piece = &piece[i + 2..];
        } else if piece.len() == body.len() {
            // No `''` before the closing quote: the text between the quotes.
            return Some((Cow::Borrowed(&piece[..i]), &piece[i + 1..]));
        } else {
            text.push_str(&piece[..i]);
            return Some((Cow::Owned(text), &piece[i + 1..]));
        }
    }
}

/// A string scalar.
fn string(text: Cow<'_, str>) -> Node<'_> {
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
mod tests;
