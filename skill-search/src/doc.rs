//! One skill as the index holds it: its tantivy document (for finding candidates), and the
//! facts kept beside it in memory (per-field term frequencies for the BM25F score, limit
//! clauses, phrases, compiled triggers) that rank and explain each match.
//!
//! A document's text fields hold the skill's analysed tokens joined by spaces. tantivy's
//! indexing thread only splits them (`text::ANALYSED`), so no text is analysed twice.

use std::collections::HashMap;
use std::sync::Arc;

use skill_format::Diagnostic;
use skill_registry::Skill;
use tantivy::TantivyDocument;
use tantivy::schema::{FAST, Field, IndexRecordOption, Schema, TextFieldIndexing, TextOptions};
use tantivy::tokenizer::TextAnalyzer;

use crate::embed::{Embedding, StaticEmbedder};
use crate::negation::{self, Limit};
use crate::params::FIELDS;
use crate::text::{self, ANALYSED, EXACT, words};
use crate::triggers::{Compiled, word_hash};

/// Boosts of the tantivy query that finds candidates (the final order is the BM25F score
/// with the fitted [`crate::params::Params`]): name, description, headings, body.
const RETRIEVE_BOOST: [f32; FIELDS] = [3.0, 2.0, 1.0, 0.5];
/// Boost of the exact-name field in that query.
pub(crate) const RETRIEVE_BOOST_EXACT: f32 = 10.0;
/// Bytes of a skill's body (its start) that its whole-text embedding reads
/// ([`DocInfo::whole`]). Set by hand: a body's start says what it is about, and reading
/// every body whole would make an index build tokenize all of it.
const WHOLE_BODY_BYTES: usize = 2_048;
/// Most distinct terms the index keeps for one skill (its name, description, headings,
/// body and limit clauses together): past it, a term the skill has not used yet is left
/// out, and the skill gets an `index-truncated` warning (limit clauses are few already: at
/// most 16 per text and 5 `when_not_to_use` entries). What one skill costs the index
/// grows with its distinct terms (term table, frequencies, postings), so this bounds it;
/// the largest real skill met so far uses about 3,500.
pub const MAX_SKILL_TERMS: usize = 20_000;

/// The first `max` bytes of `text`, cut back to a character boundary.
fn clip_bytes(text: &str, max: usize) -> &str {
    let mut end = text.len().min(max);
    while end > 0 && !text.is_char_boundary(end) {
        end -= 1;
    }
    &text[..end]
}

/// The tantivy fields.
#[derive(Debug, Clone, Copy)]
pub(crate) struct Fields {
    pub id: Field,
    pub key: Field,
    pub name_exact: Field,
    /// Name, description, headings, body, in [`FIELDS`] order.
    pub text: [Field; FIELDS],
}

impl Fields {
    pub(crate) fn schema() -> (Schema, Fields) {
        let mut b = Schema::builder();
        // Frequencies without positions: phrases are checked on the candidates' own words.
        let english = TextOptions::default().set_indexing_options(
            TextFieldIndexing::default()
                .set_tokenizer(ANALYSED)
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
        let name_exact = b.add_text_field("name_exact", exact);
        let text = [
            b.add_text_field("name", english.clone()),
            b.add_text_field("description", english.clone()),
            b.add_text_field("headings", english.clone()),
            b.add_text_field("body", english),
        ];
        (
            b.build(),
            Fields {
                id,
                key,
                name_exact,
                text,
            },
        )
    }

    /// The text fields with their retrieval boosts.
    pub(crate) fn boosted(&self) -> impl Iterator<Item = (Field, f32)> + '_ {
        self.text.iter().copied().zip(RETRIEVE_BOOST)
    }
}

/// Term ids and document frequencies over the indexed skills' text.
#[derive(Debug, Default)]
pub(crate) struct Terms {
    ids: HashMap<String, u32>,
    /// Each id's term (typo matching files terms by their text).
    text: Vec<Box<str>>,
    df: Vec<u32>,
    /// Terms some indexed skill uses (document frequency above 0).
    used: usize,
}

impl Terms {
    /// The id of `t`, given it if it has none.
    pub(crate) fn intern(&mut self, t: String) -> u32 {
        if let Some(&id) = self.ids.get(&t) {
            return id;
        }
        let id = self.df.len() as u32;
        self.text.push(t.as_str().into());
        self.ids.insert(t, id);
        self.df.push(0);
        id
    }

    /// The term of `id`.
    pub(crate) fn text(&self, id: u32) -> Option<&str> {
        self.text.get(id as usize).map(|t| &**t)
    }

    pub(crate) fn get(&self, t: &str) -> Option<u32> {
        self.ids.get(t).copied()
    }

    /// Every term with its id, by id.
    #[cfg(test)]
    pub(crate) fn all(&self) -> Vec<(String, u32)> {
        let mut all: Vec<(String, u32)> = self.ids.iter().map(|(t, &id)| (t.clone(), id)).collect();
        all.sort_by_key(|e| e.1);
        all
    }

    pub(crate) fn df(&self, id: u32) -> u32 {
        self.df.get(id as usize).copied().unwrap_or(0)
    }

    /// How many terms some indexed skill uses: the breadth of the skills' vocabulary.
    pub(crate) fn used(&self) -> usize {
        self.used
    }

    pub(crate) fn adjust(&mut self, ids: impl Iterator<Item = u32>, up: bool) {
        for id in ids {
            if let Some(d) = self.df.get_mut(id as usize) {
                let before = *d;
                *d = if up {
                    d.saturating_add(1)
                } else {
                    d.saturating_sub(1)
                };
                match (before, *d) {
                    (0, 1..) => self.used += 1,
                    (1.., 0) => self.used = self.used.saturating_sub(1),
                    _ => {}
                }
            }
        }
    }
}

/// The first 16 bytes of a name, zero-padded: comparing two of them orders two names as
/// comparing the names does, except when they are equal (then compare the names).
pub(crate) type NameKey = [u8; 16];

fn name_key(name: &str) -> NameKey {
    let mut key = [0u8; 16];
    for (k, b) in key.iter_mut().zip(name.bytes()) {
        *k = b;
    }
    key
}

/// A skill's facts kept beside its tantivy document.
#[derive(Debug)]
pub(crate) struct DocInfo {
    pub skill: Arc<Skill>,
    /// Every term of the skill's text with its frequency in each field (saturating at
    /// `u16::MAX`).
    pub terms: TermFreqs,
    /// Tokens in each field.
    pub len: [u32; FIELDS],
    /// The terms of each limit clause.
    pub clauses: Vec<(Limit, Vec<u32>)>,
    pub triggers: Compiled,
    /// The semantic embedding of the description, tags, triggers and domain.
    pub embedding: Embedding,
    /// The semantic embedding of the skill's whole text (name, description, headings,
    /// body): what dense candidates are found by (`rank.rs`), so that a request in plain
    /// words finds a skill whose text says it in other ones.
    pub whole: Embedding,
    pub phrases: Vec<(String, Vec<String>)>,
    /// The phrases' words as [`word_hash`]es, in one block: for each phrase its length,
    /// then its hashes. Phrases are checked for every candidate, and this is one read.
    pub phrase_runs: Vec<u64>,
    pub name_term: Option<u32>,
    pub single_word_name: bool,
    /// `skill.model_invocable()`, kept here so that filtering does not read the skill.
    pub model_invocable: bool,
    /// The skill lists profiles it is excluded from.
    pub excludes_profiles: bool,
    /// The first bytes of the name, zero-padded.
    pub name_key: NameKey,
}

impl DocInfo {
    /// The term's frequencies by field, if the skill uses it.
    pub(crate) fn tf(&self, term: u32) -> Option<&[u16; FIELDS]> {
        self.terms.get(term)
    }
}

/// Fence keys kept inline in [`TermFreqs`].
const FENCES: usize = 16;

/// One skill's terms, ascending by id, each with its per-field frequencies beside it, and
/// every `stride`-th id kept inline as a fence. Scoring a candidate looks up each request
/// term in a skill that is not in the cache: the fences narrow the search to one short run
/// of neighbouring entries, and the frequencies are read from the line the search ends on
/// (a binary search over a separate id array touched a new cache line at nearly every
/// step, then one more for the frequencies).
#[derive(Debug, Clone, Default)]
pub(crate) struct TermFreqs {
    entries: Vec<(u32, [u16; FIELDS])>,
    /// The id of entry `k * stride` for each `k` (`u32::MAX` past the end).
    fences: [u32; FENCES],
    stride: u32,
}

impl TermFreqs {
    /// From `(id, frequencies)` pairs with distinct ids, in any order.
    pub(crate) fn new(mut entries: Vec<(u32, [u16; FIELDS])>) -> Self {
        entries.sort_unstable_by_key(|e| e.0);
        let stride = entries.len().div_ceil(FENCES).max(1);
        let fences = std::array::from_fn(|k| entries.get(k * stride).map_or(u32::MAX, |e| e.0));
        TermFreqs {
            entries,
            fences,
            stride: u32::try_from(stride).unwrap_or(u32::MAX),
        }
    }

    /// The term's frequencies, if the skill uses it.
    pub(crate) fn get(&self, id: u32) -> Option<&[u16; FIELDS]> {
        // The run that can hold `id`: the one after the last fence at or below it.
        let stride = self.stride as usize;
        let runs = self.entries.len().div_ceil(stride).min(FENCES);
        let k = self.fences[..runs]
            .partition_point(|&f| f <= id)
            .checked_sub(1)?;
        let start = k * stride;
        let run = self
            .entries
            .get(start..(start + stride).min(self.entries.len()))?;
        let i = run.binary_search_by_key(&id, |e| e.0).ok()?;
        run.get(i).map(|e| &e.1)
    }

    /// Every term id, ascending.
    pub(crate) fn ids(&self) -> impl Iterator<Item = u32> + '_ {
        self.entries.iter().map(|e| e.0)
    }

    /// Every term id with its frequencies by field, ascending by id.
    pub(crate) fn iter(&self) -> impl Iterator<Item = (u32, &[u16; FIELDS])> + '_ {
        self.entries.iter().map(|e| (e.0, &e.1))
    }
}

/// What one analysing thread of an index build keeps from skill to skill: term ids of its
/// own, with the terms it met first in the skill being analysed (the builder then gives
/// them global ids, [`Analysed::finish`]). A thread
/// analyses its skills in index order, so a term new to the whole index is always new to
/// the thread that meets it first, and global ids come out in the order a single thread
/// would give them.
#[derive(Debug, Default)]
pub(crate) struct Scratch {
    ids: HashMap<String, u32, foldhash::fast::RandomState>,
    /// Terms met first in the current skill, in order: their ids follow the earlier ones.
    fresh: Vec<String>,
}

impl Scratch {
    fn intern(&mut self, t: &str) -> u32 {
        if let Some(&id) = self.ids.get(t) {
            return id;
        }
        let id = u32::try_from(self.ids.len()).unwrap_or(u32::MAX);
        self.ids.insert(t.to_owned(), id);
        self.fresh.push(t.to_owned());
        id
    }
}

/// A term id of one analysing thread's own ([`Scratch`]) to the index's ([`Terms`]):
/// entry `i` is the global id of local id `i`.
pub(crate) type GlobalIds = Vec<u32>;

/// The tokens [`analyse`] left out of one skill past [`MAX_SKILL_TERMS`] (each a use of a
/// term past the budget).
#[derive(Debug, Default)]
struct Cut {
    terms: usize,
}

impl Cut {
    /// The `index-truncated` warning, when something was left out.
    fn diagnostic(&self, path: &std::path::Path) -> Option<Diagnostic> {
        (self.terms > 0).then(|| {
            Diagnostic::warning(
                skill_format::Code::IndexTruncated,
                path,
                format!(
                    "the search index left out {} words past the skill's first {MAX_SKILL_TERMS} \
                     distinct terms: search and selection do not see them",
                    self.terms
                ),
            )
        })
    }
}

/// One skill as an analysing thread leaves it: document and facts whose term ids are the
/// thread's own, with the terms the thread met first in it.
#[derive(Debug)]
pub(crate) struct Analysed {
    key: u64,
    doc: TantivyDocument,
    info: DocInfo,
    fresh: Vec<String>,
    diagnostics: Vec<Diagnostic>,
}

impl Analysed {
    /// The key, document and facts with the index's term ids: the thread's fresh terms are
    /// interned in `terms` and their ids appended to `global` (the thread's map).
    pub(crate) fn finish(
        self,
        global: &mut GlobalIds,
        terms: &mut Terms,
    ) -> (u64, TantivyDocument, DocInfo, Vec<Diagnostic>) {
        let Analysed {
            key,
            doc,
            mut info,
            fresh,
            diagnostics,
        } = self;
        global.extend(fresh.into_iter().map(|t| terms.intern(t)));
        let map = |id: u32| global.get(id as usize).copied();
        info.terms = TermFreqs::new(
            std::mem::take(&mut info.terms.entries)
                .into_iter()
                .filter_map(|(id, tf)| Some((map(id)?, tf)))
                .collect(),
        );
        for (_, ids) in &mut info.clauses {
            *ids = ids.iter().filter_map(|&id| map(id)).collect();
            ids.sort_unstable();
        }
        info.name_term = info.name_term.and_then(map);
        (key, doc, info, diagnostics)
    }
}

/// Analyse one skill: its tantivy document and facts, terms interned in `local` (the
/// builder gives them global ids with [`Analysed::finish`]; document frequencies are its
/// to adjust, with [`DocInfo::terms`]).
pub(crate) fn analyse(
    fields: &Fields,
    skill: &Arc<Skill>,
    key: u64,
    local: &mut Scratch,
    english: &mut TextAnalyzer,
    stems: &mut TextAnalyzer,
    embedder: &StaticEmbedder,
) -> Analysed {
    let m = &skill.manifest;
    let mut doc = TantivyDocument::default();
    doc.add_text(fields.id, &skill.name);
    doc.add_u64(fields.key, key);
    doc.add_text(fields.name_exact, &skill.name);

    let name_words = skill.name.replace(['-', '_', '.', ':'], " ");
    let mut described = vec![skill.description.as_str()];
    described.extend(m.summary.as_deref());
    described.extend(m.brief_description.as_deref());
    let mut desc = String::new();
    let mut clauses = Vec::new();
    for d in described {
        let split = negation::split(d);
        desc.push_str(&split.kept);
        desc.push('\n');
        // A description's sentences say what the skill is for: a "not" in one is a limit.
        clauses.extend(
            split
                .clauses
                .into_iter()
                .map(|(k, text)| (k.declared(), text)),
        );
    }
    // `when_to_use` counts for the skill as its description does; every `when_not_to_use`
    // entry is a "not for" clause, whatever its wording.
    for w in &m.when_to_use {
        desc.push_str(w);
        desc.push('\n');
    }
    clauses.extend(m.when_not_to_use.iter().map(|w| (Limit::Not, w.clone())));
    // "Only when ..." in a body is usually about one step, not the skill: only the
    // description's count.
    let body = negation::split(&skill.body);
    clauses.extend(body.clauses.into_iter().filter(|(k, _)| k.is_not()));
    for t in m
        .tags
        .iter()
        .chain(&m.triggers.keywords)
        .chain(&m.triggers.verbs)
        .chain(skill.domain.as_ref())
    {
        desc.push_str(t);
        desc.push('\n');
    }
    let headings: String = body
        .kept
        .lines()
        .filter(|l| l.starts_with('#'))
        .map(|l| l.trim_start_matches('#'))
        .collect::<Vec<_>>()
        .join("\n");
    let texts: [&str; FIELDS] = [&name_words, &desc, &headings, &body.kept];
    let mut counts: HashMap<u32, [u16; FIELDS], foldhash::fast::RandomState> = HashMap::default();
    // Terms only limit clauses use: with `counts`, the skill's distinct terms.
    let mut clause_only: std::collections::HashSet<u32, foldhash::fast::RandomState> =
        std::collections::HashSet::default();
    let mut cut = Cut::default();
    let mut len = [0u32; FIELDS];
    let mut analysed = String::new();
    for (f, text) in texts.iter().enumerate() {
        // The tokens, joined by spaces, are what tantivy indexes (`text::ANALYSED`).
        analysed.clear();
        let mut stream = english.token_stream(text);
        while stream.advance() {
            let token = &stream.token().text;
            let known = local.ids.get(token.as_str()).copied();
            let id = match known {
                Some(id) if counts.contains_key(&id) => id,
                _ if counts.len() + clause_only.len() >= MAX_SKILL_TERMS => {
                    cut.terms += 1;
                    continue;
                }
                Some(id) => id,
                None => local.intern(token),
            };
            let slot = &mut counts.entry(id).or_insert([0; FIELDS])[f];
            *slot = slot.saturating_add(1);
            len[f] = len[f].saturating_add(1);
            analysed.push_str(token);
            analysed.push(' ');
        }
        doc.add_text(fields.text[f], &analysed);
    }
    // At most 69 clauses (16 from each text split, 5 `when_not_to_use` entries).
    let clauses = clauses
        .into_iter()
        .map(|(kind, text)| {
            let mut ids = Vec::new();
            for t in text::tokens(english, &text) {
                let known = local.ids.get(t.as_str()).copied();
                let id = match known {
                    Some(id) if counts.contains_key(&id) || clause_only.contains(&id) => id,
                    _ if counts.len() + clause_only.len() >= MAX_SKILL_TERMS => {
                        cut.terms += 1;
                        continue;
                    }
                    Some(id) => id,
                    None => local.intern(&t),
                };
                if !counts.contains_key(&id) {
                    clause_only.insert(id);
                }
                ids.push(id);
            }
            ids.sort_unstable();
            ids.dedup();
            (kind, ids)
        })
        .filter(|(_, ids)| !ids.is_empty())
        .collect();

    let name_parts = words(&skill.name);
    let single_word_name = name_parts.len() == 1;
    // The name field is the name's words, so a single-word name's term (if the analyzer
    // keeps it: not a stop word) is one this skill's own text has just interned.
    let name_term = if single_word_name {
        text::tokens(english, &skill.name)
            .first()
            .and_then(|t| local.ids.get(t).copied())
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
    let (triggers, mut diagnostics) = Compiled::new(&m.triggers, &skill.path, stems);
    diagnostics.extend(cut.diagnostic(&skill.path));
    // The name counts in the lexical score (and its exact form on its own); the
    // embedding is of what the skill says it does, so two skills that say the same tie.
    let embedding = embedder.embed(&desc);
    // The body last, and only its start: it says what the skill is about, and the rest
    // would make an index build tokenize every body whole.
    let start = clip_bytes(&body.kept, WHOLE_BODY_BYTES);
    let whole = embedder.embed(&[&name_words, &desc, &headings, start].join("\n"));
    Analysed {
        key,
        doc,
        info: DocInfo {
            skill: skill.clone(),
            // Local ids, unsorted: `finish` maps and sorts them.
            terms: TermFreqs {
                entries: counts.into_iter().collect(),
                ..TermFreqs::default()
            },
            len,
            clauses,
            triggers,
            embedding,
            whole,
            phrases,
            phrase_runs,
            name_term,
            single_word_name,
            model_invocable: skill.model_invocable(),
            name_key: name_key(&skill.name),
            excludes_profiles: !m.exclude_from_prompt_profile_ids.is_empty(),
        },
        fresh: std::mem::take(&mut local.fresh),
        diagnostics,
    }
}

#[cfg(test)]
mod tests {
    use std::collections::BTreeMap;

    use super::{FIELDS, TermFreqs, Terms};

    #[test]
    fn used_counts_terms_some_skill_uses_through_adds_and_removals() {
        let mut t = Terms::default();
        let a = t.intern("pdf".into());
        let b = t.intern("form".into());
        assert_eq!(t.used(), 0, "interned but unused");
        t.adjust([a, b].into_iter(), true);
        t.adjust([a].into_iter(), true);
        assert_eq!(t.used(), 2);
        t.adjust([a].into_iter(), false);
        assert_eq!(t.used(), 2, "pdf is still used by one skill");
        t.adjust([a, b].into_iter(), false);
        assert_eq!(t.used(), 0);
        t.adjust([a].into_iter(), false);
        assert_eq!(t.used(), 0, "a removal below zero changes nothing");
    }

    #[test]
    fn term_lookups_agree_with_a_map_at_every_size_and_edge() {
        // Sizes around the fence count, a large body, and ids at both ends of u32.
        for n in [0usize, 1, 2, 15, 16, 17, 31, 33, 300, 5_000] {
            let mut seed = n as u64 * 0x9E37_79B9 + 7;
            let mut next = || {
                seed ^= seed << 13;
                seed ^= seed >> 7;
                seed ^= seed << 17;
                seed
            };
            let mut want: BTreeMap<u32, [u16; FIELDS]> = BTreeMap::new();
            while want.len() < n {
                let id = match want.len() {
                    0 if n > 2 => 0,
                    1 if n > 2 => u32::MAX,
                    _ => (next() % 20_000) as u32 * 3,
                };
                want.insert(id, [want.len() as u16, 1, 2, 3]);
            }
            let t = TermFreqs::new(want.iter().map(|(k, v)| (*k, *v)).rev().collect());
            assert!(t.ids().eq(want.keys().copied()), "ids ascending, n = {n}");
            for probe in (0..60_002).chain([u32::MAX - 1, u32::MAX]) {
                assert_eq!(t.get(probe), want.get(&probe), "id {probe}, n = {n}");
            }
        }
    }
}

#[cfg(test)]
mod whole_text_tests {
    use super::*;

    #[test]
    fn whole_text_reads_at_most_the_bodys_first_bytes() {
        let body = "é".repeat(WHOLE_BODY_BYTES);
        assert_eq!(clip_bytes(&body, WHOLE_BODY_BYTES).len(), WHOLE_BODY_BYTES);
        // One byte past a character boundary is cut back to it.
        let odd = format!("a{body}");
        assert_eq!(
            clip_bytes(&odd, WHOLE_BODY_BYTES).len(),
            WHOLE_BODY_BYTES - 1
        );
        assert_eq!(clip_bytes("short", WHOLE_BODY_BYTES), "short");
    }
}
