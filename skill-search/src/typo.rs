//! Typo matching: request words the index does not know are matched to the index's own
//! terms before the gate and the ranking read the request (in `search` and `select`
//! alike).
//!
//! A word is looked at only when all of these hold: it survives the analyzer (not a stop
//! word), its analysed term is used by no indexed skill, it is at least [`MIN_TYPO_CHARS`]
//! and at most [`MAX_TYPO_CHARS`] ASCII letters long, and it is not a whole word of the embedding table's vocabulary (an
//! English word the skills happen not to use, "Haskell" or "sourdough", is not a typo).
//! Its term is then matched to the terms of the skills' names and descriptions (not their
//! bodies, whose long tail of rare words holds a near miss for most words no skill covers)
//! within [`max_edits`] edits (Damerau: a swap of two neighbouring letters is one edit), in
//! the symmetric-delete table kept with the index (`typo_table.rs`).
//! The nearest term wins; among equally near ones, the one most skills use; then the first
//! in byte order. The word in the request is replaced by a spelling that the analyzer
//! turns into that term (the request's own ending kept when it can be), so the lexical
//! score, the semantic signal and the gate all read the corrected word. Each correction is
//! reported, and the reason of each result names it.
//!
//! Work is linear in the request: at most [`MAX_CORRECTED_WORDS`] words are looked up.

use crate::Error;
use crate::SkillIndex;
use crate::index::State;
use crate::text::{clip, tokens};
use crate::typo_table::{MAX_TYPO_CHARS, MIN_TYPO_CHARS};

/// Starts the note a result's reason gets when request words the index does not know were
/// read as words it does (the corrections follow: `"procesing" as "processing"`).
pub const CORRECTED_REASON: &str = "; read ";
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
                || word.len() > MAX_TYPO_CHARS
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

    /// `message` with the words the index does not know matched to its terms (see the
    /// module documentation).
    pub(crate) fn correct(&self, message: &str) -> Result<Corrected, Error> {
        let message = clip(message);
        let mut check = self.english.clone();
        let mut spans: Vec<((usize, usize), Correction)> = Vec::new();
        let st = self.state.read().map_err(|_| Error::Poisoned)?;
        for u in self.unknown_words(message, &st) {
            let Some((_, _, term)) = st.typos.nearest(&u.stem, u.edits, |id| st.terms.df(id))
            else {
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

/// What the reason of a selected skill adds when request words were corrected:
/// `; read "procesing" as "processing"` (each correction, in request order).
pub(crate) fn note(corrections: &[Correction]) -> Option<String> {
    if corrections.is_empty() {
        return None;
    }
    let each: Vec<String> = corrections
        .iter()
        .map(|c| format!("\"{}\" as \"{}\"", c.from, c.to))
        .collect();
    Some(format!("{}{}", CORRECTED_REASON, each.join(", ")))
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

    fn write_skill(dir: &std::path::Path, name: &str, description: &str) {
        let folder = dir.join(name);
        std::fs::create_dir_all(&folder).unwrap();
        std::fs::write(
            folder.join("SKILL.md"),
            format!("---\nname: {name}\ndescription: {description}\n---\n# {name}\n"),
        )
        .unwrap();
    }

    fn registry_of(dir: &std::path::Path) -> Registry {
        Registry::load(RegistryConfig::with_sources(vec![Source::new(dir, "user")]))
    }

    /// An index of `(name, description)` skills, and its folder.
    fn index_of(skills: &[(&str, &str)]) -> (tempfile::TempDir, SkillIndex) {
        let dir = tempfile::tempdir().unwrap();
        for (name, description) in skills {
            write_skill(dir.path(), name, description);
        }
        let index = SkillIndex::build(registry_of(dir.path()).snapshot()).unwrap();
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

    #[test]
    fn words_and_terms_longer_than_the_most_are_left_alone() {
        // Made-up words (no English word, no stemmer ending) of the most letters and one more.
        let at_most = "qwrtplkjhgfdszxcvbnmqwrz";
        let over = "zxcvbnmqwrtplkjhgfdsqwrtk";
        assert_eq!(
            (at_most.len(), over.len()),
            (MAX_TYPO_CHARS, MAX_TYPO_CHARS + 1)
        );
        let (_dir, index) = index_of(&[
            ("long-one", &format!("Handles {at_most} jobs.")),
            ("long-two", &format!("Handles {over} jobs.")),
        ]);
        let typo = |w: &str| format!("{}x{}", &w[..10], &w[11..]);
        assert_eq!(
            fixes(&index, &typo(at_most)),
            [pair(&typo(at_most), at_most)]
        );
        assert!(fixes(&index, &typo(over)).is_empty());
    }

    #[test]
    fn search_reads_corrected_words_and_says_so() {
        let (_dir, index) = dance_index();
        let hits = index
            .search(&crate::SearchRequest {
                text: "sprdsheets formulas",
                ..Default::default()
            })
            .unwrap();
        assert_eq!(hits[0].name, "spreadsheet");
        assert!(
            hits[0]
                .reason
                .ends_with("; read \"sprdsheets\" as \"spreadsheets\""),
            "{}",
            hits[0].reason
        );
        // A misspelled word alone still finds its skill.
        let hits = index
            .search(&crate::SearchRequest {
                text: "mangoe pikcles",
                ..Default::default()
            })
            .unwrap();
        assert_eq!(hits[0].name, "mango-pickles");
    }

    #[test]
    fn the_gate_reads_the_corrected_words_not_the_raw_ones() {
        let (_dir, index) = dance_index();
        let req = crate::SearchRequest {
            text: "sprdsheets formulas",
            ..Default::default()
        };
        let on = crate::params::Params::SHIPPED;
        let off = crate::params::Params { typos: false, ..on };
        let (_, read) = index.search_with(&req, &on).unwrap();
        let (_, raw) = index.search_with(&req, &off).unwrap();
        // Corrected, every word is one the skills use, and the best candidate holds more
        // of the request; raw, the misspelled word is unknown.
        assert_eq!(read.unknown, 0.0, "{read:?}");
        assert!(raw.unknown > 0.0, "{raw:?}");
        assert!(read.top_lex > raw.top_lex, "{read:?} vs {raw:?}");
        assert!(read.z > raw.z, "{read:?} vs {raw:?}");
    }

    #[test]
    fn a_reload_files_new_terms_and_forgets_those_of_skills_gone() {
        let dir = tempfile::tempdir().unwrap();
        write_skill(dir.path(), "tango-steps", "Teach tango steps.");
        write_skill(dir.path(), "mango-pickles", "Make mango pickles.");
        let registry = registry_of(dir.path());
        let index = SkillIndex::build(registry.snapshot()).unwrap();
        assert_eq!(fixes(&index, "mangi"), [pair("mangi", "mango")]);
        assert!(fixes(&index, "wqltzing").is_empty());
        std::fs::remove_dir_all(dir.path().join("mango-pickles")).unwrap();
        write_skill(dir.path(), "wqltz-night", "Host a wqltz night.");
        index.apply(&registry.reload()).unwrap();
        assert!(
            fixes(&index, "mangi").is_empty(),
            "mango left with its skill"
        );
        assert_eq!(fixes(&index, "wqltzz"), [pair("wqltzz", "wqltz")]);
        // A term two skills use stays while one of them does.
        write_skill(dir.path(), "tango-music", "Pick tango music.");
        index.apply(&registry.reload()).unwrap();
        std::fs::remove_dir_all(dir.path().join("tango-steps")).unwrap();
        index.apply(&registry.reload()).unwrap();
        assert_eq!(fixes(&index, "tnago"), [pair("tnago", "tango")]);
    }
}
