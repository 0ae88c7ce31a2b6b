//! The typo matcher that shipped before the symmetric-delete table (`typo_table.rs`),
//! kept only as the baseline of `cargo xtask bench select`'s timing row (crate feature
//! `tuning`): tantivy's Levenshtein automaton (transpositions one edit) per word, run over
//! tantivy's term dictionary of the names and descriptions. The same rule picks the best.

use std::sync::OnceLock;
use std::time::{Duration, Instant};

use levenshtein_automata::{DFA, Distance, LevenshteinAutomatonBuilder};
use tantivy_fst::Automaton;

use crate::index::State;
use crate::params::{F_DESC, F_NAME};
use crate::typo_table::{Nearest, TypoTable, beats};
use crate::{Error, SkillIndex};

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

impl SkillIndex {
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
            for field in [self.fields.text[F_NAME], self.fields.text[F_DESC]] {
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
}

/// The two typo matchers timed on the same words (the unknown words of some requests).
#[derive(Debug, Clone, Copy, Default, PartialEq)]
pub struct TypoTimes {
    /// Words looked up (each once by each matcher).
    pub words: usize,
    /// Total time of the automata over tantivy's term dictionary (the baseline).
    pub automata: Duration,
    /// Time to build the symmetric-delete table from every indexed skill (what an index
    /// build adds).
    pub table_build: Duration,
    /// Total time of the table's lookups (what ships).
    pub table: Duration,
    /// Entries (term under a deletion) in the table.
    pub table_entries: usize,
    /// Words both matchers answered alike.
    pub agree: usize,
}

impl SkillIndex {
    /// Time both matchers on the unknown words of `requests`.
    pub(crate) fn compare_typo_matchers(&self, requests: &[String]) -> Result<TypoTimes, Error> {
        let st = self.state.read().map_err(|_| Error::Poisoned)?;
        let searcher = self.reader.searcher();
        let t = Instant::now();
        let mut table = TypoTable::default();
        for info in st.docs.values() {
            table.adjust(info, &st.terms, true);
        }
        let mut out = TypoTimes {
            table_build: t.elapsed(),
            table_entries: table.entries(),
            ..TypoTimes::default()
        };
        for r in requests {
            for u in self.unknown_words(crate::text::clip(r), &st) {
                let t = Instant::now();
                let a = self.nearest_term(&searcher, &st, &u.stem, u.edits)?;
                out.automata += t.elapsed();
                let t = Instant::now();
                let b = st.typos.nearest(&u.stem, u.edits, |id| st.terms.df(id));
                out.table += t.elapsed();
                out.words += 1;
                out.agree += usize::from(a == b);
            }
        }
        Ok(out)
    }
}

#[cfg(test)]
#[allow(clippy::unwrap_used, clippy::expect_used, clippy::panic)]
mod tests {
    use super::*;

    #[test]
    fn a_swap_of_neighbouring_letters_is_one_edit() {
        let dfa = builder(1).build_dfa("spreadsheet");
        assert_eq!(dfa.eval("spreadsheet"), Distance::Exact(0));
        assert_eq!(dfa.eval("spraedsheet"), Distance::Exact(1));
        assert!(matches!(dfa.eval("sperdasheet"), Distance::AtLeast(_)));
    }
}
