//! The nesting pre-scan: one pass over the bytes that follows the YAML scanner serde_yaml
//! uses (libyaml's) far enough to know where its flow collections (`[`, `{`) open and close,
//! and refuses flow nesting deeper than [`MAX_FLOW_NESTING`] before the parser sees the text.
//!
//! A bracket counts only where the scanner would read it as one: not inside a quoted scalar
//! (double-quoted with backslash escapes, single-quoted with `''`), a comment, a block
//! scalar (`|`, `>`), a tag, or a plain scalar in block context (`pattern: a[b` is text; in
//! a flow collection a bracket ends a plain scalar and nests). To know where a plain or block
//! scalar ends, the pass keeps what libyaml keeps for it: the block indentation stack, the
//! simple key of block context, and whether a simple key is allowed. Where the text is not
//! valid YAML the parser stops at the error, so whatever the pass counts after it only ever
//! refuses a document that fails anyway. The pass is linear: each byte is looked at a bounded
//! number of times, and the indentation stack grows only with the column.

use super::YamlError;

/// The deepest nesting of flow collections (`[`, `{`) a frontmatter may have. The YAML
/// scanner's cost per token grows with the nesting depth, so an unbounded depth makes the
/// parse quadratic in the file size; a pre-scan refuses deeper text before it is parsed.
pub(super) const MAX_FLOW_NESTING: usize = 64;

/// How far (in bytes) after its start libyaml still takes a token for a possible simple key.
const SIMPLE_KEY_REACH: usize = 1024;

/// A possible simple key of block context: where its token started.
#[derive(Clone, Copy)]
struct Key {
    line: u64,
    index: usize,
    column: u64,
}

/// The scanner state the pre-scan keeps (named after libyaml's).
struct Scan<'t> {
    bytes: &'t [u8],
    /// Byte offset of the next character.
    i: usize,
    /// 0-based line and column (in characters) of the next character.
    line: u64,
    column: u64,
    /// Open flow collections.
    depth: usize,
    /// The current block indentation (`-1` at the top) and the enclosing ones.
    indent: i64,
    indents: Vec<i64>,
    /// Whether a simple key may start here.
    allowed: bool,
    /// The possible simple key of block context (flow levels' keys change nothing here).
    key: Option<Key>,
}

/// Refuse `text` when its flow collections nest deeper than [`MAX_FLOW_NESTING`].
pub(super) fn check_nesting(text: &str) -> Result<(), YamlError> {
    let bytes = text.as_bytes();
    // Every bracket opens at most once, so few brackets cannot nest too deep.
    if bytes.iter().filter(|b| matches!(b, b'[' | b'{')).count() <= MAX_FLOW_NESTING {
        return Ok(());
    }
    Scan {
        bytes,
        // A byte-order mark that starts the text is read as its encoding, not as text.
        i: if bytes.starts_with(b"\xEF\xBB\xBF") {
            3
        } else {
            0
        },
        line: 0,
        column: 0,
        depth: 0,
        indent: -1,
        indents: Vec::new(),
        allowed: true,
        key: None,
    }
    .run()
}

fn is_alpha(b: u8) -> bool {
    b.is_ascii_alphanumeric() || b == b'_' || b == b'-'
}

/// A character a tag's URI may hold (`,`, `[` and `]` only in a verbatim tag `!<...>`).
fn is_uri(b: u8, verbatim: bool) -> bool {
    is_alpha(b)
        || b";/?:@&=+$.%!~*'()".contains(&b)
        || (verbatim && matches!(b, b',' | b'[' | b']'))
}

impl Scan<'_> {
    fn at(&self, k: usize) -> u8 {
        self.bytes.get(self.i + k).copied().unwrap_or(0)
    }
    fn is_z(&self, k: usize) -> bool {
        self.i + k >= self.bytes.len()
    }
    fn is_blank(&self, k: usize) -> bool {
        matches!(self.at(k), b' ' | b'\t')
    }
    /// A line break as libyaml reads one: CR, LF, NEL, LS or PS.
    fn is_break(&self, k: usize) -> bool {
        match self.at(k) {
            b'\r' | b'\n' => true,
            0xC2 => self.at(k + 1) == 0x85,
            0xE2 => self.at(k + 1) == 0x80 && matches!(self.at(k + 2), 0xA8 | 0xA9),
            _ => false,
        }
    }
    fn is_breakz(&self, k: usize) -> bool {
        self.is_z(k) || self.is_break(k)
    }
    fn is_blankz(&self, k: usize) -> bool {
        self.is_blank(k) || self.is_breakz(k)
    }

    /// Step over one character.
    fn skip(&mut self) {
        let width = match self.at(0) {
            b if b < 0x80 => 1,
            b if b >= 0xF0 => 4,
            b if b >= 0xE0 => 3,
            _ => 2,
        };
        self.i = (self.i + width).min(self.bytes.len());
        self.column += 1;
    }

    /// Step over one line break (CR LF counts as one).
    fn skip_line(&mut self) {
        if self.at(0) == b'\r' && self.at(1) == b'\n' {
            self.i += 2;
        } else {
            self.skip();
        }
        self.column = 0;
        self.line += 1;
    }

    /// At column 0, a document marker (`---` or `...`) followed by a blank or the end.
    fn at_document_marker(&self) -> bool {
        self.column == 0
            && ((self.at(0) == b'-' && self.at(1) == b'-' && self.at(2) == b'-')
                || (self.at(0) == b'.' && self.at(1) == b'.' && self.at(2) == b'.'))
            && self.is_blankz(3)
    }

    fn save_key(&mut self) {
        if self.depth == 0 && self.allowed {
            self.key = Some(Key {
                line: self.line,
                index: self.i,
                column: self.column,
            });
        }
    }
    fn remove_key(&mut self) {
        if self.depth == 0 {
            self.key = None;
        }
    }

    fn roll_indent(&mut self, column: u64) {
        let column = i64::try_from(column).unwrap_or(i64::MAX);
        if self.depth == 0 && self.indent < column {
            self.indents.push(self.indent);
            self.indent = column;
        }
    }
    fn unroll_indent(&mut self, column: i64) {
        if self.depth != 0 {
            return;
        }
        while self.indent > column {
            self.indent = self.indents.pop().unwrap_or(-1);
        }
    }

    fn run(mut self) -> Result<(), YamlError> {
        loop {
            self.skip_to_token();
            if let Some(k) = self.key {
                if k.line < self.line || k.index + SIMPLE_KEY_REACH < self.i {
                    self.key = None;
                }
            }
            self.unroll_indent(i64::try_from(self.column).unwrap_or(i64::MAX));
            if self.is_z(0) {
                return Ok(());
            }
            let start = self.i;
            self.token()?;
            if self.i == start {
                // A character no token starts with: the parser stops here.
                self.skip();
            }
        }
    }

    /// Skip blanks, comments and line breaks up to where a token starts.
    fn skip_to_token(&mut self) {
        loop {
            if self.column == 0 && self.at(0) == 0xEF && self.at(1) == 0xBB && self.at(2) == 0xBF {
                self.skip();
            }
            while self.at(0) == b' ' || ((self.depth > 0 || !self.allowed) && self.at(0) == b'\t') {
                self.skip();
            }
            if self.at(0) == b'#' {
                while !self.is_breakz(0) {
                    self.skip();
                }
            }
            if !self.is_break(0) {
                return;
            }
            self.skip_line();
            if self.depth == 0 {
                self.allowed = true;
            }
        }
    }

    /// Read the token that starts here.
    fn token(&mut self) -> Result<(), YamlError> {
        let c = self.at(0);
        let flow = self.depth > 0;
        if self.column == 0 && c == b'%' {
            // A directive takes its whole line (a comment may end it).
            self.unroll_indent(-1);
            self.remove_key();
            self.allowed = false;
            while !self.is_breakz(0) {
                self.skip();
            }
            if self.is_break(0) {
                // Its line break is its own: no simple key is allowed after it.
                self.skip_line();
            }
        } else if self.at_document_marker() {
            self.unroll_indent(-1);
            self.remove_key();
            self.allowed = false;
            self.i += 3;
            self.column += 3;
        } else if matches!(c, b'[' | b'{') {
            self.save_key();
            self.depth += 1;
            if self.depth > MAX_FLOW_NESTING {
                return Err(YamlError {
                    kind: super::YamlErrorKind::Invalid,
                    message: format!(
                        "lists and mappings are nested more than {MAX_FLOW_NESTING} deep: flatten the frontmatter"
                    ),
                    line: u32::try_from(self.line + 1).ok(),
                    column: u32::try_from(self.column + 1).ok(),
                });
            }
            self.allowed = true;
            self.skip();
        } else if matches!(c, b']' | b'}') {
            self.remove_key();
            self.depth = self.depth.saturating_sub(1);
            self.allowed = false;
            self.skip();
        } else if c == b',' {
            self.remove_key();
            self.allowed = true;
            self.skip();
        } else if c == b'-' && self.is_blankz(1) {
            self.roll_indent(self.column);
            self.remove_key();
            self.allowed = true;
            self.skip();
        } else if c == b'?' && (flow || self.is_blankz(1)) {
            self.roll_indent(self.column);
            self.remove_key();
            self.allowed = !flow;
            self.skip();
        } else if c == b':' && (flow || self.is_blankz(1)) {
            // In a flow collection the key is the collection's own, which changes nothing
            // here; block context's key waits for the collection to close.
            let key = if flow { None } else { self.key.take() };
            match key {
                Some(key) => {
                    self.roll_indent(key.column);
                    self.allowed = false;
                }
                None => {
                    self.roll_indent(self.column);
                    self.allowed = !flow;
                }
            }
            self.skip();
        } else if matches!(c, b'*' | b'&') {
            self.save_key();
            self.allowed = false;
            self.skip();
            while is_alpha(self.at(0)) {
                self.skip();
            }
        } else if c == b'!' {
            self.save_key();
            self.allowed = false;
            self.tag();
        } else if matches!(c, b'|' | b'>') && !flow {
            self.remove_key();
            self.allowed = true;
            self.block_scalar();
        } else if matches!(c, b'\'' | b'"') {
            self.save_key();
            self.allowed = false;
            self.quoted(c);
        } else if !(self.is_blankz(0) || b"-?:,[]{}#&*!|>'\"%@`".contains(&c))
            || (c == b'-' && !self.is_blank(1))
            || (!flow && matches!(c, b'?' | b':') && !self.is_blankz(1))
        {
            self.save_key();
            self.allowed = false;
            self.plain();
        }
        Ok(())
    }

    /// A tag: `!<uri>` (verbatim), or `!`, a handle and a suffix, up to a blank.
    fn tag(&mut self) {
        let verbatim = self.at(1) == b'<';
        self.skip();
        if verbatim {
            self.skip();
        }
        while !self.is_z(0) && is_uri(self.at(0), verbatim) {
            self.skip();
        }
        if verbatim && self.at(0) == b'>' {
            self.skip();
        }
    }

    /// A quoted scalar opened by `quote` here, up to its closing quote.
    fn quoted(&mut self, quote: u8) {
        self.skip();
        loop {
            if self.at_document_marker() || self.is_z(0) {
                return;
            }
            while !self.is_blankz(0) {
                let c = self.at(0);
                if quote == b'\'' && c == b'\'' && self.at(1) == b'\'' {
                    self.skip();
                    self.skip();
                } else if c == quote {
                    break;
                } else if quote == b'"' && c == b'\\' && self.is_break(1) {
                    self.skip();
                    self.skip_line();
                    break;
                } else if quote == b'"' && c == b'\\' {
                    self.skip();
                    self.skip();
                } else {
                    self.skip();
                }
            }
            if self.at(0) == quote {
                self.skip();
                return;
            }
            while self.is_blank(0) || self.is_break(0) {
                if self.is_blank(0) {
                    self.skip();
                } else {
                    self.skip_line();
                }
            }
        }
    }

    /// A plain scalar: in block context it runs on over lines indented deeper than the
    /// block it is in, and brackets in it are text; in flow context they end it.
    fn plain(&mut self) {
        let flow = self.depth > 0;
        let indent = self.indent + 1;
        let mut leading_blanks = false;
        loop {
            if self.at_document_marker() || self.at(0) == b'#' {
                break;
            }
            while !self.is_blankz(0) {
                let c = self.at(0);
                if (c == b':' && self.is_blankz(1))
                    || (flow && matches!(c, b',' | b'[' | b']' | b'{' | b'}'))
                {
                    break;
                }
                self.skip();
                leading_blanks = false;
            }
            if !(self.is_blank(0) || self.is_break(0)) {
                break;
            }
            while self.is_blank(0) || self.is_break(0) {
                if self.is_blank(0) {
                    self.skip();
                } else {
                    self.skip_line();
                    leading_blanks = true;
                }
            }
            if !flow && i64::try_from(self.column).unwrap_or(i64::MAX) < indent {
                break;
            }
        }
        if leading_blanks {
            self.allowed = true;
        }
    }

    /// A block scalar (`|` or `>`): its header line, then every line indented at least as
    /// deep as its first (or as its indentation indicator says).
    fn block_scalar(&mut self) {
        self.skip();
        let mut increment = 0;
        for _ in 0..2 {
            match self.at(0) {
                b'+' | b'-' => self.skip(),
                d @ b'1'..=b'9' => {
                    increment = i64::from(d - b'0');
                    self.skip();
                }
                _ => break,
            }
        }
        while self.is_blank(0) {
            self.skip();
        }
        if self.at(0) == b'#' {
            while !self.is_breakz(0) {
                self.skip();
            }
        }
        if self.is_break(0) {
            self.skip_line();
        }
        let mut indent = 0;
        if increment != 0 {
            indent = if self.indent >= 0 {
                self.indent + increment
            } else {
                increment
            };
        }
        self.block_breaks(&mut indent);
        while i64::try_from(self.column).unwrap_or(i64::MAX) == indent && !self.is_z(0) {
            while !self.is_breakz(0) {
                self.skip();
            }
            if self.is_break(0) {
                self.skip_line();
            }
            self.block_breaks(&mut indent);
        }
    }

    /// The indentation and empty lines before a block scalar's next line; an `indent` of 0
    /// is set from the first non-empty line.
    fn block_breaks(&mut self, indent: &mut i64) {
        let mut max_indent = 0;
        loop {
            let column = |s: &Self| i64::try_from(s.column).unwrap_or(i64::MAX);
            while (*indent == 0 || column(self) < *indent) && self.at(0) == b' ' {
                self.skip();
            }
            max_indent = max_indent.max(column(self));
            if !self.is_break(0) {
                break;
            }
            self.skip_line();
        }
        if *indent == 0 {
            *indent = max_indent.max(self.indent + 1).max(1);
        }
    }
}
