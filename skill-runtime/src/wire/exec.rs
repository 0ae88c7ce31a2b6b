//! The JSON of execution and command-line answers: executed output and commands, tasks,
//! a `get_skill` text, `validate` and `list`, and `extract` with its routes.

use serde::Serialize;
use skill_format::Diagnostic;
use skill_router::Route;

use crate::exec::{CommandOutcome, Outcome, TaskInfo};
use crate::wire::{CommandOutcomeShape, EntryShape, ExtractionShape, OutcomeShape, TaskShape};

/// `POST /v1/execute` with `output`: one outcome per command, in order.
#[derive(Debug, Serialize)]
pub struct ResultsShape<'a> {
    results: Vec<CommandOutcomeShape<'a>>,
}

impl<'a> ResultsShape<'a> {
    /// The commands' outcomes.
    pub fn new(results: &'a [CommandOutcome]) -> Self {
        ResultsShape {
            results: results.iter().map(CommandOutcomeShape::from).collect(),
        }
    }
}

/// `POST /v1/execute` with `command`: its route and, when it ran, its outcome.
#[derive(Debug, Serialize)]
pub struct ExecutedShape<'a> {
    /// How the command routed.
    #[serde(serialize_with = "crate::exec::wire::borrowed_route")]
    pub route: &'a Route,
    /// What running it gave (`None`: nothing ran).
    #[serde(serialize_with = "outcome_json")]
    pub outcome: Option<&'a Outcome>,
}

fn outcome_json<S: serde::Serializer>(o: &Option<&Outcome>, s: S) -> Result<S::Ok, S::Error> {
    o.map(OutcomeShape::from).serialize(s)
}

/// `GET /v1/tasks`: every kept forked task, each outcome without its `output` (a listing
/// stays small whatever the results hold; `GET /v1/tasks/{id}` has the output).
#[derive(Debug, Serialize)]
pub struct TasksShape<'a> {
    tasks: Vec<TaskShape<'a>>,
}

impl<'a> TasksShape<'a> {
    /// The tasks.
    pub fn new(tasks: &'a [TaskInfo]) -> Self {
        TasksShape {
            tasks: tasks.iter().map(TaskShape::listed).collect(),
        }
    }
}

/// `GET /v1/get_skill`: the tier asked for and its text.
#[derive(Debug, Serialize)]
pub struct GetSkillShape<'a> {
    /// The path asked for (`None`: every domain summary).
    pub path: Option<&'a str>,
    /// The disclosed text.
    pub text: &'a str,
}

/// `validate --format json`: every entry, every diagnostic and the counts.
#[derive(Debug, Serialize)]
pub struct ValidateShape<'a> {
    /// Every entry, by path.
    pub skills: Vec<EntryShape<'a>>,
    /// Every diagnostic.
    pub diagnostics: &'a [Diagnostic],
    /// The counts.
    pub summary: ValidateSummary,
}

/// The counts of a `validate` run.
#[derive(Debug, Serialize)]
pub struct ValidateSummary {
    /// Entries checked.
    pub skills: usize,
    /// Error diagnostics.
    pub errors: usize,
    /// Warning diagnostics.
    pub warnings: usize,
}

/// `list --format json`: the winners, domain indexes and shadowed entries.
#[derive(Debug, Serialize)]
pub struct ListShape<'a> {
    /// The winning skill of each name.
    pub skills: Vec<EntryShape<'a>>,
    /// Domain indexes.
    pub domains: Vec<EntryShape<'a>>,
    /// Entries a higher layer hides.
    pub shadowed: Vec<EntryShape<'a>>,
}

/// One command of model output, routed (`extract --skills`).
#[derive(Debug, Serialize)]
pub struct RoutedShape<'a> {
    /// Its 1-based line in the output.
    pub line: u32,
    /// The command as written.
    pub command: &'a str,
    /// How it routed.
    #[serde(serialize_with = "crate::exec::wire::owned_route")]
    pub route: Route,
}

/// `extract`: the extraction, and with `--skills` every command's route.
#[derive(Debug, Serialize)]
pub struct ExtractShape<'a> {
    /// The extraction.
    #[serde(flatten)]
    pub extraction: ExtractionShape<'a>,
    /// Every command's route (with `--skills`).
    #[serde(skip_serializing_if = "Option::is_none")]
    pub routes: Option<Vec<RoutedShape<'a>>>,
}
