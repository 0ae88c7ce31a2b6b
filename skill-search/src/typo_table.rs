//! The other way to match typos, kept only to measure it against the automata that ship
//! (`typo.rs`), with `cargo xtask bench select` (crate feature `tuning`): a
//! symmetric-delete table, every term of the fields typo matching reads (names and
//! descriptions) under every string made by deleting up to two of its letters. A word's candidates are the terms filed under its own deletions;
//! each is checked by its optimal-string-alignment distance (a swap of neighbours is one
//! edit), and the same rule picks the best.

use std::collections::HashMap;
use std::time::{Duration, Instant};

use crate::index::State;
use crate::typo::{MIN_TYPO_CHARS, Nearest, beats};
use crate::{Error, SkillIndex};

/// Most letters deleted from a term or a word (the most edits typo matching allows).
const MAX_DELETES: u8 = 2;

/// Every string made from `s` by deleting up to `k` characters, `s` itself included.
fn deletes(s: &str, k: u8, out: &mut Vec<String>) {
    let mut level = vec![s.to_owned()];
    out.push(s.to_owned());
    for _ in 0..k {
        let mut next = Vec::new();
        for w in &level {
            let chars: Vec<char> = w.chars().collect();
            for i in 0..chars.len() {
                let d: String = chars
                    .iter()
                    .enumerate()
                    .filter(|&(j, _)| j != i)
                    .map(|(_, c)| c)
                    .collect();
                if !out.contains(&d) && !next.contains(&d) {
                    next.push(d);
                }
            }
        }
        out.extend(next.iter().cloned());
        level = next;
    }
}

/// Optimal string alignment distance (Damerau-Levenshtein without repeated edits of a
/// substring): insertions, deletions, substitutions and swaps of neighbours, one each.
fn osa(a: &str, b: &str) -> usize {
    let (a, b): (Vec<char>, Vec<char>) = (a.chars().collect(), b.chars().collect());
    let mut d = vec![vec![0usize; b.len() + 1]; a.len() + 1];
    for (i, row) in d.iter_mut().enumerate() {
        row[0] = i;
    }
    if let Some(first) = d.first_mut() {
        for (j, cell) in first.iter_mut().enumerate() {
            *cell = j;
        }
    }
    for i in 1..=a.len() {
        for j in 1..=b.len() {
            let cost = usize::from(a[i - 1] != b[j - 1]);
            let mut v = (d[i - 1][j] + 1)
                .min(d[i][j - 1] + 1)
                .min(d[i - 1][j - 1] + cost);
            if i > 1 && j > 1 && a[i - 1] == b[j - 2] && a[i - 2] == b[j - 1] {
                v = v.min(d[i - 2][j - 2] + 1);
            }
            d[i][j] = v;
        }
    }
    d[a.len()][b.len()]
}

/// The symmetric-delete table over an index's terms.
struct DeleteTable {
    /// Each deletion string and the terms (indexes into `terms`) filed under it.
    map: HashMap<String, Vec<u32>>,
    /// The terms and how many skills use each.
    terms: Vec<(String, u32)>,
}

impl DeleteTable {
    /// The table over the terms of the fields typo matching reads, that some skill uses.
    fn build(index: &SkillIndex, searcher: &tantivy::Searcher, st: &State) -> Result<Self, Error> {
        let mut map: HashMap<String, Vec<u32>> = HashMap::new();
        let mut terms = Vec::new();
        let mut scratch = Vec::new();
        // A word of MIN_TYPO_CHARS letters is at least that less two edits from its term.
        let shortest = MIN_TYPO_CHARS - usize::from(MAX_DELETES);
        let mut seen = std::collections::HashSet::new();
        for segment in searcher.segment_readers() {
            for field in index.typo_fields() {
                let inverted = segment.inverted_index(field)?;
                let mut stream = inverted
                    .terms()
                    .stream()
                    .map_err(tantivy::TantivyError::from)?;
                while stream.advance() {
                    if let Ok(term) = std::str::from_utf8(stream.key()) {
                        seen.insert(term.to_owned());
                    }
                }
            }
        }
        let mut vocabulary: Vec<(String, u32)> = seen
            .into_iter()
            .map(|t| {
                let df = st.terms.get(&t).map_or(0, |i| st.terms.df(i));
                (t, df)
            })
            .filter(|&(_, df)| df > 0)
            .collect();
        vocabulary.sort();
        for (term, df) in vocabulary {
            if term.chars().count() < shortest {
                continue;
            }
            let Ok(id) = u32::try_from(terms.len()) else {
                break;
            };
            scratch.clear();
            deletes(&term, MAX_DELETES, &mut scratch);
            for d in scratch.drain(..) {
                map.entry(d).or_default().push(id);
            }
            terms.push((term, df));
        }
        Ok(DeleteTable { map, terms })
    }

    fn entries(&self) -> usize {
        self.map.values().map(Vec::len).sum()
    }

    fn nearest(&self, stem: &str, edits: u8) -> Nearest {
        let mut variants = Vec::new();
        deletes(stem, edits, &mut variants);
        let mut best: Nearest = None;
        for v in &variants {
            for &id in self.map.get(v).into_iter().flatten() {
                let Some((term, df)) = self.terms.get(id as usize) else {
                    continue;
                };
                let d = osa(stem, term);
                let Ok(d) = u8::try_from(d) else { continue };
                if d <= edits && beats(d, *df, term, &best) {
                    best = Some((d, *df, term.clone()));
                }
            }
        }
        best
    }
}

/// The two typo matchers timed on the same words (the unknown words of some requests).
#[derive(Debug, Clone, Copy, Default, PartialEq)]
pub struct TypoTimes {
    /// Words looked up (each once by each matcher).
    pub words: usize,
    /// Total time of the automata over tantivy's term dictionary (what ships).
    pub automata: Duration,
    /// Time to build the symmetric-delete table.
    pub table_build: Duration,
    /// Total time of the table's lookups.
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
        let table = DeleteTable::build(self, &searcher, &st)?;
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
                let b = table.nearest(&u.stem, u.edits);
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
    fn deletes_and_distance() {
        let mut d = Vec::new();
        deletes("abc", 2, &mut d);
        d.sort();
        assert_eq!(d, ["a", "ab", "abc", "ac", "b", "bc", "c"]);
        assert_eq!(osa("tango", "tnago"), 1);
        assert_eq!(osa("tango", "mango"), 1);
        assert_eq!(osa("spreadsheet", "sprdsheet"), 2);
        assert_eq!(osa("spreadsheet", "sprdsheets"), 3);
    }
}
