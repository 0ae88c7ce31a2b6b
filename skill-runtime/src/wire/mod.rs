//! The wire: every JSON shape the engine's front doors print (HTTP under `/v1`, the command
//! line's `--format json`, MCP), every request they read (one input description per
//! operation, see [`Operation`]), and the one table of error codes.
//!
//! A front door asks an [`Engine`](crate::Engine) operation, then renders the typed answer
//! with a shape from here, so the same question gives the same JSON over HTTP and from the
//! command line. Shapes borrow from the answers (nothing is copied into a `Value` first).
//!
//! ## Error codes
//!
//! Every error a front door reports is `{"error": {"code", "message"}}` (an execution's
//! outcome carries the same pair in its `error`). Codes are **snake_case**, stable, and
//! listed once in [`ERROR_CODES`] with the HTTP status they answer with; the router's own
//! kebab-case codes (`unknown-skill`) are rendered in snake_case (`unknown_skill`). A new
//! code is added to the table, never renamed.
//!
//! Domain types in the router, search, registry and runtime carry no `Serialize`. The shapes
//! here borrow from them and fix every field name. xtask's tidy lets serde only onto documented
//! formats: diagnostics, the JSON catalog, the selection JSON, the lock and state files, the
//! config file and request bodies.

mod answer;
mod audit;
mod discovery;
mod errors;
mod evals;
mod exec;
pub mod limits;
mod outcome;
mod paths;
mod queries;
#[cfg(feature = "hub")]
pub(crate) mod remote;
mod request;
mod requests;
mod schemas;
mod sections;
mod shapes;
mod text;

pub use crate::exec::wire::{
    CommandShape, ExtractionShape, FlagValueShape, InvocationShape, ListedSkillShape,
    RouteErrorShape, RouteShape, RoutedCommandShape, RoutedOutputShape, SlashShape, flags_shape,
};
pub use answer::{
    ANSWER_FLOOR_BYTES, AnswerTooLarge, MAX_ANSWER_FACTOR, answer_cap, to_vec_capped,
};
pub use audit::{AuditShape, FindingShape};
pub use discovery::{ARCHIVE_TYPE, DiscoveryEntryShape, DiscoveryIndexShape, SKILL_MD_TYPE};
pub use errors::{ERROR_CODES, ErrorCode, error_body, snake_case, status_of};
pub use evals::{TriggerEvalShape, TriggerResultShape};
pub use exec::{
    ExecutedShape, ExtractShape, GetSkillShape, ListShape, ResultsShape, RoutedShape, TasksShape,
    ValidateShape, ValidateSummary,
};
pub use outcome::{
    ChangeShape, CommandOutcomeShape, ErrorInfoShape, OutcomeShape, ScheduledRunShape, TaskShape,
    event_json,
};
pub use paths::Paths;
pub use queries::{
    CatalogRequest, DEFAULT_NEXT_FIRES, DisclosureRequest, ListSkillsRequest, MAX_NEXT_FIRES,
    SchedulesRequest,
};
pub use request::{Args, Field, FieldKind, MAX_COUNT, Operation, Request, RequestError, kind_of};
pub use requests::{
    BUILD_WORKFLOW, DEFAULT_RESULTS, ExecuteRequest, ExtractRequest, GetSkillRequest, Input,
    InvokeRequest, LoadSkillRequest, NotesSearchRequest, RouteRequest, SearchRequest,
    SelectRequest, UseSkillRequest,
};
pub use schemas::{Answer, error_schema};
pub use sections::{OutlineSectionShape, OutlineShape, SectionShape};
pub use shapes::{
    CatalogShape, DiagnosticsShape, EntryShape, HealthShape, NotesShape, ProfilesShape, ReadyShape,
    ResourcesShape, RunShape, ScheduleShape, SchedulesShape, SearchMatchShape, SearchShape,
    SkillDetailShape, SkillListShape, SkillSummaryShape, rfc3339,
};
pub use text::{budget_text, text_table};

/// The operations with input, for the doors' documents and the contract test.
pub const OPERATIONS: &[&Operation] = &[
    &requests::BUILD_WORKFLOW,
    &requests::SELECT,
    &requests::SEARCH,
    &requests::NOTES_SEARCH,
    &requests::EXTRACT,
    &requests::ROUTE,
    &requests::EXECUTE,
    &requests::INVOKE,
    &requests::USE_SKILL,
    &requests::LOAD_SKILL,
    &requests::GET_SKILL,
    &queries::LIST_SKILLS,
    &queries::DISCLOSURE,
    &queries::CATALOG,
    &queries::SCHEDULES,
];

/// A shape as pretty JSON with a final newline (what `--format json` prints).
pub fn pretty(value: &impl serde::Serialize) -> String {
    match serde_json::to_string_pretty(value) {
        Ok(mut s) => {
            s.push('\n');
            s
        }
        Err(e) => format!("{}\n", error_body("internal", &e.to_string())),
    }
}
