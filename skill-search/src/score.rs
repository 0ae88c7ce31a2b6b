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
//! The fitting was done outside the code; [`crate::quality::fit_text_model`] now does it
//! in the code (Newton's method, a little ridge penalty), and
//! [`crate::quality::cross_validate`] refits on k-1 folds of the requests and scores the
//! held-out fold, which `cargo xtask bench select` reports beside the in-sample figures.
//! The other probabilities are set by hand (the corpus declares almost no triggers). A term no skill uses still counts in the coverage denominator (at
//! [`UNKNOWN_TERM_WEIGHT`] and the idf of a one-skill term), so a request about things no
//! skill mentions scores low everywhere.

use serde::Serialize;

use crate::index::Match;
use crate::triggers::TriggerCounts;

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

/// The weights of the text model: `p_text = 1 / (1 + exp(-z))` with
/// `z = bias + coverage * f.coverage + mass * f.mass + name * f.name_mass
///      + relative * f.relative` over a candidate's [`TextFeatures`] `f`.
#[derive(Debug, Clone, Copy, PartialEq, Serialize)]
pub struct TextModel {
    /// Intercept.
    pub bias: f32,
    /// Weight of [`TextFeatures::coverage`].
    pub coverage: f32,
    /// Weight of [`TextFeatures::mass`].
    pub mass: f32,
    /// Weight of [`TextFeatures::name_mass`].
    pub name: f32,
    /// Weight of [`TextFeatures::relative`].
    pub relative: f32,
}

impl TextModel {
    /// The weights the index uses: [`TEXT_BIAS`], [`TEXT_W_COVERAGE`], [`TEXT_W_MASS`],
    /// [`TEXT_W_NAME`], [`TEXT_W_RELATIVE`].
    pub const FITTED: TextModel = TextModel {
        bias: TEXT_BIAS,
        coverage: TEXT_W_COVERAGE,
        mass: TEXT_W_MASS,
        name: TEXT_W_NAME,
        relative: TEXT_W_RELATIVE,
    };

    /// The text probability of a candidate; 0 when it matched no term at all.
    pub fn probability(&self, f: &TextFeatures) -> f32 {
        if f.mass <= 0.0 {
            return 0.0;
        }
        logistic(
            self.bias
                + self.coverage * f.coverage
                + self.mass * f.mass
                + self.name * f.name_mass
                + self.relative * f.relative,
        )
    }
}

impl Default for TextModel {
    /// [`TextModel::FITTED`].
    fn default() -> Self {
        TextModel::FITTED
    }
}

/// What the text model measures of one candidate.
#[derive(Debug, Clone, Copy, Default, PartialEq, Serialize)]
pub struct TextFeatures {
    /// The idf-weighted share of the request's terms the skill covers (0 to 1).
    pub coverage: f32,
    /// The idf-weighted mass of the matched terms (body terms at
    /// [`BODY_COVERAGE_WEIGHT`]), in units of the idf of a term only one skill uses.
    pub mass: f32,
    /// The part of `mass` found in the skill's name, in the same units.
    pub name_mass: f32,
    /// The skill's BM25 score over the best candidate's (0 to 1).
    pub relative: f32,
}

/// The evidence gathered for one candidate.
pub(crate) struct Evidence {
    pub explicit: bool,
    pub phrase: bool,
    /// How many triggers of each kind matched.
    pub triggers: TriggerCounts,
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

/// The text model's measurements of one candidate.
pub(crate) fn features(ev: &Evidence) -> TextFeatures {
    let mass = ev.meta_weight + BODY_COVERAGE_WEIGHT * ev.body_weight;
    let coverage = if ev.total_weight > 0.0 {
        (mass / ev.total_weight).clamp(0.0, 1.0)
    } else {
        0.0
    };
    let unit = ev.unit_idf.max(f32::EPSILON);
    TextFeatures {
        coverage,
        mass: mass / unit,
        name_mass: ev.name_weight / unit,
        relative: ev.relative_text_score.clamp(0.0, 1.0),
    }
}

/// Coverage and confidence of one candidate, with `model` as the text model.
pub(crate) fn confidence(ev: &Evidence, model: &TextModel) -> (f32, f32) {
    let f = features(ev);
    let mut miss = 1.0f32;
    if ev.explicit {
        miss *= 1.0 - P_EXPLICIT;
    }
    if ev.phrase {
        miss *= 1.0 - P_PHRASE;
    }
    // One factor per matched trigger, keywords, then verbs, then patterns.
    for (n, p) in [
        (ev.triggers.keywords, P_KEYWORD),
        (ev.triggers.verbs, P_VERB),
        (ev.triggers.patterns, P_PATTERN),
    ] {
        for _ in 0..n {
            miss *= 1.0 - p;
        }
    }
    miss *= 1.0 - model.probability(&f);
    (f.coverage, (1.0 - miss).clamp(0.0, 1.0))
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
    if !m.turn_terms.is_empty() {
        parts.push(format!("from earlier turns: {}", m.turn_terms.join(", ")));
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

    fn conf(e: &Evidence) -> (f32, f32) {
        confidence(e, &TextModel::FITTED)
    }

    fn ev(meta: f32, body: f32, total: f32) -> Evidence {
        Evidence {
            explicit: false,
            phrase: false,
            triggers: TriggerCounts::default(),
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
        let (c, p) = conf(&ev(0.5, 0.0, 1.0));
        assert!((c - 0.5).abs() < 1e-6);
        let z = TEXT_BIAS + TEXT_W_COVERAGE * 0.5 + TEXT_W_MASS * 0.5 + TEXT_W_RELATIVE;
        assert!((p - 1.0 / (1.0 + (-z).exp())).abs() < 1e-6);
    }

    #[test]
    fn confidence_grows_with_evidence_and_body_counts_less() {
        let (_, low) = conf(&ev(0.2, 0.0, 1.0));
        let (_, high) = conf(&ev(3.0, 0.0, 3.0));
        let (_, body) = conf(&ev(0.0, 0.2, 1.0));
        assert!(low < 0.1 && high > 0.9, "{low} {high}");
        assert!(body < low, "{body}");
        let named = Evidence {
            name_weight: 1.0,
            ..ev(1.0, 0.0, 2.0)
        };
        assert!(conf(&named).1 > conf(&ev(1.0, 0.0, 2.0)).1);
        assert_eq!(conf(&ev(0.0, 0.0, 0.0)), (0.0, 0.0));
    }

    #[test]
    fn evidence_combines_as_noisy_or() {
        let hits = TriggerCounts {
            keywords: 1,
            ..TriggerCounts::default()
        };
        let e = Evidence {
            triggers: hits,
            explicit: true,
            ..ev(0.0, 0.0, 1.0)
        };
        let (_, p) = conf(&e);
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

    #[test]
    fn the_fitted_model_is_the_constants_and_features_are_in_units() {
        assert_eq!(TextModel::default(), TextModel::FITTED);
        assert_eq!(TextModel::FITTED.bias, TEXT_BIAS);
        let e = Evidence {
            name_weight: 1.0,
            unit_idf: 2.0,
            relative_text_score: 3.0,
            ..ev(1.0, 2.0, 4.0)
        };
        let f = features(&e);
        let mass = 1.0 + BODY_COVERAGE_WEIGHT * 2.0;
        assert!((f.coverage - mass / 4.0).abs() < 1e-6);
        assert!((f.mass - mass / 2.0).abs() < 1e-6);
        assert!((f.name_mass - 0.5).abs() < 1e-6);
        assert_eq!(f.relative, 1.0, "clamped");
        assert!((conf(&e).1 - TextModel::FITTED.probability(&f)).abs() < 1e-6);
        assert_eq!(TextModel::FITTED.probability(&TextFeatures::default()), 0.0);
    }
}
