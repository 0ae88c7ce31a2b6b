//! `skill-server route` and `skill-server extract`, end to end over the bundled packs.
#![allow(clippy::unwrap_used, clippy::expect_used, clippy::panic)]

use std::fmt::Write as _;

use skills_tests::{skill_server, write};

#[test]
fn route_cli_over_the_bundled_packs() {
    let mut out = String::new();
    for args in [
        &[
            "route",
            "--skills",
            "packs/actions",
            "email.send --to dana@example.org --subject 'Hi there' --body \"See you\" --cc a b",
        ][..],
        &[
            "route",
            "--skills",
            "packs/actions",
            "get_skill: calendar.lisst",
        ],
        &[
            "route",
            "--skills",
            "packs/actions",
            "tasks.search --status overdue",
        ],
        &[
            "route",
            "--skills",
            "packs/actions",
            "--prevalidate",
            "tasks.search --status overdue",
        ],
        &[
            "route",
            "--skills",
            "packs/actions",
            "--no-suggestions",
            "emial.send",
        ],
        &["route", "--skills", "packs/pegasus", "commit"],
        &[
            "route",
            "--skills",
            "packs/pegasus",
            "--from",
            "user",
            "/project-conventions",
        ],
        &[
            "route",
            "--skills",
            "packs/pegasus",
            "--from",
            "user",
            "/nonesuch hello",
        ],
        &[
            "route",
            "--skills",
            "packs/lily",
            "--from",
            "user",
            "/relnotes 2.0",
        ],
        &["route", "--from", "user", "/help"],
        &["route", "--skills", "packs/actions", "tasks.get --id 'T-1"],
    ] {
        let run = skill_server(args);
        let _ = writeln!(
            out,
            "$ {}\nexit {}\n{}{}",
            args.join(" "),
            run.code,
            run.stdout,
            run.stderr
        );
    }
    insta::assert_snapshot!(out);
}

#[test]
fn route_cli_exit_codes() {
    assert_eq!(
        skill_server(&["route", "--skills", "packs/actions", "tasks.get --id 1"]).code,
        0
    );
    assert_eq!(
        skill_server(&["route", "--skills", "packs/actions", "nope"]).code,
        1
    );
    let missing = skill_server(&["route", "--skills", "packs/does-not-exist", "x"]);
    assert_eq!(missing.code, 2);
    assert!(
        missing.stderr.contains("packs/does-not-exist"),
        "{}",
        missing.stderr
    );
    // Later --skills folders win: both layers load and the route says which layer.
    let run = skill_server(&[
        "route",
        "--skills",
        "packs/actions",
        "--skills",
        "packs/actions",
        "tasks.get --id 1",
    ]);
    let v: serde_json::Value = serde_json::from_str(&run.stdout).unwrap();
    assert_eq!(v["layer"], "layer2");
}

#[test]
fn extract_cli_reads_a_file_and_routes() {
    let dir = tempfile::tempdir().unwrap();
    write(
        dir.path(),
        "out.md",
        "Checking your calendar.\r\n\r\n```cmd\r\ncalendar.list --date 2026-03-09\r\nget_skill: tasks\r\n```\r\n\r\nThen:\n\n  ```cmd\n  tasks.create --title \"Call Dana\n  ```\n```cmd\nemail.send --to x\n",
    );
    let file = dir.path().join("out.md");
    let file = file.to_str().unwrap();
    let plain = skill_server(&["extract", file]);
    assert_eq!(
        plain.code, 1,
        "an unterminated block is reported: {}",
        plain.stdout
    );
    let v: serde_json::Value = serde_json::from_str(&plain.stdout).unwrap();
    assert_eq!(v["commands"].as_array().unwrap().len(), 3);
    assert_eq!(v["unterminated"][0]["line"], 13);
    assert_eq!(v["text"], "Checking your calendar.\n\nThen:");
    assert!(v.get("routes").is_none());

    let routed = skill_server(&["extract", "--skills", "packs/actions", file]);
    let v: serde_json::Value = serde_json::from_str(&routed.stdout).unwrap();
    let kinds: Vec<String> = v["routes"]
        .as_array()
        .unwrap()
        .iter()
        .map(|r| format!("{} {}", r["line"], r["route"]["route"].as_str().unwrap()))
        .collect();
    assert_eq!(kinds, ["4 invoke", "5 help", "11 error"]);
    assert_eq!(v["routes"][2]["route"]["code"], "unterminated_quote");

    let bad = tempfile::NamedTempFile::new().unwrap();
    std::fs::write(bad.path(), b"ok\n\xff\n").unwrap();
    let run = skill_server(&["extract", bad.path().to_str().unwrap()]);
    assert_eq!(run.code, 2);
    assert!(
        run.stderr
            .contains("not valid UTF-8 (first bad byte at offset 3)"),
        "{}",
        run.stderr
    );
}

/// A command line that is not UTF-8 reaches the router, whose `invalid-utf8` error is
/// printed as JSON (exit 1), not refused by the argument parser.
#[cfg(unix)]
#[test]
fn route_cli_reports_invalid_utf8_as_a_route_error() {
    use std::ffi::OsString;
    use std::os::unix::ffi::OsStringExt;

    let root = skills_tests::repo_root();
    let args = vec![
        OsString::from("skill-server"),
        OsString::from("route"),
        OsString::from("--skills"),
        root.join("packs/actions").into_os_string(),
        OsString::from_vec(b"tasks.get --id \xff".to_vec()),
    ];
    let mut out = Vec::new();
    let mut err = Vec::new();
    let code = skill_server::run(args, &mut out, &mut err);
    assert_eq!(code, 1, "{}", String::from_utf8_lossy(&err));
    assert!(err.is_empty(), "{}", String::from_utf8_lossy(&err));
    let v: serde_json::Value = serde_json::from_slice(&out).unwrap();
    assert_eq!(v["route"], "error");
    assert_eq!(v["code"], "invalid_utf8");
    assert_eq!(
        v["message"],
        "the input is not valid UTF-8 (first bad byte at offset 15)"
    );
}

#[test]
fn validate_reports_a_command_two_skills_declare() {
    let dir = tempfile::tempdir().unwrap();
    for name in ["plan-a", "plan-b"] {
        write(
            dir.path(),
            &format!("{name}/SKILL.md"),
            &format!("---\nsummary: Plans things ({name}).\ncommand: plan\n---\n# {name}\n"),
        );
    }
    let root = dir.path().display().to_string();
    let run = skill_server(&["validate", &root]);
    let collisions: Vec<&str> = run
        .stdout
        .lines()
        .filter(|l| l.contains("warning[command-collision]"))
        .collect();
    assert_eq!(collisions.len(), 2, "{}", run.stdout);
    assert!(collisions.iter().any(|l| l.contains("plan-a/SKILL.md")));
    assert!(collisions.iter().any(|l| l.contains("plan-b/SKILL.md")));
}
