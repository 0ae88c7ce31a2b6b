//! Selection slots: each intent of a multi-intent request gets a slot of its own, and
//! near-duplicate skills (the same skill in several packs, `postmortem-writing` beside
//! `incident-postmortem`) share one slot, the others named as its alternatives.
//!
//! A request is cut into intents at its explicit joins ([`JOINS`]: "and also", "then", a
//! semicolon, a second question); a piece with fewer than [`MIN_INTENT_TERMS`] analysed
//! terms stays with the one before it. Each intent is ranked on its own, and its best skill
//! takes a slot unless a skill already selected is among that intent's first
//! [`COVERED_DEPTH`] (the intent is covered).
//!
//! Two skills are siblings when their names are the same words (any order, separators and
//! case aside) or when what they say they do (the embedding of description, tags and
//! triggers) is at least [`SIBLING_COSINE`] alike and their names share a word, or at least
//! [`TWIN_COSINE`] alike whatever their names.

use tantivy::tokenizer::TextAnalyzer;

use crate::hit::Match;
use crate::index::{Filter, SearchRequest};
use crate::params::Params;
use crate::select::{Selected, selected};
use crate::text::{clip, tokens};
use crate::{Error, SkillIndex};

/// Where a request is cut into intents (lowercase, with their surrounding spaces).
pub(crate) const JOINS: [&str; 8] = [
    " and also ",
    ", also ",
    ". also ",
    " and then ",
    ", then ",
    " then ",
    "; ",
    "? ",
];
/// Most intents a request is cut into (the rest stays in the last).
pub(crate) const MAX_INTENTS: usize = 3;
/// A piece needs at least this many analysed terms to be an intent of its own.
pub(crate) const MIN_INTENT_TERMS: usize = 2;
/// An intent counts as covered when a selected skill is among its first this many results.
pub(crate) const COVERED_DEPTH: usize = 3;
/// Least similarity of two descriptions for skills whose names share a word to be siblings.
pub(crate) const SIBLING_COSINE: f32 = 0.8;
/// Least similarity of two descriptions for skills to be siblings whatever their names.
pub(crate) const TWIN_COSINE: f32 = 0.92;

/// The request's intents as text, when it has at least two (see the module documentation).
pub(crate) fn intents(english: &mut TextAnalyzer, message: &str) -> Vec<String> {
    let mut pieces = vec![clip(message).to_lowercase()];
    for join in JOINS {
        pieces = pieces
            .iter()
            .flat_map(|p| p.split(join))
            .map(str::to_owned)
            .collect();
    }
    let mut out: Vec<(String, usize)> = Vec::new();
    for piece in pieces {
        let n = tokens(english, &piece).len();
        let joins_last = n < MIN_INTENT_TERMS || out.len() == MAX_INTENTS;
        match out.last_mut() {
            Some(last) if joins_last => {
                last.0.push(' ');
                last.0.push_str(&piece);
                last.1 += n;
            }
            _ => out.push((piece, n)),
        }
    }
    // A first piece too short to stand alone joins the next one.
    if out.len() >= 2 && out[0].1 < MIN_INTENT_TERMS {
        let (first, n) = out.remove(0);
        out[0].0 = format!("{first} {}", out[0].0);
        out[0].1 += n;
    }
    if out.len() < 2 {
        return Vec::new();
    }
    out.into_iter().map(|(p, _)| p).collect()
}

/// The words of a skill name: runs of letters and digits, lowercased, sorted, each once.
fn name_words(name: &str) -> Vec<String> {
    let mut w = crate::text::words(name);
    w.sort();
    w.dedup();
    w
}

/// The slots of a selection: each kept skill (the first of its siblings) and the siblings
/// it stands for.
type Slots = Vec<(Selected, Vec<String>)>;

impl SkillIndex {
    /// The selected skills for `request` (already typo-matched) from its ranking `whole`
    /// (best first, more than `max` of them so that collapsed siblings leave room): siblings
    /// share a slot, then each intent not yet covered gets its best skill, then the rest of
    /// the ranking fills what is left, at most `max` in all.
    pub(crate) fn fill_slots(
        &self,
        request: &str,
        whole: &[Match],
        threshold: f32,
        max: usize,
        filter: &Filter,
        p: &Params,
    ) -> Result<Vec<Selected>, Error> {
        let mut kept: Slots = Vec::new();
        for m in whole {
            if let Some(slot) = kept
                .iter_mut()
                .find(|(s, _)| self.siblings(&s.skill_id, &m.name))
            {
                if !slot.1.contains(&m.name) {
                    slot.1.push(m.name.clone());
                }
            } else if m.confidence >= threshold {
                kept.push((selected(m), Vec::new()));
            }
        }
        let mut slots: Slots = kept.drain(..kept.len().min(1)).collect();
        let mut english = self.english.clone();
        for intent in intents(&mut english, request) {
            let (hits, _) = self.search_with(
                &SearchRequest {
                    text: &intent,
                    recent_turns: &[],
                    limit: COVERED_DEPTH,
                    filter: filter.clone(),
                },
                p,
            )?;
            let taken = |slots: &Slots, name: &str| {
                slots
                    .iter()
                    .any(|(s, alts)| s.skill_id == name || alts.iter().any(|a| a == name))
            };
            if hits.iter().any(|h| taken(&slots, &h.name)) || slots.len() >= max {
                continue;
            }
            let Some(best) = hits.first().filter(|h| h.confidence >= threshold) else {
                continue;
            };
            if slots
                .iter()
                .any(|(s, _)| self.siblings(&s.skill_id, &best.name))
            {
                continue;
            }
            // The intent's best may be a later slot of the whole ranking: it moves up.
            let at = kept.iter().position(|(s, _)| s.skill_id == best.name);
            let slot = match at {
                Some(i) => kept.remove(i),
                None => (selected(best), Vec::new()),
            };
            slots.push(slot);
        }
        for slot in kept {
            if slots.len() >= max {
                break;
            }
            slots.push(slot);
        }
        Ok(slots
            .into_iter()
            .map(|(mut s, alts)| {
                s.alternatives = alts;
                s
            })
            .collect())
    }

    /// Whether skills `a` and `b` are siblings (see the module documentation); false when
    /// either is not indexed.
    pub(crate) fn siblings(&self, a: &str, b: &str) -> bool {
        let (wa, wb) = (name_words(a), name_words(b));
        if wa == wb {
            return true;
        }
        let Ok(st) = self.state.read() else {
            return false;
        };
        let info = |n: &str| st.by_name.get(n).and_then(|k| st.docs.get(k));
        let (Some(ia), Some(ib)) = (info(a), info(b)) else {
            return false;
        };
        let cos = ia.embedding.cosine(&ib.embedding);
        let share = wa.iter().any(|w| wb.contains(w));
        cos >= TWIN_COSINE || (share && cos >= SIBLING_COSINE)
    }
}

#[cfg(test)]
#[allow(clippy::unwrap_used, clippy::expect_used, clippy::panic)]
mod tests {
    use super::*;

    #[test]
    fn intents_are_cut_at_explicit_joins_only() {
        let mut english = crate::text::english();
        assert_eq!(
            intents(
                &mut english,
                "Convert the PDF to markdown and also email the summary to finance"
            ),
            [
                "convert the pdf to markdown",
                "email the summary to finance"
            ]
        );
        assert_eq!(
            intents(
                &mut english,
                "how do I rotate tls certificates? what about dns records"
            ),
            ["how do i rotate tls certificates", "what about dns records"]
        );
        // "and" alone, and sentence ends, are not joins.
        assert!(intents(&mut english, "compare pandas and polars for joins. quickly").is_empty());
        // A piece of one term stays with its neighbour.
        assert!(intents(&mut english, "help? convert the pdf to markdown").is_empty());
        assert!(intents(&mut english, "").is_empty());
    }

    #[test]
    fn intents_stop_at_the_most() {
        let mut english = crate::text::english();
        let many = "alpha beta; gamma delta; epsilon zeta; eta theta";
        let got = intents(&mut english, many);
        assert_eq!(got.len(), MAX_INTENTS);
        assert_eq!(got[MAX_INTENTS - 1], "epsilon zeta eta theta");
        let one_short = "alpha beta; gamma";
        assert!(intents(&mut english, one_short).is_empty());
    }

    #[test]
    fn name_words_ignore_order_case_and_separators() {
        assert_eq!(
            name_words("Incident-Postmortem"),
            name_words("postmortem_incident")
        );
        assert_ne!(
            name_words("postmortem-writing"),
            name_words("incident-postmortem")
        );
    }
}
