//! Trigger matching (toolsets seed): keywords and verbs on word boundaries,
//! case-insensitively; patterns as regular expressions compiled once.

use std::path::Path;

use regex::{Regex, RegexBuilder};
use serde::Serialize;
use skill_format::{Code, Diagnostic, MAX_PATTERN_SIZE, Triggers};
use tantivy::tokenizer::TextAnalyzer;

use crate::text::{contains_run, tokens, words};

/// Memory bound for the lazy DFA of one trigger pattern, in bytes.
pub const MAX_PATTERN_DFA_BYTES: usize = 2 * 1024 * 1024;

/// Which kind of trigger matched.
#[derive(Debug, Clone, Copy, PartialEq, Eq, PartialOrd, Ord, Serialize)]
#[serde(rename_all = "lowercase")]
pub enum TriggerKind {
    /// A `triggers.keywords` entry: its words appear, in order, on word boundaries.
    Keyword,
    /// A `triggers.verbs` entry: the verb appears in any inflection (compared by stem).
    Verb,
    /// A `triggers.patterns` regular expression matched (case-insensitively).
    Pattern,
}

impl TriggerKind {
    /// Lowercase name for output.
    pub fn as_str(self) -> &'static str {
        match self {
            TriggerKind::Keyword => "keyword",
            TriggerKind::Verb => "verb",
            TriggerKind::Pattern => "pattern",
        }
    }
}

/// One trigger that matched a request.
#[derive(Debug, Clone, PartialEq, Eq, PartialOrd, Ord, Serialize)]
pub struct TriggerHit {
    /// Its kind.
    pub kind: TriggerKind,
    /// The trigger as the skill declares it.
    pub trigger: String,
}

/// The request as trigger matching sees it.
pub(crate) struct Probe<'a> {
    pub text: &'a str,
    pub words: Vec<String>,
    pub stems: Vec<String>,
}

impl<'a> Probe<'a> {
    pub(crate) fn new(text: &'a str, stemmer: &mut TextAnalyzer) -> Self {
        Probe {
            text,
            words: words(text),
            stems: tokens(stemmer, text),
        }
    }
}

/// A skill's triggers, compiled.
#[derive(Debug, Clone, Default)]
pub(crate) struct Compiled {
    keywords: Vec<(String, Vec<String>)>,
    verbs: Vec<(String, Vec<String>)>,
    patterns: Vec<(String, Regex)>,
}

impl Compiled {
    /// Compile `triggers`; a pattern that does not compile (or is too large) is left out
    /// and reported as an `invalid-trigger-pattern` warning on `path`.
    pub(crate) fn new(
        triggers: &Triggers,
        path: &Path,
        stemmer: &mut TextAnalyzer,
    ) -> (Self, Vec<Diagnostic>) {
        let mut diagnostics = Vec::new();
        let keywords = triggers
            .keywords
            .iter()
            .map(|k| (k.clone(), words(k)))
            .filter(|(_, w)| !w.is_empty())
            .collect();
        let verbs = triggers
            .verbs
            .iter()
            .map(|v| (v.clone(), tokens(stemmer, v)))
            .filter(|(_, s)| !s.is_empty())
            .collect();
        let mut patterns = Vec::new();
        for p in &triggers.patterns {
            match RegexBuilder::new(p)
                .case_insensitive(true)
                .size_limit(MAX_PATTERN_SIZE)
                .dfa_size_limit(MAX_PATTERN_DFA_BYTES)
                .build()
            {
                Ok(re) => patterns.push((p.clone(), re)),
                Err(e) => {
                    let why = e.to_string();
                    let why = why.lines().last().unwrap_or("").trim().to_owned();
                    diagnostics.push(Diagnostic::warning(
                        Code::InvalidTriggerPattern,
                        path,
                        format!(
                            "trigger pattern `{p}` does not compile ({why}); it is ignored by search"
                        ),
                    ));
                }
            }
        }
        (
            Compiled {
                keywords,
                verbs,
                patterns,
            },
            diagnostics,
        )
    }

    pub(crate) fn is_empty(&self) -> bool {
        self.keywords.is_empty() && self.verbs.is_empty() && self.patterns.is_empty()
    }

    /// Every trigger that matches the probe, keywords first, then verbs, then patterns.
    pub(crate) fn hits(&self, probe: &Probe<'_>) -> Vec<TriggerHit> {
        let mut out = Vec::new();
        for (k, w) in &self.keywords {
            if contains_run(&probe.words, w) {
                out.push(TriggerHit {
                    kind: TriggerKind::Keyword,
                    trigger: k.clone(),
                });
            }
        }
        for (v, s) in &self.verbs {
            if contains_run(&probe.stems, s) {
                out.push(TriggerHit {
                    kind: TriggerKind::Verb,
                    trigger: v.clone(),
                });
            }
        }
        for (p, re) in &self.patterns {
            if re.is_match(probe.text) {
                out.push(TriggerHit {
                    kind: TriggerKind::Pattern,
                    trigger: p.clone(),
                });
            }
        }
        out
    }
}

#[cfg(test)]
#[allow(clippy::unwrap_used, clippy::expect_used, clippy::panic)]
mod tests {
    use super::*;
    use crate::text::stems_analyzer;

    fn compiled(k: &[&str], v: &[&str], p: &[&str]) -> (Compiled, Vec<Diagnostic>) {
        let t = Triggers {
            keywords: k.iter().map(|s| s.to_string()).collect(),
            verbs: v.iter().map(|s| s.to_string()).collect(),
            patterns: p.iter().map(|s| s.to_string()).collect(),
        };
        Compiled::new(&t, Path::new("x/SKILL.md"), &mut stems_analyzer())
    }

    fn kinds(c: &Compiled, text: &str) -> Vec<(TriggerKind, String)> {
        let probe = Probe::new(text, &mut stems_analyzer());
        c.hits(&probe)
            .into_iter()
            .map(|h| (h.kind, h.trigger))
            .collect()
    }

    #[test]
    fn keywords_match_on_word_boundaries_case_insensitively() {
        let (c, d) = compiled(&["hello", "pull request"], &[], &[]);
        assert!(d.is_empty());
        assert_eq!(
            kinds(&c, "HELLO there"),
            [(TriggerKind::Keyword, "hello".into())]
        );
        assert!(
            kinds(&c, "othello is a play").is_empty(),
            "not inside a word"
        );
        assert_eq!(kinds(&c, "open a Pull-Request").len(), 1);
        assert!(kinds(&c, "request a pull").is_empty());
    }

    #[test]
    fn verbs_match_inflections() {
        let (c, _) = compiled(&[], &["wave"], &[]);
        assert_eq!(kinds(&c, "she waved at me").len(), 1);
        assert_eq!(kinds(&c, "keep waving").len(), 1);
        assert!(kinds(&c, "a microwave oven").is_empty());
    }

    #[test]
    fn patterns_are_case_insensitive_regexes() {
        let (c, _) = compiled(&[], &[], &[r"greet\s+\w+"]);
        assert_eq!(
            kinds(&c, "GREET   Bob"),
            [(TriggerKind::Pattern, r"greet\s+\w+".into())]
        );
        assert!(kinds(&c, "greetings").is_empty());
    }

    #[test]
    fn bad_patterns_are_diagnostics_not_crashes() {
        let (c, d) = compiled(&["ok"], &[], &["(unclosed", "a{1000}{1000}{1000}", "fine"]);
        assert_eq!(d.len(), 2, "{d:?}");
        assert!(d.iter().all(|d| d.code == Code::InvalidTriggerPattern));
        assert!(d[0].message.contains("(unclosed"));
        assert_eq!(kinds(&c, "fine ok").len(), 2);
    }

    #[test]
    fn catastrophic_backtracking_shapes_run_in_linear_time() {
        let (c, d) = compiled(&[], &[], &["(a+)+$", "(x|x)*y"]);
        assert!(d.is_empty());
        let text = format!("{}!", "a".repeat(crate::MAX_QUERY_BYTES - 1));
        let probe = Probe::new(crate::text::clip(&text), &mut stems_analyzer());
        assert!(c.hits(&probe).is_empty());
    }
}
