//! Shell-style tokenizing of one command line, and quoting tokens back into one.
//!
//! The line is scanned as bytes. A plain word, or a word that is one quoted span with nothing
//! escaped, borrows its text from the line; only the other words are copied. So routing a
//! model's output copies only what the route keeps.

use std::borrow::Cow;

use crate::Error;

/// The longest command line the tokenizer accepts, in bytes (1 MiB). Longer lines are
/// [`Error::TooLong`].
pub const MAX_COMMAND_BYTES: usize = 1024 * 1024;

/// The most words (skill name, flags, values, arguments) one command may have. More is
/// [`Error::TooManyTokens`].
pub const MAX_TOKENS: usize = 10_000;

/// One word of a command line.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Token {
    /// The word after quotes and escapes are removed.
    pub text: String,
    /// Some of it was quoted or escaped. A quoted word is never a flag (`"--to"` is a
    /// value) unless its `--name=` part is unquoted (`--subject="Q1 Report"`, see
    /// [`Token::unquoted_prefix`]), and a quoted `/` word is never a slash command.
    pub quoted: bool,
    /// How many bytes at the start of `text` were written without quotes or escapes:
    /// `text.len()` when nothing was quoted, 0 when the word starts with a quote, 4 for
    /// `--a='x y'`. It tells `--name="value"` (a flag) from `"--name=value"` (a value).
    pub unquoted_prefix: usize,
    /// 1-based column (in characters) where the word starts.
    pub column: u32,
}

/// Split a command line into words, as a POSIX shell would (without expansions):
///
/// * Words are separated by runs of ASCII whitespace; other Unicode whitespace is part of
///   a word.
/// * Inside `'...'` every character is literal.
/// * Inside `"..."` a backslash escapes `"`, `\`, `$` and `` ` ``; before anything else it
///   is kept (`"a\nb"` keeps the backslash and the `n`).
/// * Outside quotes a backslash makes the next character literal (a space, a quote, a
///   backslash). A backslash at the very end is kept.
/// * Quoted and unquoted parts written together form one word (`--to="a b"c` is
///   `--to=a bc`); `''` and `""` are an empty word.
///
/// Errors: a quote never closed ([`Error::UnterminatedQuote`], with the column of the
/// opening quote), a NUL character ([`Error::Nul`]), a line over [`MAX_COMMAND_BYTES`] or
/// with more than [`MAX_TOKENS`] words.
pub fn tokenize(input: &str) -> Result<Vec<Token>, Error> {
    let mut tokens = Vec::with_capacity(8);
    let mut words = Words::new(input)?;
    tokens.extend(words.by_ref().map(Token::from));
    match words.take_error() {
        Some(e) => Err(e),
        None => Ok(tokens),
    }
}

impl From<Word<'_>> for Token {
    fn from(word: Word<'_>) -> Self {
        Token {
            text: word.text.into_owned(),
            quoted: word.quoted,
            unquoted_prefix: word.unquoted_prefix,
            column: word.column,
        }
    }
}

/// One word of a command line as [`Words`] yields it: a [`Token`] whose text borrows from
/// the line when nothing in it was escaped and it is either unquoted or one quoted span
/// (the common cases), so that routing copies only what it keeps.
#[derive(Debug, Clone, PartialEq, Eq)]
pub(crate) struct Word<'a> {
    /// As [`Token::text`].
    pub(crate) text: Cow<'a, str>,
    /// As [`Token::quoted`].
    pub(crate) quoted: bool,
    /// As [`Token::unquoted_prefix`].
    pub(crate) unquoted_prefix: usize,
    /// As [`Token::column`].
    pub(crate) column: u32,
}

impl From<Token> for Word<'_> {
    fn from(token: Token) -> Self {
        Word {
            text: Cow::Owned(token.text),
            quoted: token.quoted,
            unquoted_prefix: token.unquoted_prefix,
            column: token.column,
        }
    }
}

/// The words of one command line, in order, as [`tokenize`] splits them. At the first
/// error it stops and keeps the error ([`Words::take_error`]), so that the words a parse
/// streams stay small.
#[derive(Debug)]
pub(crate) struct Words<'a> {
    input: &'a str,
    /// Byte offset of the next character to read.
    at: usize,
    /// Words yielded so far.
    count: usize,
    /// Byte offset up to which characters were counted, and the count there (columns are
    /// counted lazily, forward only, so the whole line is counted at most once).
    counted_to: usize,
    counted: u32,
    /// The line is ASCII: a column is the byte offset plus one.
    ascii: bool,
    /// The error that ended the words, until taken.
    error: Option<Error>,
    /// The column of the first unquoted `|` word yielded.
    pipe: Option<u32>,
    /// The words ended at an error.
    failed: bool,
}

/// Bytes reserved up front for a word with quotes or escapes in it (most are short values;
/// a longer one grows as usual).
const QUOTED_CAPACITY: usize = 64;

/// The bytes that end a plain run, as a table: ASCII whitespace, a quote, a backslash and
/// NUL (all ASCII, so never part of a multi-byte character).
const SPECIAL: [bool; 256] = {
    let mut table = [false; 256];
    let mut b = 0;
    while b < 256 {
        let byte = b as u8;
        table[b] = byte.is_ascii_whitespace() || matches!(byte, b'\'' | b'"' | b'\\' | b'\0');
        b += 1;
    }
    table
};

/// Whether a byte ends a plain run (see [`SPECIAL`]).
fn is_special(b: u8) -> bool {
    SPECIAL[usize::from(b)]
}

impl<'a> Words<'a> {
    /// The words of `input`; a line over [`MAX_COMMAND_BYTES`] is [`Error::TooLong`].
    pub(crate) fn new(input: &'a str) -> Result<Self, Error> {
        if input.len() > MAX_COMMAND_BYTES {
            return Err(Error::TooLong {
                len: input.len(),
                limit: MAX_COMMAND_BYTES,
            });
        }
        Ok(Words {
            input,
            at: 0,
            count: 0,
            counted_to: 0,
            counted: 0,
            ascii: input.is_ascii(),
            error: None,
            pipe: None,
            failed: false,
        })
    }

    /// The column of the first unquoted `|` word yielded so far.
    pub(crate) fn pipe(&self) -> Option<u32> {
        self.pipe
    }

    /// The error that ended the words, if one did (once: it is moved out).
    pub(crate) fn take_error(&mut self) -> Option<Error> {
        self.error.take()
    }

    /// The 1-based column (in characters) of the character at byte offset `at`, which is
    /// never before an offset asked about earlier.
    fn column(&mut self, at: usize) -> u32 {
        if self.ascii {
            // At most MAX_COMMAND_BYTES, so it fits.
            return u32::try_from(at).map_or(u32::MAX, |c| c.saturating_add(1));
        }
        let skipped = self.input.get(self.counted_to..at).unwrap_or("");
        let n = u32::try_from(skipped.chars().count()).unwrap_or(u32::MAX);
        self.counted = self.counted.saturating_add(n);
        self.counted_to = at;
        self.counted.saturating_add(1)
    }

    /// The byte at `i`, if any.
    fn byte(&self, i: usize) -> Option<u8> {
        self.input.as_bytes().get(i).copied()
    }

    /// Offset of the first byte at or after `from` that `stop` accepts, or the end.
    fn find_byte(&self, from: usize, stop: impl Fn(u8) -> bool) -> usize {
        let bytes = self.input.as_bytes();
        bytes
            .get(from..)
            .and_then(|rest| rest.iter().position(|&b| stop(b)))
            .map_or(bytes.len(), |p| from + p)
    }

    /// The text between two offsets (both on character boundaries).
    fn slice(&self, from: usize, to: usize) -> &'a str {
        self.input.get(from..to).unwrap_or("")
    }

    /// Read the word starting at `start` (not whitespace), up to the whitespace or end
    /// after it.
    fn word(&mut self, start: usize) -> Result<Word<'a>, Error> {
        let column = self.column(start);
        let plain_end = self.find_byte(start, is_special);
        if self.byte(plain_end).is_none_or(|b| b.is_ascii_whitespace()) {
            // The common case: nothing quoted or escaped, so the word is a slice.
            self.at = plain_end;
            return Ok(Word {
                text: Cow::Borrowed(self.slice(start, plain_end)),
                quoted: false,
                unquoted_prefix: plain_end - start,
                column,
            });
        }
        // A word that is one quoted span and nothing else (`"a b"`, `'a b'`), with no
        // escape or NUL inside, is the text between its quotes: a slice too.
        if plain_end == start {
            if let Some(word) = self.whole_quoted(start, column) {
                return Ok(word);
            }
        }
        // Something is quoted, escaped or NUL: build the text (with room for a typical
        // quoted value; longer ones grow).
        let mut text = String::with_capacity((self.input.len() - start).min(QUOTED_CAPACITY));
        text.push_str(self.slice(start, plain_end));
        let mut prefix: Option<usize> = None;
        let mut at = plain_end;
        while let Some(b) = self.byte(at).filter(|b| !b.is_ascii_whitespace()) {
            match b {
                b'\0' => {
                    return Err(Error::Nul {
                        column: self.column(at),
                    });
                }
                b'\'' | b'"' | b'\\' => {
                    prefix.get_or_insert(text.len());
                    at = match b {
                        b'\'' => self.single_quoted(at, &mut text)?,
                        b'"' => self.double_quoted(at, &mut text)?,
                        _ => self.escaped(at, &mut text)?,
                    };
                }
                _ => {
                    let end = self.find_byte(at, is_special);
                    text.push_str(self.slice(at, end));
                    at = end;
                }
            }
        }
        self.at = at;
        let unquoted_prefix = prefix.unwrap_or(text.len());
        Ok(Word {
            text: Cow::Owned(text),
            quoted: prefix.is_some(),
            unquoted_prefix,
            column,
        })
    }

    /// The word at `start` when it is one quoted span followed by whitespace or the end,
    /// with nothing inside that the quote rules would change (a backslash in `"..."`) and
    /// no NUL: its text borrows from the line. `None` sends the word to the general path.
    fn whole_quoted(&mut self, start: usize, column: u32) -> Option<Word<'a>> {
        let quote = self.byte(start).filter(|&b| b == b'"' || b == b'\'')?;
        // Inside double quotes a backslash may escape; inside single quotes it is literal.
        let end = self.find_byte(start + 1, |b| {
            b == quote || b == b'\0' || (quote == b'"' && b == b'\\')
        });
        if self.byte(end) != Some(quote)
            || self.byte(end + 1).is_some_and(|b| !b.is_ascii_whitespace())
        {
            return None;
        }
        self.at = end + 1;
        Some(Word {
            text: Cow::Borrowed(self.slice(start + 1, end)),
            quoted: true,
            unquoted_prefix: 0,
            column,
        })
    }

    /// `'...'` opening at `open`: everything literal up to the closing quote. Returns the
    /// offset after it.
    fn single_quoted(&mut self, open: usize, text: &mut String) -> Result<usize, Error> {
        let end = self.find_byte(open + 1, |b| b == b'\'' || b == b'\0');
        text.push_str(self.slice(open + 1, end));
        match self.byte(end) {
            Some(b'\'') => Ok(end + 1),
            Some(_) => Err(Error::Nul {
                column: self.column(end),
            }),
            None => Err(Error::UnterminatedQuote {
                quote: '\'',
                column: self.column(open),
            }),
        }
    }

    /// `"..."` opening at `open`: a backslash escapes `"`, `\`, `$` and `` ` `` and is
    /// kept before anything else. Returns the offset after the closing quote.
    fn double_quoted(&mut self, open: usize, text: &mut String) -> Result<usize, Error> {
        let mut at = open + 1;
        loop {
            let end = self.find_byte(at, |b| matches!(b, b'"' | b'\\' | b'\0'));
            text.push_str(self.slice(at, end));
            match self.byte(end) {
                Some(b'"') => return Ok(end + 1),
                Some(b'\\') => match self.byte(end + 1) {
                    Some(e @ (b'"' | b'\\' | b'$' | b'`')) => {
                        text.push(char::from(e));
                        at = end + 2;
                    }
                    Some(b'\0') => {
                        return Err(Error::Nul {
                            column: self.column(end + 1),
                        });
                    }
                    // Kept, with whatever follows (read as ordinary text).
                    Some(_) => {
                        text.push('\\');
                        at = end + 1;
                    }
                    None => break,
                },
                Some(_) => {
                    return Err(Error::Nul {
                        column: self.column(end),
                    });
                }
                None => break,
            }
        }
        Err(Error::UnterminatedQuote {
            quote: '"',
            column: self.column(open),
        })
    }

    /// A backslash outside quotes at `at`: the next character is literal; at the very end
    /// the backslash is kept. Returns the offset after it.
    fn escaped(&mut self, at: usize, text: &mut String) -> Result<usize, Error> {
        let next = at + 1;
        match self.input.get(next..).and_then(|rest| rest.chars().next()) {
            Some('\0') => Err(Error::Nul {
                column: self.column(next),
            }),
            Some(c) => {
                text.push(c);
                Ok(next + c.len_utf8())
            }
            None => {
                text.push('\\');
                Ok(next)
            }
        }
    }
}

impl<'a> Iterator for Words<'a> {
    type Item = Word<'a>;

    fn next(&mut self) -> Option<Self::Item> {
        if self.failed {
            return None;
        }
        let start = self.find_byte(self.at, |b| !b.is_ascii_whitespace());
        if start == self.input.len() {
            self.at = start;
            return None;
        }
        let result = self.word(start).and_then(|word| {
            if self.count == MAX_TOKENS {
                return Err(Error::TooManyTokens { limit: MAX_TOKENS });
            }
            self.count += 1;
            Ok(word)
        });
        match result {
            Ok(word) => {
                if self.pipe.is_none() && !word.quoted && word.text == "|" {
                    self.pipe = Some(word.column);
                }
                Some(word)
            }
            Err(e) => {
                self.failed = true;
                self.error = Some(e);
                None
            }
        }
    }
}

/// Whether a word can be written without quotes and read back unchanged (and not taken
/// for anything else).
fn is_plain(word: &str) -> bool {
    !word.is_empty()
        && word.chars().all(|c| {
            c.is_alphanumeric()
                || matches!(c, '_' | '-' | '.' | '/' | ':' | '@' | ',' | '+' | '=' | '%')
        })
}

/// Whether [`tokenize`] reads a word written as is back as that same, unquoted word: not
/// empty, and no ASCII whitespace, quote or backslash.
fn is_bare(word: &str) -> bool {
    !word.is_empty()
        && !word
            .chars()
            .any(|c| c.is_ascii_whitespace() || matches!(c, '\'' | '"' | '\\'))
}

/// Append `word` in single quotes (a `'` inside becomes `'\''`).
fn push_single_quoted(out: &mut String, word: &str) {
    out.reserve(word.len() + 2);
    out.push('\'');
    for c in word.chars() {
        if c == '\'' {
            out.push_str("'\\''");
        } else {
            out.push(c);
        }
    }
    out.push('\'');
}

/// Quote one word so that [`tokenize`] reads it back as exactly that word: plain words
/// stay as they are, anything else goes in single quotes (a `'` inside becomes `'\''`).
///
/// Only the text is kept: a plain word comes back unquoted (so `--to` is a flag again).
/// To keep whether a word was quoted, use [`quote_token`].
pub fn quote(word: &str) -> String {
    if is_plain(word) {
        return word.to_owned();
    }
    let mut out = String::new();
    push_single_quoted(&mut out, word);
    out
}

/// Quote one token so that [`tokenize`] reads it back as the same text, quoted or not, with
/// the same [`Token::unquoted_prefix`]: a quoted token is written as its unquoted prefix
/// followed by the rest in single quotes (`"--to"` stays quoted, so it stays a value;
/// `--subject="Q1 Report"` stays a flag), an unquoted one as it is.
///
/// A token that no command line could produce (an unquoted one with spaces, quotes or
/// nothing in it, or a prefix that is not a bare word) is quoted whole instead.
pub fn quote_token(token: &Token) -> String {
    let text = token.text.as_str();
    if !token.quoted {
        return if is_bare(text) {
            text.to_owned()
        } else {
            quote(text)
        };
    }
    let (head, rest) = match text.split_at_checked(token.unquoted_prefix) {
        Some((head, rest)) if head.is_empty() || is_bare(head) => (head, rest),
        _ => ("", text),
    };
    let mut out = head.to_owned();
    push_single_quoted(&mut out, rest);
    out
}

/// Join words into one command line with [`quote`], separated by single spaces. Words are
/// text only: `"--to"` comes back as the flag `--to`; [`join_tokens`] keeps quoting.
pub fn join<S: AsRef<str>>(words: &[S]) -> String {
    words
        .iter()
        .map(|w| quote(w.as_ref()))
        .collect::<Vec<_>>()
        .join(" ")
}

/// Join tokens into one command line with [`quote_token`], separated by single spaces:
/// [`tokenize`] reads the line back as the same tokens (text, quoted and unquoted prefix;
/// columns aside), so a quoted `"--to"` stays a value.
pub fn join_tokens(tokens: &[Token]) -> String {
    tokens.iter().map(quote_token).collect::<Vec<_>>().join(" ")
}

#[cfg(test)]
#[allow(clippy::unwrap_used, clippy::expect_used, clippy::panic)]
mod tests {
    use super::*;
    use proptest::prelude::*;

    /// The character-by-character tokenizer [`Words`] replaced, kept as the reference that
    /// the byte-level one must agree with on every input.
    fn reference(input: &str) -> Result<Vec<Token>, Error> {
        if input.len() > MAX_COMMAND_BYTES {
            return Err(Error::TooLong {
                len: input.len(),
                limit: MAX_COMMAND_BYTES,
            });
        }
        fn push(
            tokens: &mut Vec<Token>,
            text: String,
            quoted: bool,
            unquoted_prefix: usize,
            column: u32,
        ) -> Result<(), Error> {
            if tokens.len() == MAX_TOKENS {
                return Err(Error::TooManyTokens { limit: MAX_TOKENS });
            }
            tokens.push(Token {
                text,
                quoted,
                unquoted_prefix,
                column,
            });
            Ok(())
        }
        let mut tokens = Vec::new();
        let mut current = String::new();
        let (mut in_word, mut quoted) = (false, false);
        let (mut prefix, mut start, mut column) = (0usize, 0u32, 0u32);
        let mut chars = input.chars();
        while let Some(c) = chars.next() {
            column += 1;
            if c == '\0' {
                return Err(Error::Nul { column });
            }
            if c.is_ascii_whitespace() {
                if in_word {
                    let text = std::mem::take(&mut current);
                    let prefix = if quoted { prefix } else { text.len() };
                    push(&mut tokens, text, quoted, prefix, start)?;
                    in_word = false;
                    quoted = false;
                }
                continue;
            }
            if !in_word {
                in_word = true;
                start = column;
            }
            if !matches!(c, '\'' | '"' | '\\') {
                current.push(c);
                continue;
            }
            if !quoted {
                prefix = current.len();
                quoted = true;
            }
            let open = column;
            match c {
                '\'' => loop {
                    match chars.next() {
                        Some('\'') => {
                            column += 1;
                            break;
                        }
                        Some('\0') => return Err(Error::Nul { column: column + 1 }),
                        Some(c) => {
                            column += 1;
                            current.push(c);
                        }
                        None => {
                            return Err(Error::UnterminatedQuote {
                                quote: '\'',
                                column: open,
                            });
                        }
                    }
                },
                '"' => loop {
                    let Some(c) = chars.next() else {
                        return Err(Error::UnterminatedQuote {
                            quote: '"',
                            column: open,
                        });
                    };
                    column += 1;
                    match c {
                        '"' => break,
                        '\0' => return Err(Error::Nul { column }),
                        '\\' => match chars.next() {
                            Some(e @ ('"' | '\\' | '$' | '`')) => {
                                column += 1;
                                current.push(e);
                            }
                            Some('\0') => return Err(Error::Nul { column: column + 1 }),
                            Some(other) => {
                                column += 1;
                                current.push('\\');
                                current.push(other);
                            }
                            None => {
                                return Err(Error::UnterminatedQuote {
                                    quote: '"',
                                    column: open,
                                });
                            }
                        },
                        c => current.push(c),
                    }
                },
                _ => match chars.next() {
                    Some('\0') => return Err(Error::Nul { column: column + 1 }),
                    Some(next) => {
                        column += 1;
                        current.push(next);
                    }
                    None => current.push('\\'),
                },
            }
        }
        if in_word {
            let prefix = if quoted { prefix } else { current.len() };
            push(&mut tokens, current, quoted, prefix, start)?;
        }
        Ok(tokens)
    }

    /// Both tokenizers' results, errors compared by their debug text.
    fn agree(line: &str) {
        let got = tokenize(line).map_err(|e| format!("{e:?}"));
        let want = reference(line).map_err(|e| format!("{e:?}"));
        assert_eq!(got, want, "{line:?}");
    }

    proptest! {
        #[test]
        fn byte_level_tokenizer_matches_the_reference(
            line in "[ \t\r\n\x0b\x0c'\"\\\\$`a-c=\\-|é日\u{a0}\x00]{0,40}"
        ) {
            agree(&line);
        }

        #[test]
        fn byte_level_tokenizer_matches_the_reference_on_any_text(line in "\\PC{0,40}") {
            agree(&line);
        }
    }

    #[test]
    fn tokenizer_matches_the_reference_on_edge_cases() {
        for line in [
            "",
            " ",
            "a",
            "a\\",
            "\\",
            "\\\0",
            "\\é x",
            "é \"x\\\"",
            "\"a\\é\"",
            "'é\0'",
            "x'y'z \"p\"q\\ r",
            "日本 '語' \"a\\$\" \\\"",
            "a\u{a0}b\tc\x0bd",
            "\"\"",
            "''",
            "--a='x y' \"--b\" --c= --d=x\"é\"",
        ] {
            agree(line);
        }
        let many = vec!["x"; MAX_TOKENS + 1].join(" ");
        agree(&many);
        agree(&many[..many.len() - 2]);
    }

    #[test]
    fn plain_words_borrow_from_the_line() {
        let words: Vec<Word<'_>> =
            Words::new(r#"email.send --to bob 'a b' c\ d "x y" "x\"y" 'a'b "" 'it\s' "q"r"#)
                .unwrap()
                .collect();
        let borrowed: Vec<bool> = words
            .iter()
            .map(|w| matches!(w.text, Cow::Borrowed(_)))
            .collect();
        // A whole single- or double-quoted word borrows too, unless it holds an escape
        // (in double quotes) or more follows its closing quote; a backslash inside single
        // quotes is literal, so that one borrows.
        assert_eq!(
            borrowed,
            [
                true, true, true, true, false, true, false, false, true, true, false
            ]
        );
        let texts: Vec<&str> = words.iter().map(|w| &*w.text).collect();
        assert_eq!(
            texts,
            [
                "email.send",
                "--to",
                "bob",
                "a b",
                "c d",
                "x y",
                "x\"y",
                "ab",
                "",
                "it\\s",
                "qr"
            ]
        );
        assert!(words[3].quoted && words[3].unquoted_prefix == 0);
    }

    fn words(s: &str) -> Vec<String> {
        tokenize(s).unwrap().into_iter().map(|t| t.text).collect()
    }

    #[test]
    fn seed_example_5_1() {
        assert_eq!(
            words(r#"email.send --to bob@co.com --subject "Q1 Report" --body "See attached.""#),
            [
                "email.send",
                "--to",
                "bob@co.com",
                "--subject",
                "Q1 Report",
                "--body",
                "See attached."
            ]
        );
    }

    #[test]
    fn quotes_escapes_and_adjacent_parts() {
        assert_eq!(words(r#"a 'b c' "d\"e" f\ g"#), ["a", "b c", "d\"e", "f g"]);
        assert_eq!(words(r#"--to="a b"c'd'"#), ["--to=a bcd"]);
        assert_eq!(
            words(r#""a\nb" "\\" "\$x" "\`""#),
            ["a\\nb", "\\", "$x", "`"]
        );
        assert_eq!(words(r#"'it'\''s'"#), ["it's"]);
        assert_eq!(words(r#"'' "" x"#), ["", "", "x"]);
        assert_eq!(words("end\\"), ["end\\"]);
        assert_eq!(words("  \t a\r\n b  "), ["a", "b"]);
    }

    #[test]
    fn unicode_words_and_columns() {
        let t = tokenize("résumé.send --naïve \"日本 語\" x\u{a0}y").unwrap();
        let got: Vec<(&str, u32, bool)> = t
            .iter()
            .map(|t| (t.text.as_str(), t.column, t.quoted))
            .collect();
        assert_eq!(
            got,
            [
                ("résumé.send", 1, false),
                ("--naïve", 13, false),
                ("日本 語", 21, true),
                ("x\u{a0}y", 28, false)
            ]
        );
    }

    #[test]
    fn unterminated_quotes_report_their_column() {
        match tokenize("a.b --x 'oops") {
            Err(Error::UnterminatedQuote { quote, column }) => {
                assert_eq!((quote, column), ('\'', 9));
            }
            other => panic!("{other:?}"),
        }
        match tokenize("é \"x\\\"") {
            Err(Error::UnterminatedQuote { quote, column }) => {
                assert_eq!((quote, column), ('"', 3));
            }
            other => panic!("{other:?}"),
        }
        let e = tokenize("a 'b").unwrap_err();
        assert_eq!(
            e.to_string(),
            "unterminated single quote opened at column 3: close it with '"
        );
    }

    #[test]
    fn nul_is_an_error_with_column() {
        for (s, col) in [
            ("a\0", 2),
            ("'a\0'", 3),
            ("\"a\0\"", 3),
            ("x \\\0", 4),
            ("\"\\\0\"", 3),
        ] {
            match tokenize(s) {
                Err(Error::Nul { column }) => assert_eq!(column, col, "{s:?}"),
                other => panic!("{s:?}: {other:?}"),
            }
        }
    }

    #[test]
    fn length_limit_edge() {
        let at = "a".repeat(MAX_COMMAND_BYTES);
        assert_eq!(tokenize(&at).unwrap().len(), 1);
        let over = "a".repeat(MAX_COMMAND_BYTES + 1);
        assert!(matches!(
            tokenize(&over),
            Err(Error::TooLong { len, limit }) if len == MAX_COMMAND_BYTES + 1 && limit == MAX_COMMAND_BYTES
        ));
    }

    #[test]
    fn token_limit_edge() {
        let at = vec!["x"; MAX_TOKENS].join(" ");
        assert_eq!(tokenize(&at).unwrap().len(), MAX_TOKENS);
        let at_trailing = format!("{at} ");
        assert_eq!(tokenize(&at_trailing).unwrap().len(), MAX_TOKENS);
        let over = vec!["x"; MAX_TOKENS + 1].join(" ");
        assert!(matches!(tokenize(&over), Err(Error::TooManyTokens { .. })));
        let over_ws = format!("{over} ");
        assert!(matches!(
            tokenize(&over_ws),
            Err(Error::TooManyTokens { .. })
        ));
    }

    #[test]
    fn unquoted_prefix_marks_where_quoting_starts() {
        let got: Vec<(String, bool, usize)> = tokenize(r#"--a='x y' "--b" --c= --d=x"é" a\ b ''"#)
            .unwrap()
            .into_iter()
            .map(|t| (t.text, t.quoted, t.unquoted_prefix))
            .collect();
        assert_eq!(
            got,
            [
                ("--a=x y".to_owned(), true, 4),
                ("--b".to_owned(), true, 0),
                ("--c=".to_owned(), false, 4),
                ("--d=xé".to_owned(), true, 5),
                ("a b".to_owned(), true, 1),
                (String::new(), true, 0),
            ]
        );
    }

    #[test]
    fn join_tokens_keeps_quoting() {
        let line = r#"email.send "--to" --subject="Q1 Report" x 'plain' a'b c' --e=''"#;
        let tokens = tokenize(line).unwrap();
        let joined = join_tokens(&tokens);
        assert_eq!(
            joined,
            r#"email.send '--to' --subject='Q1 Report' x 'plain' a'b c' --e=''"#
        );
        let strip = |t: Vec<Token>| -> Vec<(String, bool, usize)> {
            t.into_iter()
                .map(|t| (t.text, t.quoted, t.unquoted_prefix))
                .collect()
        };
        assert_eq!(strip(tokenize(&joined).unwrap()), strip(tokens));
        // Tokens no line could produce are quoted whole.
        let odd = Token {
            text: "a b".into(),
            quoted: false,
            unquoted_prefix: 3,
            column: 1,
        };
        assert_eq!(quote_token(&odd), "'a b'");
        let odd = Token {
            text: "x y".into(),
            quoted: true,
            unquoted_prefix: 2,
            column: 1,
        };
        assert_eq!(quote_token(&odd), "'x y'");
        // `join` keeps only the text: a quoted `--to` comes back as a flag.
        assert_eq!(join(&["--to"]), "--to");
    }

    #[test]
    fn quote_and_join_round_trip() {
        let words_in = [
            "email.send",
            "--to",
            "a b",
            "",
            "it's",
            "--x=\"y\"",
            "日本",
            "\\",
        ];
        let line = join(&words_in);
        assert_eq!(
            line,
            r#"email.send --to 'a b' '' 'it'\''s' '--x="y"' 日本 '\'"#
        );
        assert_eq!(words(&line), words_in);
    }
}
