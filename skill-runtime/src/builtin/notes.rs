//! `markdown.search`: full-text search over the host's markdown notes.
//!
//! Flags (the bundled `markdown/search.md`): `--query` (required; positionals are used
//! when it is absent), `--folder` (only notes under this folder of the notes root),
//! `--tags a,b` (only notes carrying all of them, case-insensitive), `--sort
//! relevance|modified|title` (default relevance; modified is newest first), `--limit`
//! (default [`DEFAULT_NOTE_RESULTS`], at most [`MAX_NOTE_RESULTS`]), `--snippets`
//! (include the highlighted passage). The output is JSON: `{query, count, results: [{path,
//! title, tags, score, modified, snippet?}]}` with `modified` in RFC 3339 UTC.

use std::future::Future;
use std::path::Path;
use std::pin::Pin;
use std::sync::Arc;
use std::task::{Context as TaskContext, Poll};

use skill_scheduler::{DateTime, SecondsFormat, Utc};
use skill_search::{MAX_NOTE_RESULTS, NoteHit, NotesIndex};

use crate::builtin::text_flag;
use crate::exec::{BoxError, Call, HandlerError, Output};

/// Results returned when `--limit` is not given (the skill file's default).
pub const DEFAULT_NOTE_RESULTS: usize = 10;

/// The `markdown.search` handler over a shared notes index.
#[derive(Debug, Clone)]
pub struct MarkdownSearch {
    index: Arc<NotesIndex>,
}

impl MarkdownSearch {
    /// A handler over this index (the host keeps it current with
    /// [`NotesIndex::update_paths`]).
    pub fn new(index: Arc<NotesIndex>) -> Self {
        MarkdownSearch { index }
    }
}

impl tower::Service<Call> for MarkdownSearch {
    type Response = Output;
    type Error = BoxError;
    type Future = Pin<Box<dyn Future<Output = Result<Output, BoxError>> + Send>>;

    fn poll_ready(&mut self, _cx: &mut TaskContext<'_>) -> Poll<Result<(), BoxError>> {
        Poll::Ready(Ok(()))
    }

    fn call(&mut self, call: Call) -> Self::Future {
        let index = self.index.clone();
        Box::pin(async move {
            let res = tokio::task::spawn_blocking(move || search(&index, &call))
                .await
                .map_err(|e| HandlerError::new("search_failed", e.to_string()))?;
            res.map_err(Into::into)
        })
    }
}

#[derive(Debug, Clone, Copy, PartialEq, Eq)]
enum Sort {
    Relevance,
    Modified,
    Title,
}

struct Query {
    text: String,
    folder: Option<String>,
    tags: Vec<String>,
    sort: Sort,
    limit: usize,
    snippets: bool,
}

fn invalid(message: String) -> HandlerError {
    HandlerError::new("invalid_value", message)
}

fn parse(call: &Call) -> Result<Query, HandlerError> {
    let flags = &call.invocation.flags;
    let text = match text_flag(flags, "query")? {
        Some(q) => q,
        None => call.invocation.positionals.join(" "),
    };
    if text.trim().is_empty() {
        return Err(HandlerError::new(
            "missing_flags",
            "missing required flag: --query",
        ));
    }
    let folder = match text_flag(flags, "folder")? {
        None => None,
        Some(f) => {
            let f = f.trim().trim_matches('/').to_owned();
            if f.split('/').any(|part| part == ".." || part == ".") || f.contains('\\') {
                return Err(invalid(format!(
                    "--folder `{f}` must be a plain relative folder (no `.` or `..`)"
                )));
            }
            (!f.is_empty()).then_some(f)
        }
    };
    let tags = text_flag(flags, "tags")?
        .map(|t| {
            t.split([',', ' '])
                .map(|s| s.trim().to_lowercase())
                .filter(|s| !s.is_empty())
                .collect()
        })
        .unwrap_or_default();
    let sort = match text_flag(flags, "sort")?.as_deref() {
        None | Some("relevance") => Sort::Relevance,
        Some("modified") => Sort::Modified,
        Some("title") => Sort::Title,
        Some(other) => {
            return Err(invalid(format!(
                "--sort `{other}` is not one of: relevance, modified, title"
            )));
        }
    };
    let limit = match text_flag(flags, "limit")? {
        None => DEFAULT_NOTE_RESULTS,
        Some(l) => match l.trim().parse::<usize>() {
            Ok(n) if (1..=MAX_NOTE_RESULTS).contains(&n) => n,
            _ => {
                return Err(invalid(format!(
                    "--limit `{l}` must be a whole number from 1 to {MAX_NOTE_RESULTS}"
                )));
            }
        },
    };
    let snippets = flags.contains("snippets");
    Ok(Query {
        text,
        folder,
        tags,
        sort,
        limit,
        snippets,
    })
}

fn modified(root: &Path, relative: &str) -> Option<DateTime<Utc>> {
    let time = std::fs::metadata(root.join(relative))
        .ok()?
        .modified()
        .ok()?;
    Some(DateTime::<Utc>::from(time))
}

fn search(index: &NotesIndex, call: &Call) -> Result<Output, HandlerError> {
    let q = parse(call)?;
    let filtered = q.folder.is_some() || !q.tags.is_empty() || q.sort != Sort::Relevance;
    let fetch = if filtered { MAX_NOTE_RESULTS } else { q.limit };
    let hits = index
        .search(&q.text, fetch)
        .map_err(|e| HandlerError::new("search_failed", e.to_string()))?;
    let mut hits: Vec<(NoteHit, Option<DateTime<Utc>>)> = hits
        .into_iter()
        .filter(|h| match &q.folder {
            Some(f) => h.path.starts_with(&format!("{f}/")),
            None => true,
        })
        .filter(|h| {
            q.tags
                .iter()
                .all(|t| h.tags.iter().any(|ht| ht.to_lowercase() == *t))
        })
        .map(|h| {
            let m = modified(index.root(), &h.path);
            (h, m)
        })
        .collect();
    match q.sort {
        Sort::Relevance => {}
        Sort::Title => hits.sort_by(|a, b| {
            a.0.title
                .to_lowercase()
                .cmp(&b.0.title.to_lowercase())
                .then_with(|| a.0.path.cmp(&b.0.path))
        }),
        Sort::Modified => hits.sort_by(|a, b| b.1.cmp(&a.1).then_with(|| a.0.path.cmp(&b.0.path))),
    }
    hits.truncate(q.limit);
    let results: Vec<serde_json::Value> = hits
        .into_iter()
        .map(|(h, m)| {
            let mut v = serde_json::json!({
                "path": h.path,
                "title": h.title,
                "tags": h.tags,
                "score": h.score,
                "modified": m.map(|m| m.to_rfc3339_opts(SecondsFormat::Secs, true)),
            });
            if q.snippets {
                v["snippet"] = h.snippet.into();
            }
            v
        })
        .collect();
    Ok(Output::Json(serde_json::json!({
        "query": q.text,
        "count": results.len(),
        "results": results,
    })))
}
