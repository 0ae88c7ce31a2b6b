//! Shell-style tokenizing of one command line, and quoting tokens back into one.

use serde::Serialize;

use crate::Error;

/// The longest command line the tokenizer accepts, in bytes (1 MiB). Longer lines are
/// [`Error::TooLong`].
pub const MAX_COMMAND_BYTES: usize = 1024 * 1024;

/// The most words (skill name, flags, values, arguments) one command may have. More is
/// [`Error::TooManyTokens`].
pub const MAX_TOKENS: usize = 10_000;

/// One word of a command line.
#[derive(Debug, Clone, PartialEq, Eq, Serialize)]
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
    if input.len() > MAX_COMMAND_BYTES {
        return Err(Error::TooLong {
            len: input.len(),
            limit: MAX_COMMAND_BYTES,
        });
    }
    let mut tokens: Vec<Token> = Vec::with_capacity(8);
    let mut current = String::new();
    let mut in_word = false;
    let mut quoted = false;
    // Bytes of `current` before its first quoted or escaped part.
    let mut prefix = 0usize;
    let mut start = 0u32;
    let mut column = 0u32;
    // Byte offset where the current run of plain characters started: plain runs are
    // copied as slices, not character by character.
    let mut run: Option<usize> = None;
    let mut chars = input.char_indices();

    while let Some((at, c)) = chars.next() {
        column = column.saturating_add(1);
        if c == '\0' {
            return Err(Error::Nul { column });
        }
        let plain = !(c.is_ascii_whitespace() || matches!(c, '\'' | '"' | '\\'));
        if plain {
            if !in_word {
                in_word = true;
                start = column;
            }
            if run.is_none() {
                run = Some(at);
            }
            continue;
        }
        if let Some(from) = run.take() {
            current.push_str(input.get(from..at).unwrap_or(""));
        }
        if c.is_ascii_whitespace() {
            if in_word {
                let text = std::mem::take(&mut current);
                let prefix = if quoted { prefix } else { text.len() };
                push_token(&mut tokens, text, quoted, prefix, start)?;
                in_word = false;
                quoted = false;
            }
            continue;
        }
        if !in_word {
            in_word = true;
            start = column;
        }
        if !quoted {
            prefix = current.len();
            quoted = true;
        }
        match c {
            '\'' => {
                let open = column;
                loop {
                    match chars.next() {
                        Some((_, '\'')) => {
                            column = column.saturating_add(1);
                            break;
                        }
                        Some((_, '\0')) => {
                            return Err(Error::Nul {
                                column: column.saturating_add(1),
                            });
                        }
                        Some((_, c)) => {
                            column = column.saturating_add(1);
                            current.push(c);
                        }
                        None => {
                            return Err(Error::UnterminatedQuote {
                                quote: '\'',
                                column: open,
                            });
                        }
                    }
                }
            }
            '"' => {
                let open = column;
                loop {
                    let Some((_, c)) = chars.next() else {
                        return Err(Error::UnterminatedQuote {
                            quote: '"',
                            column: open,
                        });
                    };
                    column = column.saturating_add(1);
                    match c {
                        '"' => break,
                        '\0' => return Err(Error::Nul { column }),
                        '\\' => match chars.next() {
                            Some((_, e @ ('"' | '\\' | '$' | '`'))) => {
                                column = column.saturating_add(1);
                                current.push(e);
                            }
                            Some((_, '\0')) => {
                                return Err(Error::Nul {
                                    column: column.saturating_add(1),
                                });
                            }
                            Some((_, other)) => {
                                column = column.saturating_add(1);
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
                }
            }
            _ => match chars.next() {
                // A backslash outside quotes.
                Some((_, '\0')) => {
                    return Err(Error::Nul {
                        column: column.saturating_add(1),
                    });
                }
                Some((_, next)) => {
                    column = column.saturating_add(1);
                    current.push(next);
                }
                None => current.push('\\'),
            },
        }
    }
    if let Some(from) = run {
        current.push_str(input.get(from..).unwrap_or(""));
    }
    if in_word {
        let prefix = if quoted { prefix } else { current.len() };
        push_token(&mut tokens, current, quoted, prefix, start)?;
    }
    Ok(tokens)
}

fn push_token(
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
