//! Tests of the module above.

#![allow(clippy::unwrap_used, clippy::expect_used, clippy::panic)]

use super::*;

fn text_of(root: &Node, key: &str) -> String {
    root.get(key).and_then(Node::as_scalar).unwrap().to_owned()
}

#[test]
fn keeps_scalar_source_text() {
    let p = parse(
        "version: 1.0\nratio: 0.50\nupdated: 2026-03-17\nyes_: yes\nb: true\nn: null\nt: ~\ne:\nhex: 0x1F\n",
    )
    .unwrap();
    let r = &p.root;
    assert_eq!(text_of(r, "version"), "1.0");
    assert_eq!(text_of(r, "ratio"), "0.50");
    assert_eq!(text_of(r, "updated"), "2026-03-17");
    assert_eq!(text_of(r, "yes_"), "yes");
    assert_eq!(text_of(r, "b"), "true");
    assert_eq!(text_of(r, "n"), "null");
    assert_eq!(text_of(r, "t"), "~");
    assert_eq!(text_of(r, "e"), "");
    assert_eq!(text_of(r, "hex"), "0x1F");
    assert!(r.get("n").unwrap().is_null());
    assert_eq!(
        r.get("b"),
        Some(&Node::Scalar {
            text: "true".into(),
            kind: ScalarKind::Bool(true)
        })
    );
}

#[test]
fn nested_text_is_kept_in_lists_and_maps() {
    let p = parse("m:\n  v: 0.10\n  l: [a, 2.50, {k: 1e3}]\n").unwrap();
    let m = p.root.get("m").unwrap();
    assert_eq!(text_of(m, "v"), "0.10");
    let Node::Seq(items) = m.get("l").unwrap() else {
        panic!("list expected")
    };
    assert_eq!(items[1].as_scalar(), Some("2.50"));
    assert_eq!(items[2].get("k").unwrap().as_scalar(), Some("1e3"));
}

#[test]
fn flow_style_is_accepted() {
    let p = parse("requires:\n  mcp: [rube]\ntags: [a, b]\n").unwrap();
    assert_eq!(
        p.root.get("tags"),
        Some(&Node::Seq(vec![
            Node::Scalar {
                text: "a".into(),
                kind: ScalarKind::Str
            },
            Node::Scalar {
                text: "b".into(),
                kind: ScalarKind::Str
            },
        ]))
    );
}

#[test]
fn duplicate_keys_are_reported_with_paths() {
    let p = parse("name: a\nname: b\nmetadata:\n  x: 1\n  x: 2\n").unwrap();
    assert_eq!(
        p.duplicate_keys,
        vec!["name".to_owned(), "metadata.x".to_owned()]
    );
    assert_eq!(text_of(&p.root, "name"), "b");
}

#[test]
fn unquoted_colon_is_an_error_with_position() {
    let e = parse("name: x\ndescription: Use when: asked\n").unwrap_err();
    assert_eq!(e.line, Some(2));
    assert!(e.column.is_some());
    assert!(e.message.contains("mapping values"), "{}", e.message);
}

#[test]
fn billion_laughs_is_an_error() {
    let mut doc = String::from("a: &a [x,x,x,x,x,x,x,x,x]\n");
    for (prev, name) in ["a", "b", "c", "d", "e", "f", "g", "h"]
        .iter()
        .zip(["b", "c", "d", "e", "f", "g", "h", "i"])
    {
        doc.push_str(&format!("{name}: &{name} [*{prev},*{prev},*{prev},*{prev},*{prev},*{prev},*{prev},*{prev},*{prev}]\n"));
    }
    assert!(parse(&doc).is_err());
}

#[test]
fn deep_nesting_is_an_error_not_a_stack_overflow() {
    let doc = format!("a: {}{}\n", "[".repeat(10_000), "]".repeat(10_000));
    assert!(parse(&doc).is_err());
}

fn nested(depth: usize) -> String {
    format!("a: {}x{}\n", "[".repeat(depth), "]".repeat(depth))
}

#[test]
fn flow_nesting_is_accepted_up_to_the_limit() {
    let text = nested(MAX_FLOW_NESTING);
    let mut node = &parse(&text).unwrap().root.get("a").cloned().unwrap();
    let mut depth = 0;
    while let Node::Seq(items) = node {
        depth += 1;
        node = &items[0];
    }
    assert_eq!(depth, MAX_FLOW_NESTING);
    // Depth is nesting, not the number of lists: many siblings, each with closing
    // brackets in quoted text and comments, are fine.
    let doc: String = (0..1_000)
        .map(|i| format!("k{i}: [a, {{b: c}}, ']]', \"}}\"] # ]\n"))
        .collect();
    assert!(parse(&doc).is_ok());
}

#[test]
fn flow_nesting_beyond_the_limit_is_refused_before_parsing() {
    let e = parse(&nested(MAX_FLOW_NESTING + 1)).unwrap_err();
    assert!(
        e.message.contains("nested more than 64 deep"),
        "{}",
        e.message
    );
    assert_eq!(
        (e.line, e.column),
        (Some(1), Some(4 + MAX_FLOW_NESTING as u32))
    );
    // The attack: a million brackets are refused by the pre-scan.
    let attack = format!("metadata: {}\n", "[".repeat(1_000_000));
    assert!(
        parse(&attack)
            .unwrap_err()
            .message
            .contains("nested more than")
    );
    // Mixed brackets count alike.
    assert!(parse(&format!("a: {}\n", "[{".repeat(MAX_FLOW_NESTING))).is_err());
}

#[test]
fn closing_brackets_inside_quotes_do_not_hide_nesting() {
    // Each round opens 2 lists for real and closes 2 inside a quoted scalar: the real
    // depth grows by 2 a round, and the pre-scan must see it.
    let round = "[[ ']]', ";
    let doc = format!("a: {}\n", round.repeat(MAX_FLOW_NESTING));
    let e = parse(&doc).unwrap_err();
    assert!(e.message.contains("nested more than"), "{}", e.message);
    let doc = format!("a: {}\n", "[[ \"]]\", ".repeat(MAX_FLOW_NESTING));
    assert!(
        parse(&doc)
            .unwrap_err()
            .message
            .contains("nested more than")
    );
    // A plain scalar with an apostrophe, then a real quoted scalar holding brackets.
    let doc = format!("a: {}\n", "[it 's, [[ ']]', ".repeat(MAX_FLOW_NESTING));
    assert!(
        parse(&doc)
            .unwrap_err()
            .message
            .contains("nested more than")
    );
    let doc = format!("a: {}\n", "[it 's, [[ \"x']]\", ".repeat(MAX_FLOW_NESTING));
    assert!(
        parse(&doc)
            .unwrap_err()
            .message
            .contains("nested more than")
    );
}

/// Whether `doc` is refused by the nesting pre-scan.
fn refused_as_nested(doc: &str) -> bool {
    parse(doc)
        .err()
        .is_some_and(|e| e.message.contains("nested more than"))
}

#[test]
fn brackets_in_quoted_scalars_are_text() {
    // The hostile-input report: 65 quoted regex triggers, and no flow collection deeper
    // than one.
    let pats: String = (0..65)
        .map(|i| format!("    - \"[0-9]+ ?u{i}\"\n"))
        .collect();
    let doc = format!(
        "name: unit-converter\ndescription: Converts quantities between units.\nversion: 0.3.1\ntriggers:\n  keywords: [\"convert\"]\n  patterns:\n{pats}default_enabled: true\n"
    );
    let p = parse(&doc).unwrap();
    let Some(Node::Seq(patterns)) = p.root.get("triggers").and_then(|t| t.get("patterns")) else {
        panic!("patterns expected")
    };
    assert_eq!(patterns.len(), 65);
    assert_eq!(patterns[64].as_scalar(), Some("[0-9]+ ?u64"));
    // Quoted scalars inside a flow collection, of both kinds, with their escapes.
    let n = 4 * MAX_FLOW_NESTING;
    for item in ["\"{\"", "'{'", "\"[\\\"[\"", "'[''['", "\"\\\\[\""] {
        let doc = format!("tags: [{}]\n", vec![item; n].join(", "));
        assert!(parse(&doc).is_ok(), "{doc}");
    }
    // A multi-line quoted scalar: its brackets stay text on every line.
    let doc = format!("a: \"{}\"\n", "[{\n  ".repeat(n));
    assert!(parse(&doc).is_ok());
}

#[test]
fn brackets_in_comments_and_block_text_are_text() {
    let n = 4 * MAX_FLOW_NESTING;
    // Comments, on their own lines and after values.
    let doc: String = (0..n)
        .map(|i| format!("# [{{ note {i}\nk{i}: v # [[\n"))
        .collect();
    assert!(parse(&doc).is_ok());
    // Plain scalars in block context, on one line and running over several.
    let doc: String = (0..n).map(|i| format!("p{i}: a[b{{c\n")).collect();
    assert!(parse(&doc).is_ok());
    let doc = format!("p: first\n  {}\n", "[{ ".repeat(n));
    assert!(parse(&doc).is_ok());
    let doc: String = (0..n).map(|i| format!("- item {i} [x\n")).collect();
    assert!(parse(&doc).is_ok());
    // Block scalars, literal and folded, with brackets at the start of their lines.
    for style in ["|", ">-", "|2"] {
        let doc = format!("d: {style}\n{}e: x\n", "  [{ text\n".repeat(n));
        assert!(parse(&doc).is_ok(), "{doc}");
    }
    // A verbatim tag may hold brackets (checked by the pre-scan alone: serde_yaml reads
    // tags as enum variants).
    let doc = format!("a: [{}]\n", vec!["!<t[x]> v"; n].join(", "));
    assert!(check_nesting(&doc).is_ok());
}

#[test]
fn real_nesting_is_refused_wherever_text_looks_like_a_quote_or_comment() {
    let deep = format!(
        "{}x{}",
        "[".repeat(MAX_FLOW_NESTING + 1),
        "]".repeat(MAX_FLOW_NESTING + 1)
    );
    // An apostrophe in a plain scalar, or in a comment, opens no quoted scalar.
    assert!(refused_as_nested(&format!("a: don't\nb: {deep}\nc: '\n")));
    assert!(refused_as_nested(&format!(
        "a: x # it's\nb: {deep}\nc: '\n"
    )));
    assert!(refused_as_nested(&format!(
        "a: [x, y#'\n  , {deep}, \"'\"]\n"
    )));
    // A block scalar ends where its indentation does.
    assert!(refused_as_nested(&format!(
        "a: |\n  it's \"\nb: {deep}\nc: \"\n"
    )));
    // A plain scalar in block context ends at a line indented no deeper than its block.
    assert!(refused_as_nested(&format!("a:\n  b: it's\n  c: {deep}\n")));
    // In a flow collection a plain scalar ends at a bracket, which nests.
    assert!(refused_as_nested(&format!(
        "a: {}\n",
        "[x".repeat(MAX_FLOW_NESTING + 1)
    )));
    assert!(!refused_as_nested(&format!(
        "a: {}{}\n",
        "[x".repeat(MAX_FLOW_NESTING),
        "]".repeat(MAX_FLOW_NESTING)
    )));
    // A verbatim tag may hold an apostrophe and a comma.
    assert!(refused_as_nested(&format!("a: [!<x,'y> {deep}, 'z']\n")));
    // An escaped quote does not close a double-quoted scalar, a doubled one does not close
    // a single-quoted one; the scalar after them still ends.
    assert!(refused_as_nested(&format!("a: \"\\\"\"\nb: {deep}\n")));
    assert!(refused_as_nested(&format!("a: 'it''s'\nb: {deep}\n")));
}

fn key_checks(keys: usize) -> usize {
    let doc: String = (0..keys).map(|i| format!("k{i}: v\n")).collect();
    let pass = Pass::default();
    AnySeed {
        pass: &pass,
        path: Path::Root,
    }
    .deserialize(serde_yaml::Deserializer::from_str(&doc))
    .unwrap();
    pass.key_checks.get()
}

#[test]
fn duplicate_key_check_is_linear_in_the_number_of_keys() {
    // Doubling the keys doubles the work (a scan per key would quadruple it).
    let (small, large) = (key_checks(5_000), key_checks(10_000));
    assert!(large <= 2 * small + 2, "{small} -> {large}");
    // The attack: as many distinct keys as the node budget holds (a key and its
    // value each) parse, with no duplicate reported.
    let keys = (MAX_YAML_NODES - 1) / 2;
    let doc: String = (0..keys).map(|i| format!("k{i}: v\n")).collect();
    let p = parse(&doc).unwrap();
    assert!(p.duplicate_keys.is_empty());
    assert!(matches!(&p.root, Node::Map(e) if e.len() == keys));
}

#[test]
fn tabs_in_indentation_are_an_error() {
    assert!(parse("name: x\n\tdescription: y\n").is_err());
}

#[test]
fn empty_document_is_null() {
    assert!(parse("").unwrap().root.is_null());
    assert!(parse("# only a comment\n").unwrap().root.is_null());
}

#[test]
fn key_positions() {
    let text = "name: a\n\"description\": b\n  nested: c\nlicense : MIT\n";
    assert_eq!(key_position(text, "name"), Some((1, 1)));
    assert_eq!(key_position(text, "description"), Some((2, 1)));
    assert_eq!(key_position(text, "nested"), None);
    assert_eq!(key_position(text, "license"), Some((4, 1)));
    assert_eq!(key_position(text, "lic"), None);
}

#[test]
fn recovery_quotes_flat_values_with_colons() {
    let (fixed, lines) =
        recover_unquoted_colons("name: x\ndescription: Use when: the user's ask\n").unwrap();
    assert_eq!(fixed, "name: x\ndescription: 'Use when: the user''s ask'\n");
    assert_eq!(lines, vec![2]);
    let p = parse(&fixed).unwrap();
    assert_eq!(text_of(&p.root, "description"), "Use when: the user's ask");
}

#[test]
fn recovery_leaves_quoted_block_and_nested_lines_alone() {
    assert!(recover_unquoted_colons("a: \"x: y\"\nb: |\n  c: d\n  e: f: g\n").is_none());
    assert!(recover_unquoted_colons("name: plain\n").is_none());
}

#[test]
fn recovery_keeps_crlf() {
    let (fixed, _) = recover_unquoted_colons("d: a: b\r\nn: x\r\n").unwrap();
    assert_eq!(fixed, "d: 'a: b'\r\nn: x\r\n");
}

/// Aliases of one large value are refused past `MAX_EXPANDED_TEXT_BYTES` of text, at its
/// edge: a 1 MB string aliased 4,000 times took 4 GB (and aborted a serving process).
#[test]
fn aliases_expand_to_at_most_the_text_cap() {
    let value = "x".repeat(1024 * 1024 - 1);
    // Keys `a` and the second one, the anchored value, then fifteen aliases of it.
    let doc = |second_key: &str| {
        let mut d = format!("a: &v {value}\n{second_key}:\n");
        for _ in 0..15 {
            d.push_str("  - *v\n");
        }
        d
    };
    let at = doc(&"k".repeat(15));
    assert_eq!(1 + 15 + 16 * value.len(), MAX_EXPANDED_TEXT_BYTES);
    let parsed = parse(&at).unwrap();
    assert!(matches!(&parsed.root, Node::Map(e) if e.len() == 2));
    let over = doc(&"k".repeat(16));
    let e = parse(&over).unwrap_err();
    assert!(e.message.contains("expands to more than 16 MiB"), "{e:?}");
    // Thousands of aliases of it fail as fast, without the memory.
    let mut huge = format!("a: &v {value}\nl:\n");
    for _ in 0..4000 {
        huge.push_str("  - *v\n");
    }
    assert!(parse(&huge).is_err());
}

/// `a: &a [x × 998]`, `z: [x × filler]`, then 98 lines `bN: *a`: 1 (root) + 99 × 1,000
/// (key, list, 998 items) + 2 + `filler` nodes.
fn aliased(filler: usize) -> String {
    let items = vec!["x"; 998].join(", ");
    let mut doc = format!("a: &a [{items}]\nz: [{}]\n", vec!["x"; filler].join(", "));
    for n in 1..=98 {
        doc.push_str(&format!("b{n}: *a\n"));
    }
    doc
}

/// The node budget, met exactly by a document of aliases, passes; one node more is
/// refused as too large, on the line of the alias whose replay crossed it (serde_yaml
/// places the error in the anchor's definition, on line 1). 10,000 aliases of a
/// 1,000-item list took 4.4 s and 1.24 GB; they are refused at the budget.
#[test]
fn aliases_count_every_node_they_repeat_up_to_the_budget() {
    assert_eq!(1 + 99 * 1_000 + 2 + 997, MAX_YAML_NODES);
    let at = aliased(997);
    assert!(matches!(&parse(&at).unwrap().root, Node::Map(e) if e.len() == 100));
    let e = parse(&aliased(998)).unwrap_err();
    assert_eq!(e.kind, YamlErrorKind::TooLarge, "{e:?}");
    assert_eq!((e.line, e.column), (Some(100), Some(1)), "{e:?}");
    assert!(
        e.message.contains("more than 100000 YAML nodes") && e.message.contains("`b98["),
        "{}",
        e.message
    );
}

/// The document: 10,000 aliases of a 1,000-item list, refused after the budget's
/// nodes were built, on the line of the first alias past it.
#[test]
fn a_fan_out_of_aliases_is_refused_at_the_budget() {
    let items = vec!["x"; 1_000].join(", ");
    let mut doc = format!("a: &a [{items}]\n");
    for n in 0..10_000 {
        doc.push_str(&format!("b{n}: *a\n"));
    }
    let pass = Pass::default();
    let result = AnySeed {
        pass: &pass,
        path: Path::Root,
    }
    .deserialize(serde_yaml::Deserializer::from_str(&doc));
    assert!(result.is_err());
    assert_eq!(pass.budget.nodes(), MAX_YAML_NODES + 1);
    let e = parse(&doc).unwrap_err();
    assert_eq!(e.kind, YamlErrorKind::TooLarge);
    // 1,003 for the root and `a`, then 1,002 an alias: the 99th (`b98`, line 100) crosses.
    assert_eq!(e.line, Some(100), "{e:?}");
}

/// Aliases of aliases are counted as what they expand to (the way around a count of
/// alias events): `c` is 50 aliases of `b`, itself 50 aliases of a 50-item list.
#[test]
fn nested_aliases_are_counted_as_expanded() {
    let xs = vec!["x"; 50].join(",");
    let refs = |to: &str| vec![format!("*{to}"); 50].join(",");
    let doc = format!("a: &a [{xs}]\nb: &b [{}]\nc: [{}]\n", refs("a"), refs("b"));
    let e = parse(&doc).unwrap_err();
    assert_eq!(e.kind, YamlErrorKind::TooLarge, "{e:?}");
    assert!(e.message.contains("100000 YAML nodes"), "{e:?}");
    assert_eq!(e.line, Some(3), "{e:?}");
    // Nine levels of nine aliases reach serde_yaml's own replay limit first: too large as
    // well, on the line of the field being read.
    let mut doc = String::from("a: &a [x,x,x,x,x,x,x,x,x]\n");
    for (prev, name) in ["a", "b", "c", "d", "e", "f", "g", "h"]
        .iter()
        .zip(["b", "c", "d", "e", "f", "g", "h", "i"])
    {
        let refs = vec![format!("*{prev}"); 9].join(",");
        doc.push_str(&format!("{name}: &{name} [{refs}]\n"));
    }
    let e = parse(&doc).unwrap_err();
    assert_eq!(e.kind, YamlErrorKind::TooLarge, "{e:?}");
    assert!(e.message.contains("replayed more often"), "{e:?}");
    assert!(e.line.is_some_and(|l| l > 1), "{e:?}");
}

/// A written-out list: `l:` then `n` items is 3 + `n` nodes. At the budget the fast path
/// reads it (and the serde_yaml path agrees); one item more, the fast path declines and
/// the serde_yaml path refuses it on the line of the item that crossed.
#[test]
fn the_fast_path_counts_nodes_as_the_serde_path_does() {
    let doc = |n: usize| format!("l:\n{}", "  - x\n".repeat(n));
    let at = doc(MAX_YAML_NODES - 3);
    assert!(fast::parse(&at).is_some());
    assert!(parse_with_serde(&at).is_ok());
    let over = doc(MAX_YAML_NODES - 2);
    assert!(fast::parse(&over).is_none());
    let e = parse(&over).unwrap_err();
    assert_eq!(e.kind, YamlErrorKind::TooLarge);
    assert_eq!(e.line, u32::try_from(MAX_YAML_NODES - 1).ok(), "{e:?}");
    // A flow list on one line is counted the same way.
    let flow = |n: usize| format!("l: [{}]\n", vec!["x"; n].join(", "));
    assert!(fast::parse(&flow(MAX_YAML_NODES - 3)).is_some());
    assert!(fast::parse(&flow(MAX_YAML_NODES - 2)).is_none());
    assert_eq!(
        parse(&flow(MAX_YAML_NODES - 2)).unwrap_err().kind,
        YamlErrorKind::TooLarge
    );
}

/// Each duplicate key's rendered path is kept for its diagnostic, so it counts toward the
/// text cap: 40,000 duplicates under a 1 MB key needed 40 GB (the review's reproduction,
/// which aborted `validate`); 17 of them are past the cap, 15 are within it.
#[test]
fn duplicate_keys_under_a_long_key_count_toward_the_text_cap() {
    let key = "k".repeat(1024 * 1024);
    let doc = |duplicates: usize| {
        let mut d = format!("? \"{key}\"\n:\n  z: 1\n");
        for _ in 0..duplicates {
            d.push_str("  z: 1\n");
        }
        d
    };
    let text = doc(14);
    let within = parse(&text).unwrap();
    assert_eq!(within.duplicate_keys.len(), 14);
    let e = parse(&doc(17)).unwrap_err();
    assert!(e.message.contains("expands to more than 16 MiB"), "{e:?}");
    assert!(parse(&doc(40_000)).is_err());
}
