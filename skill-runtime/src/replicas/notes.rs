//! Notes search on PostgreSQL (markdown-first section 8, issue 16 item 5).
//!
//! With a store and a notes folder, the folder is mirrored into the store's notes table
//! (a generated, weighted `tsvector` with a GIN index) and `/v1/notes/search` ranks there
//! (`ts_rank`, `ts_headline` snippets). The tantivy notes index still reads the folder:
//! it is the one parser of notes, and the built-in `markdown.search` handler keeps
//! searching it. One task per engine applies the changes in order: the whole folder at
//! start, then the paths the notes watcher reports (each path's rows are dropped, then
//! what exists under it is read back). Searches wait for the first full pass.

use std::path::PathBuf;
use std::sync::Arc;

use skill_search::{NoteHit, NoteText, NotesIndex};
use skill_store::{NoteRow, Store};
use tokio::sync::{mpsc, watch};

use crate::error::Error;

/// Most words of a query sent to PostgreSQL: the rest is dropped, as the tantivy index
/// drops words past its own bound, so a huge query costs no more than a long one.
const MAX_QUERY_WORDS: usize = 64;

/// The running mirror of a notes folder into the store.
#[derive(Debug, Clone)]
pub(crate) struct NotesMirror {
    store: Store,
    changes: mpsc::UnboundedSender<Vec<PathBuf>>,
    synced: watch::Receiver<bool>,
}

impl NotesMirror {
    /// Start mirroring `notes` into `store` on the current tokio runtime (`None` outside
    /// one: the tantivy index answers then).
    pub(crate) fn start(store: Store, notes: Arc<NotesIndex>) -> Option<NotesMirror> {
        let handle = tokio::runtime::Handle::try_current().ok()?;
        let (changes, mut rx) = mpsc::unbounded_channel::<Vec<PathBuf>>();
        let (done, synced) = watch::channel(false);
        let writer = store.clone();
        handle.spawn(async move {
            while let Some(paths) = rx.recv().await {
                if let Err(e) = apply(&writer, &notes, &paths).await {
                    tracing::warn!(error = %e, "cannot mirror notes into the shared database");
                }
                if paths.is_empty() {
                    done.send_replace(true);
                }
            }
        });
        let mirror = NotesMirror {
            store,
            changes,
            synced,
        };
        mirror.changed(Vec::new());
        Some(mirror)
    }

    /// Paths of the notes folder changed (an empty list: mirror the whole folder again).
    pub(crate) fn changed(&self, paths: Vec<PathBuf>) {
        let _ = self.changes.send(paths);
    }

    /// Notes ranked by PostgreSQL, once the first full pass is in.
    pub(crate) async fn search(&self, text: &str, limit: usize) -> Result<Vec<NoteHit>, Error> {
        let mut synced = self.synced.clone();
        let _ = synced.wait_for(|done| *done).await;
        let limit = limit.clamp(1, skill_search::MAX_NOTE_RESULTS);
        let words: Vec<&str> = text.split_whitespace().take(MAX_QUERY_WORDS).collect();
        let hits = self
            .store
            .search_notes(&words.join(" "), limit)
            .await
            .map_err(|e| Error::Store(Arc::new(e)))?;
        Ok(hits
            .into_iter()
            .map(|h| NoteHit {
                path: h.path,
                title: h.title,
                tags: h.tags,
                score: h.score,
                snippet: h.snippet,
            })
            .collect())
    }
}

/// Mirror `paths` (all of the folder when empty): drop their rows, write back what exists.
async fn apply(store: &Store, notes: &NotesIndex, paths: &[PathBuf]) -> Result<(), String> {
    let texts = notes.read_notes(paths);
    if paths.is_empty() {
        let keep: std::collections::BTreeSet<&str> =
            texts.iter().map(|n| n.path.as_str()).collect();
        for gone in store.note_paths().await.map_err(|e| e.to_string())? {
            if !keep.contains(gone.as_str()) {
                store.delete_notes(&gone).await.map_err(|e| e.to_string())?;
            }
        }
    }
    for p in paths {
        let abs = if p.is_absolute() {
            p.clone()
        } else {
            notes.root().join(p)
        };
        if let Some(rel) = notes.relative_path(&abs) {
            store.delete_notes(&rel).await.map_err(|e| e.to_string())?;
        }
    }
    let rows: Vec<NoteRow> = texts.into_iter().map(row).collect();
    store.upsert_notes(&rows).await.map_err(|e| e.to_string())?;
    Ok(())
}

fn row(n: NoteText) -> NoteRow {
    let file_name = n
        .path
        .rsplit('/')
        .next()
        .unwrap_or(&n.path)
        .trim_end_matches(".md")
        .trim_end_matches(".MD")
        .to_owned();
    NoteRow {
        frontmatter: serde_json::json!({ "title": n.title, "tags": n.tags }),
        path: n.path,
        file_name,
        title: n.title,
        tags: n.tags,
        content: n.body,
    }
}
