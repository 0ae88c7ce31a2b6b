//! `skill-server eval`: a bundled pack's trigger-eval file, run in-process, as a snapshot
//! (text and JSON), and the errors a pack author can act on.

use std::path::{Path, PathBuf};

fn repo() -> &'static Path {
    Path::new(env!("CARGO_MANIFEST_DIR")).parent().unwrap()
}

fn eval_file() -> PathBuf {
    repo().join("packs/agentskills/meeting-notes/evals/eval_queries.json")
}

fn run(args: &[&str]) -> (u8, String, String) {
    let mut out = Vec::new();
    let mut err = Vec::new();
    let mut argv = vec!["skill-server".to_owned()];
    argv.extend(args.iter().map(|s| s.to_string()));
    let code = skill_server::run(argv, &mut out, &mut err);
    (
        code,
        String::from_utf8(out).unwrap(),
        String::from_utf8(err).unwrap(),
    )
}

#[test]
fn eval_reports_trigger_precision_and_recall_of_a_bundled_skill() {
    let file = eval_file();
    let (code, out, err) = run(&["eval", file.to_str().unwrap()]);
    assert_eq!(code, 0, "{err}");
    assert!(
        out.starts_with("trigger eval of `meeting-notes` over 6 skills"),
        "{out}"
    );
    insta::assert_snapshot!("eval_meeting_notes_text", out);
    let (code, json, _) = run(&["eval", file.to_str().unwrap(), "--format", "json"]);
    assert_eq!(code, 0);
    let v: serde_json::Value = serde_json::from_str(&json).unwrap();
    assert_eq!(v["skill"], "meeting-notes");
    assert_eq!(v["queries"], 12);
    insta::assert_snapshot!("eval_meeting_notes_json", json);
    // Deterministic: a second run prints the same.
    assert_eq!(run(&["eval", file.to_str().unwrap()]).1, out);
}

#[test]
fn eval_errors_name_the_problem() {
    let dir = tempfile::tempdir().unwrap();
    let bad = dir.path().join("eval_queries.json");
    std::fs::write(&bad, "[{\"query\": \"x\"}]").unwrap();
    let (code, _, err) = run(&["eval", bad.to_str().unwrap()]);
    assert_eq!(code, 2);
    assert!(err.contains("should_trigger"), "{err}");

    std::fs::write(&bad, "[{\"query\": \"x\", \"should_trigger\": true}]").unwrap();
    let (code, _, err) = run(&["eval", bad.to_str().unwrap()]);
    assert_eq!(code, 2);
    assert!(err.contains("--skills"), "{err}");

    let pack = repo().join("packs/agentskills");
    let (code, _, err) = run(&[
        "eval",
        bad.to_str().unwrap(),
        "--skills",
        pack.to_str().unwrap(),
        "--skill",
        "no-such-skill",
    ]);
    assert_eq!(code, 2);
    assert!(err.contains("no-such-skill"), "{err}");
}
