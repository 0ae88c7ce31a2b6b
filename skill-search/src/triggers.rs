//! Trigger matching (toolsets seed): keywords and verbs on word boundaries,
//! case-insensitively; patterns as regular expressions compiled once.
//!
//! A pattern is compiled when the index takes it in, within [`MAX_PATTERN_SIZE`] (a larger
//! one is left out with a diagnostic), and the distinct patterns of an index within
//! [`MAX_TOTAL_PATTERN_SIZE`] together (patterns that were refused count what compiling them
//! cost): patterns past it, in the order skills are indexed, are not compiled nor matched,
//! and each says so in a diagnostic. So a pack's patterns cost bounded memory and compile
//! time, however many it declares.

use std::collections::HashMap;
use std::path::{Path, PathBuf};

use regex::{Regex, RegexBuilder, RegexSet, RegexSetBuilder};
use skill_format::{Code, Diagnostic, MAX_PATTERN_SIZE, Triggers};
use tantivy::tokenizer::TextAnalyzer;

use crate::text::{tokens, words};

/// Memory bound for the lazy DFA of one trigger pattern (and of one set of
/// [`PATTERNS_PER_SET`] patterns), in bytes.
pub const MAX_PATTERN_DFA_BYTES: usize = 2 * 1024 * 1024;
/// Distinct trigger patterns matched together in one regex set: a request is scanned once
/// per set, and an update recompiles one set. Larger sets mean fewer scans but slower
/// updates. A pattern that several skills declare is in one set once.
pub const PATTERNS_PER_SET: usize = 64;
/// The compiled size all the distinct trigger patterns of one index may take together, in
/// bytes, each counted at the [`PATTERN_COST_TIERS`] step it fits in (a pattern too large
/// counts [`MAX_PATTERN_SIZE`], one that does not compile the first step: compiling them
/// cost that much). Real packs declare a handful of patterns of 2 to 60 KiB. Patterns past
/// it are neither compiled nor matched, each with a diagnostic, so a pack of many large
/// patterns costs bounded memory and compile time.
const MAX_TOTAL_PATTERN_SIZE: usize = 32 * 1024 * 1024;
/// The sizes a pattern is counted at against [`MAX_TOTAL_PATTERN_SIZE`]: the smallest it
/// compiles within (at most four times its real size; a pattern that does not fit one step
/// stops compiling as soon as it outgrows it, so measuring costs little more than one
/// compile).
const PATTERN_COST_TIERS: [usize; 4] = [
    MAX_PATTERN_SIZE / 64,
    MAX_PATTERN_SIZE / 16,
    MAX_PATTERN_SIZE / 4,
    MAX_PATTERN_SIZE,
];

/// Which kind of trigger matched.
#[derive(Debug, Clone, Copy, PartialEq, Eq, PartialOrd, Ord)]
pub enum TriggerKind {
    /// A `triggers.keywords` entry: its words appear, in order, on word boundaries.
    Keyword,
    /// A `triggers.verbs` entry: the verb appears in any inflection (compared by stem).
    Verb,
    /// A `triggers.patterns` regular expression matched (case-insensitively).
    Pattern,
}

impl TriggerKind {
    /// Lowercase name for output.
    pub fn as_str(self) -> &'static str {
        match self {
            TriggerKind::Keyword => "keyword",
            TriggerKind::Verb => "verb",
            TriggerKind::Pattern => "pattern",
        }
    }
}

/// One trigger that matched a request.
#[derive(Debug, Clone, PartialEq, Eq, PartialOrd, Ord)]
pub struct TriggerHit {
    /// Its kind.
    pub kind: TriggerKind,
    /// The trigger as the skill declares it.
    pub trigger: String,
}

/// The request as trigger matching sees it.
pub(crate) struct Probe<'a> {
    pub text: &'a str,
    pub words: Vec<String>,
    pub stems: Vec<String>,
    /// Where each word occurs in `words`.
    word_at: Positions,
    /// Where each stem occurs in `stems`.
    stem_at: Positions,
    /// [`word_hash`] of each of `words`.
    hashes: Vec<u64>,
    /// Where each hash occurs in `hashes`.
    hash_at: KeyMap<Vec<usize>>,
}

/// A word's FNV-1a hash: phrases are compared by these before their words are read.
pub(crate) fn word_hash(word: &str) -> u64 {
    word.bytes().fold(0xcbf2_9ce4_8422_2325, |h, b| {
        (h ^ u64::from(b)).wrapping_mul(0x0100_0000_01b3)
    })
}

type Positions = HashMap<String, Vec<usize>>;

fn positions(items: &[String]) -> Positions {
    let mut out: Positions = HashMap::new();
    for (i, w) in items.iter().enumerate() {
        out.entry(w.clone()).or_default().push(i);
    }
    out
}

/// Whether `needle` occurs in `hay` as a run of consecutive items (`at`: the positions of
/// each item of `hay`); the same answer as [`contains_run`], without a scan of `hay`.
fn has_run(hay: &[String], at: &Positions, needle: &[String]) -> bool {
    let Some(first) = needle.first() else {
        return false;
    };
    at.get(first).is_some_and(|starts| {
        starts
            .iter()
            .any(|&i| hay.get(i..i + needle.len()) == Some(needle))
    })
}

impl<'a> Probe<'a> {
    pub(crate) fn new(text: &'a str, stemmer: &mut TextAnalyzer) -> Self {
        let words = words(text);
        let stems = tokens(stemmer, text);
        let hashes: Vec<u64> = words.iter().map(|w| word_hash(w)).collect();
        let mut hash_at: KeyMap<Vec<usize>> = KeyMap::default();
        for (i, h) in hashes.iter().enumerate() {
            hash_at.entry(*h).or_default().push(i);
        }
        Probe {
            text,
            word_at: positions(&words),
            stem_at: positions(&stems),
            words,
            stems,
            hashes,
            hash_at,
        }
    }

    /// Whether the hashes of the request's words contain `needle`, one after another (the
    /// words themselves may still differ, if two words share a hash).
    pub(crate) fn has_hashes(&self, needle: &[u64]) -> bool {
        let Some(first) = needle.first() else {
            return false;
        };
        self.hash_at.get(first).is_some_and(|starts| {
            starts
                .iter()
                .any(|&i| self.hashes.get(i..i + needle.len()) == Some(needle))
        })
    }

    /// Whether the request's words contain `needle`, in order, one after another.
    pub(crate) fn has_words(&self, needle: &[String]) -> bool {
        has_run(&self.words, &self.word_at, needle)
    }

    /// Whether the request's stems contain `needle`, in order, one after another.
    #[cfg(test)]
    pub(crate) fn has_stems(&self, needle: &[String]) -> bool {
        has_run(&self.stems, &self.stem_at, needle)
    }
}

/// A skill's triggers, compiled.
#[derive(Debug, Clone, Default)]
pub(crate) struct Compiled {
    keywords: Vec<(String, Vec<String>)>,
    verbs: Vec<(String, Vec<String>)>,
    /// The declared patterns, compiled when [`TriggerIndex`] takes them into its sets (those
    /// that do not compile, or past its budget, are left out there, with a diagnostic).
    patterns: Vec<String>,
    /// The skill file, for diagnostics about its patterns (empty without patterns).
    path: PathBuf,
}

impl Compiled {
    /// Compile `triggers`' keywords and verbs; patterns are compiled by [`TriggerIndex`],
    /// within its budget, and reported there. No diagnostic comes from here any more, but
    /// the list stays for the caller.
    pub(crate) fn new(
        triggers: &Triggers,
        path: &Path,
        stemmer: &mut TextAnalyzer,
    ) -> (Self, Vec<Diagnostic>) {
        let diagnostics = Vec::new();
        let keywords = triggers
            .keywords
            .iter()
            .map(|k| (k.clone(), words(k)))
            .filter(|(_, w)| !w.is_empty())
            .collect();
        let verbs = triggers
            .verbs
            .iter()
            .map(|v| (v.clone(), tokens(stemmer, v)))
            .filter(|(_, s)| !s.is_empty())
            .collect();
        let patterns = triggers.patterns.clone();
        let path = if patterns.is_empty() {
            PathBuf::new()
        } else {
            path.to_path_buf()
        };
        (
            Compiled {
                keywords,
                verbs,
                patterns,
                path,
            },
            diagnostics,
        )
    }

    pub(crate) fn is_empty(&self) -> bool {
        self.keywords.is_empty() && self.verbs.is_empty() && self.patterns.is_empty()
    }

    /// The triggers `m` says matched, keywords first, then verbs, then patterns, each in
    /// the order the skill declares them.
    pub(crate) fn hit_refs(&self, m: Matched<'_>) -> Vec<(TriggerKind, &str)> {
        m.0.iter()
            .filter_map(|&(_, kind, i)| {
                let text = match kind {
                    TriggerKind::Keyword => self.keywords.get(i).map(|(k, _)| k.as_str()),
                    TriggerKind::Verb => self.verbs.get(i).map(|(v, _)| v.as_str()),
                    TriggerKind::Pattern => self.patterns.get(i).map(String::as_str),
                };
                text.map(|t| (kind, t))
            })
            .collect()
    }

    /// [`Compiled::hit_refs`], owned.
    #[cfg(test)]
    pub(crate) fn hits(&self, m: Matched<'_>) -> Vec<TriggerHit> {
        self.hit_refs(m)
            .into_iter()
            .map(|(kind, t)| TriggerHit {
                kind,
                trigger: t.to_owned(),
            })
            .collect()
    }
}

/// Which of one skill's triggers matched: (kind, index into the skill's triggers of that
/// kind), keywords first, then verbs, then patterns, each ascending.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(crate) struct Matched<'m>(&'m [(u64, TriggerKind, usize)]);

impl Matched<'_> {
    /// How many keywords, verbs and patterns matched.
    pub(crate) fn counts(&self) -> TriggerCounts {
        let mut c = TriggerCounts::default();
        for (_, kind, _) in self.0 {
            match kind {
                TriggerKind::Keyword => c.keywords += 1,
                TriggerKind::Verb => c.verbs += 1,
                TriggerKind::Pattern => c.patterns += 1,
            }
        }
        c
    }
}

/// How many triggers of each kind matched.
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq)]
pub(crate) struct TriggerCounts {
    /// Keywords.
    pub keywords: usize,
    /// Verbs.
    pub verbs: usize,
    /// Patterns.
    pub patterns: usize,
}

/// Keywords (or verbs) of every skill, grouped by their word (or stem) sequence, so that
/// each distinct sequence is looked for in a request once, however many skills share it,
/// and only the sequences whose first word the request contains are looked at.
#[derive(Debug, Default)]
struct Runs {
    ids: HashMap<Vec<String>, usize>,
    by_first: HashMap<String, Vec<usize>>,
    /// Each sequence and the skills that declare it; a group whose skills are all gone
    /// stays, empty, to be reused.
    groups: Vec<(Vec<String>, Owners)>,
}

/// The skills that declare one trigger (a keyword, verb or pattern), each with the indexes
/// of its declarations in its own list. Adding or removing a skill is one map operation
/// however many skills share the trigger, so removing all of them one by one (a rebuild)
/// stays linear; the usual trigger, declared once by one skill, needs no allocation.
#[derive(Debug, Default)]
enum Owners {
    /// No skill (a group whose skills are all gone, kept to be reused).
    #[default]
    Empty,
    /// One skill, declaring the trigger once.
    One(u64, usize),
    /// Anything else.
    Many(KeyMap<Vec<usize>>),
}

impl Owners {
    fn add(&mut self, key: u64, index: usize) {
        match self {
            Owners::Empty => *self = Owners::One(key, index),
            Owners::One(k, i) => {
                let mut map: KeyMap<Vec<usize>> = KeyMap::default();
                map.insert(*k, vec![*i]);
                map.entry(key).or_default().push(index);
                *self = Owners::Many(map);
            }
            Owners::Many(map) => map.entry(key).or_default().push(index),
        }
    }

    fn remove(&mut self, key: u64) {
        match self {
            Owners::One(k, _) if *k == key => *self = Owners::Empty,
            Owners::Many(map) => {
                map.remove(&key);
                if map.is_empty() {
                    *self = Owners::Empty;
                }
            }
            _ => {}
        }
    }

    fn is_empty(&self) -> bool {
        matches!(self, Owners::Empty)
    }

    /// Call `f(key, index)` for every declaration.
    fn each(&self, mut f: impl FnMut(u64, usize)) {
        match self {
            Owners::Empty => {}
            Owners::One(key, index) => f(*key, *index),
            Owners::Many(map) => {
                for (&key, indexes) in map {
                    for &index in indexes {
                        f(key, index);
                    }
                }
            }
        }
    }
}

impl Runs {
    fn insert(&mut self, key: u64, index: usize, run: &[String]) {
        let Some(first) = run.first() else {
            return;
        };
        let id = match self.ids.get(run) {
            Some(&id) => id,
            None => {
                let id = self.groups.len();
                self.groups.push((run.to_vec(), Owners::default()));
                self.ids.insert(run.to_vec(), id);
                self.by_first.entry(first.clone()).or_default().push(id);
                id
            }
        };
        if let Some((_, owners)) = self.groups.get_mut(id) {
            owners.add(key, index);
        }
    }

    fn remove(&mut self, key: u64, run: &[String]) {
        if let Some((_, owners)) = self.ids.get(run).and_then(|&id| self.groups.get_mut(id)) {
            owners.remove(key);
        }
    }

    /// Call `hit(key, index)` for every declared sequence found in `hay`.
    fn find(&self, hay: &[String], at: &Positions, mut hit: impl FnMut(u64, usize)) {
        if self.by_first.is_empty() {
            return;
        }
        for first in at.keys() {
            let Some(ids) = self.by_first.get(first) else {
                continue;
            };
            for &id in ids {
                let Some((run, owners)) = self.groups.get(id) else {
                    continue;
                };
                if !owners.is_empty() && has_run(hay, at, run) {
                    owners.each(&mut hit);
                }
            }
        }
    }

    #[cfg(test)]
    fn is_empty(&self) -> bool {
        self.groups.iter().all(|(_, m)| m.is_empty())
    }
}

/// One trigger pattern, compiled alone, with the crate's settings (case-insensitive,
/// size and lazy-DFA memory bounded).
fn compile_one(pattern: &str) -> Result<Regex, regex::Error> {
    compile_within(pattern, MAX_PATTERN_SIZE)
}

/// [`compile_one`] within `size` bytes of compiled pattern.
fn compile_within(pattern: &str, size: usize) -> Result<Regex, regex::Error> {
    RegexBuilder::new(pattern)
        .case_insensitive(true)
        .size_limit(size)
        .dfa_size_limit(MAX_PATTERN_DFA_BYTES)
        .build()
}

/// What `pattern` counts against [`MAX_TOTAL_PATTERN_SIZE`]: the smallest of
/// [`PATTERN_COST_TIERS`] (none above `cap`) it compiles within; or why it does not compile
/// within the last of them (`CompiledTooBig` without a try when `cap` is 0).
fn measure(pattern: &str, cap: usize) -> Result<usize, regex::Error> {
    let mut outcome = Err(regex::Error::CompiledTooBig(cap));
    let mut tried = 0;
    for size in PATTERN_COST_TIERS.map(|t| t.min(cap)) {
        if size <= tried {
            continue;
        }
        tried = size;
        outcome = compile_within(pattern, size).map(|_| size);
        if !matches!(outcome, Err(regex::Error::CompiledTooBig(_))) {
            break;
        }
    }
    outcome
}

/// The last line of a compile error.
fn last_line(e: &regex::Error) -> String {
    let why = e.to_string();
    why.lines().last().unwrap_or("").trim().to_owned()
}

/// Patterns matched together: one [`RegexSet`], filled up to [`PATTERNS_PER_SET`] distinct
/// patterns.
#[derive(Debug, Default)]
struct PatternChunk {
    /// Each distinct pattern, with the skills that declare it.
    members: Vec<(String, Owners)>,
    /// What matches `members`.
    matcher: Matcher,
    /// Members changed since `matcher` was built.
    dirty: bool,
}

/// How a chunk's patterns are matched.
#[derive(Debug, Default)]
enum Matcher {
    /// No members.
    #[default]
    Empty,
    /// One set over the members, in order.
    Set(RegexSet),
    /// Each member alone (never seen: when the set does not compile although each of its
    /// patterns did); `None` for one that does not compile.
    Each(Vec<Option<Regex>>),
}

impl PatternChunk {
    fn rebuild(&mut self) {
        self.dirty = false;
        self.matcher = if self.members.is_empty() {
            Matcher::Empty
        } else {
            match RegexSetBuilder::new(self.members.iter().map(|(p, _)| p))
                .case_insensitive(true)
                .size_limit(MAX_PATTERN_SIZE.saturating_mul(self.members.len()))
                .dfa_size_limit(MAX_PATTERN_DFA_BYTES)
                .build()
            {
                Ok(set) => Matcher::Set(set),
                Err(_) => Matcher::Each(
                    self.members
                        .iter()
                        .map(|(p, _)| compile_one(p).ok())
                        .collect(),
                ),
            }
        };
    }

    /// Call `hit` with the skills that declare each pattern matching `text`.
    fn matching<'c>(&'c self, text: &str, mut hit: impl FnMut(&'c Owners)) {
        if self.dirty {
            // Never seen (the index rebuilds before it is read again); correct, but slow.
            for (pattern, owners) in &self.members {
                if compile_one(pattern).is_ok_and(|re| re.is_match(text)) {
                    hit(owners);
                }
            }
            return;
        }
        match &self.matcher {
            Matcher::Empty => {}
            Matcher::Set(set) => {
                // Most sets match nothing: a plain search says so without the overlapping
                // search's bookkeeping, which only the sets that match then pay for.
                if !set.is_match(text) {
                    return;
                }
                for i in set.matches(text).iter() {
                    if let Some((_, owners)) = self.members.get(i) {
                        hit(owners);
                    }
                }
            }
            Matcher::Each(each) => {
                for ((_, owners), re) in self.members.iter().zip(each) {
                    if re.as_ref().is_some_and(|re| re.is_match(text)) {
                        hit(owners);
                    }
                }
            }
        }
    }
}

/// Which skills' triggers match a request, found without trying every skill in turn:
/// keywords and verbs are grouped by their words (stems), and only the groups whose first
/// word (stem) the request contains are checked, once for all the skills that share them;
/// distinct patterns are matched [`PATTERNS_PER_SET`] at a time with a [`RegexSet`] (one
/// pass over the request for each set; a pattern many skills share is matched once for
/// all of them), and an update recompiles only the sets whose patterns changed.
#[derive(Debug, Default)]
pub(crate) struct TriggerIndex {
    keywords: Runs,
    verbs: Runs,
    chunks: Vec<PatternChunk>,
    /// The set that holds each distinct pattern, and what it counts against
    /// [`MAX_TOTAL_PATTERN_SIZE`].
    chunk_of: HashMap<String, (usize, usize)>,
    /// The skills whose patterns are in the sets.
    with_patterns: KeyMap<()>,
    /// What the distinct patterns in the sets, and the refused ones, count together.
    pattern_bytes: usize,
    /// Each skill's refused patterns (they do not compile, or are past the budget): what
    /// they count in `pattern_bytes`, and a diagnostic for each.
    refused: KeyMap<(usize, Vec<Diagnostic>)>,
}

/// The result of [`TriggerIndex::matches`]: every skill with a trigger that matched.
#[derive(Debug, Default)]
pub(crate) struct TriggerMatches {
    /// (skill key, kind, index) of every matched trigger, sorted.
    hits: Vec<(u64, TriggerKind, usize)>,
    /// Where each skill's hits start and end in `hits`.
    spans: KeyMap<(usize, usize)>,
}

impl TriggerMatches {
    fn new(mut hits: Vec<(u64, TriggerKind, usize)>) -> Self {
        hits.sort_unstable();
        hits.dedup();
        let mut spans = KeyMap::default();
        let mut start = 0;
        for (i, h) in hits.iter().enumerate() {
            if hits.get(i + 1).is_none_or(|next| next.0 != h.0) {
                spans.insert(h.0, (start, i + 1));
                start = i + 1;
            }
        }
        TriggerMatches { hits, spans }
    }

    /// The skills with a matching trigger, sorted.
    pub(crate) fn keys(&self) -> Vec<u64> {
        let mut keys: Vec<u64> = self.hits.iter().map(|h| h.0).collect();
        keys.dedup();
        keys
    }

    /// Which of skill `key`'s triggers matched.
    pub(crate) fn get(&self, key: u64) -> Option<Matched<'_>> {
        let &(start, end) = self.spans.get(&key)?;
        self.hits.get(start..end).map(Matched)
    }
}

impl TriggerIndex {
    /// Add the triggers of skill `key`; call [`TriggerIndex::finish`] before matching.
    pub(crate) fn insert(&mut self, key: u64, triggers: &Compiled) {
        for (i, (_, run)) in triggers.keywords.iter().enumerate() {
            self.keywords.insert(key, i, run);
        }
        for (i, (_, run)) in triggers.verbs.iter().enumerate() {
            self.verbs.insert(key, i, run);
        }
        if triggers.patterns.is_empty() || self.with_patterns.insert(key, ()).is_some() {
            return;
        }
        for (i, p) in triggers.patterns.iter().enumerate() {
            if let Some((_, owners)) = self.chunk_of.get(p).and_then(|&(at, _)| {
                let chunk = self.chunks.get_mut(at)?;
                chunk.members.iter_mut().find(|(q, _)| q == p)
            }) {
                // A pattern already in a set: the set itself is unchanged.
                owners.add(key, i);
                continue;
            }
            let remaining = MAX_TOTAL_PATTERN_SIZE.saturating_sub(self.pattern_bytes);
            let cost = match measure(p, remaining) {
                Ok(cost) => cost,
                Err(e) => {
                    let (cost, message) = match e {
                        regex::Error::CompiledTooBig(_) if remaining >= MAX_PATTERN_SIZE => (
                            MAX_PATTERN_SIZE,
                            format!(
                                "trigger pattern `{p}` compiles to more than {} KiB; simplify it (e.g. use [a-z] instead of \\w, or fewer repetitions); it is ignored by search",
                                MAX_PATTERN_SIZE / 1024
                            ),
                        ),
                        regex::Error::CompiledTooBig(_) => (
                            remaining,
                            format!(
                                "trigger pattern `{p}` is not matched: the trigger patterns indexed before it already take the {} MiB that all of them may compile to; use fewer or simpler patterns (e.g. [a-z] instead of \\w)",
                                MAX_TOTAL_PATTERN_SIZE / (1024 * 1024)
                            ),
                        ),
                        e => (
                            PATTERN_COST_TIERS[0].min(remaining),
                            format!(
                                "trigger pattern `{p}` does not compile ({}); it is ignored by search",
                                last_line(&e)
                            ),
                        ),
                    };
                    self.pattern_bytes += cost;
                    let refused = self.refused.entry(key).or_default();
                    refused.0 += cost;
                    refused.1.push(Diagnostic::warning(
                        Code::InvalidTriggerPattern,
                        &triggers.path,
                        message,
                    ));
                    continue;
                }
            };
            let at = match self
                .chunks
                .iter()
                .position(|c| c.members.len() < PATTERNS_PER_SET)
            {
                Some(at) => at,
                None => {
                    self.chunks.push(PatternChunk::default());
                    self.chunks.len() - 1
                }
            };
            if let Some(chunk) = self.chunks.get_mut(at) {
                let mut owners = Owners::default();
                owners.add(key, i);
                chunk.members.push((p.clone(), owners));
                chunk.dirty = true;
                self.chunk_of.insert(p.clone(), (at, cost));
                self.pattern_bytes += cost;
            }
        }
    }

    /// Forget the triggers of skill `key` (`triggers` as given to [`TriggerIndex::insert`]);
    /// call [`TriggerIndex::finish`] before matching.
    pub(crate) fn remove(&mut self, key: u64, triggers: &Compiled) {
        for (_, run) in &triggers.keywords {
            self.keywords.remove(key, run);
        }
        for (_, run) in &triggers.verbs {
            self.verbs.remove(key, run);
        }
        if let Some((cost, _)) = self.refused.remove(&key) {
            self.pattern_bytes = self.pattern_bytes.saturating_sub(cost);
        }
        if self.with_patterns.remove(&key).is_none() {
            return;
        }
        for p in &triggers.patterns {
            let Some(&(at, cost)) = self.chunk_of.get(p) else {
                continue;
            };
            let Some(chunk) = self.chunks.get_mut(at) else {
                continue;
            };
            let Some(pos) = chunk.members.iter().position(|(q, _)| q == p) else {
                continue;
            };
            let Some((_, owners)) = chunk.members.get_mut(pos) else {
                continue;
            };
            owners.remove(key);
            if owners.is_empty() {
                chunk.members.remove(pos);
                chunk.dirty = true;
                self.chunk_of.remove(p);
                self.pattern_bytes = self.pattern_bytes.saturating_sub(cost);
            }
        }
    }

    /// The patterns left out: they do not compile (within [`MAX_PATTERN_SIZE`]), or the
    /// index's patterns had reached [`MAX_TOTAL_PATTERN_SIZE`].
    pub(crate) fn diagnostics(&self) -> impl Iterator<Item = &Diagnostic> {
        self.refused.values().flat_map(|(_, d)| d)
    }

    /// Recompile the pattern sets changed since the last call.
    pub(crate) fn finish(&mut self) {
        for chunk in self.chunks.iter_mut().filter(|c| c.dirty) {
            chunk.rebuild();
        }
    }

    /// Every skill whose triggers match `probe`, and which of its triggers do.
    pub(crate) fn matches(&self, probe: &Probe<'_>) -> TriggerMatches {
        let mut hits = Vec::new();
        self.keywords.find(&probe.words, &probe.word_at, |k, i| {
            hits.push((k, TriggerKind::Keyword, i));
        });
        self.verbs.find(&probe.stems, &probe.stem_at, |k, i| {
            hits.push((k, TriggerKind::Verb, i));
        });
        for chunk in &self.chunks {
            chunk.matching(probe.text, |owners| {
                owners.each(|key, i| hits.push((key, TriggerKind::Pattern, i)));
            });
        }
        TriggerMatches::new(hits)
    }
}

/// A hasher for the `u64` skill keys of the index's own maps: one multiplication instead
/// of SipHash (the keys are a counter, not input), so a query with hundreds of triggered
/// candidates does not spend its time hashing.
#[derive(Debug, Default, Clone, Copy)]
pub(crate) struct KeyHasher(u64);

impl std::hash::Hasher for KeyHasher {
    fn finish(&self) -> u64 {
        self.0
    }

    fn write(&mut self, bytes: &[u8]) {
        for b in bytes {
            self.0 = (self.0.rotate_left(8) ^ u64::from(*b)).wrapping_mul(0x9E37_79B9_7F4A_7C15);
        }
    }

    fn write_u64(&mut self, n: u64) {
        self.0 = (self.0 ^ n).wrapping_mul(0x9E37_79B9_7F4A_7C15);
    }
}

/// A map keyed by skill key, hashed with [`KeyHasher`].
pub(crate) type KeyMap<V> = HashMap<u64, V, std::hash::BuildHasherDefault<KeyHasher>>;

#[cfg(test)]
#[path = "triggers_tests.rs"]
mod tests;
