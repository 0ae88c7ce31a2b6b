//! Built-in handlers: `workflow.build` ([`WorkflowBuild`], markdown-first 9) and
//! `markdown.search` ([`MarkdownSearch`], markdown-first 8, over `skill-search`'s notes
//! index). Both are tower services from [`Call`](crate::exec::Call) to
//! [`Output`](crate::exec::Output); register them with
//! [`RuntimeBuilder::workflow_builder`](crate::exec::RuntimeBuilder::workflow_builder) and
//! [`RuntimeBuilder::markdown_search`](crate::exec::RuntimeBuilder::markdown_search).
//!
//! Their failures are [`crate::exec::HandlerError`]s with stable codes:
//! `missing_flags`, `invalid_value`, `invalid_name`, `reserved_name`, `conflict`,
//! `not_a_workflow_domain`, `invalid_schedule`, `no_writable_source`, `unsafe_path`,
//! `invalid_workflow`,
//! `write_failed`, `not_loaded`, `search_failed`.

mod notes;
mod workflow;
mod workflow_tmp;

use skill_router::{FlagValue, Flags};

use crate::exec::{Context, HandlerError, Outcome, Runtime, RuntimeBuilder};
use skill_router::Invocation;
use std::sync::Arc;

pub use notes::{DEFAULT_NOTE_RESULTS, MarkdownSearch};
pub use workflow::{
    DEFAULT_WORKFLOW_DOMAIN, GENERATED_INDEX_DESCRIPTION, MAX_STEPS_BYTES, MAX_WORKFLOW_NAME_CHARS,
    STALE_TMP_AGE, WorkflowBuild,
};

/// The skill name `workflow.build` is registered under.
pub const WORKFLOW_BUILD: &str = "workflow.build";
/// The skill name `markdown.search` is registered under.
pub const MARKDOWN_SEARCH: &str = "markdown.search";
/// Names of the built-in handlers; `workflow.build` never writes a workflow with one of
/// these names.
pub const BUILTIN_HANDLERS: &[&str] = &[WORKFLOW_BUILD, MARKDOWN_SEARCH];

/// A text flag's value: its values joined by spaces (`--description Weekly report`
/// unquoted is two values). `Ok(None)` when absent; an error when given with no value.
pub(crate) fn text_flag(flags: &Flags, name: &str) -> Result<Option<String>, HandlerError> {
    match flags.get(name) {
        None => Ok(None),
        Some(FlagValue::Switch(_)) => Err(HandlerError::new(
            "invalid_value",
            format!("--{name} needs a value"),
        )),
        Some(v) => Ok(Some(v.values().join(" "))),
    }
}

impl RuntimeBuilder {
    /// Register the built-in `workflow.build` handler (writing into the registry's
    /// writable sources, in the configuration's
    /// [`workflow_domains`](crate::exec::RuntimeConfig::workflow_domains): call it after
    /// [`RuntimeBuilder::config`]).
    pub fn workflow_builder(self) -> Self {
        let service = WorkflowBuild::with_domains(
            self.registry().clone(),
            self.runtime_config().workflow_domains.clone(),
        );
        self.handler(WORKFLOW_BUILD, service)
    }

    /// Register the built-in `markdown.search` handler over a notes index. Keep a clone of
    /// the `Arc` to update the index when notes change.
    pub fn markdown_search(self, index: Arc<skill_search::NotesIndex>) -> Self {
        let service = MarkdownSearch::new(index);
        self.handler(MARKDOWN_SEARCH, service)
    }
}

impl Runtime {
    /// Run the built-in `workflow.build` with these flags (`name`, `description`,
    /// `domain`, `steps`, `schedule`, `overwrite`) through [`Runtime::call_handler`].
    pub async fn build_workflow(&self, flags: skill_router::Flags, ctx: &Context) -> Outcome {
        let inv = Invocation::with_flags(
            WORKFLOW_BUILD,
            flags,
            Some(WORKFLOW_BUILD.to_owned()),
            "builtin",
        );
        self.call_handler(WORKFLOW_BUILD, &inv, ctx).await
    }
}
