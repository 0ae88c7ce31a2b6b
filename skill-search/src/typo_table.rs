//! The table typo matching looks words up in: a symmetric-delete table over the terms of
//! the indexed skills' names and descriptions, kept with the index (a skill's terms are
//! filed when it is indexed and counted off when it leaves, so a reload touches only the
//! skills it changes).
//!
//! Every such term is filed under each string made by deleting up to [`MAX_DELETES`] of its
//! letters. A word's candidates are the terms filed under its own deletions (up to the
//! edits it is allowed); each is checked by its optimal-string-alignment distance (a swap
//! of neighbours is one edit). This replaced tantivy's Levenshtein automata run over the
//! term dictionary per word: `cargo xtask bench select` times both on the same words (the
//! automata remain, under the `tuning` feature, as that row's baseline).
//!
//! Only ASCII terms of at most [`MAX_TYPO_CHARS`] letters are filed (a request word is
//! looked up only when it is ASCII lowercase, and a long term's deletions grow with the
//! square of its length).

use std::collections::HashMap;

use crate::doc::{DocInfo, Terms};
use crate::params::{F_DESC, F_NAME};

/// Words shorter than this many characters are never corrected: a short word is a few
/// edits from too many others.
pub(crate) const MIN_TYPO_CHARS: usize = 5;
/// Most letters deleted from a term or a word (the most edits typo matching allows).
pub(crate) const MAX_DELETES: u8 = 2;
/// Terms and words longer than this many letters are neither filed nor looked up.
pub(crate) const MAX_TYPO_CHARS: usize = 24;

type Fast = foldhash::fast::RandomState;

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

/// One filed term.
#[derive(Debug)]
struct Filed {
    /// Its id in the index's [`Terms`].
    id: u32,
    /// The term.
    text: Box<str>,
    /// Indexed skills whose name or description uses it (0: none now; it matches nothing).
    uses: u32,
}

/// The symmetric-delete table (see the module documentation).
#[derive(Debug, Default)]
pub(crate) struct TypoTable {
    /// Each deletion string and the filed terms (indexes into `filed`) under it.
    map: HashMap<Box<[u8]>, Vec<u32>, Fast>,
    filed: Vec<Filed>,
    /// A term id's index in `filed`.
    slot: HashMap<u32, u32, Fast>,
}

/// Every string made from `s` by deleting up to `k` of its bytes, `s` itself included,
/// each once, into `out` (cleared first).
fn deletes(s: &[u8], k: u8, out: &mut Vec<Vec<u8>>) {
    out.clear();
    out.push(s.to_vec());
    let mut level = 0..1;
    for _ in 0..k {
        let end = out.len();
        for i in level.clone() {
            let w = out[i].clone();
            for j in 0..w.len() {
                // Deleting either letter of a double gives the same string.
                if j > 0 && w[j] == w[j - 1] {
                    continue;
                }
                let mut d = w.clone();
                d.remove(j);
                out.push(d);
            }
        }
        level = end..out.len();
    }
    out.sort_unstable();
    out.dedup();
}

/// Optimal string alignment distance (Damerau-Levenshtein without repeated edits of a
/// substring): insertions, deletions, substitutions and swaps of neighbours, one each.
pub(crate) fn osa(a: &[u8], b: &[u8]) -> usize {
    let w = b.len() + 1;
    let mut d = vec![0usize; (a.len() + 1) * w];
    for i in 0..=a.len() {
        d[i * w] = i;
    }
    for (j, cell) in d.iter_mut().enumerate().take(w) {
        *cell = j;
    }
    for i in 1..=a.len() {
        for j in 1..=b.len() {
            let cost = usize::from(a[i - 1] != b[j - 1]);
            let mut v = (d[(i - 1) * w + j] + 1)
                .min(d[i * w + j - 1] + 1)
                .min(d[(i - 1) * w + j - 1] + cost);
            if i > 1 && j > 1 && a[i - 1] == b[j - 2] && a[i - 2] == b[j - 1] {
                v = v.min(d[(i - 2) * w + j - 2] + 1);
            }
            d[i * w + j] = v;
        }
    }
    d[a.len() * w + b.len()]
}

/// Whether a term is filed: ASCII, and of a length a word typo matching looks up could be
/// [`MAX_DELETES`] edits from.
fn fileable(term: &str) -> bool {
    let n = term.len();
    term.is_ascii() && n + usize::from(MAX_DELETES) >= MIN_TYPO_CHARS && n <= MAX_TYPO_CHARS
}

impl TypoTable {
    /// Count in (`up`) or off a skill's name and description terms (`terms` gives their
    /// text); a term met for the first time is filed.
    pub(crate) fn adjust(&mut self, info: &DocInfo, terms: &Terms, up: bool) {
        let mut scratch = Vec::new();
        for (id, tf) in info.terms.iter() {
            if tf[F_NAME] == 0 && tf[F_DESC] == 0 {
                continue;
            }
            if let Some(&at) = self.slot.get(&id) {
                if let Some(f) = self.filed.get_mut(at as usize) {
                    f.uses = if up {
                        f.uses.saturating_add(1)
                    } else {
                        f.uses.saturating_sub(1)
                    };
                }
                continue;
            }
            if !up {
                continue;
            }
            let Some(text) = terms.text(id).filter(|t| fileable(t)) else {
                continue;
            };
            let Ok(at) = u32::try_from(self.filed.len()) else {
                return;
            };
            deletes(text.as_bytes(), MAX_DELETES, &mut scratch);
            for d in scratch.drain(..) {
                self.map.entry(d.into_boxed_slice()).or_default().push(at);
            }
            self.slot.insert(id, at);
            self.filed.push(Filed {
                id,
                text: text.into(),
                uses: 1,
            });
        }
    }

    /// Entries (a term under one of its deletions) in the table.
    #[cfg(feature = "tuning")]
    pub(crate) fn entries(&self) -> usize {
        self.map.values().map(Vec::len).sum()
    }

    /// The filed term nearest `stem` within `edits` edits that some indexed skill's name or
    /// description uses: the nearest, then the one most skills use (`df`, by term id),
    /// then the first in byte order.
    pub(crate) fn nearest(&self, stem: &str, edits: u8, df: impl Fn(u32) -> u32) -> Nearest {
        if stem.len() > MAX_TYPO_CHARS || !stem.is_ascii() {
            return None;
        }
        let mut variants = Vec::new();
        deletes(stem.as_bytes(), edits.min(MAX_DELETES), &mut variants);
        let mut best: Nearest = None;
        for v in &variants {
            for &at in self.map.get(v.as_slice()).into_iter().flatten() {
                let Some(f) = self.filed.get(at as usize).filter(|f| f.uses > 0) else {
                    continue;
                };
                if f.text.len().abs_diff(stem.len()) > usize::from(edits) {
                    continue;
                }
                let Ok(d) = u8::try_from(osa(stem.as_bytes(), f.text.as_bytes())) else {
                    continue;
                };
                if d <= edits && beats(d, df(f.id), &f.text, &best) {
                    best = Some((d, df(f.id), f.text.to_string()));
                }
            }
        }
        best
    }
}

#[cfg(test)]
#[allow(clippy::unwrap_used, clippy::expect_used, clippy::panic)]
mod tests {
    use super::*;

    fn all_deletes(s: &str, k: u8) -> Vec<String> {
        let mut out = Vec::new();
        deletes(s.as_bytes(), k, &mut out);
        out.into_iter()
            .map(|d| String::from_utf8(d).unwrap())
            .collect()
    }

    #[test]
    fn deletes_and_distance() {
        assert_eq!(
            all_deletes("abc", 2),
            ["a", "ab", "abc", "ac", "b", "bc", "c"]
        );
        // A double letter gives each deletion once.
        assert_eq!(all_deletes("add", 1), ["ad", "add", "dd"]);
        assert_eq!(all_deletes("abc", 0), ["abc"]);
        assert_eq!(osa(b"tango", b"tnago"), 1);
        assert_eq!(osa(b"tango", b"mango"), 1);
        assert_eq!(osa(b"spreadsheet", b"sprdsheet"), 2);
        assert_eq!(osa(b"spreadsheet", b"sprdsheets"), 3);
        assert_eq!(osa(b"", b"abc"), 3);
    }

    #[test]
    fn only_ascii_terms_of_a_matchable_length_are_filed() {
        let long = "a".repeat(MAX_TYPO_CHARS);
        assert!(fileable(&long));
        assert!(!fileable(&format!("{long}a")));
        let short = "a".repeat(MIN_TYPO_CHARS - usize::from(MAX_DELETES));
        assert!(fileable(&short));
        assert!(!fileable(&short[1..]));
        assert!(!fileable("caféteria"));
    }
}
