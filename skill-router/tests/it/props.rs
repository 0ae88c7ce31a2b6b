//! Property tests: the tokenizer and router never panic, and quoting round-trips.
#![allow(clippy::unwrap_used, clippy::expect_used, clippy::panic)]

use proptest::prelude::*;
use skill_router::{
    Caller, Router, Token, extract, join, join_tokens, parse_flags, quote_token, tokenize,
};

/// What a token means, columns aside.
fn shape(tokens: Vec<Token>) -> Vec<(String, bool, usize)> {
    tokens
        .into_iter()
        .map(|t| (t.text, t.quoted, t.unquoted_prefix))
        .collect()
}

proptest! {
    #![proptest_config(ProptestConfig::with_cases(512))]

    #[test]
    fn tokenizer_never_panics(s in "\\PC*|[ '\"\\\\a-z\\-=\\t\\n\\r\\x00|]{0,64}") {
        if let Ok(tokens) = tokenize(&s) {
            let _ = parse_flags(tokens.clone());
            prop_assert!(tokens.iter().all(|t| t.column >= 1));
        }
    }

    #[test]
    fn joined_words_tokenize_back(words in prop::collection::vec("[^\\x00]{0,12}", 0..8)) {
        let line = join(&words);
        let back: Vec<String> = tokenize(&line).unwrap().into_iter().map(|t| t.text).collect();
        prop_assert_eq!(back, words);
    }

    /// Any tokenized line, joined back with quoting kept, tokenizes to the same tokens:
    /// text, whether quoted, and where quoting starts (so flags stay flags and quoted
    /// `"--to"` stays a value).
    #[test]
    fn joined_tokens_tokenize_back(line in "[ '\"\\\\a-z\\-=é]{0,48}") {
        if let Ok(tokens) = tokenize(&line) {
            let joined = join_tokens(&tokens);
            let back = tokenize(&joined).unwrap();
            prop_assert_eq!(
                parse_flags(back.clone()),
                parse_flags(tokens.clone()),
                "{:?} -> {:?}",
                line,
                joined
            );
            prop_assert_eq!(shape(back), shape(tokens));
        }
    }

    /// Hand-built tokens keep their text and whether they were quoted (an unquoted one that
    /// no line could hold unquoted, such as `a b` or an empty word, comes back quoted).
    #[test]
    fn quoted_tokens_stay_quoted(
        words in prop::collection::vec(("[^\\x00]{0,12}", any::<bool>()), 0..8)
    ) {
        let tokens: Vec<Token> = words
            .iter()
            .map(|(text, quoted)| Token {
                text: text.clone(),
                quoted: *quoted,
                unquoted_prefix: if *quoted { 0 } else { text.len() },
                column: 1,
            })
            .collect();
        let back = tokenize(&join_tokens(&tokens)).unwrap();
        prop_assert_eq!(back.len(), tokens.len());
        for (b, t) in back.iter().zip(&tokens) {
            let bare = !t.text.is_empty()
                && !t.text.chars().any(|c| c.is_ascii_whitespace() || "'\"\\".contains(c));
            prop_assert_eq!(
                (&b.text, b.quoted),
                (&t.text, t.quoted || !bare),
                "written as {}",
                quote_token(t)
            );
        }
    }

    #[test]
    fn extraction_never_panics_and_keeps_order(s in "(```cmd\\n|```\\n|~~~\\n|[a-z .\\-\"']{0,20}\\n|\\r\\n)*") {
        let e = extract(&s);
        let lines: Vec<u32> = e.commands().map(|c| c.line).collect();
        let mut sorted = lines.clone();
        sorted.sort_unstable();
        prop_assert_eq!(lines, sorted);
    }
}

#[test]
fn router_never_panics_on_arbitrary_lines() {
    let (_dir, snapshot) = crate::common::seed_snapshot();
    let router = Router::new(&snapshot);
    let mut runner = proptest::test_runner::TestRunner::new(ProptestConfig::with_cases(256));
    runner
        .run(&"[/ a-z._\\-:'\"|\\\\]{0,40}", |s| {
            let _ = router.route(&s, Caller::Model);
            let _ = router.route(&s, Caller::User);
            let _ = router.route_output(&format!("x\n```cmd\n{s}\n```\n"));
            Ok(())
        })
        .unwrap();
}
