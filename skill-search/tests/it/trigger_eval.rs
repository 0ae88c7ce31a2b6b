//! Trigger evals: the Agent Skills `{query, should_trigger}` file scored through selection.

use std::fs;
use std::path::Path;

use skill_registry::{Registry, RegistryConfig, Source};
use skill_search::*;

fn write(root: &Path, name: &str, description: &str) {
    let dir = root.join(name);
    fs::create_dir_all(&dir).unwrap();
    fs::write(
        dir.join("SKILL.md"),
        format!("---\nname: {name}\ndescription: {description}\n---\n# {name}\n"),
    )
    .unwrap();
}

fn index(root: &Path) -> SkillIndex {
    write(
        root,
        "pdf-forms",
        "Fill in PDF forms and extract the values of their fields.",
    );
    write(
        root,
        "git-commit",
        "Write conventional commit messages from staged changes.",
    );
    let registry = Registry::load(RegistryConfig::with_sources(vec![Source::new(
        root, "user",
    )]));
    SkillIndex::build(registry.snapshot()).unwrap()
}

#[test]
fn precision_and_recall_count_each_query() {
    let dir = tempfile::tempdir().unwrap();
    let index = index(dir.path());
    let cases = parse_trigger_cases(
        r#"[
            {"query": "fill in the fields of this PDF form", "should_trigger": true},
            {"query": "who wrote pride and prejudice?", "should_trigger": true},
            {"query": "write a commit message for my staged changes", "should_trigger": false},
            {"query": "what is the weather in Lima", "should_trigger": false}
        ]"#,
    )
    .unwrap();
    let r = evaluate_triggers(&index, "pdf-forms", &cases, &SelectOptions::default()).unwrap();
    assert_eq!(r.outcomes.len(), 4);
    assert!(r.outcomes[0].triggered);
    assert!(!r.outcomes[1].triggered);
    assert!(!r.outcomes[2].triggered);
    assert_eq!(r.outcomes[2].selected, ["git-commit"]);
    assert_eq!(
        (
            r.true_positives(),
            r.false_negatives(),
            r.false_positives(),
            r.true_negatives()
        ),
        (1, 1, 0, 2)
    );
    assert_eq!(r.precision(), Some(1.0));
    assert_eq!(r.recall(), Some(0.5));
    assert_eq!(r.passed(), 3);
    // Deterministic: the same run gives the same report.
    let again = evaluate_triggers(&index, "pdf-forms", &cases, &SelectOptions::default()).unwrap();
    assert_eq!(r, again);
}

#[test]
fn precision_is_none_when_nothing_triggered() {
    let dir = tempfile::tempdir().unwrap();
    let index = index(dir.path());
    let cases =
        parse_trigger_cases(r#"[{"query": "tell me a joke", "should_trigger": false}]"#).unwrap();
    let r = evaluate_triggers(&index, "pdf-forms", &cases, &SelectOptions::default()).unwrap();
    assert_eq!((r.precision(), r.recall()), (None, None));
}

#[test]
fn bad_files_are_errors_that_say_what_is_expected() {
    for bad in [
        "not json",
        r#"{"query": "x", "should_trigger": true}"#,
        r#"[{"query": "x"}]"#,
        r#"[{"query": "  ", "should_trigger": true}]"#,
    ] {
        let e = parse_trigger_cases(bad).unwrap_err().to_string();
        assert!(e.contains("should_trigger"), "{e}");
    }
    let at_limit: Vec<String> = (0..MAX_TRIGGER_CASES)
        .map(|i| format!(r#"{{"query": "q{i}", "should_trigger": false}}"#))
        .collect();
    assert_eq!(
        parse_trigger_cases(&format!("[{}]", at_limit.join(",")))
            .unwrap()
            .len(),
        MAX_TRIGGER_CASES
    );
    let over = format!(
        "[{},{}]",
        at_limit.join(","),
        r#"{"query": "one more", "should_trigger": false}"#
    );
    assert!(parse_trigger_cases(&over).is_err());
}
