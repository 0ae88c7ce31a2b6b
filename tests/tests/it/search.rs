//! `skill-server search`, `select` and `notes-search` end to end, over the bundled packs
//! and temporary note folders.

#![allow(clippy::unwrap_used, clippy::expect_used, clippy::panic)]

use skills_tests::{skill_md, skill_server, write};

const PACKS: [&str; 4] = [
    "--skills",
    "packs/toolsets",
    "--skills",
    "packs/agentskills",
];

fn with_packs(cmd: &str, rest: &[&str]) -> skills_tests::Run {
    let mut args = vec![cmd];
    args.extend(PACKS);
    args.extend(rest);
    skill_server(&args)
}

fn json(text: &str) -> serde_json::Value {
    serde_json::from_str(text).unwrap_or_else(|e| panic!("{e}: {text}"))
}

#[test]
fn search_text_ranks_trigger_matches_and_explains() {
    let run = with_packs(
        "search",
        &["--limit", "3", "convert", "5", "km", "to", "miles"],
    );
    assert_eq!(run.code, 0, "{}", run.stderr);
    assert!(
        run.stdout.starts_with(" 1. unit-converter"),
        "{}",
        run.stdout
    );
    insta::assert_snapshot!(run.stdout);
}

#[test]
fn search_json_has_reasons_and_layers() {
    let run = with_packs(
        "search",
        &[
            "--format",
            "json",
            "--limit",
            "2",
            "will it rain in Paris tomorrow?",
        ],
    );
    assert_eq!(run.code, 0, "{}", run.stderr);
    let v = json(&run.stdout);
    assert_eq!(v["matches"][0]["name"], "weather-report");
    assert_eq!(v["matches"][0]["layer"], "layer1");
    insta::assert_snapshot!(run.stdout);
}

#[test]
fn explicit_name_beats_better_text() {
    let run = with_packs(
        "search",
        &[
            "--format",
            "json",
            "use timezone-helper to convert 5 km to miles",
        ],
    );
    let v = json(&run.stdout);
    assert_eq!(v["matches"][0]["name"], "timezone-helper");
    assert_eq!(v["matches"][0]["explicit"], true);
}

#[test]
fn select_prints_selection_json_with_full_instructions() {
    let run = with_packs("select", &["how many ml is 3 cups of flour?"]);
    assert_eq!(run.code, 0, "{}", run.stderr);
    let v = json(&run.stdout);
    assert_eq!(v["selected_skills"][0]["skill_id"], "unit-converter");
    assert_eq!(v["no_skill_needed"], false);
    assert_eq!(v["disclosure"]["tier"], 3);
    assert!(
        v["disclosure"]["text"]
            .as_str()
            .unwrap()
            .starts_with("# unit-converter\n")
    );
    insta::assert_snapshot!(run.stdout);
}

#[test]
fn select_with_nothing_fitting_is_a_breadcrumb() {
    let run = with_packs("select", &["who wrote pride and prejudice?"]);
    assert_eq!(run.code, 0, "{}", run.stderr);
    let v = json(&run.stdout);
    assert_eq!(v["no_skill_needed"], true);
    assert_eq!(v["selected_skills"].as_array().unwrap().len(), 0);
    assert_eq!(v["disclosure"]["tier"], 1);
    let text = v["disclosure"]["text"].as_str().unwrap();
    assert!(
        text.starts_with('[') && text.ends_with(" skills available]"),
        "{text}"
    );
    insta::assert_snapshot!(run.stdout);
}

#[test]
fn select_listing_request_is_tier_two() {
    let run = with_packs("select", &["what can you do?"]);
    let v = json(&run.stdout);
    assert_eq!(v["disclosure"]["tier"], 2);
    let text = v["disclosure"]["text"].as_str().unwrap();
    assert!(text.contains("- weather-report: "), "{text}");
}

#[test]
fn select_honours_max_and_recent_turns() {
    let run = with_packs(
        "select",
        &[
            "--max",
            "1",
            "--threshold",
            "0",
            "weather and units and time zones",
        ],
    );
    let v = json(&run.stdout);
    assert_eq!(v["selected_skills"].as_array().unwrap().len(), 1);
    let alone = with_packs("select", &["--threshold", "0.1", "and for Porto?"]);
    assert_eq!(
        json(&alone.stdout)["no_skill_needed"],
        true,
        "{}",
        alone.stdout
    );
    let run = with_packs(
        "select",
        &[
            "--threshold",
            "0.1",
            "--turn",
            "what is the forecast for Lisbon this weekend?",
            "and for Porto?",
        ],
    );
    let v = json(&run.stdout);
    assert_eq!(v["selected_skills"][0]["skill_id"], "weather-report", "{v}");
}

#[test]
fn query_syntax_is_text_not_an_error() {
    for q in [
        "name:weather AND (forecast",
        "\"unbalanced",
        "*",
        "))) OR ((( NOT",
        "forecast^3 ~2 +rain -snow",
    ] {
        let run = with_packs("search", &["--format", "json", q]);
        assert_eq!(run.code, 0, "{q}: {}", run.stderr);
        let _ = json(&run.stdout);
        let run = with_packs("select", &[q]);
        assert_eq!(run.code, 0, "{q}: {}", run.stderr);
    }
    let run = with_packs("search", &["the of and"]);
    assert_eq!(run.code, 0);
    assert_eq!(run.stdout, "no matching skills\n");
}

#[test]
fn bad_arguments_exit_2() {
    let run = with_packs("select", &["--threshold", "1.5", "hello"]);
    assert_eq!(run.code, 2);
    assert!(
        run.stderr
            .contains("--threshold 1.5 is not between 0 and 1"),
        "{}",
        run.stderr
    );
    let run = skill_server(&["search", "--skills", "packs/does-not-exist", "x"]);
    assert_eq!(run.code, 2);
    assert!(
        run.stderr.starts_with("error: packs/does-not-exist"),
        "{}",
        run.stderr
    );
    let run = skill_server(&["notes-search", "--notes", "packs/does-not-exist", "x"]);
    assert_eq!(run.code, 2);
    assert!(
        run.stderr.contains("cannot read notes folder"),
        "{}",
        run.stderr
    );
}

#[test]
fn search_follows_an_edited_skill_on_the_next_run() {
    let dir = tempfile::tempdir().unwrap();
    let root = dir.path().to_str().unwrap();
    write(
        dir.path(),
        "alpha/SKILL.md",
        &skill_md("alpha", "Sort the library books."),
    );
    let run = skill_server(&["search", "--skills", root, "--format", "json", "telescope"]);
    assert_eq!(json(&run.stdout)["matches"].as_array().unwrap().len(), 0);
    write(
        dir.path(),
        "alpha/SKILL.md",
        &skill_md("alpha", "Point the telescope at Mars."),
    );
    let run = skill_server(&["search", "--skills", root, "--format", "json", "telescope"]);
    assert_eq!(json(&run.stdout)["matches"][0]["name"], "alpha");
}

#[test]
fn notes_search_ranks_with_snippets() {
    let dir = tempfile::tempdir().unwrap();
    write(
        dir.path(),
        "work/q1-strategy.md",
        "---\ntitle: Q1 strategy\ntags: [planning]\n---\nFocus on enterprise customers and cut churn in the first quarter.\n",
    );
    write(
        dir.path(),
        "home/garden.md",
        "# Garden\n\nPlant the tomatoes after the last frost; the strategy is patience.\n",
    );
    write(dir.path(), "broken.md", "---\ntitle: open\nnever closed\n");
    let notes = dir.path().to_str().unwrap();
    let run = skill_server(&["notes-search", "--notes", notes, "q1 strategy"]);
    assert_eq!(run.code, 0, "{}", run.stderr);
    assert!(
        run.stderr
            .contains("warning: broken.md: frontmatter opened on line 1")
    );
    assert!(
        run.stdout
            .starts_with(" 1. work/q1-strategy.md — Q1 strategy  #planning")
    );
    insta::assert_snapshot!(run.stdout);
    let run = skill_server(&[
        "notes-search",
        "--notes",
        notes,
        "--format",
        "json",
        "tomatoes",
    ]);
    let v = json(&run.stdout);
    assert_eq!(v["notes"][0]["path"], "home/garden.md");
    assert_eq!(v["notes"][0]["title"], "garden");
    assert!(
        v["notes"][0]["snippet"]
            .as_str()
            .unwrap()
            .contains("**tomatoes**")
    );
}
