//! Tests of the module above.

#![allow(clippy::unwrap_used, clippy::expect_used, clippy::panic)]

use super::*;

/// The fast path, when it reads `text`, agrees with the `serde_yaml` path; returns
/// whether it read it.
fn agrees(text: &str) -> bool {
    let Some(fast) = parse(text) else {
        return false;
    };
    match super::super::parse_with_serde(text) {
        Ok(slow) => assert_eq!(fast, slow, "paths differ on {text:?}"),
        Err(e) => panic!("fast path read {text:?}, serde_yaml refused it: {e:?}"),
    }
    true
}

/// Documents the fast path reads (each checked against the serde path).
const READ: &[&str] = &[
    "name: pdf\ndescription: Fill PDF forms. Use when a form is attached.\n",
    "name: pdf\ndescription: \"Fill: forms, # not a comment\"\n",
    "name: pdf\ndescription: 'It''s ok: ''quoted'''\n",
    "name: pdf\ndescription: 'a' \n",
    "name: x\ndescription: first line\n  second line\n   third line\nlicense: MIT\n",
    "name: x\ndescription: \"first\n  second \n  third\"\nb: c\n",
    "name: x\ndescription: \"\n  second\n  \"\n",
    "name: x\ndescription: 'first ''q''\n  second'\n",
    "name: x\ndescription: |\n  line one\n  line: two # kept\nnext: v\n",
    "name: x\ndescription: |-\n  line one\n  line two\n",
    "name: x\ndescription: >\n  folded one\n  folded two\n",
    "name: x\ndescription: >-\n  folded one\n  folded two\n",
    "name: x\ndescription: |\n  no final newline",
    "name: x\nmetadata:\n  author: me\n  version: \"1.0\"\n  tags:\n    - a\n    - 'b c'\n    - \"d: e\"\nlicense: MIT\n",
    "name: x\nmetadata:\nlicense:\n",
    "name: x\nallowed-tools:\n  - Read\n  - Bash(git:*)\n",
    "name: x\nname: y\nmetadata:\n  a: x1\n  a: x2\n",
    "name: héllo — wörld 日本\ndescription: emoji 🚀 and NBSP\u{a0}inside\u{a0}\n",
    "name: C#\ndescription: a:b, http://x.y/z, [brackets] {braces} and trailing   \n",
    "name: x\ndescription: Infinity\nother: nan\nthird: inf\nfourth: yes\nfifth: No\n",
    "name: x\n_private: v\nk-e-y_: v\n",
    "a: \"\"\nb: ''\n",
    "tags: [a, b c,d]\nrequires:\n  mcp: [rube]\nnone: []\nsp: [ ]\nx: [ a ]  \n",
    "tags: [a, 'b']\nk: [\"x, y\", 'it''s', \"\", '', \" sp \" , 'a: b # c']\n",
    "triggers:\n  patterns: ['\\bconvert\\s+((the|our)\\s+)?notes\\b', \"[x]\"]\n",
    "v: 1.0.0\nd: 2026-03-06\nt: 3rd party\nu: 10_000\nw: 1.2.3-beta\nx: 12:30\ny: 1e5x\n",
    "a: b\n  c\n  - d\n  \"e\" 'f'\n",
];

/// Documents the fast path declines (the serde path reads them or reports the error).
const DECLINED: &[&str] = &[
    "",
    "# comment\nname: x\n",
    "name: x\n\ndescription: y\n",
    "name: x # comment\n",
    "name: x\r\ndescription: y\r\n",
    "name: x\n\tdescription: y\n",
    "version: 1.0\n",
    "version: 10\n",
    "version: 1e5\n",
    "version: 1e-5\n",
    "version: 1E+5\n",
    "version: 0x1F\n",
    "version: 0b101\n",
    "version: 0o17\n",
    "version: 0123\n",
    "version: 340282366920938463463374607431768211455\n",
    "version: .5\n",
    "version: +1\n",
    "flag: true\n",
    "empty: ~\n",
    "n: null\n",
    "tags: [a, b,]\n",
    "tags: [a, , b]\n",
    "tags: [a, [b]]\n",
    "tags: [\"a\" b]\n",
    "tags: [\"a\": b]\n",
    "tags: [\"a\\\"b\"]\n",
    "tags: ['a' 'b']\n",
    "tags: ['unclosed]\n",
    "tags: [\"a\",]\n",
    "tags: [\"a\"] x]\n",
    "tags: [a: b]\n",
    "tags: [a, 1]\n",
    "tags: [a, b] # c\n",
    "tags: [a, b] x\n",
    "tags: [a,\n  b]\n",
    "tags: [a, b]\n  c\n",
    "m: {a: b}\n",
    "a: &x v\nb: *x\n",
    "a: !!str 1\n",
    "d: Use when: asked\n",
    "d: ends with:\n",
    "d: \"escape \\n\"\n",
    "d: \"unclosed\n",
    "d: 'unclosed\n",
    "d: \"x\" trailing\n",
    "d: |\n  a\n    deeper\n",
    "d: |+\n  a\n",
    "d: |2\n  a\n",
    "d: |\n  trailing \n",
    "d: x\n  # comment\n",
    "d: first line\n  second line\n   third: line\n",
    "list:\n- a\n- b\n",
    "list:\n  - a\n  - b: c\n",
    "list:\n  - a\n    continued\n",
    "- a\n- b\n",
    "  indented: root\n",
    "a:\n    b: c\n  d: e\n",
    "\"quoted\": key\n",
    "key : v\n",
    "key:v\n",
    "1: numeric key\n",
    "a: NEL\u{85}here\n",
    "a: LS\u{2028}here\n",
    "a: BOM\u{feff}here\n",
    "a: DEL\u{7f}here\n",
    "a: -2chat\n",
    "a: b\n  c: d\n",
    "a: \"x\"\n  more\n",
    "   \n",
    "a: b\n   ",
];

#[test]
fn reads_common_frontmatter_as_serde_does() {
    for text in READ {
        assert!(agrees(text), "fast path declined {text:?}");
    }
}

#[test]
fn declines_what_it_does_not_handle() {
    for text in DECLINED {
        assert!(parse(text).is_none(), "fast path read {text:?}");
    }
}

#[test]
fn duplicates_in_large_mappings_are_found_in_order() {
    let mut doc: String = (0..40).map(|i| format!("k{i}: v\n")).collect();
    doc.push_str("k3: again\nm:\n");
    doc.extend((0..40).map(|i| format!("  n{}: v\n", i % 30)));
    doc.push_str("k39: last\n");
    assert!(agrees(&doc));
    let parsed = parse(&doc).unwrap();
    assert_eq!(parsed.duplicate_keys.len(), 12);
    assert_eq!(parsed.duplicate_keys[0], "k3");
    assert_eq!(parsed.duplicate_keys[1], "m.n0");
}

/// Pieces the generated documents are made of: keys, and values after `key:`.
const KEYS: &[&str] = &["name", "description", "a", "name", "x-y", "_k", "metadata"];
const VALUES: &[&str] = &[
    " plain value",
    " plain: colon",
    " plain:colon",
    " trailing colon:",
    " hash # comment",
    " hash#inside",
    " 'single ''quoted'' '",
    " \"double: quoted # x\"",
    " \"two\n   lines\"",
    " 'two\n   lines '",
    " \"no\\escape\"",
    " \"unclosed",
    " plain\n  continued\n  again",
    " plain\n  continued: not",
    " plain\n  # comment",
    " |\n  literal\n  lines",
    " |-\n  literal",
    " >\n  folded\n  lines",
    " >-\n   folded",
    " |\n  a\n   b",
    "",
    "\n  inner: v\n  inner: w",
    "\n  - item\n  - 'quoted item'\n  - \"x: y\"",
    "\n  - item\n    more",
    "\n- item",
    " 1.0",
    " 1.0.0",
    " 2026-03-06",
    " 1e5",
    " 1e-5",
    " 12e",
    " 3rd",
    " 0x1F",
    " 99999999999999999999999999",
    " 1_000",
    " true",
    " ~",
    " [a, b]",
    " [a, b c]",
    " [rube]",
    " []",
    " [a,]",
    " [a, 'b']",
    " [\"x, y\", 'it''s', plain]",
    " [ \"sp\" , 'q' ]",
    " [\"#: x\", '[y]']",
    " [\"a\"b]",
    " ['unclosed]",
    " [\"a\",]",
    " ['a'']",
    " [\"\\t\"]",
    " [1.0.0, x]",
    " [a]\n  more",
    " {a: b}",
    " &a x",
    " *a",
    " !tag x",
    " -dash",
    " ? q",
    " @at",
    " `tick`",
    " %pct",
    " é — ü",
    " a\u{a0}",
    " x\n   \n  y",
    " x\n\n  y",
    "  two spaces",
    " x  ",
    "\n    deep: v\n  shallow: w",
];

#[test]
fn generated_documents_agree() {
    // A fixed linear congruential generator: the same documents on every run.
    let mut state: u64 = 0x2545_f491_4f6c_dd1d;
    let mut next = |n: usize| {
        state = state
            .wrapping_mul(6_364_136_223_846_793_005)
            .wrapping_add(1_442_695_040_888_963_407);
        (state >> 33) as usize % n
    };
    let mut read = 0;
    let total = 20_000;
    for _ in 0..total {
        let mut doc = String::new();
        for _ in 0..1 + next(4) {
            let indent = if next(4) == 0 { "  " } else { "" };
            doc.push_str(indent);
            doc.push_str(KEYS[next(KEYS.len())]);
            doc.push(':');
            let value = VALUES[next(VALUES.len())];
            if indent.is_empty() {
                doc.push_str(value);
            } else {
                doc.push_str(&value.replace('\n', "\n  "));
            }
            doc.push('\n');
        }
        if agrees(&doc) {
            read += 1;
        }
    }
    // Enough of them take the fast path for the comparison to mean something.
    assert!(read > total / 10, "{read} of {total} read");
}

/// Every `SKILL.md` under a folder, recursively.
fn skill_files(dir: &std::path::Path, out: &mut Vec<std::path::PathBuf>) {
    let Ok(entries) = std::fs::read_dir(dir) else {
        return;
    };
    for entry in entries.flatten() {
        let path = entry.path();
        if entry.file_type().is_ok_and(|t| t.is_dir()) {
            skill_files(&path, out);
        } else if entry.file_name() == "SKILL.md" {
            out.push(path);
        }
    }
}

/// Both paths agree on the frontmatter of every `SKILL.md` under the folder named by
/// `SKILL_FORMAT_YAML_CORPUS` (run with `--ignored`; skipped when it is unset).
#[test]
#[ignore = "needs a corpus folder in SKILL_FORMAT_YAML_CORPUS"]
fn a_corpus_agrees() {
    let Some(dir) = std::env::var_os("SKILL_FORMAT_YAML_CORPUS") else {
        return;
    };
    let mut files = Vec::new();
    skill_files(std::path::Path::new(&dir), &mut files);
    let (mut with_frontmatter, mut read) = (0, 0);
    for file in &files {
        let Ok(text) = std::fs::read_to_string(file) else {
            continue;
        };
        let Ok(doc) = crate::split(&text) else {
            continue;
        };
        let Some(fm) = doc.frontmatter else {
            continue;
        };
        with_frontmatter += 1;
        if agrees(fm.text) {
            read += 1;
        }
    }
    println!(
        "{} files, {with_frontmatter} with frontmatter, {read} read by the fast path",
        files.len()
    );
}

/// Whether every character is one the YAML reader accepts and no line is blank, as first
/// written (byte by byte throughout): the reference for [`plain_text`].
fn plain_text_reference(bytes: &[u8]) -> bool {
    plain_text_bytewise(bytes)
}

proptest::proptest! {
    #![proptest_config(proptest::prelude::ProptestConfig::with_cases(4000))]

    /// The vectorised check agrees with the byte-by-byte one, on text made of what decides
    /// it (spaces, line feeds, tabs, CRs, printable and refused characters) and on any text.
    #[test]
    fn the_plain_text_check_agrees_with_the_bytewise_one(
        pieces in proptest::collection::vec(
            proptest::sample::select(&[
                " ", "  ", "\n", "\t", "\r", "a", "~", "\u{7f}", "\u{85}", "\u{a0}",
                "\u{2028}", "\u{feff}", "\u{fffe}", "\u{e9}", "key: v",
            ][..]),
            0..24,
        ),
        any in "\\PC{0,40}",
    ) {
        let text = pieces.concat();
        proptest::prop_assert_eq!(plain_text(text.as_bytes()), plain_text_reference(text.as_bytes()));
        proptest::prop_assert_eq!(plain_text(any.as_bytes()), plain_text_reference(any.as_bytes()));
    }
}

/// Every text the tree borrows is a slice of the YAML read, spelled there as it reads;
/// every text that reading changed is owned. (The registry's scan of decoded values skips
/// borrowed text as already read in the file.)
#[test]
fn texts_written_as_they_read_are_borrowed_from_the_yaml() {
    let text = "name: pdf\nplain: a b c\ndouble: \"say \\\"hi\\\"\"\nsingle: 'x y'\n\
        doubled: 'it''s'\ncontinued: first\n  second\nquoted_on: \"first\n  second\"\n\
        block: |\n  line\nflow: [a b, \"c d\", 'e f', 'g''h']\nlist:\n  - one\n  - 'two'\n";
    // The escaped double quote declines the fast path; without it, the rest is read here.
    assert!(parse(text).is_none());
    let text = text.replace("double: \"say \\\"hi\\\"\"\n", "double: \"say hi\"\n");
    let parsed = parse(&text).unwrap();
    let range = text.as_ptr() as usize..text.as_ptr() as usize + text.len();
    let mut borrowed = Vec::new();
    let mut owned = Vec::new();
    let mut note = |t: &Cow<'_, str>| match t {
        Cow::Borrowed(b) => {
            assert!(range.contains(&(b.as_ptr() as usize)) || b.is_empty());
            assert!(text.contains(*b));
            borrowed.push(b.to_string());
        }
        Cow::Owned(o) => owned.push(o.clone()),
    };
    let Node::Map(entries) = &parsed.root else {
        panic!("{:?}", parsed.root)
    };
    for (key, value) in entries {
        note(key);
        match value {
            Node::Scalar { text, .. } => note(text),
            Node::Seq(items) => {
                for item in items {
                    if let Node::Scalar { text, .. } = item {
                        note(text);
                    }
                }
            }
            Node::Map(_) => panic!("{value:?}"),
        }
    }
    assert_eq!(
        owned,
        ["it's", "first second", "first second", "line\n", "g'h"],
        "borrowed: {borrowed:?}"
    );
    for expected in [
        "name", "pdf", "plain", "a b c", "double", "say hi", "x y", "a b", "c d", "e f", "one",
        "two",
    ] {
        assert!(
            borrowed.iter().any(|b| b == expected),
            "{expected}: {borrowed:?}"
        );
    }
}
