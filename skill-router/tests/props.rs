//! Property tests: the tokenizer and router never panic, and quoting round-trips.
#![allow(clippy::unwrap_used, clippy::expect_used, clippy::panic)]

mod common;

use proptest::prelude::*;
use skill_router::{Caller, Router, extract, join, parse_flags, tokenize};

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
    fn joined_tokens_tokenize_back(words in prop::collection::vec("[^\\x00]{0,12}", 0..8)) {
        let line = join(&words);
        let back: Vec<String> = tokenize(&line).unwrap().into_iter().map(|t| t.text).collect();
        prop_assert_eq!(back, words);
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
    let (_dir, snapshot) = common::seed_snapshot();
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
