//! Unit tests of the notes index: indexing, ranking, snippets, updates and limits.

#![allow(clippy::unwrap_used, clippy::expect_used, clippy::panic)]

use std::fs;

use super::*;

fn put(root: &Path, rel: &str, text: &str) {
    let p = root.join(rel);
    fs::create_dir_all(p.parent().unwrap()).unwrap();
    fs::write(p, text).unwrap();
}

fn vault() -> tempfile::TempDir {
    let dir = tempfile::tempdir().unwrap();
    let r = dir.path();
    put(
        r,
        "work/q1.md",
        "---\ntitle: Q1 strategy\ntags: [planning, okr]\n---\nWe grow revenue by focusing on enterprise customers.\n",
    );
    put(
        r,
        "recipes/bread.md",
        "# Sourdough\n\nFeed the starter twice a day before baking.\n",
    );
    put(
        r,
        "broken.md",
        "---\ntitle: never closed\nThe strategy is hidden here.\n",
    );
    put(
        r,
        "badyaml.md",
        "---\ntitle: [unclosed\n---\nStrategy notes with bad yaml.\n",
    );
    put(r, ".hidden/secret.md", "strategy secret\n");
    put(r, "notes.txt", "strategy but not markdown\n");
    dir
}

#[test]
fn indexes_titles_tags_bodies_and_skips_hidden() {
    let dir = vault();
    let idx = NotesIndex::build(dir.path()).unwrap();
    assert_eq!(idx.len(), 4);
    let hits = idx.search("Q1 strategy", 10).unwrap();
    assert_eq!(hits[0].path, "work/q1.md");
    assert_eq!(hits[0].title, "Q1 strategy");
    assert_eq!(hits[0].tags, ["planning", "okr"]);
    assert!(
        hits.iter()
            .all(|h| !h.path.contains("hidden") && !h.path.ends_with(".txt"))
    );
    let hits = idx.search("okr", 10).unwrap();
    assert_eq!(hits[0].path, "work/q1.md", "tags are searchable");
    let hits = idx.search("recipes", 10).unwrap();
    assert_eq!(
        hits[0].path, "recipes/bread.md",
        "path words are searchable"
    );
    assert_eq!(hits[0].title, "bread", "title falls back to the file name");
}

#[test]
fn snippets_highlight_matches() {
    let dir = vault();
    let idx = NotesIndex::build(dir.path()).unwrap();
    let hits = idx.search("baking starter", 10).unwrap();
    assert_eq!(hits[0].path, "recipes/bread.md");
    assert!(
        hits[0].snippet.contains("**starter**"),
        "{}",
        hits[0].snippet
    );
    assert!(
        hits[0].snippet.contains("**baking**"),
        "{}",
        hits[0].snippet
    );
}

#[test]
fn broken_frontmatter_is_a_warning_not_a_failure() {
    let dir = vault();
    let idx = NotesIndex::build(dir.path()).unwrap();
    let w = idx.warnings();
    assert!(
        w.iter()
            .any(|w| w.starts_with("broken.md: frontmatter opened on line 1")),
        "{w:?}"
    );
    assert!(
        w.iter()
            .any(|w| w.starts_with("badyaml.md: frontmatter is not valid YAML")),
        "{w:?}"
    );
    let hits = idx.search("hidden here", 10).unwrap();
    assert_eq!(hits[0].path, "broken.md");
    assert_eq!(hits[0].title, "broken");
}

#[test]
fn update_paths_rereads_adds_and_drops() {
    let dir = vault();
    let idx = NotesIndex::build(dir.path()).unwrap();
    assert!(idx.search("croissant", 10).unwrap().is_empty());
    put(
        dir.path(),
        "recipes/bread.md",
        "Laminate the croissant dough.\n",
    );
    put(dir.path(), "recipes/pie.md", "Apple pie with cinnamon.\n");
    fs::remove_file(dir.path().join("work/q1.md")).unwrap();
    let up = idx
        .update_paths(&[
            dir.path().join("recipes/bread.md"),
            PathBuf::from("recipes/pie.md"),
            dir.path().join("work/q1.md"),
            PathBuf::from("/elsewhere/x.md"),
        ])
        .unwrap();
    assert_eq!(
        up,
        NotesUpdate {
            indexed: 2,
            removed: 1
        }
    );
    assert_eq!(
        idx.search("croissant", 10).unwrap()[0].path,
        "recipes/bread.md"
    );
    assert!(idx.search("sourdough", 10).unwrap().is_empty());
    assert_eq!(
        idx.search("cinnamon", 10).unwrap()[0].path,
        "recipes/pie.md"
    );
    assert!(idx.search("enterprise", 10).unwrap().is_empty());
    // A folder path re-walks the folder.
    fs::remove_dir_all(dir.path().join("recipes")).unwrap();
    let up = idx.update_paths(&[PathBuf::from("recipes")]).unwrap();
    assert_eq!(up.removed, 2);
    assert_eq!(idx.len(), 2);
    idx.rebuild().unwrap();
    assert_eq!(idx.len(), 2);
}

#[test]
fn hostile_queries_and_limits() {
    let dir = vault();
    let idx = NotesIndex::build(dir.path()).unwrap();
    for q in ["", "the of and", "title:q1 AND (", "\"*", "))))"] {
        let _ = idx.search(q, 5).unwrap();
    }
    assert!(idx.search("", 5).unwrap().is_empty());
    assert_eq!(idx.search("strategy", 1).unwrap().len(), 1);
    assert_eq!(idx.search("strategy", 0).unwrap().len(), 1);
    assert!(NotesIndex::build(dir.path().join("missing")).is_err());
}

#[test]
fn oversized_notes_are_cut() {
    let dir = tempfile::tempdir().unwrap();
    let mut text = "needle ".repeat(10);
    text.push_str(&"x ".repeat(MAX_NOTE_BYTES / 2));
    text.push_str("tailword");
    put(dir.path(), "big.md", &text);
    put(dir.path(), "edge.md", &"y".repeat(MAX_NOTE_BYTES));
    let idx = NotesIndex::build(dir.path()).unwrap();
    assert_eq!(idx.search("needle", 5).unwrap().len(), 1);
    assert!(idx.search("tailword", 5).unwrap().is_empty());
    let w = idx.warnings();
    assert_eq!(w.len(), 1, "only the file over the limit: {w:?}");
    assert!(w[0].starts_with("big.md"));
}

#[test]
fn update_paths_skips_what_a_build_skips() {
    let dir = vault();
    let idx = NotesIndex::build(dir.path()).unwrap();
    let before = idx.len();
    put(
        dir.path(),
        ".hidden/new.md",
        "strategy from a hidden folder\n",
    );
    put(dir.path(), "work/.draft.md", "strategy in a hidden file\n");
    put(
        dir.path(),
        ".obsidian/workspace.md",
        "strategy in the app's settings\n",
    );
    let up = idx
        .update_paths(&[
            dir.path().join(".hidden/secret.md"),
            dir.path().join(".hidden/new.md"),
            PathBuf::from("work/.draft.md"),
            PathBuf::from(".obsidian"),
            dir.path().join(".hidden"),
        ])
        .unwrap();
    assert_eq!(up, NotesUpdate::default());
    assert_eq!(idx.len(), before);
    assert!(
        idx.search("strategy", 50)
            .unwrap()
            .iter()
            .all(|h| !h.path.split('/').any(|p| p.starts_with('.'))),
    );
    // The same paths through a rebuild: still left out.
    idx.rebuild().unwrap();
    assert_eq!(idx.len(), before);
    // A visible note next to them is still read.
    put(dir.path(), "work/plan.md", "strategy for the plan\n");
    let up = idx.update_paths(&[PathBuf::from("work/plan.md")]).unwrap();
    assert_eq!(up.indexed, 1);
}

#[test]
fn a_one_mebibyte_query_is_searched_by_its_start() {
    let dir = vault();
    let idx = NotesIndex::build(dir.path()).unwrap();
    let mut huge = String::from("sourdough starter ");
    let mut i = 0u64;
    while huge.len() < 1024 * 1024 {
        huge.push_str(&format!("w{i:x} "));
        i += 1;
    }
    let hits = idx.search(&huge, 5).unwrap();
    assert_eq!(hits[0].path, "recipes/bread.md");
    // Words past the query limit are not searched.
    let tail = format!("{} strategy", "zz ".repeat(crate::MAX_QUERY_BYTES));
    assert!(idx.search(&tail, 5).unwrap().is_empty());
}

#[test]
fn read_notes_gives_what_the_index_reads() {
    let dir = vault();
    let idx = NotesIndex::build(dir.path()).unwrap();
    // The whole folder: the four notes the index holds, hidden ones and non-notes left out.
    let mut all: Vec<String> = idx.read_notes(&[]).into_iter().map(|n| n.path).collect();
    all.sort();
    assert_eq!(
        all,
        ["badyaml.md", "broken.md", "recipes/bread.md", "work/q1.md"]
    );
    // A folder or a file, by absolute or relative path; parsed as the index parses them.
    let q1 = idx.read_notes(&[dir.path().join("work")]);
    assert_eq!(q1.len(), 1);
    assert_eq!(
        (q1[0].title.as_str(), q1[0].tags.clone()),
        ("Q1 strategy", vec!["planning".to_owned(), "okr".to_owned()])
    );
    assert!(q1[0].body.starts_with("We grow revenue"), "{}", q1[0].body);
    let bread = idx.read_notes(&[PathBuf::from("recipes/bread.md")]);
    assert_eq!(bread[0].title, "bread");
    // Gone, hidden or outside: nothing.
    assert!(idx.read_notes(&[dir.path().join("gone.md")]).is_empty());
    assert!(idx.read_notes(&[dir.path().join(".hidden")]).is_empty());
    assert!(idx.read_notes(&[PathBuf::from("/etc")]).is_empty());
    assert_eq!(
        idx.relative_path(&dir.path().join("work/q1.md")).as_deref(),
        Some("work/q1.md")
    );
}

#[test]
fn a_snippet_is_made_from_a_window_around_the_first_match() {
    let dir = tempfile::tempdir().unwrap();
    let mut text = "filler words here. ".repeat(30_000);
    text.push_str("Quarterly Revenue grew by a third.\n");
    text.push_str(&"more filler. ".repeat(1_000));
    put(dir.path(), "deep.md", &text);
    let idx = NotesIndex::build(dir.path()).unwrap();
    let hits = idx.search("revenue", 5).unwrap();
    assert_eq!(hits.len(), 1);
    assert!(
        hits[0].snippet.contains("**Revenue**"),
        "{}",
        hits[0].snippet
    );
}

#[test]
fn the_snippet_window_has_its_size_at_most() {
    let edge = "a".repeat(SNIPPET_WINDOW_BYTES);
    assert_eq!(snippet_window(&edge, None), edge, "at the size: whole");
    let over = format!("{edge}b");
    assert_eq!(snippet_window(&over, None), edge, "one byte over: cut");
    // Never inside a character, at either end.
    let wide = "é".repeat(SNIPPET_WINDOW_BYTES);
    let w = window(&wide, 1);
    assert!(w.len() <= SNIPPET_WINDOW_BYTES && w.starts_with('é'));
    // The window starts a little before the first match.
    let mut body = "x ".repeat(SNIPPET_WINDOW_BYTES * 2);
    body.push_str("Needle");
    let finder = word_finder("needles", &["needl".to_owned()]).unwrap();
    let w = snippet_window(&body, Some(&finder));
    assert_eq!(w.len(), SNIPPET_LEAD_BYTES + "Needle".len(), "{w}");
    assert!(w.ends_with("Needle"));
}
