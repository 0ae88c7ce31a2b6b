//! Request terms and what they score against one skill: the request analysed into
//! weighted terms, their idf, the terms candidates are retrieved by, BM25F over a skill's
//! fields, the skill's own limit clauses, and the rarest request term a skill lacks (for
//! the gate). Nothing here knows about candidates as a set; `rank` does.

use tantivy::tokenizer::TextAnalyzer;

use super::multi::MAX_PARTS;
use crate::doc::DocInfo;
use crate::negation::Limit;
use crate::params::{FIELDS, Params};
use crate::text::MAX_QUERY_TERMS;

/// Weight of a term that only appears in recent turns, relative to the request's own.
pub(crate) const TURN_WEIGHT: f32 = 0.5;
/// Most recent turns read from a selection request (the last ones).
pub(crate) const MAX_TURNS: usize = 4;
/// A term in more than this share of the skills, and in more than [`COMMON_TERM_DOCS`] of
/// them, is left out of candidate retrieval: its idf is near zero, so it ranks nothing,
/// while its postings are most of a query's work. It still counts in the score of every
/// candidate the other terms retrieve; the skills only it reached are no longer
/// candidates, which changes the set the scores are normalised over. A request made only
/// of such terms keeps them.
const COMMON_TERM_SHARE: f32 = 0.9;
/// See [`COMMON_TERM_SHARE`]: a term used by at most this many skills is never left out,
/// so a pack of up to this many skills retrieves by every word of a request.
const COMMON_TERM_DOCS: u32 = 1_000;
/// Weight of a request term no indexed skill uses, in the request's idf mass.
pub(crate) const UNKNOWN_TERM_WEIGHT: f32 = 0.5;

/// Words of conversation, not of a task: greetings, thanks, hedges and the words people
/// ask for help with ("hey, could you please help me figure out ..."). They are dropped
/// from a request when `Params::fillers` is on: they are rare in skills' text, so each one
/// a long chatty request holds gave a high-idf match to whatever skill happened to use it.
/// Set by hand (words a request uses whatever it asks), not fitted.
const FILLERS: [&str; 44] = [
    "actually",
    "again",
    "anyway",
    "appreciate",
    "appreciated",
    "basically",
    "bit",
    "could",
    "figure",
    "folks",
    "glad",
    "guess",
    "guys",
    "happy",
    "hello",
    "help",
    "hey",
    "hi",
    "honestly",
    "hoping",
    "idea",
    "just",
    "kind",
    "kinda",
    "know",
    "like",
    "literally",
    "lot",
    "maybe",
    "need",
    "needs",
    "ok",
    "okay",
    "please",
    "pretty",
    "really",
    "somehow",
    "sort",
    "sure",
    "thank",
    "thanks",
    "trying",
    "want",
    "wondering",
];

/// Whether `word` (lowercase, as written) is a [`FILLERS`] word.
pub(crate) fn is_filler(word: &str) -> bool {
    FILLERS.binary_search(&word).is_ok()
}

/// One analyzed query term, the word it came from, and its weight.
#[derive(Debug)]
pub(crate) struct QueryTerm {
    /// The analysed (stemmed) term.
    pub(crate) term: String,
    /// The word as written, lowercased.
    pub(crate) word: String,
    /// 1 for the request's own words, [`TURN_WEIGHT`] for those of recent turns.
    pub(crate) weight: f32,
}

/// Append the analysed terms of `text` with `weight` to `out`, each term once, at most
/// [`MAX_QUERY_TERMS`] in all.
pub(crate) fn collect_terms(
    analyzer: &mut TextAnalyzer,
    text: &str,
    weight: f32,
    out: &mut Vec<QueryTerm>,
) {
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

/// BM25-style inverse document frequency.
pub(crate) fn idf(df: u32, n_docs: f32) -> f32 {
    let df = df as f32;
    (1.0 + (n_docs - df + 0.5) / (df + 0.5)).ln()
}

/// A query term resolved against the index: its id (when some skill uses it), weight
/// times idf, and the term itself.
pub(crate) struct Weighted<'q> {
    /// The term's id, when some indexed skill uses it.
    pub(crate) id: Option<u32>,
    /// Its weight times its idf.
    pub(crate) wi: f32,
    /// The term.
    pub(crate) q: &'q QueryTerm,
    /// The part of a multi-intent request the term belongs to (its first).
    pub(crate) part: Option<usize>,
}

/// The request terms candidates are retrieved by: those some indexed skill uses (any other
/// matches nothing), less the common ones ([`COMMON_TERM_SHARE`]) unless nothing else is
/// left.
pub(crate) fn retrieval_terms<'q>(
    qterms: &'q [QueryTerm],
    ids: &[Option<u32>],
    df: impl Fn(u32) -> u32,
    n_docs: usize,
) -> Vec<&'q QueryTerm> {
    let known: Vec<(&QueryTerm, u32)> = qterms
        .iter()
        .zip(ids)
        .filter_map(|(q, id)| id.map(|i| (q, df(i))))
        .collect();
    let common = |d: u32| d > COMMON_TERM_DOCS && d as f32 > COMMON_TERM_SHARE * n_docs as f32;
    let rare: Vec<&QueryTerm> = known
        .iter()
        .filter(|(_, d)| !common(*d))
        .map(|(q, _)| *q)
        .collect();
    if rare.is_empty() {
        known.into_iter().map(|(q, _)| q).collect()
    } else {
        rare
    }
}

/// BM25F: per term, the field-weighted, length-normalised frequency, saturated by `k1`,
/// times the term's idf (and weight).
pub(crate) fn bm25f(
    info: &DocInfo,
    terms: &[Weighted<'_>],
    avg: &[f32; FIELDS],
    p: &Params,
) -> (f32, [f32; MAX_PARTS]) {
    let mut norm = [0f32; FIELDS];
    for f in 0..FIELDS {
        norm[f] = p.w[f] / (1.0 - p.b[f] + p.b[f] * info.len[f] as f32 / avg[f]);
    }
    let mut score = 0.0;
    let mut parts = [0f32; MAX_PARTS];
    for t in terms {
        let Some(tf) = t.id.and_then(|id| info.tf(id)) else {
            continue;
        };
        let x: f32 = (0..FIELDS).map(|f| tf[f] as f32 * norm[f]).sum();
        if x > 0.0 {
            let s = t.wi * x / (p.k1 + x);
            score += s;
            if let Some(slot) = t.part.and_then(|i| parts.get_mut(i)) {
                *slot += s;
            }
        }
    }
    (score, parts)
}

/// The skill's own limits against a request.
#[derive(Debug, Clone, Copy, Default, PartialEq)]
pub(crate) struct Limits {
    /// The (negative) lexical score: the request's idf share found in its "not for"
    /// clauses, and, when it has "only when" clauses, how little of the best one the
    /// request matches.
    pub(crate) score: f32,
    /// The share of the evidence for the skill that the skill itself rules out: the idf
    /// mass of the request's own words (not recent turns') in its best-matching
    /// [`Limit::Not`] clause (not one in passing) that the skill's other text does not
    /// use, over that mass plus the mass of the request's words the skill's text holds (0
    /// to 1; 0 without such a match).
    pub(crate) ruled_out: f32,
}

/// The skill's own [`Limits`] against the request's `terms` (of idf mass `mass`).
pub(crate) fn limits(
    info: &DocInfo,
    terms: &[Weighted<'_>],
    mass: f32,
    unit: f32,
    p: &Params,
) -> Limits {
    if info.clauses.is_empty() || mass <= 0.0 {
        return Limits::default();
    }
    let mut against = 0.0;
    let mut best_only: Option<f32> = None;
    // The request's own words (not recent turns', which explain nothing in a reason), and
    // whether the skill's text outside its clauses holds each.
    let held = |t: &Weighted<'_>| {
        t.id.and_then(|id| info.tf(id))
            .is_some_and(|tf| tf.iter().any(|&n| n > 0))
    };
    let own = || terms.iter().filter(|t| t.q.weight >= 1.0);
    let mut ruling: f32 = 0.0;
    for (kind, ids) in &info.clauses {
        let in_clause = |t: &Weighted<'_>| t.id.is_some_and(|id| ids.binary_search(&id).is_ok());
        let hit: f32 = terms.iter().filter(|t| in_clause(t)).map(|t| t.wi).sum();
        match kind {
            Limit::Not => {
                against = f32::max(against, hit);
                // Only the clause's own words rule the skill out: one its text also uses
                // elsewhere ("pdf" in a PDF skill's "not for scanned PDFs") is its subject.
                let distinct: f32 = own()
                    .filter(|t| in_clause(t) && !held(t))
                    .map(|t| t.wi)
                    .sum();
                ruling = ruling.max(distinct);
            }
            Limit::NotInPassing => against = f32::max(against, hit),
            Limit::Only => {
                let share = (hit / mass).min(1.0);
                best_only = Some(best_only.map_or(share, |b| b.max(share)));
            }
        }
    }
    let only = best_only.map_or(0.0, |m| 1.0 - m);
    let ruled_out = if ruling > 0.0 {
        let held: f32 = own().filter(|t| held(t)).map(|t| t.wi).sum();
        ruling / (ruling + held)
    } else {
        0.0
    };
    Limits {
        score: -(p.not_penalty * (against / mass) + p.only_penalty * only) * unit,
        ruled_out,
    }
}

/// The largest idf among the request's own terms (not those of recent turns) that some
/// indexed skill uses but that a skill does not (`has` says whether it does, by term id);
/// 0 when it has them all.
pub(crate) fn rarest_missing(weighted: &[Weighted<'_>], has: impl Fn(u32) -> bool) -> f32 {
    weighted
        .iter()
        .filter(|t| t.q.weight >= 1.0)
        .filter_map(|t| {
            let id = t.id?;
            (!has(id)).then_some(t.wi / t.q.weight)
        })
        .fold(0.0, f32::max)
}

/// The share of the idf mass of the request's own terms that some indexed skill uses which
/// a skill holds (`has` says whether it does, by term id); 0 when no such term.
pub(crate) fn held_share(weighted: &[Weighted<'_>], has: impl Fn(u32) -> bool) -> f32 {
    let (held, all) = weighted
        .iter()
        .filter(|t| t.q.weight >= 1.0)
        .filter_map(|t| Some((t.id?, t.wi)))
        .fold((0.0, 0.0), |(h, a), (id, wi)| {
            (if has(id) { h + wi } else { h }, a + wi)
        });
    if all > 0.0 { held / all } else { 0.0 }
}

#[cfg(test)]
#[allow(clippy::unwrap_used, clippy::expect_used, clippy::panic)]
mod tests {
    use super::*;

    #[test]
    fn fillers_are_sorted_lowercase_words() {
        assert!(FILLERS.windows(2).all(|w| w[0] < w[1]), "sorted, each once");
        for w in FILLERS {
            assert!(
                is_filler(w) && w.chars().all(|c| c.is_ascii_lowercase()),
                "{w}"
            );
        }
        assert!(!is_filler("pdf") && !is_filler("Please"));
    }

    #[test]
    fn query_terms_stop_at_the_limit() {
        let mut terms = Vec::new();
        let text: String = (0..MAX_QUERY_TERMS + 10)
            .map(|i| format!("word{i} "))
            .collect();
        collect_terms(&mut crate::text::english(), &text, 1.0, &mut terms);
        assert_eq!(terms.len(), MAX_QUERY_TERMS);
        assert_eq!(terms[0].word, "word0");
    }

    #[test]
    fn common_terms_are_left_out_of_retrieval_only_in_large_packs() {
        let mut terms = Vec::new();
        collect_terms(
            &mut crate::text::english(),
            "teams invoices unknownword",
            1.0,
            &mut terms,
        );
        let words = |v: Vec<&QueryTerm>| v.iter().map(|q| q.word.clone()).collect::<Vec<_>>();
        let ids = [Some(0), Some(1), None];
        // df of "teams", "invoices".
        let retrieved = |teams: u32, invoices: u32, n: usize| {
            words(retrieval_terms(
                &terms,
                &ids,
                |i| [teams, invoices][i as usize],
                n,
            ))
        };
        // At the edge: more than 90% of the skills and more than COMMON_TERM_DOCS of them.
        let n = 10_000;
        let share = (COMMON_TERM_SHARE * n as f32) as u32;
        assert_eq!(retrieved(share + 1, 40, n), ["invoices"]);
        assert_eq!(retrieved(share, 40, n), ["teams", "invoices"]);
        let n = 1_100;
        assert_eq!(retrieved(COMMON_TERM_DOCS + 1, 40, n), ["invoices"]);
        assert_eq!(retrieved(COMMON_TERM_DOCS, 40, n), ["teams", "invoices"]);
        // A small pack keeps a term every skill uses.
        assert_eq!(retrieved(3, 1, 3), ["teams", "invoices"]);
        // Only common terms: they are kept.
        assert_eq!(retrieved(n as u32, n as u32, n), ["teams", "invoices"]);
    }

    #[test]
    fn the_rarest_missing_term_is_a_known_request_word_the_skill_lacks() {
        let term = |w: &str, weight: f32| QueryTerm {
            term: w.to_owned(),
            word: w.to_owned(),
            weight,
        };
        let q = [
            term("laravel", 1.0),
            term("pivot", 1.0),
            term("column", 1.0),
            term("zzunknown", 1.0),
            term("rarer", TURN_WEIGHT),
        ];
        let weighted = |ids: [Option<u32>; 5], idfs: [f32; 5]| -> Vec<Weighted<'_>> {
            q.iter()
                .zip(ids.into_iter().zip(idfs))
                .map(|(q, (id, idf))| Weighted {
                    id,
                    wi: q.weight * idf,
                    q,
                    part: None,
                })
                .collect()
        };
        let w = weighted(
            [Some(0), Some(1), Some(2), None, Some(4)],
            [3.0, 2.0, 0.5, 9.0, 8.0],
        );
        // The skill has "column" only: the rarest it lacks is "laravel"; the unknown word
        // and the recent turn's word do not count however rare.
        assert_eq!(rarest_missing(&w, |id| id == 2), 3.0);
        // It has "laravel" too: "pivot" is the rarest it lacks.
        assert_eq!(rarest_missing(&w, |id| id == 0 || id == 2), 2.0);
        // It has every known request word.
        assert_eq!(rarest_missing(&w, |_| true), 0.0);
        assert_eq!(rarest_missing(&[], |_| false), 0.0);
        // The held share: of the known own terms' idf (3 + 2 + 0.5), "column" holds 0.5.
        assert!((held_share(&w, |id| id == 2) - 0.5 / 5.5).abs() < 1e-6);
        assert!((held_share(&w, |id| id == 0 || id == 1) - 5.0 / 5.5).abs() < 1e-6);
        assert_eq!(held_share(&w, |_| false), 0.0);
        assert_eq!(held_share(&[], |_| true), 0.0);
    }
}
