//! `skill-search`: which skills fit a request, found in well under a millisecond.
//!
//! It owns three things (SPEC section 6):
//!
//! 1. **The skill index** ([`SkillIndex`]): one tantivy document per loaded skill (name,
//!    description with tags, triggers and domain, the body's headings, the body), each field
//!    through an English analyzer (lowercase, ASCII folding, stop words, Porter stemming),
//!    plus per-field term frequencies kept in memory. It lives in RAM ([`Storage::Ram`]) or,
//!    with the `disk` feature, in a memory-mapped folder. It is built from a registry
//!    [`Snapshot`](skill_registry::Snapshot) and follows the registry's change sets with
//!    [`SkillIndex::apply`], which re-indexes only the added and changed skills.
//! 2. **Ranking** ([`SkillIndex::search`]): tantivy finds the candidates (plus skills the
//!    request names and skills whose toolsets `triggers` match: keywords and verbs on word
//!    boundaries, patterns as linear-time regular expressions, a pattern that does not
//!    compile is a diagnostic). Each candidate is scored with BM25F over its four fields
//!    (per-field weights and length normalisation, so a long body does not swamp a short
//!    description), a bonus when the request contains its whole name, and a penalty from the
//!    skill's own limits: a request that matches a "Not for ..." / "Do not use when ..." /
//!    "use X instead" clause, or misses an "ONLY when ..." clause, counts against it (those
//!    clauses never count for it). The lexical score is fused with a semantic similarity as a
//!    weighted sum of z-scores over the candidates. Multi-intent requests are split at
//!    sentence ends and connectives, and each part's best skill is moved up right after the
//!    overall best, so the first three cover every intent. Order: explicit mention of the
//!    skill's name, then an exact phrase of the skill, then the fused score with trigger
//!    bonuses, then recent use ([`SkillIndex::record_use`]), then the name.
//! 3. **Selection** ([`SkillIndex::select`]): up to `max_skills` (default 3) skills whose
//!    confidence clears a threshold (default [`DEFAULT_THRESHOLD`]), each with a reason,
//!    `no_skill_needed` when none does, and the toolsets disclosure [`Tier`] (0 nothing, 1
//!    the breadcrumb, 2 names and brief descriptions when the request asks what skills exist
//!    or candidates reach only [`DEFAULT_LISTING_THRESHOLD`], 3 the selected skills' full
//!    instructions within a token budget). [`Selection`] serialises to the JSON of
//!    agent-skills-integration 2.3 (`selected_skills`, `no_skill_needed`) plus `disclosure`.
//!    Before ranking (in [`SkillIndex::search`] too), request words no skill uses are
//!    matched to the index's terms (typo matching: edit distance with transpositions, in
//!    a symmetric-delete table of the names' and descriptions' terms kept with the index;
//!    short words and English words are left alone; a correction is named in the reason,
//!    after [`CORRECTED_REASON`]). Each intent of a request cut at an explicit join ("and also",
//!    "then", ";", a second question) gets a slot of its own, and near-duplicate skills share
//!    one slot, the others named in the entry's `alternatives`.
//!
//! Plus **trigger evals** for pack authors ([`evaluate_triggers`] over the Agent Skills
//! `[{"query", "should_trigger"}]` file, [`TRIGGER_EVAL_FILE`] in a skill's folder) and
//! **markdown notes search** ([`NotesIndex`], markdown-first section 8): any folder of `.md`
//! files, ranked with `**highlighted**` snippets, kept current with
//! [`NotesIndex::update_paths`] or [`NotesIndex::rebuild`].
//!
//! # Confidence and the no-skill gate
//!
//! A candidate's confidence is
//! `1 - (1 - evidence * kept * logistic(gate - rel * gap)) * (1 - p_explicit) * (1 - p_phrase) * Π(1 - p_trigger)`
//! (noisy-OR; a factor counts only when the candidate has it), capped at the confidence
//! of every candidate ranked above it, so that confidence never rises down the list:
//! - `gate` is a logistic model of "the ranking has a right skill to offer for this
//!   request" (fitted on requests whose first three hold a right skill against requests
//!   no skill fits, over a large corpus and over each of its packs alone: a host with one
//!   pack must refuse what it cannot answer) over the highest raw lexical score among the
//!   candidates, that score's share of the request's idf mass (plus one rare term's, so
//!   that a request that says little is not fully covered), the best semantic
//!   similarity, the share of the request's words no skill uses and how rare the rarest
//!   request word is that the first candidate lacks (a request naming something specific
//!   that the best skill never mentions);
//! - `gap` is how far the candidate's fused score is below the best one (the shipped fit
//!   sets `rel` to 0, so it does not count now);
//! - `evidence` is the candidate's lexical score over a fitted share of the highest one,
//!   at most 1: a candidate with much less lexical evidence than the best keeps its
//!   confidence only in proportion;
//! - `kept` is what the candidate's declared limits (a "not for" clause of its
//!   description, a `when_not_to_use` entry, an item of a "when not to use" list) leave
//!   when they match the request: they rule out the request's idf mass in the
//!   best-matching clause that the skill's other text does not use, over that mass plus
//!   the mass of the request's words the skill holds. A "do not use ..." said in passing
//!   in a body lowers only its score;
//! - an explicit mention of the skill's name, an exact phrase of it and its matched
//!   triggers raise it by probabilities set by hand (real packs declare almost no
//!   triggers to fit them on).
//!
//! With the `transformer` feature and a model given to the index
//! (`SkillIndex::with_transformer`, `Transformer` loaded from a folder the host keeps), the
//! gate has one more input, the model's cosine of the request and the first candidate's
//! description, and its weights (with `evidence` and `rel`) are those fitted with it.
//!
//! So at the default threshold of 0.5 a request gets `no_skill_needed` when the gate says
//! no skill fits (or when every candidate's own limits rule it out), and the first
//! candidates with enough of the best one's evidence are selected with it.
//!
//! The ranking's and the gate's numbers (BM25 k1 and per-field b, field weights, the name
//! bonus and limit penalties, the fusion weights, the gate with its length input, `rel`, the
//! evidence share, the multi-intent diversity weight) are private constants fitted by
//! `cargo xtask bench select-fit` on the *tuning* half of `xtask/data/select-requests.jsonl`
//! (requests written blind over the 1,876-skill public corpus, with misspelled, terse,
//! chatty, multi-intent and no-skill requests). The typo step's word lengths, the length at
//! which a request counts as long and the siblings' similarity thresholds are set by hand
//! and not yet fitted. The held-out half is only ever scored, by `cargo xtask bench select`,
//! against the whole corpus and against one pack at a time; it headlines what a host gets
//! (the selected set, per style bucket) beside plain BM25 and a BM25 + MiniLM
//! reciprocal-rank-fusion peer. [`evaluate_triggers`] is what `skill-server eval` runs, and
//! a section of the pack report.

//! # Bad input
//!
//! Query text is analyzed into terms and the query is built from them programmatically, so
//! `AND`, `:`, quotes, `*` or unbalanced parentheses are plain text, never a query-language
//! error. Queries longer than [`MAX_QUERY_BYTES`] are cut at a character boundary, and at
//! most [`MAX_QUERY_TERMS`] terms are kept; an empty or all-stop-word query returns no
//! text matches. Notes with broken frontmatter are indexed as plain text with a warning.
//!
//! ```
//! use std::sync::Arc;
//! use skill_registry::{Registry, RegistryConfig, Source};
//! use skill_search::{SearchRequest, SelectOptions, SkillIndex};
//!
//! let dir = tempfile::tempdir().unwrap();
//! let skill = dir.path().join("pdf-forms");
//! std::fs::create_dir(&skill).unwrap();
//! std::fs::write(
//!     skill.join("SKILL.md"),
//!     "---\nname: pdf-forms\ndescription: Fill in PDF forms and extract their fields.\n---\n# PDF forms\n",
//! ).unwrap();
//! let registry = Registry::load(RegistryConfig::with_sources(vec![Source::new(dir.path(), "user")]));
//! let index = SkillIndex::build(registry.snapshot()).unwrap();
//!
//! let hits = index.search(&SearchRequest { text: "fill in this PDF form", limit: 5, ..Default::default() }).unwrap();
//! assert_eq!(hits[0].name, "pdf-forms");
//!
//! let selection = index.select("please fill in the PDF form I attached", &SelectOptions::default()).unwrap();
//! assert_eq!(selection.selected_skills[0].skill_id, "pdf-forms");
//! assert!(!selection.no_skill_needed);
//! ```

#![deny(missing_docs)]

mod doc;
mod embed;
mod error;
mod hit;
mod index;
mod negation;
mod notes;
mod params;
mod search;
mod select;
mod slots;
mod text;
mod trigger_eval;
mod triggers;
mod typo;
#[cfg(feature = "tuning")]
mod typo_automata;
mod typo_table;

pub use doc::MAX_SKILL_TERMS;
#[cfg(feature = "transformer")]
pub use embed::transformer::{MAX_CACHED_TEXTS, MAX_MODEL_BYTES, MAX_TOKENS, Transformer};
pub use error::Error;
pub use hit::Match;
pub use index::{
    DEFAULT_LIMIT, DISK_INDEX_DIR, Filter, MAX_LIMIT, SearchRequest, SkillIndex, Storage,
    UpdateStats,
};
pub use notes::{MAX_NOTE_RESULTS, MAX_NOTES, NoteHit, NoteText, NotesIndex, NotesUpdate};
pub use select::{
    CUT_BODY_NOTE, DEFAULT_BUDGET_TOKENS, DEFAULT_LISTING_THRESHOLD, DEFAULT_MAX_SKILLS,
    DEFAULT_THRESHOLD, Disclosed, MAX_MAX_SKILLS, PROACTIVE_REASON, SelectOptions, Selected,
    Selection, Tier, asks_for_listing,
};
pub use text::{MAX_QUERY_BYTES, MAX_QUERY_TERMS};
pub use trigger_eval::{
    MAX_TRIGGER_CASES, TRIGGER_EVAL_FILE, TriggerCase, TriggerOutcome, TriggerReport,
    evaluate_triggers, parse_trigger_cases,
};
pub use triggers::{TriggerHit, TriggerKind};
pub use typo::CORRECTED_REASON;

/// Ranking internals for the fitting tool (`cargo xtask bench select-fit`): the parameters and
/// the entry points that take them. Behind the `tuning` feature; not a stable API.
#[cfg(feature = "tuning")]
pub mod tuning {
    pub use crate::index::Gate;
    pub use crate::params::Params;
    pub use crate::typo_automata::TypoTimes;
    use crate::{Error, Match, SearchRequest, SelectOptions, Selection, SkillIndex};

    /// Typo matching's symmetric-delete table (what ships) and the Levenshtein automata it
    /// replaced, timed on the same words: those of `requests` that typo matching looks up.
    pub fn compare_typo_matchers(
        index: &SkillIndex,
        requests: &[String],
    ) -> Result<TypoTimes, Error> {
        index.compare_typo_matchers(requests)
    }

    /// [`SkillIndex::search`] with parameters `p`, and the request's gate.
    pub fn search(
        index: &SkillIndex,
        req: &SearchRequest<'_>,
        p: &Params,
    ) -> Result<(Vec<Match>, Gate), Error> {
        index.search_with(req, p)
    }

    /// [`SkillIndex::select`] with parameters `p`.
    pub fn select(
        index: &SkillIndex,
        message: &str,
        opts: &SelectOptions,
        p: &Params,
    ) -> Result<Selection, Error> {
        index.select_with(message, opts, p)
    }
}

/// The README's examples, compiled and run as doc tests.
#[cfg(doctest)]
#[doc = include_str!("../README.md")]
pub struct ReadmeDoctests;
