//! Argument substitution into skill bodies (pegasus dialect) and the
//! shell-style splitting of an argument string.
//!
//! When a skill is invoked with an argument string, its body is rewritten
//! by [`substitute_arguments`]:
//!
//! * `$ARGUMENTS` becomes the whole argument string, trimmed (as written,
//!   not re-joined from the split arguments). It is a placeholder only when
//!   the next character is not `[A-Za-z0-9_]`: `$ARGUMENTSX` and
//!   `$ARGUMENTS_1` are left alone.
//! * `$ARGUMENTS[N]` becomes the N-th argument, counting from 0, where `N`
//!   is one or more ASCII digits. `$ARGUMENTS[` followed by anything other
//!   than `digits]` is a plain `$ARGUMENTS` followed by literal text.
//! * `$N` (one or more ASCII digits, read greedily: `$12` is argument 12) is
//!   shorthand for `$ARGUMENTS[N]`.
//! * An index past the last argument, or greater than
//!   [`MAX_ARGUMENT_INDEX`] (including numbers too large for `usize`),
//!   leaves the placeholder exactly as written.
//! * `\$` is an escape: it produces a literal `$` and what follows is never
//!   a placeholder (`\$ARGUMENTS` becomes `$ARGUMENTS`, `\$1` becomes `$1`).
//!   It is the only escape: a backslash before anything else, including
//!   another backslash, is kept as written.
//! * Substituted text is never scanned again: an argument containing `$1`
//!   or `$ARGUMENTS` appears literally.
//! * If the body has no `$ARGUMENTS` or `$ARGUMENTS[N]` placeholder (after
//!   the rules above; `$N` shorthands do not count, escaped ones do not
//!   count, out-of-range ones do count) and the trimmed argument string is
//!   not empty, `\n\nARGUMENTS: <arguments>` is appended. The separator is
//!   always `\n\n`, whatever line endings the body uses.
//!
//! Arguments are split by [`split_arguments`], with shell-like quoting.

/// The largest argument index a `$N` or `$ARGUMENTS[N]` placeholder may
/// use. A placeholder with a larger index (or one that overflows `usize`)
/// is left as written, whatever the number of arguments.
pub const MAX_ARGUMENT_INDEX: usize = 4096;

/// Split an argument string into arguments, shell-style.
///
/// * Arguments are separated by runs of ASCII whitespace (space, tab,
///   newline, carriage return, form feed). Other Unicode whitespace is part
///   of an argument.
/// * Inside single quotes every character is literal.
/// * Inside double quotes a backslash escapes `"`, `\` and `$`; before any
///   other character the backslash is kept.
/// * Outside quotes a backslash makes the next character literal, whatever
///   it is (including whitespace and quotes). A backslash at the very end
///   is kept.
/// * Quoted and unquoted pieces written together form one argument
///   (`a"b c"d` is `ab cd`), and empty quotes (`''`, `""`) give an empty
///   argument.
/// * Lenient: an unterminated quote runs to the end of the input, so the
///   rest of the input (whitespace included) belongs to the current
///   argument. No input is an error.
pub fn split_arguments(input: &str) -> Vec<String> {
    let mut args = Vec::new();
    let mut current = String::new();
    let mut in_word = false;
    let mut chars = input.chars();

    while let Some(c) = chars.next() {
        match c {
            '\'' => {
                in_word = true;
                for c in chars.by_ref() {
                    if c == '\'' {
                        break;
                    }
                    current.push(c);
                }
            }
            '"' => {
                in_word = true;
                while let Some(c) = chars.next() {
                    match c {
                        '"' => break,
                        '\\' => match chars.next() {
                            Some(escaped @ ('"' | '\\' | '$')) => current.push(escaped),
                            Some(other) => {
                                current.push('\\');
                                current.push(other);
                            }
                            None => current.push('\\'),
                        },
                        c => current.push(c),
                    }
                }
            }
            '\\' => {
                in_word = true;
                current.push(chars.next().unwrap_or('\\'));
            }
            c if c.is_ascii_whitespace() => {
                if in_word {
                    args.push(std::mem::take(&mut current));
                    in_word = false;
                }
            }
            c => {
                in_word = true;
                current.push(c);
            }
        }
    }
    if in_word {
        args.push(current);
    }
    args
}

/// Substitute `arguments` into a skill `body` (see the module
/// documentation for the rules).
pub fn substitute_arguments(body: &str, arguments: &str) -> String {
    let all = arguments.trim();
    let mut split: Option<Vec<String>> = None;
    let mut out = String::with_capacity(body.len() + all.len());
    let mut saw_arguments_placeholder = false;

    // `copied` is how much of `body` is already in `out`; every offset used
    // is at an ASCII byte, so slicing stays on character boundaries.
    let bytes = body.as_bytes();
    let mut copied = 0;
    let mut i = 0;
    while i < bytes.len() {
        match bytes[i] {
            b'\\' if bytes.get(i + 1) == Some(&b'$') => {
                out.push_str(body.get(copied..i).unwrap_or(""));
                out.push('$');
                i += 2;
                copied = i;
            }
            b'$' => {
                let Some((placeholder, len)) = body.get(i + 1..).and_then(placeholder) else {
                    i += 1;
                    continue;
                };
                let end = i + 1 + len;
                out.push_str(body.get(copied..i).unwrap_or(""));
                let replacement = match placeholder {
                    Placeholder::All => {
                        saw_arguments_placeholder = true;
                        Some(all)
                    }
                    Placeholder::Index { index, spelled_out } => {
                        saw_arguments_placeholder |= spelled_out;
                        let args = split.get_or_insert_with(|| split_arguments(arguments));
                        index.and_then(|n| args.get(n)).map(String::as_str)
                    }
                };
                match replacement {
                    Some(text) => out.push_str(text),
                    None => out.push_str(body.get(i..end).unwrap_or("")),
                }
                i = end;
                copied = i;
            }
            _ => i += 1,
        }
    }
    out.push_str(body.get(copied..).unwrap_or(""));

    if !saw_arguments_placeholder && !all.is_empty() {
        out.push_str("\n\nARGUMENTS: ");
        out.push_str(all);
    }
    out
}

/// A placeholder found after a `$`.
#[derive(Debug, PartialEq, Eq)]
enum Placeholder {
    /// `$ARGUMENTS`.
    All,
    /// `$N` or `$ARGUMENTS[N]`; `index` is `None` when N is over the limit.
    Index {
        index: Option<usize>,
        /// Written as `$ARGUMENTS[N]` rather than `$N`.
        spelled_out: bool,
    },
}

/// Recognise a placeholder at the start of `rest` (the text just after a
/// `$`): what it is and how many bytes of `rest` it spans.
fn placeholder(rest: &str) -> Option<(Placeholder, usize)> {
    const NAME: &str = "ARGUMENTS";
    if let Some(after) = rest.strip_prefix(NAME) {
        if let Some(inner) = after.strip_prefix('[') {
            let digits = leading_digits(inner);
            if !digits.is_empty() && inner.get(digits.len()..)?.starts_with(']') {
                let len = NAME.len() + 1 + digits.len() + 1;
                let index = parse_index(digits);
                return Some((
                    Placeholder::Index {
                        index,
                        spelled_out: true,
                    },
                    len,
                ));
            }
        }
        let glued = after
            .chars()
            .next()
            .is_some_and(|c| c.is_ascii_alphanumeric() || c == '_');
        return (!glued).then_some((Placeholder::All, NAME.len()));
    }
    let digits = leading_digits(rest);
    if digits.is_empty() {
        return None;
    }
    Some((
        Placeholder::Index {
            index: parse_index(digits),
            spelled_out: false,
        },
        digits.len(),
    ))
}

/// The run of ASCII digits at the start of `text`.
fn leading_digits(text: &str) -> &str {
    let end = text
        .find(|c: char| !c.is_ascii_digit())
        .unwrap_or(text.len());
    text.get(..end).unwrap_or("")
}

/// An index within [`MAX_ARGUMENT_INDEX`], or `None`.
fn parse_index(digits: &str) -> Option<usize> {
    digits
        .parse::<usize>()
        .ok()
        .filter(|&n| n <= MAX_ARGUMENT_INDEX)
}

#[cfg(test)]
#[allow(clippy::unwrap_used, clippy::expect_used, clippy::panic)]
mod tests {
    use super::*;

    fn s(items: &[&str]) -> Vec<String> {
        items.iter().map(|i| (*i).to_owned()).collect()
    }

    #[test]
    fn split_plain_whitespace() {
        assert_eq!(
            split_arguments("  a  b\tc\r\nd  "),
            s(&["a", "b", "c", "d"])
        );
        assert!(split_arguments("").is_empty());
        assert!(split_arguments(" \t\r\n ").is_empty());
    }

    #[test]
    fn split_single_quotes_are_literal() {
        assert_eq!(
            split_arguments(r#"'a b' 'x\"$y' '\'"#),
            s(&["a b", r#"x\"$y"#, "\\"])
        );
    }

    #[test]
    fn split_double_quotes_escapes() {
        assert_eq!(
            split_arguments(r#""say \"hi\"" "c:\\dir" "\$5" "\n stays" "it's""#),
            s(&[r#"say "hi""#, r"c:\dir", "$5", r"\n stays", "it's"])
        );
    }

    #[test]
    fn split_backslash_outside_quotes() {
        assert_eq!(
            split_arguments(r#"a\ b \"q\" \'x end\"#),
            s(&["a b", "\"q\"", "'x", "end\\"])
        );
    }

    #[test]
    fn split_adjacent_pieces_join_and_empty_quotes_count() {
        assert_eq!(split_arguments(r#"a"b c"d 'e'"f""#), s(&["ab cd", "ef"]));
        assert_eq!(split_arguments(r#"'' "" x"#), s(&["", "", "x"]));
    }

    #[test]
    fn split_unterminated_quotes_take_the_rest() {
        assert_eq!(split_arguments("a 'b c  d"), s(&["a", "b c  d"]));
        assert_eq!(split_arguments(r#"a "b \" c"#), s(&["a", r#"b " c"#]));
        assert_eq!(split_arguments(r#"x"tail\"#), s(&["xtail\\"]));
    }

    #[test]
    fn split_unicode() {
        assert_eq!(
            split_arguments("héllo 'wörld ✓' 日本\u{a0}語"),
            s(&["héllo", "wörld ✓", "日本\u{a0}語"])
        );
    }

    #[test]
    fn arguments_placeholder_replaced_by_trimmed_raw_string() {
        assert_eq!(
            substitute_arguments("Run: $ARGUMENTS.", "  a   'b c'  "),
            "Run: a   'b c'."
        );
    }

    #[test]
    fn indexed_and_shorthand() {
        let body = "first=$ARGUMENTS[0] second=$1 third=$ARGUMENTS[2]";
        assert_eq!(
            substitute_arguments(body, r#"one "two 2" three"#),
            "first=one second=two 2 third=three"
        );
        assert_eq!(
            substitute_arguments("$01|$0x", "a b"),
            "b|ax\n\nARGUMENTS: a b"
        );
    }

    #[test]
    fn out_of_range_stays_as_written() {
        assert_eq!(
            substitute_arguments("$ARGUMENTS[0] $ARGUMENTS[1] $1 $0", "only"),
            "only $ARGUMENTS[1] $1 only"
        );
    }

    #[test]
    fn append_when_no_arguments_placeholder() {
        assert_eq!(
            substitute_arguments("Do it.", " x y "),
            "Do it.\n\nARGUMENTS: x y"
        );
        // `$N` alone does not count as an `$ARGUMENTS` placeholder.
        assert_eq!(
            substitute_arguments("Use $0.", "x"),
            "Use x.\n\nARGUMENTS: x"
        );
        // An out-of-range `$ARGUMENTS[N]` still counts.
        assert_eq!(substitute_arguments("$ARGUMENTS[3]", "x"), "$ARGUMENTS[3]");
        // Not appended when there are no arguments.
        assert_eq!(substitute_arguments("Do it.", "   "), "Do it.");
        assert_eq!(substitute_arguments("Do it.", ""), "Do it.");
    }

    #[test]
    fn empty_arguments_with_placeholders() {
        assert_eq!(
            substitute_arguments("[$ARGUMENTS] [$0] [$ARGUMENTS[0]]", ""),
            "[] [$0] [$ARGUMENTS[0]]"
        );
    }

    #[test]
    fn escaped_dollar() {
        assert_eq!(
            substitute_arguments(r"\$ARGUMENTS costs \$5 and $ARGUMENTS", "x"),
            "$ARGUMENTS costs $5 and x"
        );
        // Escaped forms do not count as placeholders: the arguments are appended.
        assert_eq!(
            substitute_arguments(r"\$ARGUMENTS \$ARGUMENTS[0] \$0", "x"),
            "$ARGUMENTS $ARGUMENTS[0] $0\n\nARGUMENTS: x"
        );
        // Only `\$` is an escape; other backslashes stay.
        assert_eq!(
            substitute_arguments(r"a\nb \\$0", "x"),
            "a\\nb \\$0\n\nARGUMENTS: x"
        );
        assert_eq!(substitute_arguments(r"end\", "x"), "end\\\n\nARGUMENTS: x");
    }

    #[test]
    fn arguments_glued_to_identifier_chars() {
        assert_eq!(
            substitute_arguments("$ARGUMENTSX $ARGUMENTS_1 $ARGUMENTS9", "x"),
            "$ARGUMENTSX $ARGUMENTS_1 $ARGUMENTS9\n\nARGUMENTS: x"
        );
        assert_eq!(
            substitute_arguments("$ARGUMENTS-x $ARGUMENTS.", "v"),
            "v-x v."
        );
        assert_eq!(
            substitute_arguments("$ARGUMENTS[x] $ARGUMENTS[] $ARGUMENTS[1", "v"),
            "v[x] v[] v[1"
        );
        assert_eq!(
            substitute_arguments("$arguments", "v"),
            "$arguments\n\nARGUMENTS: v"
        );
    }

    #[test]
    fn lone_and_trailing_dollars() {
        assert_eq!(
            substitute_arguments("$ $$0 $x $", "a"),
            "$ $a $x $\n\nARGUMENTS: a"
        );
    }

    #[test]
    fn no_re_expansion() {
        assert_eq!(
            substitute_arguments("$0 then $1 / $ARGUMENTS", r"'$1' '$ARGUMENTS[0]'"),
            "$1 then $ARGUMENTS[0] / '$1' '$ARGUMENTS[0]'"
        );
        assert_eq!(
            substitute_arguments("body", r"\$ARGUMENTS"),
            "body\n\nARGUMENTS: \\$ARGUMENTS"
        );
    }

    #[test]
    fn unicode_body_and_arguments() {
        assert_eq!(
            substitute_arguments("→ $0 ← «$ARGUMENTS» ✓", "ünï 'cödé ✓'"),
            "→ ünï ← «ünï 'cödé ✓'» ✓"
        );
    }

    #[test]
    fn crlf_body() {
        assert_eq!(
            substitute_arguments("line $0\r\n$ARGUMENTS[1]\r\n", "a b"),
            "line a\r\nb\r\n"
        );
        assert_eq!(
            substitute_arguments("line\r\n", "a\r\n"),
            "line\r\n\n\nARGUMENTS: a"
        );
    }

    #[test]
    fn index_limit_edges() {
        let many: Vec<String> = (0..=MAX_ARGUMENT_INDEX + 1)
            .map(|i| format!("a{i}"))
            .collect();
        let arguments = many.join(" ");
        let at_limit = format!("${MAX_ARGUMENT_INDEX}");
        let over_limit = format!("${}", MAX_ARGUMENT_INDEX + 1);
        let body = format!(
            "{at_limit} {over_limit} $ARGUMENTS[{}]",
            MAX_ARGUMENT_INDEX + 1
        );
        assert_eq!(
            substitute_arguments(&body, &arguments),
            format!(
                "a{MAX_ARGUMENT_INDEX} {over_limit} $ARGUMENTS[{}]",
                MAX_ARGUMENT_INDEX + 1
            )
        );
    }

    #[test]
    fn overflowing_index_stays() {
        let huge = "$99999999999999999999999999999 $ARGUMENTS[99999999999999999999999999]";
        assert_eq!(substitute_arguments(huge, "a"), huge);
        assert_eq!(parse_index("99999999999999999999999999"), None);
        assert_eq!(parse_index("4096"), Some(4096));
        assert_eq!(parse_index("4097"), None);
    }
}
