//! The skill index: one tantivy document per loaded skill, plus the in-memory facts
//! (per-field term frequencies, limit clauses, compiled triggers, name table) that rank and
//! explain each match (see `rank`).

mod build;
mod dense;
mod multi;
mod rank;
mod segments;
mod terms;
#[cfg(test)]
#[allow(clippy::unwrap_used)]
mod test_support;

use std::collections::HashMap;
use std::sync::{Arc, Mutex, RwLock};

use skill_format::Diagnostic;
use skill_registry::{ChangeSet, Skill, Snapshot};
#[cfg(feature = "disk")]
use tantivy::schema::Schema;
use tantivy::tokenizer::TextAnalyzer;
use tantivy::{Index, IndexReader, IndexWriter, ReloadPolicy, Term};

use crate::Error;
use crate::doc::{DocInfo, Fields, Terms};
use crate::embed::StaticEmbedder;
use crate::params::{FIELDS, Params};
use crate::text;
use crate::triggers::{KeyMap, TriggerIndex};
use crate::typo_table::TypoTable;
#[cfg_attr(not(feature = "tuning"), allow(unused_imports))]
pub use rank::Gate;
use rank::passes;

/// Most results one search returns.
pub const MAX_LIMIT: usize = 1_000;
/// Results a search returns when the request does not say ([`SearchRequest::default`]).
pub const DEFAULT_LIMIT: usize = 10;
/// Memory of the index writer, in bytes (tantivy's minimum is 15 MB).
pub const WRITER_MEMORY_BYTES: usize = 20_000_000;

/// Where the index lives.
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub enum Storage {
    /// In memory (the default).
    #[default]
    Ram,
    /// In a folder, memory-mapped (crate feature `disk`): the index files live in its
    /// subfolder [`DISK_INDEX_DIR`], which is the only thing ever cleared (when it holds
    /// an index that cannot be opened, e.g. of another schema version) and is rebuilt from
    /// the snapshot when the index is built. Nothing else in the folder is touched.
    #[cfg(feature = "disk")]
    Disk(std::path::PathBuf),
}

/// Query-time filters.
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub struct Filter {
    /// The processing profile: skills excluded for it (`exclude_from_prompt_profile_ids`)
    /// are left out.
    pub profile: Option<String>,
    /// Leave out skills the model may not invoke (`disable-model-invocation: true`).
    pub model_invocable_only: bool,
}

/// What to search for.
#[derive(Debug, Clone)]
pub struct SearchRequest<'a> {
    /// The request text (cut to [`crate::MAX_QUERY_BYTES`]).
    pub text: &'a str,
    /// Earlier turns of the conversation, oldest first; the last four add their terms at
    /// half weight.
    pub recent_turns: &'a [String],
    /// Most results: [`DEFAULT_LIMIT`] by default; 0 is read as 1, more than
    /// [`MAX_LIMIT`] as [`MAX_LIMIT`].
    pub limit: usize,
    /// Filters.
    pub filter: Filter,
}

impl Default for SearchRequest<'_> {
    /// No text, no turns, [`DEFAULT_LIMIT`] results, no filter.
    fn default() -> Self {
        SearchRequest {
            text: "",
            recent_turns: &[],
            limit: DEFAULT_LIMIT,
            filter: Filter::default(),
        }
    }
}

/// One ranked skill, with why it matched.
#[derive(Debug)]
pub(crate) struct State {
    snapshot: Arc<Snapshot>,
    pub(crate) docs: KeyMap<DocInfo>,
    pub(crate) by_name: HashMap<String, u64>,
    next_key: u64,
    pub(crate) terms: Terms,
    /// Tokens in each text field, summed over the skills (for average field lengths).
    pub(crate) len_sum: [u64; FIELDS],
    pub(crate) triggers: TriggerIndex,
    /// The names' and descriptions' terms for typo matching.
    pub(crate) typos: TypoTable,
    diagnostics: HashMap<String, Vec<Diagnostic>>,
}

/// Recent use reported by the host.
#[derive(Debug, Default)]
pub(crate) struct Uses {
    clock: u64,
    pub(crate) last: HashMap<String, u64>,
}

/// What one incremental update did.
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq)]
pub struct UpdateStats {
    /// Documents added or replaced.
    pub upserted: usize,
    /// Documents removed (including skills that stopped loading).
    pub removed: usize,
}

/// The skill index. Cheap to query from many threads; updates take an internal lock.
pub struct SkillIndex {
    index: Index,
    pub(crate) reader: IndexReader,
    writer: Mutex<IndexWriter>,
    pub(crate) fields: Fields,
    pub(crate) state: RwLock<State>,
    pub(crate) uses: Mutex<Uses>,
    /// [`SkillIndex::eligible_counts`] without a profile, by `model_invocable_only`, until
    /// the next update (a selection that picks nothing needs it, and counting reads every
    /// skill).
    counts: Mutex<[Option<(usize, usize)>; 2]>,
    pub(crate) english: TextAnalyzer,
    pub(crate) stems: TextAnalyzer,
    /// The semantic signal.
    pub(crate) embedder: &'static StaticEmbedder,
    /// The full sentence-embedding model, when the host gave one.
    #[cfg(feature = "transformer")]
    transformer: Option<std::sync::Arc<crate::Transformer>>,
}

impl std::fmt::Debug for SkillIndex {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("SkillIndex")
            .field("skills", &self.len())
            .finish_non_exhaustive()
    }
}

impl SkillIndex {
    /// Index every loaded skill of `snapshot`, in memory.
    ///
    /// ```
    /// use skill_registry::{Registry, RegistryConfig, Source};
    /// use skill_search::SkillIndex;
    ///
    /// let dir = tempfile::tempdir()?;
    /// std::fs::create_dir(dir.path().join("git-commit"))?;
    /// std::fs::write(
    ///     dir.path().join("git-commit/SKILL.md"),
    ///     "---\nname: git-commit\ndescription: Write commit messages from staged changes.\n---\n# Commit\n",
    /// )?;
    /// let registry = Registry::load(RegistryConfig::with_sources(vec![Source::new(dir.path(), "user")]));
    /// let index = SkillIndex::build(registry.snapshot())?;
    /// assert_eq!(index.len(), 1);
    /// assert!(index.diagnostics().is_empty());
    /// # Ok::<(), Box<dyn std::error::Error>>(())
    /// ```
    pub fn build(snapshot: Arc<Snapshot>) -> Result<Self, Error> {
        Self::build_in(snapshot, Storage::Ram)
    }

    /// Index every loaded skill of `snapshot` into `storage`.
    pub fn build_in(snapshot: Arc<Snapshot>, storage: Storage) -> Result<Self, Error> {
        Self::build_with(snapshot, storage, None)
    }

    /// [`SkillIndex::build_in`], committing after every `commit_every` documents when
    /// given (tests use it to build many segments from few skills).
    fn build_with(
        snapshot: Arc<Snapshot>,
        storage: Storage,
        commit_every: Option<usize>,
    ) -> Result<Self, Error> {
        let (schema, fields) = Fields::schema();
        let index = match storage {
            Storage::Ram => Index::create_in_ram(schema),
            #[cfg(feature = "disk")]
            Storage::Disk(path) => open_disk(&path, schema)?,
        };
        text::register(&index);
        let writer = segments::writer(&index)?;
        writer.delete_all_documents()?;
        let reader = index
            .reader_builder()
            .reload_policy(ReloadPolicy::Manual)
            .try_into()?;
        let this = SkillIndex {
            index,
            reader,
            writer: Mutex::new(writer),
            fields,
            state: RwLock::new(State {
                snapshot: snapshot.clone(),
                docs: KeyMap::default(),
                by_name: HashMap::new(),
                next_key: 0,
                terms: Terms::default(),
                len_sum: [0; FIELDS],
                triggers: TriggerIndex::default(),
                typos: TypoTable::default(),
                diagnostics: HashMap::new(),
            }),
            uses: Mutex::new(Uses::default()),
            counts: Mutex::new([None; 2]),
            english: text::english(),
            stems: text::stems_analyzer(),
            embedder: StaticEmbedder::bundled()?,
            #[cfg(feature = "transformer")]
            transformer: None,
        };
        let names: Vec<String> = snapshot.skills().map(|s| s.name.clone()).collect();
        this.upsert(&snapshot, &names, &[], true, commit_every)?;
        Ok(this)
    }

    /// Follow a registry reload: re-index the added and changed skills, drop the removed
    /// ones (and those that no longer load). Other documents are not touched.
    pub fn apply(&self, change: &ChangeSet) -> Result<UpdateStats, Error> {
        let touched: Vec<String> = change
            .added
            .iter()
            .chain(&change.changed)
            .cloned()
            .collect();
        self.upsert(&change.snapshot, &touched, &change.removed, false, None)
    }

    /// Throw everything away and index `snapshot` again.
    pub fn rebuild(&self, snapshot: Arc<Snapshot>) -> Result<UpdateStats, Error> {
        let old: Vec<String> = {
            let st = self.state.read().map_err(|_| Error::Poisoned)?;
            st.by_name.keys().cloned().collect()
        };
        let names: Vec<String> = snapshot.skills().map(|s| s.name.clone()).collect();
        let gone: Vec<String> = old
            .into_iter()
            .filter(|n| snapshot.get(n).is_none())
            .collect();
        self.upsert(&snapshot, &names, &gone, true, None)
    }

    fn upsert(
        &self,
        snapshot: &Arc<Snapshot>,
        names: &[String],
        removed: &[String],
        compact: bool,
        commit_every: Option<usize>,
    ) -> Result<UpdateStats, Error> {
        let mut writer = self.writer.lock().map_err(|_| Error::Poisoned)?;
        let mut st = self.state.write().map_err(|_| Error::Poisoned)?;
        let mut stats = UpdateStats::default();
        let mut dropped = std::collections::HashSet::new();
        for name in removed.iter().chain(names) {
            if let Some(key) = st.by_name.remove(name) {
                dropped.insert(name.clone());
                writer.delete_term(Term::from_field_text(self.fields.id, name));
                if let Some(info) = st.docs.remove(&key) {
                    st.terms.adjust(info.terms.ids(), false);
                    let State { typos, terms, .. } = &mut *st;
                    typos.adjust(&info, terms, false);
                    for f in 0..FIELDS {
                        st.len_sum[f] = st.len_sum[f].saturating_sub(u64::from(info.len[f]));
                    }
                    st.triggers.remove(key, &info.triggers);
                }
                st.diagnostics.remove(name);
                if removed.contains(name) {
                    stats.removed += 1;
                }
            }
        }
        let mut skills = Vec::with_capacity(names.len());
        for name in names {
            match snapshot.get(name) {
                Some(skill) => skills.push((name.as_str(), skill)),
                None if dropped.contains(name) && !removed.contains(name) => stats.removed += 1,
                None => {}
            }
        }
        let analyser = build::Analyser {
            fields: &self.fields,
            english: &text::english_indexing(),
            stems: &self.stems,
            embedder: self.embedder,
        };
        let first_key = st.next_key;
        st.next_key += skills.len() as u64;
        let State {
            docs,
            by_name,
            terms,
            len_sum,
            triggers,
            typos,
            diagnostics: all_diagnostics,
            ..
        } = &mut *st;
        build::analyse_in_order(&analyser, &skills, first_key, |name, analysed, global| {
            let (key, doc, info, diagnostics) = analysed.finish(global, terms);
            writer.add_document(doc)?;
            if commit_every.is_some_and(|n| n > 0 && (stats.upserted + 1) % n == 0) {
                writer.commit()?;
            }
            terms.adjust(info.terms.ids(), true);
            typos.adjust(&info, terms, true);
            for (sum, len) in len_sum.iter_mut().zip(info.len) {
                *sum = sum.saturating_add(u64::from(len));
            }
            triggers.insert(key, &info.triggers);
            if !diagnostics.is_empty() {
                all_diagnostics.insert(name.to_owned(), diagnostics);
            }
            by_name.insert(name.to_owned(), key);
            docs.insert(key, info);
            stats.upserted += 1;
            Ok::<(), Error>(())
        })?;
        st.triggers.finish();
        if let Ok(mut c) = self.counts.lock() {
            *c = [None; 2];
        }
        st.snapshot = snapshot.clone();
        writer.commit()?;
        if compact {
            segments::compact(&self.index, &mut writer)?;
        } else {
            segments::tidy(&self.index, &mut writer)?;
        }
        self.reader.reload()?;
        Ok(stats)
    }

    /// Bytes of the tantivy index (postings, positions, fast fields, norms), as its
    /// segments report them; the in-memory side tables (term sets, triggers) come on top.
    pub fn index_bytes(&self) -> u64 {
        self.reader
            .searcher()
            .space_usage()
            .map(|u| u.total().get_bytes())
            .unwrap_or(0)
    }

    /// Number of indexed skills.
    pub fn len(&self) -> usize {
        self.state.read().map(|s| s.docs.len()).unwrap_or(0)
    }

    /// Whether no skill is indexed.
    pub fn is_empty(&self) -> bool {
        self.len() == 0
    }

    /// The snapshot the index reflects.
    pub fn snapshot(&self) -> Option<Arc<Snapshot>> {
        self.state.read().ok().map(|s| s.snapshot.clone())
    }

    /// Diagnostics found while indexing (trigger patterns that do not compile, or past the
    /// index's budget of compiled patterns), by path.
    pub fn diagnostics(&self) -> Vec<Diagnostic> {
        let Ok(st) = self.state.read() else {
            return Vec::new();
        };
        let mut out: Vec<Diagnostic> = st.diagnostics.values().flatten().cloned().collect();
        out.extend(st.triggers.diagnostics().cloned());
        out.sort_by(|a, b| a.path.cmp(&b.path).then(a.message.cmp(&b.message)));
        out
    }

    /// Record that the host used a skill; recent use breaks ties in ranking.
    pub fn record_use(&self, name: &str) {
        if let Ok(mut u) = self.uses.lock() {
            u.clock += 1;
            let now = u.clock;
            u.last.insert(name.to_owned(), now);
        }
    }

    /// Skills that pass `filter`, counted; and how many of those declare triggers.
    pub(crate) fn eligible_counts(&self, filter: &Filter) -> (usize, usize) {
        let Ok(st) = self.state.read() else {
            return (0, 0);
        };
        let slot = filter
            .profile
            .is_none()
            .then_some(usize::from(filter.model_invocable_only));
        let cached =
            |c: &[Option<(usize, usize)>; 2]| slot.and_then(|i| c.get(i).copied().flatten());
        if let Some(c) = self.counts.lock().ok().as_deref().and_then(cached) {
            return c;
        }
        let mut n = 0;
        let mut with_triggers = 0;
        for info in st.docs.values() {
            if passes(info, filter) {
                n += 1;
                if !info.triggers.is_empty() {
                    with_triggers += 1;
                }
            }
        }
        // Stored while the read lock is held, so an update (which takes the write lock and
        // clears the cache) cannot slip in between.
        if let (Some(i), Ok(mut c)) = (slot, self.counts.lock()) {
            if let Some(entry) = c.get_mut(i) {
                *entry = Some((n, with_triggers));
            }
        }
        drop(st);
        (n, with_triggers)
    }

    /// Eligible skills (after `filter`), sorted by name.
    pub(crate) fn eligible(&self, filter: &Filter) -> Vec<Arc<Skill>> {
        let Ok(st) = self.state.read() else {
            return Vec::new();
        };
        let mut out: Vec<Arc<Skill>> = st
            .docs
            .values()
            .filter(|i| passes(i, filter))
            .map(|i| i.skill.clone())
            .collect();
        out.sort_by(|a, b| a.name.cmp(&b.name));
        out
    }

    /// The parameters ranking uses: [`Params::SHIPPED`], or with a sentence-embedding
    /// model, [`Params::TRANSFORMER`].
    pub(crate) fn params(&self) -> &'static Params {
        #[cfg(feature = "transformer")]
        if self.transformer.is_some() {
            return &Params::TRANSFORMER;
        }
        &Params::SHIPPED
    }

    /// The index with a full sentence-embedding model (crate feature `transformer`): from
    /// now on the no-skill gate also reads how close the model puts the request and the
    /// first candidate's description, with gate weights fitted for it. It costs a model run
    /// for each new request (about 17 ms at the median on the 2-core machine the figures
    /// come from), run before the index is locked, and one for each description ranked
    /// first, the first time.
    ///
    /// ```no_run
    /// # fn main() -> Result<(), skill_search::Error> {
    /// # let snapshot = skill_registry::Registry::load(skill_registry::RegistryConfig::with_sources(vec![])).snapshot();
    /// use std::sync::Arc;
    /// use skill_search::{SkillIndex, Transformer};
    ///
    /// let model = Arc::new(Transformer::load("/opt/models/all-MiniLM-L6-v2")?);
    /// let index = SkillIndex::build(snapshot)?.with_transformer(model);
    /// # Ok(()) }
    /// ```
    #[cfg(feature = "transformer")]
    pub fn with_transformer(mut self, model: std::sync::Arc<crate::Transformer>) -> Self {
        self.transformer = Some(model);
        self
    }

    /// Runs the sentence-embedding model on `message` (cached for the ranking that
    /// follows), when the index has one.
    pub(crate) fn embed_request(&self, message: &str) -> Result<(), Error> {
        #[cfg(feature = "transformer")]
        if let Some(t) = &self.transformer {
            t.embed(message)?;
        }
        let _ = message;
        Ok(())
    }

    /// The full model's similarity of `message` and the candidate's description (its name
    /// when it has none), or `None` without a model.
    pub(crate) fn full_similarity(
        &self,
        message: &str,
        info: &crate::doc::DocInfo,
    ) -> Result<Option<f32>, Error> {
        #[cfg(feature = "transformer")]
        if let Some(t) = &self.transformer {
            let skill = &info.skill;
            let text = if skill.description.trim().is_empty() {
                &skill.name
            } else {
                &skill.description
            };
            return t.similarity(message, text).map(Some);
        }
        let _ = (message, info);
        Ok(None)
    }
}

/// The subfolder of a `Storage::Disk` folder (crate feature `disk`) that holds the index
/// files.
pub const DISK_INDEX_DIR: &str = "skill-index";

#[cfg(feature = "disk")]
fn open_disk(folder: &std::path::Path, schema: Schema) -> Result<Index, Error> {
    // Only our own subfolder is ever removed, never the folder the caller named.
    let path = &folder.join(DISK_INDEX_DIR);
    let dir_err = |e: &dyn std::fmt::Display| Error::Directory {
        path: path.to_path_buf(),
        message: e.to_string(),
    };
    std::fs::create_dir_all(path).map_err(|e| dir_err(&e))?;
    let dir = tantivy::directory::MmapDirectory::open(path).map_err(|e| dir_err(&e))?;
    match Index::open_or_create(dir, schema.clone()) {
        Ok(i) => Ok(i),
        Err(_) => {
            // A folder from another schema version: start it again.
            std::fs::remove_dir_all(path).map_err(|e| dir_err(&e))?;
            std::fs::create_dir_all(path).map_err(|e| dir_err(&e))?;
            let dir = tantivy::directory::MmapDirectory::open(path).map_err(|e| dir_err(&e))?;
            Ok(Index::open_or_create(dir, schema)?)
        }
    }
}
