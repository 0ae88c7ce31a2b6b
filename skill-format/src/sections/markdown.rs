//! The little markdown a skill body's sections need: ATX headings, code fences, bullets,
//! inline code spans, and lines with their numbers and byte offsets (`\n` or `\r\n`).

/// `text` without a leading markdown bullet (`- `, `* `, `+ `, or the
/// bullet character alone).
pub(super) fn strip_bullet(text: &str) -> Option<&str> {
    let rest = text
        .strip_prefix('-')
        .or_else(|| text.strip_prefix('*'))
        .or_else(|| text.strip_prefix('+'))?;
    if rest.is_empty() || rest.starts_with([' ', '\t']) {
        Some(rest.trim_start())
    } else {
        None
    }
}

/// An inline code span at the start of `text`: its content (trimmed) and
/// the text after the closing backticks. `None` when `text` does not start
/// with a backtick or the span is not closed.
pub(super) fn code_span(text: &str) -> Option<(&str, &str)> {
    let ticks = text.len() - text.trim_start_matches('`').len();
    if ticks == 0 {
        return None;
    }
    let body = text.get(ticks..)?;
    let mut from = 0;
    while let Some(found) = body.get(from..)?.find('`') {
        let at = from + found;
        let run = body.get(at..)?;
        let run_len = run.len() - run.trim_start_matches('`').len();
        if run_len == ticks {
            return Some((body.get(..at)?.trim(), body.get(at + run_len..)?));
        }
        from = at + run_len;
    }
    None
}

/// An ATX heading: its level (1-6) and its text without closing `#`s.
pub(super) fn atx_heading(line: &str) -> Option<(usize, &str)> {
    let rest = strip_indent(line)?;
    let level = rest.len() - rest.trim_start_matches('#').len();
    if !(1..=6).contains(&level) {
        return None;
    }
    let after = rest.get(level..)?;
    if !(after.is_empty() || after.starts_with([' ', '\t'])) {
        return None;
    }
    let text = after.trim();
    let without_closing = text.trim_end_matches('#');
    let text = if without_closing.is_empty() {
        without_closing
    } else if without_closing.ends_with([' ', '\t']) {
        without_closing.trim_end()
    } else {
        text
    };
    Some((level, text))
}

/// `line` without up to three leading spaces; `None` if it is indented
/// further (an indented code block, not a heading or fence).
pub(super) fn strip_indent(line: &str) -> Option<&str> {
    let rest = line.trim_start_matches(' ');
    if line.len() - rest.len() > 3 {
        None
    } else {
        Some(rest)
    }
}

/// How a line relates to fenced code blocks.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(super) enum LineClass {
    /// An opening or closing fence line.
    Delimiter,
    /// A line inside a fenced code block.
    Code,
    /// Any other line.
    Text,
}

/// Tracks whether the current line is inside a fenced code block.
#[derive(Debug, Default)]
pub(super) struct Fence {
    /// The fence character and run length of the open fence.
    open: Option<(char, usize)>,
}

impl Fence {
    pub(super) fn classify(&mut self, line: &str) -> LineClass {
        let marker = strip_indent(line).and_then(|rest| {
            let c = rest.chars().next().filter(|&c| c == '`' || c == '~')?;
            let len = rest.len() - rest.trim_start_matches(c).len();
            (len >= 3).then(|| (c, len, rest.get(len..).unwrap_or("")))
        });
        match (self.open, marker) {
            (Some((c, len)), Some((mc, mlen, rest)))
                if mc == c && mlen >= len && rest.trim().is_empty() =>
            {
                self.open = None;
                LineClass::Delimiter
            }
            (Some(_), _) => LineClass::Code,
            (None, Some((c, len, info))) if !(c == '`' && info.contains('`')) => {
                self.open = Some((c, len));
                LineClass::Delimiter
            }
            (None, _) => LineClass::Text,
        }
    }
}

/// One line of a string.
#[derive(Debug, Clone, Copy)]
pub(super) struct Line<'a> {
    /// 1-based line number.
    pub(super) number: u32,
    /// Byte offset of the line's start.
    pub(super) start: usize,
    /// Byte offset of the next line's start (past the line ending).
    pub(super) next: usize,
    /// The line without its `\n` or `\r\n`.
    pub(super) text: &'a str,
}

/// Iterator over the lines of a string, with offsets and numbers.
pub(super) struct Lines<'a> {
    text: &'a str,
    pos: usize,
    number: u32,
}

impl<'a> Lines<'a> {
    pub(super) fn new(text: &'a str, first_number: u32) -> Self {
        Lines {
            text,
            pos: 0,
            number: first_number,
        }
    }
}

impl<'a> Iterator for Lines<'a> {
    type Item = Line<'a>;

    fn next(&mut self) -> Option<Line<'a>> {
        let rest = self.text.get(self.pos..).filter(|r| !r.is_empty())?;
        // The `memchr` crate's search is vectorised; `str::find` looks at a word at a time.
        let (raw, consumed) = match memchr::memchr(b'\n', rest.as_bytes()) {
            Some(i) => (rest.get(..i)?, i + 1),
            None => (rest, rest.len()),
        };
        let text = raw.strip_suffix('\r').unwrap_or(raw);
        let line = Line {
            number: self.number,
            start: self.pos,
            next: self.pos + consumed,
            text,
        };
        self.pos += consumed;
        self.number = self.number.saturating_add(1);
        Some(line)
    }
}
