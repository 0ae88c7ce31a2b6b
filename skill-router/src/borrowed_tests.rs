//! Tests that routing with invocations borrowed from the model's output gives exactly what
//! the owned router gave before (kept apart from `route.rs` for its size).

use std::borrow::Cow;
use std::sync::Arc;

use crate::flags::tests::{VARIED_ARGUMENTS, reference};
use crate::route::tests::snapshot;
use crate::{Flags, Invocation, Route, Router, access_of};

/// Every command of an output, routed by `route_output` (borrowing) and by
/// `route_model` (owned), agrees with what the owned router built before invocations
/// borrowed: the flags and positionals of the reference parser, the registered name,
/// the trimmed line, the layer and the handler; any other route the same as
/// `route_model`'s. Unquoted words are borrowed, not copied. The lines are the router's
/// own cases, then every argument line of the flag parser's test after a skill name.
#[test]
fn borrowed_routes_match_the_owned_reference() {
    let (_dir, snapshot) = snapshot();
    let router = Router::new(&snapshot);
    let own = [
        "email.send --to alice@co.com bob@co.com --subject 'Status 1' --body \"All done.\"",
        "email.search draft-1 --mode=fast -- --literal",
        "  email.send --to bob x --subject=\"Q1 Report\"  ",
        "email.send --größe 3 --名前 x '日本 語' x\u{a0}y",
        "email.search\u{a0} --q x",
        "\"email.send\" --to x",
        "email.s\\end --to x",
        "email.send --=x y --= '' \"\"",
        "email.send \"|\" --a\\ b --c \\\\",
        "email.send",
        "email.send --help",
        "email.send --help me",
        "email.send --to 'x",
        "email.send a | b",
        "email.send a\0",
        "email.purge --all",
        "nosuch --a b",
        "email.sned --to x",
        "/email.send x",
        "get_skill: email.send",
        "get_skill email.send --outline",
        "get_skill a b",
        "",
        "   ",
    ];
    let varied: Vec<String> = VARIED_ARGUMENTS
        .iter()
        .map(|a| format!("email.send {a}"))
        .collect();
    let mut output = String::from("Some text.\n```cmd\n");
    for line in own.iter().copied().chain(varied.iter().map(String::as_str)) {
        output.push_str(line);
        output.push('\n');
    }
    output.push_str("```\n");
    let routed = router.route_output(&output);
    assert_eq!(
        routed.routes.len(),
        own.len() - 2 + varied.len(),
        "blank lines are not commands"
    );
    // An argument line invokes unless it asks for help or holds a pipe (all of them
    // tokenize).
    let varied_invoking = VARIED_ARGUMENTS
        .iter()
        .filter(|a| !a.contains('|') && !reference(crate::tokenize(a).unwrap()).2)
        .count();
    let mut invoked = 0;
    let mut checked_simple = 0;
    for r in routed.routes {
        let line = r.command;
        let owned = format!("{:?}", router.route_model(line));
        if let Route::Invoke(call) = &r.route {
            invoked += 1;
            // Unquoted parts borrow from the output.
            assert!(matches!(call.raw, Cow::Borrowed(_)), "{line:?}");
            // The name is borrowed unless it was written with an escape (a whole quoted
            // word borrows too).
            let escaped = line.contains("\\end");
            assert_eq!(matches!(call.skill, Cow::Borrowed(_)), !escaped, "{line:?}");
            let mut tokens = crate::tokenize(line).unwrap();
            let name = tokens.remove(0).text;
            for (k, _) in &call.flags {
                if line.contains(&format!(" --{k} ")) || line.ends_with(&format!(" --{k}")) {
                    assert!(matches!(k, Cow::Borrowed(_)), "{line:?} {k}");
                }
            }
            // When every word of the line is plain or one whole quoted span, with no
            // backslash anywhere, nothing is copied: every flag name, value and positional
            // borrows from the output.
            let simple = !line.contains('\\') && whole_quotes_only(line);
            if simple {
                checked_simple += 1;
                for (k, v) in &call.flags {
                    assert!(matches!(k, Cow::Borrowed(_)), "{line:?} {k}");
                    for value in v.values() {
                        assert!(matches!(value, Cow::Borrowed(_)), "{line:?} {value}");
                    }
                }
                for p in &call.positionals {
                    assert!(matches!(p, Cow::Borrowed(_)), "{line:?} {p}");
                }
            }
            let (flags, positionals, help) = reference(tokens);
            assert!(!help);
            let found = snapshot.resolve(name.trim()).unwrap();
            let mut want_flags = Flags::new();
            for (k, v) in flags {
                want_flags.insert(k, v);
            }
            let want = Invocation {
                skill: found.name.to_owned(),
                flags: want_flags,
                positionals,
                raw: line.trim().to_owned(),
                access: access_of(found.name),
                handler: found.handler.map(str::to_owned),
                layer: Arc::clone(found.layer),
            };
            let call = call.clone().into_owned();
            assert_eq!(call, want, "{line:?}");
            assert_eq!(format!("{:?}", Route::Invoke(call)), owned, "{line:?}");
        } else {
            assert_eq!(format!("{:?}", r.route.into_owned()), owned, "{line:?}");
        }
    }
    assert_eq!(invoked, OWN_INVOKING + varied_invoking);
    // The lines with quoted values and positionals among them, not only plain ones.
    assert!(checked_simple >= 6, "{checked_simple} simple lines");
}

/// How many of the router's own lines invoke: the four with flags; the names written with
/// a trailing no-break space, in quotes and with an escape; the two with odd flags and with
/// a quoted pipe and escapes; the bare name; and the mutating `email.purge`.
const OWN_INVOKING: usize = 11;

/// Whether every quote in `line` opens a word and its closing quote ends that word (each
/// quoted span is a whole word, like `'a b'` or `"x"`, never `a"b"` or `--x="y"`).
fn whole_quotes_only(line: &str) -> bool {
    let chars: Vec<char> = line.chars().collect();
    let mut i = 0;
    while i < chars.len() {
        let c = chars[i];
        if c == '\'' || c == '"' {
            if i > 0 && !chars[i - 1].is_ascii_whitespace() {
                return false;
            }
            let Some(close) = (i + 1..chars.len()).find(|&j| chars[j] == c) else {
                return false;
            };
            if chars
                .get(close + 1)
                .is_some_and(|n| !n.is_ascii_whitespace())
            {
                return false;
            }
            i = close + 1;
        } else {
            i += 1;
        }
    }
    true
}
