//! `skill-search`: which skills fit a request, found in well under a millisecond.
//!
//! It owns three things (SPEC section 6):
//!
//! 1. **The skill index** ([`SkillIndex`]): one tantivy document per loaded skill, with
//!    fields weighted from strongest to weakest: the name ([`BOOST_NAME`]; plus an exact
//!    whole-name field, [`BOOST_NAME_EXACT`]), trigger keywords and verbs
//!    ([`BOOST_TRIGGERS`]), tags ([`BOOST_TAGS`]), description, summary and brief
//!    description ([`BOOST_DESCRIPTION`]), the actions domain ([`BOOST_DOMAIN`]) and the
//!    body ([`BOOST_BODY`]). Text goes through an English analyzer (lowercase, ASCII
//!    folding, stop words, Porter stemming). The index lives in RAM ([`Storage::Ram`]) or,
//!    with the `disk` feature, in a memory-mapped folder. It is built from a registry
//!    [`Snapshot`](skill_registry::Snapshot) and then follows the registry's change sets
//!    with [`SkillIndex::apply`], which re-indexes only the added and changed skills and
//!    deletes the removed ones; it never rebuilds for one edited skill.
//! 2. **Triggers and ranking** ([`SkillIndex::search`]): toolsets `triggers` match on word
//!    boundaries, case-insensitively (keywords by their words in order, verbs by stem so
//!    `waved` matches `wave`, patterns as regular expressions compiled once; a
//!    pattern that does not compile is a diagnostic, never a crash, and the regex engine
//!    runs in linear time so no pattern can hang a query). No query tries every skill's
//!    triggers in turn: keywords and verbs are looked up by the request's words and stems,
//!    and patterns are matched [`PATTERNS_PER_SET`] at a time with regex sets. Results are ordered by: explicit
//!    mention of the skill's name (`pdf-forms`, `/pdf-forms`, `$x`, "the x skill"), then an
//!    exact phrase of the skill (its name's words, a multi-word keyword or tag), then
//!    confidence from triggers and text to two decimals, then recent use (reported with
//!    [`SkillIndex::record_use`]), then the BM25 score, then the name, so ties are
//!    deterministic. Profile exclusions and model invocability are query-time [`Filter`]s.
//! 3. **Selection** ([`SkillIndex::select`]): up to `max_skills` (default 3) skills whose
//!    confidence clears a threshold (default [`DEFAULT_THRESHOLD`]), each with a reason,
//!    `no_skill_needed` when none does, and the toolsets disclosure [`Tier`]: 0 when no
//!    skill is available, 1 the breadcrumb `[N skills available]`, 2 names and brief
//!    descriptions (when the request asks what skills exist, or candidates reach only
//!    [`DEFAULT_LISTING_THRESHOLD`]), 3 the selected skills' full instructions within a
//!    token budget ([`CHARS_PER_TOKEN`] characters a token; skills that do not fit are
//!    listed in `omitted` for on-demand loading). [`Selection`] serialises to the JSON of
//!    agent-skills-integration 2.3 (`selected_skills`, `no_skill_needed`) plus
//!    `disclosure`. The seed also lists skills at tier 2 when they "have no triggers
//!    defined"; here every skill is matched by its text as well as its triggers, so that
//!    case becomes "candidates that fit only weakly", listed by name for the model to
//!    judge.
//!
//! Plus **markdown notes search** ([`NotesIndex`], markdown-first section 8): any folder of
//! `.md` files, titled by frontmatter `title` or the file name, with tags, body and path,
//! ranked results with `**highlighted**` snippets, kept current with
//! [`NotesIndex::update_paths`] (the host's watcher hands it changed paths) or
//! [`NotesIndex::rebuild`]. It is the engine behind a `markdown.search` skill.
//!
//! # How confidence is calibrated
//!
//! Confidence is a probability-like score in [0, 1], combined from independent pieces of
//! evidence with a noisy-OR: explicit mention ([`P_EXPLICIT`]), a phrase of the skill
//! ([`P_PHRASE`]), each trigger ([`P_KEYWORD`], [`P_VERB`], [`P_PATTERN`]), and text. The
//! text part is a logistic model over four measurements of a candidate: its *coverage*
//! of the request (the idf-weighted share of the request's terms found in its name,
//! description, tags, triggers or domain; body-only terms count
//! [`BODY_COVERAGE_WEIGHT`]), the idf-weighted *mass* of those terms and the part of it in
//! the *name* (in units of the idf of a term only one skill uses, so the scale does not
//! drift with the number of skills), and its BM25 score relative to the best candidate's.
//! Its weights ([`TEXT_BIAS`], [`TEXT_W_COVERAGE`], [`TEXT_W_MASS`], [`TEXT_W_NAME`],
//! [`TEXT_W_RELATIVE`]) were fitted by logistic regression on the labelled request set
//! kept in `skill-search/tests/data/requests.jsonl` (the requests over the 1,800-skill
//! corpus; every top-ten candidate an example, labelled right or wrong). The fitting is
//! reproducible in code ([`quality::fit_text_model`]), and [`quality::cross_validate`]
//! refits on k-1 folds of the requests and scores the held-out fold, so the held-out
//! accuracy and calibration stand beside the in-sample ones. So a confidence of 0.7
//! means "candidates scored like this were right about 7 times in 10 on that set".
//! Terms no skill uses stay in the coverage denominator, so a request about something no
//! skill covers scores low everywhere. `cargo xtask bench select` prints a calibration
//! table on every run (top candidates binned by confidence, with the share of each bin
//! that was right), so the claim can be checked rather than assumed; the trigger and
//! phrase probabilities are set by hand, since the corpus declares almost no triggers.
//! The default threshold [`DEFAULT_THRESHOLD`] (0.3) trades precision for recall: on the
//! set, top candidates scored 0.3 to 0.5 were right a little over half the time, those
//! from 0.5 up about four times in five or better, those under 0.3 about one time in five.
//! These figures are in-sample (the weights were fitted on the same requests), so treat
//! them as an upper bound for other skill collections; `cargo xtask bench select` prints
//! the cross-validated (held-out) figures and calibration beside them.

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

// Used by the ranking once it fuses the semantic signal with BM25; until then only its
// tests call it.
#[allow(dead_code)]
mod embed;
mod error;
mod index;
mod notes;
pub mod quality;
mod score;
mod select;
mod text;
mod triggers;

pub use error::Error;
pub use index::{
    BOOST_BODY, BOOST_DESCRIPTION, BOOST_DOMAIN, BOOST_NAME, BOOST_NAME_EXACT, BOOST_TAGS,
    BOOST_TRIGGERS, DEFAULT_LIMIT, DISK_INDEX_DIR, Filter, MAX_LIMIT, MAX_TURNS, MIN_CANDIDATES,
    Match, RARE_NAME_DOCS, SearchRequest, SkillIndex, Storage, TURN_WEIGHT, UpdateStats,
    WRITER_MEMORY_BYTES,
};
pub use notes::{
    MAX_NOTE_BYTES, MAX_NOTE_DEPTH, MAX_NOTE_RESULTS, MAX_NOTES, NOTE_BOOST_BODY, NOTE_BOOST_PATH,
    NOTE_BOOST_TAGS, NOTE_BOOST_TITLE, NoteHit, NotesIndex, NotesUpdate, SNIPPET_CHARS,
};
pub use score::{
    BODY_COVERAGE_WEIGHT, P_EXPLICIT, P_KEYWORD, P_PATTERN, P_PHRASE, P_VERB, TEXT_BIAS,
    TEXT_W_COVERAGE, TEXT_W_MASS, TEXT_W_NAME, TEXT_W_RELATIVE, TextFeatures, TextModel,
    UNKNOWN_TERM_WEIGHT,
};
pub use select::{
    CHARS_PER_TOKEN, DEFAULT_BUDGET_TOKENS, DEFAULT_LISTING_THRESHOLD, DEFAULT_MAX_SKILLS,
    DEFAULT_THRESHOLD, Disclosed, MAX_MAX_SKILLS, SelectOptions, Selected, Selection,
    TRUNCATED_MARK, Tier, asks_for_listing,
};
pub use text::{MAX_QUERY_BYTES, MAX_QUERY_TERMS, clip};
pub use triggers::{MAX_PATTERN_DFA_BYTES, PATTERNS_PER_SET, TriggerHit, TriggerKind};

/// The README's examples, compiled and run as doc tests.
#[cfg(doctest)]
#[doc = include_str!("../README.md")]
pub struct ReadmeDoctests;
