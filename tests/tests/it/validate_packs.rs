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

#[cfg(unix)]
#[test]
fn a_pipe_or_a_device_is_a_usage_problem() {
    let dir = tempfile::tempdir().unwrap();
    let fifo = dir.path().join("pipe");
    let made = std::process::Command::new("mkfifo").arg(&fifo).status();
    if made.is_ok_and(|s| s.success()) {
        let run = skill_server(&["validate", &fifo.display().to_string()]);
        assert_eq!(run.code, 2, "{}{}", run.stdout, run.stderr);
        assert!(
            run.stderr.contains("not a file or a folder"),
            "{}",
            run.stderr
        );
    }
    let run = skill_server(&["validate", "/dev/null"]);
    assert_eq!(run.code, 2, "{}{}", run.stdout, run.stderr);
}

#[cfg(unix)]
#[test]
fn an_unreadable_folder_is_an_io_problem() {
    use std::os::unix::fs::PermissionsExt;
    let dir = tempfile::tempdir().unwrap();
    let locked = dir.path().join("locked");
    std::fs::create_dir(&locked).unwrap();
    std::fs::set_permissions(&locked, std::fs::Permissions::from_mode(0o000)).unwrap();
    if std::fs::read_dir(&locked).is_ok() {
        // Running as root: permissions do not stop the listing, so there is nothing to see.
        return;
    }
    let run = skill_server(&["validate", &locked.display().to_string()]);
    std::fs::set_permissions(&locked, std::fs::Permissions::from_mode(0o755)).unwrap();
    assert_eq!(run.code, 2, "{}{}", run.stdout, run.stderr);
    assert!(run.stderr.contains("cannot be listed"), "{}", run.stderr);
}

#[test]
fn a_folder_without_a_skill_file_is_an_error_in_every_mode() {
    let dir = tempfile::tempdir().unwrap();
    std::fs::write(dir.path().join("README.md"), "# not a skill\n").unwrap();
    let path = dir.path().display().to_string();
    for args in [
        vec!["validate", path.as_str()],
        vec!["validate", "--strict", path.as_str()],
        vec!["validate", "--format", "json", path.as_str()],
    ] {
        let run = skill_server(&args);
        assert_eq!(run.code, 1, "{args:?}: {}{}", run.stdout, run.stderr);
        assert!(
            run.stdout.contains("Missing required file: SKILL.md"),
            "{args:?}: {}",
            run.stdout
        );
    }
}

#[test]
fn strict_validation_of_a_file_that_is_not_a_skill_file_says_not_a_directory() {
    let dir = tempfile::tempdir().unwrap();
    let file = dir.path().join("notes.md");
    std::fs::write(&file, "---\nname: notes\ndescription: d\n---\n").unwrap();
    let path = file.display().to_string();
    let run = skill_server(&["validate", "--strict", &path]);
    assert_eq!(run.code, 1, "{}{}", run.stdout, run.stderr);
    assert!(
        run.stdout.contains(&format!("Not a directory: {path}")),
        "{}",
        run.stdout
    );
}
