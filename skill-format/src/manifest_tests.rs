//! Unit tests of the manifest: typed fields from frontmatter, their findings and limits.

#![allow(clippy::unwrap_used, clippy::expect_used, clippy::panic)]

use super::*;
use crate::yaml;

fn manifest(src: &str) -> (Manifest, Vec<Finding>) {
    from_node(&yaml::parse(src).unwrap().root)
}

#[test]
fn every_dialect_field_is_typed() {
    let (m, findings) = manifest(
        "name: a\ndescription: d\nsummary: s\nlicense: MIT\ncompatibility: c\n\
         metadata:\n  version: 1.0\n  updated: 2026-03-17\n\
         allowed-tools: Bash(git add:*) Read\nhandler: h\nschedule: \"0 8 * * 1-5\"\n\
         author: me\ncreated: 2026-02-17\ntags: [x, y]\ndomain: email\n\
         invocation_mode: tool_dispatch\ncommand: plan\ncommand_tool: compile\n\
         requires_tools: [read, write]\neligibility:\n  os: [linux]\n  env: [KEY]\n  binaries: git\n\
         disable-model-invocation: true\nuser-invocable: false\ncontext: fork\nagent: general\n\
         model: default\nargument-hint: \"[pr]\"\nversion: 1.0.0\ntoolsets: [\"toolsets/index:Hello\"]\n\
         scripts: [scripts/a.sh]\ntriggers:\n  keywords: [hi]\n  verbs: [say]\n  patterns: ['a\\s+b']\n\
         default_enabled: false\nbrief_description: b\ninclude_in_prompt_default: false\n\
         proactive_for_profile_ids: [p1]\nexclude_from_prompt_profile_ids: [p2]\ncustom: 5\n",
    );
    assert!(findings.is_empty(), "{findings:?}");
    assert_eq!(m.metadata.get("version").unwrap(), "1.0");
    assert_eq!(m.metadata.get("updated").unwrap(), "2026-03-17");
    assert_eq!(m.allowed_tools.unwrap(), vec!["Bash(git add:*)", "Read"]);
    assert_eq!(m.allowed_tools_style, Some(ToolListStyle::Spaces));
    assert_eq!(m.created.as_deref(), Some("2026-02-17"));
    assert_eq!(m.tags, vec!["x", "y"]);
    assert_eq!(m.invocation_mode, Some(InvocationMode::ToolDispatch));
    assert_eq!(m.eligibility.unwrap().binaries, vec!["git"]);
    assert_eq!(m.disable_model_invocation, Some(true));
    assert_eq!(m.user_invocable, Some(false));
    assert_eq!(m.context, Some(ContextMode::Fork));
    assert_eq!(m.version.as_deref(), Some("1.0.0"));
    assert_eq!(m.toolsets[0].export, "Hello");
    assert_eq!(m.triggers.patterns, vec!["a\\s+b"]);
    assert_eq!(m.default_enabled, Some(false));
    assert_eq!(m.proactive_for_profile_ids, vec!["p1"]);
    assert!(m.extra.contains_key("custom"));
}

#[test]
fn version_keeps_source_text() {
    let (m, _) = manifest("version: 1.0\n");
    assert_eq!(m.version.as_deref(), Some("1.0"));
}

#[test]
fn comma_separated_and_list_tools() {
    let (m, _) = manifest("allowed-tools: Read, Grep, Glob\n");
    assert_eq!(m.allowed_tools.unwrap(), vec!["Read", "Grep", "Glob"]);
    assert_eq!(m.allowed_tools_style, Some(ToolListStyle::Commas));
    let (m, _) = manifest("allowed-tools: [Read, 'Azure MCP/documentation']\n");
    assert_eq!(
        m.allowed_tools.unwrap(),
        vec!["Read", "Azure MCP/documentation"]
    );
    assert_eq!(m.allowed_tools_style, Some(ToolListStyle::List));
}

#[test]
fn booleans_accept_yaml_booleans_only() {
    let (m, f) = manifest("disable-model-invocation: yes\nuser-invocable: \"false\"\n");
    assert_eq!(m.disable_model_invocation, None);
    assert_eq!(f.len(), 2);
    assert!(f.iter().all(|f| f.code == Code::InvalidFieldType && f.hard));
}

#[test]
fn when_lists_keep_five_entries_of_two_hundred_characters() {
    let entry = |n: usize| "x".repeat(n);
    let list = |n: usize| {
        (0..n)
            .map(|i| format!("  - case {i}\n"))
            .collect::<String>()
    };
    // At the limits: everything kept, nothing reported.
    let yaml = format!(
        "when_to_use:\n{}when_not_to_use: {}\n",
        list(MAX_WHEN_ENTRIES),
        entry(MAX_WHEN_ENTRY_CHARS)
    );
    let (m, f) = manifest(&yaml);
    assert_eq!(m.when_to_use.len(), MAX_WHEN_ENTRIES);
    assert_eq!(m.when_not_to_use, [entry(MAX_WHEN_ENTRY_CHARS)]);
    assert!(f.is_empty(), "{f:?}");
    // One past each limit: dropped, each with a warning.
    let yaml = format!(
        "when_to_use:\n{}when_not_to_use: [{}, ok]\n",
        list(MAX_WHEN_ENTRIES + 1),
        entry(MAX_WHEN_ENTRY_CHARS + 1)
    );
    let (m, f) = manifest(&yaml);
    assert_eq!(m.when_to_use.len(), MAX_WHEN_ENTRIES);
    assert_eq!(m.when_not_to_use, ["ok"]);
    assert_eq!(f.len(), 2, "{f:?}");
    assert!(
        f.iter()
            .all(|f| f.code == Code::InvalidFieldValue && !f.hard)
    );
    assert!(m.extra.is_empty());
}

#[test]
fn wrong_types_are_findings_not_failures() {
    let (m, f) = manifest("name: [a]\ndescription: ok\nmetadata:\n  nested: {a: b}\n  fine: x\n");
    assert_eq!(m.name, None);
    assert_eq!(m.description.as_deref(), Some("ok"));
    assert_eq!(m.metadata.get("fine").map(String::as_str), Some("x"));
    let codes: Vec<_> = f.iter().map(|f| f.code).collect();
    assert_eq!(codes, vec![Code::InvalidFieldType, Code::InvalidMetadata]);
}

#[test]
fn bad_enums_are_hard() {
    let (_, f) = manifest("context: sideways\ninvocation_mode: magic\n");
    assert!(
        f.iter()
            .all(|f| f.code == Code::InvalidFieldValue && f.hard)
    );
    assert_eq!(f.len(), 2);
}

#[test]
fn argument_hint_list_is_coerced_to_text() {
    let (m, f) = manifest("argument-hint: [topic: foo]\n");
    assert!(f.is_empty());
    assert_eq!(m.argument_hint.as_deref(), Some("[{topic: foo}]"));
}

#[test]
fn bad_toolset_reference() {
    let (m, f) = manifest("toolsets: [nocolon, \"a:Good\"]\n");
    assert_eq!(m.toolsets.len(), 1);
    assert_eq!(f[0].code, Code::InvalidToolset);
}
