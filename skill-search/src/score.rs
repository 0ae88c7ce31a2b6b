//! Confidence: how sure a match is, on a scale where a threshold means something.
//!
//! Each kind of evidence is read as an independent estimate of the probability that the
//! skill fits, and the estimates are combined with a noisy-OR,
//! `1 - (1 - p_explicit)(1 - p_phrase)(1 - p_triggers)(1 - p_text)`:
//!
//! - explicit mention of the name: [`P_EXPLICIT`];
//! - a multi-word phrase of the skill in the request: [`P_PHRASE`];
//! - each trigger that matched: [`P_KEYWORD`], [`P_VERB`] or [`P_PATTERN`] (themselves
//!   noisy-OR'd);
//! - text: a logistic model, `p_text = 1 / (1 + exp(-z))` with
//!   `z = TEXT_BIAS + TEXT_W_COVERAGE * coverage + TEXT_W_MASS * mass
//!        + TEXT_W_NAME * name_mass + TEXT_W_RELATIVE * relative_bm25`, where `coverage`
//!   is the idf-weighted share of the request's terms found in the skill's name,
//!   description, tags, triggers or domain (body-only terms count
//!   [`BODY_COVERAGE_WEIGHT`]), `mass` the idf-weighted amount of matched terms and
//!   `name_mass` the part of it found in the name (both in units of the idf of a term
//!   only one skill uses, so they do not grow with the number of skills), and
//!   `relative_bm25` the skill's tantivy score over the best candidate's.
//!
//! The text weights were fitted by logistic regression on the labelled request set
//! (`tests/data/requests.jsonl`, over the 1,800-skill corpus): each of the top ten
//! candidates of each request is one example, labelled by whether it is a right answer.
//! Fitted on one half of the requests and checked on the other (both ways), the weights
//! moved little and the held-out top-1 ranking accuracy stayed within a few points of the
//! in-sample one. The other probabilities are set by hand (the corpus declares almost no
//! triggers). A term no skill uses still counts in the coverage denominator (at
//! [`UNKNOWN_TERM_WEIGHT`] and the idf of a one-skill term), so a request about things no
//! skill mentions scores low everywhere.

use crate::index::Match;
use crate::triggers::{TriggerHit, TriggerKind};

/// Probability that an explicitly named skill fits.
pub const P_EXPLICIT: f32 = 0.97;
/// Probability contributed by one of the skill's multi-word phrases in the request.
pub const P_PHRASE: f32 = 0.6;
/// Probability contributed by one matching trigger keyword.
pub const P_KEYWORD: f32 = 0.7;
/// Probability contributed by one matching trigger verb.
pub const P_VERB: f32 = 0.3;
/// Probability contributed by one matching trigger pattern.
pub const P_PATTERN: f32 = 0.8;
/// Weight of a term found only in a skill's body, relative to its metadata.
pub const BODY_COVERAGE_WEIGHT: f32 = 0.35;
/// Intercept of the text model.
pub const TEXT_BIAS: f32 = -5.8;
/// Text model weight of coverage (0 to 1).
pub const TEXT_W_COVERAGE: f32 = 0.5;
/// Text model weight of the matched mass (in one-skill-term idf units).
pub const TEXT_W_MASS: f32 = 1.8;
/// Text model weight of the mass matched in the name (same units).
pub const TEXT_W_NAME: f32 = 1.6;
/// Text model weight of the BM25 score relative to the best candidate's (0 to 1).
pub const TEXT_W_RELATIVE: f32 = 2.2;
/// Weight of a request term no indexed skill uses.
pub const UNKNOWN_TERM_WEIGHT: f32 = 0.5;

/// The evidence gathered for one candidate.
pub(crate) struct Evidence<'a> {
    pub explicit: bool,
    pub phrase: bool,
    pub triggers: &'a [TriggerHit],
    pub meta_weight: f32,
    pub name_weight: f32,
    pub body_weight: f32,
    pub total_weight: f32,
    pub relative_text_score: f32,
    /// The idf of a term only one skill uses (the unit of `mass`).
    pub unit_idf: f32,
}

/// BM25-style inverse document frequency.
pub(crate) fn idf(df: u32, n_docs: f32) -> f32 {
    let df = df as f32;
    (1.0 + (n_docs - df + 0.5) / (df + 0.5)).ln()
}

/// A query term's weight and idf given its document frequency (unknown terms: see
/// [`UNKNOWN_TERM_WEIGHT`]).
pub(crate) fn term_weight(weight: f32, df: u32, n_docs: f32) -> (f32, f32) {
    if df == 0 {
        (weight * UNKNOWN_TERM_WEIGHT, idf(1, n_docs.max(1.0)))
    } else {
        (weight, idf(df, n_docs))
    }
}

/// Coverage and confidence of one candidate.
pub(crate) fn confidence(ev: &Evidence<'_>) -> (f32, f32) {
    let coverage = if ev.total_weight > 0.0 {
        ((ev.meta_weight + BODY_COVERAGE_WEIGHT * ev.body_weight) / ev.total_weight).clamp(0.0, 1.0)
    } else {
        0.0
    };
    let mut miss = 1.0f32;
    if ev.explicit {
        miss *= 1.0 - P_EXPLICIT;
    }
    if ev.phrase {
        miss *= 1.0 - P_PHRASE;
    }
    for h in ev.triggers {
        miss *= 1.0
            - match h.kind {
                TriggerKind::Keyword => P_KEYWORD,
                TriggerKind::Verb => P_VERB,
                TriggerKind::Pattern => P_PATTERN,
            };
    }
    let mass = ev.meta_weight + BODY_COVERAGE_WEIGHT * ev.body_weight;
    if mass > 0.0 {
        let unit = ev.unit_idf.max(f32::EPSILON);
        let z = TEXT_BIAS
            + TEXT_W_COVERAGE * coverage
            + TEXT_W_MASS * mass / unit
            + TEXT_W_NAME * ev.name_weight / unit
            + TEXT_W_RELATIVE * ev.relative_text_score.clamp(0.0, 1.0);
        miss *= 1.0 - logistic(z);
    }
    (coverage, (1.0 - miss).clamp(0.0, 1.0))
}

fn logistic(z: f32) -> f32 {
    1.0 / (1.0 + (-z).exp())
}

/// The one-line reason of a match.
pub(crate) fn reason(m: &Match) -> String {
    let mut parts = Vec::new();
    if m.explicit {
        parts.push(format!("the request names `{}`", m.name));
    }
    if let Some(p) = &m.phrase {
        parts.push(format!("the request contains the phrase \"{p}\""));
    }
    for h in &m.triggers {
        parts.push(format!(
            "trigger {} `{}` matched",
            h.kind.as_str(),
            h.trigger
        ));
    }
    if !m.matched_terms.is_empty() {
        parts.push(format!("matched terms: {}", m.matched_terms.join(", ")));
    }
    if !m.body_terms.is_empty() {
        parts.push(format!("in its instructions: {}", m.body_terms.join(", ")));
    }
    if parts.is_empty() {
        "no direct evidence".to_owned()
    } else {
        parts.join("; ")
    }
}

#[cfg(test)]
#[allow(clippy::unwrap_used, clippy::expect_used, clippy::panic)]
mod tests {
    use super::*;

    fn ev(meta: f32, body: f32, total: f32) -> Evidence<'static> {
        Evidence {
            explicit: false,
            phrase: false,
            triggers: &[],
            meta_weight: meta,
            name_weight: 0.0,
            body_weight: body,
            total_weight: total,
            relative_text_score: 1.0,
            unit_idf: 1.0,
        }
    }

    #[test]
    fn text_model_matches_its_formula() {
        let (c, p) = confidence(&ev(0.5, 0.0, 1.0));
        assert!((c - 0.5).abs() < 1e-6);
        let z = TEXT_BIAS + TEXT_W_COVERAGE * 0.5 + TEXT_W_MASS * 0.5 + TEXT_W_RELATIVE;
        assert!((p - 1.0 / (1.0 + (-z).exp())).abs() < 1e-6);
    }

    #[test]
    fn confidence_grows_with_evidence_and_body_counts_less() {
        let (_, low) = confidence(&ev(0.2, 0.0, 1.0));
        let (_, high) = confidence(&ev(3.0, 0.0, 3.0));
        let (_, body) = confidence(&ev(0.0, 0.2, 1.0));
        assert!(low < 0.1 && high > 0.9, "{low} {high}");
        assert!(body < low, "{body}");
        let named = Evidence {
            name_weight: 1.0,
            ..ev(1.0, 0.0, 2.0)
        };
        assert!(confidence(&named).1 > confidence(&ev(1.0, 0.0, 2.0)).1);
        assert_eq!(confidence(&ev(0.0, 0.0, 0.0)), (0.0, 0.0));
    }

    #[test]
    fn evidence_combines_as_noisy_or() {
        let hits = [TriggerHit {
            kind: TriggerKind::Keyword,
            trigger: "x".into(),
        }];
        let e = Evidence {
            triggers: &hits,
            explicit: true,
            ..ev(0.0, 0.0, 1.0)
        };
        let (_, p) = confidence(&e);
        let want = 1.0 - (1.0 - P_EXPLICIT) * (1.0 - P_KEYWORD);
        assert!((p - want).abs() < 1e-6);
        assert!(p <= 1.0);
    }

    #[test]
    fn unknown_terms_weigh_less_than_known_rare_ones() {
        let (w, i) = term_weight(1.0, 0, 100.0);
        let (w1, i1) = term_weight(1.0, 1, 100.0);
        assert!(w * i < w1 * i1);
        assert!(idf(1, 100.0) > idf(50, 100.0));
    }
}
