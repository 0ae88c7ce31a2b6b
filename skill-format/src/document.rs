//! The document grammar: optional BOM, optional frontmatter between delimiter *lines*, body.
//!
//! Written with `nom`. Only a line that is exactly `---` (trailing spaces or tabs allowed, LF
//! or CRLF) opens the frontmatter, and only such a line (or `...`) closes it, so `---` inside a
//! value never ends the frontmatter. The body is everything after the closing line, byte for
//! byte, with its own line endings.

use nom::branch::alt;
use nom::bytes::complete::tag;
use nom::character::complete::{char, space0};
use nom::combinator::{eof, opt, recognize};
use nom::{IResult, Parser};

/// The UTF-8 byte order mark, as a `char`.
const BOM: char = '\u{feff}';

/// A split document: frontmatter text (if any) and body, with the line numbers needed to
/// report positions in the file.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Document<'a> {
    /// Whether the file started with a UTF-8 byte order mark (which is not part of the text).
    pub bom: bool,
    /// The YAML between the delimiter lines, when the file has frontmatter.
    pub frontmatter: Option<Frontmatter<'a>>,
    /// The body, byte for byte.
    pub body: &'a str,
    /// The 1-based line of the file on which the body starts.
    pub body_line: u32,
    /// Whether the file uses CRLF line endings (judged by its first line ending).
    pub crlf: bool,
}

/// The YAML text between the opening and closing delimiter lines.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct Frontmatter<'a> {
    /// The YAML text, without the delimiter lines.
    pub text: &'a str,
    /// The 1-based line of the file that holds the first YAML line.
    pub first_line: u32,
    /// Whether the closing line was `...` rather than `---`.
    pub dot_closer: bool,
}

/// The file opened frontmatter with `---` and never closed it.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct UnclosedFrontmatter {
    /// The 1-based line of the opening delimiter.
    pub line: u32,
}

/// Rest of the current line including its `\n` (if any). Fails only at end of input.
/// (A vectorised search for the newline: nom's `take_till` decodes every character.)
fn any_line(input: &str) -> IResult<&str, &str> {
    if input.is_empty() {
        return Err(nom::Err::Error(nom::error::Error::new(
            input,
            nom::error::ErrorKind::Eof,
        )));
    }
    let end = memchr::memchr(b'\n', input.as_bytes()).map_or(input.len(), |i| i + 1);
    // `end` follows a `\n` or is the end: a character boundary either way.
    let (line, rest) = input.split_at_checked(end).unwrap_or((input, ""));
    Ok((rest, line))
}

/// The end of a delimiter line: optional `\r`, then `\n` or end of input.
fn line_end(input: &str) -> IResult<&str, &str> {
    recognize((opt(char('\r')), alt((recognize(char('\n')), eof)))).parse(input)
}

/// A delimiter line: the marker, optional trailing spaces or tabs, a line ending.
fn delimiter_line<'a>(
    marker: &'static str,
) -> impl Parser<&'a str, Output = &'a str, Error = nom::error::Error<&'a str>> {
    recognize((tag(marker), space0, line_end))
}

/// A closing line: `---` or `...`.
fn closing_line(input: &str) -> IResult<&str, &str> {
    alt((delimiter_line("---"), delimiter_line("..."))).parse(input)
}

/// The opening line: `---` followed by a real line ending (a lone `---` at end of file is
/// an unclosed frontmatter, handled by the caller).
fn opening_line(input: &str) -> IResult<&str, &str> {
    delimiter_line("---").parse(input)
}

/// Split a file's text into frontmatter and body.
///
/// A leading BOM is skipped. With no opening delimiter line the whole text is the body.
pub fn split(text: &str) -> Result<Document<'_>, UnclosedFrontmatter> {
    let (bom, text) = match text.strip_prefix(BOM) {
        Some(rest) => (true, rest),
        None => (false, text),
    };
    let crlf = text
        .find('\n')
        .is_some_and(|i| i > 0 && text.as_bytes()[i - 1] == b'\r');
    let Ok((after_open, _)) = opening_line(text) else {
        return Ok(Document {
            bom,
            frontmatter: None,
            body: text,
            body_line: 1,
            crlf,
        });
    };
    if after_open.is_empty() && !text.ends_with('\n') {
        // `---` alone, no newline: nothing can close it.
        return Err(UnclosedFrontmatter { line: 1 });
    }
    let mut rest = after_open;
    let mut yaml_lines: u32 = 0;
    loop {
        if let Ok((after_close, closer)) = closing_line(rest) {
            let yaml_len = after_open.len() - rest.len();
            return Ok(Document {
                bom,
                frontmatter: Some(Frontmatter {
                    text: &after_open[..yaml_len],
                    first_line: 2,
                    dot_closer: closer.starts_with('.'),
                }),
                body: after_close,
                body_line: yaml_lines.saturating_add(3),
                crlf,
            });
        }
        match any_line(rest) {
            Ok((next, _)) => {
                rest = next;
                yaml_lines = yaml_lines.saturating_add(1);
            }
            Err(_) => return Err(UnclosedFrontmatter { line: 1 }),
        }
    }
}

#[cfg(test)]
#[allow(clippy::unwrap_used, clippy::expect_used, clippy::panic)]
mod tests {
    use super::*;
    use proptest::prelude::*;

    /// `any_line` as it was, with nom's `take_till`: the reference the newline search
    /// must agree with.
    fn any_line_reference(input: &str) -> IResult<&str, &str> {
        use nom::bytes::complete::take_till;
        if input.is_empty() {
            return Err(nom::Err::Error(nom::error::Error::new(
                input,
                nom::error::ErrorKind::Eof,
            )));
        }
        recognize((take_till(|c| c == '\n'), opt(char('\n')))).parse(input)
    }

    proptest! {
        #[test]
        fn any_line_agrees_with_take_till(text in "(\\PC|\n|\r|-|\\.| ){0,40}") {
            let mut rest = text.as_str();
            loop {
                let (got, want) = (any_line(rest), any_line_reference(rest));
                prop_assert_eq!(&got, &want);
                match got {
                    Ok((next, _)) => rest = next,
                    Err(_) => break,
                }
            }
        }
    }

    #[test]
    fn splits_lf() {
        let d = split("---\nname: a\n---\n# Body\n").unwrap();
        let fm = d.frontmatter.unwrap();
        assert_eq!(fm.text, "name: a\n");
        assert_eq!(fm.first_line, 2);
        assert_eq!(d.body, "# Body\n");
        assert_eq!(d.body_line, 4);
        assert!(!d.bom && !d.crlf);
    }

    #[test]
    fn splits_crlf_and_keeps_body_bytes() {
        let d = split("---\r\nname: a\r\n---\r\n# Body\r\nline\r\n").unwrap();
        assert_eq!(d.frontmatter.unwrap().text, "name: a\r\n");
        assert_eq!(d.body, "# Body\r\nline\r\n");
        assert!(d.crlf);
    }

    #[test]
    fn strips_bom() {
        let d = split("\u{feff}---\nname: a\n---\nbody").unwrap();
        assert!(d.bom);
        assert_eq!(d.frontmatter.unwrap().text, "name: a\n");
        assert_eq!(d.body, "body");
    }

    #[test]
    fn dashes_inside_a_value_do_not_close() {
        let d = split("---\ndescription: a---b\nx: --- y\n---\nbody\n").unwrap();
        assert_eq!(
            d.frontmatter.unwrap().text,
            "description: a---b\nx: --- y\n"
        );
        assert_eq!(d.body, "body\n");
        assert_eq!(d.body_line, 5);
    }

    #[test]
    fn indented_or_longer_dashes_are_not_delimiters() {
        let d = split("---\na: |\n  ---\n----\n---\nbody").unwrap();
        assert_eq!(d.frontmatter.unwrap().text, "a: |\n  ---\n----\n");
        let d = split("----\nname: a\n----\n").unwrap();
        assert!(d.frontmatter.is_none());
        let d = split("--- x\nname: a\n---\n").unwrap();
        assert!(d.frontmatter.is_none());
    }

    #[test]
    fn dot_closer_and_trailing_spaces() {
        let d = split("---  \nname: a\n...\t\nbody").unwrap();
        let fm = d.frontmatter.unwrap();
        assert!(fm.dot_closer);
        assert_eq!(fm.text, "name: a\n");
        assert_eq!(d.body, "body");
    }

    #[test]
    fn closer_at_end_of_file_without_newline() {
        let d = split("---\nname: a\n---").unwrap();
        assert_eq!(d.frontmatter.unwrap().text, "name: a\n");
        assert_eq!(d.body, "");
    }

    #[test]
    fn empty_frontmatter() {
        let d = split("---\n---\nbody").unwrap();
        assert_eq!(d.frontmatter.unwrap().text, "");
        assert_eq!(d.body_line, 3);
    }

    #[test]
    fn no_frontmatter() {
        let d = split("# Title\n---\n").unwrap();
        assert!(d.frontmatter.is_none());
        assert_eq!(d.body, "# Title\n---\n");
        assert_eq!(d.body_line, 1);
        let d = split("").unwrap();
        assert!(d.frontmatter.is_none());
    }

    #[test]
    fn unclosed() {
        assert_eq!(
            split("---\nname: a\nbody\n"),
            Err(UnclosedFrontmatter { line: 1 })
        );
        assert_eq!(split("---"), Err(UnclosedFrontmatter { line: 1 }));
        assert_eq!(split("---\n"), Err(UnclosedFrontmatter { line: 1 }));
    }

    #[test]
    fn lone_carriage_returns_do_not_break_lines() {
        let d = split("---\na: b\rc\n---\nbody").unwrap();
        assert_eq!(d.frontmatter.unwrap().text, "a: b\rc\n");
    }
}
