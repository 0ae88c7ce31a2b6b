//! Selection through its public API where the ranking alone is not enough (issue 43):
//! misspelled requests, multi-intent requests and near-duplicate skills.

use std::fs;

use skill_registry::{Registry, RegistryConfig, Source};

use skill_search::*;

/// A pack of `(name, description, body)` skills in a temporary folder, and its index.
fn index_of(skills: &[(&str, &str, &str)]) -> (tempfile::TempDir, SkillIndex) {
    let dir = tempfile::tempdir().unwrap();
    for (name, description, body) in skills {
        let folder = dir.path().join(name);
        fs::create_dir_all(&folder).unwrap();
        fs::write(
            folder.join("SKILL.md"),
            format!("---\nname: {name}\ndescription: {description}\n---\n{body}\n"),
        )
        .unwrap();
    }
    let registry = Registry::load(RegistryConfig::with_sources(vec![Source::new(
        dir.path(),
        "user",
    )]));
    let index = SkillIndex::build(registry.snapshot()).unwrap();
    (dir, index)
}

/// Skills of several kinds, with three near-duplicates about postmortems.
const PACK: &[(&str, &str, &str)] = &[
    (
        "incident-postmortem",
        "Write a blameless postmortem after an incident: timeline, root cause and action items.",
        "# Postmortem\n\nCollect the timeline first.",
    ),
    (
        "postmortem-writing",
        "Write blameless postmortems for incidents with a timeline, root causes and action items.",
        "# Writing postmortems\n\nKeep it blameless.",
    ),
    (
        "postmortem",
        "Blameless incident postmortem: the timeline, the root cause and the follow-up actions.",
        "# Postmortem\n\nAsk what happened, not who.",
    ),
    (
        "release-notes",
        "Draft release notes from merged pull requests, grouped by area.",
        "# Release notes\n\nGroup the changes by area.",
    ),
    (
        "spreadsheet",
        "Clean up Excel spreadsheets: formulas, pivot tables and charts.",
        "# Spreadsheets\n\nUse openpyxl.",
    ),
    (
        "pdf-forms",
        "Fill in PDF forms and extract the values of their fields.",
        "# PDF forms\n\nList every field first.",
    ),
    (
        "kubernetes-debugging",
        "Debug Kubernetes pods stuck in CrashLoopBackOff, pending or evicted.",
        "# Kubernetes\n\nRead the events, then the logs.",
    ),
    (
        "docker-images",
        "Write small, secure Dockerfiles and multi-stage container images.",
        "# Docker\n\nPin base images.",
    ),
];

fn selected(s: &Selection) -> Vec<&str> {
    s.selected_skills
        .iter()
        .map(|x| x.skill_id.as_str())
        .collect()
}

#[test]
fn a_misspelled_request_keeps_its_skill() {
    let (_dir, index) = index_of(PACK);
    let opts = SelectOptions::default();
    let s = index
        .select(
            "my spredsheet has broken formlas in the pivott tabels",
            &opts,
        )
        .unwrap();
    assert_eq!(
        selected(&s).first(),
        Some(&"spreadsheet"),
        "{}",
        s.to_json()
    );
    let reason = &s.selected_skills[0].reason;
    assert!(
        reason.contains(&format!(
            "{CORRECTED_REASON}\"spredsheet\" as \"spreadsheet\""
        )),
        "{reason}"
    );
    let s = index
        .select("fill in the feilds of this pdf from for me", &opts)
        .unwrap();
    assert_eq!(selected(&s).first(), Some(&"pdf-forms"), "{}", s.to_json());
    // Spelled right, nothing is noted.
    let s = index
        .select(
            "my spreadsheet has broken formulas in the pivot tables",
            &opts,
        )
        .unwrap();
    assert!(!s.selected_skills[0].reason.contains(CORRECTED_REASON));
}

#[test]
fn a_two_intent_request_fills_two_slots_one_skill_per_intent() {
    let (_dir, index) = index_of(PACK);
    let s = index
        .select(
            "write a blameless postmortem with a timeline for last night's incident, \
             and also draft the release notes from the merged pull requests",
            &SelectOptions::default(),
        )
        .unwrap();
    let names = selected(&s);
    let postmortems = names.iter().filter(|n| n.contains("postmortem")).count();
    assert_eq!(postmortems, 1, "{}", s.to_json());
    assert!(names.contains(&"release-notes"), "{}", s.to_json());
}

#[test]
fn siblings_collapse_into_one_slot_with_the_others_named() {
    let (_dir, index) = index_of(PACK);
    let s = index
        .select(
            "we need a blameless postmortem of the outage with a timeline and root cause",
            &SelectOptions::default(),
        )
        .unwrap();
    let first = &s.selected_skills[0];
    assert!(first.skill_id.contains("postmortem"), "{}", s.to_json());
    let mut all: Vec<&str> = first.alternatives.iter().map(String::as_str).collect();
    all.push(&first.skill_id);
    all.sort_unstable();
    assert_eq!(
        all,
        ["incident-postmortem", "postmortem", "postmortem-writing"],
        "{}",
        s.to_json()
    );
    assert!(
        !selected(&s)[1..].iter().any(|n| n.contains("postmortem")),
        "{}",
        s.to_json()
    );
    let json: serde_json::Value = serde_json::from_str(&s.to_json()).unwrap();
    assert_eq!(
        json["selected_skills"][0]["alternatives"]
            .as_array()
            .map(Vec::len),
        Some(2)
    );
    // A skill without siblings has no `alternatives` key: the 2.3 shape, only added to.
    let s = index
        .select("fill in this PDF form", &SelectOptions::default())
        .unwrap();
    let json: serde_json::Value = serde_json::from_str(&s.to_json()).unwrap();
    assert!(json["selected_skills"][0].get("alternatives").is_none());
}
