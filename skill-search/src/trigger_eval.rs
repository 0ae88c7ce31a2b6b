//! Trigger evals for pack authors: does a skill get selected for the requests it should
//! get, and only for those?
//!
//! The file format is the Agent Skills one ("Optimizing skill descriptions",
//! agentskills.io): a JSON array of `{"query": "...", "should_trigger": true|false}`, one
//! file per skill, kept in the skill's folder as [`TRIGGER_EVAL_FILE`]. A query
//! *triggers* the skill when [`SkillIndex::select`] selects it among the skills of the
//! index; the result is deterministic and needs no model.

use serde::Deserialize;

use crate::{Error, SelectOptions, SkillIndex};

/// Where a skill keeps its trigger eval, relative to its folder.
pub const TRIGGER_EVAL_FILE: &str = "evals/eval_queries.json";
/// Most queries read from one trigger-eval file.
pub const MAX_TRIGGER_CASES: usize = 1_000;

/// One labelled query.
#[derive(Debug, Clone, PartialEq, Eq, Deserialize)]
pub struct TriggerCase {
    /// The request as a user writes it.
    pub query: String,
    /// Whether the skill should be selected for it.
    pub should_trigger: bool,
}

/// Read a trigger-eval file's text. At most [`MAX_TRIGGER_CASES`] queries; an empty
/// query is an error.
pub fn parse_trigger_cases(text: &str) -> Result<Vec<TriggerCase>, Error> {
    let cases: Vec<TriggerCase> =
        serde_json::from_str(text).map_err(|e| Error::TriggerEval(e.to_string()))?;
    if cases.len() > MAX_TRIGGER_CASES {
        return Err(Error::TriggerEval(format!(
            "{} queries, more than the {MAX_TRIGGER_CASES} allowed",
            cases.len()
        )));
    }
    if let Some(i) = cases.iter().position(|c| c.query.trim().is_empty()) {
        return Err(Error::TriggerEval(format!("query {} is empty", i + 1)));
    }
    Ok(cases)
}

/// One query's outcome.
#[derive(Debug, Clone, PartialEq)]
pub struct TriggerOutcome {
    /// The query.
    pub query: String,
    /// Whether it should trigger the skill.
    pub should_trigger: bool,
    /// Whether it did.
    pub triggered: bool,
    /// The skills selected for it, best first.
    pub selected: Vec<String>,
}

/// Trigger precision and recall of one skill over its queries.
#[derive(Debug, Clone, PartialEq)]
pub struct TriggerReport {
    /// The skill.
    pub skill: String,
    /// Every query, in file order.
    pub outcomes: Vec<TriggerOutcome>,
}

impl TriggerReport {
    fn count(&self, should: bool, did: bool) -> usize {
        self.outcomes
            .iter()
            .filter(|o| o.should_trigger == should && o.triggered == did)
            .count()
    }

    /// Queries that should trigger and did.
    pub fn true_positives(&self) -> usize {
        self.count(true, true)
    }

    /// Queries that should not trigger but did.
    pub fn false_positives(&self) -> usize {
        self.count(false, true)
    }

    /// Queries that should trigger but did not.
    pub fn false_negatives(&self) -> usize {
        self.count(true, false)
    }

    /// Queries that should not trigger and did not.
    pub fn true_negatives(&self) -> usize {
        self.count(false, false)
    }

    /// Share of the triggered queries that should trigger; `None` when none triggered.
    pub fn precision(&self) -> Option<f64> {
        let tp = self.true_positives();
        let n = tp + self.false_positives();
        (n > 0).then(|| tp as f64 / n as f64)
    }

    /// Share of the queries that should trigger that did; `None` when none should.
    pub fn recall(&self) -> Option<f64> {
        let tp = self.true_positives();
        let n = tp + self.false_negatives();
        (n > 0).then(|| tp as f64 / n as f64)
    }

    /// Queries whose outcome matches the label.
    pub fn passed(&self) -> usize {
        self.true_positives() + self.true_negatives()
    }
}

/// Run `cases` for `skill` through [`SkillIndex::select`] with `opts`.
pub fn evaluate_triggers(
    index: &SkillIndex,
    skill: &str,
    cases: &[TriggerCase],
    opts: &SelectOptions,
) -> Result<TriggerReport, Error> {
    let mut outcomes = Vec::with_capacity(cases.len());
    for c in cases {
        let sel = index.select(&c.query, opts)?;
        let selected: Vec<String> = sel
            .selected_skills
            .into_iter()
            .map(|s| s.skill_id)
            .collect();
        outcomes.push(TriggerOutcome {
            query: c.query.clone(),
            should_trigger: c.should_trigger,
            triggered: selected.iter().any(|s| s == skill),
            selected,
        });
    }
    Ok(TriggerReport {
        skill: skill.to_owned(),
        outcomes,
    })
}
