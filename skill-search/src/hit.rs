//! What a search returns for one skill ([`Match`]), and its one-line reason.

use crate::triggers::TriggerHit;

/// One ranked skill, with why it matched.
#[derive(Debug, Clone)]
pub struct Match {
    /// The skill's name.
    pub name: String,
    /// Its description.
    pub description: String,
    /// Its layer.
    pub layer: String,
    /// Confidence in [0, 1] that the skill fits the request (see the crate docs).
    pub confidence: f32,
    /// The request names the skill explicitly.
    pub explicit: bool,
    /// A multi-word phrase of the skill (its name's words, a trigger keyword, a tag) that
    /// the request contains word for word.
    pub phrase: Option<String>,
    /// Triggers that matched.
    pub triggers: Vec<TriggerHit>,
    /// Request words found in the skill's name, description, tags, triggers or domain.
    pub matched_terms: Vec<String>,
    /// Request words found only in the skill's body.
    pub body_terms: Vec<String>,
    /// Words of the earlier turns (not of the request itself) found in the skill's
    /// metadata or body: the evidence when a follow-up such as "do the same for the other
    /// one" selects a skill.
    pub turn_terms: Vec<String>,
    /// Request words found in a clause of the skill that says what it is *not* for (or
    /// that it is *only* for something the request does not mention); they count against
    /// it.
    pub against_terms: Vec<String>,
    /// The lexical (BM25F) score, in units of the idf of a term only one skill uses.
    pub text_score: f32,
    /// The semantic similarity of the request and the skill (cosine, -1 to 1); 0 when the
    /// index has no semantic signal.
    pub semantic: f32,
    /// When the host last reported a use (a logical clock; higher is more recent).
    pub last_used: Option<u64>,
    /// A one-line explanation naming the trigger, name or terms that matched.
    pub reason: String,
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
    if !m.against_terms.is_empty() {
        parts.push(format!(
            "against it (its own limits): {}",
            m.against_terms.join(", ")
        ));
    }
    if parts.is_empty() {
        "no direct evidence".to_owned()
    } else {
        parts.join("; ")
    }
}
