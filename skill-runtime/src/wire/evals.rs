//! The JSON of a trigger eval (`skill-server eval --format json`): the skill's trigger
//! precision and recall, the confusion counts, and each query's verdict.

use serde::Serialize;
use skill_search::{TriggerOutcome, TriggerReport};

/// A ratio rounded to three decimals (`None` when undefined: nothing to divide by).
fn rounded(x: Option<f64>) -> Option<f64> {
    x.map(|v| (v * 1000.0).round() / 1000.0)
}

/// One query's verdict.
#[derive(Debug, Serialize)]
pub struct TriggerResultShape<'a> {
    /// The query.
    pub query: &'a str,
    /// Whether it should select the skill.
    pub should_trigger: bool,
    /// Whether it did.
    pub triggered: bool,
    /// Whether those agree.
    pub pass: bool,
    /// What was selected, best first.
    pub selected: &'a [String],
}

impl<'a> From<&'a TriggerOutcome> for TriggerResultShape<'a> {
    fn from(o: &'a TriggerOutcome) -> Self {
        TriggerResultShape {
            query: &o.query,
            should_trigger: o.should_trigger,
            triggered: o.triggered,
            pass: o.should_trigger == o.triggered,
            selected: &o.selected,
        }
    }
}

/// A trigger eval's answer.
#[derive(Debug, Serialize)]
pub struct TriggerEvalShape<'a> {
    /// The skill.
    pub skill: &'a str,
    /// How many skills it was selected among.
    pub skills_indexed: usize,
    /// How many queries.
    pub queries: usize,
    /// How many passed.
    pub passed: usize,
    /// Trigger precision (three decimals; `null` when nothing triggered).
    pub precision: Option<f64>,
    /// Trigger recall (three decimals; `null` when no query should trigger).
    pub recall: Option<f64>,
    /// Should trigger and did.
    pub true_positives: usize,
    /// Should not, but did.
    pub false_positives: usize,
    /// Should, but did not.
    pub false_negatives: usize,
    /// Should not and did not.
    pub true_negatives: usize,
    /// Each query, in file order.
    pub results: Vec<TriggerResultShape<'a>>,
}

impl<'a> TriggerEvalShape<'a> {
    /// The shape of `report`, selected among `skills_indexed` skills.
    pub fn new(report: &'a TriggerReport, skills_indexed: usize) -> Self {
        TriggerEvalShape {
            skill: &report.skill,
            skills_indexed,
            queries: report.outcomes.len(),
            passed: report.passed(),
            precision: rounded(report.precision()),
            recall: rounded(report.recall()),
            true_positives: report.true_positives(),
            false_positives: report.false_positives(),
            false_negatives: report.false_negatives(),
            true_negatives: report.true_negatives(),
            results: report
                .outcomes
                .iter()
                .map(TriggerResultShape::from)
                .collect(),
        }
    }
}
