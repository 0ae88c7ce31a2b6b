//! Pulling ```` ```cmd ```` blocks out of model output (markdown-first section 4).

use crate::Error;

/// One command line from a ```` ```cmd ```` block.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct Command<'a> {
    /// The line, trimmed of surrounding whitespace; the `\r` of a CRLF line ending is
    /// removed with it.
    pub text: &'a str,
    /// 1-based line in the output.
    pub line: u32,
    /// 0-based index of its block among the output's complete `cmd` blocks.
    pub block: u32,
}

/// A piece of model output, in the order it was written.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Segment<'a> {
    /// Conversational text between blocks, trimmed, as written (other code fences, a
    /// fence with no language, CRLF line endings and all).
    Text {
        /// The text.
        text: &'a str,
        /// 1-based line of its first non-blank line.
        line: u32,
    },
    /// One command line of a complete `cmd` block.
    Command(Command<'a>),
    /// A `cmd` block that was opened and never closed. Its lines are **not** commands: the
    /// output may have been cut off mid-command, so nothing in it is run. It is reported so
    /// that the host can tell the model (its text is kept, never swallowed).
    Unterminated {
        /// Everything after the opening fence, trimmed.
        text: &'a str,
        /// 1-based line of the opening fence.
        line: u32,
    },
}

/// Model output split into commands and text.
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub struct Extraction<'a> {
    /// Every piece, in output order.
    pub segments: Vec<Segment<'a>>,
}

impl<'a> Extraction<'a> {
    /// The commands, in order.
    pub fn commands(&self) -> impl Iterator<Item = Command<'a>> + '_ {
        self.segments.iter().filter_map(|s| match s {
            Segment::Command(c) => Some(*c),
            _ => None,
        })
    }

    /// The conversational text: the text segments joined by a blank line (the seed's
    /// `text`, with the blocks removed).
    pub fn text(&self) -> String {
        let parts: Vec<&str> = self
            .segments
            .iter()
            .filter_map(|s| match s {
                Segment::Text { text, .. } => Some(*text),
                _ => None,
            })
            .collect();
        parts.join("\n\n")
    }

    /// The unterminated `cmd` blocks: `(line of the opening fence, content)`.
    pub fn unterminated(&self) -> impl Iterator<Item = (u32, &'a str)> + '_ {
        self.segments.iter().filter_map(|s| match s {
            Segment::Unterminated { text, line } => Some((*line, *text)),
            _ => None,
        })
    }
}

/// An open fence: its character, its length, and whether it is a `cmd` block.
#[derive(Clone, Copy)]
struct Fence {
    ch: u8,
    len: usize,
}

/// The fence a line opens, if any: up to any indentation, three or more backticks or tildes,
/// then an info string (a backtick fence's info string may not hold a backtick). Returns the
/// fence and the info string's first word.
fn opening_fence(line: &str) -> Option<(Fence, &str)> {
    let rest = line.trim_start_matches([' ', '\t']);
    let ch = *rest.as_bytes().first()?;
    if ch != b'`' && ch != b'~' {
        return None;
    }
    let len = rest.bytes().take_while(|&b| b == ch).count();
    if len < 3 {
        return None;
    }
    let info = rest.get(len..)?.trim();
    if ch == b'`' && info.contains('`') {
        return None;
    }
    let word = info.split_ascii_whitespace().next().unwrap_or("");
    Some((Fence { ch, len }, word))
}

/// Whether a line closes `fence`: indentation, a run of the fence character at least as
/// long, then only whitespace.
fn closes(line: &str, fence: Fence) -> bool {
    let rest = line.trim_start_matches([' ', '\t']);
    let run = rest.bytes().take_while(|&b| b == fence.ch).count();
    run >= fence.len && rest.get(run..).is_some_and(|r| r.trim().is_empty())
}

enum State {
    /// Outside any fence; text runs from this byte offset and line.
    Text,
    /// Inside another fence (part of the text).
    Other(Fence),
    /// Inside a `cmd` block opened on `line`, whose content starts at byte `start`.
    Cmd {
        fence: Fence,
        line: u32,
        start: usize,
    },
}

/// Split model output into `cmd` commands, text and unterminated blocks, in order.
///
/// * A `cmd` block opens with a line of three or more backticks (or tildes), at any
///   indentation, whose info string's first word is `cmd` (ASCII case-insensitive:
///   ```` ```cmd ````, ```` ``` CMD title ````). It closes with a line of the same
///   character, at least as long, and nothing else.
/// * Every non-blank line of a block is one command, trimmed. Blank lines are skipped.
/// * Other fences (no language, ```` ```bash ````, ...) are text, and a ```` ```cmd ```` line
///   inside one is just text.
/// * `\n` and `\r\n` line endings are both understood.
/// * A `cmd` block still open at the end is a [`Segment::Unterminated`]; its lines are not
///   commands.
///
/// Work is linear in the input; slices point into it.
pub fn extract(output: &str) -> Extraction<'_> {
    let mut segments = Vec::new();
    let mut state = State::Text;
    let mut text_start = 0usize;
    let mut text_line = 1u32;
    let mut pending: Vec<Command<'_>> = Vec::new();
    let mut block = 0u32;
    let mut offset = 0usize;
    let mut number = 0u32;

    while offset < output.len() {
        number = number.saturating_add(1);
        let rest = output.get(offset..).unwrap_or("");
        let (raw, next) = match rest.find('\n') {
            Some(i) => (rest.get(..i).unwrap_or(""), offset + i + 1),
            None => (rest, output.len()),
        };
        let line = raw.strip_suffix('\r').unwrap_or(raw);
        match state {
            State::Text => {
                if let Some((fence, word)) = opening_fence(line) {
                    if word.eq_ignore_ascii_case("cmd") {
                        push_text(&mut segments, output, text_start, offset, text_line);
                        state = State::Cmd {
                            fence,
                            line: number,
                            start: next,
                        };
                    } else {
                        state = State::Other(fence);
                    }
                }
            }
            State::Other(fence) => {
                if closes(line, fence) {
                    state = State::Text;
                }
            }
            State::Cmd { fence, .. } => {
                if closes(line, fence) {
                    segments.extend(pending.drain(..).map(Segment::Command));
                    block = block.saturating_add(1);
                    state = State::Text;
                    text_start = next;
                    text_line = number.saturating_add(1);
                } else {
                    let text = line.trim();
                    if !text.is_empty() {
                        pending.push(Command {
                            text,
                            line: number,
                            block,
                        });
                    }
                }
            }
        }
        offset = next;
    }
    match state {
        State::Cmd { line, start, .. } => segments.push(Segment::Unterminated {
            text: output.get(start..).unwrap_or("").trim(),
            line,
        }),
        State::Text | State::Other(_) => {
            push_text(&mut segments, output, text_start, output.len(), text_line);
        }
    }
    Extraction { segments }
}

/// Like [`extract`], for output that arrives as bytes: invalid UTF-8 is an error (with the
/// offset of the first bad byte), never silently replaced.
pub fn extract_bytes(output: &[u8]) -> Result<Extraction<'_>, Error> {
    match std::str::from_utf8(output) {
        Ok(s) => Ok(extract(s)),
        Err(e) => Err(Error::InvalidUtf8 {
            offset: e.valid_up_to(),
        }),
    }
}

/// Push `output[start..end]`, trimmed, as a text segment unless it is blank.
fn push_text<'a>(
    segments: &mut Vec<Segment<'a>>,
    output: &'a str,
    start: usize,
    end: usize,
    line: u32,
) {
    let raw = output.get(start..end).unwrap_or("");
    let trimmed_start = raw.trim_start();
    if trimmed_start.is_empty() {
        return;
    }
    let skipped = &raw[..raw.len() - trimmed_start.len()];
    let newlines = skipped.bytes().filter(|&b| b == b'\n').count();
    let line = line.saturating_add(u32::try_from(newlines).unwrap_or(u32::MAX));
    segments.push(Segment::Text {
        text: trimmed_start.trim_end(),
        line,
    });
}

#[cfg(test)]
#[allow(clippy::unwrap_used, clippy::expect_used, clippy::panic)]
mod tests {
    use super::*;

    fn cmds<'a>(e: &Extraction<'a>) -> Vec<(&'a str, u32, u32)> {
        e.commands().map(|c| (c.text, c.line, c.block)).collect()
    }

    #[test]
    fn seed_example_section_4_1() {
        let out = "I'll search for your overdue tasks and send them to Bob.\n\n```cmd\ntasks.search --status overdue --assignee me\n```\n\nFound 3 overdue tasks. Sending the report now.\n\n```cmd\nemail.send --to bob@co.com --subject \"Overdue Tasks Report\" --body \"Here are the 3 overdue tasks: ...\"\n```\n\nDone! Report sent to Bob.\n";
        let e = extract(out);
        assert_eq!(
            cmds(&e),
            vec![
                ("tasks.search --status overdue --assignee me", 4, 0),
                (
                    "email.send --to bob@co.com --subject \"Overdue Tasks Report\" --body \"Here are the 3 overdue tasks: ...\"",
                    10,
                    1
                ),
            ]
        );
        assert_eq!(
            e.text(),
            "I'll search for your overdue tasks and send them to Bob.\n\nFound 3 overdue tasks. Sending the report now.\n\nDone! Report sent to Bob."
        );
        // Order is preserved: text, command, text, command, text.
        let kinds: Vec<&str> = e
            .segments
            .iter()
            .map(|s| match s {
                Segment::Text { .. } => "t",
                Segment::Command(_) => "c",
                Segment::Unterminated { .. } => "u",
            })
            .collect();
        assert_eq!(kinds, ["t", "c", "t", "c", "t"]);
        assert_eq!(
            e.segments[2],
            Segment::Text {
                text: "Found 3 overdue tasks. Sending the report now.",
                line: 7
            }
        );
    }

    #[test]
    fn several_lines_per_block_crlf_and_indented_fences() {
        let out = "a\r\n  ```cmd\r\n  get_skill\r\n\r\n  get_skill: email \r\n  ```\r\nb\r\n";
        let e = extract(out);
        assert_eq!(
            cmds(&e),
            vec![("get_skill", 3, 0), ("get_skill: email", 5, 0)]
        );
        assert_eq!(e.text(), "a\n\nb");
        assert_eq!(e.segments.len(), 4);
    }

    #[test]
    fn other_fences_are_text() {
        let out = "```\nemail.send --to x\n```\n```bash\nls\n```cmd\n```\n~~~cmd\nx.y\n~~~\n";
        let e = extract(out);
        assert_eq!(cmds(&e), vec![("x.y", 9, 0)]);
        assert!(e.text().contains("email.send --to x"));
        assert!(e.text().contains("```bash\nls\n```cmd\n```"));
    }

    #[test]
    fn fence_lengths_and_case() {
        let out = "````CMD title\na\n```\nb\n````\n";
        let e = extract(out);
        assert_eq!(cmds(&e), vec![("a", 2, 0), ("```", 3, 0), ("b", 4, 0)]);
        // Two backticks or an info string with a backtick do not open a fence.
        assert_eq!(extract("``cmd\nx\n``\n").commands().count(), 0);
        assert_eq!(extract("```cmd `x`\ny\n```\n").commands().count(), 0);
        // A closing line with text after the run does not close.
        let e = extract("```cmd\na\n``` b\n```\n");
        assert_eq!(cmds(&e), vec![("a", 2, 0), ("``` b", 3, 0)]);
    }

    #[test]
    fn unterminated_is_reported_not_run() {
        let out = "Sending.\n```cmd\nemail.send --to bob --body \"half\n";
        let e = extract(out);
        assert_eq!(e.commands().count(), 0);
        assert_eq!(
            e.unterminated().collect::<Vec<_>>(),
            vec![(2, "email.send --to bob --body \"half")]
        );
        assert_eq!(e.text(), "Sending.");
        // Complete blocks before it still count.
        let e = extract("```cmd\na\n```\n```cmd\nb\n");
        assert_eq!(cmds(&e), vec![("a", 2, 0)]);
        assert_eq!(e.unterminated().count(), 1);
    }

    #[test]
    fn empty_and_whitespace_and_text_only() {
        assert!(extract("").segments.is_empty());
        assert!(extract(" \n\t\r\n").segments.is_empty());
        let e = extract("just words");
        assert_eq!(e.commands().count(), 0);
        assert_eq!(e.text(), "just words");
        let e = extract("```cmd\n\n```\n");
        assert!(e.segments.is_empty());
    }

    #[test]
    fn bytes_must_be_utf8() {
        assert!(extract_bytes(b"```cmd\na\n```").is_ok());
        match extract_bytes(b"ok \xff\xfe") {
            Err(Error::InvalidUtf8 { offset }) => assert_eq!(offset, 3),
            other => panic!("{other:?}"),
        }
    }

    #[test]
    fn unicode_and_nul_survive() {
        let e = extract("héllo ✓\n```cmd\nnote.add --text \"日本\0\"\n```\n");
        assert_eq!(cmds(&e), vec![("note.add --text \"日本\0\"", 3, 0)]);
    }

    #[test]
    fn ten_thousand_blocks_are_linear() {
        let mut s = String::new();
        for i in 0..10_000 {
            s.push_str(&format!("step {i}\n```cmd\na.b --n {i}\n```\n"));
        }
        let e = extract(&s);
        assert_eq!(e.commands().count(), 10_000);
        assert_eq!(e.segments.len(), 20_000);
    }
}
