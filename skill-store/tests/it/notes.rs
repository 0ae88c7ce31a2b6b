//! Notes search on PostgreSQL: weights, snippets, upserts and deletes.

use serde_json::json;
use skill_store::NoteRow;

use crate::support::store;

fn note(path: &str, title: Option<&str>, content: &str) -> NoteRow {
    let file_name = path
        .rsplit('/')
        .next()
        .unwrap()
        .trim_end_matches(".md")
        .to_owned();
    NoteRow {
        path: path.to_owned(),
        title: title.unwrap_or(&file_name).to_owned(),
        file_name,
        frontmatter: title.map_or(json!({}), |t| json!({ "title": t })),
        tags: Vec::new(),
        content: content.to_owned(),
    }
}

#[tokio::test]
#[ignore = "needs PostgreSQL: run bash .ci/postgres first"]
async fn titles_outrank_bodies_and_snippets_bold_the_words() {
    let (_url, s) = store("a").await;
    s.upsert_notes(&[
        note(
            "work/q1.md",
            Some("Revenue plan"),
            "Hire two engineers this quarter.",
        ),
        note(
            "misc/diary.md",
            None,
            "Talked about revenue over lunch, then walked home.",
        ),
        note("misc/other.md", None, "Nothing to see."),
    ])
    .await
    .unwrap();
    let hits = s.search_notes("revenue", 10).await.unwrap();
    let paths: Vec<&str> = hits.iter().map(|h| h.path.as_str()).collect();
    assert_eq!(paths, ["work/q1.md", "misc/diary.md"]);
    assert_eq!(hits[0].title, "Revenue plan");
    assert!(
        hits[1].snippet.contains("**revenue**"),
        "{}",
        hits[1].snippet
    );
    // Words are OR-ed; stop words alone find nothing.
    assert_eq!(
        s.search_notes("engineers lunch", 10).await.unwrap().len(),
        2
    );
    assert!(s.search_notes("the of", 10).await.unwrap().is_empty());
    assert!(s.search_notes("", 10).await.unwrap().is_empty());
    // An upsert replaces; a delete of a folder drops what is below it.
    s.upsert_notes(&[note("misc/diary.md", None, "Quiet day.")])
        .await
        .unwrap();
    assert_eq!(s.search_notes("revenue", 10).await.unwrap().len(), 1);
    assert_eq!(s.delete_notes("misc").await.unwrap(), 2);
    assert_eq!(s.note_paths().await.unwrap(), ["work/q1.md"]);
}
