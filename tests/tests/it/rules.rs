//! One test per rule edge of the document grammar and validation, through the public API.

#![allow(clippy::unwrap_used, clippy::expect_used, clippy::panic)]

use skill_format::{Code, Dialect, Mode, Origin, ParseOptions, Severity, SkillFile, parse_skill};

fn parse(text: &str, folder: &str, mode: Mode) -> SkillFile {
    let mut opts = ParseOptions::new(format!("{folder}/SKILL.md"), Origin::folder(folder));
    opts.mode = mode;
    parse_skill(text.as_bytes(), &opts)
}

fn codes(f: &SkillFile) -> Vec<(Severity, Code)> {
    f.diagnostics.iter().map(|d| (d.severity, d.code)).collect()
}

fn skill(name: &str, description: &str) -> String {
    format!("---\nname: {name}\ndescription: {description}\n---\nbody\n")
}

#[test]
fn name_64_and_65_code_points() {
    let n64 = "a".repeat(64);
    assert!(codes(&parse(&skill(&n64, "d"), &n64, Mode::Strict)).is_empty());
    let n65 = "b".repeat(65);
    let f = parse(&skill(&n65, "d"), &n65, Mode::Strict);
    assert_eq!(codes(&f), vec![(Severity::Error, Code::NameTooLong)]);
    assert_eq!(
        (f.diagnostics[0].line, f.diagnostics[0].column),
        (Some(2), Some(1))
    );
    // Lenient: the standard's client guide says warn and load.
    let f = parse(&skill(&n65, "d"), &n65, Mode::Lenient);
    assert_eq!(codes(&f), vec![(Severity::Warning, Code::NameTooLong)]);
    assert!(f.is_loadable());
}

#[test]
fn description_1024_and_1025() {
    let d1024 = "x".repeat(1024);
    assert!(codes(&parse(&skill("a", &d1024), "a", Mode::Strict)).is_empty());
    let f = parse(&skill("a", &"x".repeat(1025)), "a", Mode::Strict);
    assert_eq!(
        f.diagnostics[0].message,
        "Description exceeds 1024 character limit (1025 chars)"
    );
    // Code points, not bytes.
    let wide = "é".repeat(1024);
    assert!(codes(&parse(&skill("a", &wide), "a", Mode::Strict)).is_empty());
}

#[test]
fn compatibility_500_and_501() {
    let text = |n: usize| {
        format!(
            "---\nname: a\ndescription: d\ncompatibility: {}\n---\n",
            "c".repeat(n)
        )
    };
    assert!(codes(&parse(&text(500), "a", Mode::Strict)).is_empty());
    let f = parse(&text(501), "a", Mode::Strict);
    assert_eq!(
        f.diagnostics[0].message,
        "Compatibility exceeds 500 character limit (501 chars)"
    );
    assert_eq!(f.diagnostics[0].line, Some(4));
}

#[test]
fn toolsets_description_500_and_501() {
    let text = |n: usize| {
        format!(
            "---\nname: t\ndescription: {}\nversion: 1.0.0\ndefault_enabled: true\n---\n",
            "d".repeat(n)
        )
    };
    assert!(codes(&parse(&text(500), "t", Mode::Lenient)).is_empty());
    let f = parse(&text(501), "t", Mode::Lenient);
    assert_eq!(f.dialect, Dialect::Toolsets);
    assert_eq!(
        codes(&f),
        vec![(Severity::Warning, Code::DescriptionTooLong)]
    );
}

#[test]
fn nfkc_name_matches_folder() {
    // U+FB01 LATIN SMALL LIGATURE FI normalises to "fi".
    let f = parse(&skill("pro\u{fb01}le", "d"), "profile", Mode::Strict);
    assert!(codes(&f).is_empty(), "{:?}", f.diagnostics);
}

#[test]
fn bom_is_stripped_in_lenient_mode_and_rejected_like_the_reference_in_strict() {
    let text = format!("\u{feff}{}", skill("a", "d"));
    let f = parse(&text, "a", Mode::Lenient);
    assert!(f.is_loadable(), "{:?}", f.diagnostics);
    let f = parse(&text, "a", Mode::Strict);
    assert_eq!(
        f.diagnostics[0].message,
        "SKILL.md must start with YAML frontmatter (---)"
    );
}

#[test]
fn crlf_files_load_and_keep_their_body_bytes() {
    let f = parse(
        "---\r\nname: a\r\ndescription: d\r\n---\r\nline one\r\nline two\r\n",
        "a",
        Mode::Strict,
    );
    assert!(codes(&f).is_empty(), "{:?}", f.diagnostics);
    assert_eq!(f.description, "d");
    assert_eq!(f.body, "line one\r\nline two\r\n");
}

#[test]
fn dashes_in_a_value_do_not_close_the_frontmatter() {
    let f = parse(
        "---\nname: a\ndescription: before --- after\n---\nbody\n",
        "a",
        Mode::Strict,
    );
    assert_eq!(f.description, "before --- after");
    assert_eq!(f.body, "body\n");
}

#[test]
fn empty_and_missing_frontmatter() {
    let f = parse("---\n---\nbody\n", "a", Mode::Strict);
    assert_eq!(
        f.diagnostics[0].message,
        "SKILL.md frontmatter must be a YAML mapping"
    );
    let f = parse("---\n---\nbody\n", "a", Mode::Lenient);
    assert_eq!(
        codes(&f),
        vec![
            (Severity::Warning, Code::MissingName),
            (Severity::Error, Code::MissingDescription),
        ]
    );
    // No frontmatter: valid lily (its document makes frontmatter optional), with a note.
    let f = parse("# Just a body\n", "notes", Mode::Lenient);
    assert_eq!(f.dialect, Dialect::Lily);
    assert!(f.is_loadable());
    assert_eq!(f.name, "notes");
    // ... and an error for the standard.
    let mut opts = ParseOptions::new("a/SKILL.md", Origin::folder("a"));
    opts.dialect = Some(Dialect::AgentSkills);
    let f = parse_skill(b"# Just a body\n", &opts);
    assert_eq!(codes(&f), vec![(Severity::Error, Code::MissingFrontmatter)]);
}

#[test]
fn duplicate_keys_warn_in_lenient_and_fail_in_strict() {
    let text = "---\nname: a\ndescription: one\ndescription: two\n---\n";
    let f = parse(text, "a", Mode::Lenient);
    assert_eq!(codes(&f), vec![(Severity::Warning, Code::DuplicateKey)]);
    assert_eq!(f.description, "two");
    let f = parse(text, "a", Mode::Strict);
    assert_eq!(codes(&f), vec![(Severity::Error, Code::DuplicateKey)]);
    assert!(
        f.diagnostics[0].message.starts_with("Invalid YAML"),
        "{}",
        f.diagnostics[0].message
    );
}

#[test]
fn dot_closer_warns_in_lenient_and_leaves_frontmatter_open_in_strict() {
    let text = "---\nname: a\ndescription: d\n...\nbody\n";
    let f = parse(text, "a", Mode::Lenient);
    assert_eq!(
        codes(&f),
        vec![(Severity::Warning, Code::UnclosedFrontmatter)]
    );
    assert_eq!(f.diagnostics[0].line, Some(4));
    assert_eq!(f.description, "d");
    let f = parse(text, "a", Mode::Strict);
    assert_eq!(
        codes(&f),
        vec![(Severity::Error, Code::UnclosedFrontmatter)]
    );
    assert_eq!(
        f.diagnostics[0].message,
        "SKILL.md frontmatter not properly closed with ---"
    );
}

#[test]
fn flow_style_is_accepted_in_both_modes() {
    let text = "---\nname: a\ndescription: d\nmetadata: {author: me, version: \"1.0\"}\nallowed-tools: Read Grep\n---\n";
    assert!(codes(&parse(text, "a", Mode::Strict)).is_empty());
    let f = parse(text, "a", Mode::Lenient);
    assert_eq!(
        f.manifest.metadata.get("author").map(String::as_str),
        Some("me")
    );
}

#[test]
fn unquoted_colon_is_recovered_in_lenient_mode_only() {
    let text = "---\nname: a\ndescription: Use when: the user asks\n---\n";
    let f = parse(text, "a", Mode::Lenient);
    assert_eq!(codes(&f), vec![(Severity::Warning, Code::YamlRecovered)]);
    assert_eq!(f.description, "Use when: the user asks");
    assert_eq!(f.diagnostics[0].line, Some(3));
    let f = parse(text, "a", Mode::Strict);
    assert_eq!(codes(&f), vec![(Severity::Error, Code::InvalidYaml)]);
    assert_eq!(
        f.diagnostics[0].line,
        Some(3),
        "line in the file, not in the YAML"
    );
}

#[test]
fn tabs_in_indentation_are_invalid_yaml_with_a_file_position() {
    let f = parse("---\nname: a\n\tdescription: d\n---\n", "a", Mode::Lenient);
    assert_eq!(codes(&f), vec![(Severity::Error, Code::InvalidYaml)]);
    assert_eq!(f.diagnostics[0].line, Some(3));
}

#[test]
fn scalar_source_text_is_kept() {
    let f = parse(
        "---\nname: a\ndescription: d\nversion: 1.0\nmetadata:\n  updated: 2026-03-17\n  ratio: 0.50\n---\n",
        "a",
        Mode::Lenient,
    );
    assert_eq!(f.manifest.version.as_deref(), Some("1.0"));
    assert_eq!(
        f.manifest.metadata.get("updated").map(String::as_str),
        Some("2026-03-17")
    );
    assert_eq!(
        f.manifest.metadata.get("ratio").map(String::as_str),
        Some("0.50")
    );
}

/// Ten levels of ten aliases each (10^10 nodes expanded) meet the node budget: the code says
/// the document is too large, not that it is malformed.
#[test]
fn yaml_bomb_is_an_error_not_an_explosion() {
    let mut text =
        String::from("---\nname: a\ndescription: d\nx0: &x0 [a, a, a, a, a, a, a, a, a, a]\n");
    for i in 1..10 {
        let p = i - 1;
        text.push_str(&format!(
            "x{i}: &x{i} [*x{p}, *x{p}, *x{p}, *x{p}, *x{p}, *x{p}, *x{p}, *x{p}, *x{p}, *x{p}]\n"
        ));
    }
    text.push_str("---\n");
    let f = parse(&text, "a", Mode::Lenient);
    assert_eq!(codes(&f), vec![(Severity::Error, Code::YamlTooLarge)]);
}

#[test]
fn deeply_nested_yaml_is_an_error() {
    let text = format!(
        "---\nname: a\ndescription: d\nx: {}{}\n---\n",
        "[".repeat(5000),
        "]".repeat(5000)
    );
    let f = parse(&text, "a", Mode::Lenient);
    assert_eq!(codes(&f), vec![(Severity::Error, Code::InvalidYaml)]);
}

#[test]
fn frontmatter_that_never_closes() {
    let f = parse(
        "---\nname: a\ndescription: d\n# body without a closer\n",
        "a",
        Mode::Lenient,
    );
    assert_eq!(
        codes(&f),
        vec![(Severity::Error, Code::UnclosedFrontmatter)]
    );
    assert_eq!(f.diagnostics[0].line, Some(1));
}

#[test]
fn oversized_and_binary_and_non_utf8_files() {
    let big = vec![b'a'; skill_format::MAX_FILE_BYTES + 1];
    let opts = ParseOptions::new("a/SKILL.md", Origin::folder("a"));
    assert_eq!(
        parse_skill(&big, &opts).diagnostics[0].code,
        Code::FileTooLarge
    );
    let at_cap = vec![b'a'; skill_format::MAX_FILE_BYTES];
    assert_ne!(
        parse_skill(&at_cap, &opts)
            .diagnostics
            .first()
            .map(|d| d.code),
        Some(Code::FileTooLarge)
    );
    assert_eq!(
        parse_skill(b"---\nname: a\0\n---\n", &opts).diagnostics[0].code,
        Code::BinaryFile
    );
    let f = parse_skill(b"---\nname: a\ndescription: caf\xe9\n---\n", &opts);
    assert_eq!(f.diagnostics[0].code, Code::NotUtf8);
    assert_eq!(
        (f.diagnostics[0].line, f.diagnostics[0].column),
        (Some(3), Some(17))
    );
}

#[test]
fn actions_names_come_from_the_path() {
    let opts = ParseOptions::new(
        "email/send.md",
        Origin::Action {
            domain: "email".into(),
            action: "send".into(),
        },
    );
    let f = parse_skill(
        b"---\nname: email.send\ndescription: Send mail\n---\n",
        &opts,
    );
    assert!(f.is_loadable());
    assert_eq!(f.dialect, Dialect::Actions);
    let f = parse_skill(
        b"---\nname: email.other\ndescription: Send mail\n---\n",
        &opts,
    );
    assert_eq!(f.name, "email.send");
    assert_eq!(codes(&f), vec![(Severity::Warning, Code::NameMismatch)]);
    let reserved = ParseOptions::new(
        "email/all.md",
        Origin::Action {
            domain: "email".into(),
            action: "all".into(),
        },
    );
    let f = parse_skill(b"---\nname: email.all\ndescription: d\n---\n", &reserved);
    assert_eq!(codes(&f), vec![(Severity::Error, Code::ReservedName)]);
}

#[test]
fn lily_rules() {
    let f = parse(
        "---\nsummary: s\ninvocation_mode: tool_dispatch\n---\n",
        "p",
        Mode::Lenient,
    );
    assert_eq!(codes(&f), vec![(Severity::Error, Code::MissingCommandTool)]);
    let f = parse("---\nsummary: s\ncommand: Bad!\n---\n", "p", Mode::Lenient);
    assert_eq!(codes(&f), vec![(Severity::Error, Code::InvalidCommand)]);
    let f = parse(
        "---\nsummary: Plans.\ncommand: plan\n---\n",
        "plan_compiler",
        Mode::Lenient,
    );
    assert!(f.is_loadable());
    assert_eq!(
        (f.name.as_str(), f.description.as_str()),
        ("plan_compiler", "Plans.")
    );
}

#[test]
fn pegasus_description_defaults_to_the_first_paragraph() {
    let f = parse(
        "---\nname: explain\ncontext: inline\n---\n# Explain\n\nExplains code\nclearly.\n\nMore.\n",
        "explain",
        Mode::Lenient,
    );
    assert_eq!(f.dialect, Dialect::Pegasus);
    assert_eq!(f.description, "Explains code clearly.");
}

#[test]
fn booleans_accept_yaml_booleans_only() {
    let f = parse(
        "---\nname: c\ndescription: d\ndisable-model-invocation: yes\n---\n",
        "c",
        Mode::Lenient,
    );
    assert_eq!(codes(&f), vec![(Severity::Error, Code::InvalidFieldType)]);
    assert!(f.diagnostics[0].message.contains("`yes`"));
}

#[test]
fn strict_reports_keys_outside_the_dialect() {
    let f = parse(
        "---\nname: c\ndescription: d\ncontext: fork\ncolour: red\n---\n",
        "c",
        Mode::Strict,
    );
    assert_eq!(f.dialect, Dialect::Pegasus);
    assert_eq!(codes(&f), vec![(Severity::Warning, Code::UnknownField)]);
    assert_eq!(f.diagnostics[0].line, Some(5));
    let f = parse(
        "---\nname: c\ndescription: d\ncontext: fork\ncolour: red\n---\n",
        "c",
        Mode::Lenient,
    );
    assert!(codes(&f).is_empty());
}

#[test]
fn script_entries_that_can_never_run_are_diagnosed_at_load() {
    let text = "---\nname: a\ndescription: d\nversion: 1.0.0\nscripts: [scripts/ok.sh, /bin/sh, ../../x]\n---\n";
    let f = parse(text, "a", Mode::Lenient);
    let scripts: Vec<&str> = f
        .diagnostics
        .iter()
        .filter(|d| d.code == Code::InvalidFieldValue)
        .map(|d| d.message.as_str())
        .collect();
    assert_eq!(scripts.len(), 2, "{:?}", f.diagnostics);
    assert!(scripts[0].contains("`/bin/sh`") && scripts[0].contains("absolute"));
    assert!(scripts[1].contains("`../../x`") && scripts[1].contains(".."));
}
