//! Markdown notes search (markdown-first section 8): any folder of `.md` files, with titles
//! from frontmatter `title` (or the file name), tags, body and path, ranked with highlighted
//! snippets, and kept current by re-reading changed paths.

use std::collections::BTreeSet;
use std::fs;
use std::path::{Component, Path, PathBuf};
use std::sync::{Mutex, RwLock};

use skill_format::yaml::{self, Node};
use tantivy::collector::TopDocs;
use tantivy::query::{BooleanQuery, BoostQuery, Occur, Query, TermQuery};
use tantivy::schema::{Field, IndexRecordOption, Schema, TextFieldIndexing, TextOptions, Value};
use tantivy::snippet::SnippetGenerator;
use tantivy::{Index, IndexReader, IndexWriter, ReloadPolicy, TantivyDocument, Term};

use crate::Error;
use crate::index::WRITER_MEMORY_BYTES;
use crate::text::{self, ENGLISH, MAX_QUERY_TERMS, clip};

/// Largest note read, in bytes; larger files are indexed by their first this-many bytes.
pub const MAX_NOTE_BYTES: usize = 1024 * 1024;
/// Most notes indexed from one folder; the walk stops (with a warning) after this many.
pub const MAX_NOTES: usize = 100_000;
/// Deepest folder nesting walked below the root.
pub const MAX_NOTE_DEPTH: usize = 16;
/// Longest snippet, in characters.
pub const SNIPPET_CHARS: usize = 160;
/// Boost of the title.
pub const NOTE_BOOST_TITLE: f32 = 3.0;
/// Boost of tags.
pub const NOTE_BOOST_TAGS: f32 = 2.0;
/// Boost of the path's words.
pub const NOTE_BOOST_PATH: f32 = 1.5;
/// Boost of the body.
pub const NOTE_BOOST_BODY: f32 = 1.0;
/// Most results one notes search returns.
pub const MAX_NOTE_RESULTS: usize = 1_000;
/// Most bytes of a note's body a hit's snippet is made from: a window that starts
/// [`SNIPPET_LEAD_BYTES`] before the first place a query word appears in the body (or at
/// its start). Highlighting reads every word of the text it is given, so without it a
/// search of many large notes read every body in full for each request.
pub(crate) const SNIPPET_WINDOW_BYTES: usize = 8 * 1024;
/// How far before the first match a snippet's window starts (some context before it).
const SNIPPET_LEAD_BYTES: usize = 1024;

/// One ranked note.
#[derive(Debug, Clone, PartialEq)]
pub struct NoteHit {
    /// The note's path relative to the notes folder, with `/` separators.
    pub path: String,
    /// Its title (frontmatter `title`, else the file name without `.md`).
    pub title: String,
    /// Its tags.
    pub tags: Vec<String>,
    /// The BM25 score with field boosts.
    pub score: f32,
    /// A passage of the body with matched words in `**bold**` (markdown), or the start of
    /// the body when only the title, tags or path matched.
    pub snippet: String,
}

/// What an update did.
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq)]
pub struct NotesUpdate {
    /// Notes added or re-read.
    pub indexed: usize,
    /// Notes dropped (file gone, or no longer a note).
    pub removed: usize,
}

/// One note as the index reads it from the folder (for hosts that mirror the folder into
/// another search engine, such as PostgreSQL shared by several replicas).
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct NoteText {
    /// Path relative to the notes folder, with `/` separators.
    pub path: String,
    /// Its title (frontmatter `title`, else the file name without `.md`).
    pub title: String,
    /// Its tags.
    pub tags: Vec<String>,
    /// The body after the frontmatter (at most the first mebibyte of the file).
    pub body: String,
}

#[derive(Debug, Clone, Copy)]
struct NoteFields {
    path: Field,
    path_words: Field,
    title: Field,
    tags: Field,
    body: Field,
}

/// A searchable index over a folder of markdown notes.
pub struct NotesIndex {
    root: PathBuf,
    index: Index,
    reader: IndexReader,
    writer: Mutex<IndexWriter>,
    fields: NoteFields,
    known: RwLock<BTreeSet<String>>,
    warnings: Mutex<Vec<String>>,
}

impl std::fmt::Debug for NotesIndex {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("NotesIndex")
            .field("root", &self.root)
            .field("notes", &self.len())
            .finish_non_exhaustive()
    }
}

impl NotesIndex {
    /// Index every `.md` file under `root` (hidden entries skipped, symbolic links not
    /// followed), in memory.
    pub fn build(root: impl Into<PathBuf>) -> Result<Self, Error> {
        let root = root.into();
        if let Err(source) = fs::read_dir(&root) {
            return Err(Error::Notes { path: root, source });
        }
        let mut b = Schema::builder();
        let english = TextOptions::default()
            .set_indexing_options(
                TextFieldIndexing::default()
                    .set_tokenizer(ENGLISH)
                    .set_index_option(IndexRecordOption::WithFreqsAndPositions),
            )
            .set_stored();
        let raw = TextOptions::default()
            .set_indexing_options(
                TextFieldIndexing::default()
                    .set_tokenizer("raw")
                    .set_index_option(IndexRecordOption::Basic),
            )
            .set_stored();
        let fields = NoteFields {
            path: b.add_text_field("path", raw),
            path_words: b.add_text_field(
                "path_words",
                TextOptions::default().set_indexing_options(
                    TextFieldIndexing::default()
                        .set_tokenizer(ENGLISH)
                        .set_index_option(IndexRecordOption::WithFreqs),
                ),
            ),
            title: b.add_text_field("title", english.clone()),
            tags: b.add_text_field("tags", english.clone()),
            body: b.add_text_field("body", english),
        };
        let index = Index::create_in_ram(b.build());
        text::register(&index);
        let writer = index.writer_with_num_threads(1, WRITER_MEMORY_BYTES)?;
        let reader = index
            .reader_builder()
            .reload_policy(ReloadPolicy::Manual)
            .try_into()?;
        let this = NotesIndex {
            root,
            index,
            reader,
            writer: Mutex::new(writer),
            fields,
            known: RwLock::new(BTreeSet::new()),
            warnings: Mutex::new(Vec::new()),
        };
        this.rebuild()?;
        Ok(this)
    }

    /// The notes folder.
    pub fn root(&self) -> &Path {
        &self.root
    }

    /// Number of indexed notes.
    pub fn len(&self) -> usize {
        self.known.read().map(|k| k.len()).unwrap_or(0)
    }

    /// Whether no note is indexed.
    pub fn is_empty(&self) -> bool {
        self.len() == 0
    }

    /// Problems met while reading notes (broken frontmatter, unreadable or oversized files,
    /// the [`MAX_NOTES`] limit), from the last build or update.
    pub fn warnings(&self) -> Vec<String> {
        self.warnings.lock().map(|w| w.clone()).unwrap_or_default()
    }

    /// Forget everything and index the whole folder again.
    pub fn rebuild(&self) -> Result<NotesUpdate, Error> {
        let mut writer = self.writer.lock().map_err(|_| Error::Poisoned)?;
        let mut known = self.known.write().map_err(|_| Error::Poisoned)?;
        let mut warnings = Vec::new();
        writer.delete_all_documents()?;
        let removed = known.len();
        known.clear();
        let mut files = Vec::new();
        walk(&self.root, 0, &mut files, &mut warnings);
        let mut stats = NotesUpdate {
            indexed: 0,
            removed,
        };
        for file in files {
            if let Some(rel) = self.relative(&file) {
                if self.add(&writer, &file, &rel, &mut warnings)? {
                    known.insert(rel);
                    stats.indexed += 1;
                }
            }
        }
        writer.commit()?;
        self.reader.reload()?;
        if let Ok(mut w) = self.warnings.lock() {
            *w = warnings;
        }
        Ok(stats)
    }

    /// Re-read the notes at `paths` (absolute, or relative to the notes folder): files are
    /// re-indexed, folders are walked again, and notes that no longer exist are dropped.
    /// Paths outside the folder are ignored, and so are the paths a build skips (any part
    /// hidden, see [`NotesIndex::build`]).
    pub fn update_paths(&self, paths: &[PathBuf]) -> Result<NotesUpdate, Error> {
        let mut writer = self.writer.lock().map_err(|_| Error::Poisoned)?;
        let mut known = self.known.write().map_err(|_| Error::Poisoned)?;
        let mut warnings = Vec::new();
        let mut stats = NotesUpdate::default();
        for p in paths {
            let Some((abs, rel)) = self.locate(p) else {
                continue;
            };
            // Drop the note and everything indexed below it, then read back what exists.
            let prefix = format!("{rel}/");
            let stale: Vec<String> = known
                .iter()
                .filter(|k| **k == rel || k.starts_with(&prefix) || rel.is_empty())
                .cloned()
                .collect();
            for k in &stale {
                writer.delete_term(Term::from_field_text(self.fields.path, k));
                known.remove(k);
            }
            let mut files = Vec::new();
            files_at(&abs, &rel, &mut files, &mut warnings);
            let mut back = 0;
            for file in files {
                if let Some(r) = self.relative(&file) {
                    if self.add(&writer, &file, &r, &mut warnings)? {
                        known.insert(r);
                        back += 1;
                    }
                }
            }
            stats.indexed += back;
            stats.removed += stale.len().saturating_sub(back);
        }
        writer.commit()?;
        self.reader.reload()?;
        if let Ok(mut w) = self.warnings.lock() {
            *w = warnings;
        }
        Ok(stats)
    }

    /// Read the notes at `paths` (as [`NotesIndex::update_paths`] takes them: files, or
    /// folders walked again) the way the index reads them, without touching the index.
    /// An empty list reads the whole folder. Unreadable files are left out.
    pub fn read_notes(&self, paths: &[PathBuf]) -> Vec<NoteText> {
        let mut warnings = Vec::new();
        let mut files = Vec::new();
        if paths.is_empty() {
            walk(&self.root, 0, &mut files, &mut warnings);
        }
        for (abs, rel) in paths.iter().filter_map(|p| self.locate(p)) {
            files_at(&abs, &rel, &mut files, &mut warnings);
        }
        files
            .iter()
            .filter_map(|f| {
                let rel = self.relative(f)?;
                let note = read_note(f, &rel, &mut warnings)?;
                Some(NoteText {
                    path: rel,
                    title: note.title,
                    tags: note.tags,
                    body: note.body,
                })
            })
            .collect()
    }

    /// `p` (absolute, or relative to the notes folder) as an absolute path and the
    /// folder's relative one; `None` outside the folder or under a part a build skips.
    fn locate(&self, p: &Path) -> Option<(PathBuf, String)> {
        let abs = if p.is_absolute() {
            p.to_path_buf()
        } else {
            self.root.join(p)
        };
        let rel = self.relative(&abs)?;
        (!rel.split('/').any(skipped)).then_some((abs, rel))
    }

    /// The notes folder's path for `abs` (relative, `/`-separated), when it is inside it.
    pub fn relative_path(&self, abs: &Path) -> Option<String> {
        self.relative(abs)
    }

    fn relative(&self, abs: &Path) -> Option<String> {
        let rel = abs.strip_prefix(&self.root).ok()?;
        let mut parts = Vec::new();
        for c in rel.components() {
            match c {
                Component::Normal(s) => parts.push(s.to_string_lossy().into_owned()),
                Component::CurDir => {}
                _ => return None,
            }
        }
        Some(parts.join("/"))
    }

    fn add(
        &self,
        writer: &IndexWriter,
        file: &Path,
        rel: &str,
        warnings: &mut Vec<String>,
    ) -> Result<bool, Error> {
        let Some(note) = read_note(file, rel, warnings) else {
            return Ok(false);
        };
        let f = &self.fields;
        let mut doc = TantivyDocument::default();
        doc.add_text(f.path, rel);
        doc.add_text(f.path_words, rel);
        doc.add_text(f.title, &note.title);
        for t in &note.tags {
            doc.add_text(f.tags, t);
        }
        doc.add_text(f.body, &note.body);
        writer.add_document(doc)?;
        Ok(true)
    }

    /// Notes ranked for `query_text` (title strongest, then tags, path, body), at most `limit`
    /// (capped at [`MAX_NOTE_RESULTS`]). Query text is analyzed into words, never parsed
    /// as a query language; a query with no searchable word returns nothing.
    ///
    /// ```
    /// use skill_search::NotesIndex;
    ///
    /// let dir = tempfile::tempdir()?;
    /// std::fs::create_dir(dir.path().join("work"))?;
    /// std::fs::write(
    ///     dir.path().join("work/q1.md"),
    ///     "---\ntitle: Q1 strategy\ntags: [planning]\n---\nGrow revenue with enterprise customers.\n",
    /// )?;
    /// let notes = NotesIndex::build(dir.path())?;
    /// let hits = notes.search("enterprise revenue", 5)?;
    /// assert_eq!(hits[0].path, "work/q1.md");
    /// assert_eq!(hits[0].title, "Q1 strategy");
    /// assert!(hits[0].snippet.contains("**revenue**"), "{}", hits[0].snippet);
    ///
    /// // A file changed: the watcher hands its path over.
    /// std::fs::write(dir.path().join("work/q1.md"), "Hire two engineers.\n")?;
    /// notes.update_paths(&[dir.path().join("work/q1.md")])?;
    /// assert!(notes.search("enterprise", 5)?.is_empty());
    /// # Ok::<(), Box<dyn std::error::Error>>(())
    /// ```
    pub fn search(&self, query_text: &str, limit: usize) -> Result<Vec<NoteHit>, Error> {
        let limit = limit.clamp(1, MAX_NOTE_RESULTS);
        let mut analyzer = text::english();
        let mut terms: Vec<String> = Vec::new();
        for t in text::tokens(&mut analyzer, clip(query_text)) {
            if terms.len() >= MAX_QUERY_TERMS {
                break;
            }
            if !terms.contains(&t) {
                terms.push(t);
            }
        }
        if terms.is_empty() {
            return Ok(Vec::new());
        }
        let f = &self.fields;
        let mut clauses: Vec<(Occur, Box<dyn Query>)> = Vec::new();
        for t in &terms {
            for (field, boost) in [
                (f.title, NOTE_BOOST_TITLE),
                (f.tags, NOTE_BOOST_TAGS),
                (f.path_words, NOTE_BOOST_PATH),
                (f.body, NOTE_BOOST_BODY),
            ] {
                clauses.push((
                    Occur::Should,
                    Box::new(BoostQuery::new(
                        Box::new(TermQuery::new(
                            Term::from_field_text(field, t),
                            IndexRecordOption::WithFreqs,
                        )),
                        boost,
                    )),
                ));
            }
        }
        let query = BooleanQuery::new(clauses);
        let searcher = self.reader.searcher();
        let top = searcher.search(&query, &TopDocs::with_limit(limit))?;
        let mut snippets = SnippetGenerator::create(&searcher, &query, f.body)?;
        snippets.set_max_num_chars(SNIPPET_CHARS);
        let finder = word_finder(clip(query_text), &terms);
        let mut out = Vec::with_capacity(top.len());
        for (score, addr) in top {
            let doc: TantivyDocument = searcher.doc(addr)?;
            let get = |field: Field| -> Vec<String> {
                doc.get_all(field)
                    .filter_map(|v| v.as_str().map(str::to_owned))
                    .collect()
            };
            let body = doc.get_first(f.body).and_then(|v| v.as_str()).unwrap_or("");
            let snippet = snippets.snippet(snippet_window(body, finder.as_ref()));
            let snippet = if snippet.is_empty() {
                window(body, 0)
                    .split_whitespace()
                    .collect::<Vec<_>>()
                    .join(" ")
                    .chars()
                    .take(SNIPPET_CHARS)
                    .collect()
            } else {
                let frag = snippet.fragment();
                let mut s = String::new();
                let mut at = 0;
                for r in snippet.highlighted() {
                    if let (Some(before), Some(hit)) = (frag.get(at..r.start), frag.get(r.clone()))
                    {
                        s.push_str(before);
                        s.push_str("**");
                        s.push_str(hit);
                        s.push_str("**");
                        at = r.end;
                    }
                }
                s.push_str(frag.get(at..).unwrap_or(""));
                s.split_whitespace().collect::<Vec<_>>().join(" ")
            };
            out.push(NoteHit {
                path: get(f.path).into_iter().next().unwrap_or_default(),
                title: get(f.title).into_iter().next().unwrap_or_default(),
                tags: get(f.tags),
                score,
                snippet,
            });
        }
        // Deterministic order for equal scores.
        out.sort_by(|a, b| b.score.total_cmp(&a.score).then(a.path.cmp(&b.path)));
        let _ = &self.index;
        Ok(out)
    }
}

/// A pattern that finds the query's words in a body, whatever their case: each word as
/// written and as analyzed (its stem is most often a prefix of the word). `None` when it
/// cannot be built; snippets then come from each body's start.
fn word_finder(query: &str, terms: &[String]) -> Option<regex::Regex> {
    let mut analyzer = text::english();
    // The words that count (a stop word would find any body's first `a`).
    let mut words: Vec<String> = query
        .split(|c: char| !c.is_alphanumeric())
        .filter(|w| !w.is_empty() && !text::tokens(&mut analyzer, w).is_empty())
        .map(str::to_lowercase)
        .take(MAX_QUERY_TERMS)
        .collect();
    words.extend(terms.iter().cloned());
    words.sort();
    words.dedup();
    let alternation: Vec<String> = words.iter().map(|w| regex::escape(w)).collect();
    regex::RegexBuilder::new(&alternation.join("|"))
        .case_insensitive(true)
        .build()
        .ok()
}

/// The part of `body` a hit's snippet is made from: [`SNIPPET_WINDOW_BYTES`] from a little
/// before the first query word `finder` finds (from the start when it finds none).
fn snippet_window<'b>(body: &'b str, finder: Option<&regex::Regex>) -> &'b str {
    if body.len() <= SNIPPET_WINDOW_BYTES {
        return body;
    }
    let first = finder
        .and_then(|f| f.find(body))
        .map_or(0, |m| m.start().saturating_sub(SNIPPET_LEAD_BYTES));
    window(body, first)
}

/// At most [`SNIPPET_WINDOW_BYTES`] of `body` from byte `start`, both ends moved back to
/// character boundaries.
fn window(body: &str, start: usize) -> &str {
    let floor = |mut at: usize| {
        at = at.min(body.len());
        while !body.is_char_boundary(at) {
            at -= 1;
        }
        at
    };
    let start = floor(start);
    let end = floor(start.saturating_add(SNIPPET_WINDOW_BYTES));
    body.get(start..end).unwrap_or("")
}

fn depth_of(rel: &str) -> usize {
    if rel.is_empty() {
        0
    } else {
        rel.split('/').count()
    }
}

fn is_note(p: &Path) -> bool {
    p.extension()
        .and_then(|e| e.to_str())
        .is_some_and(|e| e.eq_ignore_ascii_case("md"))
}

/// Whether a file or folder name is left out of the index: hidden entries (`.git`,
/// `.obsidian`, `.trash`, ...).
fn skipped(name: &str) -> bool {
    name.starts_with('.')
}

fn walk(dir: &Path, depth: usize, out: &mut Vec<PathBuf>, warnings: &mut Vec<String>) {
    if depth > MAX_NOTE_DEPTH {
        warnings.push(format!(
            "{}: deeper than {MAX_NOTE_DEPTH} folders; not searched",
            dir.display()
        ));
        return;
    }
    let Ok(entries) = fs::read_dir(dir) else {
        warnings.push(format!("{}: cannot read folder", dir.display()));
        return;
    };
    let mut entries: Vec<_> = entries.flatten().collect();
    entries.sort_by_key(|e| e.file_name());
    for e in entries {
        if out.len() >= MAX_NOTES {
            warnings.push(format!(
                "more than {MAX_NOTES} notes; the rest are not indexed"
            ));
            return;
        }
        if skipped(&e.file_name().to_string_lossy()) {
            continue;
        }
        let Ok(kind) = e.file_type() else { continue };
        let path = e.path();
        if kind.is_dir() {
            walk(&path, depth + 1, out, warnings);
        } else if kind.is_file() && is_note(&path) {
            out.push(path);
        }
    }
}

struct Note {
    title: String,
    tags: Vec<String>,
    body: String,
}

/// The note files at `abs` (folder path `rel`): the file itself, or a folder walked.
fn files_at(abs: &Path, rel: &str, files: &mut Vec<PathBuf>, warnings: &mut Vec<String>) {
    match fs::symlink_metadata(abs) {
        Ok(m) if m.is_dir() => walk(abs, depth_of(rel), files, warnings),
        Ok(m) if m.is_file() && is_note(abs) => files.push(abs.to_path_buf()),
        _ => {}
    }
}

/// Read and parse one note file (`None`, with a warning, when it cannot be read).
fn read_note(file: &Path, rel: &str, warnings: &mut Vec<String>) -> Option<Note> {
    let bytes = match fs::read(file) {
        Ok(b) => b,
        Err(e) => {
            warnings.push(format!("{rel}: cannot read: {e}"));
            return None;
        }
    };
    if bytes.len() > MAX_NOTE_BYTES {
        warnings.push(format!(
            "{rel}: larger than {MAX_NOTE_BYTES} bytes; only the start is indexed"
        ));
    }
    let head = &bytes[..bytes.len().min(MAX_NOTE_BYTES)];
    let text = String::from_utf8_lossy(head);
    Some(parse_note(&text, rel, warnings))
}

fn parse_note(text: &str, rel: &str, warnings: &mut Vec<String>) -> Note {
    let stem = rel
        .rsplit('/')
        .next()
        .unwrap_or(rel)
        .trim_end_matches(".md")
        .trim_end_matches(".MD")
        .to_owned();
    let fallback = |body: &str| Note {
        title: stem.clone(),
        tags: Vec::new(),
        body: body.to_owned(),
    };
    let doc = match skill_format::split(text) {
        Ok(d) => d,
        Err(e) => {
            warnings.push(format!(
                "{rel}: frontmatter opened on line {} is never closed; indexed as plain text",
                e.line
            ));
            return fallback(text);
        }
    };
    let Some(fm) = doc.frontmatter else {
        return fallback(doc.body);
    };
    let root = match yaml::parse(fm.text) {
        Ok(p) => p.root,
        Err(e) => {
            warnings.push(format!(
                "{rel}: frontmatter is not valid YAML ({}); title and tags ignored",
                e.message
            ));
            return fallback(doc.body);
        }
    };
    let title = root
        .get("title")
        .and_then(Node::as_scalar)
        .map(str::trim)
        .filter(|t| !t.is_empty())
        .map(str::to_owned)
        .unwrap_or(stem.clone());
    let tags = match root.get("tags") {
        Some(Node::Seq(items)) => items
            .iter()
            .filter_map(Node::as_scalar)
            .map(|s| s.trim().trim_start_matches('#').to_owned())
            .filter(|s| !s.is_empty())
            .collect(),
        Some(n) => n
            .as_scalar()
            .map(|s| {
                s.split([',', ' '])
                    .map(|t| t.trim().trim_start_matches('#').to_owned())
                    .filter(|t| !t.is_empty())
                    .collect()
            })
            .unwrap_or_default(),
        None => Vec::new(),
    };
    Note {
        title,
        tags,
        body: doc.body.to_owned(),
    }
}

#[cfg(test)]
#[path = "notes_tests.rs"]
mod tests;
