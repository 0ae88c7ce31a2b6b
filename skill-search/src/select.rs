//! Selection: which skills to pre-load for a request, how sure, why, and which disclosure
//! tier (toolsets seed) to use.

use std::sync::OnceLock;

use regex::Regex;
use serde::Serialize;
use skill_registry::{Affinity, Disclosure, affinity};

use crate::Error;
use crate::hit::Match;
use crate::index::{Filter, SearchRequest, SkillIndex};
use crate::params::Params;
use crate::text::clip;

/// Results ranked beyond `max_skills` for a selection, so that near-duplicate skills that
/// collapse into one slot leave room for others (and are named as its alternatives).
const SIBLING_ROOM: usize = 5;
/// Default most skills selected (toolsets `max_skills`).
pub const DEFAULT_MAX_SKILLS: usize = 3;
/// Most skills one selection may ask for.
pub const MAX_MAX_SKILLS: usize = 20;
/// Default confidence a skill needs to be selected.
pub const DEFAULT_THRESHOLD: f32 = 0.5;
/// Default confidence below the threshold at which the best candidates are still listed
/// (tier 2) instead of a breadcrumb.
pub const DEFAULT_LISTING_THRESHOLD: f32 = 0.25;
/// Default token budget of tier 2 and tier 3 text.
pub const DEFAULT_BUDGET_TOKENS: usize = 6_000;
/// Characters a token, as the registry's catalog budget counts them (one value for both).
const CHARS_PER_TOKEN: usize = skill_registry::CHARS_PER_TOKEN as usize;
/// Ends a disclosed body cut to fit the budget: a whole line telling the model how to read
/// the rest. (A catalog's shortened one-line description ends with the registry's one-character
/// `TRUNCATION_MARK` instead: there is no room for a sentence there.)
pub const CUT_BODY_NOTE: &str = "\n[... truncated to fit the budget; load the skill for the rest]";
/// The reason given for a skill pre-loaded because it is proactive for the profile (the
/// profile's name follows).
pub const PROACTIVE_REASON: &str = "pre-loaded: proactive for profile";

/// The four disclosure tiers of the toolsets seed.
#[derive(Debug, Clone, Copy, PartialEq, Eq, PartialOrd, Ord)]
pub enum Tier {
    /// No skills are available: nothing is shown.
    Nothing = 0,
    /// Skills exist but none fits: the breadcrumb `[N skills available]`.
    Breadcrumb = 1,
    /// The request asks what skills exist, or candidates fit only weakly: names and brief
    /// descriptions.
    Registry = 2,
    /// Skills were selected: their full instructions, within the token budget.
    Full = 3,
}

impl Serialize for Tier {
    fn serialize<S: serde::Serializer>(&self, s: S) -> Result<S::Ok, S::Error> {
        s.serialize_u8(*self as u8)
    }
}

/// How to select.
#[derive(Debug, Clone)]
pub struct SelectOptions {
    /// Earlier turns of the conversation, oldest first.
    pub recent_turns: Vec<String>,
    /// Most skills selected (1..=[`MAX_MAX_SKILLS`]).
    pub max_skills: usize,
    /// Confidence a skill needs.
    pub threshold: f32,
    /// Confidence at which weak candidates are listed (tier 2).
    pub listing_threshold: f32,
    /// Token budget of the disclosed text.
    pub budget_tokens: usize,
    /// The processing profile.
    pub profile: Option<String>,
}

impl Default for SelectOptions {
    fn default() -> Self {
        SelectOptions {
            recent_turns: Vec::new(),
            max_skills: DEFAULT_MAX_SKILLS,
            threshold: DEFAULT_THRESHOLD,
            listing_threshold: DEFAULT_LISTING_THRESHOLD,
            budget_tokens: DEFAULT_BUDGET_TOKENS,
            profile: None,
        }
    }
}

/// One selected skill (agent-skills-integration 2.3).
#[derive(Debug, Clone, PartialEq, Serialize)]
pub struct Selected {
    /// The skill's name.
    pub skill_id: String,
    /// Confidence in [0, 1], rounded to two decimals.
    pub confidence: f32,
    /// Which trigger, name or terms matched.
    pub reason: String,
    /// Near-duplicate skills (the same skill in other packs) that this one stands for, in
    /// ranking order; left out of the JSON when empty.
    #[serde(skip_serializing_if = "Vec::is_empty")]
    pub alternatives: Vec<String>,
}

/// The [`Selected`] entry of a match.
pub(crate) fn selected(m: &Match) -> Selected {
    Selected {
        skill_id: m.name.clone(),
        confidence: (m.confidence * 100.0).round() / 100.0,
        reason: m.reason.clone(),
        alternatives: Vec::new(),
    }
}

/// The text to put in front of the model.
#[derive(Debug, Clone, PartialEq, Serialize)]
pub struct Disclosed {
    /// The tier (0 to 3).
    pub tier: Tier,
    /// The text: empty, the breadcrumb, the listing, or full instructions.
    pub text: String,
    /// Estimated tokens of `text` ([`skill_registry::CHARS_PER_TOKEN`] characters a token).
    pub estimated_tokens: usize,
    /// The budget it was fitted into.
    pub budget_tokens: usize,
    /// Skills whose text is included.
    pub included: Vec<String>,
    /// Selected or listed skills left out (or cut) to fit the budget, and skills proactive
    /// for the profile left out by `max_skills`; load them on demand.
    pub omitted: Vec<String>,
}

/// A selection (agent-skills-integration 2.3 plus the disclosure tier).
#[derive(Debug, Clone, PartialEq, Serialize)]
pub struct Selection {
    /// Selected skills, best first.
    pub selected_skills: Vec<Selected>,
    /// True when no skill cleared the threshold.
    pub no_skill_needed: bool,
    /// What to disclose.
    pub disclosure: Disclosed,
}

impl Selection {
    /// The selection as pretty JSON.
    pub fn to_json(&self) -> String {
        serde_json::to_string_pretty(self).unwrap_or_else(|e| format!("{{\"error\":\"{e}\"}}"))
    }
}

fn listing_request() -> Option<&'static Regex> {
    static RE: OnceLock<Option<Regex>> = OnceLock::new();
    RE.get_or_init(|| {
        Regex::new(
            r"(?i)\b(what (else )?can you do|what are you (able|capable)|(list|show)( me)?( all| your| the| available| every)* (skills|capabilities|abilities)|(which|what) (skills|capabilities|abilities)|skills (do )?you have)\b",
        )
        .ok()
    })
    .as_ref()
}

/// Whether the request asks which skills exist ("what can you do?", "list skills").
pub fn asks_for_listing(message: &str) -> bool {
    listing_request().is_some_and(|re| re.is_match(clip(message)))
}

impl SkillIndex {
    /// Select up to `max_skills` skills for `message`; skills the model may not invoke and
    /// skills excluded for the profile are never selected. Skills proactive for the
    /// profile are pre-loaded even when they do not match, within `max_skills` (those that
    /// do not fit are named in the disclosure's `omitted`).
    ///
    /// ```
    /// use skill_registry::{Registry, RegistryConfig, Source};
    /// use skill_search::{SelectOptions, SkillIndex, Tier};
    ///
    /// let dir = tempfile::tempdir()?;
    /// std::fs::create_dir(dir.path().join("pdf-forms"))?;
    /// std::fs::write(
    ///     dir.path().join("pdf-forms/SKILL.md"),
    ///     "---\nname: pdf-forms\ndescription: Fill in PDF forms and extract their fields.\n---\n# PDF forms\n",
    /// )?;
    /// let registry = Registry::load(RegistryConfig::with_sources(vec![Source::new(dir.path(), "user")]));
    /// let index = SkillIndex::build(registry.snapshot())?;
    ///
    /// let selection = index.select("fill in the fields of this PDF form", &SelectOptions::default())?;
    /// assert_eq!(selection.selected_skills[0].skill_id, "pdf-forms");
    /// assert_eq!(selection.disclosure.tier, Tier::Full);
    /// let json: serde_json::Value = serde_json::from_str(&selection.to_json())?;
    /// assert_eq!(json["no_skill_needed"], false);
    ///
    /// // Nothing fits: no skill, and only the breadcrumb.
    /// let none = index.select("who wrote pride and prejudice?", &SelectOptions::default())?;
    /// assert!(none.no_skill_needed);
    /// assert_eq!(none.disclosure.text, "[1 skills available]");
    /// # Ok::<(), Box<dyn std::error::Error>>(())
    /// ```
    pub fn select(&self, message: &str, opts: &SelectOptions) -> Result<Selection, Error> {
        self.select_with(message, opts, self.params())
    }

    /// [`SkillIndex::select`] with other parameters.
    pub(crate) fn select_with(
        &self,
        message: &str,
        opts: &SelectOptions,
        p: &Params,
    ) -> Result<Selection, Error> {
        let filter = Filter {
            profile: opts.profile.clone(),
            model_invocable_only: true,
        };
        let max = opts.max_skills.clamp(1, MAX_MAX_SKILLS);
        let extra = if p.intent_slots { SIBLING_ROOM } else { 0 };
        let (mut matches, _, corrected) = self.search_corrected(
            &SearchRequest {
                text: message,
                recent_turns: &opts.recent_turns,
                limit: max + extra,
                filter: filter.clone(),
            },
            p,
        )?;
        let request = corrected.as_ref().map_or(message, |c| c.text.as_str());
        let mut selected_skills: Vec<Selected> = if p.intent_slots {
            self.fill_slots(request, &matches, opts.threshold, max, &filter, p)?
        } else {
            matches
                .iter()
                .filter(|m| m.confidence >= opts.threshold)
                .map(selected)
                .collect()
        };
        matches.truncate(max);
        if let Some(note) = corrected
            .as_ref()
            .and_then(|c| crate::typo::note(&c.corrections))
        {
            for s in &mut selected_skills {
                s.reason.push_str(&note);
            }
        }
        let over_max = self.add_proactive(&mut selected_skills, &matches, &filter, max);
        let weak: Vec<String> = matches
            .iter()
            .filter(|m| m.confidence >= opts.listing_threshold)
            .map(|m| m.name.clone())
            .collect();
        // A selected skill passed the filter, so the (linear) count is only needed when
        // nothing was selected.
        let eligible = if selected_skills.is_empty() {
            self.eligible_counts(&filter).0
        } else {
            selected_skills.len()
        };
        let disclosure = if eligible == 0 {
            Disclosed::empty(Tier::Nothing, opts.budget_tokens)
        } else if !selected_skills.is_empty() {
            let names: Vec<String> = selected_skills.iter().map(|s| s.skill_id.clone()).collect();
            let mut d = self.full(&names, opts);
            d.omitted.extend(over_max);
            d
        } else if asks_for_listing(message) {
            let all: Vec<String> = self
                .eligible(&filter)
                .iter()
                .map(|s| s.name.clone())
                .collect();
            self.listing(&all, opts)
        } else if !weak.is_empty() {
            self.listing(&weak, opts)
        } else {
            let text = format!("[{eligible} skills available]");
            Disclosed {
                tier: Tier::Breadcrumb,
                estimated_tokens: tokens(&text),
                text,
                budget_tokens: opts.budget_tokens,
                included: Vec::new(),
                omitted: Vec::new(),
            }
        };
        Ok(Selection {
            no_skill_needed: selected_skills.is_empty(),
            selected_skills,
            disclosure,
        })
    }

    /// Agent-skills-integration 3.3 and 3.7: the skills proactive for the profile are
    /// pre-loaded even without a match, after the matched ones, while there is room under
    /// `max`; their reason says so and their confidence is their match's (0 when they were
    /// not among the candidates). The proactive skills left out by `max` are returned (the
    /// disclosure lists them as omitted).
    fn add_proactive(
        &self,
        selected: &mut Vec<Selected>,
        matches: &[Match],
        filter: &Filter,
        max: usize,
    ) -> Vec<String> {
        let Some(profile) = filter.profile.as_deref() else {
            return Vec::new();
        };
        let mut over = Vec::new();
        for skill in self.eligible(filter) {
            if affinity(&skill.manifest, Some(profile)) != Affinity::Proactive
                || selected.iter().any(|s| s.skill_id == skill.name)
            {
                continue;
            }
            if selected.len() >= max {
                over.push(skill.name.clone());
                continue;
            }
            let confidence = matches
                .iter()
                .find(|m| m.name == skill.name)
                .map_or(0.0, |m| (m.confidence * 100.0).round() / 100.0);
            selected.push(Selected {
                skill_id: skill.name.clone(),
                confidence,
                reason: format!("{PROACTIVE_REASON} `{profile}`"),
                alternatives: Vec::new(),
            });
        }
        over
    }

    /// Tier 3: the selected skills' instructions, in order, while they fit.
    fn full(&self, names: &[String], opts: &SelectOptions) -> Disclosed {
        let mut d = Disclosed::empty(Tier::Full, opts.budget_tokens);
        let Some(snapshot) = self.snapshot() else {
            d.omitted = names.to_vec();
            return d;
        };
        let disclosure = Disclosure::new(&snapshot).profile(opts.profile.as_deref());
        let budget = opts.budget_tokens.saturating_mul(CHARS_PER_TOKEN);
        let mut used = 0usize;
        for name in names {
            let Ok(text) = disclosure.load_skill(name) else {
                d.omitted.push(name.clone());
                continue;
            };
            let sep = if d.text.is_empty() { 0 } else { 2 };
            let len = text.chars().count();
            if used + sep + len <= budget {
                if sep > 0 {
                    d.text.push_str("\n\n");
                }
                d.text.push_str(&text);
                used += sep + len;
                d.included.push(name.clone());
            } else if d.included.is_empty() && budget > CUT_BODY_NOTE.len() {
                let keep = budget - CUT_BODY_NOTE.chars().count();
                d.text = text.chars().take(keep).collect();
                d.text.push_str(CUT_BODY_NOTE);
                used = d.text.chars().count();
                d.included.push(name.clone());
                d.omitted.push(name.clone());
            } else {
                d.omitted.push(name.clone());
            }
        }
        d.estimated_tokens = tokens(&d.text);
        d
    }

    /// Tier 2: `- name: brief description` lines, in order, while they fit.
    fn listing(&self, names: &[String], opts: &SelectOptions) -> Disclosed {
        let mut d = Disclosed::empty(Tier::Registry, opts.budget_tokens);
        let Some(snapshot) = self.snapshot() else {
            return d;
        };
        let budget = opts.budget_tokens.saturating_mul(CHARS_PER_TOKEN);
        let mut used = 0;
        for name in names {
            let Some(skill) = snapshot.get(name) else {
                continue;
            };
            let brief = skill
                .manifest
                .brief_description
                .clone()
                .unwrap_or_else(|| skill_format::first_sentence(&skill.description));
            let line = format!("- {name}: {brief}\n");
            let len = line.chars().count();
            if used + len <= budget {
                d.text.push_str(&line);
                used += len;
                d.included.push(name.clone());
            } else {
                d.omitted.push(name.clone());
            }
        }
        d.estimated_tokens = tokens(&d.text);
        d
    }
}

impl Disclosed {
    fn empty(tier: Tier, budget_tokens: usize) -> Self {
        Disclosed {
            tier,
            text: String::new(),
            estimated_tokens: 0,
            budget_tokens,
            included: Vec::new(),
            omitted: Vec::new(),
        }
    }
}

fn tokens(text: &str) -> usize {
    text.chars().count().div_ceil(CHARS_PER_TOKEN)
}

#[cfg(test)]
#[allow(clippy::unwrap_used, clippy::expect_used, clippy::panic)]
mod tests {
    use super::*;

    #[test]
    fn listing_requests_are_recognised() {
        for q in [
            "What can you do?",
            "list your skills",
            "show me all available skills",
            "which skills do you have",
        ] {
            assert!(asks_for_listing(q), "{q}");
        }
        for q in ["list the files in src", "what can I do about this error"] {
            assert!(!asks_for_listing(q), "{q}");
        }
    }

    #[test]
    fn tier_serialises_as_a_number() {
        assert_eq!(serde_json::to_string(&Tier::Registry).unwrap(), "2");
    }
}
