//! Property tests: no input makes the grammar, the YAML reader or the validator panic.

#![allow(clippy::unwrap_used, clippy::expect_used, clippy::panic)]

use proptest::prelude::*;
use skill_format::{Dialect, Mode, Origin, ParseOptions, parse_skill, split};

fn options(dialect: Option<Dialect>, mode: Mode, origin: Origin) -> ParseOptions {
    let mut o = ParseOptions::new("x/SKILL.md", origin);
    o.dialect = dialect;
    o.mode = mode;
    o
}

fn any_dialect() -> impl Strategy<Value = Option<Dialect>> {
    prop_oneof![
        Just(None),
        Just(Some(Dialect::AgentSkills)),
        Just(Some(Dialect::Actions)),
        Just(Some(Dialect::Lily)),
        Just(Some(Dialect::Pegasus)),
        Just(Some(Dialect::Toolsets)),
    ]
}

fn any_origin() -> impl Strategy<Value = Origin> {
    prop_oneof![
        "[a-z-]{0,10}".prop_map(Origin::folder),
        ("[a-z]{0,5}", "[a-z_]{0,5}")
            .prop_map(|(domain, action)| Origin::Action { domain, action }),
        "[a-z]{0,5}".prop_map(|stem| Origin::Note { stem }),
    ]
}

/// Frontmatter-shaped text: fences, keys of every dialect, YAML punctuation.
fn frontmatter_like() -> impl Strategy<Value = String> {
    let piece = prop_oneof![
        Just("---\n".to_owned()),
        Just("...\n".to_owned()),
        Just("\r\n".to_owned()),
        Just("\n".to_owned()),
        Just("\t".to_owned()),
        Just("\u{feff}".to_owned()),
        Just(": ".to_owned()),
        Just("- ".to_owned()),
        Just("[a, {b: c}]".to_owned()),
        Just("&a ".to_owned()),
        Just("*a ".to_owned()),
        Just("|\n  ".to_owned()),
        Just("\"q\\\"".to_owned()),
        prop::sample::select(skill_format::KNOWN_KEYS).prop_map(|k| format!("{k}: ")),
        "[a-zA-Z0-9 ._\\-]{0,12}",
        any::<char>().prop_map(|c| c.to_string()),
    ];
    prop::collection::vec(piece, 0..40).prop_map(|v| v.concat())
}

proptest! {
    #![proptest_config(ProptestConfig::with_cases(512))]

    #[test]
    fn arbitrary_bytes_never_panic(bytes in prop::collection::vec(any::<u8>(), 0..2048),
                                   dialect in any_dialect(),
                                   strict in any::<bool>(),
                                   origin in any_origin()) {
        let mode = if strict { Mode::Strict } else { Mode::Lenient };
        let f = parse_skill(&bytes, &options(dialect, mode, origin));
        // Every diagnostic is about the file it was given.
        prop_assert!(f.diagnostics.iter().all(|d| d.path.ends_with("SKILL.md")));
    }

    #[test]
    fn frontmatter_like_text_never_panics(text in frontmatter_like(),
                                          dialect in any_dialect(),
                                          strict in any::<bool>(),
                                          origin in any_origin()) {
        let mode = if strict { Mode::Strict } else { Mode::Lenient };
        let f = parse_skill(text.as_bytes(), &options(dialect, mode, origin));
        // Positions, when present, are inside the file.
        let lines = text.split('\n').count() as u32 + 1;
        for d in &f.diagnostics {
            if let Some(l) = d.line {
                prop_assert!(l >= 1 && l <= lines, "line {} of {}: {}", l, lines, d);
            }
        }
    }

    #[test]
    fn split_body_is_a_suffix_of_the_input(text in frontmatter_like()) {
        if let Ok(doc) = split(&text) {
            prop_assert!(text.ends_with(doc.body));
        }
    }
}
