//! The skill index: one tantivy document per loaded skill, plus the in-memory facts
//! (term sets, compiled triggers, name table) that explain and calibrate each match.

use std::cmp::Ordering;
use std::collections::HashMap;
use std::sync::{Arc, Mutex, RwLock};

use serde::Serialize;
use skill_format::Diagnostic;
use skill_registry::{Affinity, ChangeSet, Skill, Snapshot};
use tantivy::collector::TopDocs;
use tantivy::query::{BooleanQuery, BoostQuery, Occur, Query, TermQuery};
use tantivy::schema::{FAST, Field, IndexRecordOption, Schema, TextFieldIndexing, TextOptions};
use tantivy::tokenizer::TextAnalyzer;
use tantivy::{Index, IndexReader, IndexWriter, ReloadPolicy, TantivyDocument, Term};

use crate::Error;
use crate::score::{self, Evidence, TextFeatures, TextModel};
use crate::text::{self, ENGLISH, EXACT, MAX_QUERY_TERMS, clip, name_tokens, words};
use crate::triggers::{Compiled, KeyMap, Matched, Probe, TriggerHit, TriggerIndex, word_hash};

/// Boost of the name field (the strongest).
pub const BOOST_NAME: f32 = 6.0;
/// Boost of the exact-name field (a request word equal to a skill's whole name).
pub const BOOST_NAME_EXACT: f32 = 10.0;
/// Boost of trigger keywords and verbs.
pub const BOOST_TRIGGERS: f32 = 3.0;
/// Boost of tags.
pub const BOOST_TAGS: f32 = 2.5;
/// Boost of description, summary and brief description.
pub const BOOST_DESCRIPTION: f32 = 2.0;
/// Boost of the actions domain.
pub const BOOST_DOMAIN: f32 = 1.5;
/// Boost of the body (the weakest).
pub const BOOST_BODY: f32 = 0.5;
/// Weight of a term that only appears in recent turns, relative to the request's own.
pub const TURN_WEIGHT: f32 = 0.5;
/// Most recent turns read from a selection request (the last ones).
pub const MAX_TURNS: usize = 4;
/// Text candidates fetched from tantivy before re-ranking (at least; more when the limit
/// asks for more).
pub const MIN_CANDIDATES: usize = 40;
/// Most results one search returns.
pub const MAX_LIMIT: usize = 1_000;
/// Results a search returns when the request does not say ([`SearchRequest::default`]).
pub const DEFAULT_LIMIT: usize = 10;
/// A single-word skill name counts as an explicit mention without a sigil (`/x`, `$x`,
/// `@x`, `` `x` ``) or the word "skill" next to it only when at most this many skills use
/// the word.
pub const RARE_NAME_DOCS: u32 = 2;
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
    /// Earlier turns of the conversation, oldest first; the last [`MAX_TURNS`] add their
    /// terms at [`TURN_WEIGHT`].
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
#[derive(Debug, Clone, Serialize)]
pub struct Match {
    /// The skill's name.
    pub name: String,
    /// Its description.
    pub description: String,
    /// Its layer.
    pub layer: String,
    /// Calibrated confidence in [0, 1] that the skill fits the request (see the crate docs).
    pub confidence: f32,
    /// The request names the skill explicitly.
    pub explicit: bool,
    /// A multi-word phrase of the skill (its name's words, a trigger keyword, a tag) that
    /// the request contains word for word.
    pub phrase: Option<String>,
    /// Triggers that matched.
    pub triggers: Vec<TriggerHit>,
    /// Request words found in the skill's name, description, tags, triggers or domain.
    pub matched_terms: Vec<String>,
    /// Request words found only in the skill's body.
    pub body_terms: Vec<String>,
    /// Words of the earlier turns (not of the request itself) found in the skill's
    /// metadata or body: the evidence when a follow-up such as "do the same for the other
    /// one" selects a skill. Left out of the JSON when empty.
    #[serde(skip_serializing_if = "Vec::is_empty")]
    pub turn_terms: Vec<String>,
    /// The share of the request's weighted terms the skill covers (body terms count at
    /// [`score::BODY_COVERAGE_WEIGHT`]).
    pub coverage: f32,
    /// The idf-weighted mass of the request terms the skill matched (body terms at
    /// [`score::BODY_COVERAGE_WEIGHT`]): how much evidence, where `coverage` is what share.
    pub matched_weight: f32,
    /// The idf-weighted mass of the request terms found in the skill's name.
    pub name_weight: f32,
    /// The tantivy BM25 score with field boosts (0 when the skill came from triggers or
    /// its name alone).
    pub text_score: f32,
    /// When the host last reported a use (a logical clock; higher is more recent).
    pub last_used: Option<u64>,
    /// A one-line explanation naming the trigger, name or terms that matched.
    pub reason: String,
    /// What the text model measured (see the crate docs); not serialised.
    #[serde(skip)]
    pub text_features: TextFeatures,
}

#[derive(Debug, Clone, Copy)]
struct Fields {
    id: Field,
    key: Field,
    name: Field,
    name_exact: Field,
    description: Field,
    tags: Field,
    triggers: Field,
    domain: Field,
    body: Field,
}

impl Fields {
    fn schema() -> (Schema, Fields) {
        let mut b = Schema::builder();
        // Frequencies without positions: ranking uses BM25 over terms, and phrases are
        // checked on the candidates' own words, so positions would only cost build time.
        let english = TextOptions::default().set_indexing_options(
            TextFieldIndexing::default()
                .set_tokenizer(ENGLISH)
                .set_index_option(IndexRecordOption::WithFreqs),
        );
        let exact = TextOptions::default().set_indexing_options(
            TextFieldIndexing::default()
                .set_tokenizer(EXACT)
                .set_index_option(IndexRecordOption::Basic),
        );
        let raw_id = TextOptions::default().set_indexing_options(
            TextFieldIndexing::default()
                .set_tokenizer("raw")
                .set_index_option(IndexRecordOption::Basic),
        );
        let id = b.add_text_field("id", raw_id);
        let key = b.add_u64_field("key", FAST);
        let name = b.add_text_field("name", english.clone());
        let name_exact = b.add_text_field("name_exact", exact);
        let description = b.add_text_field("description", english.clone());
        let tags = b.add_text_field("tags", english.clone());
        let triggers = b.add_text_field("triggers", english.clone());
        let domain = b.add_text_field("domain", english.clone());
        let body = b.add_text_field("body", english);
        let schema = b.build();
        (
            schema,
            Fields {
                id,
                key,
                name,
                name_exact,
                description,
                tags,
                triggers,
                domain,
                body,
            },
        )
    }

    fn boosted(&self) -> [(Field, f32); 6] {
        [
            (self.name, BOOST_NAME),
            (self.description, BOOST_DESCRIPTION),
            (self.tags, BOOST_TAGS),
            (self.triggers, BOOST_TRIGGERS),
            (self.domain, BOOST_DOMAIN),
            (self.body, BOOST_BODY),
        ]
    }
}

/// A skill's facts kept beside its tantivy document.
#[derive(Debug)]
struct DocInfo {
    skill: Arc<Skill>,
    meta_terms: Vec<u32>,
    name_terms: Vec<u32>,
    body_terms: Vec<u32>,
    triggers: Compiled,
    phrases: Vec<(String, Vec<String>)>,
    /// The phrases' words as [`word_hash`]es, in one block: for each phrase its length,
    /// then its hashes. Phrases are checked for every candidate, and this is one read.
    phrase_runs: Vec<u64>,
    name_term: Option<u32>,
    single_word_name: bool,
    /// `skill.model_invocable()`, kept here so that filtering does not read the skill.
    model_invocable: bool,
    /// The skill lists profiles it is excluded from.
    excludes_profiles: bool,
    /// The first bytes of the name, zero-padded ([`name_key`]).
    name_key: NameKey,
}

/// The first 16 bytes of a name, zero-padded: comparing two of them orders two names as
/// comparing the names does, except when they are equal (then compare the names).
type NameKey = [u8; 16];

fn name_key(name: &str) -> NameKey {
    let mut key = [0u8; 16];
    for (k, b) in key.iter_mut().zip(name.bytes()) {
        *k = b;
    }
    key
}

/// Term ids and document frequencies over the metadata and bodies of indexed skills.
#[derive(Debug, Default)]
struct Terms {
    ids: HashMap<String, u32>,
    df: Vec<u32>,
}

impl Terms {
    fn intern(&mut self, t: &str) -> u32 {
        if let Some(&id) = self.ids.get(t) {
            return id;
        }
        let id = self.df.len() as u32;
        self.ids.insert(t.to_owned(), id);
        self.df.push(0);
        id
    }

    fn get(&self, t: &str) -> Option<u32> {
        self.ids.get(t).copied()
    }

    fn df(&self, id: u32) -> u32 {
        self.df.get(id as usize).copied().unwrap_or(0)
    }

    fn adjust(&mut self, ids: &[u32], up: bool) {
        for &id in ids {
            if let Some(d) = self.df.get_mut(id as usize) {
                *d = if up {
                    d.saturating_add(1)
                } else {
                    d.saturating_sub(1)
                };
            }
        }
    }
}

#[derive(Debug)]
struct State {
    snapshot: Arc<Snapshot>,
    docs: KeyMap<DocInfo>,
    by_name: HashMap<String, u64>,
    next_key: u64,
    terms: Terms,
    triggers: TriggerIndex,
    diagnostics: HashMap<String, Vec<Diagnostic>>,
}

#[derive(Debug, Default)]
struct Uses {
    clock: u64,
    last: HashMap<String, u64>,
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
    reader: IndexReader,
    writer: Mutex<IndexWriter>,
    fields: Fields,
    state: RwLock<State>,
    uses: Mutex<Uses>,
    /// [`SkillIndex::eligible_counts`] without a profile, by `model_invocable_only`, until
    /// the next update (a selection that picks nothing needs it, and counting reads every
    /// skill).
    counts: Mutex<[Option<(usize, usize)>; 2]>,
    english: TextAnalyzer,
    stems: TextAnalyzer,
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
        let (schema, fields) = Fields::schema();
        let index = match storage {
            Storage::Ram => Index::create_in_ram(schema),
            #[cfg(feature = "disk")]
            Storage::Disk(path) => open_disk(&path, schema)?,
        };
        text::register(&index);
        let writer = index.writer_with_num_threads(1, WRITER_MEMORY_BYTES)?;
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
                triggers: TriggerIndex::default(),
                diagnostics: HashMap::new(),
            }),
            uses: Mutex::new(Uses::default()),
            counts: Mutex::new([None; 2]),
            english: text::english(),
            stems: text::stems_analyzer(),
        };
        let names: Vec<String> = snapshot.skills().map(|s| s.name.clone()).collect();
        this.upsert(&snapshot, &names, &[], true)?;
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
        self.upsert(&change.snapshot, &touched, &change.removed, false)
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
        self.upsert(&snapshot, &names, &gone, true)
    }

    fn upsert(
        &self,
        snapshot: &Arc<Snapshot>,
        names: &[String],
        removed: &[String],
        compact: bool,
    ) -> Result<UpdateStats, Error> {
        let mut writer = self.writer.lock().map_err(|_| Error::Poisoned)?;
        let mut st = self.state.write().map_err(|_| Error::Poisoned)?;
        let mut stats = UpdateStats::default();
        let mut english = self.english.clone();
        let mut stems = self.stems.clone();
        let mut dropped = std::collections::HashSet::new();
        for name in removed.iter().chain(names) {
            if let Some(key) = st.by_name.remove(name) {
                dropped.insert(name.clone());
                writer.delete_term(Term::from_field_text(self.fields.id, name));
                if let Some(info) = st.docs.remove(&key) {
                    st.terms.adjust(&info.meta_terms, false);
                    st.terms.adjust(&info.body_terms, false);
                    st.triggers.remove(key, &info.triggers);
                }
                st.diagnostics.remove(name);
                if removed.contains(name) {
                    stats.removed += 1;
                }
            }
        }
        for name in names {
            let Some(skill) = snapshot.get(name) else {
                if dropped.contains(name) && !removed.contains(name) {
                    stats.removed += 1;
                }
                continue;
            };
            let key = st.next_key;
            st.next_key += 1;
            let (doc, info, diagnostics) =
                self.document(skill, key, &mut st.terms, &mut english, &mut stems);
            writer.add_document(doc)?;
            st.terms.adjust(&info.meta_terms, true);
            st.terms.adjust(&info.body_terms, true);
            st.triggers.insert(key, &info.triggers);
            if !diagnostics.is_empty() {
                st.diagnostics.insert(name.clone(), diagnostics);
            }
            st.by_name.insert(name.clone(), key);
            st.docs.insert(key, info);
            stats.upserted += 1;
        }
        st.triggers.finish();
        if let Ok(mut c) = self.counts.lock() {
            *c = [None; 2];
        }
        st.snapshot = snapshot.clone();
        writer.commit()?;
        if compact {
            // One segment after a (re)build: faster queries, and no merge left running in
            // the background to compete with them.
            let ids = self.index.searchable_segment_ids()?;
            if ids.len() > 1 {
                writer.merge(&ids).wait()?;
            }
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

    fn document(
        &self,
        skill: &Arc<Skill>,
        key: u64,
        terms: &mut Terms,
        english: &mut TextAnalyzer,
        stems: &mut TextAnalyzer,
    ) -> (TantivyDocument, DocInfo, Vec<Diagnostic>) {
        let f = &self.fields;
        let m = &skill.manifest;
        let mut doc = TantivyDocument::default();
        doc.add_text(f.id, &skill.name);
        doc.add_u64(f.key, key);
        let name_words = skill.name.replace(['-', '_', '.', ':'], " ");
        doc.add_text(f.name, &name_words);
        doc.add_text(f.name_exact, &skill.name);
        let mut described = vec![skill.description.as_str()];
        described.extend(m.summary.as_deref());
        described.extend(m.brief_description.as_deref());
        for d in &described {
            doc.add_text(f.description, d);
        }
        for t in &m.tags {
            doc.add_text(f.tags, t);
        }
        for t in m.triggers.keywords.iter().chain(&m.triggers.verbs) {
            doc.add_text(f.triggers, t);
        }
        if let Some(d) = &skill.domain {
            doc.add_text(f.domain, d);
        }
        doc.add_text(f.body, &skill.body);

        let mut meta = Vec::new();
        let mut add = |text: &str, out: &mut Vec<u32>, terms: &mut Terms| {
            let mut stream = english.token_stream(text);
            while stream.advance() {
                out.push(terms.intern(&stream.token().text));
            }
        };
        let mut name_ids = Vec::new();
        add(&name_words, &mut name_ids, terms);
        name_ids.sort_unstable();
        name_ids.dedup();
        meta.extend_from_slice(&name_ids);
        for d in &described {
            add(d, &mut meta, terms);
        }
        for t in m
            .tags
            .iter()
            .chain(&m.triggers.keywords)
            .chain(&m.triggers.verbs)
        {
            add(t, &mut meta, terms);
        }
        if let Some(d) = &skill.domain {
            add(d, &mut meta, terms);
        }
        meta.sort_unstable();
        meta.dedup();
        let mut body = Vec::new();
        add(&skill.body, &mut body, terms);
        body.sort_unstable();
        body.dedup();
        body.retain(|t| meta.binary_search(t).is_err());

        let name_parts = words(&skill.name);
        let single_word_name = name_parts.len() == 1;
        let name_term = if single_word_name {
            text::tokens(english, &skill.name)
                .first()
                .and_then(|t| terms.get(t))
        } else {
            None
        };
        let mut phrases = Vec::new();
        if name_parts.len() > 1 {
            phrases.push((name_words.clone(), name_parts));
        }
        for p in m.triggers.keywords.iter().chain(&m.tags) {
            let w = words(p);
            if w.len() > 1 {
                phrases.push((p.clone(), w));
            }
        }
        let mut phrase_runs = Vec::new();
        for (_, w) in &phrases {
            phrase_runs.push(w.len() as u64);
            phrase_runs.extend(w.iter().map(|w| word_hash(w)));
        }
        let (triggers, diagnostics) = Compiled::new(&m.triggers, &skill.path, stems);
        (
            doc,
            DocInfo {
                skill: skill.clone(),
                meta_terms: meta,
                name_terms: name_ids,
                body_terms: body,
                triggers,
                phrases,
                phrase_runs,
                name_term,
                single_word_name,
                model_invocable: skill.model_invocable(),
                name_key: name_key(&skill.name),
                excludes_profiles: !m.exclude_from_prompt_profile_ids.is_empty(),
            },
            diagnostics,
        )
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

    /// Diagnostics found while indexing (trigger patterns that do not compile), by path.
    pub fn diagnostics(&self) -> Vec<Diagnostic> {
        let Ok(st) = self.state.read() else {
            return Vec::new();
        };
        let mut out: Vec<Diagnostic> = st.diagnostics.values().flatten().cloned().collect();
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

    /// Rank skills for a request: explicit mention of a skill's name first, then an exact
    /// phrase of the skill, then confidence from triggers and text (to 0.01), then recent
    /// use, then the BM25 score, then the name.
    ///
    /// ```
    /// use skill_registry::{Registry, RegistryConfig, Source};
    /// use skill_search::{SearchRequest, SkillIndex};
    ///
    /// let dir = tempfile::tempdir()?;
    /// for (name, description) in [
    ///     ("git-commit", "Write commit messages from staged changes."),
    ///     ("pdf-forms", "Fill in PDF forms and extract their fields."),
    /// ] {
    ///     std::fs::create_dir(dir.path().join(name))?;
    ///     std::fs::write(
    ///         dir.path().join(name).join("SKILL.md"),
    ///         format!("---\nname: {name}\ndescription: {description}\n---\n# {name}\n"),
    ///     )?;
    /// }
    /// let registry = Registry::load(RegistryConfig::with_sources(vec![Source::new(dir.path(), "user")]));
    /// let index = SkillIndex::build(registry.snapshot())?;
    ///
    /// // Query syntax is plain text: `AND`, `:` and the open parenthesis are just words.
    /// let hits = index.search(&SearchRequest {
    ///     text: "message: commit AND (staged changes",
    ///     ..Default::default()
    /// })?;
    /// assert_eq!(hits[0].name, "git-commit");
    /// assert!(hits[0].reason.contains("commit"), "{}", hits[0].reason);
    ///
    /// // Naming a skill puts it first, whatever else the request says.
    /// let hits = index.search(&SearchRequest { text: "use /pdf-forms for the commit", ..Default::default() })?;
    /// assert!(hits[0].explicit && hits[0].name == "pdf-forms");
    /// # Ok::<(), Box<dyn std::error::Error>>(())
    /// ```
    pub fn search(&self, req: &SearchRequest<'_>) -> Result<Vec<Match>, Error> {
        self.search_with(req, &TextModel::FITTED)
    }

    /// [`SkillIndex::search`] with another text model (to score weights fitted on part of
    /// a request set on the rest).
    pub(crate) fn search_with(
        &self,
        req: &SearchRequest<'_>,
        model: &TextModel,
    ) -> Result<Vec<Match>, Error> {
        let limit = req.limit.clamp(1, MAX_LIMIT);
        self.candidates(req, limit, model, Some(limit))
    }

    /// The candidates for a request, scored with `model`: the text hits tantivy ranks best
    /// (at least [`MIN_CANDIDATES`], four times `limit`), the skills the request names, and
    /// the skills whose triggers match. With `keep`, the best `keep` of them in ranking
    /// order; without, all of them in no particular order.
    pub(crate) fn candidates(
        &self,
        req: &SearchRequest<'_>,
        limit: usize,
        model: &TextModel,
        keep: Option<usize>,
    ) -> Result<Vec<Match>, Error> {
        let st = self.state.read().map_err(|_| Error::Poisoned)?;
        let message = clip(req.text);
        let mut english = self.english.clone();
        let mut stems = self.stems.clone();

        // Terms of the request (weight 1) and of recent turns (TURN_WEIGHT).
        let mut qterms: Vec<QueryTerm> = Vec::new();
        collect_terms(&mut english, message, 1.0, &mut qterms);
        let turns = req.recent_turns;
        for t in turns.iter().skip(turns.len().saturating_sub(MAX_TURNS)) {
            collect_terms(&mut english, clip(t), TURN_WEIGHT, &mut qterms);
        }

        let mut clauses: Vec<(Occur, Box<dyn Query>)> = Vec::new();
        for q in &qterms {
            for (field, boost) in self.fields.boosted() {
                let term = Term::from_field_text(field, &q.term);
                clauses.push((
                    Occur::Should,
                    Box::new(BoostQuery::new(
                        Box::new(TermQuery::new(term, IndexRecordOption::WithFreqs)),
                        boost * q.weight,
                    )),
                ));
            }
        }
        let tokens = name_tokens(message);
        for tok in exact_names(&tokens, &st.by_name) {
            clauses.push((
                Occur::Should,
                Box::new(BoostQuery::new(
                    Box::new(TermQuery::new(
                        Term::from_field_text(self.fields.name_exact, tok),
                        IndexRecordOption::Basic,
                    )),
                    BOOST_NAME_EXACT,
                )),
            ));
        }

        // Candidates: text hits, explicit names, triggered skills.
        let mut cands: KeyMap<f32> = KeyMap::default();
        if !clauses.is_empty() {
            let searcher = self.reader.searcher();
            let query = BooleanQuery::new(clauses);
            let want = (limit * 4).max(MIN_CANDIDATES);
            let top = searcher.search(&query, &TopDocs::with_limit(want))?;
            for (score, addr) in top {
                let col = searcher
                    .segment_reader(addr.segment_ord)
                    .fast_fields()
                    .u64("key")?;
                if let Some(key) = col.first(addr.doc_id) {
                    cands.insert(key, score);
                }
            }
        }
        let mut explicit: KeyMap<bool> = KeyMap::default();
        for (i, (tok, sigil)) in tokens.iter().enumerate() {
            let Some(&key) = st.by_name.get(tok) else {
                continue;
            };
            let Some(info) = st.docs.get(&key) else {
                continue;
            };
            let near_skill = |j: Option<usize>| {
                j.and_then(|j| tokens.get(j))
                    .is_some_and(|(w, _)| w == "skill" || w == "skills")
            };
            let rare = info
                .name_term
                .is_some_and(|t| st.terms.df(t) <= RARE_NAME_DOCS);
            let is_explicit = !info.single_word_name
                || *sigil
                || near_skill(i.checked_sub(1))
                || near_skill(Some(i + 1))
                || rare;
            if is_explicit {
                explicit.insert(key, true);
                cands.entry(key).or_insert(0.0);
            }
        }
        let probe = Probe::new(message, &mut stems);
        let triggered = st.triggers.matches(&probe);
        for key in triggered.keys() {
            cands.entry(key).or_insert(0.0);
        }

        // Weighted idf of every query term.
        let n_docs = st.docs.len() as f32;
        let weighted: Vec<(Option<u32>, f32, &QueryTerm)> = qterms
            .iter()
            .map(|q| {
                let id = st.terms.get(&q.term);
                let df = id.map_or(0, |i| st.terms.df(i));
                let (w, idf) = score::term_weight(q.weight, df, n_docs);
                (id.filter(|_| df > 0), w * idf, q)
            })
            .collect();
        let total: f32 = weighted.iter().map(|(_, w, _)| w).sum();

        // Only text hits have a score above 0, so only they can be the best.
        let best_text = cands
            .iter()
            .filter(|(k, s)| **s > 0.0 && st.docs.get(k).is_some_and(|i| passes(i, &req.filter)))
            .map(|(_, s)| *s)
            .fold(0.0f32, f32::max);
        let uses = self.uses.lock().map_err(|_| Error::Poisoned)?;
        let unit_idf = score::idf(1, n_docs.max(1.0));
        // First score every candidate without building its strings; then keep the best
        // (when asked) and build the full match, reason and all, only for those.
        let mut scored: Vec<Scored<'_>> = Vec::with_capacity(cands.len());
        for (key, text_score) in cands {
            let Some(info) = st.docs.get(&key) else {
                continue;
            };
            if !passes(info, &req.filter) {
                continue;
            }
            let mut meta_w = 0.0;
            let mut name_w = 0.0;
            let mut body_w = 0.0;
            for (id, w, _) in &weighted {
                let Some(id) = id else { continue };
                if info.meta_terms.binary_search(id).is_ok() {
                    meta_w += w;
                    if info.name_terms.binary_search(id).is_ok() {
                        name_w += w;
                    }
                } else if info.body_terms.binary_search(id).is_ok() {
                    body_w += w;
                }
            }
            let phrase = find_phrase(info, &probe).map(|(p, _)| p.as_str());
            let triggers = triggered.get(key);
            let ev = Evidence {
                explicit: explicit.contains_key(&key),
                phrase: phrase.is_some(),
                triggers: triggers.map(|m| m.counts()).unwrap_or_default(),
                meta_weight: meta_w,
                name_weight: name_w,
                body_weight: body_w,
                total_weight: total,
                unit_idf,
                relative_text_score: if best_text > 0.0 {
                    text_score / best_text
                } else {
                    0.0
                },
            };
            let (coverage, confidence) = score::confidence(&ev, model);
            scored.push(Scored {
                info,
                text_score,
                explicit: ev.explicit,
                phrase,
                triggers,
                matched_weight: meta_w + score::BODY_COVERAGE_WEIGHT * body_w,
                name_weight: name_w,
                coverage,
                confidence,
                bucket: (confidence * 100.0).round() as i64,
                text_features: score::features(&ev),
                last_used: if uses.last.is_empty() {
                    None
                } else {
                    uses.last.get(&info.skill.name).copied()
                },
            });
        }
        drop(uses);
        if let Some(n) = keep {
            // The order is total (names are unique), so picking the best `n` first and
            // sorting only those gives the same list as sorting everything.
            let order = scored_cmp;
            if n > 0 && n < scored.len() {
                scored.select_nth_unstable_by(n - 1, order);
            }
            scored.truncate(n);
            scored.sort_by(order);
        }
        let mut out = Vec::with_capacity(scored.len());
        for s in scored {
            let info = s.info;
            let mut matched_terms = Vec::new();
            let mut body_terms = Vec::new();
            let mut turn_terms = Vec::new();
            for (id, _, q) in &weighted {
                let Some(id) = id else { continue };
                let list = if info.meta_terms.binary_search(id).is_ok() {
                    if q.weight >= 1.0 {
                        &mut matched_terms
                    } else {
                        &mut turn_terms
                    }
                } else if info.body_terms.binary_search(id).is_ok() {
                    if q.weight >= 1.0 {
                        &mut body_terms
                    } else {
                        &mut turn_terms
                    }
                } else {
                    continue;
                };
                push_unique(list, &q.word);
            }
            let mut m = Match {
                name: info.skill.name.clone(),
                description: info.skill.description.clone(),
                layer: info.skill.layer.clone(),
                confidence: s.confidence,
                explicit: s.explicit,
                phrase: s.phrase.map(str::to_owned),
                triggers: s
                    .triggers
                    .map(|m| info.triggers.hit_refs(m))
                    .unwrap_or_default()
                    .into_iter()
                    .map(|(kind, t)| TriggerHit {
                        kind,
                        trigger: t.to_owned(),
                    })
                    .collect(),
                matched_terms,
                body_terms,
                turn_terms,
                coverage: s.coverage,
                matched_weight: s.matched_weight,
                name_weight: s.name_weight,
                text_score: s.text_score,
                last_used: s.last_used,
                reason: String::new(),
                text_features: s.text_features,
            };
            m.reason = score::reason(&m);
            out.push(m);
        }
        Ok(out)
    }
}

/// The subfolder of a [`Storage::Disk`] folder that holds the index files.
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

/// A candidate scored but not yet turned into a [`Match`].
struct Scored<'s> {
    info: &'s DocInfo,
    text_score: f32,
    explicit: bool,
    phrase: Option<&'s str>,
    triggers: Option<Matched<'s>>,
    matched_weight: f32,
    name_weight: f32,
    coverage: f32,
    confidence: f32,
    /// `confidence` to 0.01, as ranking compares it.
    bucket: i64,
    text_features: TextFeatures,
    last_used: Option<u64>,
}

/// The ranking order of [`SkillIndex::search`]: explicit mention, phrase, confidence to
/// 0.01, recent use, BM25 score, name (by its first bytes, kept beside the candidate, and
/// only on a tie by the whole name, which is in the skill, elsewhere in memory).
fn scored_cmp(a: &Scored<'_>, b: &Scored<'_>) -> Ordering {
    b.explicit
        .cmp(&a.explicit)
        .then(b.phrase.is_some().cmp(&a.phrase.is_some()))
        .then(b.bucket.cmp(&a.bucket))
        .then_with(|| b.last_used.cmp(&a.last_used))
        .then_with(|| b.text_score.total_cmp(&a.text_score))
        .then_with(|| a.info.name_key.cmp(&b.info.name_key))
        .then_with(|| a.info.skill.name.cmp(&b.info.skill.name))
}

/// The first of the skill's phrases that the request contains word for word.
fn find_phrase<'i>(info: &'i DocInfo, probe: &Probe<'_>) -> Option<&'i (String, Vec<String>)> {
    let mut runs = info.phrase_runs.as_slice();
    let mut phrases = info.phrases.iter();
    while let Some((&len, rest)) = runs.split_first() {
        let len = usize::try_from(len).unwrap_or(usize::MAX).min(rest.len());
        let (run, next) = rest.split_at(len);
        runs = next;
        let phrase = phrases.next()?;
        // Hashes first (no string is read); a hash match is confirmed on the words.
        if probe.has_hashes(run) && probe.has_words(&phrase.1) {
            return Some(phrase);
        }
    }
    None
}

fn passes(info: &DocInfo, filter: &Filter) -> bool {
    if filter.model_invocable_only && !info.model_invocable {
        return false;
    }
    // Only a profile the skill lists in `exclude_from_prompt_profile_ids` excludes it, so
    // most candidates are decided without reading the skill.
    match &filter.profile {
        Some(p) if info.excludes_profiles => info.skill.affinity(Some(p)) != Affinity::Excluded,
        _ => true,
    }
}

/// The name-like tokens of a request that are the name of an indexed skill, each once: the
/// only ones worth an exact-name clause (a long request has thousands of tokens).
fn exact_names<'a>(tokens: &'a [(String, bool)], by_name: &HashMap<String, u64>) -> Vec<&'a str> {
    let mut out: Vec<&str> = Vec::new();
    for (tok, _) in tokens {
        if by_name.contains_key(tok) && !out.contains(&tok.as_str()) {
            out.push(tok);
        }
    }
    out
}

fn push_unique(v: &mut Vec<String>, s: &str) {
    if !v.iter().any(|x| x == s) {
        v.push(s.to_owned());
    }
}

/// One analyzed query term, the word it came from, and its weight.
#[derive(Debug)]
struct QueryTerm {
    term: String,
    word: String,
    weight: f32,
}

fn collect_terms(analyzer: &mut TextAnalyzer, text: &str, weight: f32, out: &mut Vec<QueryTerm>) {
    let mut stream = analyzer.token_stream(text);
    while stream.advance() {
        if out.len() >= MAX_QUERY_TERMS {
            break;
        }
        let tok = stream.token();
        if out.iter().any(|q| q.term == tok.text) {
            continue;
        }
        let word = text
            .get(tok.offset_from..tok.offset_to)
            .unwrap_or(&tok.text)
            .to_lowercase();
        out.push(QueryTerm {
            term: tok.text.clone(),
            word,
            weight,
        });
    }
}

#[cfg(test)]
#[path = "index_tests.rs"]
mod tests;
