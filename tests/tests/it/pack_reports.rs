//! The pack report (skill-pack) as a snapshot: the committed reports of the bundled packs
//! (`tests/pack-reports/`, written by `cargo xtask snapshot --update`) must match, and the
//! example pack repository's snapshot (`examples/pack-snapshot`) fails on a meaningful edit.
#![allow(clippy::unwrap_used, clippy::expect_used, clippy::panic)]

use std::path::{Path, PathBuf};

use skill_format::Dialect;
use skill_pack::ReportConfig;

/// The bundled packs as `cargo xtask snapshot` lists them (xtask/src/snapshot.rs `packs`):
/// every folder under `packs/`, sorted, read as the dialect its name spells, else detected.
fn packs() -> Vec<(String, Option<Dialect>)> {
    let mut out: Vec<(String, Option<Dialect>)> = std::fs::read_dir(repo().join("packs"))
        .unwrap()
        .map(|e| e.unwrap())
        .filter(|e| e.file_type().unwrap().is_dir())
        .map(|e| {
            let name = e.file_name().to_string_lossy().into_owned();
            let dialect = name.parse().ok();
            (name, dialect)
        })
        .collect();
    out.sort();
    out
}

fn repo() -> PathBuf {
    Path::new(env!("CARGO_MANIFEST_DIR"))
        .parent()
        .unwrap()
        .to_path_buf()
}

#[test]
fn bundled_pack_reports_match_the_committed_ones() {
    let root = repo();
    let mut drifted = Vec::new();
    let packs = packs();
    assert!(
        packs
            .iter()
            .any(|(n, d)| n == "actions" && *d == Some(Dialect::Actions)),
        "{packs:?}"
    );
    assert!(packs.iter().any(|(n, d)| n == "broken" && d.is_none()));
    for (name, dialect) in &packs {
        let config = ReportConfig {
            dialect: *dialect,
            ..ReportConfig::default()
        };
        let text = skill_pack::report_with(&[root.join("packs").join(name)], &config).unwrap();
        let file = root.join("tests/pack-reports").join(format!("{name}.txt"));
        let committed = std::fs::read_to_string(&file).unwrap_or_default();
        if committed != text {
            drifted.push(name.clone());
        }
    }
    // Every committed report belongs to a pack: a removed pack leaves no stale report.
    let mut committed: Vec<String> = std::fs::read_dir(root.join("tests/pack-reports"))
        .unwrap()
        .map(|e| e.unwrap().file_name().to_string_lossy().into_owned())
        .collect();
    committed.sort();
    let expected: Vec<String> = packs.iter().map(|(n, _)| format!("{n}.txt")).collect();
    assert_eq!(
        committed, expected,
        "tests/pack-reports/ and packs/ disagree"
    );
    assert!(
        drifted.is_empty(),
        "pack reports drifted for {drifted:?}: run `cargo xtask snapshot` to see the change, \
         and `cargo xtask snapshot --update` to accept it"
    );
}

/// The content of an insta `.snap` file: what follows its metadata header.
fn snap_content(text: &str) -> &str {
    let rest = text
        .strip_prefix("---\n")
        .expect("a .snap file starts with ---");
    let end = rest.find("\n---\n").expect("the header is closed by ---");
    &rest[end + 5..]
}

fn copy_dir(from: &Path, to: &Path) {
    std::fs::create_dir_all(to).unwrap();
    for entry in std::fs::read_dir(from).unwrap() {
        let entry = entry.unwrap();
        let target = to.join(entry.file_name());
        if entry.file_type().unwrap().is_dir() {
            copy_dir(&entry.path(), &target);
        } else {
            std::fs::copy(entry.path(), &target).unwrap();
        }
    }
}

#[test]
fn example_pack_snapshot_passes_on_a_copy_and_fails_on_a_meaningful_edit() {
    let example = repo().join("examples/pack-snapshot");
    let snap =
        std::fs::read_to_string(example.join("tests/snapshots/report__report.snap")).unwrap();
    let committed = snap_content(&snap).trim_end();

    // A copy elsewhere (same folder name) renders exactly the committed snapshot: the
    // report does not depend on where the pack is checked out.
    let dir = tempfile::tempdir().unwrap();
    let copy = dir.path().join("skills");
    copy_dir(&example.join("skills"), &copy);
    let same = skill_pack::report(&[&copy]).unwrap();
    assert_eq!(same.trim_end(), committed);

    // One description changed: the snapshot no longer matches, and the difference names it.
    let skill = copy.join("plant-care/SKILL.md");
    let text = std::fs::read_to_string(&skill).unwrap();
    let edited = text.replace(
        "description: Work out when and how much to water a houseplant",
        "description: Repot a houseplant",
    );
    assert_ne!(edited, text, "the edit must apply");
    std::fs::write(&skill, edited).unwrap();
    let changed = skill_pack::report(&[&copy]).unwrap();
    assert_ne!(changed.trim_end(), committed);
    let new_lines: Vec<&str> = changed
        .lines()
        .filter(|l| !committed.lines().any(|c| c == *l))
        .collect();
    assert!(
        new_lines.iter().any(|l| l.contains("Repot a houseplant")),
        "{new_lines:#?}"
    );

    // A schedule edit moves the next fire times.
    let weekly = copy.join("garden/weekly.md");
    let text = std::fs::read_to_string(&weekly).unwrap();
    std::fs::write(&weekly, text.replace("30 7 * * sat", "30 7 * * sun")).unwrap();
    let rescheduled = skill_pack::report(&[&copy]).unwrap();
    assert!(committed.contains("  2026-01-03T07:30:00Z"));
    assert!(!rescheduled.contains("  2026-01-03T07:30:00Z"));
    assert!(rescheduled.contains("  2026-01-04T07:30:00Z"));
}
