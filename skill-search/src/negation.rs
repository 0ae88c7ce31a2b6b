//! A skill's own limits: the sentences of its description and body that say when *not* to
//! use it ("Not for ...", "Do not use when ...", "use X instead") or that it applies *only*
//! in some case ("Use this skill ONLY when ...", "... unless ..."). Ranking reads them as
//! evidence against the skill (a request that matches a "not for" clause, or misses every
//! word of an "only when" clause), and they are kept out of the text that counts for it.

use std::sync::OnceLock;

use regex::Regex;

/// Most limit clauses kept per skill (a body can list many; the first ones are enough).
const MAX_CLAUSES: usize = 16;
/// Longest clause kept, in bytes (a clause runs to the end of its sentence or line).
const MAX_CLAUSE_BYTES: usize = 240;
/// Most list items read under a "when not to use" heading.
const MAX_SECTION_ITEMS: usize = 12;

/// What a clause says.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(crate) enum Limit {
    /// The skill is not for requests like this: a clause of a description, an item of a
    /// "when not to use" list or `when_not_to_use` entry.
    Not,
    /// A "not" phrase inside a sentence ("do not use regex here; use the script
    /// instead"): in a body, as often an instruction about one step as a limit of the
    /// skill, so it weighs against the skill's score but not its confidence.
    NotInPassing,
    /// The skill is only for requests like this.
    Only,
}

impl Limit {
    /// Whether the clause says the skill is not for something (in passing or not).
    pub(crate) fn is_not(self) -> bool {
        matches!(self, Limit::Not | Limit::NotInPassing)
    }

    /// The kind as a declaration of the skill's scope says it (a description's sentence):
    /// a "not" in passing there is a limit.
    pub(crate) fn declared(self) -> Limit {
        match self {
            Limit::NotInPassing => Limit::Not,
            other => other,
        }
    }
}

/// The text of a skill split into what counts for it and its limit clauses.
#[derive(Debug, Default)]
pub(crate) struct Split {
    /// The text without the limit clauses.
    pub kept: String,
    /// The limit clauses, each with its kind.
    pub clauses: Vec<(Limit, String)>,
}

fn not_re() -> Option<&'static Regex> {
    static RE: OnceLock<Option<Regex>> = OnceLock::new();
    RE.get_or_init(|| {
        Regex::new(
            r"(?i-u)\b(not for|not intended for|not meant for|do not use|don'?t use|never use|avoid using|not suitable for|not appropriate for|instead\b)",
        )
        .ok()
    })
    .as_ref()
}

fn only_re() -> Option<&'static Regex> {
    static RE: OnceLock<Option<Regex>> = OnceLock::new();
    RE.get_or_init(|| {
        Regex::new(r"(?i-u)\b(only (use )?(this skill )?(when|if|for)|use (this skill )?only (when|if|for)|unless)\b").ok()
    })
    .as_ref()
}

fn heading_re() -> Option<&'static Regex> {
    static RE: OnceLock<Option<Regex>> = OnceLock::new();
    RE.get_or_init(|| {
        Regex::new(r"(?i)^\s*((#+|\*\*)\s*(when not to use|when to avoid|do not use|don'?t use|not for|avoid when|anti-?patterns?)(?-u:\b)|(when not to use|do not use|don'?t use|not for|avoid when)(?-u:\b)[^.]*:\**\s*$)").ok()
    })
    .as_ref()
}

/// Split `text` (a description, or a body) into kept text and limit clauses.
///
/// Sentences (split at `.`, `;`, `!`, `?` followed by a space, and at line ends) that
/// contain a "not" or "only" phrase become clauses, from that phrase to the sentence end;
/// the part of the sentence before the phrase is kept; a "not" one is
/// [`Limit::NotInPassing`] (the caller reads a description's as [`Limit::Not`]). The
/// heading or bold line "When not to use" (and the like) and the list items under it
/// become [`Limit::Not`] clauses; prose under such a heading ends the list and is read
/// sentence by sentence.
pub(crate) fn split(text: &str) -> Split {
    let mut out = Split::default();
    let (Some(not), Some(only), Some(heading)) = (not_re(), only_re(), heading_re()) else {
        out.kept = text.to_owned();
        return out;
    };
    let mut in_section = false;
    let mut section_items = 0;
    for line in text.lines() {
        let trimmed = line.trim_start();
        if heading.is_match(line) {
            in_section = true;
            section_items = 0;
            push_clause(&mut out, Limit::Not, strip_heading(trimmed));
            continue;
        }
        if in_section {
            let item =
                trimmed.starts_with(['-', '*', '+']) || trimmed.starts_with(char::is_numeric);
            if item && section_items < MAX_SECTION_ITEMS && !trimmed.starts_with("**") {
                section_items += 1;
                push_clause(
                    &mut out,
                    Limit::Not,
                    trimmed.trim_start_matches(['-', '*', '+', ' ']),
                );
                continue;
            }
            if trimmed.starts_with('#') || (!trimmed.is_empty() && !item) {
                in_section = false;
            } else if trimmed.is_empty() {
                continue;
            }
        }
        if !not.is_match(line) && !only.is_match(line) {
            out.kept.push_str(line);
            out.kept.push('\n');
            continue;
        }
        for sentence in sentences(line) {
            let hit = [(Limit::NotInPassing, not), (Limit::Only, only)]
                .into_iter()
                .filter_map(|(k, re)| re.find(sentence).map(|m| (m.start(), k)))
                .min_by_key(|(at, _)| *at);
            match hit {
                Some((at, kind)) if out.clauses.len() < MAX_CLAUSES => {
                    let (before, clause) = sentence.split_at(at);
                    out.kept.push_str(before);
                    out.kept.push(' ');
                    push_clause(&mut out, kind, clause);
                }
                _ => {
                    out.kept.push_str(sentence);
                    out.kept.push(' ');
                }
            }
        }
        out.kept.push('\n');
    }
    out
}

fn strip_heading(line: &str) -> &str {
    line.trim_start_matches(['#', '*', ' '])
}

fn push_clause(out: &mut Split, kind: Limit, clause: &str) {
    if out.clauses.len() >= MAX_CLAUSES {
        out.kept.push_str(clause);
        return;
    }
    let mut end = clause.len().min(MAX_CLAUSE_BYTES);
    while !clause.is_char_boundary(end) {
        end -= 1;
    }
    out.clauses.push((kind, clause[..end].to_owned()));
}

/// The sentences of one line, each with its closing punctuation.
fn sentences(line: &str) -> impl Iterator<Item = &str> {
    let mut rest = line;
    std::iter::from_fn(move || {
        if rest.is_empty() {
            return None;
        }
        let bytes = rest.as_bytes();
        let mut cut = rest.len();
        for i in 0..bytes.len() {
            if matches!(bytes[i], b'.' | b';' | b'!' | b'?')
                && bytes.get(i + 1).is_none_or(|c| c.is_ascii_whitespace())
            {
                cut = i + 1;
                break;
            }
        }
        let (s, r) = rest.split_at(cut);
        rest = r;
        Some(s)
    })
}

#[cfg(test)]
#[allow(clippy::unwrap_used, clippy::expect_used, clippy::panic)]
mod tests {
    use super::*;

    #[test]
    fn not_and_only_clauses_leave_the_kept_text() {
        let s = split(
            "Create posters as HTML. Use this skill ONLY when the user asks for PowerPoint. For research posters, use latex-posters instead. NOT for flyers.",
        );
        assert!(s.kept.contains("Create posters as HTML."));
        assert!(!s.kept.contains("PowerPoint"));
        assert!(!s.kept.contains("flyers"));
        let kinds: Vec<Limit> = s.clauses.iter().map(|c| c.0).collect();
        // Sentence clauses are "in passing" here; the index reads a description's as limits.
        assert_eq!(
            kinds,
            [Limit::Only, Limit::NotInPassing, Limit::NotInPassing]
        );
        assert!(s.clauses[0].1.contains("PowerPoint"));
        assert!(s.clauses[2].1.starts_with("NOT for flyers"));
    }

    #[test]
    fn every_pattern_compiles() {
        assert!(not_re().is_some() && only_re().is_some() && heading_re().is_some());
    }

    #[test]
    fn a_when_not_to_use_section_gives_its_items() {
        let s = split(
            "# Guide\n\nDo the thing.\n\n## When NOT to use\n\n- writing emails\n- tax returns\n\n## Steps\n\n1. start\n",
        );
        let clauses: Vec<&str> = s.clauses.iter().map(|c| c.1.as_str()).collect();
        assert!(clauses.contains(&"writing emails"), "{clauses:?}");
        // A listed item is a limit, not a remark in passing.
        assert!(
            s.clauses.iter().all(|c| c.0 == Limit::Not),
            "{:?}",
            s.clauses
        );
        assert!(clauses.contains(&"tax returns"));
        assert!(!clauses.contains(&"start"));
        assert!(s.kept.contains("start") && s.kept.contains("Do the thing"));
        assert!(!s.kept.contains("tax"));
    }

    #[test]
    fn clauses_are_bounded() {
        let text = "Not for x. ".repeat(MAX_CLAUSES + 5);
        let s = split(&text);
        assert_eq!(s.clauses.len(), MAX_CLAUSES);
        let long = format!("Not for {}", "y".repeat(MAX_CLAUSE_BYTES * 2));
        assert!(split(&long).clauses[0].1.len() <= MAX_CLAUSE_BYTES);
        assert!(split("").clauses.is_empty());
    }
}
