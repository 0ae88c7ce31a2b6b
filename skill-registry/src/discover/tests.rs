//! Unit tests of the walk.
#![allow(clippy::unwrap_used, clippy::expect_used, clippy::panic)]

use super::*;
use std::fs;

use crate::test_util::write;
use skill_format::Severity;

fn dirs(d: &Discovery, root: &Path) -> Vec<String> {
    d.found
        .iter()
        .map(|f| match f {
            Found::Folder { dir, .. } => dir.strip_prefix(root).unwrap().display().to_string(),
            Found::Note { path } => path.strip_prefix(root).unwrap().display().to_string(),
        })
        .collect()
}

#[test]
fn finds_nested_skills_and_stops_at_a_skill_folder() {
    let t = tempfile::tempdir().unwrap();
    write(t.path(), "cat/a/SKILL.md", "x");
    write(t.path(), "cat/a/inner/SKILL.md", "x");
    write(t.path(), "b/skill.md", "x");
    write(t.path(), "b/ref.md", "x");
    let d = discover(t.path(), Layout::Folders, &DiscoverOptions::default());
    assert_eq!(dirs(&d, t.path()), vec!["b", "cat/a"]);
    assert_eq!(d.diagnostics.len(), 1);
    assert_eq!(d.diagnostics[0].code, Code::NestedSkill);
    assert!(d.diagnostics[0].path.ends_with("cat/a/inner/SKILL.md"));
    let Found::Folder {
        lowercase,
        markdown,
        ..
    } = &d.found[0]
    else {
        panic!()
    };
    assert!(*lowercase);
    assert_eq!(markdown.len(), 1);
}

#[test]
fn upper_case_wins_over_lower_case() {
    let t = tempfile::tempdir().unwrap();
    write(t.path(), "a/SKILL.md", "x");
    write(t.path(), "a/skill.md", "x");
    let d = discover(t.path(), Layout::Folders, &DiscoverOptions::default());
    let Found::Folder {
        skill_file,
        lowercase,
        ..
    } = &d.found[0]
    else {
        panic!()
    };
    assert!(!lowercase, "{}", skill_file.display());
}

#[cfg(unix)]
#[test]
fn dangling_and_looping_skill_file_links_are_diagnosed() {
    let dir = tempfile::tempdir().unwrap();
    let root = dir.path();
    fs::create_dir_all(root.join("gone")).unwrap();
    std::os::unix::fs::symlink(root.join("nowhere.md"), root.join("gone/SKILL.md")).unwrap();
    fs::create_dir_all(root.join("loop")).unwrap();
    std::os::unix::fs::symlink(root.join("loop/SKILL.md"), root.join("loop/SKILL.md")).unwrap();
    let d = discover(root, Layout::Folders, &DiscoverOptions::default());
    assert!(d.found.is_empty());
    let mut seen: Vec<(Code, Severity, PathBuf)> = d
        .diagnostics
        .iter()
        .map(|x| (x.code, x.severity, x.path.clone()))
        .collect();
    seen.sort_by(|a, b| a.2.cmp(&b.2));
    assert_eq!(
        seen,
        vec![
            (
                Code::Unreadable,
                Severity::Error,
                root.join("gone/SKILL.md")
            ),
            (
                Code::SymlinkLoop,
                Severity::Error,
                root.join("loop/SKILL.md")
            ),
        ]
    );
}

/// The codes, severities and root-relative paths of a walk's diagnostics, by path.
#[cfg(unix)]
fn codes_at(d: &Discovery, root: &Path) -> Vec<(Code, PathBuf)> {
    let mut seen: Vec<(Code, PathBuf)> = d
        .diagnostics
        .iter()
        .map(|x| (x.code, x.path.strip_prefix(root).unwrap().to_path_buf()))
        .collect();
    seen.sort();
    seen
}

#[cfg(unix)]
#[test]
fn a_skill_file_linked_from_another_folder_loads_once_from_its_own() {
    use std::os::unix::fs::symlink;
    let dir = tempfile::tempdir().unwrap();
    let root = dir.path();
    // `a` (walked first) links to `b`'s file; `c` links to it too.
    write(root, "b/SKILL.md", "x");
    fs::create_dir_all(root.join("a")).unwrap();
    symlink("../b/SKILL.md", root.join("a/SKILL.md")).unwrap();
    fs::create_dir_all(root.join("c")).unwrap();
    symlink("../b/SKILL.md", root.join("c/SKILL.md")).unwrap();
    let d = discover(root, Layout::Folders, &DiscoverOptions::default());
    assert_eq!(dirs(&d, root), vec!["b"]);
    assert_eq!(
        codes_at(&d, root),
        vec![
            (Code::LinkedTwice, PathBuf::from("a/SKILL.md")),
            (Code::LinkedTwice, PathBuf::from("c/SKILL.md")),
        ]
    );
    assert!(
        d.diagnostics
            .iter()
            .all(|x| x.severity == Severity::Warning)
    );
    assert!(
        d.diagnostics[0].message.contains("b/SKILL.md"),
        "{}",
        d.diagnostics[0].message
    );

    // Two links to a file outside any skill folder: the first is loaded, the second said.
    let dir = tempfile::tempdir().unwrap();
    let root = dir.path();
    write(root, "shared/one.md", "x");
    for name in ["p", "q"] {
        fs::create_dir_all(root.join(name)).unwrap();
        symlink("../shared/one.md", root.join(name).join("SKILL.md")).unwrap();
    }
    let d = discover(root, Layout::Folders, &DiscoverOptions::default());
    assert_eq!(dirs(&d, root), vec!["p"]);
    assert_eq!(
        codes_at(&d, root),
        vec![(Code::LinkedTwice, PathBuf::from("q/SKILL.md"))]
    );
}

#[test]
fn hidden_folders_are_skipped_unless_asked() {
    let t = tempfile::tempdir().unwrap();
    write(t.path(), ".hidden/a/SKILL.md", "x");
    write(t.path(), ".git/b/SKILL.md", "x");
    write(t.path(), "node_modules/c/SKILL.md", "x");
    let d = discover(t.path(), Layout::Folders, &DiscoverOptions::default());
    assert!(d.found.is_empty());
    let opts = DiscoverOptions {
        include_hidden: true,
        ..Default::default()
    };
    let d = discover(t.path(), Layout::Folders, &opts);
    assert_eq!(dirs(&d, t.path()), vec![".hidden/a"]);
}

#[test]
fn depth_bound_edge() {
    let t = tempfile::tempdir().unwrap();
    write(t.path(), "1/2/3/SKILL.md", "x");
    let at = DiscoverOptions {
        max_depth: 3,
        ..Default::default()
    };
    assert_eq!(discover(t.path(), Layout::Folders, &at).found.len(), 1);
    let below = DiscoverOptions {
        max_depth: 2,
        ..Default::default()
    };
    let d = discover(t.path(), Layout::Folders, &below);
    assert!(d.found.is_empty());
    assert_eq!(d.diagnostics[0].code, Code::DepthLimit);
}

#[test]
fn folder_bound_edge() {
    let t = tempfile::tempdir().unwrap();
    write(t.path(), "a/SKILL.md", "x");
    write(t.path(), "b/SKILL.md", "x");
    // Root + 2 folders = 3 folders read.
    let enough = DiscoverOptions {
        max_folders: 3,
        ..Default::default()
    };
    let d = discover(t.path(), Layout::Folders, &enough);
    assert_eq!(d.found.len(), 2);
    assert!(d.diagnostics.is_empty());
    let short = DiscoverOptions {
        max_folders: 2,
        ..Default::default()
    };
    let d = discover(t.path(), Layout::Folders, &short);
    assert_eq!(d.found.len(), 1);
    assert_eq!(d.diagnostics[0].code, Code::FolderLimit);
}

#[test]
fn missing_root_is_a_diagnostic() {
    let d = discover(
        Path::new("/definitely/not/here"),
        Layout::Folders,
        &DiscoverOptions::default(),
    );
    assert_eq!(d.diagnostics[0].code, Code::SourceUnavailable);
}

#[test]
fn notes_layout_lists_markdown_files() {
    let t = tempfile::tempdir().unwrap();
    write(t.path(), "a.md", "x");
    write(t.path(), "sub/b.MD", "x");
    write(t.path(), "c.txt", "x");
    let d = discover(t.path(), Layout::Notes, &DiscoverOptions::default());
    assert_eq!(dirs(&d, t.path()), vec!["a.md", "sub/b.MD"]);
}

#[cfg(unix)]
#[test]
fn symlink_loop_and_escape_are_reported_not_followed() {
    use std::os::unix::fs::symlink;
    let outside = tempfile::tempdir().unwrap();
    write(outside.path(), "evil/SKILL.md", "x");
    let t = tempfile::tempdir().unwrap();
    write(t.path(), "a/SKILL.md", "x");
    fs::create_dir_all(t.path().join("loop")).unwrap();
    symlink(t.path().join("loop"), t.path().join("loop/again")).unwrap();
    symlink(outside.path().join("evil"), t.path().join("evil")).unwrap();
    // A second link to a folder inside the root is a duplicate and is skipped.
    symlink(t.path().join("a"), t.path().join("alias")).unwrap();
    let d = discover(t.path(), Layout::Folders, &DiscoverOptions::default());
    assert_eq!(dirs(&d, t.path()), vec!["a"]);
    let codes: Vec<_> = d.diagnostics.iter().map(|d| d.code).collect();
    assert!(codes.contains(&Code::SymlinkLoop), "{codes:?}");
    assert!(codes.contains(&Code::SymlinkEscape), "{codes:?}");
}
/// Only skill files listed as regular files may be opened without a check first: a
/// linked `SKILL.md`, one of another type, and a root that is a file are not.
#[cfg(unix)]
#[test]
fn skill_files_not_listed_as_regular_files_are_marked() {
    use std::os::unix::fs::symlink;
    let t = tempfile::tempdir().unwrap();
    write(t.path(), "plain/SKILL.md", "x");
    write(t.path(), "target/elsewhere.md", "x");
    fs::create_dir_all(t.path().join("linked")).unwrap();
    symlink(
        t.path().join("target/elsewhere.md"),
        t.path().join("linked/SKILL.md"),
    )
    .unwrap();
    fs::create_dir_all(t.path().join("folder/SKILL.md")).unwrap();
    let d = discover(t.path(), Layout::Folders, &DiscoverOptions::default());
    let file = |dir: &str| t.path().join(dir).join("SKILL.md");
    assert_eq!(dirs(&d, t.path()), vec!["folder", "linked", "plain"]);
    assert!(d.listed_regular(&file("plain")));
    assert!(!d.listed_regular(&file("linked")));
    assert!(!d.listed_regular(&file("folder")));
    assert_eq!(d.unlisted.len(), 2);
    // Only regular files listed: nothing is marked.
    let only = tempfile::tempdir().unwrap();
    write(only.path(), "a/SKILL.md", "x");
    let d = discover(only.path(), Layout::Folders, &DiscoverOptions::default());
    assert!(d.unlisted.is_empty());
    assert!(d.listed_regular(&only.path().join("a/SKILL.md")));
    // A root that is the file itself.
    let root = only.path().join("a/SKILL.md");
    let d = discover(&root, Layout::Folders, &DiscoverOptions::default());
    assert!(!d.listed_regular(&root));
}
