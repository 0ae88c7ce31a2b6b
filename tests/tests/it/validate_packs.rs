//! Snapshots of `skill-server validate` over every bundled pack, and its exit codes.

#![allow(clippy::unwrap_used, clippy::expect_used, clippy::panic)]

use skills_tests::skill_server;

const PACKS: &[(&str, &str)] = &[
    ("agentskills", "packs/agentskills"),
    ("actions", "packs/actions"),
    ("lily", "packs/lily"),
    ("pegasus", "packs/pegasus"),
    ("toolsets", "packs/toolsets"),
];

#[test]
fn bundled_packs_validate_without_errors() {
    for (dialect, pack) in PACKS {
        let run = skill_server(&["validate", "--dialect", dialect, pack]);
        assert_eq!(run.code, 0, "{pack}:\n{}{}", run.stdout, run.stderr);
        insta::assert_snapshot!(format!("validate_{dialect}"), run.stdout);
    }
}

#[test]
fn bundled_packs_validate_with_detected_dialects() {
    let run = skill_server(&[
        "validate",
        "packs/agentskills",
        "packs/actions",
        "packs/lily",
        "packs/pegasus",
        "packs/toolsets",
    ]);
    assert_eq!(run.code, 0, "{}", run.stdout);
    insta::assert_snapshot!(run.stdout);
}

#[test]
fn broken_pack_text() {
    let run = skill_server(&["validate", "packs/broken"]);
    assert_eq!(run.code, 1);
    insta::assert_snapshot!(run.stdout);
}

#[test]
fn broken_pack_strict_agentskills() {
    let run = skill_server(&[
        "validate",
        "--dialect",
        "agentskills",
        "--strict",
        "packs/broken",
    ]);
    assert_eq!(run.code, 1);
    insta::assert_snapshot!(run.stdout);
}

#[test]
fn broken_pack_json_shape() {
    let run = skill_server(&["validate", "--format", "json", "packs/broken"]);
    assert_eq!(run.code, 1);
    let v: serde_json::Value = serde_json::from_str(&run.stdout).unwrap_or_default();
    let summary = &v["summary"];
    assert!(summary["errors"].as_u64().unwrap_or(0) > 0);
    let skills = v["skills"].as_array().cloned().unwrap_or_default();
    assert_eq!(summary["skills"].as_u64(), Some(skills.len() as u64));
    for s in &skills {
        for key in ["name", "path", "dialect", "layer", "status"] {
            assert!(s.get(key).is_some(), "skill entry lacks {key}: {s}");
        }
    }
    let diags = v["diagnostics"].as_array().cloned().unwrap_or_default();
    for d in &diags {
        for key in ["path", "line", "column", "severity", "code", "message"] {
            assert!(d.get(key).is_some(), "diagnostic lacks {key}: {d}");
        }
    }
    insta::assert_snapshot!(run.stdout);
}

#[test]
fn exit_code_two_on_missing_path_and_bad_usage() {
    let run = skill_server(&["validate", "/no/such/folder/anywhere"]);
    assert_eq!(run.code, 2);
    assert!(
        run.stderr.contains("/no/such/folder/anywhere"),
        "{}",
        run.stderr
    );
    let run = skill_server(&["validate", "--dialect", "klingon", "packs"]);
    assert_eq!(run.code, 2);
    let run = skill_server(&["validate"]);
    assert_eq!(run.code, 2);
}

#[test]
fn a_single_skill_file_can_be_validated() {
    let run = skill_server(&["validate", "packs/agentskills/pdf-forms/SKILL.md"]);
    assert_eq!(run.code, 0, "{}", run.stdout);
    assert!(
        run.stdout.starts_with("1 skill files checked (1 loaded"),
        "{}",
        run.stdout
    );
}
