//! Typo matching: request words the index does not know are matched to the index's own
//! terms before the gate and the ranking read the request.
//!
//! A word is looked at only when all of these hold: it survives the analyzer (not a stop
//! word), its analysed term is used by no indexed skill, it is at least [`MIN_TYPO_CHARS`]
//! ASCII letters long, and it is not a whole word of the embedding table's vocabulary (an
//! English word the skills happen not to use, "Haskell" or "sourdough", is not a typo).
//! Its term is then matched to the terms of the skills' names and descriptions (not their
//! bodies, whose long tail of rare words holds a near miss for most words no skill covers)
//! within [`max_edits`] edits (Damerau:
//! a swap of two neighbouring letters is one edit), by tantivy's Levenshtein automata run
//! over tantivy's own term dictionary (the automaton `FuzzyTermQuery` builds, one per word).
//! The nearest term wins; among equally near ones, the one most skills use; then the first
//! in byte order. The word in the request is replaced by a spelling that the analyzer
//! turns into that term (the request's own ending kept when it can be), so the lexical
//! score, the semantic signal and the gate all read the corrected word. Each correction is
//! reported, and selection names it in the reason of what it selects.
//!
//! Work is linear in the request: at most [`MAX_CORRECTED_WORDS`] words are looked up.

use levenshtein_automata::{DFA, Distance, LevenshteinAutomatonBuilder};
use std::sync::OnceLock;
use tantivy_fst::Automaton;

use crate::Error;
use crate::SkillIndex;
use crate::index::State;
use crate::params::{F_DESC, F_NAME};
use crate::text::{clip, tokens};

/// Words shorter than this many characters are never corrected: a short word is a few
/// edits from too many others.
pub(crate) const MIN_TYPO_CHARS: usize = 5;
/// Words of at least this many characters may be corrected by two edits; shorter ones by one.
pub(crate) const TWO_EDITS_CHARS: usize = 8;
/// Most words of one request looked up in the term dictionary (the first unknown ones).
pub(crate) const MAX_CORRECTED_WORDS: usize = 8;

/// One corrected word.
#[derive(Debug, Clone, PartialEq, Eq)]
pub(crate) struct Correction {
    /// The word as the request wrote it, lowercased.
    pub(crate) from: String,
    /// The word put in its place.
    pub(crate) to: String,
}

/// A request after typo matching.
#[derive(Debug, Clone, PartialEq, Eq)]
pub(crate) struct Corrected {
    /// The request with every corrected word replaced (the request itself when none was).
    pub(crate) text: String,
    /// The corrections, in request order.
    pub(crate) corrections: Vec<Correction>,
}

/// Most edits a word of `chars` characters may be corrected by (0: not corrected).
pub(crate) fn max_edits(chars: usize) -> u8 {
    if chars < MIN_TYPO_CHARS {
        0
    } else if chars < TWO_EDITS_CHARS {
        1
    } else {
        2
    }
}

/// The automaton builders for one and two edits with transpositions (building one costs
/// milliseconds, so each is built once).
fn builder(edits: u8) -> &'static LevenshteinAutomatonBuilder {
    static ONE: OnceLock<LevenshteinAutomatonBuilder> = OnceLock::new();
    static TWO: OnceLock<LevenshteinAutomatonBuilder> = OnceLock::new();
    let cell = if edits <= 1 { &ONE } else { &TWO };
    cell.get_or_init(|| LevenshteinAutomatonBuilder::new(edits.clamp(1, 2), true))
}

/// A Levenshtein DFA as an FST automaton (what tantivy's `FuzzyTermQuery` wraps).
struct Fuzzy<'a>(&'a DFA);

impl Automaton for Fuzzy<'_> {
    type State = u32;

    fn start(&self) -> u32 {
        self.0.initial_state()
    }

    fn is_match(&self, state: &u32) -> bool {
        matches!(self.0.distance(*state), Distance::Exact(_))
    }

    fn can_match(&self, state: &u32) -> bool {
        *state != levenshtein_automata::SINK_STATE
    }

    fn accept(&self, state: &u32, byte: u8) -> u32 {
        self.0.transition(*state, byte)
    }
}

/// A request word the index does not know that typo matching looks up.
pub(crate) struct Unknown {
    /// Where it is in the (clipped) request, in bytes.
    pub(crate) span: (usize, usize),
    /// The word as written, lowercased.
    pub(crate) word: String,
    /// Its analysed term.
    pub(crate) stem: String,
    /// Most edits it may be corrected by.
    pub(crate) edits: u8,
}

/// The best match so far: (edits, skills using the term, term).
pub(crate) type Nearest = Option<(u8, u32, String)>;

/// Whether a term at `d` edits used by `df` skills beats `best` (nearer, then more used,
/// then first in byte order).
pub(crate) fn beats(d: u8, df: u32, term: &str, best: &Nearest) -> bool {
    match best {
        _ if df == 0 => false,
        None => true,
        Some((bd, bdf, bt)) => {
            (d, std::cmp::Reverse(df), term) < (*bd, std::cmp::Reverse(*bdf), bt.as_str())
        }
    }
}

impl SkillIndex {
    /// The words of `message` (clipped) that typo matching looks up, at most
    /// [`MAX_CORRECTED_WORDS`] (see the module documentation).
    pub(crate) fn unknown_words(&self, message: &str, st: &State) -> Vec<Unknown> {
        let mut english = self.english.clone();
        let known = |term: &str| st.terms.get(term).is_some_and(|i| st.terms.df(i) > 0);
        let mut out = Vec::new();
        let mut stream = english.token_stream(message);
        while stream.advance() {
            let tok = stream.token();
            if known(&tok.text) {
                continue;
            }
            let Some(word) = message.get(tok.offset_from..tok.offset_to) else {
                continue;
            };
            let word = word.to_lowercase();
            let edits = max_edits(word.chars().count());
            if edits == 0
                || !word.bytes().all(|b| b.is_ascii_lowercase())
                || self.embedder.knows_word(&word)
            {
                continue;
            }
            if out.len() == MAX_CORRECTED_WORDS {
                break;
            }
            out.push(Unknown {
                span: (tok.offset_from, tok.offset_to),
                word,
                stem: tok.text.clone(),
                edits,
            });
        }
        out
    }

    /// The index term nearest `stem` within `edits` edits: tantivy's term dictionary of each
    /// text field searched with a Levenshtein automaton (transpositions count one edit).
    pub(crate) fn nearest_term(
        &self,
        searcher: &tantivy::Searcher,
        st: &State,
        stem: &str,
        edits: u8,
    ) -> Result<Nearest, Error> {
        let dfa = builder(edits).build_dfa(stem);
        let mut best: Nearest = None;
        for segment in searcher.segment_readers() {
            for field in self.typo_fields() {
                let inverted = segment.inverted_index(field)?;
                let mut terms = inverted
                    .terms()
                    .search(Fuzzy(&dfa))
                    .into_stream()
                    .map_err(tantivy::TantivyError::from)?;
                while terms.advance() {
                    let Ok(term) = std::str::from_utf8(terms.key()) else {
                        continue;
                    };
                    let Distance::Exact(d) = dfa.eval(term) else {
                        continue;
                    };
                    // Live skills only: the dictionary keeps deleted documents' terms until
                    // a merge.
                    let df = st.terms.get(term).map_or(0, |i| st.terms.df(i));
                    if beats(d, df, term, &best) {
                        best = Some((d, df, term.to_owned()));
                    }
                }
            }
        }
        Ok(best)
    }

    /// The fields whose terms typo matching corrects to: the names and descriptions (what
    /// skills say they do). A body's long tail of rare words is where a word no skill
    /// covers ("ansible") finds a near miss that would open the gate.
    pub(crate) fn typo_fields(&self) -> [tantivy::schema::Field; 2] {
        [self.fields.text[F_NAME], self.fields.text[F_DESC]]
    }

    /// `message` with the words the index does not know matched to its terms (see the
    /// module documentation).
    pub(crate) fn correct(&self, message: &str) -> Result<Corrected, Error> {
        let message = clip(message);
        let mut check = self.english.clone();
        let mut spans: Vec<((usize, usize), Correction)> = Vec::new();
        let st = self.state.read().map_err(|_| Error::Poisoned)?;
        let searcher = self.reader.searcher();
        for u in self.unknown_words(message, &st) {
            let Some((_, _, term)) = self.nearest_term(&searcher, &st, &u.stem, u.edits)? else {
                continue;
            };
            if let Some(to) = spelling(&mut check, &u.word, &u.stem, &term) {
                spans.push((u.span, Correction { from: u.word, to }));
            }
        }
        drop(st);
        let mut text = String::with_capacity(message.len());
        let mut at = 0;
        for ((from, to), c) in &spans {
            text.push_str(message.get(at..*from).unwrap_or_default());
            text.push_str(&c.to);
            at = *to;
        }
        text.push_str(message.get(at..).unwrap_or_default());
        Ok(Corrected {
            text,
            corrections: spans.into_iter().map(|(_, c)| c).collect(),
        })
    }
}

/// A spelling of the index's `term` to put in place of `word` (whose analysed term is
/// `stem`): `word` with its stem swapped for `term` (so "procesing" becomes "processing"),
/// else the term itself, whichever the analyzer turns back into `term`; `None` when neither
/// does.
fn spelling(
    english: &mut tantivy::tokenizer::TextAnalyzer,
    word: &str,
    stem: &str,
    term: &str,
) -> Option<String> {
    let mut tries = Vec::with_capacity(2);
    if let Some(ending) = word.strip_prefix(stem) {
        tries.push(format!("{term}{ending}"));
    }
    tries.push(term.to_owned());
    tries.into_iter().find(|t| tokens(english, t) == [term])
}

#[cfg(test)]
#[allow(clippy::unwrap_used, clippy::expect_used, clippy::panic)]
mod tests {
    use super::*;

    use skill_registry::{Registry, RegistryConfig, Source};

    /// An index of `(name, description)` skills, and its folder.
    fn index_of(skills: &[(&str, &str)]) -> (tempfile::TempDir, SkillIndex) {
        let dir = tempfile::tempdir().unwrap();
        for (name, description) in skills {
            let folder = dir.path().join(name);
            std::fs::create_dir(&folder).unwrap();
            std::fs::write(
                folder.join("SKILL.md"),
                format!("---\nname: {name}\ndescription: {description}\n---\n# {name}\n"),
            )
            .unwrap();
        }
        let registry = Registry::load(RegistryConfig::with_sources(vec![Source::new(
            dir.path(),
            "user",
        )]));
        let index = SkillIndex::build(registry.snapshot()).unwrap();
        (dir, index)
    }

    fn dance_index() -> (tempfile::TempDir, SkillIndex) {
        index_of(&[
            ("tango-steps", "Teach tango steps."),
            ("tango-music", "Pick tango music for a milonga."),
            ("mango-pickles", "Make mango pickles."),
            ("spreadsheet", "Clean up spreadsheets and their formulas."),
        ])
    }

    fn fixes(index: &SkillIndex, text: &str) -> Vec<(String, String)> {
        index
            .correct(text)
            .unwrap()
            .corrections
            .into_iter()
            .map(|c| (c.from, c.to))
            .collect()
    }

    fn pair(from: &str, to: &str) -> (String, String) {
        (from.to_owned(), to.to_owned())
    }

    #[test]
    fn the_most_used_term_at_the_least_distance_wins() {
        let (_dir, index) = dance_index();
        // One edit from both: "tango" (two skills) beats "mango" (one).
        assert_eq!(fixes(&index, "xango"), [pair("xango", "tango")]);
        // One edit from "mango", two from "tango": the nearer wins however rare.
        assert_eq!(fixes(&index, "mangi"), [pair("mangi", "mango")]);
        // A swap of two letters is one edit.
        assert_eq!(fixes(&index, "tnago"), [pair("tnago", "tango")]);
        // Two edits only for long words.
        assert_eq!(
            fixes(&index, "sprdsheets"),
            [pair("sprdsheets", "spreadsheets")]
        );
        assert!(
            fixes(&index, "mngoe").is_empty(),
            "two edits in a short word"
        );
        let c = index.correct("Clean my SPREDSHEET, pls").unwrap();
        assert_eq!(c.text, "Clean my spreadsheet, pls");
    }

    #[test]
    fn known_short_and_english_words_are_left_alone() {
        let (_dir, index) = dance_index();
        // Known to the index (as written or by stem): never changed.
        assert!(fixes(&index, "tango mangos formulas").is_empty());
        // Too short, at the edge: four letters stay, five are read.
        assert!(fixes(&index, "tngo").is_empty());
        assert_eq!(fixes(&index, "tanog"), [pair("tanog", "tango")]);
        // An English word the skills do not use is not a typo of one they do.
        for word in ["manga", "tangle"] {
            assert!(fixes(&index, word).is_empty(), "{word}");
        }
        let c = index.correct("nothing to read here").unwrap();
        assert_eq!(c.text, "nothing to read here");
    }

    #[test]
    fn at_most_the_first_unknown_words_are_looked_up() {
        let (_dir, index) = dance_index();
        let text = ["xango"; MAX_CORRECTED_WORDS + 1].join(" ");
        assert_eq!(fixes(&index, &text).len(), MAX_CORRECTED_WORDS);
        // English words and known ones do not count towards the limit.
        let text = format!("tango mange {}", ["xango"; MAX_CORRECTED_WORDS].join(" "));
        assert_eq!(fixes(&index, &text).len(), MAX_CORRECTED_WORDS);
    }

    #[test]
    fn edits_grow_with_the_word_at_their_edges() {
        assert_eq!(max_edits(MIN_TYPO_CHARS - 1), 0);
        assert_eq!(max_edits(MIN_TYPO_CHARS), 1);
        assert_eq!(max_edits(TWO_EDITS_CHARS - 1), 1);
        assert_eq!(max_edits(TWO_EDITS_CHARS), 2);
    }

    #[test]
    fn a_swap_of_neighbouring_letters_is_one_edit() {
        let dfa = builder(1).build_dfa("spreadsheet");
        assert_eq!(dfa.eval("spreadsheet"), Distance::Exact(0));
        assert_eq!(dfa.eval("spraedsheet"), Distance::Exact(1));
        assert!(matches!(dfa.eval("sperdasheet"), Distance::AtLeast(_)));
    }

    #[test]
    fn the_spelling_keeps_the_requests_ending_when_the_analyzer_agrees() {
        let mut english = crate::text::english();
        assert_eq!(
            spelling(&mut english, "procesing", "proces", "process").as_deref(),
            Some("processing")
        );
        assert_eq!(
            spelling(&mut english, "invoise", "invois", "invoic").as_deref(),
            Some("invoice")
        );
        // The stem is not where the word starts: the term itself.
        assert_eq!(
            spelling(&mut english, "invoicy", "invoici", "invoic").as_deref(),
            Some("invoic")
        );
        // Neither analyses back to the term: no spelling.
        assert_eq!(
            spelling(&mut english, "runnign", "runnign", "running"),
            None
        );
    }
}
